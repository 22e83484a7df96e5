"""`gpusetup desktop-entry`: put a double-clickable "GPU Setup" launcher in the desktop's application menu.

Linux (freedesktop): ``$XDG_DATA_HOME/applications/gpusetup.desktop`` plus the icon in the hicolor theme.
Windows: a Start-menu shortcut (``GPU Setup.lnk``) made with PowerShell's WScript.Shell COM object.
``--data-home`` / ``--start-menu`` point elsewhere (tests, portable installs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.probe.platform.host import is_windows
from gpusetup.resources import resource
from gpusetup.runner import SubprocessRunner

APP_ID = "gpusetup"
APP_NAME = "GPU Setup"
COMMENT = "Set up your GPU for deep learning: check the driver, install PyTorch/TensorFlow/JAX, prove it works"
COMMENT_ZH = "为深度学习配置显卡：检查驱动，安装 PyTorch/TensorFlow/JAX，并验证其可用"


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Add a 'GPU Setup' launcher that opens the wizard with a double click: a .desktop file and "
        "icon on Linux, a Start-menu shortcut on Windows."
    )
    act = p.add_mutually_exclusive_group(required=True)
    act.add_argument("--install", action="store_true", help="write the launcher")
    act.add_argument("--uninstall", action="store_true", help="remove the launcher written by --install")
    act.add_argument("--print", dest="show", action="store_true", help="print the .desktop file and change nothing")
    p.add_argument("--data-home", metavar="DIR", help="Linux: write under DIR instead of $XDG_DATA_HOME (~/.local/share)")
    p.add_argument("--start-menu", metavar="DIR", help="Windows: put the shortcut in DIR instead of the Start menu")
    p.set_defaults(handler=run)


@dataclass
class Written:
    files: list[Path] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)


def launcher_argv() -> list[str]:
    """How the launcher starts the wizard: the gui-script beside this Python, else ``python -m gpusetup gui``."""
    bindir = Path(sys.executable).parent
    for name in ("gpusetup-gui", "gpusetup-gui.exe"):
        cand = bindir / name
        if cand.exists():
            return [str(cand)]
    frozen = getattr(sys, "frozen", False)
    if frozen:
        return [sys.executable, "gui"]
    pythonw = bindir / "pythonw.exe"
    py = str(pythonw) if pythonw.exists() else sys.executable
    return [py, "-m", "gpusetup", "gui"]


def _exec_quote(arg: str) -> str:
    """Quote one argument for the desktop entry ``Exec`` key (freedesktop Desktop Entry spec, 'Exec')."""
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`='):
        return arg.replace("%", "%%")
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
    return '"' + escaped.replace("%", "%%") + '"'


def desktop_file(argv: list[str]) -> str:
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Version=1.0",
            f"Name={APP_NAME}",
            "GenericName=GPU setup for deep learning",
            "GenericName[zh_CN]=深度学习显卡配置",
            f"Comment={COMMENT}",
            f"Comment[zh_CN]={COMMENT_ZH}",
            "Exec=" + " ".join(_exec_quote(a) for a in argv),
            f"Icon={APP_ID}",
            "Terminal=false",
            "Categories=Settings;HardwareSettings;",
            "Keywords=GPU;CUDA;NVIDIA;PyTorch;TensorFlow;JAX;driver;",
            "StartupNotify=true",
            f"StartupWMClass={APP_ID}",
            "",
        ]
    )


def linux_paths(data_home: Path) -> dict[str, Path]:
    return {
        "desktop": data_home / "applications" / f"{APP_ID}.desktop",
        "svg": data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        "png": data_home / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png",
    }


def default_data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def install_linux(data_home: Path, argv: list[str] | None = None) -> Written:
    paths = linux_paths(data_home)
    out = Written()
    for key, src in (("svg", resource("icons", "gpusetup.svg")), ("png", resource("icons", "gpusetup-256.png"))):
        if src.exists():
            paths[key].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, paths[key])
            out.files.append(paths[key])
    paths["desktop"].parent.mkdir(parents=True, exist_ok=True)
    tmp = paths["desktop"].with_suffix(".tmp")
    tmp.write_text(desktop_file(argv or launcher_argv()), encoding="utf-8")
    tmp.chmod(0o755)
    tmp.replace(paths["desktop"])
    out.files.insert(0, paths["desktop"])
    out.notes.append(msg("desktop.out.in-menu"))
    return out


def uninstall_linux(data_home: Path) -> Written:
    out = Written()
    for p in linux_paths(data_home).values():
        if p.exists():
            p.unlink()
            out.files.append(p)
    return out


def start_menu_dir() -> Path:
    appdata = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
    return Path(appdata) / "Microsoft" / "Windows" / "Start Menu" / "Programs"


def _ps_quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def shortcut_script(lnk: Path, argv: list[str], icon: Path | None) -> str:
    """PowerShell that creates the shortcut (WScript.Shell COM); every value is a single-quoted literal."""
    lines = [
        "$s = (New-Object -ComObject WScript.Shell).CreateShortcut(" + _ps_quote(str(lnk)) + ")",
        "$s.TargetPath = " + _ps_quote(argv[0]),
        "$s.Arguments = " + _ps_quote(" ".join(f'"{a}"' if " " in a else a for a in argv[1:])),
        "$s.Description = " + _ps_quote(COMMENT),
        "$s.WorkingDirectory = " + _ps_quote(str(Path.home())),
    ]
    if icon is not None:
        lines.append("$s.IconLocation = " + _ps_quote(str(icon)))
    lines.append("$s.Save()")
    return "; ".join(lines)


def install_windows(start_menu: Path, argv: list[str] | None = None) -> Written:
    start_menu.mkdir(parents=True, exist_ok=True)
    lnk = start_menu / f"{APP_NAME}.lnk"
    ico = resource("icons", "gpusetup.ico")
    script = shortcut_script(lnk, argv or launcher_argv(), ico if ico.exists() else None)
    res = SubprocessRunner().run(["powershell", "-NoProfile", "-NonInteractive", "-Command", script], timeout=60)
    if not res.ok:
        raise ToolError(msg("cli.error.shortcut-failed", reason=res.error or res.stderr.strip() or str(res.returncode)))
    return Written(files=[lnk], notes=[msg("desktop.out.in-start-menu")])


def run(args: argparse.Namespace) -> int:
    windows = is_windows()  # the one platform switch of this command: two launcher formats
    if args.show:
        print(desktop_file(launcher_argv()), end="")
        return 0
    try:
        if windows:
            folder = Path(args.start_menu) if args.start_menu else start_menu_dir()
            if args.uninstall:
                lnk = folder / f"{APP_NAME}.lnk"
                lnk.unlink(missing_ok=True)
                out = Written(files=[lnk])
            else:
                out = install_windows(folder)
        else:
            home = Path(args.data_home).expanduser() if args.data_home else default_data_home()
            out = uninstall_linux(home) if args.uninstall else install_linux(home)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        raise ToolError(msg("cli.error.launcher-remove" if args.uninstall else "cli.error.launcher-write",
                            where=where, reason=exc.strerror or str(exc))) from exc
    lang = output_language()
    if not out.files:
        print("gpusetup: " + render(msg("desktop.out.nothing-to-remove"), lang))
    for f in out.files:
        print(render(msg("desktop.out.removed", path=str(f)) if args.uninstall else msg("desktop.out.wrote", path=str(f)), lang))
    for n in out.notes:
        print(render(n, lang))
    return 0
