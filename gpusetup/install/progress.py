"""pip's output → a fraction and a short label for the progress bar.

pip ≥ 24.1 with ``--progress-bar raw`` prints ``Progress <done> of <total>`` per download (the plan updates an
older pip in a new environment first); older pips and uv only print phase lines (Collecting / Downloading /
Installing), which still give a useful label.

The label is said as a message (``message``: a code and its values, words from the catalogue), which the
executor passes on inside its own progress message; each interface words it in its language. ``label`` is
the English text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from gpusetup.messages import msg, render
from gpusetup.model import Message

_RAW = re.compile(r"^Progress (\d+) of (\d+)\s*$")
_DOWNLOADING = re.compile(r"^\s*Downloading (\S+?)(?: \(([\d.]+ [kMG]?B)\))?\s*$")
_COLLECTING = re.compile(r"^\s*Collecting (\S+)")
_INSTALLING = re.compile(r"^\s*Installing collected packages: (.*)$")
_SUCCESS = re.compile(r"^\s*Successfully (installed|downloaded) (.*)$")
MB = 1_000_000


def _short(name: str) -> str:
    name = name.rsplit("/", 1)[-1]
    return name if len(name) <= 60 else name[:57] + "..."


def duration(seconds: float) -> Message:
    """"13 s" / "4 min" / "1.5 h" as a message."""
    if seconds < 90:
        return msg("duration.seconds", n=max(1, round(seconds)))
    if seconds < 90 * 60:
        return msg("duration.minutes", n=round(seconds / 60))
    return msg("duration.hours", n=f"{seconds / 3600:.1f}")


class PipProgress:
    """Feed it pip's lines; read ``label``/``message`` and ``fraction`` (0..1 within the current pip step, or None)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.message: Message = msg("pip.progress.starting")
        self.fraction: float | None = None
        self._file: str | None = None
        self._clock = clock
        self._start: tuple[float, int] | None = None  # (time, bytes) at the first progress line of a download
        # over the whole step (every file): bytes pip reported and the seconds spent downloading them, for the
        # step's time left and the speed kept for the next estimate (gpusetup.install.timing)
        self._finished_bytes = 0
        self._finished_seconds = 0.0
        self._current = (0, 0.0)  # (bytes, seconds) of the download in progress

    @property
    def downloaded(self) -> int:
        """Bytes downloaded so far in this step (all files)."""
        return self._finished_bytes + self._current[0]

    @property
    def download_seconds(self) -> float:
        """Seconds spent downloading so far in this step (from each file's first progress line to its last)."""
        return self._finished_seconds + self._current[1]

    def speed(self) -> float | None:
        """Bytes per second over this step's downloads so far (None until a second of them was measured)."""
        secs = self.download_seconds
        return self.downloaded / secs if secs >= 1.0 and self.downloaded else None

    def _next_file(self) -> None:
        self._finished_bytes += self._current[0]
        self._finished_seconds += self._current[1]
        self._current = (0, 0.0)

    @property
    def label(self) -> str:
        """The English words of :attr:`message`."""
        return render(self.message)

    def feed(self, line: str) -> bool:
        """True when the label or fraction changed (worth telling the UI)."""
        line = line.rstrip("\r\n")
        m = _RAW.match(line)
        if m:
            done, total = int(m.group(1)), int(m.group(2))
            if total > 0:
                pct = done / total
                self.fraction = min(0.9, 0.9 * pct)  # downloading is most of the time; installing the rest
                self.message = self._bytes(self._file or "package", round(pct * 100), done, total)
                return True
            return False
        m = _DOWNLOADING.match(line)
        if m:
            self._next_file()
            self._file = _short(m.group(1))
            self._start = None
            self.message = (msg("pip.progress.downloading-size", file=self._file, size=m.group(2)) if m.group(2)
                            else msg("pip.progress.downloading", file=self._file))
            return True
        m = _COLLECTING.match(line)
        if m:
            self.message = msg("pip.progress.collecting", what=m.group(1))
            return True
        m = _INSTALLING.match(line)
        if m:
            self.message = msg("pip.progress.installing", what=m.group(1).strip())
            self.fraction = 0.92
            return True
        m = _SUCCESS.match(line)
        if m:
            self.message = msg("pip.progress.installed" if m.group(1) == "installed" else "pip.progress.downloaded",
                               what=m.group(2).strip())
            self.fraction = 1.0
            return True
        return False

    def _bytes(self, file: str, percent: int, done: int, total: int) -> Message:
        """"… 40% (120 of 260 MB, 12.3 MB/s, about 11 s left)" from the bytes pip reports and the clock."""
        now = self._clock()
        if self._start is None or done < self._start[1]:
            self._start = (now, done)
        sizes: dict[str, Any] = {"file": file, "percent": percent, "done": f"{done / MB:.0f}", "total": f"{total / MB:.0f}"}
        elapsed = now - self._start[0]
        self._current = (done, elapsed)
        if elapsed >= 1.0 and done > self._start[1]:
            speed = (done - self._start[1]) / elapsed
            return msg("pip.progress.bytes-rate", **sizes, speed=f"{speed / MB:.1f}", left=duration((total - done) / speed))
        return msg("pip.progress.bytes", **sizes)
