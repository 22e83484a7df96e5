"""`gpusetup analyze` reads our own bundle as what it is: the report's facts, not guesses from its other files.

No framework is taken as "installed" from the plan's commands quoted in logs/, the OS is not shown as the kernel
version, our own plan.json gives no "unknown field" note, and no advice asks for the report the bundle holds.
"""

from __future__ import annotations

import json

from fakes.runner import FakeRunner

from gpusetup.analyze import analyze_paths, analyze_text, facts_summary
from gpusetup.bundle import build_bundle
from gpusetup.bundle.redact import Redactor
from gpusetup.commands.analyze import render_text
from gpusetup.model import to_dict

from .sample import sample_report

PLANNED = 'python -m pip install "torch==2.15.*" --index-url https://download.pytorch.org/whl/cpu'


def _bundle(tmp_path, monkeypatch):  # noqa: ANN001, ANN202
    home = tmp_path / "gshome"
    monkeypatch.setenv("GPUSETUP_HOME", str(home))
    journal = home / "state" / "journal" / "install-20261124.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps({"step": "pip-torch", "argv": PLANNED}) + "\n", encoding="utf-8")
    report, ctx = sample_report(tmp_path, FakeRunner())
    ctx.env = {}
    report.machine.system.os = "linux"
    report.machine.system.os_version = report.machine.system.kernel = "6.8.0-49-generic"
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3", redactor=Redactor())
    return result.path, report


def test_own_bundle_is_read_as_facts(tmp_path, monkeypatch) -> None:
    path, report = _bundle(tmp_path, monkeypatch)
    analysis = analyze_paths([str(path)])
    assert analysis.has_report and not analysis.unreadable
    facts = facts_summary(analysis.machine)
    installed = {(fw.get("name"), fw.get("version")) for fw in facts.get("frameworks", [])}
    assert ("torch", "2.15") not in installed and not any(v and v.startswith("2.15") for _, v in installed)
    assert facts["os"] != facts.get("kernel"), facts
    notes = [n for i in analysis.inputs for n in i.notes]
    assert not any("unknown field" in n for n in notes), notes
    text = render_text(analysis)
    assert "diagnose --json" not in text
    assert analysis.to_dict()["missing"] == []


def test_own_plan_json_is_not_a_list_of_installed_frameworks(tmp_path) -> None:
    plan = [{"framework": "pytorch", "ok": False, "choice": {"version": "2.15", "variant": "cpu",
             "packages": ["torch==2.15.*"], "commands": [PLANNED]}, "gpu_choice": None, "actions": []}]
    analysis = analyze_text(json.dumps(plan, indent=2), "plan.json")
    assert "gpusetup-plan" in analysis.inputs[0].kinds
    assert not facts_summary(analysis.machine).get("frameworks")
    assert not any("unknown field" in n for n in analysis.inputs[0].notes)


def test_report_json_with_a_very_long_line_is_still_our_report(tmp_path) -> None:
    """Long lines are cut for log text; our JSON report is parsed whole (a cut would make it unreadable)."""
    report, _ = sample_report(tmp_path, FakeRunner())
    report.machine.messages.append("x" * 9000)
    text = json.dumps(to_dict(report))  # one single line far longer than the cut width
    analysis = analyze_text(text, "report.json")
    assert "gpusetup-report" in analysis.inputs[0].kinds
    assert analysis.machine.gpus
