"""Every install step's title and explanation, and every executor outcome, are data worded once per language:
rendered in 简体中文 they carry no English sentence (the checker the wizard walk uses, tests/gui/beginner_text.py),
and rendered in English they are exactly the text the plan and the result keep for older readers."""

from __future__ import annotations

import contextlib
import importlib
import json
import re
from pathlib import Path

import pytest
from gui.beginner_text import english_runs

from gpusetup.compat.resolver import resolve
from gpusetup.install.journal import LockBusy
from gpusetup.install.plan import InstallPlan, PlanError, build_plan
from gpusetup.install.python import provide_steps
from gpusetup.messages import outcome_text, render, step_explain, step_title
from gpusetup.model import Machine, Step, from_dict
from gpusetup.resources import resource

ex = importlib.import_module("gpusetup.install.execute")  # the module (gpusetup.install.execute is also a function)
CJK = re.compile(r"[\u4e00-\u9fff]")
DEMOS = sorted(p.stem for p in resource("demo").glob("*.json"))


def _machine(name: str) -> Machine:
    return from_dict(Machine, json.loads(resource("demo", f"{name}.json").read_text(encoding="utf-8"))["machine"])


def _chinese(text: str, allowed: list[str]) -> None:
    assert CJK.search(text), text
    assert not english_runs(text, allowed), (english_runs(text, allowed), text)


def _steps(name: str) -> list[Step]:
    machine = _machine(name)
    plans = resolve(machine, ["pytorch", "tensorflow", "jax"])
    steps: list[Step] = []
    for target in ("venv:/nonexistent/gpusetup-words-env", "conda:gpu-words"):
        with contextlib.suppress(PlanError):  # a machine no build fits: nothing to install there
            steps += build_plan(plans, machine, target, portable=True, conda_envs=[], driver=True,
                                container_toolkit=True, cuda_toolkit="12.8", cudnn=True).steps
    try:
        steps += build_plan(plans, machine, download_only="/nonexistent/wheels", portable=True, foreign=True).steps
        steps += build_plan(plans, machine, "venv:/nonexistent/env2", portable=True, wheelhouse="/nonexistent/wheels").steps
    except PlanError:
        pass
    return steps


@pytest.mark.parametrize("name", DEMOS)
def test_every_step_of_the_demo_machines_plans_in_chinese(name: str) -> None:
    steps = _steps(name)
    assert steps, name
    gpus = [g.name for g in _machine(name).gpus if g.name]
    for s in steps:
        assert s.title_code is not None and s.explain_code is not None, s.id
        assert render(s.title_code) == s.title and render(s.explain_code) == s.explain  # the kept English
        assert step_title(s, "en") == s.title and step_explain(s, "en") == s.explain
        _chinese(step_title(s, "zh_CN"), gpus)
        _chinese(step_explain(s, "zh_CN"), gpus)


def test_the_driver_steps_of_a_machine_without_a_driver_are_all_worded() -> None:
    ids = {s.id for s in _steps("no-driver")}
    assert {"driver", "reboot", "check-driver", "container-toolkit", "cuda-toolkit", "create-venv",
            "create-conda-env", "pip-install", "verify", "protect", "download"} <= ids, ids


def test_the_steps_that_provide_a_python_in_chinese() -> None:
    steps = provide_steps("3.12", "/nonexistent/env", "/usr/bin/uv", install_dir=Path("/nonexistent/pythons"))
    assert [s.id for s in steps] == ["get-python", "create-venv", "seed-pip"]
    for s in steps:
        _chinese(step_title(s, "zh_CN"), [])
        _chinese(step_explain(s, "zh_CN"), [])


def test_an_old_saved_plan_without_codes_keeps_its_english() -> None:
    old = from_dict(Step, {"id": "verify", "title": "Check the builds", "explain": "Reads the versions."})
    assert step_title(old, "zh_CN") == "Check the builds" and step_explain(old, "zh_CN") == "Reads the versions."


def _run(tmp_path: Path) -> ex._Run:
    plan = InstallPlan(steps=[], target="venv:/nonexistent/env", space_path=str(tmp_path / "env"),
                       download_mib=2048, installed_mib=4096)
    return ex._Run(plan, tmp_path, None, None, None, "none", 10.0)


def test_executor_outcomes_in_chinese(tmp_path: Path) -> None:
    """What the executor says (disk space, a failed, cancelled or finished install, undo, resume) — the real
    functions that word them, with a step of a real plan."""
    run = _run(tmp_path)
    try:
        step = next(s for s in _steps("rtx3060") if s.id == "pip-install")  # the recorded RTX 3060 laptop's plan
        failed = ex._failure_message(step, ex.StreamResult(argv=step.argv, returncode=1, tail=["ERROR: No matching distribution"]), run)
        said = [
            ex._preflight(run, lambda p: 1024 * ex.MIB, False),  # 1 GiB free, 6 GiB needed
            failed,
            ex._cancel_message(step, run),
            ex.ExecResult(ok=False, said=ex.msg("install.exec.restart-now")).said,
            ex.ExecResult(ok=True, said=ex.msg("install.exec.finished", count=4, log=str(run.log_path))).said,
            ex._unfinished_message(ex.Journal(tmp_path)),
        ]
    finally:
        run.close()
    assert said[0] is not None and "6.0 GB needed" in render(said[0])
    assert "ERROR: No matching distribution" in render(failed, "zh_CN")  # the tool's own output is quoted
    for m in said:
        assert m is not None
        _chinese(render(m, "zh_CN").replace("ERROR: No matching distribution", ""), [])
    # resume and rollback on an empty state folder, and a busy lock: their real results
    for res in (ex.resume(tmp_path / "none"), ex.rollback(tmp_path / "none2")):
        assert not res.ok and res.said is not None and res.message == render(res.said)
        _chinese(outcome_text(res, "zh_CN"), [])
    busy = ex.ExecResult(ok=False, said=ex.msg("install.exec.busy", owner=LockBusy("4242").owner))
    assert outcome_text(busy) == str(LockBusy("4242"))
    _chinese(outcome_text(busy, "zh_CN"), [])


def test_index_checks_and_undo_notes_in_chinese(tmp_path: Path) -> None:
    """The package-index check's answers (a missing local index, a refused connection — port 9 of this
    machine, where nothing listens) and the notes a rollback reports, as the executor words them."""
    from gpusetup.install.net import check_index
    from gpusetup.model import to_dict

    missing = check_index((tmp_path / "no-index").as_uri(), "torch")
    refused = check_index("http://127.0.0.1:9/simple", "torch", timeout=5)
    for chk in (missing, refused):
        assert not chk.ok and chk.said is not None and chk.message == render(chk.said)
        zh = render(ex.msg("install.exec.network", error=chk.said), "zh_CN")
        quoted = chk.said.params.get("error") or ""  # the operating system's own words
        _chinese(zh.replace(str(quoted), ""), [])
    notes = [to_dict(ex.msg("install.exec.was-before", name="tinydep", before="0.9", now="1.0")),
             to_dict(ex.msg("install.exec.undo-plan-list")), "an English note from an older journal"]
    done = ex.msg("install.exec.rolled-back", notes=ex._lines(notes))
    assert render(done).endswith("\n  tinydep was 0.9 before (now 1.0); to go back: pip install 'tinydep==0.9'\n"
                                 "  could not list the environment's packages; undo uses the plan's list\n"
                                 "  an English note from an older journal")
    _chinese(render(done, "zh_CN").replace("an English note from an older journal", ""), [])
