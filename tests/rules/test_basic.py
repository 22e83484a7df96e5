"""First-line findings: no GPU, driver missing, NVML failing, module/library mismatch, CUDA_VISIBLE_DEVICES,
nvidia-smi hanging. Facts come from real recorded outputs where one exists (fake runner + fixture files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.runner import FakeRunner, Reply

from gpusetup.model import (
    Driver,
    Gpu,
    KernelModule,
    Machine,
    PciInfo,
    ProbeRun,
    Reading,
    Severity,
)
from gpusetup.rules import evaluate
from gpusetup.rules.basic import parse_visible_devices

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def ids(machine: Machine) -> list[str]:
    return [f.id for f in evaluate(machine)]


def nvidia_pci_gpu(driver: str | None = None, index: int | None = None) -> Gpu:
    # GA106 [GeForce RTX 3060 Mobile] as in the recorded lspci fixture (10de:2560).
    return Gpu(vendor="nvidia", index=index, name="GA106M [GeForce RTX 3060 Mobile / Max-Q]",
               pci=PciInfo(address="0000:01:00.0", vendor_id="10de", device_id="2560", kernel_driver=driver))


def test_no_gpu_only_when_the_pci_scan_ran() -> None:
    scanned = Machine(probes=[ProbeRun("pci", 1.0)])
    f = evaluate(scanned)
    assert [x.id for x in f] == ["no-gpu"] and f[0].severity == Severity.WARNING
    assert ids(Machine()) == []  # nothing known: no claim (e.g. a pasted traceback)
    assert "no-gpu" not in ids(Machine(probes=[ProbeRun("pci", 1.0, ok=False, error="boom")]))
    assert "no-gpu" not in ids(Machine(probes=[ProbeRun("pci", 1.0)], gpus=[Gpu(vendor="amd")]))


def test_nvidia_gpu_without_driver() -> None:
    m = Machine(probes=[ProbeRun("pci", 1.0)], gpus=[nvidia_pci_gpu()])
    f = [x for x in evaluate(m) if x.id == "nvidia-driver-missing"]
    assert f and f[0].severity == Severity.ERROR
    assert "gpusetup plan" in f[0].fix
    assert any("10de:2560" in e for e in f[0].evidence)


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.driver.versions.append(Reading("550.120", "/proc/driver/nvidia/version")),
        lambda m: setattr(m.gpus[0].pci, "kernel_driver", "nvidia"),
        lambda m: m.driver.modules.append(KernelModule("nvidia", loaded=False, available_for_running_kernel=True)),
        lambda m: m.packages.append("ii  nvidia-driver-550  550.120-0ubuntu0.24.04.1"),
    ],
)
def test_driver_missing_stays_quiet_when_a_driver_exists(change) -> None:  # noqa: ANN001
    m = Machine(probes=[ProbeRun("pci", 1.0)], gpus=[nvidia_pci_gpu()])
    change(m)
    assert "nvidia-driver-missing" not in ids(m)


def test_vfio_bound_gpu_is_info_not_error() -> None:
    m = Machine(probes=[ProbeRun("pci", 1.0)], gpus=[nvidia_pci_gpu("vfio-pci")])
    f = evaluate(m)
    assert [x.id for x in f] == ["gpu-reserved-for-vm"] and f[0].severity == Severity.INFO


def test_nouveau_bound_gpu_is_f08_not_driver_missing() -> None:
    m = Machine(probes=[ProbeRun("pci", 1.0)], gpus=[nvidia_pci_gpu("nouveau")])
    f = evaluate(m)
    assert [x.catalogue for x in f] == ["F08"]
    assert "blacklist nouveau" in f[0].fix


def test_nvml_failure_with_loaded_driver() -> None:
    m = Machine(driver=Driver(nvml_error="NVML returned an unexpected error (NVML_ERROR_UNKNOWN)",
                              versions=[Reading("550.120", "/proc/driver/nvidia/version")]))
    f = [x for x in evaluate(m) if x.id == "nvml-failed"]
    assert f and f[0].severity == Severity.ERROR and "550.120" in f[0].fix
    # A mismatch is explained by F09, not by the generic finding.
    m.driver.nvml_error = "Driver/library version mismatch"
    assert "nvml-failed" not in ids(m)


def test_module_library_mismatch_from_readings() -> None:
    m = Machine(driver=Driver(versions=[Reading("550.120", "/proc/driver/nvidia/version"),
                                        Reading("580.95.05", "nvml")]))
    f = [x for x in evaluate(m) if x.catalogue == "F09"]
    assert f and f[0].severity == Severity.ERROR
    assert "550.120" in f[0].title and "580.95.05" in f[0].title
    assert "reboot" in f[0].fix.lower()


def test_two_and_three_part_versions_are_the_same_driver() -> None:
    m = Machine(driver=Driver(versions=[Reading("570.124.06", "/proc/driver/nvidia/version"),
                                        Reading("570.124", "nvml")]))
    assert not [x for x in evaluate(m) if x.catalogue == "F09"]


def test_half_configured_packages_from_real_dpkg_output() -> None:
    lines = (FIXTURES / "linux-packages" /
             "dpkg-l-grep-nvidia__ubuntu-24.04__580-open-half-configured-iF-iU__mxochicale-code.txt"
             ).read_text(encoding="utf-8").splitlines()
    m = Machine(packages=[" ".join(ln.split()[:3]) for ln in lines])
    f = [x for x in evaluate(m) if x.catalogue == "F09"]
    assert f and "dpkg --configure -a" in f[0].fix
    assert any("iF" in e for e in f[0].evidence)
    healthy = (FIXTURES / "linux-packages" /
               "dpkg-l-grep-nvidia__ubuntu-24.04__550.120-before-upgrade__mxochicale-code.txt"
               ).read_text(encoding="utf-8").splitlines()
    assert not [x for x in evaluate(Machine(packages=healthy)) if x.catalogue == "F09"]


@pytest.mark.parametrize(
    ("value", "count", "visible", "stop"),
    [
        ("0,1", 2, 2, None),
        ("", 2, 0, "(empty)"),
        ("all", 2, 0, "all"),
        ("-1", 2, 0, "-1"),
        ("1", 1, 0, "1"),
        ("0,5,1", 2, 1, "5"),
        ("GPU-0000", 1, 1, None),
        ("7", None, 1, None),
    ],
)
def test_visible_devices_parser(value: str, count: int | None, visible: int, stop: str | None) -> None:
    assert parse_visible_devices(value, count, []) == (visible, stop)


def _gpus(n: int) -> list[Gpu]:
    return [Gpu(vendor="nvidia", index=i, name="NVIDIA GeForce RTX 3090") for i in range(n)]


def test_cuda_visible_devices_hiding_all_gpus() -> None:
    m = Machine(gpus=_gpus(1))
    m.cuda.env["CUDA_VISIBLE_DEVICES"] = "1"
    f = [x for x in evaluate(m) if x.catalogue == "F28"]
    assert f and f[0].severity == Severity.ERROR and "0–0" in f[0].fix
    m.cuda.env["CUDA_VISIBLE_DEVICES"] = "0"
    assert not [x for x in evaluate(m) if x.catalogue == "F28"]


def test_cuda_visible_devices_hiding_some_gpus() -> None:
    m = Machine(gpus=_gpus(3))
    m.cuda.env["CUDA_VISIBLE_DEVICES"] = "0,all,2"
    f = [x for x in evaluate(m) if x.catalogue == "F28"]
    assert f and f[0].severity == Severity.WARNING and "'all'" in f[0].title


def test_pytorch_suspend_hint_does_not_blame_cuda_visible_devices() -> None:
    text = (FIXTURES / "recorded-issues" / "F17__cuda-unknown-error-after-suspend__pytorch-88639.txt").read_text()
    m = Machine(messages=text.splitlines())
    assert not [x for x in evaluate(m) if x.catalogue == "F28"]


def test_hung_nvidia_smi_becomes_a_finding_and_the_report_goes_on() -> None:
    from gpusetup.probe import ProbeContext
    from gpusetup.probe.smi import probe as smi_probe

    runner = FakeRunner().add(["nvidia-smi"], Reply.hung(8.0))
    m = Machine()
    smi_probe(ProbeContext(runner=runner, timeout=8.0), m)
    f = [x for x in evaluate(m) if x.id == "nvidia-smi-hung"]
    assert f and f[0].severity == Severity.ERROR and "timed out" in f[0].evidence[0]


def test_nvml_timeout_is_the_same_hang_finding() -> None:
    from gpusetup.model import Evidence

    m = Machine(driver=Driver(nvml_error="timed out: NVML did not answer within 8 s.",
                              evidence=[Evidence("nvml", ok=False, error="timed out: NVML did not answer within 8 s.")],
                              versions=[Reading("550.120", "/proc/driver/nvidia/version")]))
    assert [f.id for f in evaluate(m)] == ["nvidia-smi-hung"]


def test_wsl_nvml_operating_system_error_is_f34() -> None:
    m = Machine(driver=Driver(nvml_error="The operating system blocked the request to the GPU."))
    m.system.wsl = True
    assert [f.catalogue for f in evaluate(m)] == ["F34"]


def test_cuinit_803_is_a_driver_mismatch() -> None:
    m = Machine(driver=Driver(cuinit_error="CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"))
    assert [f.catalogue for f in evaluate(m)] == ["F09"]


def test_empty_cuda_visible_devices_on_a_machine_without_nvidia_gpu_is_info() -> None:
    m = Machine(probes=[ProbeRun("pci", 1.0)], gpus=[Gpu(vendor="intel", name="UHD Graphics 630")])
    m.cuda.env["CUDA_VISIBLE_DEVICES"] = ""
    f = [x for x in evaluate(m) if x.catalogue == "F28"]
    assert f and f[0].severity == Severity.INFO
