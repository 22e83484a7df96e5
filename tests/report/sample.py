"""A realistic report for renderer and bundle tests: NVML facts from a real recorded A100 (telegraf
fixture) through the NVML fake, plus findings, a plan and a self-test result."""

from __future__ import annotations

from pathlib import Path

from fakes.nvml import FakeNvml
from fakes.runner import FakeRunner

from gpusetup.model import (
    Action,
    Choice,
    Finding,
    FrameworkPlan,
    Measurement,
    Rejected,
    Report,
    SelfTestResult,
    Severity,
)
from gpusetup.probe import ProbeContext, detect

FIX = Path(__file__).resolve().parent.parent / "fixtures"
A100_XML = FIX / "nvidia-smi-xml" / "a100-sxm4-80gb__535.54.03__telegraf.xml"
A100_UUID = "GPU-513536b6-7d19-9063-b049-1e69664bb298"
A100_SERIAL = "1650522003820"


def sample_report(tmp_path: Path, runner: FakeRunner | None = None) -> tuple[Report, ProbeContext]:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    ctx = ProbeContext(
        runner=runner or FakeRunner(),
        root=root,
        env={},
        os_name="linux",
        nvml_factory=lambda: FakeNvml.from_smi_xml(A100_XML),
        only=("nvml",),
    )
    machine = detect(ctx)
    machine.system.hostname = "gpu-node-17.lab.example.org"
    machine.kernel_log = ["[ 1234.5] NVRM: Xid (PCI:0000:10:1c): 63, pid=1923, name=python, Row Remapper: New row marked for remapping, reset gpu to activate."]
    findings = [
        Finding(
            id="row-remap-pending",
            severity=Severity.ERROR,
            title="GPU 0 has a memory row waiting to be remapped",
            detail="The GPU found a failing memory row. It keeps working, but the repair only takes effect after a reset.",
            fix="sudo nvidia-smi -r -i 0   # or reboot",
            catalogue="F21",
            evidence=[machine.kernel_log[0], f"uuid {A100_UUID}"],
        ),
        Finding(id="persistence-off", severity=Severity.INFO, title="Persistence mode is off", fix="sudo nvidia-smi -pm 1"),
    ]
    plan = FrameworkPlan(
        framework="pytorch",
        ok=True,
        choice=Choice("2.9.1", "cu126", "https://download.pytorch.org/whl/cu126", ["torch==2.9.1+cu126"], ["pip install torch==2.9.1 --index-url https://download.pytorch.org/whl/cu126"]),
        actions=[Action("reboot", "Reset the GPU so the pending row remap takes effect.")],
        rejected=[Rejected("cu130", "needs driver ≥ 580, you have 535.54.03")],
    )
    st = SelfTestResult(
        mode="quick",
        gpu_tested=True,
        verdict="warn",
        measurements=[
            Measurement("h2d_pinned", 21.3, "GB/s", rated=31.5, fraction=21.3 / 31.5, verdict="warn", reason="below 80% of the PCIe Gen4 x16 rate", tier="driver"),
            Measurement("matmul_fp32", 17.9, "TFLOP/s", rated=19.5, fraction=17.9 / 19.5, verdict="pass", reason="92% of rated", tier="driver"),
            Measurement("cpu_matmul", 95.0, "GFLOP/s", verdict="info", tier="cpu"),
        ],
        notes=["GPU/CPU speed-up for FP32 matmul: 188x"],
    )
    return Report(machine=machine, findings=findings, plans=[plan], selftest=st), ctx
