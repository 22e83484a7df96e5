"""The real Services adapter against the real core: signatures fit and answers come through."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpusetup.gui.demo import DemoServices, demo_kinds, demo_machine
from gpusetup.gui.services import Services, Target
from gpusetup.model import Finding, Plan, Report, Severity, Step


@pytest.fixture
def svc(tmp_path: Path) -> Services:
    return Services(state_dir=tmp_path / "state")


def test_demo_machines_name_real_fixtures() -> None:
    from gpusetup.resources import resource

    root = Path(__file__).resolve().parents[2]
    assert set(demo_kinds()) >= {"rtx3060", "two-gpus", "no-driver", "no-gpu", "a100"}
    for kind in demo_kinds():
        data = json.loads(resource("demo", f"{kind}.json").read_text())
        assert data["source"], kind
        for src in data["source"]:
            assert (root / src).exists(), f"{kind}: {src} is not a recorded fixture"
    assert len(demo_machine("two-gpus").gpus) == 2
    assert demo_machine("no-gpu").gpus == []


def test_rules_resolver_plan_and_script(svc: Services, tmp_path: Path) -> None:
    m = demo_machine("rtx3060")
    findings = svc.evaluate(m)
    assert all(isinstance(f, Finding) for f in findings)
    ranks = [f.severity.rank for f in findings]
    assert ranks == sorted(ranks, reverse=True)
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"  # a Python this computer has: no "get-python" step first
    fplans = svc.resolve(m, ("pytorch", "tensorflow", "jax"), python_version=here)
    assert [p.framework for p in fplans] == ["pytorch", "tensorflow", "jax"]
    torch = fplans[0]
    assert torch.ok and torch.choice is not None and torch.choice.variant.startswith("cu")
    plan = svc.build_plan([torch], m, Target("venv", str(tmp_path / "env")))
    assert plan.steps and plan.steps[0].id == "create-venv"
    script = svc.render_script(plan)
    assert script.startswith("#!") and str(tmp_path / "env") in script


def test_no_driver_finding_gets_a_driver_plan(svc: Services) -> None:
    m = demo_machine("no-driver")
    findings = {f.id: f for f in svc.evaluate(m)}
    assert "nvidia-driver-missing" in findings
    plan = svc.fix_plan(findings["nvidia-driver-missing"], m)
    assert plan is not None
    assert [s.id for s in plan.steps][:2] == ["driver", "reboot"]
    assert svc.fix_plan(Finding(id="p2p-broken", severity=Severity.WARNING, title="x"), m) is None


def test_execute_and_rollback_through_the_real_installer(svc: Services, tmp_path: Path) -> None:
    marker = tmp_path / "made"
    plan = Plan(steps=[Step(id="touch", title="Write a file", argv=[sys.executable, "-c", f"open({str(marker)!r}, 'w').write('x'); print('wrote it')"])])
    lines: list[str] = []
    progress: list[str] = []
    out = svc.execute(plan, progress=lambda label, f: progress.append(label), log_line=lines.append)
    assert out.ok, out.message
    assert marker.exists()
    assert any("wrote it" in line for line in lines)
    assert progress
    back = svc.rollback(log_line=lines.append)
    assert back.ok or "nothing" in back.message.lower() or back.message


def test_reports(svc: Services, tmp_path: Path) -> None:
    report = Report(machine=demo_machine("rtx3060"))
    html = svc.render_report(report, "html")
    assert "<html" in html.lower() and "RTX 3060" in html
    data = json.loads(svc.render_report(report, "json"))
    assert data["machine"]["gpus"][0]["name"] == "NVIDIA GeForce RTX 3060"


def test_every_part_of_the_core_loads(svc: Services) -> None:
    from gpusetup.gui.services import FEATURES

    assert {f: svc.available(f) for f in FEATURES} == dict.fromkeys(FEATURES, True)


def test_a_part_that_cannot_load_is_missing_for_its_page(monkeypatch, svc: Services) -> None:
    """A broken dependency (here the self-test package cannot be imported) is reported, not raised."""
    monkeypatch.setitem(sys.modules, "gpusetup.selftest", None)
    assert not svc.available("selftest")
    assert svc.available("detect")


def test_demo_never_runs_the_plan(tmp_path: Path) -> None:
    demo = DemoServices("rtx3060", state_dir=tmp_path, step_delay=0)
    plan = Plan(steps=[Step(id="rm", title="Would delete", argv=["rm", "-rf", str(tmp_path / "keep")])])
    (tmp_path / "keep").mkdir()
    lines: list[str] = []
    out = demo.execute(plan, log_line=lines.append)
    assert out.ok and (tmp_path / "keep").exists()
    assert any("would run: rm -rf" in line for line in lines)


def test_support_bundle_is_a_zip(svc: Services, tmp_path: Path) -> None:
    import zipfile

    path = svc.create_bundle(Report(machine=demo_machine("rtx3060")), tmp_path / "bundle.zip")
    assert path == tmp_path / "bundle.zip"
    with zipfile.ZipFile(path) as zf:
        assert "manifest.json" in zf.namelist()


def test_docker_setup_through_the_real_generator(svc: Services, tmp_path: Path) -> None:
    out = svc.generate_setup(demo_machine("rtx3060"), "pytorch", tmp_path / "docker")
    assert out.ok and out.refused is None, out
    assert out.files and all((tmp_path / "docker" / f).exists() for f in out.files)
    assert out.image and out.why and not out.why.startswith("[")
    assert out.next_commands
    refused = svc.generate_setup(demo_machine("no-gpu"), "pytorch", tmp_path / "nogpu")
    assert refused.ok or refused.refused  # either a CPU set-up or a plain reason, never a crash


def test_unfinished_cli_install_can_be_resumed_from_the_wizard(svc: Services, tmp_path: Path) -> None:
    import gpusetup.install as install

    fail = Plan(steps=[
        Step(id="one", title="First", argv=[sys.executable, "-c", "print(1)"]),
        Step(id="two", title="Second", argv=[sys.executable, "-c", "raise SystemExit(3)"]),
    ])
    res = install.execute(fail, journal_dir=svc.journal_dir)
    assert not res.ok and res.failed_step == "two"
    assert svc.unfinished_install()
    pending = svc.load_pending()  # no wizard file: the installer's own saved plan
    assert pending is not None
    plan, target, frameworks = pending
    assert [s.id for s in plan.steps] == ["one", "two"] and frameworks == []
    back = svc.rollback()
    assert back.ok, back.message
    assert not svc.unfinished_install() and svc.load_pending() is None


def test_detect_calls_the_real_probes_with_progress(svc: Services) -> None:
    from gpusetup.model import Machine

    seen: list[str] = []
    machine = svc.detect(progress=lambda label, fraction: seen.append(label))
    assert isinstance(machine, Machine) and machine.probes
    assert seen[0] == "system" and seen[-1] == "done"
