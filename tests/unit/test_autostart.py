"""Resume after a restart: the login entry is written where the platform keeps them, starts the wizard with
--resume, is private (0600; a folder we create: 0700), and is removed when the installation is finished or
undone (Services.clear_pending).

The Windows and macOS forms are checked here as files only (paths, exact content, permissions, plistlib
parses the LaunchAgent): these tests run on Linux, not on a real Windows or macOS, so nothing here shows that
Explorer runs the Startup-folder .cmd or that launchd loads the agent at login.
"""

from __future__ import annotations

import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup.install import autostart
from gpusetup.probe.platform.linux import desktop_entry
from gpusetup.probe.platform.windows import startup_cmd

ARGV = ["/opt/GPU Setup/gpusetup-gui", "--resume"]


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_entry_is_written_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert not autostart.enabled()
    path = autostart.enable()
    assert path == tmp_path / "config" / "autostart" / "gpusetup-resume.desktop"
    text = path.read_text(encoding="utf-8")
    assert f"Exec={sys.executable} -m gpusetup gui --resume\n" in text and "X-GNOME-Autostart-enabled=true" in text
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert autostart.enabled()
    if shutil.which("desktop-file-validate"):
        res = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
    assert autostart.disable() and not path.exists() and not autostart.disable()
    assert not list(path.parent.iterdir())  # no temporary file left behind


def test_an_existing_autostart_folder_keeps_its_permissions(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "autostart"
    folder.mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    path = autostart.enable(ARGV, env={"XDG_CONFIG_HOME": str(tmp_path / "config")}, os_name="linux")
    assert path is not None and _mode(folder) == 0o755 and _mode(path) == 0o600


def test_paths_with_spaces_and_percent_are_quoted_as_the_spec_says() -> None:
    text = desktop_entry(["/opt/GPU Setup/gpusetup-gui", "--resume"])
    assert 'Exec="/opt/GPU Setup/gpusetup-gui" --resume\n' in text
    assert 'Exec=/opt/100%%/gpusetup-gui --resume\n' in desktop_entry(["/opt/100%/gpusetup-gui", "--resume"])


def test_windows_startup_folder_cmd(tmp_path: Path) -> None:
    """Not run on a real Windows: the file Explorer would run at login, as written."""
    env = {"APPDATA": str(tmp_path / "Roaming")}
    assert not autostart.enabled(env, os_name="windows")
    path = autostart.enable([r"C:\Program Files\GPU Setup\gpusetup-gui.exe", "--resume"], env=env, os_name="windows")
    startup = tmp_path / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
    assert path == startup / "gpusetup-resume.cmd"
    assert path.read_bytes() == (
        b"@echo off\r\nrem GPU Setup: continues the installation that stopped for a restart; removed when it is finished\r\n"
        b'start "" "C:\\Program Files\\GPU Setup\\gpusetup-gui.exe" "--resume"\r\n')
    assert _mode(path) == 0o600 and _mode(startup) == 0o700
    assert autostart.enabled(env, os_name="windows")
    assert autostart.disable(env, os_name="windows") and not path.exists()
    assert autostart.enable(env={}, os_name="windows") is None  # no APPDATA: no Startup folder known


def test_windows_cmd_doubles_percent_and_prefers_the_windowless_python(tmp_path: Path) -> None:
    py = tmp_path / "Python 3.12" / "python.exe"
    py.parent.mkdir()
    py.write_bytes(b"")
    (py.parent / "pythonw.exe").write_bytes(b"")
    text = startup_cmd([str(py), "-m", "gpusetup", "gui", "--resume", "100%"])
    assert f'start "" "{py.parent / "pythonw.exe"}" "-m" "gpusetup" "gui" "--resume" "100%%"\r\n' in text


def test_macos_launch_agent(tmp_path: Path) -> None:
    """Not run on a real macOS: the LaunchAgent launchd would load at login, as written."""
    env = {"HOME": str(tmp_path)}
    argv = ["/Applications/GPU Setup.app/Contents/MacOS/gpusetup-gui", "--resume"]
    path = autostart.enable(argv, env=env, os_name="macos")
    agents = tmp_path / "Library" / "LaunchAgents"
    assert path == agents / "io.github.gpusetup.resume.plist"
    job = plistlib.loads(path.read_bytes())
    assert job == {"Label": "io.github.gpusetup.resume", "ProgramArguments": argv, "RunAtLoad": True,
                   "LimitLoadToSessionType": "Aqua", "ProcessType": "Interactive"}
    assert "KeepAlive" not in job  # once at login, not restarted when the wizard closes
    assert path.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')
    assert _mode(path) == 0o600 and _mode(agents) == 0o700
    assert autostart.enabled(env, os_name="macos")
    assert autostart.disable(env, os_name="macos") and not path.exists() and not autostart.disable(env, os_name="macos")


def test_services_remove_it_when_the_install_is_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.gui.services import Services

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    svc = Services(state_dir=tmp_path / "state")
    where = svc.resume_at_login(True)
    assert where is not None and where.is_file()
    svc.clear_pending()
    assert not where.exists()
