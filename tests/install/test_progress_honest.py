"""Honest progress: a step that prints nothing (creating an environment takes 10 s and more) still shows
its time passing, and the heartbeat stops with the step (never a stale label after it)."""

from __future__ import annotations

import sys
from pathlib import Path

from gpusetup.install import execute
from gpusetup.install.plan import InstallPlan
from gpusetup.messages import render
from gpusetup.model import Step


def test_a_silent_step_shows_its_seconds(tmp_path: Path) -> None:
    plan = InstallPlan(steps=[
        Step(id="quiet", title="Wait quietly", argv=[sys.executable, "-c", "import time; time.sleep(2.6)"]),
        Step(id="next", title="Say hello", argv=[sys.executable, "-c", "print('hello')"]),
    ])
    seen: list[tuple[str, float | None]] = []
    res = execute(plan, journal_dir=tmp_path / "state", progress=lambda said, f: seen.append((render(said), f)),
                  check_network=False)
    assert res.ok, res.message
    beats = [label for label, _ in seen if label.startswith("Step 1 of 2: Wait quietly — ")]
    assert beats[:2] == ["Step 1 of 2: Wait quietly — 1 s", "Step 1 of 2: Wait quietly — 2 s"], seen
    after = [label for label, _ in seen[seen.index(("Step 2 of 2: Say hello", 0.5)):]]
    assert not any("Wait quietly" in label for label in after), "no heartbeat after its step ended"
    fracs = [f for _, f in seen if f is not None]
    assert fracs == sorted(fracs)


def test_a_new_environment_with_an_old_pip_shows_bytes_speed_and_time_left(index, tmp_path: Path) -> None:
    """Real pip into a new venv from the local index: a new venv made by this Python gets its ensurepip's pip
    (Debian 12: 23.0.1, which prints only phase lines). The plan updates it first, from the PyPI mirror (here
    the local index, which serves this test environment's own pip as a wheel), so the framework's download
    (slowpkg: 3 MB served in slow chunks) reports bytes, speed and time left."""
    import ensurepip

    from gpusetup.install import build_plan
    from gpusetup.versions import Version

    from .stand_ins import PLENTY, installed, machine, torch_plan

    plan = build_plan(torch_plan(f"{index.url}/whl/cu126", ["torch==2.9.1+cu126", "slowpkg==1.0"]), machine(),
                      f"venv:{tmp_path / 'env'}", index_url=f"{index.url}/simple")
    old = Version.parse(ensurepip.version()) < (24, 1)
    ids = [s.id for s in plan.steps]
    assert ids[:3] == (["create-venv", "upgrade-pip", "pip-install"] if old else ["create-venv", "pip-install", "verify"])
    pip_step = next(s for s in plan.steps if s.id == "pip-install")
    assert "--progress-bar" in pip_step.argv
    seen: list[tuple[str, float | None]] = []
    res = execute(plan, journal_dir=tmp_path / "state", progress=lambda said, f: seen.append((render(said), f)),
                  free_space=PLENTY)
    assert res.ok, res.message
    got = installed(tmp_path / "env")
    assert Version.parse(got["pip"]) >= (24, 1) and got["slowpkg"] == "1.0"
    n = len(plan.steps)
    if old:
        up = [label for label, _ in seen if label.startswith(f"Step 2 of {n}: Update pip in the new environment")]
        assert any("Collecting pip>=24.1" in label for label in up), up
        assert any(f"Successfully installed pip-{got['pip']}" in label for label in up), up
    dl = [label for label, _ in seen if label.startswith(f"Step {ids.index('pip-install') + 1} of {n}: Install ")
          and "Downloading slowpkg" in label]
    with_rate = [label for label in dl if "MB/s, about " in label and " left)" in label]
    assert with_rate, dl  # "… Downloading slowpkg-1.0-py3-none-any.whl 40% (1 of 3 MB, 0.3 MB/s, about 6 s left)"
    assert any(" of 3 MB" in label for label in with_rate), with_rate
    fracs = [f for _, f in seen if f is not None]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
