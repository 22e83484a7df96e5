"""Table-driven resolver tests: one machine per row, each expected answer citing the data fact it rests on.

``because`` names the compat table and row (resources/compat/<file>.json → tables → <table>) the expectation
follows from, so when a fact changes, the test that must change with it is easy to find.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve


def nv(name: str, cc: str | None = None, pci: str | None = None) -> dict[str, Any]:
    g: dict[str, Any] = {"vendor": "nvidia", "name": name}
    if cc:
        g["compute_capability"] = cc
    if pci:
        g["pci_id"] = pci
    return g


def amd(name: str, gfx: str) -> dict[str, Any]:
    return {"vendor": "amd", "name": name, "gfx": gfx}


def box(os: str = "linux", driver: str | None = None, py: str = "3.12", gpus: list | None = None, **kw: Any) -> dict[str, Any]:
    d = {"os": os, "arch": kw.pop("arch", "arm64" if os == "macos" else "x86_64"), "python": py, "driver": driver, "gpus": gpus or []}
    d.update(kw)
    return d


K80 = nv("Tesla K80", "3.7")
GTX780 = nv("NVIDIA GeForce GTX 780", "3.5")
GTX970 = nv("NVIDIA GeForce GTX 970", "5.2")
GTX750TI_M = nv("NVIDIA GeForce GTX 750 Ti", "5.0")
GTX1080TI = nv("NVIDIA GeForce GTX 1080 Ti", "6.1")
V100 = nv("Tesla V100-SXM2-16GB", "7.0")
T4 = nv("Tesla T4", "7.5")
RTX2080TI = nv("NVIDIA GeForce RTX 2080 Ti", "7.5")
RTX3060 = nv("NVIDIA GeForce RTX 3060", "8.6")
RTX3090 = nv("NVIDIA GeForce RTX 3090", "8.6")
A100 = nv("NVIDIA A100-SXM4-40GB", "8.0")
RTX4090 = nv("NVIDIA GeForce RTX 4090", "8.9")
H100 = nv("NVIDIA H100 80GB HBM3", "9.0")
RTX5090 = nv("NVIDIA GeForce RTX 5090", "12.0")
B300 = nv("NVIDIA B300", "10.3")
GB10 = nv("NVIDIA GB10", "12.1")
ORIN = nv("Orin (nvgpu)", "8.7")
THOR = nv("NVIDIA Thor", "11.0")
RX7900 = amd("Radeon RX 7900 XTX", "gfx1100")
RX6700 = amd("Radeon RX 6700 XT", "gfx1031")
RX9070 = amd("Radeon RX 9070 XT", "gfx1201")
MI300 = amd("AMD Instinct MI300X", "gfx942")
ARC = {"vendor": "intel", "name": "Intel Arc A770"}
UHD = {"vendor": "intel", "name": "Intel UHD Graphics 770"}
APPLE = {"vendor": "apple", "name": "Apple M2"}


@dataclass
class Case:
    id: str
    machine: dict[str, Any]
    framework: str
    because: str
    ok: bool
    variant: str | None = None  # choice.variant
    version: str | None = None  # choice.version
    gpu_variant: str | None = None  # gpu_choice.variant (None: must be absent when ok is False)
    gpu_version: str | None = None
    actions: list[str] = field(default_factory=list)  # kinds, in order
    min_version: str | None = None  # of the first action
    branch: str | None = None  # substring of the driver action's branch
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (option substring, reason substring)
    left_out: list[int] = field(default_factory=list)
    covered: list[int] | None = None
    notes: list[str] = field(default_factory=list)  # substrings of some note
    packages: list[str] = field(default_factory=list)  # exact entries of the relevant choice
    gpu: int | None = None
    python: str | None = None


CASES = [
    # ---------------------------------------------------------------- Kepler
    Case("kepler-k80-linux-470", box(driver="470.82.01", py="3.10", gpus=[K80]), "pytorch",
         "pytorch/arch_lists cu118 2.1–2.7 linux has 3.7; cuda_drivers/family_minimums major 11 linux 450.80.02",
         ok=True, variant="cu118", version="2.7",
         rejected=[("cu128 (torch 2.7–2.11)", "no kernels for compute capability 3.7"), ("cu126 (torch 2.7–2.14)", "needs NVIDIA driver ≥ 525.60.13")]),
    Case("kepler-k80-linux-no-driver", box(driver=None, py="3.10", gpus=[K80]), "pytorch",
         "driver_branches/legacy_branches Kepler last_branch 470; family_minimums 11 → 450.80.02",
         ok=False, variant="cpu", gpu_variant="cu118", gpu_version="2.7", actions=["install-driver"],
         min_version="450.80.02", branch="470"),
    Case("kepler-gtx780-cc35-torch-1.13", box(driver="470.82.01", py="3.10", gpus=[GTX780]), "pytorch",
         "pytorch/arch_lists: the 2.x builds have Kepler kernels only as sm_37, which does not run on 3.5; PyPI's torch "
         "1.13.1 (cu117) carries sm_35 cubins (cuobjdump on libtorch_cuda_cu.so, 2026-11-27) and supports Python 3.10",
         ok=True, variant="cu117", version="1.13", rejected=[("cu118", "no kernels for compute capability 3.5")]),
    Case("kepler-k80-windows-472", box(os="windows", driver="472.50", py="3.10", gpus=[K80]), "pytorch",
         "pytorch/arch_lists windows cu118 2.0–2.7 (3.7+PTX); family_minimums 11 windows 452.39",
         ok=True, variant="cu118", version="2.7"),
    Case("kepler-k80-tensorflow", box(driver="470.82.01", py="3.10", gpus=[K80]), "tensorflow",
         "tensorflow/arch_lists 2.17–2.21 cubins 6.0…9.0 (cuobjdump); min_cc 2.0–2.14 → 3.5; tested_configs 2.14 CUDA 11.8",
         ok=True, variant="and-cuda", version="2.14",
         rejected=[("and-cuda (tensorflow 2.17–2.21)", "no kernels for compute capability 3.7")]),
    Case("kepler-gk106-by-pci-id", box(driver="470.82.01", py="3.10", gpus=[{"vendor": "nvidia", "pci_id": "10de:11c7"}]), "pytorch",
         "gpu_chips GK106 → CC 3.0 (a Kepler sold as 'GTX 750 Ti'); no torch build has 3.0 kernels",
         ok=False, variant="cpu", rejected=[("cu118", "compute capability 3.0")], notes=["compute capability 3.0 (Kepler) from the chip rule on 'GK106 [GeForce GTX 750 Ti]'"]),
    # ---------------------------------------------------------------- Maxwell / Pascal / Volta
    Case("maxwell-gtx970-535", box(driver="535.104.05", gpus=[GTX970]), "pytorch",
         "pytorch/arch_lists cu126 2.8–2.14 has 5.0 (sm_50 cubin runs on 5.2); cu13x starts at 7.5",
         ok=True, variant="cu126", version="2.14"),
    Case("maxwell-gtx750ti-jax", box(driver="535.104.05", gpus=[GTX750TI_M]), "jax",
         "jax/extras cuda12 min_cc 5.2, cuda13 min_cc 7.5",
         ok=False, variant="cpu", rejected=[("cuda12", "compute capability ≥ 5.2")]),
    Case("pascal-1080ti-535", box(driver="535.104.05", gpus=[GTX1080TI]), "pytorch",
         "arch_lists cu130/cu132 start at 7.5; family_minimums 13 linux 580.65.06",
         ok=True, variant="cu126", version="2.14",
         rejected=[("cu130 (torch 2.14–2.15)", "no kernels for compute capability 6.1"), ("cu130", "needs NVIDIA driver ≥ 580.65.06"),
                   ("cu130", "you have 535.104.05")],
         packages=["torch==2.14.*", "torchvision==0.29.*"]),
    Case("pascal-1080ti-pci-only", box(driver="550.54.15", gpus=[{"vendor": "nvidia", "pci_id": "10de:1b06"}]), "pytorch",
         "gpu_chips GP102 → 6.1 via pcidb.classify_pci; arch_lists cu126 has 6.0 (runs on 6.1)",
         ok=True, variant="cu126", version="2.14", notes=["from the chip rule on 'GP102 [GeForce GTX 1080 Ti]'"]),
    Case("pascal-1080ti-linux-py39-cu128-lacks-61", box(driver="570.124.06", py="3.9", gpus=[GTX1080TI]), "pytorch",
         "pytorch/releases 2.8 is the newest for Python 3.9; arch_lists linux cu128 2.8 = 7.0…12.0 (no 6.x)",
         ok=True, variant="cu126", version="2.8", rejected=[("cu128 (torch 2.8)", "no kernels for compute capability 6.1"),
                                                            ("torch 2.9–2.14 (every build)", "needs Python ≥ 3.10")]),
    Case("pascal-1080ti-windows-py39-cu128-has-61", box(os="windows", driver="572.61", py="3.9", gpus=[GTX1080TI]), "pytorch",
         "arch_lists windows cu128 2.8 still lists 6.1 (Windows vs Linux wheel difference)",
         ok=True, variant="cu128", version="2.8", rejected=[("cu129 (torch 2.8)", "compute capability 6.1")]),
    Case("pascal-1080ti-windows-560", box(os="windows", driver="560.94", gpus=[GTX1080TI]), "pytorch",
         "arch_lists windows cu126 2.6–2.14 has 6.1; family_minimums 12 windows 528.33",
         ok=True, variant="cu126", version="2.14"),
    Case("pascal-1080ti-driver-418", box(driver="418.39", gpus=[GTX1080TI]), "pytorch",
         "family_minimums 11 → 450.80.02, 12 → 525.60.13; legacy_branches Maxwell/Pascal/Volta last branch 580",
         ok=False, variant="cpu", gpu_variant="cu126", gpu_version="2.14", actions=["upgrade-driver"], min_version="525.60.13",
         branch="580", rejected=[("cu126", "you have 418.39")]),
    Case("pascal-1080ti-tensorflow-cudnn-pin", box(driver="550.54.15", gpus=[GTX1080TI]), "tensorflow",
         "cudnn/legacy_pins: CC < 7.5 → nvidia-cudnn-cu12==9.10.2.21",
         ok=True, variant="and-cuda", version="2.21", packages=["tensorflow[and-cuda]==2.21.*", "nvidia-cudnn-cu12==9.10.2.21"]),
    Case("volta-v100-535", box(driver="535.104.05", gpus=[V100]), "pytorch",
         "arch_lists cu126 has 7.0; cu130/cu132 start at 7.5",
         ok=True, variant="cu126", version="2.14", rejected=[("cu132", "compute capability 7.0")]),
    Case("volta-v100-py39-570", box(driver="570.124.06", py="3.9", gpus=[V100]), "pytorch",
         "arch_lists linux cu129 2.8 = 7.0…12.0+PTX; newest CUDA variant preferred",
         ok=True, variant="cu129", version="2.8"),
    Case("volta-v100-jax-580", box(driver="580.95.05", gpus=[V100]), "jax",
         "jax/extras cuda13 min_cc 7.5; cudnn/legacy_pins for cuda12 on CC < 7.5",
         ok=True, variant="cuda12", version="0.12.0.1", packages=["jax[cuda12]==0.12.0.1", "nvidia-cudnn-cu12==9.10.2.21"],
         rejected=[("cuda13 (jax 0.12.0.1)", "compute capability ≥ 7.5")]),
    # ---------------------------------------------------------------- Turing / Ampere: driver boundaries
    Case("turing-2080ti-no-driver", box(driver=None, gpus=[RTX2080TI]), "pytorch",
         "family_minimums 13 linux 580.65.06; kernel_modules Turing+ → open",
         ok=False, variant="cpu", version="2.15", gpu_variant="cu132", gpu_version="2.15", actions=["install-driver"],
         min_version="580.65.06", branch="open kernel modules", rejected=[("cu132", "no NVIDIA driver is installed")]),
    Case("turing-t4-driver-470", box(driver="470.82.01", py="3.10", gpus=[T4]), "pytorch",
         "family_minimums 11 → 450.80.02 ≤ 470 < 525.60.13 (12.x)",
         ok=True, variant="cu118", version="2.7", rejected=[("cu126 (torch 2.7–2.14)", "needs NVIDIA driver ≥ 525.60.13")],
         notes=["With NVIDIA driver ≥ 580.65.06 you could use cu132 (torch 2.14)"]),
    Case("turing-t4-driver-450-51-below-family", box(driver="450.51.06", py="3.10", gpus=[T4]), "pytorch",
         "family_minimums 11 linux 450.80.02 > 450.51.06 (11.0 GA driver) rules out every CUDA 11+ build; PyPI's torch "
         "1.12.1 is a CUDA 10.2 build (torch/version.py) with sm_75 cubins (cuobjdump, 2026-11-27), which runs on 440.33+",
         ok=True, variant="cu102", version="1.12", rejected=[("cu118", "needs NVIDIA driver ≥ 450.80.02")]),
    Case("ampere-3090-driver-525-60-13-boundary", box(driver="525.60.13", gpus=[RTX3090]), "pytorch",
         "family_minimums 12 linux 525.60.13 (exactly met)",
         ok=True, variant="cu126", version="2.14"),
    Case("ampere-3090-driver-520", box(driver="520.61.05", gpus=[RTX3090]), "pytorch",
         "family_minimums 11 ≤ 520.61.05 < 12.x minimum 525.60.13",
         ok=True, variant="cu118", version="2.7"),
    Case("ampere-a100-driver-579", box(driver="575.57.08", gpus=[A100]), "pytorch",
         "family_minimums 13 linux 580.65.06 > 575.57.08",
         ok=True, variant="cu126", version="2.14", rejected=[("cu130 (torch 2.14–2.15)", "needs NVIDIA driver ≥ 580.65.06")]),
    Case("ampere-a100-driver-580", box(driver="580.65.06", gpus=[A100]), "pytorch",
         "family_minimums 13 linux 580.65.06 met; releases 2.15 cu132",
         ok=True, variant="cu132", version="2.15", packages=["torch==2.15.*"]),
    Case("ampere-3090-tensorflow-driver-470", box(driver="470.82.01", py="3.11", gpus=[RTX3090]), "tensorflow",
         "tested_configs 2.14 CUDA 11.8 (family 11 → 450.80.02); 2.15+ CUDA 12 → 525.60.13",
         ok=True, variant="and-cuda", version="2.14", rejected=[("and-cuda (tensorflow 2.15–2.21)", "needs NVIDIA driver ≥ 525.60.13")]),
    # ---------------------------------------------------------------- Ada / Hopper
    Case("ada-4090-windows-576", box(os="windows", driver="576.02", gpus=[RTX4090]), "pytorch",
         "family_minimums 13 windows 580.88 > 576.02; 12 windows 528.33",
         ok=True, variant="cu126", version="2.14", rejected=[("cu132", "needs NVIDIA driver ≥ 580.88")]),
    Case("ada-4090-windows-581", box(os="windows", driver="581.15", gpus=[RTX4090]), "pytorch",
         "arch_lists windows cu132 7.5…12.0 (sm_86 cubin runs on 8.9)",
         ok=True, variant="cu132", version="2.15"),
    Case("hopper-h100-py313", box(driver="550.54.15", py="3.13", gpus=[H100]), "pytorch",
         "releases 2.14 Python 3.10–3.15; arch_lists cu126 has 9.0",
         ok=True, variant="cu126", version="2.14"),
    # ---------------------------------------------------------------- Blackwell
    Case("blackwell-5090-driver-560", box(driver="560.35.03", gpus=[RTX5090]), "pytorch",
         "architecture_min_driver Blackwell 12.0 → 570.26; arch_lists cu126 ends at 9.0 without PTX",
         ok=False, variant="cpu", gpu_variant="cu132", gpu_version="2.15", actions=["upgrade-driver"], min_version="580.65.06",
         rejected=[("cu126", "no kernels for compute capability 12.0")]),
    Case("blackwell-5090-driver-570", box(driver="570.124.06", gpus=[RTX5090]), "pytorch",
         "arch_lists cu128 2.11 has 12.0; architecture_min_driver Blackwell 570.26",
         ok=True, variant="cu128", version="2.11", notes=["With NVIDIA driver ≥ 580.65.06 you could use cu132 (torch 2.15)"]),
    Case("blackwell-5090-windows-572", box(os="windows", driver="572.61", gpus=[RTX5090]), "pytorch",
         "arch_lists windows cu128 2.11 = 7.5…12.0; architecture_min_driver Blackwell windows 570.65",
         ok=True, variant="cu128", version="2.11"),
    Case("blackwell-5090-tensorflow-ptx-jit-fails", box(driver="580.95.05", gpus=[RTX5090]), "tensorflow",
         "tensorflow/arch_lists 2.16–2.21: cubins ≤ 9.0 + compute_90 PTX (cuobjdump); ptx_jit_failures 12.0: "
         "CUDA_ERROR_INVALID_PTX (tensorflow#101746); 2.15 and older: CUDA ≤ 12.2 predates 12.0, no PTX record",
         ok=False, variant="cpu", rejected=[("and-cuda (tensorflow 2.16–2.21)", "CUDA_ERROR_INVALID_PTX")]),
    Case("blackwell-ultra-b300-cc103", box(driver="580.95.05", gpus=[B300]), "pytorch",
         "arch_lists cu132 has 10.0 (sm_100 cubin runs on 10.3); architecture_min_driver 10.3 → 575.51.03",
         ok=True, variant="cu132", version="2.15"),
    Case("gb10-spark-aarch64", box(driver="580.95.05", arch="aarch64", gpus=[GB10]), "pytorch",
         "arch_lists aarch64 cu132 (2.15 row) has 12.0, runs on 12.1",
         ok=True, variant="cu132", version="2.15"),
    # ---------------------------------------------------------------- Jetson / aarch64
    Case("jetson-orin", box(driver=None, arch="aarch64", jetson=True, gpus=[ORIN]), "pytorch",
         "pytorch/jetson: Orin (8.7) does not use the SBSA wheels",
         ok=False, variant="cpu", rejected=[("cu132", "built for Arm servers (SBSA)")], notes=["JetPack"]),
    Case("jetson-thor", box(driver=None, arch="aarch64", jetson=True, gpus=[THOR]), "pytorch",
         "pytorch/jetson Thor sbsa_wheels true; arch_lists aarch64 cu132 has 11.0",
         ok=True, variant="cu132", version="2.15"),
    Case("jetson-orin-jax", box(driver=None, arch="aarch64", jetson=True, gpus=[ORIN]), "jax",
         "jax/platforms linux aarch64 is for SBSA servers; no Jetson data",
         ok=False, variant="cpu", rejected=[("cuda12", "Jetson")]),
    Case("aarch64-server-h100-old-release-data-missing", box(driver="580.95.05", arch="aarch64", py="3.9", gpus=[H100]), "pytorch",
         "arch_lists aarch64 cu124 2.5 = 9.0; no aarch64 rows for 2.6–2.8: not offered rather than guessed",
         ok=True, variant="cu124", version="2.5", rejected=[("cu126 (torch 2.6–2.8)", "no verified list")]),
    # ---------------------------------------------------------------- WSL2
    Case("wsl2-3060-560", box(driver="560.94", wsl=True, gpus=[RTX3060]), "pytorch",
         "WSL2 uses Windows driver numbers: family_minimums 12 windows 528.33, 13 windows 580.88; Linux wheels",
         ok=True, variant="cu126", version="2.14", rejected=[("cu132", "needs NVIDIA driver ≥ 580.88")]),
    Case("wsl2-3060-tensorflow-527", box(driver="527.41", wsl=True, gpus=[RTX3060]), "tensorflow",
         "tensorflow/wsl driver_min 528.33",
         ok=False, variant="cpu", gpu_variant="and-cuda", gpu_version="2.21", actions=["upgrade-driver"], min_version="528.33"),
    Case("wsl2-3060-jax-experimental", box(driver="560.94", wsl=True, gpus=[RTX3060]), "jax",
         "jax/platforms wsl2 experimental; extras cuda12 with family_minimums 12 windows 528.33",
         ok=True, variant="cuda12", version="0.12.0.1", notes=["experimental"]),
    # ---------------------------------------------------------------- native Windows
    Case("windows-tensorflow-py312-use-wsl2", box(os="windows", driver="581.15", gpus=[RTX4090]), "tensorflow",
         "tensorflow/gpu_builds: native-Windows GPU ends at 2.10 (Python ≤ 3.10)",
         ok=False, variant="cpu", gpu_variant="and-cuda", gpu_version="2.21", actions=["use-wsl2"],
         rejected=[("and-cuda (tensorflow 2.16–2.21)", "native Windows")]),
    Case("windows-tensorflow-py310-native-2.10", box(os="windows", driver="560.94", py="3.10", gpus=[RTX3060]), "tensorflow",
         "tensorflow/gpu_builds cuda11.2 windows 2.10 with conda cudatoolkit 11.2 / cuDNN 8.1",
         ok=True, variant="cuda11.2", version="2.10", notes=["WSL2"]),
    Case("windows-jax-use-wsl2", box(os="windows", driver="560.94", gpus=[RTX3060]), "jax",
         "jax/platforms windows nvidia no; wsl2 experimental",
         ok=False, variant="cpu", gpu_variant="cuda12", actions=["use-wsl2"]),
    # ---------------------------------------------------------------- macOS
    Case("macos-arm64-mps", box(os="macos", gpus=[APPLE]), "pytorch",
         "pytorch/platforms mps macos arm64 (default PyPI wheels)",
         ok=True, variant="mps", version="2.15", packages=["torch==2.15.*"]),
    Case("macos-arm64-tensorflow", box(os="macos", gpus=[APPLE]), "tensorflow",
         "tensorflow/gpu_builds: no macOS CUDA build; gpusetup plans only CUDA TF",
         ok=False, variant="cpu", rejected=[("TensorFlow GPU build", "only plans NVIDIA CUDA builds")]),
    Case("macos-x86-64", box(os="macos", arch="x86_64", py="3.11", gpus=[]), "pytorch",
         "pytorch/platforms cpu macos x86_64 torch ≤ 2.2",
         ok=False, variant="cpu", version="2.2"),
    # ---------------------------------------------------------------- AMD
    Case("amd-7900xtx-rocm", box(gpus=[RX7900]), "pytorch",
         "rocm/index_gfx rocm7.2 has gfx1100; pytorch/releases 2.13 rocm7.2 (2.14 ROCm index unknown)",
         ok=True, variant="rocm7.2", version="2.13"),
    Case("amd-rx6700xt-gfx1031", box(gpus=[RX6700]), "pytorch",
         "rocm/index_gfx: gfx1031 in no index, but rocm7.2 has gfx1030, whose kernels RDNA2 cards run with "
         "HSA_OVERRIDE_GFX_VERSION=10.3.0 (ROCm/ROCm#2353); the variable travels with the choice",
         ok=True, variant="rocm7.2", version="2.13", notes=["HSA_OVERRIDE_GFX_VERSION=10.3.0"]),
    Case("amd-9070xt-rdna4", box(gpus=[RX9070]), "pytorch",
         "rocm/index_gfx rocm7.2 has gfx1201",
         ok=True, variant="rocm7.2", version="2.13"),
    Case("amd-mi300x-py39", box(py="3.9", gpus=[MI300]), "pytorch",
         "releases 2.8 (newest for 3.9) rocm6.4; index_gfx rocm6.4 has gfx942",
         ok=True, variant="rocm6.4", version="2.8"),
    Case("amd-windows-no-rocm", box(os="windows", gpus=[RX7900]), "pytorch",
         "pytorch/platforms rocm linux x86_64 only; pytorch/directml: torch-directml runs on Windows",
         ok=True, variant="directml", version="0.2.5.dev240914", rejected=[("rocm7.2", "no ROCm build")]),
    # ---------------------------------------------------------------- Intel
    Case("intel-arc-xpu", box(gpus=[ARC]), "pytorch",
         "pytorch/platforms xpu linux from 2.5; releases 2.15 xpu",
         ok=True, variant="xpu", version="2.15"),
    Case("hybrid-nvidia-intel-igpu", box(driver="550.54.15", gpus=[UHD, RTX3060]), "pytorch",
         "NVIDIA is planned first; the Intel iGPU is left out with a reason (uv's xpu hazard)",
         ok=True, variant="cu126", version="2.14", left_out=[0], covered=[1], notes=["GPU 0 is not used"]),
    Case("hybrid-nvidia-no-driver-never-xpu", box(driver=None, gpus=[UHD, RTX3060]), "pytorch",
         "without an NVIDIA driver the plan is install-driver, not an xpu build for the iGPU",
         ok=False, variant="cpu", gpu_variant="cu132", actions=["install-driver"], left_out=[0]),
    # ---------------------------------------------------------------- mixed GPUs
    Case("mixed-1080ti-5090", box(driver="580.95.05", gpus=[GTX1080TI, RTX5090]), "pytorch",
         "no arch_lists row has both 6.x and 12.0 on Linux: the newest GPU is kept",
         ok=True, variant="cu132", version="2.15", covered=[1], left_out=[0], notes=["no build covers all GPUs together"]),
    Case("mixed-1080ti-5090-gpu0", box(driver="580.95.05", gpus=[GTX1080TI, RTX5090]), "pytorch",
         "--gpu 0 plans for the GTX 1080 Ti alone (arch_lists cu126)",
         ok=True, variant="cu126", version="2.14", covered=[0], left_out=[1], gpu=0),
    Case("blackwell-5090-py39-no-ptx-on-old-libs", box(driver="560.35.03", py="3.9", gpus=[RTX5090]), "pytorch",
         "cu124 2.4–2.6: PyPI's 2.5.1/2.6.0 cu124 wheels hold no PTX and no sm_120 cubin (cuobjdump, 2026-11-27; the "
         "data said 9.0+PTX before); architecture_min_driver Blackwell 570.26 for cu129 2.8",
         ok=False, variant="cpu", gpu_variant="cu129", gpu_version="2.8", actions=["upgrade-driver"], min_version="570.26",
         rejected=[("cu124 (torch 2.4–2.6)", "has no kernels for compute capability 12.0")]),
    Case("mixed-k80-4090-cu118-covers-both", box(driver="470.82.01", py="3.10", gpus=[K80, RTX4090]), "pytorch",
         "arch_lists cu118 has 3.7 and 8.6 (runs on 8.9), but architecture_min_driver Ada needs 520.61.05 > 470",
         ok=True, variant="cu118", version="2.7", covered=[0], left_out=[1]),
    Case("mixed-3090-a100", box(driver="550.54.15", gpus=[RTX3090, A100]), "pytorch",
         "arch_lists cu126 has 8.0 and 8.6",
         ok=True, variant="cu126", version="2.14", covered=[0, 1]),
    Case("mixed-nvidia-amd-default", box(driver="550.54.15", gpus=[RTX3090, RX7900]), "pytorch",
         "one install uses one vendor's build; NVIDIA first",
         ok=True, variant="cu126", left_out=[1], notes=["--gpu 1"]),
    Case("mixed-nvidia-amd-gpu1", box(driver="550.54.15", gpus=[RTX3090, RX7900]), "pytorch",
         "--gpu 1 plans the AMD GPU: rocm/index_gfx rocm7.2 gfx1100",
         ok=True, variant="rocm7.2", version="2.13", left_out=[0], gpu=1),
    # ---------------------------------------------------------------- pre-Kepler, unknown, none
    Case("fermi-gtx580", box(driver="390.157", gpus=[{"vendor": "nvidia", "name": "GF110 [GeForce GTX 580]"}]), "pytorch",
         "gpu_chips GF1xx → no CUDA support today",
         ok=False, variant="cpu", left_out=[0], notes=["no current CUDA release supports it"]),
    Case("no-gpu", box(gpus=[]), "pytorch", "no GPU: CPU build, said out loud",
         ok=False, variant="cpu", version="2.15", notes=["no GPU that a deep-learning framework can use was found"]),
    Case("unknown-cc-name-only", box(driver="580.95.05", gpus=[{"vendor": "nvidia", "name": "NVIDIA Mystery GPU"}]), "pytorch",
         "CC unknown: planned without the arch check, with a loud note",
         ok=True, variant="cu132", notes=["compute capability of GPU 0: NVIDIA Mystery GPU is unknown"]),
    # ---------------------------------------------------------------- Python too old / too new
    Case("python-38-4090", box(driver="550.54.15", py="3.8", gpus=[RTX4090]), "pytorch",
         "pytorch/releases 2.4 is the newest with Python 3.8; arch_lists cu124 2.4",
         ok=True, variant="cu124", version="2.4", rejected=[("torch 2.5–2.8 (every build)", "needs Python ≥ 3.9")]),
    Case("python-38-jax", box(driver="580.95.05", py="3.8", gpus=[RTX4090]), "jax",
         "jax/releases: 0.10.2 needs ≥ 3.11, 0.12.0.1 needs ≥ 3.12",
         ok=False, variant="cpu", gpu_variant="cuda13", gpu_version="0.12.0.1", actions=["change-python"], min_version="3.12"),
    Case("python-314-tensorflow", box(driver="580.95.05", py="3.14", gpus=[RTX4090]), "tensorflow",
         "tensorflow/tested_configs 2.21 Python 3.10–3.13",
         ok=False, variant="cpu", gpu_variant="and-cuda", gpu_version="2.21", actions=["change-python"], min_version="3.10",
         rejected=[("tensorflow 2.20–2.21 (every build)", "supports Python only up to 3.13")]),
    Case("python-310-torch-215-needs-311", box(driver="580.95.05", py="3.10", gpus=[RTX4090]), "pytorch",
         "pytorch/releases 2.15 python_min 3.11",
         ok=True, variant="cu132", version="2.14", rejected=[("torch 2.15 (every build)", "needs Python ≥ 3.11")]),
    Case("python-override-arg", box(driver="580.95.05", py="3.14", gpus=[RTX4090]), "tensorflow",
         "--python 3.12 replaces the profile's Python; tested_configs 2.21 supports 3.12",
         ok=True, variant="and-cuda", version="2.21", python="3.12"),
]


def _plan(case: Case):
    machine = machine_from_data(case.machine, case.id)
    (plan,) = resolve(machine, [case.framework], gpu_index=case.gpu, python_version=case.python)
    return plan


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_machine(case: Case) -> None:
    plan = _plan(case)
    ctx = f"{case.id} (because: {case.because})\nplan: {plan}"
    assert plan.ok is case.ok, ctx
    assert plan.choice is not None, ctx
    if case.variant:
        assert plan.choice.variant == case.variant, ctx
    if case.version:
        assert plan.choice.version == case.version, ctx
    if case.ok:
        assert plan.gpu_choice is None and not plan.actions, ctx
    elif case.gpu_variant:
        assert plan.gpu_choice is not None and plan.gpu_choice.variant == case.gpu_variant, ctx
        if case.gpu_version:
            assert plan.gpu_choice.version == case.gpu_version, ctx
    else:
        assert plan.gpu_choice is None, ctx
    assert [a.kind for a in plan.actions] == case.actions, ctx
    if case.min_version:
        assert plan.actions[0].min_version == case.min_version, ctx
    if case.branch:
        assert case.branch in (plan.actions[0].branch or ""), ctx
    for opt, why in case.rejected:
        assert any(opt in r.option and why in r.reason for r in plan.rejected), f"missing rejection {opt!r}: {why!r}\n{ctx}"
    if case.left_out:
        assert plan.gpus_left_out == case.left_out, ctx
    if case.covered is not None:
        assert plan.gpus_covered == case.covered, ctx
    for n in case.notes:
        assert any(n in note for note in plan.notes), f"missing note {n!r}\n{ctx}"
    chosen = plan.choice if case.ok or not case.gpu_variant else plan.gpu_choice
    for pkg in case.packages:
        assert pkg in chosen.packages, ctx


def test_at_least_40_machines_and_every_generation() -> None:
    assert len(CASES) >= 40
    ccs = {g.get("compute_capability") for c in CASES for g in c.machine["gpus"]}
    for cc in ("3.7", "5.2", "6.1", "7.0", "7.5", "8.6", "8.9", "9.0", "12.0"):  # Kepler → Blackwell
        assert cc in ccs


def test_every_rejection_has_a_reason_and_no_silent_cpu() -> None:
    for case in CASES:
        plan = _plan(case)
        assert all(r.option and len(r.reason) > 10 for r in plan.rejected), case.id
        if not plan.ok:
            # A CPU choice is always explained: a note says no GPU build works, and why.
            assert any("No GPU build" in n for n in plan.notes), case.id
