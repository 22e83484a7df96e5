"""The one place that runs external commands.

Every command runs from an argument list (never a shell string), with a timeout, and what it printed is
captured and logged. A hung ``nvidia-smi`` (a GPU that fell off the bus does this) is killed with its whole
process group after the timeout and reported as ``timed_out``; it never hangs gpusetup.

Probes take a :class:`Runner` so tests can swap in a fake that replays recorded real outputs.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpusetup import children
from gpusetup.credentials import scrub
from gpusetup.model import CommandRecord

log = logging.getLogger("gpusetup.runner")

DEFAULT_TIMEOUT = 10.0
_TAIL = 4000


@dataclass
class CommandResult:
    argv: list[str]
    returncode: int | None  # None when it could not start or timed out
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    timed_out: bool = False
    error: str | None = None  # plain words: "not found", "permission denied", "timed out after 10 s"

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
            stdout_tail=self.stdout[-_TAIL:],
            stderr_tail=self.stderr[-_TAIL:],
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

    def __init__(self, extra_path: Sequence[str] = ()) -> None:
        self.records: list[CommandRecord] = []
        self._extra_path = list(extra_path)

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
        full_env = None
        if env is not None:
            full_env = dict(os.environ)
            full_env.update(env)
        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]],
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full_env,
                start_new_session=os.name == "posix",
                text=True,
                encoding="utf-8",
                errors="replace",
                **children.popen_kwargs(),  # dies with us (Linux PR_SET_PDEATHSIG)
            )
            children.adopt(proc)  # Windows: our kill-on-close Job object
        except PermissionError:
            return self._finish(CommandResult(argv, None, error=f"permission denied running {argv[0]}"), start)
        except OSError as exc:
            return self._finish(CommandResult(argv, None, error=f"could not start {argv[0]}: {exc}"), start)
        try:
            out, err = proc.communicate(input=input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            out, err = _drain(proc)
            result = CommandResult(
                argv, None, out, err, timed_out=True, error=f"timed out after {timeout:g} s (stopped)"
            )
            return self._finish(result, start)
        except BaseException:  # Ctrl-C: the child is in its own session, so stop it here or it outlives us
            _kill_tree(proc)
            raise
        return self._finish(CommandResult(argv, proc.returncode, out, err), start)

    def _finish(self, result: CommandResult, start: float) -> CommandResult:
        result.duration_ms = (time.perf_counter() - start) * 1000
        self.records.append(result.record())
        if log.isEnabledFor(logging.DEBUG):
            log.debug(scrub(
                f"ran {result.argv} -> rc={result.returncode} in {result.duration_ms:.0f} ms"
                f"{f' ({result.error})' if result.error else ''}\nstdout: {result.stdout[-2000:]}\n"
                f"stderr: {result.stderr[-2000:]}"))
        return result


def _kill_tree(proc: subprocess.Popen[str]) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=2)
        return out or "", err or ""
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return "", ""
