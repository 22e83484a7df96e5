"""Every demonstration machine goes through every page with the real core behind the wizard."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from gpusetup.gui.demo import DemoServices, demo_kinds
from gpusetup.gui.pages.base import PAGE_DONE
from gpusetup.gui.screenshots import walk
from gpusetup.gui.wizard import SetupWizard


@pytest.mark.parametrize("kind", demo_kinds())
def test_walk_every_page(qtbot, tmp_path: Path, kind: str) -> None:
    services = DemoServices(kind, state_dir=tmp_path / "state", step_delay=0)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = SetupWizard(services, settings)
    qtbot.addWidget(w)
    saved = walk(w, tmp_path, kind, pages=None)
    assert w.currentId() == PAGE_DONE
    assert len(saved) == 7
    st = w.state
    assert st.machine is not None and st.frameworks
    assert st.install is not None, "the install page ran"
    if kind == "a100":
        assert st.selftest is not None and [m.name for m in st.selftest.measurements] == ["h2d_pinned", "d2h_pinned", "d2d"]
    w.stop_jobs()
