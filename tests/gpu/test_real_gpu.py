"""Checks that only a machine with a real NVIDIA GPU can run: skipped (saying why) everywhere else.

Our development and CI machines have no GPU, so everything here is also covered by fakes fed with recorded
outputs; these tests close the loop when a session is lent a GPU machine: `./bootstrap.sh test -m gpu`.
"""

from __future__ import annotations

import pytest

from gpusetup.model import Report
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.nvml import SOURCE as NVML_SOURCE
from gpusetup.rules.report_level import evaluate_report


def _nvml_gpu_count() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            return int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no library, no driver, no GPU: all mean "skip"
        return 0


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(_nvml_gpu_count() == 0, reason="no NVIDIA GPU visible through NVML on this machine"),
]


@pytest.fixture(scope="module")
def machine():
    return detect(ProbeContext())


def test_detection_agrees_across_sources(machine):
    gpus = machine.nvidia_gpus
    assert gpus and all(g.name and g.uuid for g in gpus)
    assert all(g.compute_capability and g.compute_capability_source == NVML_SOURCE for g in gpus if g.index is not None)
    assert machine.driver.version and machine.driver.cuda_driver_version
    values = {r.value for r in machine.driver.versions if r.value and not r.source.startswith("libcuda")}
    assert len(values) == 1, f"driver sources disagree: {machine.driver.versions}"


def test_selftest_gpu_tier_is_correct(machine):
    from gpusetup.selftest import run_selftest

    result = run_selftest(machine, mode="quick", device=0)
    assert result.gpu_tested
    by_name = {m.name: m for m in result.measurements}
    wrong = [m for m in result.measurements if m.verdict == "fail" and "mismatch" in m.reason.lower()]
    assert not wrong, f"GPU computed wrong results: {wrong}"
    assert any(m.unit == "GB/s" and m.value for m in by_name.values()), "no copy bandwidth measured"
    report = Report(machine=machine, selftest=result)
    assert not [f for f in evaluate_report(report) if f.id == "rule-crashed"]
