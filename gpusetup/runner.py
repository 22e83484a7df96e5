"""The one place that runs external commands.

Every command runs from an argument list (never a shell string), with a wall-clock deadline for the whole
command, and what it printed is captured and logged. A hung ``nvidia-smi`` (a GPU that fell off the bus does
this) is killed with its whole process tree after the timeout and reported as ``timed_out``; it never hangs
gpusetup.

Output is read incrementally and bounded (:class:`Capture`): at most ``max_output`` bytes of each stream are
kept — the first quarter and the last three quarters, with a line in between that says how much was left
out — and no line is kept longer than ``max_line`` bytes. A chatty ``nvidia-smi`` printing without end costs
a few megabytes of memory and its timeout, never gigabytes (issue 25: 100 MB of output used 337 MB, an
endless one 15 GB and 49 s against an 8 s timeout, when everything was kept with ``communicate()``).

Probes take a :class:`Runner` so tests can swap in a fake that replays recorded real outputs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpusetup import children
from gpusetup.credentials import scrub
from gpusetup.model import CommandRecord

log = logging.getLogger("gpusetup.runner")

DEFAULT_TIMEOUT = 10.0
MAX_OUTPUT = 8 * 1024 * 1024  # bytes kept of each stream (stdout, stderr) of one command: head and tail
MAX_LINE = 64 * 1024  # bytes kept of one line; the rest of the line is counted and left out
_READ = 64 * 1024
AFTER_EXIT_S = 2.0  # after the child ended, how long its pipes may stay open (held by something it started)
_TAIL = 4000


class Capture:
    """One output stream, fed in pieces as it arrives, kept within bounds.

    * a line longer than ``max_line`` bytes keeps its first ``max_line`` bytes and ends with
      ``…[N bytes of this line left out]``;
    * of everything, the first ``max_bytes // 4`` bytes and the last ``max_bytes * 3 // 4`` are kept, with one
      line between them saying how many bytes were left out (whole lines: the cut is moved to a line break).

    ``total`` counts every byte that arrived, ``cut`` those not kept (over-long lines and the middle).
    """

    def __init__(self, max_bytes: int = MAX_OUTPUT, max_line: int = MAX_LINE) -> None:
        self.max_line = max(256, max_line)
        self.head_limit = max(1024, max_bytes // 4)
        self.tail_limit = max(1024, max_bytes - self.head_limit)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.middle = 0  # bytes dropped between head and tail
        self.total = 0
        self.line_cut = 0  # bytes dropped from over-long lines
        self._line_len = 0  # bytes of the current (unfinished) line kept so far
        self._line_dropped = 0  # bytes of the current line left out so far
        self._lock = threading.Lock()  # a reader thread may still feed while the result is taken (a stuck pipe)

    @property
    def cut(self) -> int:
        return self.middle + self.line_cut

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        with self._lock:
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._line_len + len(chunk) <= self.max_line and not self._line_dropped:
            last = chunk.rfind(b"\n")
            self._line_len = len(chunk) - last - 1 if last >= 0 else self._line_len + len(chunk)
            self._keep(chunk)
            return
        pos = 0
        n = len(chunk)
        while pos < n:
            nl = chunk.find(b"\n", pos)
            end = n if nl < 0 else nl
            room = self.max_line - self._line_len
            seg = end - pos
            if seg <= room:
                if seg:
                    self._keep(chunk[pos:end])
                self._line_len += seg
            else:
                if room > 0:
                    self._keep(chunk[pos:pos + room])
                self._line_len += max(0, room)
                self._line_dropped += seg - max(0, room)
                self.line_cut += seg - max(0, room)
            if nl < 0:
                break
            if self._line_dropped:
                self._keep(f" …[{self._line_dropped} bytes of this line left out]".encode())
            self._keep(b"\n")
            self._line_len = 0
            self._line_dropped = 0
            pos = nl + 1

    def _keep(self, data: bytes) -> None:
        if len(self.head) < self.head_limit:
            room = self.head_limit - len(self.head)
            self.head += data[:room]
            data = data[room:]
            if not data:
                return
        self.tail.append(bytes(data))
        self.tail_size += len(data)
        while self.tail_size > self.tail_limit:
            first = self.tail[0]
            over = self.tail_size - self.tail_limit
            if len(first) <= over:
                self.tail.popleft()
                self.tail_size -= len(first)
                self.middle += len(first)
            else:
                self.tail[0] = first[over:]
                self.tail_size -= over
                self.middle += over

    def finish(self) -> None:
        """The stream ended: an unfinished over-long last line still says what it lost."""
        with self._lock:
            if self._line_dropped:
                self._keep(f" …[{self._line_dropped} bytes of this line left out]".encode())
                self._line_dropped = 0

    def data(self) -> bytes:
        with self._lock:
            tail = b"".join(self.tail)
            head = bytes(self.head)
            middle = self.middle
        if not middle:
            return head + tail
        cut_head = head.rfind(b"\n")
        if cut_head >= len(head) // 2:  # end the head at a line break (when one is near the end)
            middle += len(head) - cut_head - 1
            head = head[:cut_head + 1]
        first_nl = tail.find(b"\n")
        if 0 <= first_nl < len(tail) // 2:  # and start the tail at one
            middle += first_nl + 1
            tail = tail[first_nl + 1:]
        note = (f"…[gpusetup: {middle} bytes of output left out here; the first {len(head)} and the last "
                f"{len(tail)} bytes are kept]…\n")
        sep = b"" if head.endswith(b"\n") or not head else b"\n"
        return head + sep + note.encode() + tail

    def text(self) -> str:
        return self.data().decode("utf-8", errors="replace")


class LineSplitter:
    """Bytes in pieces → whole lines (``\\n``, ``\\r\\n`` or a lone ``\\r``, as text-mode pipes split them), none
    longer than ``max_line`` bytes: the rest of an over-long line is counted, never held in memory, and the line
    ends with ``…[N bytes of this line left out]``. A 300 MB line from pip costs ``max_line`` bytes."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max(256, max_line)
        self.cut = 0
        self._buf = bytearray()
        self._dropped = 0
        self._cr = False  # the last piece ended with CR: an LF starting the next piece belongs to it

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines: list[bytes] = []
        pos = 0
        n = len(chunk)
        while pos < n:
            nl = chunk.find(b"\n", pos)
            end = n if nl < 0 else nl
            room = self.max_line - len(self._buf)
            if end - pos <= room:
                self._buf += chunk[pos:end]
            else:
                if room > 0:
                    self._buf += chunk[pos:pos + room]
                self._dropped += end - pos - max(0, room)
            if nl < 0:
                break
            lines.append(self._take() + b"\n")
            pos = nl + 1
        return lines

    def _take(self) -> bytes:
        line = bytes(self._buf)
        self._buf.clear()
        if self._dropped:
            self.cut += self._dropped
            line += f" …[{self._dropped} bytes of this line left out]".encode()
            self._dropped = 0
        return line

    def close(self) -> list[bytes]:
        """The stream ended: the unfinished last line, if any."""
        return [self._take()] if self._buf or self._dropped else []


@dataclass
class CommandResult:
    argv: list[str]
    returncode: int | None  # None when it could not start or timed out
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    timed_out: bool = False
    error: str | None = None  # plain words: "not found", "permission denied", "timed out after 10 s"
    cut_bytes: int = 0  # output left out to stay within MAX_OUTPUT / MAX_LINE (the text says where)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.error is None

    def record(self) -> CommandRecord:
        return CommandRecord(
            argv=list(self.argv),
            returncode=self.returncode,
            duration_ms=round(self.duration_ms, 1),
            timed_out=self.timed_out,
            error=self.error,
            stdout_tail=scrub(self.stdout[-_TAIL:]),  # a tool that prints a proxy URL with its password
            stderr_tail=scrub(self.stderr[-_TAIL:]),
        )


class Runner(Protocol):
    """What probes need from a command runner."""

    def run(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
    ) -> CommandResult: ...

    def which(self, name: str) -> str | None: ...


class SubprocessRunner:
    """Runs real commands. Keeps a record of each for the report and the support bundle."""

    def __init__(self, extra_path: Sequence[str] = (), *, max_output: int = MAX_OUTPUT,
                 max_line: int = MAX_LINE) -> None:
        self.records: list[CommandRecord] = []
        self._extra_path = list(extra_path)
        self.max_output = max_output
        self.max_line = max_line

    def which(self, name: str) -> str | None:
        path = os.environ.get("PATH", os.defpath)
        if self._extra_path:
            path = os.pathsep.join([path, *self._extra_path])
        return shutil.which(name, path=path)

    def run(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
    ) -> CommandResult:
        argv = [str(a) for a in argv]
        if not argv:
            raise ValueError("empty command")
        start = time.perf_counter()
        exe = argv[0] if os.sep in argv[0] else self.which(argv[0])
        if exe is None:
            result = CommandResult(argv, None, error=f"{argv[0]} not found")
            return self._finish(result, start)
        full_env, token = children.child_env()  # marked: what it starts is recognised as its tree
        if env is not None:
            full_env.update(env)
        children.reap_once()  # what an earlier, killed gpusetup left running (kill -9): stopped first
        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]],
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full_env,
                start_new_session=os.name == "posix",
                **children.popen_kwargs(),  # dies with us (Linux PR_SET_PDEATHSIG)
            )
        except PermissionError:
            return self._finish(CommandResult(argv, None, error=f"permission denied running {argv[0]}"), start)
        except OSError as exc:
            return self._finish(CommandResult(argv, None, error=f"could not start {argv[0]}: {exc}"), start)
        tree = children.track(proc, own_session=os.name == "posix", label=os.path.basename(argv[0]), token=token)
        out, err = Capture(self.max_output, self.max_line), Capture(self.max_output, self.max_line)
        readers = [_reader(proc.stdout, out), _reader(proc.stderr, err)]
        if input is not None:
            readers.append(_writer(proc.stdin, input.encode("utf-8")))
        deadline = time.monotonic() + timeout
        timed_out = False
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = proc.poll() is None
                    break
                try:
                    proc.wait(timeout=min(remaining, children.RECORD_AFTER_S))
                    break
                except subprocess.TimeoutExpired:
                    tree.maybe_record()  # a long command is written down, for the next start after a kill -9
            # the child ended (or ran out of time): what it printed is read within moments; a grandchild that
            # still holds the pipes open (a daemon it left behind) is not waited for beyond AFTER_EXIT_S
            until = min(deadline, time.monotonic() + AFTER_EXIT_S)
            for t in readers:
                t.join(timeout=max(0.0, until - time.monotonic()))
            if timed_out or any(t.is_alive() for t in readers):
                tree.kill()  # the whole tree: a grandchild that kept the pipe open goes with it
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=2)
                for t in readers:
                    t.join(timeout=2)
        except BaseException:  # Ctrl-C: the child is in its own session, so stop it here or it outlives us
            tree.kill()
            tree.close()
            raise
        tree.close()
        for cap in (out, err):
            cap.finish()
        result = CommandResult(argv, None if timed_out else proc.returncode, out.text(), err.text(),
                               timed_out=timed_out, cut_bytes=out.cut + err.cut,
                               error=f"timed out after {timeout:g} s (stopped)" if timed_out else None)
        return self._finish(result, start)

    def _finish(self, result: CommandResult, start: float) -> CommandResult:
        result.duration_ms = (time.perf_counter() - start) * 1000
        self.records.append(result.record())
        if log.isEnabledFor(logging.DEBUG):
            log.debug(scrub(
                f"ran {result.argv} -> rc={result.returncode} in {result.duration_ms:.0f} ms"
                f"{f' ({result.error})' if result.error else ''}"
                f"{f' [{result.cut_bytes} bytes of output left out]' if result.cut_bytes else ''}\n"
                f"stdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-2000:]}"))
        return result


def _reader(stream: object, cap: Capture) -> threading.Thread:
    """Read ``stream`` into ``cap`` piece by piece until it ends (a thread: Windows has no select on pipes)."""
    fd = stream.fileno()  # type: ignore[attr-defined]

    def run() -> None:
        try:
            while True:
                chunk = os.read(fd, _READ)
                if not chunk:
                    break
                cap.feed(chunk)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                stream.close()  # type: ignore[attr-defined]

    t = threading.Thread(target=run, daemon=True, name="gpusetup-runner-read")
    t.start()
    return t


def _writer(stream: object, data: bytes) -> threading.Thread:
    def run() -> None:
        try:
            stream.write(data)  # type: ignore[attr-defined]
        except (OSError, ValueError):
            pass  # the child did not read all of it (it ended, or closed its stdin)
        finally:
            with contextlib.suppress(OSError, ValueError):
                stream.close()  # type: ignore[attr-defined]

    t = threading.Thread(target=run, daemon=True, name="gpusetup-runner-write")
    t.start()
    return t
