"""The install journal: JSON lines written (and fsynced) before and after every step, plus the lock.

A crash or power cut between two lines still leaves a record of what started, what finished and how to undo
it, which is all ``--resume`` and ``--rollback`` need. One install at a time: an OS-level file lock that
the kernel releases if gpusetup dies, so a stale lock never blocks the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from gpusetup.credentials import scrub
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.paths import install_state_dir, open_private, private_dir, state_dir
from gpusetup.probe.platform.host import lock_exclusive

JOURNAL = "journal.jsonl"
PLAN = "plan.json"
LOG = "install.log"
LOCK = "install.lock"


def default_state_dir() -> Path:
    """Per-user state: ``<gpusetup.paths.state_dir()>/install`` (``$XDG_STATE_HOME/gpusetup/install`` on Linux),
    so ``GPUSETUP_HOME`` moves it too and support bundles find the journal where the installer wrote it."""
    return install_state_dir()


class Journal:
    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory)
        self.path = self.dir / JOURNAL

    def append(self, event: str, **data: Any) -> None:
        record = {"event": event, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **data}
        private_dir(self.dir)
        with open_private(self.path, "a") as fh:
            fh.write(scrub(json.dumps(record, sort_keys=True)) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def read(self) -> list[dict[str, Any]]:
        """All complete records; a line torn by a crash mid-write is skipped, not fatal."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "event" in rec:
                out.append(rec)
        return out

    def status(self) -> str:
        """none / finished / rolled-back / unfinished (crashed, failed, cancelled or waiting for a reboot)."""
        recs = self.read()
        if not recs:
            return "none"
        for rec in reversed(recs):
            if rec["event"] in ("finished", "rolled-back"):
                return rec["event"]
            if rec["event"] in ("start", "end", "paused", "stopped", "rollback-start", "rollback-end",
                                "reboot-done", "plan", "resume", "repair-start", "repair", "redo", "redo-start",
                                "rebuild", "skipped", "rollback-step"):
                return "unfinished"
        return "unfinished"

    def rollback_interrupted(self) -> bool:
        """A rollback started and did not end (killed, power cut, a failed undo): what is to be done next is
        to finish undoing, never to continue the install over a half-removed environment."""
        for rec in reversed(self.read()):
            if rec["event"] == "rollback-start":
                return True
            if rec["event"] in ("finished", "rolled-back", "plan", "resume", "start", "end", "paused"):
                return False
        return False

    def in_flight(self) -> dict[str, dict[str, Any]]:
        """Steps that started and have no successful end since (a crash, kill -9, power cut, a cancel that
        stopped them half-way, a failure): step id → its last ``start`` record. Their effects are unknown."""
        out: dict[str, dict[str, Any]] = {}
        for rec in self.read():
            if rec["event"] == "start":
                out[rec["step"]] = rec
            elif rec["event"] == "end" and rec.get("ok") and rec.get("step") in out:
                del out[rec["step"]]
        return out

    def archive(self) -> Path | None:
        """Move a finished run aside (``history/<time>/``) so the next install starts a fresh journal."""
        if not self.path.exists():
            return None
        dest = self.dir / "history" / time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        n = 1
        while dest.exists():
            dest = dest.with_name(dest.name.split(".")[0] + f".{n}")
            n += 1
        private_dir(dest.parent)
        dest.mkdir(mode=0o700)
        for name in (JOURNAL, PLAN, LOG):
            if (self.dir / name).exists():
                shutil.move(str(self.dir / name), str(dest / name))
        return dest


class LockBusy(Exception):
    """Another install holds the lock; ``owner`` is its process id (or "unknown"); ``target`` the environment
    both want to change when it is the target's lock that is held."""

    def __init__(self, owner: str, target: str = "") -> None:
        self.owner = owner
        self.target = target
        super().__init__(f"Another gpusetup install is running (process {owner}). Wait for it to finish, or "
                         "cancel it; only one install can run at a time.")


def target_lock_dir() -> Path:
    """Where the per-environment locks live: beside the default state, whatever ``--state-dir`` says, so two
    installs with different state folders still meet here."""
    return state_dir() / "locks"


def target_key(target: str) -> str:
    """The environment an install changes, spelled one way: ``venv:``/``download:`` paths resolved (``~``,
    ``..``, symbolic links), a conda environment by its name."""
    kind, _, where = target.partition(":")
    if kind in ("venv", "download", "python") and where:
        return f"{kind}:{os.path.realpath(os.path.expanduser(where))}"
    return target


class InstallLock:
    """Exclusive, non-blocking lock on ``install.lock``; holds the owner's pid for the error message.

    ``target`` (an install plan's target): the lock of that environment instead (in :func:`target_lock_dir`),
    so no two installs change the same environment at once, whichever state folder each keeps its journal in.
    """

    def __init__(self, directory: Path | None = None, target: str = "") -> None:
        self.target = target
        if target:
            digest = hashlib.sha256(target_key(target).encode("utf-8")).hexdigest()[:24]
            self.path = target_lock_dir() / f"target-{digest}.lock"
        else:
            assert directory is not None
            self.path = Path(directory) / LOCK
        self._fh: Any = None
        self.note = ""  # set when a lock left behind by a process that died was taken over (English)
        self.said: Message | None = None  # the same as data, for the progress line in each interface's language

    def __enter__(self) -> InstallLock:
        private_dir(self.path.parent)
        fh = open_private(self.path, "a+")
        try:
            fh.seek(0)
            lock_exclusive(fh.fileno())
        except OSError:
            fh.seek(0)
            owner = fh.read().strip() or "unknown"
            fh.close()
            raise LockBusy(owner, self.target) from None
        fh.seek(0)
        previous = fh.read().strip()
        if previous.isdigit() and int(previous) != os.getpid():
            self.said = msg("install.lock.taken-over", pid=previous)
            self.note = render(self.said)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            try:
                self._fh.seek(0)
                self._fh.truncate()
            finally:
                self._fh.close()  # closing releases flock / msvcrt lock
                self._fh = None
