"""Run one install step with its output streamed line by line (to the log and the progress parser).

``gpusetup.runner`` captures output only at the end, which is right for probes but not for a 3 GB
download; this is the install-only streaming counterpart with the same rules: argv lists only, a wall-clock
deadline for the whole step, and a clean stop of the whole process tree on cancel, timeout, Ctrl-C or a
SIGTERM/SIGHUP of gpusetup (SIGTERM, then SIGKILL after a grace period; :mod:`gpusetup.children` also finds
what is left after a ``kill -9`` at the next start). Elevated steps (sudo/pkexec) keep the terminal so sudo
can ask for a password; sudo relays our SIGTERM to the command it runs.

Bounds (issue 25: a 300 MB line from pip went whole into memory, the journal and the terminal): the output is
read in pieces and split into lines of at most ``max_line`` bytes (:class:`gpusetup.runner.LineSplitter`), so
no line — in memory, in the log, on the screen or in the journal's tail — is longer; the log file gets at most
``max_log`` bytes of one step, then its last ``LOG_TAIL`` bytes after a line saying how much was left out.
"""

from __future__ import annotations

import os
import queue
import shutil
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
from gpusetup.runner import LineSplitter

TAIL_LINES = 40
GRACE_SECONDS = 5.0
MAX_LINE = 64 * 1024  # one line of a step's output: longer ones keep their start and say what was left out
MAX_LOG = 64 * 1024 * 1024  # one step's output in install.log; then only its last LOG_TAIL bytes
LOG_TAIL = 1024 * 1024
_QUEUE = 1024  # lines waiting for the consumer; a slower consumer slows the reader, never grows memory


@dataclass
class StreamResult:
    argv: list[str]
    returncode: int | None
    tail: list[str] = field(default_factory=list)
    timed_out: bool = False
    cancelled: bool = False
    error: str | None = None  # could not start
    duration_s: float = 0.0
    cut_bytes: int = 0  # output left out: parts of over-long lines, and the middle of a log over MAX_LOG

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.cancelled or self.error)


class _Log:
    """Writes a step's lines to the install log, at most ``limit`` bytes, then keeps only the last LOG_TAIL."""

    def __init__(self, fh: IO[str] | None, limit: int) -> None:
        self.fh = fh
        self.limit = limit
        self.written = 0
        self.held: deque[str] = deque()
        self.held_bytes = 0
        self.dropped_lines = 0
        self.dropped_bytes = 0

    def write(self, line: str) -> None:
        if self.fh is None:
            return
        size = len(line.encode("utf-8", errors="replace"))
        if self.written + size <= self.limit:
            self.fh.write(line)
            self.fh.flush()
            self.written += size
            return
        self.held.append(line)
        self.held_bytes += size
        while self.held_bytes > LOG_TAIL and len(self.held) > 1:
            old = self.held.popleft()
            n = len(old.encode("utf-8", errors="replace"))
            self.held_bytes -= n
            self.dropped_lines += 1
            self.dropped_bytes += n

    def close(self) -> None:
        if self.fh is None or not self.held:
            return
        if self.dropped_lines:
            self.fh.write(f"…[gpusetup: {self.dropped_lines} lines ({self.dropped_bytes} bytes) of this step's output "
                          f"left out here; the log keeps the first {self.written} and the last {self.held_bytes} "
                          "bytes]…\n")
        self.fh.writelines(self.held)
        self.fh.flush()
        self.held.clear()


def run_streaming(
    argv: Sequence[str],
    *,
    timeout: float,
    cancel: CancelToken | None = None,
    on_line: Callable[[str], None] | None = None,
    log: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
    own_session: bool = True,
    max_line: int = MAX_LINE,
    max_log: int = MAX_LOG,
    private: Callable[[str], str | None] | None = None,
) -> StreamResult:
    argv = [str(a) for a in argv]
    start = time.monotonic()
    exe = argv[0] if os.sep in argv[0] or (os.altsep and os.altsep in argv[0]) else shutil.which(argv[0])
    if exe is None:
        return StreamResult(argv, None, error=f"{argv[0]} was not found on this system (PATH)")
    full_env, token = children.child_env()  # marked: a build backend pip starts is recognised as this step's
    if env:
        full_env.update(env)
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    kwargs: dict = {}
    if os.name == "posix":
        kwargs["start_new_session"] = own_session
    else:
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    children.reap_once()  # what an earlier, killed gpusetup left running (a build backend after kill -9)
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]], stdin=subprocess.DEVNULL if own_session else None, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=full_env,
            **kwargs, **children.popen_kwargs(),  # pip dies with gpusetup, even after kill -9
        )
    except OSError as exc:
        return StreamResult(argv, None, error=f"could not start {argv[0]}: {exc}")
    tree = children.track(proc, own_session=own_session, label=os.path.basename(argv[0]), token=token)
    lines: queue.Queue[str | None] = queue.Queue(maxsize=_QUEUE)
    splitter = LineSplitter(max_line)
    stop_reading = threading.Event()

    def put(item: str | None) -> None:
        while not stop_reading.is_set():
            try:
                lines.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def reader() -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                for raw in splitter.feed(chunk):
                    put(raw.decode("utf-8", errors="replace"))
            for raw in splitter.close():
                put(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            pass
        finally:
            put(None)

    t = threading.Thread(target=reader, daemon=True, name="gpusetup-stream-read")
    t.start()
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    out = _Log(log, max_log)
    timed_out = cancelled = False
    eof = False
    deadline = start + timeout

    def take(line: str) -> None:
        line = scrub(line)  # a tool that echoes a URL with its password never gets it into our log
        # ``private``: what a line may leave behind in the tail and the log (None: nothing, a one-time Secure Boot
        # password); the caller still sees the line itself, to show it on screen
        kept = line if private is None else private(line)
        if kept is not None:
            tail.append(kept.rstrip("\n"))
            out.write(kept)
        if on_line is not None:
            on_line(line)

    try:
        while not eof:
            try:
                line = lines.get(timeout=0.1)
            except queue.Empty:
                line = ""
            if line is None:
                eof = True
            elif line:
                take(line)
            tree.refresh()  # new descendants remembered; the record written for the next start after a kill -9
            if not eof and cancel is not None and cancel.cancelled:
                cancelled = True
                tree.stop(GRACE_SECONDS)
                break
            if not eof and time.monotonic() > deadline:
                timed_out = True
                tree.stop(GRACE_SECONDS)
                break
        if not eof:  # drain what the stopped process still printed
            t.join(timeout=2)
            while True:
                try:
                    line = lines.get_nowait()
                except queue.Empty:
                    break
                if line:
                    take(line)
        try:
            rc = proc.wait(timeout=GRACE_SECONDS + 2)
        except subprocess.TimeoutExpired:
            rc = None
    except BaseException:  # Ctrl-C (a second one aborts the install), SystemExit: the step's tree goes first
        tree.stop(1.0)
        raise
    finally:
        stop_reading.set()
        out.close()
        tree.close()
    return StreamResult(argv, rc, list(tail), timed_out=timed_out, cancelled=cancelled,
                        duration_s=time.monotonic() - start,
                        cut_bytes=splitter.cut + out.dropped_bytes)
