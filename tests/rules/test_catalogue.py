"""Catalogue rules on structured facts (what live detection fills): each fires on its signal, and stays
silent on the look-alike that is not a problem. Text-only signals are covered by test_recorded_issues."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusetup.model import (
    Driver,
    Ecc,
    FrameworkInstall,
    Gpu,
    KernelModule,
    Library,
    Machine,
    PipPackage,
    PythonEnv,
    Reading,
    Severity,
    Toolkit,
)
from gpusetup.rules import evaluate
from gpusetup.versions import ComputeCapability, Version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def cat(machine: Machine, code: str):  # noqa: ANN201 - list[Finding]
    return [f for f in evaluate(machine) if f.catalogue == code]


def with_fw(machine: Machine, *fws: FrameworkInstall) -> Machine:
    machine.python_envs.append(PythonEnv(executable="/usr/bin/python3", frameworks=list(fws)))
    return machine


def gpu(cc: str | None = None, name: str = "NVIDIA GeForce RTX 3090", **kw) -> Gpu:  # noqa: ANN003
    return Gpu(vendor="nvidia", index=0, name=name, compute_capability=cc, **kw)


def drv(version: str = "550.120", cuda: str | None = "12.4") -> Driver:
    return Driver(version=version, cuda_driver_version=cuda, nvml_version="12.550.120",
                  versions=[Reading(version, "nvml")])


# ------------------------------------------------------------------------------------------- A


def test_f01_driver_older_than_torch_cuda() -> None:
    m = with_fw(Machine(gpus=[gpu("8.6")], driver=drv("470.57.02", "11.4")),
                FrameworkInstall("torch", "2.4.0+cu121", build_cuda="12.1"))
    f = cat(m, "F01")
    assert f and f[0].severity == Severity.ERROR and "525.60.13" in f[0].fix  # CUDA 12 family minimum (data)
    ok = with_fw(Machine(gpus=[gpu("8.6")], driver=drv("550.120", "12.4")),
                 FrameworkInstall("torch", "2.4.0+cu121", build_cuda="12.1"))
    assert not cat(ok, "F01")
    minor = with_fw(Machine(gpus=[gpu("8.6")], driver=drv("535.54.03", "12.2")),
                    FrameworkInstall("torch", "2.6.0+cu124", build_cuda="12.4"))
    f = cat(minor, "F01")
    assert f and f[0].severity == Severity.INFO  # minor-version compatibility: works, with caveats


def test_f01_cuda_11_0_toolkit_minimum_is_not_a_false_alarm() -> None:
    """Driver 450.51.06 with a CUDA 11.0 build (real collect_env, pytorch#65480) is fine."""
    m = with_fw(Machine(gpus=[gpu("7.0")], driver=Driver(version="450.51.06")),
                FrameworkInstall("torch", "1.9.0a0", build_cuda="11.0"))
    assert not cat(m, "F01")
    m.driver.version = Version("418.40.04")
    assert cat(m, "F01")


def test_f02_and_f03_from_cuinit_errors() -> None:
    m = Machine(gpus=[gpu("7.5")], driver=drv("470.57.02", "12.1"))
    m.driver.cuinit_error = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
    f = cat(m, "F02")
    assert f and any("compat library is in use" in e for e in f[0].evidence)
    h = Machine(gpus=[gpu("9.0", "NVIDIA H100 80GB HBM3")], driver=drv("535.54.03", "12.2"))
    h.system.distro_id = "ubuntu"
    h.driver.cuinit_error = "CUDA_ERROR_SYSTEM_NOT_READY"
    f = cat(h, "F03")
    assert f and "nvidia-fabricmanager-535" in f[0].fix
    assert not cat(Machine(gpus=[gpu("9.0")], driver=drv()), "F03")


ARCH_124 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


@pytest.mark.parametrize(
    ("cc", "arches", "code"),
    [
        ("3.5", ARCH_124, "F04"),  # Tesla K40m on a wheel that starts at sm_50
        ("12.0", ARCH_124, "F05"),  # RTX 5090 on a wheel that stops at sm_90
        ("8.9", ARCH_124, None),  # Ada runs sm_86 SASS (same major, higher minor)
        ("8.6", ["sm_80"], None),
        ("9.0", ["sm_80", "compute_80"], None),  # PTX JIT covers newer GPUs
    ],
)
def test_f04_f05_arch_list(cc: str, arches: list[str], code: str | None) -> None:
    m = with_fw(Machine(gpus=[gpu(cc)], driver=drv()),
                FrameworkInstall("torch", "2.4.0+cu124", build_cuda="12.4", arch_list=arches))
    got = [f.catalogue for f in evaluate(m) if f.catalogue in ("F04", "F05")]
    assert got == ([code] if code else [])


def test_f05_from_build_cuda_when_the_arch_list_is_unknown() -> None:
    m = with_fw(Machine(gpus=[gpu("12.0", "NVIDIA GeForce RTX 5090")], driver=drv("570.86.10", "12.8")),
                FrameworkInstall("torch", "2.0.1+cu118", build_cuda="11.8"))
    f = cat(m, "F05")
    assert f and "12.0" in f[0].title
    ok = with_fw(Machine(gpus=[gpu("12.0")], driver=drv("570.86.10", "12.8")),
                 FrameworkInstall("torch", "2.7.0+cu128", build_cuda="12.8"))
    assert not cat(ok, "F05")


# ------------------------------------------------------------------------------------------- B


def test_f06_no_module_for_running_kernel() -> None:
    m = Machine(gpus=[gpu()])
    m.system.kernel = "6.8.0-49-generic"
    m.driver.modules.append(KernelModule("nvidia", loaded=False, available_for_running_kernel=False,
                                         dkms_status=["nvidia/550.120, 6.8.0-45-generic, x86_64: installed"]))
    f = cat(m, "F06")
    assert f and "linux-headers-$(uname -r)" in f[0].fix
    assert any("6.8.0-45" in e for e in f[0].evidence)


def test_f07_secure_boot_with_module_not_loaded() -> None:
    m = Machine(gpus=[gpu()])
    m.system.secure_boot, m.system.secure_boot_source = True, "EFI variable"
    m.driver.modules.append(KernelModule("nvidia", loaded=False, available_for_running_kernel=True,
                                         version="550.120"))
    f = cat(m, "F07")
    assert f and "mokutil --import /var/lib/dkms/mok.pub" in f[0].fix
    assert not cat(m, "F06")  # the more specific cause wins
    m.system.secure_boot = False
    assert not cat(m, "F07")


def test_f10_open_module_on_pascal() -> None:
    m = Machine(gpus=[gpu("6.1", "NVIDIA GeForce GT 1030")], driver=drv("560.35.03"))
    m.driver.modules.append(KernelModule("nvidia", loaded=True, flavour="open", version="560.35.03"))
    f = cat(m, "F10")
    assert f and "nvidia-driver-560" in f[0].fix
    m.gpus[0].compute_capability = ComputeCapability(8, 6)
    assert not cat(m, "F10")


def test_f11_legacy_gpu_on_a_newer_branch_from_compat_data() -> None:
    m = Machine(gpus=[gpu("6.1", "NVIDIA GeForce GTX 1050")], driver=drv("595.71.05", "13.2"))
    f = cat(m, "F11")
    assert f and "580" in f[0].fix
    m.driver = drv("580.95.05", "13.0")
    assert not cat(m, "F11")


# ------------------------------------------------------------------------------------------- C


def _real_xml_gpu(name: str) -> Gpu:
    from gpusetup.probe.smi import parse_smi_xml

    return parse_smi_xml((FIXTURES / "nvidia-smi-xml" / name).read_text(encoding="utf-8")).gpus[0]


def test_f15_idle_gen1_is_power_saving_but_busy_gen1_is_a_problem() -> None:
    g = _real_xml_gpu("geforce-rtx-3060-laptop__515.65.01__netdata.xml")
    assert g.pcie.gen_current == 1 and g.pcie.gen_max == 4 and g.utilization_gpu_pct == 0  # as recorded: idle
    assert not cat(Machine(gpus=[g]), "F15")
    g.utilization_gpu_pct = 97
    f = cat(Machine(gpus=[g]), "F15")
    assert f and f[0].severity == Severity.WARNING and "Gen1" in f[0].title


def test_f16_uncorrectable_ecc_and_pending_remap() -> None:
    g = _real_xml_gpu("a100-sxm4-80gb__535.54.03__telegraf.xml")
    assert not cat(Machine(gpus=[g]), "F16")
    g.ecc = Ecc(volatile_uncorrected=2)
    f = cat(Machine(gpus=[g]), "F16")
    assert f and f[0].severity == Severity.ERROR and "RMA" in f[0].fix
    g.ecc = Ecc(remapped_rows_pending=True)
    f = cat(Machine(gpus=[g]), "F16")
    assert f and f[0].severity == Severity.WARNING


def test_f17_f18_cuinit_errors_while_nvml_works() -> None:
    m = Machine(gpus=[gpu("8.6")], driver=drv())
    m.driver.cuinit_error = "CUDA_ERROR_UNKNOWN"
    assert cat(m, "F17") and not cat(m, "F18")
    m.driver.cuinit_error = "CUDA_ERROR_NOT_INITIALIZED"
    f = cat(m, "F18")
    assert f and "uvm_disable_hmm=1" in f[0].fix
    m.driver.nvml_error, m.driver.nvml_version = "Driver Not Loaded", None  # NVML down too: not these two
    assert not cat(m, "F18")


# ------------------------------------------------------------------------------------------- D


def test_f19_cpu_torch_with_nvidia_gpu() -> None:
    m = with_fw(Machine(gpus=[gpu("8.6")], driver=drv()), FrameworkInstall("torch", "2.5.1+cpu"))
    f = cat(m, "F19")
    assert f and "download.pytorch.org/whl/" in f[0].fix
    no_gpu = with_fw(Machine(), FrameworkInstall("torch", "2.5.1+cpu"))
    assert not cat(no_gpu, "F19")
    mac = with_fw(Machine(gpus=[gpu()]), FrameworkInstall("torch", "2.5.1"))
    mac.system.os = "macos"
    assert not cat(mac, "F19")


def test_f20_conda_cpu_build() -> None:
    m = with_fw(Machine(gpus=[gpu("7.5")], driver=drv()),
                FrameworkInstall("torch", "1.4.0", installer="conda", build="py3.7_cpu_0"))
    f = cat(m, "F20")
    assert f and f[0].severity == Severity.ERROR and "cpuonly" in f[0].fix
    assert not cat(m, "F19")


def test_f22_missing_libraries_from_a_framework_error() -> None:
    fw = FrameworkInstall("tensorflow", "2.15.0", error="Could not load dynamic library 'libcudnn.so.8'; dlerror: "
                          "libcudnn.so.8: cannot open shared object file: No such file or directory")
    f = cat(with_fw(Machine(gpus=[gpu()]), fw), "F22")
    assert f and "tensorflow[and-cuda]" in f[0].fix and "libcudnn.so.8" in f[0].title


def test_f23_several_cudnn_copies_is_only_info() -> None:
    m = Machine()
    m.cuda.libraries += [Library("libcudnn", "8.9.7", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "ldconfig"),
                         Library("libcudnn", "9.1.0", "/venv/nvidia/cudnn/lib/libcudnn.so.9", "pip wheel")]
    f = cat(m, "F23")
    assert f and f[0].severity == Severity.INFO


def test_f24_tensorflow_on_native_windows() -> None:
    m = with_fw(Machine(gpus=[gpu()]), FrameworkInstall("tensorflow", "2.16.1"))
    m.system.os = "windows"
    assert cat(m, "F24")
    m.system.wsl = True
    assert not cat(m, "F24")
    old = with_fw(Machine(gpus=[gpu()]), FrameworkInstall("tensorflow", "2.10.1"))
    old.system.os = "windows"
    assert not cat(old, "F24")


def test_f25_jax_without_plugin() -> None:
    m = with_fw(Machine(gpus=[gpu()], driver=drv("550.120", "12.4")),
                FrameworkInstall("jax", "0.4.30"), FrameworkInstall("jaxlib", "0.4.30"))
    m.system.os = "linux"
    f = cat(m, "F25")
    assert f and 'jax[cuda12]' in f[0].fix
    m.driver = drv("580.95.05", "13.0")
    assert 'jax[cuda13]' in cat(m, "F25")[0].fix
    m.cuda.nvidia_wheels.append(PipPackage("jax-cuda13-plugin", "0.4.30"))
    assert not cat(m, "F25")


def test_f26_system_cuda_on_ld_library_path_with_pip_wheels() -> None:
    m = Machine()
    m.cuda.env["LD_LIBRARY_PATH"] = "/usr/local/cuda-11.2/lib64:/opt/ros/lib"
    m.cuda.nvidia_wheels.append(PipPackage("nvidia-cublas-cu11", "11.10.3.66"))
    f = cat(m, "F26")
    assert f and f[0].severity == Severity.INFO and "/usr/local/cuda-11.2/lib64" in f[0].fix


def test_f27_toolkit_major_differs_from_torch() -> None:
    m = with_fw(Machine(), FrameworkInstall("torch", "2.3.1+cu118", build_cuda="11.8"))
    m.cuda.toolkits += [Toolkit("/usr/local/cuda-12.4", "12.4.131", "CUDA_HOME"),
                        Toolkit("/usr/local/cuda-11.8", "11.8.89", "/usr/local/cuda-*")]
    f = cat(m, "F27")
    assert f and f[0].severity == Severity.INFO and "CUDA_HOME=/usr/local/cuda-11.8" in f[0].fix
    same = with_fw(Machine(), FrameworkInstall("torch", "2.3.1+cu118", build_cuda="11.8"))
    same.cuda.toolkits.append(Toolkit("/usr/local/cuda-11.8", "11.8.89", "nvcc on PATH"))
    assert not cat(same, "F27")


# ------------------------------------------------------------------------------------------- E-G


def test_f29_docker_without_nvidia_runtime() -> None:
    m = Machine(gpus=[gpu()], driver=drv())
    m.containers.docker, m.containers.docker_daemon_reachable = "27.3.1", True
    m.containers.nvidia_runtime_registered = False
    f = cat(m, "F29")
    assert f and "nvidia-ctk runtime configure" in f[0].fix
    m.containers.nvidia_runtime_registered = True
    assert not cat(m, "F29")
    m.containers.nvidia_runtime_registered, m.containers.cdi_specs = False, ["/etc/cdi/nvidia.yaml"]
    assert not cat(m, "F29")


def test_f30_toolkit_error() -> None:
    m = Machine()
    m.containers.toolkit_error = ("nvidia-container-cli: initialization error: load library failed: "
                                  "libnvidia-ml.so.1: cannot open shared object file: no such file or directory")
    assert cat(m, "F30")


def test_f31_unknown_error_only_inside_a_container() -> None:
    m = Machine(driver=Driver(nvml_error="Unknown Error"))
    m.system.container = "docker"
    assert cat(m, "F31")
    bare = Machine(driver=Driver(nvml_error="Unknown Error", versions=[Reading("550.120", "/proc/driver/nvidia/version")]))
    assert not cat(bare, "F31")
    assert [f.id for f in evaluate(bare)] == ["nvml-failed"]


def test_f32_container_without_compute_capability() -> None:
    m = Machine()
    m.system.container = "docker"
    m.cuda.env["NVIDIA_DRIVER_CAPABILITIES"] = "utility"
    assert cat(m, "F32")
    m.cuda.env["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility"
    assert not cat(m, "F32")


def test_f33_wsl_without_libcuda_on_the_loader_path() -> None:
    m = Machine()
    m.system.wsl = True
    m.cuda.libraries.append(Library("libcudart", "12.4.127", "/usr/local/cuda/lib64/libcudart.so.12", "ldconfig"))
    f = cat(m, "F33")
    assert f and f[0].severity == Severity.ERROR and "/usr/lib/wsl/lib" in f[0].fix
    m.cuda.libraries.append(Library("libcuda", "1", "/usr/lib/wsl/lib/libcuda.so.1", "ldconfig"))
    assert not cat(m, "F33")


def test_f34_linux_driver_inside_wsl() -> None:
    m = Machine(driver=Driver(nvml_error="GPU access blocked by the operating system"),
                packages=["ii  nvidia-utils-510  510.108.03-0ubuntu0.22.04.1"])
    m.system.wsl = True
    f = cat(m, "F34")
    assert f and f[0].severity == Severity.ERROR and "apt remove" in f[0].fix
    assert not [x for x in evaluate(m) if x.id == "nvml-failed"]


def test_f06_needs_an_installed_driver() -> None:
    """A machine with no NVIDIA driver at all has the module 'not loaded, not available': that is
    'driver missing', not 'module missing for this kernel'."""
    from gpusetup.model import PciInfo, ProbeRun

    m = Machine(probes=[ProbeRun("pci", 1.0)],
                gpus=[Gpu(vendor="nvidia", pci=PciInfo(address="0000:01:00.0", vendor_id="10de", device_id="2204"))])
    m.driver.modules.append(KernelModule("nvidia", loaded=False, available_for_running_kernel=False))
    assert [f.id for f in evaluate(m)] == ["nvidia-driver-missing"]


def test_f16_lifetime_errors_only_are_info() -> None:
    g = gpu("8.0", "NVIDIA A100-SXM4-80GB", ecc=Ecc(aggregate_uncorrected=3, volatile_uncorrected=0))
    f = cat(Machine(gpus=[g]), "F16")
    assert f and f[0].severity == Severity.INFO


def test_f29_without_any_toolkit_is_only_info() -> None:
    m = Machine(gpus=[gpu()], driver=drv())
    m.containers.docker, m.containers.docker_daemon_reachable = "27.3.1", True
    m.containers.nvidia_runtime_registered = False
    assert cat(m, "F29")[0].severity == Severity.INFO
    m.containers.toolkit_version = "1.17.3"
    assert cat(m, "F29")[0].severity == Severity.WARNING


def test_wsl_text_signals_ignored_when_detection_says_not_wsl() -> None:
    fw = FrameworkInstall("torch", "2.5.1+cu124", build_cuda="12.4",
                          error="OSError: libcuda.so.1: cannot open shared object file: No such file or directory")
    m = with_fw(Machine(messages=["looked for libcuda.so.1 in /usr/lib/wsl/lib"]), fw)
    assert cat(m, "F33")  # pasted text, WSL unknown: the path is a hint
    m.system.wsl = False
    assert not cat(m, "F33")


def test_container_text_hints_ignored_when_detection_says_no_container() -> None:
    from gpusetup.model import ProbeRun

    m = Machine(messages=["Failed to initialize NVML: Unknown Error",
                          "inside a container, start it with the NVIDIA runtime"])
    assert cat(m, "F31")  # pasted text: container context from the words
    m.probes.append(ProbeRun("system", 1.0))  # live detection ran and found no container
    assert not cat(m, "F31")
