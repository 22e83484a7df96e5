"""How long the self-test takes on this computer: measured, not guessed.

Every run's duration is kept (the last few per mode and set of frameworks checked) in a small file in the
state folder; the next run is announced with what was measured here ("about 4 s here last time"). Before the
first run there is no measurement, so the announcement says what bounds it instead: the tiers themselves take
seconds, and a framework check may take up to its enforced timeout (``Sizes.framework_timeout``) — a cold
``import torch`` from a slow disk can take most of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpusetup.messages import msg
from gpusetup.model import Message, SelfTestResult
from gpusetup.selftest.base import Sizes

FILE = "selftest-times.json"
KEEP = 5  # runs kept per key


def _key(mode: str, frameworks: Sequence[str]) -> str:
    return f"{mode}|{','.join(sorted(frameworks))}"


def _read(folder: Path) -> dict[str, list[float]]:
    try:
        data: Any = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [float(x) for x in v if isinstance(x, (int, float)) and x >= 0]
            for k, v in data.items() if isinstance(v, list)}


def record(folder: Path, result: SelfTestResult, frameworks: Sequence[str]) -> None:
    """Keep this run's duration (not for a stopped run: it ended early). The file is private (0600)."""
    if result.cancelled or not result.duration_s:
        return
    data = _read(folder)
    key = _key(result.mode, frameworks)
    data[key] = (data.get(key, []) + [round(float(result.duration_s), 2)])[-KEEP:]
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = folder / (FILE + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        tmp.replace(folder / FILE)


def measured(folder: Path, mode: str, frameworks: Sequence[str]) -> float | None:
    """The median of the durations measured here for this mode and these frameworks (None: never run)."""
    runs = _read(folder).get(_key(mode, frameworks))
    return statistics.median(runs) if runs else None


def estimate(folder: Path, mode: str, frameworks: Sequence[str]) -> Message:
    """What to announce before a run: the measured time, else the bound the framework check's timeout sets."""
    seconds = measured(folder, mode, frameworks)
    if seconds is not None:
        return msg("selftest.estimate.measured", seconds=max(1, round(seconds)))
    if frameworks:
        return msg("selftest.estimate.first-framework", timeout=round(Sizes.for_mode(mode).framework_timeout))
    return msg("selftest.estimate.first")
