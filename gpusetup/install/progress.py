"""pip's output → a fraction and a short label for the progress bar.

pip ≥ 24.1 with ``--progress-bar raw`` prints ``Progress <done> of <total>`` per download; older pips and
uv only print phase lines (Collecting / Downloading / Installing), which still give a useful label.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

_RAW = re.compile(r"^Progress (\d+) of (\d+)\s*$")
_DOWNLOADING = re.compile(r"^\s*Downloading (\S+?)(?: \(([\d.]+ [kMG]?B)\))?\s*$")
_COLLECTING = re.compile(r"^\s*Collecting (\S+)")
_INSTALLING = re.compile(r"^\s*Installing collected packages: (.*)$")
_SUCCESS = re.compile(r"^\s*Successfully (installed|downloaded) (.*)$")


def _short(name: str) -> str:
    name = name.rsplit("/", 1)[-1]
    return name if len(name) <= 60 else name[:57] + "..."


class PipProgress:
    """Feed it pip's lines; read ``label`` and ``fraction`` (0..1 within the current pip step, or None)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = "Starting pip"
        self.fraction: float | None = None
        self._file: str | None = None
        self._clock = clock
        self._start: tuple[float, int] | None = None  # (time, bytes) at the first progress line of a download

    def feed(self, line: str) -> bool:
        """True when the label or fraction changed (worth telling the UI)."""
        line = line.rstrip("\r\n")
        m = _RAW.match(line)
        if m:
            done, total = int(m.group(1)), int(m.group(2))
            if total > 0:
                pct = done / total
                self.fraction = min(0.9, 0.9 * pct)  # downloading is most of the time; installing the rest
                self.label = f"Downloading {self._file or 'package'} {pct:.0%}" + self._rate(done, total)
                return True
            return False
        m = _DOWNLOADING.match(line)
        if m:
            self._file = _short(m.group(1))
            self._start = None
            size = f" ({m.group(2)})" if m.group(2) else ""
            self.label = f"Downloading {self._file}{size}"
            return True
        m = _COLLECTING.match(line)
        if m:
            self.label = f"Collecting {m.group(1)}"
            return True
        m = _INSTALLING.match(line)
        if m:
            self.label = f"Installing {m.group(1).strip()}"
            self.fraction = 0.92
            return True
        m = _SUCCESS.match(line)
        if m:
            self.label = f"Successfully {m.group(1)} {m.group(2).strip()}"
            self.fraction = 1.0
            return True
        return False

    def _rate(self, done: int, total: int) -> str:
        """" (120 of 260 MB, 12.3 MB/s, about 11 s left)" from the bytes pip reports and the clock."""
        now = self._clock()
        if self._start is None or done < self._start[1]:
            self._start = (now, done)
        mb = 1_000_000
        text = f" ({done / mb:.0f} of {total / mb:.0f} MB"
        elapsed = now - self._start[0]
        if elapsed >= 1.0 and done > self._start[1]:
            speed = (done - self._start[1]) / elapsed
            left = (total - done) / speed
            text += f", {speed / mb:.1f} MB/s, about {_duration(left)} left"
        return text + ")"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
