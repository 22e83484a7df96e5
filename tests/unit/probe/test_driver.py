"""Kernel driver probe on the recorded /proc/driver/nvidia files, version choice and mismatch detection."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes.nvml import FakeNvml
from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.driver_readings import (
    LIBNVML_SOURCE,
    PROC_VERSION,
    SYS_VERSION,
    best_driver_version,
    driver_mismatch,
    same_version,
)
from gpusetup.model import Gpu, KernelModule, Machine, PciInfo, Reading
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.driver import parse_gpu_information, parse_proc_version
from gpusetup.probe.driver import probe as driver_probe

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc-driver"
VERSION_FILES = {
    "proc-driver-nvidia-version__open-kernel-module__515.43.04__archlinux__lutris-tests.txt": ("515.43.04", "open", "x86_64", "gcc version 12.1.0 (GCC)"),
    "proc-driver-nvidia-version__open-kernel-module__550.144.03__uv-tests.txt": ("550.144.03", "open", "x86_64", "gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)"),
    "proc-driver-nvidia-version__proprietary__375.74__uv-tests.txt": ("375.74", "proprietary", "x86_64", "gcc version 5.4.0 20160609 (Ubuntu 5.4.0-6ubuntu1~16.04.4)"),
    "proc-driver-nvidia-version__proprietary__460.39__ubuntu-18.04__mxochicale-code.txt": ("460.39", "proprietary", "x86_64", "gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)"),
    "proc-driver-nvidia-version__proprietary__525.105.17__ubuntu-22.04__lutris-tests.txt": ("525.105.17", "proprietary", "x86_64", "gcc version 11.3.0 (Ubuntu 11.3.0-1ubuntu1~22.04)"),
}  # fmt: skip
GPU_INFO = PROC / "proc-driver-nvidia-gpus-information__gtx-1660-super__uuid-placeholder__lutris-tests.txt"


def test_every_version_fixture_is_listed() -> None:
    assert sorted(p.name for p in PROC.glob("proc-driver-nvidia-version__*")) == sorted(VERSION_FILES)


@pytest.mark.parametrize("name", sorted(VERSION_FILES))
def test_parse_proc_version(name: str) -> None:
    pv = parse_proc_version((PROC / name).read_text())
    assert (pv.version, pv.flavour, pv.arch, pv.gcc) == VERSION_FILES[name]
    assert pv.error is None


def test_parse_proc_version_aarch64_and_bad_input() -> None:
    pv = parse_proc_version(
        "NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:25 UTC 2023\n"
    )
    assert (pv.version, pv.flavour, pv.arch) == ("535.104.05", "proprietary", "aarch64")
    assert parse_proc_version("").error and parse_proc_version("hello").version is None


def test_parse_gpu_information() -> None:
    info = parse_gpu_information(GPU_INFO.read_text())
    assert info["Model"] == "NVIDIA GeForce GTX 1660 SUPER"
    assert info["Bus Location"] == "0000:01:00.0" and info["Video BIOS"] == "90.16.48.00.aa"
    assert info["GPU UUID"] == "GPU-12345678-1234-1234-1234-1234567890ab" and info["GPU Excluded"] == "No"


@settings(max_examples=60, deadline=None, database=None)
@given(
    name=st.sampled_from(sorted(VERSION_FILES) + [GPU_INFO.name]),
    cut=st.floats(0, 1),
    junk=st.text(max_size=20),
    pos=st.floats(0, 1),
)
def test_truncated_and_garbled_never_raise(name: str, cut: float, junk: str, pos: float) -> None:
    text = (PROC / name).read_text()
    text = text[: int(len(text) * cut)]
    i = int(len(text) * pos)
    text = text[:i] + junk + text[i:]
    pv = parse_proc_version(text)
    assert pv.error is None or isinstance(pv.error, str)
    assert pv.version is None or pv.version[0].isdigit()
    assert isinstance(parse_gpu_information(text), dict)


# ------------------------------------------------------------------------------------ the probe


def _root(
    tmp_path: Path,
    version_file: str | None = None,
    sys_version: str | None = None,
    libs: tuple[str, ...] = (),
) -> Path:
    if version_file:
        d = tmp_path / "proc/driver/nvidia"
        d.mkdir(parents=True)
        shutil.copy(PROC / version_file, d / "version")
    if sys_version is not None:
        d = tmp_path / "sys/module/nvidia"
        d.mkdir(parents=True)
        (d / "version").write_text(sys_version + "\n")
    for lib in libs:
        d = tmp_path / "usr/lib/x86_64-linux-gnu"
        d.mkdir(parents=True, exist_ok=True)
        (d / lib).write_text("")
    return tmp_path


def _ctx(root: Path, platform: object | None = None) -> ProbeContext:
    ctx = ProbeContext(root=root)
    ctx._platform = platform if platform is not None else SimpleNamespace(kernel_modules=lambda c: [])
    return ctx


def test_probe_open_module(tmp_path: Path) -> None:
    root = _root(
        tmp_path, "proc-driver-nvidia-version__open-kernel-module__550.144.03__uv-tests.txt", "550.144.03"
    )
    m = Machine()
    driver_probe(_ctx(root), m)
    assert [(r.source, r.value) for r in m.driver.versions] == [
        (PROC_VERSION, "550.144.03"),
        (SYS_VERSION, "550.144.03"),
    ]
    (mod,) = m.driver.modules
    assert (mod.name, mod.loaded, mod.version, mod.flavour) == ("nvidia", True, "550.144.03", "open")
    assert m.driver.version == "550.144.03"
    assert driver_mismatch(m) is None
    assert m.driver.evidence[0].detail.startswith("NVRM version: NVIDIA UNIX Open Kernel Module")


def test_probe_proprietary_module_and_gpu_information(tmp_path: Path) -> None:
    root = _root(
        tmp_path, "proc-driver-nvidia-version__proprietary__525.105.17__ubuntu-22.04__lutris-tests.txt"
    )
    gdir = root / "proc/driver/nvidia/gpus/0000:01:00.0"
    gdir.mkdir(parents=True)
    shutil.copy(GPU_INFO, gdir / "information")
    m = Machine()
    pci_gpu = Gpu(vendor="nvidia", pci=PciInfo(address="0000:01:00.0", vendor_id="10de", device_id="21c4"))
    m.gpus.append(pci_gpu)
    driver_probe(_ctx(root), m)
    assert m.gpus == [pci_gpu]
    assert pci_gpu.name == "NVIDIA GeForce GTX 1660 SUPER" and pci_gpu.vbios == "90.16.48.00.aa"
    assert pci_gpu.pci.kernel_driver == "nvidia"
    assert m.driver.modules[0].flavour == "proprietary" and m.driver.version == "525.105.17"


def test_user_space_version_wins_and_mismatch_is_visible(tmp_path: Path) -> None:
    root = _root(
        tmp_path, "proc-driver-nvidia-version__proprietary__525.105.17__ubuntu-22.04__lutris-tests.txt"
    )
    m = Machine()
    m.driver.versions.append(Reading("535.54.03", "nvml"))
    driver_probe(_ctx(root), m)
    assert m.driver.version == "535.54.03"
    assert driver_mismatch(m) == ("525.105.17", "535.54.03")
    ev = m.driver.evidence[-1]
    assert not ev.ok and "525.105.17" in (ev.error or "") and "535.54.03" in (ev.error or "")


def test_mismatch_found_from_library_file_when_nvml_cannot_start(tmp_path: Path) -> None:
    """After a driver update without reboot NVML fails; the installed libnvidia-ml.so.<v> still tells."""
    root = _root(
        tmp_path,
        "proc-driver-nvidia-version__open-kernel-module__550.144.03__uv-tests.txt",
        libs=("libnvidia-ml.so.1", "libnvidia-ml.so.550.163.01"),
    )
    m = Machine()
    m.driver.versions.append(Reading(None, "nvml", error="Driver/library version mismatch"))
    driver_probe(_ctx(root), m)
    assert (LIBNVML_SOURCE, "550.163.01") in [(r.source, r.value) for r in m.driver.versions]
    assert driver_mismatch(m) == ("550.144.03", "550.163.01")
    assert m.driver.version == "550.144.03"  # what is running


def test_several_libraries_on_disk_give_no_single_answer(tmp_path: Path) -> None:
    root = _root(
        tmp_path,
        "proc-driver-nvidia-version__open-kernel-module__550.144.03__uv-tests.txt",
        libs=("libnvidia-ml.so.550.144.03", "libnvidia-ml.so.535.54.03"),
    )
    m = Machine()
    driver_probe(_ctx(root), m)
    assert driver_mismatch(m) is None


def test_best_version_order() -> None:
    m = Machine()
    m.driver.versions = [
        Reading("1.0", LIBNVML_SOURCE),
        Reading("2.0", PROC_VERSION),
        Reading("3.0", "nvidia-smi"),
    ]
    assert best_driver_version(m) == "3.0"
    m.driver.versions.append(Reading("4.0", "nvml"))
    assert best_driver_version(m) == "4.0"
    m.driver.versions = [Reading("12.8", "libcuda (cuDriverGetVersion)")]
    assert best_driver_version(m) is None  # a CUDA version is never taken for a driver version


def test_platform_kernel_modules_are_merged(tmp_path: Path) -> None:
    root = _root(
        tmp_path, "proc-driver-nvidia-version__open-kernel-module__515.43.04__archlinux__lutris-tests.txt"
    )
    platform = SimpleNamespace(
        kernel_modules=lambda ctx: [
            KernelModule(
                "nvidia", loaded=True, available_for_running_kernel=True, signer="DKMS module signing key"
            ),
            KernelModule("nouveau", loaded=False, available_for_running_kernel=True),
        ]
    )
    m = Machine()
    driver_probe(_ctx(root, platform), m)
    names = [mod.name for mod in m.driver.modules]
    assert names == ["nvidia", "nouveau"]
    nv = m.driver.modules[0]
    assert (nv.version, nv.flavour, nv.signer, nv.available_for_running_kernel) == (
        "515.43.04",
        "open",
        "DKMS module signing key",
        True,
    )


def test_platform_failures_are_tolerated(tmp_path: Path) -> None:
    def boom(ctx: ProbeContext) -> list[KernelModule]:
        raise RuntimeError("modinfo exploded")

    m = Machine()
    driver_probe(_ctx(tmp_path, SimpleNamespace(kernel_modules=boom)), m)
    assert not m.driver.evidence[0].ok and "modinfo exploded" in (m.driver.evidence[0].error or "")
    m2 = Machine()
    driver_probe(_ctx(tmp_path), m2)  # platform without kernel_modules, no /proc: nothing, no error
    assert m2.driver.modules == [] and m2.driver.evidence == [] and m2.driver.version is None


def test_unreadable_version_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _root(tmp_path, "proc-driver-nvidia-version__proprietary__375.74__uv-tests.txt")
    real_read = Path.read_text

    def deny(self: Path, *a: object, **k: object) -> str:
        if self.name == "version":
            raise PermissionError(13, "Permission denied")
        return real_read(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", deny)
    m = Machine()
    driver_probe(_ctx(root), m)
    assert m.driver.evidence[0].error == f"no permission to read {PROC_VERSION}"
    assert m.driver.version is None and m.driver.modules == []


def test_garbled_sys_version(tmp_path: Path) -> None:
    root = _root(tmp_path, sys_version="not-a-version")
    m = Machine()
    driver_probe(_ctx(root), m)
    assert m.driver.versions == [Reading(None, SYS_VERSION, error="unreadable version")]


F09 = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "recorded-issues"
    / "F09__nvml-driver-library-mismatch__tinygrad-open-gpu-kernel-modules-47.txt"
)


def test_driver_library_mismatch_end_to_end(tmp_path: Path) -> None:
    """Kernel module 550.144.03 running; NVML fails with the mismatch; nvidia-smi prints the real F09 text."""
    root = _root(
        tmp_path, "proc-driver-nvidia-version__open-kernel-module__550.144.03__uv-tests.txt", "550.144.03"
    )
    f09 = F09.read_text().split("\n", 1)[1]  # drop the recorded shell prompt line ("nvidia-smi")

    def no_libcuda(name: str) -> object:
        raise OSError(f"{name}: cannot open shared object file")

    runner = FakeRunner().add(["nvidia-smi"], Reply(stdout=f09, returncode=18))
    ctx = ProbeContext(
        root=root,
        runner=runner,
        nvml_factory=lambda: FakeNvml.init_fails("LIB_RM_VERSION_MISMATCH"),
        library_loader=no_libcuda,
        only=("nvml", "smi", "libcuda", "driver"),
    )
    ctx._platform = SimpleNamespace(libcuda_candidates=lambda c: ["libcuda.so.1"])
    m = detect(ctx)
    assert all(p.ok for p in m.probes)
    assert "Driver/library version mismatch" in (m.driver.nvml_error or "")
    smi = [r for r in m.driver.versions if r.source == "nvidia-smi"]
    assert smi[0].value == "570.124" and "Reboot" in (smi[0].error or "")
    assert driver_mismatch(m) == ("550.144.03", "570.124")
    assert m.driver.version == "550.144.03"  # the clean reading (the running module) wins
    assert m.gpus == []


def test_same_version() -> None:
    assert same_version("570.124", "570.124.06") and same_version("550.54.15", "550.54.15")
    assert not same_version("570.124", "570.133.07") and not same_version("550", "560")
