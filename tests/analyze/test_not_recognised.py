"""An honest answer instead of silence: every real problem report gets a finding, or a 'not recognised' note
that quotes the unplaced error lines and says which command's output would decide (ending in `gpusetup bundle`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpusetup.i18n as fi18n
from gpusetup.analyze import analyze_paths, analyze_text
from gpusetup.commands.analyze import render_text
from gpusetup.model import Severity

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = sorted((FIXTURES / "recorded-issues").glob("*.txt"))


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name[:60])
def test_no_real_problem_report_is_answered_with_silence(path: Path) -> None:
    assert analyze_paths([str(path)]).findings, f"{path.name}: no finding and no 'not recognised' answer"


def test_unplaced_error_says_what_to_collect_next() -> None:
    path = FIXTURES / "recorded-issues" / "NEG-F44__macos-26.3.1-mps-message-wrong__pytorch-177819.txt"
    analysis = analyze_paths([str(path)])
    (f,) = analysis.findings
    assert f.id == "problem-not-recognised" and f.severity == Severity.INFO
    assert any("MPS backend is supported on macOS 14.0+" in e for e in f.evidence)
    assert "gpusetup bundle" in f.fix
    text = render_text(analysis)
    assert "not one gpusetup recognises" in text and "gpusetup bundle" in text
    data = json.loads(json.dumps(analysis.to_dict()))
    assert data["findings"][0]["id"] == "problem-not-recognised"
    title, meaning = fi18n.finding_text(f, "zh_CN") or ("", "")
    assert "gpusetup" in title and "gpusetup bundle" in meaning


def test_the_next_step_depends_on_what_is_missing() -> None:
    f = analyze_text("Traceback (most recent call last):\nRuntimeError: frobnication failed in torch").findings[-1]
    assert f.id == "problem-not-recognised"
    assert "nvidia-smi" in f.fix and "collect_env" in f.fix


def test_healthy_output_gets_no_not_recognised_note() -> None:
    for path in sorted((FIXTURES / "nvidia-smi-xml").glob("*.xml"))[:5] + sorted(
            (FIXTURES / "collect-env").glob("*.txt")) + sorted(
            (FIXTURES / "nvidia-smi-text" / "full-captures").glob("*.txt")) + sorted(
            (FIXTURES / "nvidia-smi-text").glob("*nvidia-smi-q.txt")):
        assert all(f.id != "problem-not-recognised" for f in analyze_paths([str(path)]).findings), path.name


def test_a_recognised_problem_needs_no_such_note() -> None:
    path = FIXTURES / "recorded-issues" / "F37__error-46-tesla-k40m-e-process__digits-2005.txt"
    assert all(f.id != "problem-not-recognised" for f in analyze_paths([str(path)]).findings)
