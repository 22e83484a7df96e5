"""Resume after a restart: the login entry is written where the platform keeps them, starts the wizard with
--resume, and is removed when the installation is finished or undone (Services.clear_pending)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup.install import autostart


def test_entry_is_written_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert not autostart.enabled()
    path = autostart.enable()
    assert path == tmp_path / "config" / "autostart" / "gpusetup-resume.desktop"
    text = path.read_text(encoding="utf-8")
    assert f"Exec={sys.executable} -m gpusetup gui --resume\n" in text and "X-GNOME-Autostart-enabled=true" in text
    assert autostart.enabled()
    if shutil.which("desktop-file-validate"):
        res = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
    assert autostart.disable() and not path.exists() and not autostart.disable()


def test_paths_with_spaces_are_quoted_as_the_spec_says() -> None:
    text = autostart.entry_text(["/opt/GPU Setup/gpusetup-gui", "--resume"])
    assert 'Exec="/opt/GPU Setup/gpusetup-gui" --resume' in text


def test_services_remove_it_when_the_install_is_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.gui.services import Services

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    svc = Services(state_dir=tmp_path / "state")
    where = svc.resume_at_login(True)
    assert where is not None and where.is_file()
    svc.clear_pending()
    assert not where.exists()
