"""Honest progress: a step that prints nothing (creating an environment takes 10 s and more) still shows
its time passing, and the heartbeat stops with the step (never a stale label after it)."""

from __future__ import annotations

import sys
from pathlib import Path

from gpusetup.install import execute
from gpusetup.install.plan import InstallPlan
from gpusetup.model import Step


def test_a_silent_step_shows_its_seconds(tmp_path: Path) -> None:
    plan = InstallPlan(steps=[
        Step(id="quiet", title="Wait quietly", argv=[sys.executable, "-c", "import time; time.sleep(2.6)"]),
        Step(id="next", title="Say hello", argv=[sys.executable, "-c", "print('hello')"]),
    ])
    seen: list[tuple[str, float | None]] = []
    res = execute(plan, journal_dir=tmp_path / "state", progress=lambda label, f: seen.append((label, f)),
                  check_network=False)
    assert res.ok, res.message
    beats = [label for label, _ in seen if label.startswith("Step 1 of 2: Wait quietly — ")]
    assert beats[:2] == ["Step 1 of 2: Wait quietly — 1 s", "Step 1 of 2: Wait quietly — 2 s"], seen
    after = [label for label, _ in seen[seen.index(("Step 2 of 2: Say hello", 0.5)):]]
    assert not any("Wait quietly" in label for label in after), "no heartbeat after its step ended"
    fracs = [f for _, f in seen if f is not None]
    assert fracs == sorted(fracs)
