"""gpusetup's own log files are bounded and private (issue 25: wizard.log grew without limit)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from gpusetup.paths import PrivateRotatingLog

pytestmark = pytest.mark.hostile


def _files(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.iterdir()}


def test_the_wizard_log_is_rotated_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.gui.app import setup_file_log

    monkeypatch.setattr(logging.getLogger("gpusetup"), "propagate", False)  # (pytest's own handlers: not the test)
    path = setup_file_log(tmp_path)
    assert path is not None
    root = logging.getLogger("gpusetup")
    handler = next(h for h in root.handlers if getattr(h, "baseFilename", "") == str(path))
    try:
        assert isinstance(handler, PrivateRotatingLog)
        log = logging.getLogger("gpusetup.gui.test")
        for i in range(4_000):  # about 20 MB of a chatty session
            log.info("page: install, line %d %s", i, "x" * 5000)
        log.info("one enormous message %s", "y" * (50 << 20))
        handler.flush()
        sizes = _files(tmp_path)
        assert set(sizes) <= {"wizard.log", "wizard.log.1", "wizard.log.2"}
        assert sum(sizes.values()) <= 3 * handler.maxBytes + (1 << 20), sizes
        for name in sizes:
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    finally:
        root.removeHandler(handler)
        handler.close()


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_link_planted_as_the_wizard_log_is_not_written_through(tmp_path: Path) -> None:
    from gpusetup.gui.app import setup_file_log

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    logs = tmp_path / "logs"
    logs.mkdir(mode=0o700)
    (logs / "wizard.log").symlink_to(victim)
    assert setup_file_log(logs) is None  # no log rather than a log written into someone else's file
    assert victim.read_text() == "precious\n"
