"""`gpusetup --lang zh_CN diagnose`: the text report's headings, labels and sentences, the findings' titles
and meanings and the plans are in 简体中文 for every demo machine; what a rule or a probe reports in its own
words (a finding's detail, fix and evidence, indented under their Chinese labels) is quoted as it is."""

from __future__ import annotations

import json
import re

import pytest
from gui.beginner_text import english_runs

from gpusetup.cli import main
from gpusetup.compat.resolver import resolve
from gpusetup.model import Machine, Report, from_dict
from gpusetup.report.text import render_text
from gpusetup.resources import resource
from gpusetup.rules import evaluate

CJK = re.compile(r"[\u4e00-\u9fff]")
DEMOS = sorted(p.stem for p in resource("demo").glob("*.json"))


def _machine(name: str) -> Machine:
    return from_dict(Machine, json.loads(resource("demo", f"{name}.json").read_text(encoding="utf-8"))["machine"])


@pytest.mark.parametrize("name", DEMOS)
def test_the_text_report_of_a_demo_machine_in_chinese(name: str) -> None:
    m = _machine(name)
    report = Report(machine=m, findings=evaluate(m), plans=resolve(m, ["pytorch", "jax"]))
    zh = render_text(report, language="zh_CN")
    en = render_text(report, language="en")
    assert zh.startswith("gpusetup") and "诊断报告" in zh.splitlines()[0] and "发现的问题" in zh
    assert "diagnose report" in en.splitlines()[0] and not CJK.search(en)
    # facts the machine reports name themselves (GPU names, where a compute capability came from)
    allowed = [g.name for g in m.gpus if g.name] + [g.compute_capability_source for g in m.gpus if g.compute_capability_source]
    left = [line for line in zh.splitlines() if not line.startswith(" " * 10) and english_runs(line, allowed)]
    assert not left, left


def test_diagnose_on_this_machine_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh_CN", "diagnose"]) in (0, 1, 2)
    out = capsys.readouterr().out
    assert "诊断报告" in out and "系统\n" in out and "操作系统" in out and "这些信息是怎么收集的" in out
    assert main(["diagnose"]) in (0, 1, 2)
    assert "How this was collected" in capsys.readouterr().out
