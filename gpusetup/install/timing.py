"""How long each install step takes on this computer: measured here, never guessed.

Every finished step's duration is kept (the last few per kind of step) in a small private file in the install
state folder, together with the download speed pip showed (bytes over seconds while it downloaded). Before a
step starts it is announced with an estimate: for a step that downloads, the download size the plan knows
(exact from the index, or the table's estimate) divided by the speed measured here, plus the time the same kind
of step spent unpacking before; for any other step, what the same kind of step took here before. Without a
measurement there is no estimate (nothing is shown rather than a made-up figure). While a step runs, the time
left is the estimate less the time spent, or, while pip downloads, the bytes still to come over the speed now.
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from gpusetup.install.progress import duration  # one wording of durations
from gpusetup.messages import msg
from gpusetup.model import Message, Step
from gpusetup.paths import write_private

FILE = "install-times.json"
KEEP = 5  # measurements kept per key
MIN_SPEED_BYTES = 256 * 1024  # a download shorter than this says little about the line's speed


def step_key(step: Step) -> str:
    """Steps of the same kind share their history: ``pip-install-2`` is a ``pip-install``; a check of the
    files is a check of the files whatever the plan installs."""
    return re.sub(r"-\d+$", "", step.id) or step.kind


def _read(folder: Path) -> dict[str, Any]:
    try:
        data: Any = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _numbers(values: Any) -> list[float]:
    return [float(x) for x in values if isinstance(x, (int, float)) and x >= 0] if isinstance(values, list) else []


class Times:
    """The measurements of one state folder: read once, added to as steps finish, written after each."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        data = _read(folder) if folder is not None else {}
        steps = data.get("steps") if isinstance(data.get("steps"), dict) else {}
        unpack = data.get("unpack") if isinstance(data.get("unpack"), dict) else {}
        self.steps: dict[str, list[float]] = {str(k): _numbers(v) for k, v in (steps or {}).items()}
        self.unpack: dict[str, list[float]] = {str(k): _numbers(v) for k, v in (unpack or {}).items()}
        self.speeds: list[float] = _numbers(data.get("speed"))
        self.live_speed: float | None = None  # measured during this run (the pip update's download, say)

    # ------------------------------------------------------------------------------------- reading

    def speed(self) -> float | None:
        """Bytes per second: this run's measurement first, else the median of those kept here."""
        if self.live_speed:
            return self.live_speed
        return statistics.median(self.speeds) if self.speeds else None

    def seconds(self, step: Step, download_bytes: int = 0) -> float | None:
        """The estimate for ``step`` before it starts (None: nothing was measured that says it)."""
        key = step_key(step)
        speed = self.speed()
        if download_bytes > 0 and speed:
            unpack = self.unpack.get(key)
            return download_bytes / speed + (statistics.median(unpack) if unpack else 0.0)
        runs = self.steps.get(key)
        return statistics.median(runs) if runs else None

    # ------------------------------------------------------------------------------------- writing

    def record(self, step: Step, seconds: float, downloaded: int = 0, download_seconds: float = 0.0) -> None:
        """Keep a finished step's duration (and the download speed it showed), then save."""
        key = step_key(step)
        self.steps[key] = (self.steps.get(key, []) + [round(seconds, 2)])[-KEEP:]
        if downloaded >= MIN_SPEED_BYTES and download_seconds > 0.2:
            speed = downloaded / download_seconds
            self.live_speed = speed
            self.speeds = (self.speeds + [round(speed)])[-KEEP:]
            self.unpack[key] = (self.unpack.get(key, []) + [round(max(0.0, seconds - download_seconds), 2)])[-KEEP:]
        self.save()

    def save(self) -> None:
        if self.folder is None:
            return
        data = {"steps": self.steps, "unpack": self.unpack, "speed": self.speeds}
        with contextlib.suppress(OSError):
            write_private(self.folder / FILE, json.dumps(data, sort_keys=True))


def about(seconds: float) -> Message:
    """"about 3 min" as a message (the duration words of :func:`gpusetup.install.progress.duration`)."""
    return msg("install.time.about", time=duration(seconds))


class StepClock:
    """The time left in one running step: the estimate less the time spent, or, while pip downloads, what is
    still to come over the speed pip shows now (plus the unpacking measured before)."""

    def __init__(self, estimate: float | None, download_bytes: int = 0, unpack: float = 0.0,
                 clock: Any = time.monotonic) -> None:
        self.estimate = estimate
        self.download_bytes = download_bytes
        self.unpack = unpack
        self._clock = clock
        self.t0 = clock()

    def elapsed(self) -> float:
        return self._clock() - self.t0

    def left(self, downloaded: int = 0, speed: float | None = None) -> float | None:
        """Seconds left (None: unknown; 0 or less is said as "longer than before" by the caller)."""
        if self.download_bytes and downloaded and speed:
            return max(0.0, self.download_bytes - downloaded) / speed + self.unpack
        if self.estimate is None:
            return None
        return self.estimate - self.elapsed()
