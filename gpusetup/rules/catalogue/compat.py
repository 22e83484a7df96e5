"""Catalogue A — driver ↔ CUDA compatibility (F01–F05)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpusetup.messages import msg
from gpusetup.model import Finding, FrameworkInstall, Machine, Message, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    arch_supports,
    build_cuda,
    driver_branch,
    driver_version,
    frameworks,
    gpu_label,
    grep,
    is_windows,
    joined_text,
    make,
    min_driver_for_cuda,
    search,
    strip_log_prefix,
    toolkit_cc_ranges,
    torch_installs,
    ver,
)
from gpusetup.versions import ComputeCapability, Version

# ------------------------------------------------------------------------------------------- F01

_F01_TEXT = re.compile(
    r"driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver|"
    r"NVIDIA driver on your system is too old|cudart init failure: 35|CUDA failure 35\b|"
    r"cuda runtime error \(35\)|error=35\b|CUDA_ERROR_INSUFFICIENT_DRIVER",
    re.IGNORECASE,
)


def _cuda_str(v: int) -> Version:
    """cuDriverGetVersion integer 11040 → 11.4."""
    return Version(f"{v // 1000}.{(v % 1000) // 10}")


@rule("driver-too-old-for-cuda", catalogue="F01")
def driver_too_old(machine: Machine) -> list[Finding]:
    driver_cuda = machine.driver.cuda_driver_version
    m = search(machine, r"too old \(found version (\d{4,5})\)")
    if m and not driver_cuda:
        driver_cuda = _cuda_str(int(m.group(1)))
    dv = driver_version(machine)
    win = is_windows(machine)
    evidence = grep(machine, _F01_TEXT, 3)
    consumers: list[tuple[FrameworkInstall, Version]] = []
    for fw in frameworks(machine, "torch", "tensorflow", "jaxlib", "cupy", "onnxruntime", "onnxruntime-gpu"):
        bc = build_cuda(fw)
        if bc:
            consumers.append((fw, bc))
    out: list[Finding] = []
    hard: list[str] = []
    soft: list[str] = []
    need: Version | None = None
    for fw, bc in consumers:
        b, d = bc, driver_cuda
        if b and d and b > d:
            if (b.major or 0) > (d.major or 0) or (b.major or 0) < 11:
                hard.append(f"{fw.name} {fw.version or ''} is built for CUDA {bc}; the driver supports up to CUDA {driver_cuda}")
                need = bc if need is None or bc > need else need
            else:
                soft.append(f"{fw.name} {fw.version or ''} is built for CUDA {bc}; the driver supports CUDA {driver_cuda}")
        elif b and not d and dv:
            minimum = min_driver_for_cuda(bc, win)
            if minimum and dv and dv < Version(minimum):
                hard.append(f"{fw.name} {fw.version or ''} needs driver {minimum}+ for CUDA {bc}; installed driver is {dv}")
                need = bc
    if evidence or hard:
        minimum = min_driver_for_cuda(need, win) if need else None
        have = f"driver {dv}" if dv else "the installed driver"
        if driver_cuda:
            have += f" (supports CUDA up to {driver_cuda})"
        older = msg("fix.driver-too-old-for-cuda.or-older", cuda=str(driver_cuda)) if driver_cuda else None
        fix = msg("fix.driver-too-old-for-cuda",
                  to=msg("fix.driver-too-old-for-cuda.to", minimum=minimum) if minimum else
                  msg("fix.driver-too-old-for-cuda.to-branch"), older=older)
        if machine.system.wsl:
            # In WSL2 the driver is the Windows one; a Linux driver inside the distribution is never the fix.
            fix = msg("fix.driver-too-old-for-cuda.wsl", older=older)
        out.append(
            make(
                "driver-too-old-for-cuda",
                Severity.ERROR,
                "The NVIDIA driver is too old for the CUDA version this software was built with",
                f"The program was built with a newer CUDA than {have} can run, so CUDA refuses to start "
                "('CUDA driver version is insufficient for CUDA runtime version', error 35).",
                fix,
                evidence + hard + ([f"driver {dv}"] if dv and not hard else []),
                to_be_sure=None if (dv or driver_cuda) and (hard or consumers) else msg("sure.driver-too-old-for-cuda"),
            )
        )
    elif soft:
        out.append(
            make(
                "driver-older-than-cuda-minor",
                Severity.INFO,
                "The driver is a little older than the CUDA version your framework was built with",
                "CUDA minor-version compatibility lets this work, but features that compile PTX at run time "
                "(some custom kernels, Triton) can fail with 'unsupported PTX version'.",
                msg("fix.driver-older-than-cuda-minor"),
                soft,
            )
        )
    return out


# ------------------------------------------------------------------------------------------- F02

_F02_TEXT = re.compile(
    r"forward compatibility was attempted on non supported HW|cudaErrorCompatNotSupportedOnDevice|"
    r"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE|Error 804\b",
    re.IGNORECASE,
)


@rule("forward-compat-unsupported", catalogue="F02")
def forward_compat(machine: Machine) -> list[Finding]:
    lines = grep(machine, _F02_TEXT, 3)
    if (machine.driver.cuinit_error or "").upper() == "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE":
        lines.append(f"cuInit: {machine.driver.cuinit_error}")
    compat_libs = [lib.path for lib in machine.cuda.libraries if lib.path and "/compat/" in lib.path
                   and "libcuda" in lib.name]
    if not lines:
        return []
    dv, dc = driver_version(machine), machine.driver.cuda_driver_version
    detail = (
        "A CUDA 'forward compatibility' library (cuda-compat, usually /usr/local/cuda/compat/libcuda.so) is "
        "being used to run a CUDA version newer than the installed driver. That only works on data-center GPUs; "
        "GeForce and most workstation cards refuse with error 804."
    )
    ev = list(lines)
    if dv and dc:
        native_min = min_driver_for_cuda(dc)
        if native_min and dv and ver(native_min) and dv < ver(native_min):
            ev.append(f"driver {dv} reports CUDA {dc}, which needs driver {native_min}+ natively: a compat library is in use")
    ev.extend(f"compat library: {p}" for p in compat_libs)
    return [
        make(
            "forward-compat-unsupported",
            Severity.ERROR,
            "CUDA's forward-compatibility library is in use on a GPU that does not support it (error 804)",
            detail,
            msg("fix.forward-compat-unsupported",
                for_cuda=msg("fix.forward-compat-unsupported.for-cuda", cuda=str(dc), driver=min_driver_for_cuda(dc))
                if dc and min_driver_for_cuda(dc) else None),
            ev,
            to_be_sure=None if dv else msg("sure.forward-compat-unsupported"),
        )
    ]


# ------------------------------------------------------------------------------------------- F03

_F03_TEXT = re.compile(
    r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|"
    r"init failure: 802|Error 802\b|error \(802\)",
    re.IGNORECASE,
)


@rule("fabric-manager-missing", catalogue="F03")
def fabric_manager(machine: Machine) -> list[Finding]:
    lines = grep(machine, _F03_TEXT, 3)
    if (machine.driver.cuinit_error or "").upper() == "CUDA_ERROR_SYSTEM_NOT_READY":
        lines.append(f"cuInit: {machine.driver.cuinit_error}")
    if not lines:
        return []
    dv, branch = driver_version(machine), driver_branch(machine)
    distro = (machine.system.distro_id or "").lower()
    like = [d.lower() for d in machine.system.distro_like]
    if distro in ("rhel", "rocky", "almalinux", "centos", "fedora") or "rhel" in like or "fedora" in like:
        install = msg("fix.fabric-manager-missing.dnf")
    else:
        install = msg("fix.fabric-manager-missing.apt", branch=branch) if branch else \
            msg("fix.fabric-manager-missing.apt-unknown")
    return [
        make(
            "fabric-manager-missing",
            Severity.ERROR,
            "CUDA waits for NVIDIA Fabric Manager, which is not running (error 802)",
            "On servers whose GPUs are connected through NVSwitch (HGX/DGX A100, H100, H200, B200…) CUDA starts "
            "only after the nvidia-fabricmanager service has set up the GPU fabric. Its version must match the "
            "driver exactly.",
            msg("fix.fabric-manager-missing", driver=str(dv) if dv else msg("fix.fabric-manager-missing.your-driver"),
                install=install),
            lines + ([f"driver {dv}"] if dv else []),
            to_be_sure=None if dv else msg("sure.fabric-manager-missing"),
        )
    ]


# --------------------------------------------------------------------------------------- F04/F05


@dataclass
class _ArchVerdict:
    kind: str  # old / new / unknown
    gpu: str
    cc: ComputeCapability | None = None
    arches: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    fw: FrameworkInstall | None = None
    gpu_index: int | None = None


_OLD_WARN = re.compile(r"Found GPU(\d+) ([^\n]{1,120}?) which is of cuda capability (\d+)\.(\d+)", re.IGNORECASE)
_NOT_COMPAT = re.compile(r"([^\n]{1,160}?) with CUDA capability sm_(\d+) is not compatible with the current PyTorch",
                         re.IGNORECASE)
_SUPPORTS = re.compile(r"supports CUDA capabilities ((?:sm_\d+\w*\s*)+)", re.IGNORECASE)
_NO_KERNEL = re.compile(
    r"no kernel image is available for execution|cudaErrorNoKernelImageForDevice|"
    r"CUDA_ERROR_NO_BINARY_FOR_GPU|error=48\b|error \(48\)",
    re.IGNORECASE,
)


def _highest_cc_for_cuda(cuda: Version | None) -> ComputeCapability | None:
    mm = cuda.major_minor if cuda else None
    if mm is None:
        return None
    return next((hi for first, last, _, hi in toolkit_cc_ranges()
                 if first.major_minor and last.major_minor and first.major_minor <= mm <= last.major_minor), None)


def arch_verdicts(machine: Machine) -> list[_ArchVerdict]:
    """Which GPUs a framework build cannot run on, and whether the GPU is too old or too new for it."""
    out: list[_ArchVerdict] = []
    torches = torch_installs(machine)
    for gpu in machine.nvidia_gpus:
        cc = gpu.compute_capability
        if cc is None:
            continue
        for fw in torches:
            if fw.arch_list:
                ok = arch_supports(cc, fw.arch_list)
                if ok is False:
                    lowest = min((t for t in (ComputeCapability.parse(a) for a in fw.arch_list) if t), default=None)
                    kind = "old" if lowest and cc < lowest else "new"
                    out.append(_ArchVerdict(kind, gpu_label(gpu), cc, list(fw.arch_list),
                                            [f"{gpu_label(gpu)}: compute capability {gpu.compute_capability}",
                                             f"{fw.name} {fw.version or ''} arch list: {' '.join(fw.arch_list)}"],
                                            fw, gpu.index))
                continue
            hi = _highest_cc_for_cuda(build_cuda(fw))
            if hi and cc > hi:
                out.append(_ArchVerdict("new", gpu_label(gpu), cc, [],
                                        [f"{gpu_label(gpu)}: compute capability {gpu.compute_capability}",
                                         f"{fw.name} {fw.version or ''} is built with CUDA {build_cuda(fw)}, "
                                         f"which targets GPUs up to compute capability {hi}"],
                                        fw, gpu.index))
    # Literal PyTorch warnings (cheap substring test first: these regexes are costly on long logs).
    text = joined_text(machine).lower()
    for ln in grep(machine, _OLD_WARN, 4) if "which is of cuda capability" in text else []:
        m = _OLD_WARN.search(ln)
        if m:
            out.append(_ArchVerdict("old", strip_log_prefix(m.group(2)), ComputeCapability(int(m.group(3)), int(m.group(4))), [],
                                    [ln] + grep(machine, r"no longer supports this GPU|" + _NO_KERNEL.pattern, 2)))
    for ln in grep(machine, _NOT_COMPAT, 4) if "is not compatible with the current pytorch" in text else []:
        m = _NOT_COMPAT.search(ln)
        if not m:
            continue
        dev = ComputeCapability.parse(m.group(2))
        sup = search(machine, _SUPPORTS)
        arches = sup.group(1).split() if sup else []
        lowest = min((t for t in (ComputeCapability.parse(a) for a in arches) if t), default=None)
        kind = "old" if dev and lowest and dev < lowest else "new"
        ev = [ln] + ([sup.group(0).strip()] if sup else []) + grep(machine, _NO_KERNEL, 1)
        out.append(_ArchVerdict(kind, strip_log_prefix(m.group(1)).lstrip("\"'`: "),
                                dev, arches, ev))
    if not out:
        lines = grep(machine, _NO_KERNEL, 2)
        if lines:
            out.append(_ArchVerdict("unknown", "this GPU", None, [], lines))
    return out


def _arch_fix(v: _ArchVerdict, kind: str) -> Message:
    if v.kind == "unknown":
        # which way to go depends on the GPU: never tell the owner of a new GPU to install an older release
        return msg("fix.gpu-arch-unknown")
    if kind == "new":
        return msg("fix.gpu-too-new-for-build", cc=str(v.cc or "<cc>"))
    return msg("fix.gpu-too-old-for-build", cc=str(v.cc or "<cc>"))


@rule("gpu-too-old-for-build", catalogue="F04")
def gpu_too_old(machine: Machine) -> list[Finding]:
    out = []
    for v in arch_verdicts(machine):
        if v.kind == "new":
            continue
        if v.kind == "old":
            title = f"{v.gpu} (compute capability {v.cc}) is too old for the installed framework build"
            detail = (
                "The framework ships GPU code only for newer architectures"
                + (f" ({' '.join(v.arches)})" if v.arches else "")
                + ", so every GPU operation fails with 'no kernel image is available for execution on the device'."
            )
            sure = None
        else:
            title = "The installed framework has no GPU code for this GPU's architecture"
            detail = ("'no kernel image is available' means the framework was built without code for this GPU: "
                      "either the GPU is older than the build supports, or newer.")
            sure = msg("sure.gpu-too-old-for-build")
        out.append(make("gpu-too-old-for-build", Severity.ERROR, title, detail, _arch_fix(v, "old"), v.evidence,
                        gpu_index=v.gpu_index, to_be_sure=sure,
                        params={"gpu": v.gpu, "cc": v.cc} if v.kind == "old" else None))
    return out[:4]


@rule("gpu-too-new-for-build", catalogue="F05")
def gpu_too_new(machine: Machine) -> list[Finding]:
    out = []
    for v in arch_verdicts(machine):
        if v.kind != "new":
            continue
        out.append(
            make(
                "gpu-too-new-for-build",
                Severity.ERROR,
                f"{v.gpu} (compute capability {v.cc}) is newer than the installed framework build supports",
                "The installed build was made with a CUDA version that predates this GPU"
                + (f" (it carries {' '.join(v.arches)})" if v.arches else "")
                + ", so GPU operations fail with 'no kernel image is available for execution on the device'.",
                _arch_fix(v, "new"),
                v.evidence,
                gpu_index=v.gpu_index,
                params={"gpu": v.gpu, "cc": v.cc},
            )
        )
    return out[:4]
