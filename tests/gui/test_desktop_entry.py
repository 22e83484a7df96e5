"""`gpusetup desktop-entry`: the launcher file, its icon, its Exec quoting, and removal."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.commands import desktop_entry as de


def test_install_writes_desktop_file_and_icons(tmp_path: Path, capsys) -> None:
    assert main(["desktop-entry", "--install", "--data-home", str(tmp_path)]) == 0
    desktop = tmp_path / "applications" / "gpusetup.desktop"
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.optionxform = str
    cfg.read(desktop, encoding="utf-8")
    entry = cfg["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "GPU Setup"
    assert entry["Icon"] == "gpusetup" and entry["Terminal"] == "false"
    assert "zh_CN" in entry["Comment[zh_CN]"] or entry["Comment[zh_CN]"]
    assert (tmp_path / "icons/hicolor/scalable/apps/gpusetup.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "icons/hicolor/256x256/apps/gpusetup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(desktop) in capsys.readouterr().out
    if shutil.which("desktop-file-validate"):
        res = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
    assert main(["desktop-entry", "--uninstall", "--data-home", str(tmp_path)]) == 0
    assert not desktop.exists()


def test_exec_quotes_paths_with_spaces() -> None:
    text = de.desktop_file(["/home/a b/venv/bin/python", "-m", "gpusetup", "gui"])
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert exec_line == 'Exec="/home/a b/venv/bin/python" -m gpusetup gui'
    assert de._exec_quote("100%") == "100%%"


def test_windows_shortcut_script_is_literal_only() -> None:
    script = de.shortcut_script(Path("C:/Users/o'neil/Start Menu/GPU Setup.lnk"), ["C:/py/pythonw.exe", "-m", "gpusetup", "gui"], None)
    assert "CreateShortcut('C:/Users/o''neil/Start Menu/GPU Setup.lnk')" in script.replace("\\", "/")
    assert "$s.Arguments = '-m gpusetup gui'" in script


@pytest.mark.parametrize("flag", ["--install", "--uninstall"])
def test_requires_a_writable_folder(tmp_path: Path, flag: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["desktop-entry", flag, "--data-home", str(blocker)])
    assert code in (0, 3)  # uninstall of nothing is fine; install into a file is a clear error
    if flag == "--install":
        assert code == 3
