"""The core's verdicts a beginner reads: is the framework proven in the checked environment, and one line
about the graphics card; recorded measurements (demonstrations) judged like live ones."""

from __future__ import annotations

from gpusetup.gui.demo import demo_machine, load_demo
from gpusetup.messages import render
from gpusetup.model import Measurement, SelfTestResult, from_dict
from gpusetup.selftest.proof import framework_proof, headline
from gpusetup.selftest.recorded import rate_recorded


def fw(verdict: str, device: int | None = None, name: str = "framework_torch") -> Measurement:
    return Measurement(name=name, value=1.0 if verdict == "pass" else None, unit="TFLOP/s", tier="framework",
                       verdict=verdict, reason=f"reason {verdict}", device=device)


def test_framework_proof_statuses() -> None:
    py = "/home/u/env/bin/python"
    assert framework_proof(SelfTestResult(measurements=[fw("pass", 0)], framework_python=py)).status == "gpu"
    cpu = framework_proof(SelfTestResult(measurements=[fw("pass", None, "framework_numpy")], framework_python=py))
    assert cpu.status == "cpu" and cpu.frameworks == ["numpy"] and cpu.python == py and cpu.proven
    failed = framework_proof(SelfTestResult(measurements=[fw("pass", 0), fw("fail", None, "framework_jax")]))
    assert failed.status == "failed" and failed.frameworks == ["jax"] and not failed.proven
    skipped = framework_proof(SelfTestResult(measurements=[fw("skipped")]))
    assert skipped.status == "not-proven" and skipped.reason == "reason skipped" and not skipped.proven
    assert framework_proof(None).status == "not-proven"


def test_recorded_a100_memory_speed_is_judged_against_its_rated_peak() -> None:
    recorded = from_dict(SelfTestResult, load_demo("a100")["selftest"])
    rated = rate_recorded(recorded, demo_machine("a100"))
    d2d = next(m for m in rated.measurements if m.name == "d2d")
    assert d2d.value == 1157.5 and d2d.rated and d2d.fraction == d2d.value / d2d.rated
    assert d2d.verdict in ("pass", "warn") and "recorded by bandwidthTest" in d2d.reason
    said = {"code": d2d.code, "params": d2d.params}  # and as data, worded in Chinese for the Verify page
    assert render(said) == d2d.reason and "由 bandwidthTest 记录" in render(said, "zh_CN")
    assert next(m for m in recorded.measurements if m.name == "d2d").rated is None  # the input is not changed
    line = headline(rated)
    pct = round(d2d.fraction * 100)
    assert line is not None and line.params == {"gpu": "NVIDIA A100-SXM4-40GB", "percent": pct}
    en = render(line, "en")
    assert en.startswith("Your NVIDIA A100-SXM4-40GB works") and f"{pct}% of its rated memory speed" in en
    assert f"{pct}%" in render(line, "zh_CN") and "额定显存速度" in render(line, "zh_CN")


def test_no_headline_without_a_tested_gpu_and_a_failure_says_so() -> None:
    assert headline(SelfTestResult(gpu_tested=False)) is None
    bad = SelfTestResult(gpu_tested=True, verdict="fail", gpu_name="NVIDIA GeForce RTX 3060")
    assert render(headline(bad), "en").startswith("Your NVIDIA GeForce RTX 3060 has a problem")
