"""A runner that replays recorded outputs instead of running commands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.model import CommandRecord
from gpusetup.runner import DEFAULT_TIMEOUT, CommandResult


@dataclass
class Reply:
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = 0
    timed_out: bool = False
    error: str | None = None

    @classmethod
    def from_file(cls, path: str | Path, returncode: int = 0) -> Reply:
        return cls(stdout=Path(path).read_text(encoding="utf-8", errors="replace"), returncode=returncode)

    @classmethod
    def hung(cls, timeout: float = DEFAULT_TIMEOUT) -> Reply:
        return cls(returncode=None, timed_out=True, error=f"timed out after {timeout:g} s (stopped)")


@dataclass
class FakeRunner:
    """Maps an argv prefix (tuple of words) to a :class:`Reply`; unknown commands are "not found".

    The longest matching prefix wins, so ``("nvidia-smi",)`` can be a catch-all while
    ``("nvidia-smi", "-q", "-x")`` answers the XML query.
    """

    replies: dict[tuple[str, ...], Reply] = field(default_factory=dict)
    on_path: set[str] = field(default_factory=set)  # commands `which` finds even without a reply
    calls: list[list[str]] = field(default_factory=list)
    records: list[CommandRecord] = field(default_factory=list)

    def add(self, argv: Sequence[str], reply: Reply) -> FakeRunner:
        self.replies[tuple(argv)] = reply
        return self

    def which(self, name: str) -> str | None:
        if name in self.on_path or any(k and k[0] == name for k in self.replies):
            return f"/usr/bin/{name}"
        return None

    def run(
        self,
        argv: Sequence[str],
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
    ) -> CommandResult:
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        name = argv[0].rsplit("/", 1)[-1]
        words = (name, *argv[1:])
        best = None
        for key in self.replies:
            if words[: len(key)] == key and (best is None or len(key) > len(best)):
                best = key
        if best is None:
            result = CommandResult(argv, None, error=f"{argv[0]} not found")
        else:
            r = self.replies[best]
            result = CommandResult(argv, r.returncode, r.stdout, r.stderr, 1.0, r.timed_out, r.error)
        self.records.append(result.record())
        return result
