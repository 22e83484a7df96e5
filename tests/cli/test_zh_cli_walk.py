"""The command line in 简体中文 on recorded machines (issue 21): `diagnose`, `analyze`, `plan` and the self-test's
findings print no English sentence a beginner must read — the findings' fixes included, with their commands
whole. Quoted as they are, under their Chinese labels: a rule's English detail ("规则的原文（英文）："), the
evidence (what the machine or the input said), English error messages in “…”.

Recorded machines: the demonstration machines, the machine each recorded issue text describes (what `analyze`
reads from it), and an A100 detected by gpusetup's own probes from a real nvidia-smi XML through the NVML fake.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gui.beginner_text import english_runs, jargon

from gpusetup.analyze import analyze_text
from gpusetup.cli import main
from gpusetup.model import Machine, from_dict
from gpusetup.resources import resource

CJK = re.compile(r"[\u4e00-\u9fff]")
RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded-issues"
DEMOS = sorted(p.stem for p in resource("demo").glob("*.json"))
# labels of the text report whose block is quoted as it is (the rule's English, what the machine said)
QUOTED_LABELS = ("规则的原文（英文）：", "依据：")


def _demo(name: str) -> Machine:
    return from_dict(Machine, json.loads(resource("demo", f"{name}.json").read_text(encoding="utf-8"))["machine"])


def _recorded_machines() -> list[tuple[str, Machine]]:
    out = []
    for path in sorted(RECORDED.glob("*.txt")):
        analysis = analyze_text(path.read_text(encoding="utf-8", errors="replace"), path.name)
        if analysis.findings:
            out.append((path.stem, analysis.machine))
    return out


def _paragraphs(lines: list[str]) -> list[str]:
    """Wrapped lines joined again: a line indented like the one before (8 or more) continues its paragraph, so a
    command wrapped over two lines is read whole."""
    out: list[str] = []
    prev = -1
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if out and indent >= 8 and indent == prev and not line.strip().endswith("：") and not out[-1].strip().endswith("："):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
        prev = indent
    return out


def _report_parts(report: str) -> tuple[list[str], list[str]]:
    """(the findings' own paragraphs, the other lines) of a text report; the quoted blocks (the rule's English
    detail, the evidence) left out."""
    lines = report.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln and set(ln) == {"─"}]  # each heading is underlined
    end = heads[1] - 1 if len(heads) > 1 else len(lines)
    findings, rest = lines[:end], lines[end:]
    own, quoted = [], False
    for line in findings:
        body = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 8 and body.endswith("："):  # a label opens a block
            quoted = body in QUOTED_LABELS
            own.append(line)
            continue
        if indent <= 8:
            quoted = False
        if not quoted:
            own.append(line)
    return _paragraphs(own), rest


def _problems(lines: list[str], machine: Machine | None, with_jargon: bool = True) -> list[str]:
    allowed = [n for g in (machine.gpus if machine else []) for n in (g.name, g.pci.device_name) if n]
    allowed += [g.compute_capability_source for g in (machine.gpus if machine else []) if g.compute_capability_source]
    allowed += [machine.system.os_version or "", machine.system.kernel or ""] if machine else []
    out = []
    for line in lines:
        prose = re.sub(r"“[^”]*”", " ", line)
        out += [f"English {run!r} in {line!r}" for run in english_runs(prose, allowed)]
        out += [f"{j} in {line!r}" for j in jargon(prose)] if with_jargon else []
    return out


def _report_problems(report: str, machine: Machine | None) -> list[str]:
    """The findings: no English sentence, no jargon outside commands. The facts: labels are Chinese; a value is
    what the machine said (versions, variables, and where a reading came from, "来自 …")."""
    findings, facts = _report_parts(report)
    labels = []
    for ln in facts:  # a fact row is "label   value": the value is what the machine said (data)
        row = re.match(r"^(\s*\S(?:.*?\S)?)\s{2,}\S", ln)
        label = row.group(1) if row and ln.startswith("  ") else ln
        labels.append(re.sub(r"来自 .*", "", label))  # where a reading came from (a probe's name for itself): data
    return _problems(findings, machine) + _problems(labels, machine, with_jargon=False)


def _diagnose(machine: Machine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    import gpusetup.commands.diagnose as diagnose

    monkeypatch.setattr(diagnose, "detect", lambda ctx: machine)
    assert main(["--lang", "zh_CN", "diagnose", "--color", "never"]) in (0, 1, 2)
    return capsys.readouterr().out


@pytest.mark.parametrize("name", DEMOS)
def test_diagnose_of_a_demo_machine_in_chinese(name: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    machine = _demo(name)
    out = _diagnose(machine, monkeypatch, capsys)
    assert "诊断报告" in out.splitlines()[0]
    problems = _report_problems(out, machine)
    assert not problems, "\n".join(problems)


def test_diagnose_of_every_recorded_issue_in_chinese(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The machine behind each recorded issue text, diagnosed in Chinese: its findings' titles, meanings and
    fixes (and every other line the report writes itself) are Chinese."""
    machines = _recorded_machines()
    assert len(machines) >= 100
    found = []
    fixes = 0
    for name, machine in machines:
        out = _diagnose(machine, monkeypatch, capsys)
        fixes += out.count("解决方法：")
        found += [f"{name}: {p}" for p in _report_problems(out, machine)]
    assert fixes >= 100
    assert not found, "\n".join(found[:40])


def test_analyze_of_every_recorded_issue_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpusetup analyze` of each recorded issue: the fix is Chinese (only the rule's English detail and the
    input's own lines are quoted)."""
    found = []
    for path in sorted(RECORDED.glob("*.txt")):
        main(["--lang", "zh_CN", "analyze", str(path)])
        out = capsys.readouterr().out
        own, quoted = [], False
        for line in out.splitlines():
            if line.startswith("    ") and not line.startswith("      "):
                quoted = line.lstrip().startswith(("规则的原文", "依据", "匹配依据"))  # verbatim error lines
            if quoted or line.startswith("      >") or line.startswith("  ") and "：" in line[:16] \
                    and not line.startswith("    "):
                continue  # the rule's English, the input's lines, facts read from the input (label：value)
            own.append(line.split(".txt: ", 1)[-1])
        found += [f"{path.name}: {p}" for p in _problems(_analyze_paragraphs(own), None)
                  if "解决方法" in p or "这意味着" in p]
    assert not found, "\n".join(found[:40])


def _analyze_paragraphs(lines: list[str]) -> list[str]:
    """analyze's blocks: a label line ("    这意味着：…") and its continuation lines ("      …") read as one."""
    out: list[str] = []
    for line in lines:
        if out and line.startswith("      ") and out[-1].startswith("    "):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def test_plan_for_a_probed_machine_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`plan --for` a diagnose report written from an A100 the probes read through the NVML fake."""
    from report.sample import sample_report

    from gpusetup.model import Report, to_dict

    report, _ = sample_report(tmp_path)
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(to_dict(Report(machine=report.machine)), ensure_ascii=False), encoding="utf-8")
    assert main(["--lang", "zh_CN", "plan", "--offline", "--for", str(saved), "-f", "pytorch", "-f", "tensorflow",
                 "-f", "jax"]) in (0, 1)
    out = capsys.readouterr().out
    assert CJK.search(out)
    problems = _problems([ln for ln in out.splitlines() if not ln.lstrip().startswith("$")], report.machine)
    assert not problems, "\n".join(problems)


def test_the_selftest_findings_in_chinese() -> None:
    """What a self-test's findings mean, as `gpusetup selftest` prints them (its own renderer of findings): the
    findings of the recorded PCIe, memory-error and peer-to-peer issues, in Chinese with their fixes."""
    from gpusetup.commands.selftest import _findings_text
    from gpusetup.i18n import set_output_language
    from gpusetup.model import Report

    findings = []
    for path in sorted(RECORDED.glob("F1[456]__*.txt")) + sorted(RECORDED.glob("F35__*.txt")):
        findings += analyze_text(path.read_text(encoding="utf-8", errors="replace"), path.name).findings
    assert {"gpu-fell-off-bus", "gpu-memory-errors", "p2p-broken"} <= {f.id for f in findings}
    set_output_language("zh_CN")
    text = _findings_text(Report(machine=Machine(), findings=findings))
    assert text.count("解决方法") >= len(findings)
    problems = _problems(text.splitlines(), None)
    assert not problems, "\n".join(problems)


def test_a_chinese_line_is_never_broken_inside_a_command() -> None:
    """The text report wraps Chinese at the terminal's width, but a command, a path or an English word stays
    whole on one line (a beginner copies it), and no line starts with a comma or a full stop."""
    from gpusetup.report.text import _cut

    text = ("为当前内核重新编译模块：`sudo apt install linux-headers-$(uname -r) && sudo dkms autoinstall`，然后重启电脑。"
            "如果编译失败，请运行 `gpusetup plan`，再运行 `gpusetup install`。")
    for width in range(30, 100, 7):
        lines = _cut(text, width)
        for cmd in re.findall(r"`[^`]*`", text):
            assert any(cmd in ln for ln in lines) or len(cmd) > width, (width, cmd, lines)
        assert not any(ln[:1] in "，。；：、" for ln in lines), lines


@pytest.mark.parametrize("name", ["rtx3060", "no-driver", "no-gpu"])
def test_the_install_script_in_chinese_runs_the_same_commands(name: str, tmp_path: Path) -> None:
    """The exact-commands box / `install --script`: in Chinese its comments and the lines it echoes are Chinese,
    the commands are the English script's, line for line, and bash still reads it."""
    import shutil
    import subprocess

    from gpusetup.compat.resolver import resolve
    from gpusetup.install import build_plan, render_script

    machine = _demo(name)
    plan = build_plan(resolve(machine, ["pytorch"]), machine, f"venv:{tmp_path / 'env'}", portable=True)
    en, zh = render_script(plan, "bash"), render_script(plan, "bash", "zh_CN")
    assert render_script(plan, "bash", "en") == en
    def own(text: str) -> list[str]:  # the script's lines without the installer scripts it carries inline
        out, inline = [], False
        for ln in text.splitlines():
            if ln.endswith("<<'GPUSETUP_EOF'"):
                inline = True
            elif ln == "GPUSETUP_EOF":
                inline = False
            elif not inline:
                out.append(ln)
        return out

    en_lines, zh_lines = [ln.strip() for ln in own(en)], [ln.strip() for ln in own(zh)]  # steps are indented blocks
    commands = [ln for ln in en_lines if not ln.startswith(("#", "echo ")) and "echo " not in ln]
    assert commands == [ln for ln in zh_lines if not ln.startswith(("#", "echo ")) and "echo " not in ln]
    said = [ln for ln in zh_lines if ln.startswith(("# ", "echo "))]
    assert any(ln.startswith("# 第 1 步，共 ") for ln in said) and "所有步骤都已完成" in zh
    words = [re.sub(r"^# 撤销：.*|^echo |^# ", "", ln) for ln in said[1:]]  # an undo line quotes its command
    problems = _problems(words, machine)
    assert not problems, "\n".join(problems)
    if shutil.which("bash"):
        script = tmp_path / "zh.sh"
        script.write_text(zh, encoding="utf-8")
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_a_left_out_gpu_is_named_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 21: the plan said "GPU 1：GPU 1: AMD Cezanne …" — the note names the GPU, its reason does not again."""
    assert main(["--lang", "zh_CN", "plan", "--offline", "--for", str(resource("demo", "two-gpus.json")),
                 "-f", "pytorch"]) in (0, 1)
    out = capsys.readouterr().out
    assert "不会使用 GPU 1：一次安装只能使用一个厂商的 GPU 版本" in out
    assert not re.search(r"GPU (\d+)：GPU \1", out), out
