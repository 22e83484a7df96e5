"""Where gpusetup keeps its own files (logs, install journals, downloaded data), per user.

Follows the XDG base directories on Linux, ``%LOCALAPPDATA%`` on Windows and ``~/Library`` on macOS.
``GPUSETUP_HOME`` overrides everything (tests, portable installs).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import logging.handlers
import os
import stat
import tempfile
from pathlib import Path

from gpusetup.errors import english
from gpusetup.model import Message
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
    return state_folder(override) if override else state_dir() / "install"


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
_POSIX = os.name == "posix"


def msg(code: str, **params: object) -> Message:
    """A message as data (gpusetup.messages.msg, which this low layer cannot import, does the same)."""
    return Message(code=code, params=dict(params))


class UnsafePath(PermissionError):
    """A path gpusetup refuses to write through: a symbolic link, a file or folder of another user, a hard link,
    something that is not a regular file. ``message`` says it as data (a gpusetup.messages code)."""

    def __init__(self, message: Message) -> None:
        self.message = message
        path = str(message.params.get("path", ""))
        super().__init__(errno.EPERM, english(message), path)


def _owner_name(uid: int) -> str:
    try:
        import pwd  # lazy: POSIX only

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _check_folder(p: Path) -> None:
    """``p`` is a folder of this user (a link to one is fine when the link is this user's or root's)."""
    if not _POSIX:
        return
    euid = os.geteuid()
    lst = os.lstat(p)
    if stat.S_ISLNK(lst.st_mode) and lst.st_uid not in (euid, 0):
        raise UnsafePath(msg("paths.error.foreign-link", path=str(p), owner=_owner_name(lst.st_uid)))
    st = os.stat(p)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(p))
    if st.st_uid != euid:
        raise UnsafePath(msg("paths.error.foreign-folder", path=str(p), owner=_owner_name(st.st_uid)))


def private_dir(path: Path | str) -> Path:
    """Create ``path`` (and missing parents) readable by this user only (0700).

    A folder that already exists is never changed (``--state-dir /tmp`` once turned /tmp from 1777 into 0700,
    ``--state-dir ~`` locked down the home folder): it must be this user's (else :class:`UnsafePath`); the files
    gpusetup writes into it are private themselves (:func:`open_private`). Use :func:`state_folder` to pick a
    private subfolder of a folder that is not."""
    p = Path(path)
    with contextlib.suppress(FileExistsError):
        p.mkdir(parents=True, exist_ok=False, mode=PRIVATE_DIR)
    _check_folder(p)
    return p


def state_folder(path: Path | str) -> Path:
    """Where gpusetup keeps its state when told to use ``path`` (``--state-dir``, ``$GPUSETUP_STATE_DIR``).

    ``path`` itself when it does not exist yet (it is created 0700) or is already a private folder of this user;
    otherwise — a shared folder such as /tmp, the home folder, a folder of another user — a subfolder
    ``gpusetup-state-<uid>`` inside it, so nothing about ``path`` changes. The subfolder is checked when used
    (:func:`private_dir`): another user's folder or link of that name is refused, never followed."""
    p = Path(path).expanduser()
    if not _POSIX:
        return p
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return p
    except OSError:
        return p  # let the first use report the error
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077:
        return p
    return p / f"gpusetup-state-{os.geteuid()}"


_MODES = {"a": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
          "a+": os.O_RDWR | os.O_CREAT | os.O_APPEND}


def open_private(path: Path | str, mode: str = "a", encoding: str = "utf-8"):  # noqa: ANN201 - a text file
    """Open a text file that only this user can read (created 0600; an existing one of ours is tightened).

    Never through a symbolic link (O_NOFOLLOW: a link planted at ``install.lock`` or ``journal.jsonl`` once got
    its target truncated, appended to and chmod 0600), never a file of another user, a hard-linked file or
    anything but a regular file (a FIFO would block, a device is not a log): those raise :class:`UnsafePath`.
    """
    flags = _MODES[mode] | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    trunc = flags & os.O_TRUNC
    try:
        fd = os.open(str(path), (flags & ~os.O_TRUNC) if trunc else flags, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (os.path.islink(path) and exc.errno in (errno.EMLINK, errno.EPERM)):
            raise UnsafePath(msg("paths.error.symlink", path=str(path))) from exc
        if exc.errno == errno.ENXIO:  # a FIFO without a reader (O_NONBLOCK), a socket
            raise UnsafePath(msg("paths.error.not-regular", path=str(path))) from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(msg("paths.error.not-regular", path=str(path)))
        if _POSIX:
            if st.st_uid != os.geteuid():
                raise UnsafePath(msg("paths.error.foreign-file", path=str(path), owner=_owner_name(st.st_uid)))
            if st.st_nlink > 1:
                raise UnsafePath(msg("paths.error.hard-link", path=str(path), links=st.st_nlink))
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        if trunc:
            os.ftruncate(fd, 0)
        if hasattr(os, "fchmod") and st.st_mode & 0o077:
            with contextlib.suppress(OSError):
                os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, mode, encoding=encoding)


def write_private(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, the file readable by this user only."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)  # O_EXCL, 0600, unguessable
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ------------------------------------------------------------------------------------------ output files


def is_regular_target(path: Path | str) -> bool:
    """Does ``path`` name a regular file (or nothing yet)? ``/dev/null``, ``/dev/stdout``, ``/proc/self/fd/1``,
    a FIFO, a socket or a terminal are not: they are written through, never replaced."""
    try:
        st = os.stat(path)  # follows links: /dev/stdout → /proc/self/fd/1 → a pipe or a terminal
    except FileNotFoundError:
        return True
    except OSError:
        return True  # let the write report it
    return stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)


def write_output(path: Path | str, text: str | bytes, *, mode: int | None = None) -> Path:
    """Write a result file the user asked for (``-o``, ``--textfile``, ``--script``).

    A regular file is replaced atomically: the text goes to an unguessable temporary file in the same folder
    (O_EXCL, never through a link planted there) and is renamed over it, so an interrupted write leaves the old
    file whole. A link to a regular file is kept: its target is replaced. Anything else — a device such as
    ``/dev/null`` (renaming over it, as root, replaced the system's /dev/null with a file), ``/dev/stdout``,
    ``/proc/self/fd/1``, a FIFO — is opened and written through. Returns the path written."""
    p = Path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not is_regular_target(p):
        with open(p, "wb") as fh:  # no O_CREAT race: it exists and is not a regular file
            fh.write(data)
        return p
    if p.is_symlink():
        p = Path(os.path.realpath(p))
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is None:  # an existing file keeps its permissions; a new one gets the usual ones
            try:
                mode = stat.S_IMODE(os.stat(p).st_mode)
            except OSError:
                mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p


def _umask() -> int:
    """The process umask: from /proc (Linux), else 022 (setting and restoring it would race other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


# ------------------------------------------------------------------------------------------- log files

LOG_MAX_BYTES = 5 * 1024 * 1024  # one log file; then it is rotated
LOG_BACKUPS = 2  # wizard.log.1, wizard.log.2: at most 15 MB in all


class PrivateRotatingLog(logging.handlers.RotatingFileHandler):
    """A log file of bounded size (``max_bytes``, then rotated, ``backups`` old files kept) that only this user
    can read and that is never opened through a link (:func:`open_private`): wizard.log grew without limit."""

    def __init__(self, path: Path | str, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS) -> None:
        super().__init__(str(path), mode="a", maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=False)

    def _open(self):  # noqa: ANN202 - logging's own signature (a text stream)
        return open_private(self.baseFilename, "a", encoding="utf-8")

    def shouldRollover(self, record: logging.LogRecord) -> bool:  # noqa: N802 - logging's API
        # the standard check calls os.path.isfile, then seeks: fine; a record itself larger than the whole log is
        # cut first, so one call cannot write more than max_bytes
        msg = record.getMessage()
        if self.maxBytes and len(msg) > self.maxBytes // 4:
            record.msg, record.args = msg[: self.maxBytes // 4] + f" …[{len(msg) - self.maxBytes // 4} characters " \
                "of this message left out]", ()
        return bool(super().shouldRollover(record))
