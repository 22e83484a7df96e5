"""The demo machines do not depend on interpreters this computer happens to have (issue 16: the no-gpu demo's
Python 3.9.16 wanted a python3.9 on PATH, which a fresh Debian lacks)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpusetup.gui.demo import DemoServices, demo_kinds, demo_machine
from gpusetup.gui.services import Target


@pytest.mark.parametrize("kind", demo_kinds())
def test_demo_plan_needs_no_matching_python_here(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which",  # the planner looks interpreters up through shutil.which
                        lambda name, *a, **k: None if name.startswith("python3.") else real_which(name, *a, **k))
    services = DemoServices(kind, state_dir=tmp_path / "state", step_delay=0)
    machine = demo_machine(kind)
    fplans = services.resolve(machine, ["pytorch"])
    plan = services.build_plan(fplans, machine, Target("venv", str(tmp_path / "env")))
    venv = next((s for s in plan.steps if s.id == "create-venv"), None)
    assert venv is not None
    version = machine.system.python or (machine.python_envs[0].version if machine.python_envs else None)
    if version:  # the recorded machine's own Python, by name
        assert venv.argv[0] == "python" + ".".join(str(v) for v in version.release[:2])
