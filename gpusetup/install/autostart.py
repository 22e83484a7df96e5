"""Continue an installation after a restart: an entry that opens GPU Setup at the next login (it continues
the unfinished install by itself), removed again when the install finishes or is undone.

What the entry is and where it lives is the platform's business (``Platform.login_entry``): an XDG autostart
Desktop Entry on Linux, a ``.cmd`` in the Startup folder on Windows, a LaunchAgent (RunAtLoad) on macOS.
The file is private (0600; a folder we create, 0700). Where the platform has none, :func:`enable` returns
None and the user is told to open GPU Setup again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gpusetup.probe import ProbeContext
from gpusetup.probe.pyenv import frozen

if TYPE_CHECKING:
    from gpusetup.probe.platform import LoginEntry


def _entry(argv: list[str], env: dict[str, str] | None, os_name: str | None) -> LoginEntry | None:
    ctx = ProbeContext(env=dict(os.environ) if env is None else env)
    if os_name is not None:
        ctx.os_name = os_name
    return ctx.platform.login_entry(ctx, argv)


def wizard_argv() -> list[str]:
    """How the entry starts the wizard so it continues: the packaged program, or this Python's module."""
    if frozen():
        return [sys.executable, "--resume"]
    return [sys.executable, "-m", "gpusetup", "gui", "--resume"]


def entry_path(env: dict[str, str] | None = None, os_name: str | None = None) -> Path | None:
    """Where this platform keeps the entry (None: nowhere gpusetup knows)."""
    entry = _entry(wizard_argv(), env, os_name)
    return entry.path if entry is not None else None


def enable(argv: list[str] | None = None, env: dict[str, str] | None = None,
           os_name: str | None = None) -> Path | None:
    """Write the entry; its path, or None where this system has no login entry gpusetup knows."""
    entry = _entry(argv or wizard_argv(), env, os_name)
    if entry is None:
        return None
    entry.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # an existing folder keeps its mode
    tmp = entry.path.with_name(entry.path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(entry.text)
    os.chmod(tmp, 0o600)  # also when an older .tmp was left with other permissions
    tmp.replace(entry.path)
    return entry.path


def disable(env: dict[str, str] | None = None, os_name: str | None = None) -> bool:
    """Remove the entry (True when there was one)."""
    path = entry_path(env, os_name)
    if path is None or not path.is_file():
        return False
    path.unlink()
    return True


def enabled(env: dict[str, str] | None = None, os_name: str | None = None) -> bool:
    path = entry_path(env, os_name)
    return path is not None and path.is_file()
