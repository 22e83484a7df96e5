"""The computer gpusetup itself runs on: the one module that reads ``sys.platform``.

Everything else asks here (``current_os()``), so a platform rule is written once and tests can see it.
"""

from __future__ import annotations

import os
import sys


def current_os() -> str:
    """linux / windows / macos for the machine gpusetup runs on (another platform: its sys.platform name)."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return sys.platform


def is_windows() -> bool:
    return current_os() == "windows"


def is_macos() -> bool:
    return current_os() == "macos"


def display_available() -> bool:
    """Whether a window can open: always on Windows and macOS, elsewhere when X11 or Wayland is there."""
    if current_os() in ("windows", "macos"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def lock_exclusive(fileno: int) -> None:
    """Take an exclusive, non-blocking lock on an open file (released when it is closed); OSError when another
    process holds it. Windows locks the first byte (msvcrt), elsewhere the whole file (flock)."""
    if sys.platform == "win32":
        import msvcrt  # lazy: a Windows-only module, imported where the platform is known

        msvcrt.locking(fileno, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl  # lazy: a POSIX-only module

        fcntl.flock(fileno, fcntl.LOCK_EX | fcntl.LOCK_NB)


def python_platform() -> str:
    """The interpreter's own platform name (``win32``, ``darwin``, ``linux``), for naming native libraries."""
    return sys.platform
