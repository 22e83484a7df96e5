"""Children die with us: a pip or nvidia-smi that gpusetup started never outlives gpusetup, nor does anything it
started in turn (a build backend compiling a CUDA extension for an hour, a compiler, a daemon it forked).

Our children run in their own session (so a timeout can stop the whole group), which also means nobody
stops them when gpusetup itself is killed (``kill -9``, an OOM kill, a crashed GUI): init adopts them and a
half-finished ``pip install`` keeps going. So every child is tied to us, and its whole tree is tracked:

* Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the child before it runs the command, then a check that we
  are still its parent (we may have died between fork and prctl). The kernel clears the setting for a
  set-user-ID program (sudo, pkexec): those steps rely on sudo relaying signals instead.
  While a step runs, gpusetup is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): a grandchild whose parent
  died is re-parented to gpusetup instead of init, so even a process that left the session (``setsid``) stays
  in gpusetup's tree and is found and stopped with it (and collected when it ends). PDEATHSIG only reaches the direct child; for the rest, a
  :class:`Tree` that runs for more than a second is written down in ``<state dir>/children/`` (session id,
  start times, boot id, the pids seen in it) and :func:`reap_leftovers` — called at every gpusetup start —
  stops what is left of a tree whose gpusetup was killed with ``kill -9``. A Linux session number cannot be
  reused while any process is still in that session, so "every process in session N" is exactly what is
  left of that tree. Because pid numbers come back (32,768 of them on many systems), a process is only taken
  for part of a recorded tree when it carries that tree's mark: every child starts with a random
  ``GPUSETUP_TREE`` token in its environment, which what it starts inherits, and :func:`reap_leftovers` reads
  it back from ``/proc/<pid>/environ`` before it stops anything.
* SIGTERM, SIGHUP (and Ctrl-C, through the runner's own ``except``) of gpusetup stop every live tree first
  (:func:`install_signal_handlers`), then gpusetup ends as the signal asks.
* Windows: every child is put into one Job object with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``; the job's
  only handle is ours, so Windows ends the children (and their children) when our process ends, however it
  ends.
* Elsewhere (macOS): no kernel mechanism; the runner's own timeout, cancel and signal handling still stop the
  child's process group.

Usage: ``proc = subprocess.Popen(..., **popen_kwargs())`` then ``tree = track(proc, own_session=...)``;
``tree.stop()`` on timeout or cancel, ``tree.close()`` when the command ended. ``adopt(proc)`` alone is the
Windows part (kept for callers that only want that).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TREE_ENV = "GPUSETUP_TREE"  # the mark of one tree, inherited by everything the child starts
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
RECORD_AFTER_S = 1.0  # a child that ends within a second is not written down (every probe would be)
REFRESH_EVERY_S = 2.0  # how often a long step's tree is looked at again (new descendants, zombies to reap)
_lock = threading.Lock()
_prctl: Any = None
_prctl_checked = False
_job: Any = None
_subreaper = False
_live: dict[int, Tree] = {}
_handlers_installed = False
_reaped_at_start = False
_record_dir_override: Path | None = None


def _linux_prctl() -> Any:
    """libc's prctl, resolved once in the parent (nothing is looked up between fork and exec)."""
    global _prctl, _prctl_checked
    with _lock:
        if not _prctl_checked:
            _prctl_checked = True
            # lazy: a cycle (runner → children → gpusetup.probe, whose __init__ imports the runner)
            from gpusetup.probe.platform.host import current_os

            if current_os() == "linux":
                try:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                    fn = libc.prctl
                    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
                    fn.restype = ctypes.c_int
                    _prctl = fn
                except (OSError, AttributeError):
                    _prctl = None
    return _prctl


def popen_kwargs() -> dict[str, Any]:
    """Extra ``Popen`` arguments that make the child die when this process dies (Linux)."""
    prctl = _linux_prctl()
    if prctl is None:
        return {}
    parent = os.getpid()
    sig = int(signal.SIGKILL)

    def die_with_parent() -> None:  # runs in the child between fork and exec: no imports, no allocation-heavy work
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return {"preexec_fn": die_with_parent}


def adopt(proc: subprocess.Popen[Any]) -> None:
    """Windows: put ``proc`` into our kill-on-close Job object. Elsewhere nothing (popen_kwargs did it)."""
    from gpusetup.probe.platform.host import is_windows  # lazy: the same cycle as in popen_kwargs

    if not is_windows():
        return
    try:
        job = _windows_job()
        if job:
            ctypes.windll.kernel32.AssignProcessToJobObject(job, int(proc._handle))  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        pass  # best effort: the runner's timeout and cancel still stop the child


# ------------------------------------------------------------------------------------ the Linux process table


def _proc_root() -> Path:
    return Path("/proc")


def _stat(pid: int) -> tuple[int, int, int, int, str] | None:
    """(ppid, pgrp, session, start time in clock ticks since boot, state) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read(4096)
    except OSError:
        return None
    rest = raw[raw.rfind(b")") + 2:].split()
    try:
        return int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19]), rest[0].decode("ascii", "replace")
    except (IndexError, ValueError):
        return None


def _snapshot() -> dict[int, tuple[int, int, int, int, str]]:
    """Every process of this user: pid → (ppid, pgrp, session, start, state). Empty where there is no /proc."""
    out: dict[int, tuple[int, int, int, int, str]] = {}
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if uid is not None and uid != 0 and os.stat(f"/proc/{pid}").st_uid != uid:
                continue
        except OSError:
            continue
        st = _stat(pid)
        if st is not None:
            out[pid] = st
    return out


def _has_mark(pid: int, token: str) -> bool:
    """Does process ``pid`` carry ``GPUSETUP_TREE=<token>`` in its environment (it or an ancestor was started
    by the tree with that token)?"""
    want = f"{TREE_ENV}={token}".encode()
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read(1 << 20)
    except OSError:
        return False
    return want in env.split(b"\0")


def new_token() -> str:
    return os.urandom(12).hex()


def child_env(env: dict[str, str] | None = None, token: str | None = None) -> tuple[dict[str, str], str]:
    """The environment for a child (``env``, or this process's) marked with a tree token; (env, token)."""
    token = token or new_token()
    out = dict(os.environ if env is None else env)
    out[TREE_ENV] = token
    return out, token


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read(64).strip() or None
    except OSError:
        return None


def _send(pid: int, start: int | None, sig: int) -> bool:
    """Signal ``pid`` if it is still the process that started at ``start`` (a reused pid is left alone).
    Through a pidfd where the kernel has them, so the check and the signal concern the same process."""
    if pid <= 1 or pid == os.getpid():
        return False
    pidfd = None
    try:
        if hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal"):
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
        if start is not None:
            st = _stat(pid)
            if st is None or st[3] != start:
                return False
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, sig)
        else:
            os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError, OSError):
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


# ------------------------------------------------------------------------------------------------ trees


class Tree:
    """One started child and everything it starts: found, recorded, stopped and reaped together."""

    def __init__(self, proc: subprocess.Popen[Any], own_session: bool, label: str = "", token: str | None = None) -> None:
        self.proc = proc
        self.token = token  # GPUSETUP_TREE of the child's environment (None: not marked)
        self.pid = proc.pid
        self.own_session = own_session and os.name == "posix"
        self.label = label
        self.started = time.monotonic()
        st = _stat(self.pid)
        self.start_ticks = st[3] if st else None
        self.known: dict[int, int] = {}  # descendants seen: pid → start time
        self._recorded: Path | None = None
        self._record_tried = False
        self._last_refresh = 0.0
        self._closed = False

    # -- what belongs to it
    def members(self, snap: dict[int, tuple[int, int, int, int, str]] | None = None) -> dict[int, int]:
        """pid → start time of every live process of this tree (the child, its session, its descendants)."""
        snap = _snapshot() if snap is None else snap
        if not snap:
            return {}
        out: dict[int, int] = {}
        lead = snap.get(self.pid)
        if lead is not None and (self.start_ticks is None or lead[3] == self.start_ticks):
            out[self.pid] = lead[3]  # (a number that came back for another process is never ours to signal)
        if self.own_session:
            out.update({pid: st[3] for pid, st in snap.items() if st[2] == self.pid})
        out.update({p: s for p, s in self.known.items() if p in snap and snap[p][3] == s})
        children: dict[int, list[int]] = {}
        for pid, st in snap.items():
            children.setdefault(st[0], []).append(pid)
        todo = list(out)
        while todo:
            for c in children.get(todo.pop(), ()):
                if c not in out:
                    out[c] = snap[c][3]
                    todo.append(c)
        out.pop(os.getpid(), None)
        return {p: s for p, s in out.items() if snap[p][4] != "Z"}  # an ended process waiting to be collected

    def refresh(self, force: bool = False) -> None:
        """Look at the tree again: remember new descendants, write the record, reap orphans that ended."""
        now = time.monotonic()
        if not force and now - self._last_refresh < REFRESH_EVERY_S:
            return
        self._last_refresh = now
        snap = _snapshot()
        if snap:
            self.known.update(self.members(snap))
            self._reap_zombies(snap)
        if now - self.started >= RECORD_AFTER_S:
            self._record()

    def maybe_record(self) -> None:
        """Called while waiting: after a second of running, write the record (for the next start after kill -9)."""
        if not self._record_tried and time.monotonic() - self.started >= RECORD_AFTER_S:
            self._record_tried = True
            self.refresh(force=True)

    # -- stopping
    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child's process group and to every other process of the tree."""
        if os.name != "posix":
            brk = getattr(signal, "CTRL_BREAK_EVENT", None)  # Windows: the console group's Ctrl-Break
            with contextlib.suppress(OSError):
                if sig == signal.SIGTERM and brk is not None:
                    self.proc.send_signal(brk)
                else:
                    self.proc.kill()
            return
        if not self.own_session:
            if self.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                    self.proc.send_signal(sig)  # sudo relays it to the command it runs
            return  # an elevated step's processes are root's: not ours to signal
        members = self.members()  # before the group is hit: once a parent dies its children move away
        self.known.update(members)
        if self.proc.returncode is None:  # not yet waited for: the number is still this group's
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                os.killpg(self.pid, sig)
        for pid, start in members.items():
            _send(pid, start, sig)

    def kill(self) -> None:
        if os.name != "posix":
            with contextlib.suppress(OSError):
                self.proc.kill()  # the Job object takes the rest of the tree when gpusetup ends
            return
        self.signal(int(signal.SIGKILL))

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM to the whole tree; SIGKILL to whatever of it is still there after ``grace`` seconds."""
        self.refresh(force=True)
        self.signal(int(signal.SIGTERM))
        end = time.monotonic() + grace
        while time.monotonic() < end:
            if self.proc.poll() is not None and (os.name != "posix" or not self.members()):
                break
            time.sleep(0.1)
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.proc.wait(timeout=2)

    def close(self) -> None:
        """The command ended: stop stragglers of its session (a daemon it left behind), forget the record."""
        if self._closed:
            return
        self._closed = True
        if self.own_session and os.name == "posix" and self.token and (self._recorded is not None or self.known):
            left = self.members()
            left.pop(self.pid, None)
            for pid, start in left.items():
                if _has_mark(pid, self.token):  # (the child was collected: its number is no proof any more)
                    _send(pid, start, int(signal.SIGKILL))
        snap = _snapshot() if self.known else {}
        if snap:
            self._reap_zombies(snap)
        with _lock:
            _live.pop(self.pid, None)
            last = not _live
        if last:
            _stop_being_subreaper()  # orphans of whatever runs when no step does go to init, as usual
        if self._recorded is not None:
            with contextlib.suppress(OSError):
                self._recorded.unlink()

    # -- bookkeeping
    def _reap_zombies(self, snap: dict[int, tuple[int, int, int, int, str]]) -> None:
        """Orphans of this tree re-parented to us (subreaper) that ended: collect them so they do not linger as
        zombies. Only processes known to be of this tree — never another Popen's child (its wait() would lose
        the exit status)."""
        me = os.getpid()
        for pid, (ppid, _pgrp, sid, start, state) in snap.items():
            if ppid != me or state != "Z" or pid == self.pid:
                continue
            if (self.own_session and sid == self.pid) or self.known.get(pid) == start:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)

    def _record(self) -> None:
        if not self.own_session or self.start_ticks is None or not self.token:
            return
        folder = record_dir()
        if folder is None:
            return
        data = {"pid": self.pid, "start": self.start_ticks, "boot": _boot_id(), "owner": os.getpid(),
                "owner_start": _own_start(), "label": self.label[:200], "token": self.token,
                "known": sorted([p, s] for p, s in self.known.items())[:4096]}
        path = folder / f"{self.pid}.json"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = folder / f".{self.pid}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, path)
            self._recorded = path
        except OSError:
            pass  # a read-only home: the tree is still stopped on timeout, cancel, signals and PDEATHSIG


def _own_start() -> int | None:
    st = _stat(os.getpid())
    return st[3] if st else None


def record_dir() -> Path | None:
    """Where trees are written down (``<state dir>/children``); None to write nothing."""
    if _record_dir_override is not None:
        return _record_dir_override
    if not Path("/proc/self/stat").exists():
        return None  # only Linux can find the rest of a tree again from a record
    from gpusetup.paths import state_dir  # lazy: paths reads the environment; importing it here costs nothing

    return state_dir() / "children"


def set_record_dir(path: Path | None) -> None:
    """Tests: write records into ``path`` instead of the per-user state folder."""
    global _record_dir_override
    _record_dir_override = Path(path) if path is not None else None


def track(proc: subprocess.Popen[Any], *, own_session: bool = True, label: str = "", token: str | None = None) -> Tree:
    """Start watching ``proc``'s tree: Windows job, Linux subreaper, the signal handlers, the live list.
    ``token``: the GPUSETUP_TREE mark the child was started with (:func:`child_env`); without one the tree is
    still stopped on timeout, cancel and signals, but not written down for the next start."""
    adopt(proc)
    install_signal_handlers()
    tree = Tree(proc, own_session, label, token)
    with _lock:
        _live[tree.pid] = tree
    _become_subreaper()  # (after joining the live list: a tree closing meanwhile does not switch it off)
    return tree


def live_trees() -> list[Tree]:
    with _lock:
        return list(_live.values())


def _become_subreaper() -> None:
    global _subreaper
    if _subreaper:
        return
    prctl = _linux_prctl()
    if prctl is None:
        return
    with _lock:
        if not _subreaper:
            _subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _stop_being_subreaper() -> None:
    global _subreaper
    prctl = _linux_prctl()
    if prctl is None:
        return
    with _lock:
        if _subreaper and not _live:
            _subreaper = prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) != 0


def stop_all(grace: float = 2.0) -> None:
    """Stop every live tree (SIGTERM, then SIGKILL after ``grace`` seconds); used on exit and on signals."""
    trees = live_trees()
    if not trees:
        return
    for t in trees:
        t.refresh(force=True)
        t.signal(int(signal.SIGTERM))
    end = time.monotonic() + grace
    while time.monotonic() < end and any(t.proc.poll() is None or t.members() for t in trees):
        time.sleep(0.1)
    for t in trees:
        t.kill()
        t.close()


def _on_signal(signum: int, frame: Any) -> None:
    stop_all()
    signal.signal(signum, signal.SIG_DFL)  # then end as the signal asks (exit status 128 + signum)
    os.kill(os.getpid(), signum)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP stop every child tree before gpusetup ends (main thread, default handlers only:
    a handler someone else installed — the wizard's, a test's — is left alone)."""
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _on_signal)
    atexit.register(stop_all)
    # Before the interpreter waits for its worker threads (the wizard runs steps in one): from Python 3.13 an
    # uncaught Ctrl-C (KeyboardInterrupt) makes it wait for them, and a worker waiting on a child that runs for
    # minutes kept gpusetup alive — atexit comes only after that wait. Python ≤ 3.12 ended without waiting.
    # threading._register_atexit (3.9+; what concurrent.futures uses) runs first; the trees stopped, the workers end.
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        with contextlib.suppress(RuntimeError):  # the interpreter is already shutting down
            register(stop_all)


# ------------------------------------------------------------------------------------- after a kill -9


def reap_leftovers(folder: Path | None = None) -> list[str]:
    """Stop what is left of child trees whose gpusetup was killed (kill -9, an OOM kill, a power-cut GUI):
    every process still in such a tree's session, and the processes it was seen to start. Returns one
    "label (pid N)" per process stopped. Records of a running gpusetup, or of an earlier boot, are left alone
    (the latter removed)."""
    folder = folder if folder is not None else record_dir()
    if folder is None:
        return []
    try:
        entries = [p for p in folder.iterdir() if p.suffix == ".json"]
    except OSError:
        return []
    if not entries:
        return []
    boot = _boot_id()
    snap = _snapshot()
    stopped: list[str] = []
    for path in entries:
        try:
            if path.is_symlink() or path.stat().st_size > 1 << 20:
                raise ValueError
            rec = json.loads(path.read_text(encoding="utf-8"))
            pid, start = int(rec["pid"]), int(rec["start"])
            owner, owner_start = int(rec["owner"]), rec.get("owner_start")
            token = str(rec["token"])
            if len(token) < 16:
                raise ValueError
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        if rec.get("boot") and boot and rec["boot"] != boot:
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        if owner in snap and (owner_start is None or snap[owner][3] == owner_start) and owner != os.getpid():
            continue  # that gpusetup is still running: its children are its own business
        victims: dict[int, int] = {}
        leader = snap.get(pid)
        if leader is None or leader[3] == start:  # the session number is still that tree's (see module doc)
            victims.update({p: st[3] for p, st in snap.items() if st[2] == pid and st[4] != "Z"})
        for item in rec.get("known", []):
            with contextlib.suppress(TypeError, ValueError):
                p, s = int(item[0]), int(item[1])
                if p in snap and snap[p][3] == s and snap[p][4] != "Z":
                    victims[p] = s
        label = str(rec.get("label") or "a command")
        for p, s in victims.items():
            if not _has_mark(p, token):
                continue  # a number that came back for someone else's process: never stopped
            if _send(p, s, int(signal.SIGKILL)):
                stopped.append(f"{label} (pid {p})")
        with contextlib.suppress(OSError):
            path.unlink()
    return stopped


def reap_once() -> list[str]:
    """:func:`reap_leftovers`, at most once per process (the first child started, or the CLI's start)."""
    global _reaped_at_start
    if _reaped_at_start:
        return []
    _reaped_at_start = True
    try:
        return reap_leftovers()
    except Exception:  # noqa: BLE001 - cleaning up after an earlier crash must never stop this run
        return []


def pids_in_session(sid: int) -> Iterable[int]:
    """Tests and diagnostics: the live processes of session ``sid``."""
    return [p for p, st in _snapshot().items() if st[2] == sid]


def _windows_job() -> Any:
    """One Job object for the whole process, created on first use, that kills its members when closed."""
    global _job
    with _lock:
        if _job is None:
            from ctypes import wintypes  # lazy: Windows-only types, only on Windows

            class IoCounters(ctypes.Structure):
                _fields_ = [(n, ctypes.c_ulonglong) for n in (
                    "ReadOperationCount", "WriteOperationCount", "OtherOperationCount", "ReadTransferCount",
                    "WriteTransferCount", "OtherTransferCount")]

            class BasicLimits(ctypes.Structure):
                _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                            ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                            ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                            ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                            ("SchedulingClass", wintypes.DWORD)]

            class ExtendedLimits(ctypes.Structure):
                _fields_ = [("BasicLimitInformation", BasicLimits), ("IoInfo", IoCounters),
                            ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                            ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                return None
            info = ExtendedLimits()
            info.BasicLimitInformation.LimitFlags = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            extended_limit_information = 9
            if not kernel32.SetInformationJobObject(job, extended_limit_information, ctypes.byref(info),
                                                    ctypes.sizeof(info)):
                kernel32.CloseHandle(job)
                return None
            _job = job
    return _job
