"""Run one install step with its output streamed line by line (to the log and the progress parser).

``gpusetup.runner`` captures output only at the end, which is right for probes but not for a 3 GB
download; this is the install-only streaming counterpart with the same rules: argv lists only, a timeout,
and a clean stop of the whole process group on cancel or timeout (SIGTERM, then SIGKILL after a grace
period). Elevated steps (sudo/pkexec) keep the terminal so sudo can ask for a password; sudo relays our
SIGTERM to the command it runs.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from gpusetup import children
from gpusetup.cancel import CancelToken
from gpusetup.credentials import scrub

TAIL_LINES = 40
GRACE_SECONDS = 5.0


@dataclass
class StreamResult:
    argv: list[str]
    returncode: int | None
    tail: list[str] = field(default_factory=list)
    timed_out: bool = False
    cancelled: bool = False
    error: str | None = None  # could not start
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.cancelled or self.error)


def run_streaming(
    argv: Sequence[str],
    *,
    timeout: float,
    cancel: CancelToken | None = None,
    on_line: Callable[[str], None] | None = None,
    log: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
    own_session: bool = True,
    private: Callable[[str], str | None] | None = None,
) -> StreamResult:
    """Run ``argv``; each output line goes to ``log``, the tail and ``on_line``. ``private`` sees each line first
    and returns what may be kept of it (the line, a masked copy, or None): the log and the tail (which reaches
    the journal and error messages) get only that; ``on_line`` still gets the line itself (a one-time password
    the installer prints for the screen, never for a file)."""
    argv = [str(a) for a in argv]
    start = time.monotonic()
    exe = argv[0] if os.sep in argv[0] or (os.altsep and os.altsep in argv[0]) else shutil.which(argv[0])
    if exe is None:
        return StreamResult(argv, None, error=f"{argv[0]} was not found on this system (PATH)")
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    kwargs: dict = {}
    if os.name == "posix":
        kwargs["start_new_session"] = own_session
    else:
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]], stdin=subprocess.DEVNULL if own_session else None, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=full_env, text=True, encoding="utf-8", errors="replace", bufsize=1,
            **kwargs, **children.popen_kwargs(),  # pip dies with gpusetup, even after kill -9
        )
        children.adopt(proc)
    except OSError as exc:
        return StreamResult(argv, None, error=f"could not start {argv[0]}: {exc}")
    lines: queue.Queue[str | None] = queue.Queue()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    timed_out = cancelled = False
    eof = False
    deadline = start + timeout
    while not eof:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            line = ""
        if line is None:
            eof = True
        elif line:
            line = scrub(line)  # a tool that echoes a URL with its password never gets it into our log
            kept = line if private is None else private(line)
            if kept is not None:
                tail.append(kept.rstrip("\n"))
                if log is not None:
                    log.write(kept)
                    log.flush()
            if on_line is not None:
                on_line(line)
        if not eof and cancel is not None and cancel.cancelled:
            cancelled = True
            _stop(proc, own_session)
            break
        if not eof and time.monotonic() > deadline:
            timed_out = True
            _stop(proc, own_session)
            break
    if not eof:  # drain what the stopped process still printed
        t.join(timeout=2)
        while True:
            try:
                line = lines.get_nowait()
            except queue.Empty:
                break
            if line:
                line = scrub(line)
                kept = line if private is None else private(line)
                if kept is None:
                    continue
                tail.append(kept.rstrip("\n"))
                if log is not None:
                    log.write(kept)
    try:
        rc = proc.wait(timeout=GRACE_SECONDS + 2)
    except subprocess.TimeoutExpired:
        rc = None
    return StreamResult(argv, rc, list(tail), timed_out=timed_out, cancelled=cancelled,
                        duration_s=time.monotonic() - start)


def _stop(proc: subprocess.Popen[str], group: bool) -> None:
    """SIGTERM the step (its whole process group when it has one), SIGKILL if it ignores that."""
    def send(sig: int) -> None:
        try:
            if os.name == "posix" and group:
                os.killpg(proc.pid, sig)
            elif os.name == "posix":
                proc.send_signal(sig)
            elif sig == signal.SIGTERM:
                proc.send_signal(signal.CTRL_BREAK_EVENT)  # type: ignore[attr-defined]
            else:
                proc.kill()
        except (ProcessLookupError, PermissionError, OSError):
            pass

    send(signal.SIGTERM)
    try:
        proc.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
