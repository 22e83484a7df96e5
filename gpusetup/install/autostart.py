"""Continue an installation after a restart: an entry that opens GPU Setup at the next login (it continues
the unfinished install by itself), removed again when the install finishes or is undone.

Where such entries live is the platform's business (``Platform.autostart_dir``: the XDG autostart folder on
Linux). Where it has none, :func:`enable` returns None and the user is told to open GPU Setup again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpusetup.probe.pyenv import frozen

NAME = "gpusetup-resume.desktop"


def autostart_dir(env: dict[str, str] | None = None) -> Path | None:
    from gpusetup.probe import ProbeContext

    ctx = ProbeContext(env=dict(os.environ) if env is None else env)
    return ctx.platform.autostart_dir(ctx)


def wizard_argv() -> list[str]:
    """How the entry starts the wizard so it continues: the packaged program, or this Python's module."""
    if frozen():
        return [sys.executable, "--resume"]
    return [sys.executable, "-m", "gpusetup", "gui", "--resume"]


def _quote(arg: str) -> str:
    """A Desktop Entry Exec argument (freedesktop spec: quote when needed, escape \\ " ` $)."""
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`='):
        return arg
    return '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'


def entry_text(argv: list[str]) -> str:
    return ("[Desktop Entry]\nType=Application\nName=GPU Setup (continue the installation)\n"
            "Name[zh_CN]=GPU Setup（继续安装）\n"
            "Comment=Continues the GPU setup that stopped for a restart; removed when it is finished\n"
            f"Exec={' '.join(_quote(a) for a in argv)}\nTerminal=false\nNoDisplay=true\n"
            "X-GNOME-Autostart-enabled=true\n")


def enable(argv: list[str] | None = None, env: dict[str, str] | None = None) -> Path | None:
    """Write the entry; its path, or None where this system has no autostart folder gpusetup knows."""
    folder = autostart_dir(env)
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(entry_text(argv or wizard_argv()), encoding="utf-8")
    tmp.replace(path)
    return path


def disable(env: dict[str, str] | None = None) -> bool:
    """Remove the entry (True when there was one)."""
    folder = autostart_dir(env)
    if folder is None or not (folder / NAME).is_file():
        return False
    (folder / NAME).unlink()
    return True


def enabled(env: dict[str, str] | None = None) -> bool:
    folder = autostart_dir(env)
    return folder is not None and (folder / NAME).is_file()
