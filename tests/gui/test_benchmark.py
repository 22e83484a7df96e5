"""The responsiveness benchmark runs and the UI thread is never blocked for long (regression guard)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_event_loop_stall_stays_small(qapp) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gui_responsiveness as bench
    finally:
        sys.path.pop(0)
    # The benchmark's own limit is 100 ms (see `python benchmarks/gui_responsiveness.py`, the strict figure);
    # this guard is looser because CI machines run other jobs at the same time. A blocking call on the UI
    # thread (a core call outside a worker) shows up as whole seconds, in every run; a busy machine's
    # scheduler hiccup does not repeat. So: up to three runs, the best one must be under the guard
    # (a loaded 2-core machine measured 390 ms once, then under 100 ms).
    runs = []
    for _ in range(3):
        res = bench.measure(scale=0.3)
        for phase in ("detection", "resolve", "plan", "install", "selftest"):
            assert res[phase]["ticks"] > 0, phase
        runs.append(res["max_stall_ms"])
        if res["max_stall_ms"] < 250:
            break
    assert min(runs) < 250, runs
