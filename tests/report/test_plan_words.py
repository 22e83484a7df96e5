"""Every surface words a plan through gpusetup.report.plans: status kept, rejected options shown, Chinese
from the same codes (issue 13)."""

from __future__ import annotations

from gpusetup.commands.plan import plan_lines
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.model import Report
from gpusetup.report import render
from gpusetup.report.plans import ACTION_FIRST, READY, describe

# an RTX 5090 (Blackwell, sm_120) needs a CUDA 12.8+ build, which needs a newer driver than 550
OLD_DRIVER = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "550.163.01",
              "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}]}
NEW_DRIVER = dict(OLD_DRIVER, driver="580.95.05")


def _report(data: dict) -> Report:
    m = machine_from_data(data)
    return Report(machine=m, plans=resolve(m, ["pytorch"]))


def test_text_report_keeps_needs_action_first_when_a_cpu_choice_exists() -> None:
    r = _report(OLD_DRIVER)
    fp = r.plans[0]
    assert not fp.ok and fp.choice is not None and fp.choice.variant == "cpu" and fp.actions
    text = render(r, "text")
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("pytorch"))
    assert f"{fp.choice.version} (cpu)" in line and "needs action first" in line, line
    # the GPU build that works after the action, and the options that were ruled out, with their reasons
    assert f"{fp.gpu_choice.version} ({fp.gpu_choice.variant})" in text
    assert fp.rejected and "not chosen" in text
    assert fp.rejected[0].reason.split(",")[0] in text.replace("\n", " ").replace("  ", " ") or fp.rejected[0].option in text
    for fmt in ("markdown", "html"):
        out = render(r, fmt)
        assert "needs action first" in out and fp.rejected[0].option in out


def test_ready_plan_says_ready_everywhere() -> None:
    r = _report(NEW_DRIVER)
    assert describe(r.plans[0]).status == READY
    line = next(ln for ln in render(r, "text").splitlines() if ln.strip().startswith("pytorch"))
    assert line.rstrip().endswith("— ready")


def test_same_codes_in_chinese_and_the_cli_keeps_english_detail() -> None:
    fp = _report(OLD_DRIVER).plans[0]
    en, zh = describe(fp), describe(fp, "zh_CN")
    assert en.status == zh.status == ACTION_FIRST
    assert len(en.rejected) == len(zh.rejected) and len(en.notes) == len(zh.notes) >= 1
    assert "needs NVIDIA driver" in en.actions[0].why and "550.163.01" in en.actions[0].why
    assert "NVIDIA 驱动程序" in zh.actions[0].why and "550.163.01" in zh.actions[0].why
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in reason) for _, reason in zh.rejected)
    lines = "\n".join(plan_lines(en))
    assert "First do this:" in lines and "Not chosen, and why:" in lines and "--index-url" in lines
