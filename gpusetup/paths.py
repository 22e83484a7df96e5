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


def install_state_dir() -> Path:
    """The installer's journal folder: ``$GPUSETUP_STATE_DIR``, else ``<state dir>/install``."""
    override = os.environ.get("GPUSETUP_STATE_DIR")
    return Path(override) if override else state_dir() / "install"


def log_dir() -> Path:
    """Our own logs (CLI, wizard, installer output)."""
    return _base("logs")


def data_dir() -> Path:
    """Updated compat data bundles."""
    return _base("data")


def cache_dir() -> Path:
    """Index pages and wheel metadata gpusetup read (``<cache>/index``): ``GPUSETUP_HOME/cache``, else the
    platform's cache folder from platformdirs (``$XDG_CACHE_HOME/gpusetup``, ``~/.cache/gpusetup`` when it is
    unset *or empty*, as the XDG spec says; ``~/Library/Caches/gpusetup``; ``%LOCALAPPDATA%\\gpusetup\\Cache``)."""
    if os.environ.get("GPUSETUP_HOME"):
        return _base("cache")
    import platformdirs  # lazy: only a live index check or a refresh reads the cache

    return Path(platformdirs.user_cache_dir("gpusetup", appauthor=False))


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path | str) -> Path:
    """Create ``path`` (and missing parents) readable by this user only; tighten it if it exists (0700)."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    try:
        if p.stat().st_mode & 0o077:
            os.chmod(p, PRIVATE_DIR)
    except OSError:
        pass
    return p


def open_private(path: Path | str, mode: str = "a", encoding: str = "utf-8"):  # noqa: ANN201 - a text file
    """Open a text file that only this user can read (created 0600; an existing one is tightened)."""
    flags = {"a": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
             "a+": os.O_RDWR | os.O_CREAT | os.O_APPEND}[mode]
    fd = os.open(str(path), flags | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    try:
        if hasattr(os, "fchmod") and os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        pass
    return os.fdopen(fd, mode, encoding=encoding)


def write_private(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, the file readable by this user only."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    with open_private(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)
