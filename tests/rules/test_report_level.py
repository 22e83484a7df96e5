"""Report-level rules: judgments that need the self-test's measurements, not just the machine's facts."""

from __future__ import annotations

from gpusetup.model import Machine, Measurement, Report, SelfTestResult, Severity
from gpusetup.rules.report_level import evaluate_report


def report(*ms: Measurement) -> Report:
    return Report(machine=Machine(), selftest=SelfTestResult(measurements=list(ms)))


def test_low_measured_host_to_device_bandwidth_is_f15() -> None:
    slow = Measurement("h2d_pinned", 3.1, "GB/s", rated=31.5, fraction=0.098, verdict="fail", device=0,
                       reason="the PCIe link ran at PCIe Gen1 x16 during the copy")
    f = evaluate_report(report(slow))
    assert [x.catalogue for x in f] == ["F15"] and f[0].severity == Severity.WARNING
    assert "3.1 GB/s" in f[0].evidence[0] and "10%" in f[0].evidence[0]


def test_good_bandwidth_and_no_selftest_say_nothing() -> None:
    ok = Measurement("h2d_pinned", 24.0, "GB/s", rated=31.5, fraction=0.76, verdict="pass", device=0)
    assert evaluate_report(report(ok)) == []
    assert evaluate_report(Report(machine=Machine())) == []


def test_wrong_results_are_a_hardware_fault() -> None:
    bad = Measurement("matmul_repeat_bitexact", None, "", verdict="fail", device=1,
                      reason="3 of 10 repeats differed from the first")
    f = evaluate_report(report(bad))
    assert f[0].id == "gpu-computes-wrong-results" and f[0].severity == Severity.ERROR and f[0].gpu_index == 1


def test_p2p_measurement() -> None:
    r = report(Measurement("p2p_copy_0_1", 1.6, "GB/s", verdict="fail", reason="slower than staged copy"))
    r.machine.system.kernel_cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on"
    f = evaluate_report(r)
    assert f[0].catalogue == "F35" and any("intel_iommu=on" in e for e in f[0].evidence)


def test_machine_rules_still_run() -> None:
    r = report()
    r.machine.cuda.env["CUDA_VISIBLE_DEVICES"] = ""
    assert [x.catalogue for x in evaluate_report(r)] == ["F28"]
