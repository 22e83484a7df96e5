"""Where gpusetup keeps its own files (logs, install journals, downloaded data), per user.

Follows the XDG base directories on Linux, ``%LOCALAPPDATA%`` on Windows and ``~/Library`` on macOS.
``GPUSETUP_HOME`` overrides everything (tests, portable installs).
"""

from __future__ import annotations

import os
from pathlib import Path

from gpusetup.probe.platform.host import current_os


def _base(kind: str) -> Path:
    override = os.environ.get("GPUSETUP_HOME")
    if override:
        return Path(override) / kind
    home = Path.home()
    if current_os() == "windows":
        root = Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local"))
        return root / "gpusetup" / kind
    if current_os() == "macos":
        if kind == "logs":
            return home / "Library" / "Logs" / "gpusetup"
        return home / "Library" / "Application Support" / "gpusetup" / kind
    xdg = {
        "state": os.environ.get("XDG_STATE_HOME", str(home / ".local" / "state")),
        "logs": os.environ.get("XDG_STATE_HOME", str(home / ".local" / "state")),
        "data": os.environ.get("XDG_DATA_HOME", str(home / ".local" / "share")),
        "cache": os.environ.get("XDG_CACHE_HOME", str(home / ".cache")),
    }[kind]
    sub = "gpusetup/logs" if kind == "logs" else "gpusetup"
    return Path(xdg) / sub


def state_dir() -> Path:
    """Install journals, the reboot-resume marker, the install lock."""
    return _base("state")


def log_dir() -> Path:
    """Our own logs (CLI, wizard, installer output)."""
    return _base("logs")


def data_dir() -> Path:
    """Updated compat data bundles."""
    return _base("data")


def cache_dir() -> Path:
    return _base("cache")
