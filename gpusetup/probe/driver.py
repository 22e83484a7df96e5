"""The NVIDIA kernel driver as the kernel sees it, and the single best answer for "which driver?".

Runs after the NVML, nvidia-smi and libcuda probes. It reads ``/proc/driver/nvidia/version`` (version and
open vs proprietary flavour), ``/sys/module/nvidia/version``, ``/proc/driver/nvidia/gpus/*/information``
(names of GPUs even when NVML cannot start) and the version in the file name of the installed
``libnvidia-ml.so.<version>`` (what user space would load), merges the platform's kernel-module facts,
then picks ``machine.driver.version``: NVML, else nvidia-smi, else the kernel module. Every source's
:class:`Reading` is kept, so a kernel-module ≠ user-space mismatch (F-catalogue "driver/library version
mismatch") stays visible as data; :func:`gpusetup.driver_readings.driver_mismatch` is the comparison rules and this probe share.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpusetup.driver_readings import (
    LIBNVML_SOURCE,
    PROC_VERSION,
    SYS_VERSION,
    best_driver_version,
    driver_mismatch,
)
from gpusetup.model import Evidence, KernelModule, Reading
from gpusetup.probe import find_or_add_gpu
from gpusetup.versions import as_version

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

log = logging.getLogger("gpusetup.probe.driver")

PROC_GPUS = "/proc/driver/nvidia/gpus"
# Directories where distributions and the .run installer put libnvidia-ml.so.<version>.
_LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu/nvidia/current",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/wsl/lib",
)

_NVRM = re.compile(
    r"NVRM version:\s*NVIDIA UNIX\s+(?P<open>Open\s+)?(?:(?P<arch1>\S+)\s+)?Kernel Module"
    r"(?:\s+for\s+(?P<arch2>\S+))?\s+(?P<version>\d+\.\d+(?:\.\d+)?)"
)
_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?$")


@dataclass
class ProcVersion:
    """``/proc/driver/nvidia/version`` in fields."""

    version: str | None = None
    flavour: str | None = None  # open / proprietary
    arch: str | None = None
    gcc: str | None = None  # "gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)"
    error: str | None = None


def parse_proc_version(text: str) -> ProcVersion:
    """Parse the NVRM version file (proprietary and open modules, x86_64 and aarch64). Never raises."""
    out = ProcVersion()
    if not isinstance(text, str) or not text.strip():
        out.error = "the NVIDIA driver version file is empty"
        return out
    m = _NVRM.search(text)
    if not m:
        out.error = "no 'NVRM version' line found"
    else:
        out.version = m.group("version")
        out.flavour = "open" if m.group("open") else "proprietary"
        out.arch = m.group("arch2") or m.group("arch1")
    g = re.search(r"^GCC version:\s*(.+?)\s*$", text, re.MULTILINE)
    if g:
        out.gcc = g.group(1)
    return out


def parse_gpu_information(text: str) -> dict[str, str]:
    """``/proc/driver/nvidia/gpus/<bus>/information`` → {"Model": …, "GPU UUID": …, "Bus Location": …}."""
    info: dict[str, str] = {}
    if not isinstance(text, str):
        return info
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith(" "):
            info[key.strip()] = value.strip()
    return info


def _read(ctx: ProbeContext, path: str, machine: Machine) -> str | None:
    p = ctx.path(path)
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except PermissionError:
        machine.driver.evidence.append(Evidence(path, ok=False, error=f"no permission to read {path}"))
        return None
    except OSError as exc:
        machine.driver.evidence.append(
            Evidence(path, ok=False, error=f"could not read {path}: {exc.strerror or exc}")
        )
        return None


def _libnvml_versions(ctx: ProbeContext) -> list[str]:
    found: list[str] = []
    for d in _LIB_DIRS:
        base = ctx.path(d)
        try:
            names = [p.name for p in base.glob("libnvidia-ml.so.*")]
        except OSError:
            continue
        for n in names:
            v = n.removeprefix("libnvidia-ml.so.")
            if _VERSION.match(v) and v.count(".") >= 1 and v not in found:
                found.append(v)
    return found


def _module(machine: Machine, name: str) -> KernelModule | None:
    return next((m for m in machine.driver.modules if m.name == name), None)


def _merge_platform_modules(ctx: ProbeContext, machine: Machine) -> None:
    try:
        modules = list(ctx.platform.kernel_modules(ctx))
    except Exception as exc:  # noqa: BLE001 - a broken platform module must not stop this probe
        machine.driver.evidence.append(
            Evidence("kernel modules", ok=False, error=f"could not list kernel modules: {exc}")
        )
        return
    for mod in modules:
        existing = _module(machine, mod.name)
        if existing is None:
            machine.driver.modules.append(mod)
            continue
        for f in ("loaded", "version", "flavour", "available_for_running_kernel", "signer"):
            if getattr(mod, f) is not None:
                setattr(existing, f, getattr(mod, f))
        existing.dkms_status = mod.dkms_status or existing.dkms_status


def probe(ctx: ProbeContext, machine: Machine) -> None:
    """Kernel-side driver facts; then the best version and the per-source readings."""
    drv = machine.driver
    _merge_platform_modules(ctx, machine)

    text = _read(ctx, PROC_VERSION, machine)
    proc = parse_proc_version(text) if text is not None else None
    if proc is not None and text is not None:
        drv.versions.append(Reading(as_version(proc.version), PROC_VERSION, error=proc.error))
        drv.evidence.append(
            Evidence(
                PROC_VERSION,
                ok=proc.error is None,
                error=proc.error,
                detail=text.strip().splitlines()[0][:300] if text.strip() else None,
            )
        )
        mod = _module(machine, "nvidia")
        if mod is None:
            mod = KernelModule("nvidia")
            drv.modules.append(mod)
        mod.loaded = True if proc.version else mod.loaded
        mod.version = mod.version or as_version(proc.version)
        mod.flavour = proc.flavour or mod.flavour

    sys_text = _read(ctx, SYS_VERSION, machine)
    if sys_text is not None:
        v = sys_text.strip()
        ok = bool(_VERSION.match(v))
        drv.versions.append(
            Reading(as_version(v) if ok else None, SYS_VERSION, error=None if ok else "unreadable version")
        )
        mod = _module(machine, "nvidia")
        if mod is None:
            mod = KernelModule("nvidia", loaded=True)
            drv.modules.append(mod)
        if ok:
            mod.version = mod.version or as_version(v)
            mod.loaded = True

    for v in _libnvml_versions(ctx):
        drv.versions.append(Reading(as_version(v), LIBNVML_SOURCE))

    _read_gpu_information(ctx, machine)
    if ctx.os_name == "linux":
        _read_prime_profile(ctx, machine)

    drv.version = best_driver_version(machine)
    mismatch = driver_mismatch(machine)
    if mismatch:
        drv.evidence.append(
            Evidence(
                "driver versions",
                ok=False,
                error=f"the running kernel module is {mismatch[0]} but the user-space driver is {mismatch[1]}",
                detail="; ".join(f"{r.source}={r.value}" for r in drv.versions if r.value),
            )
        )


def _read_gpu_information(ctx: ProbeContext, machine: Machine) -> None:
    base = ctx.path(PROC_GPUS)
    try:
        entries = sorted(base.iterdir()) if base.is_dir() else []
    except OSError:
        return
    for d in entries:
        text = _read(ctx, f"{PROC_GPUS}/{d.name}/information", machine)
        if not text:
            continue
        info = parse_gpu_information(text)
        gpu = find_or_add_gpu(machine, "nvidia", info.get("Bus Location") or d.name)
        gpu.name = gpu.name or info.get("Model") or None
        uuid = info.get("GPU UUID")
        if uuid and not gpu.uuid and uuid.startswith("GPU-"):
            gpu.uuid = uuid
        vbios = info.get("Video BIOS")
        if vbios and not gpu.vbios and vbios != "??.??.??.??.??":
            gpu.vbios = vbios
        if gpu.pci.kernel_driver is None:
            gpu.pci.kernel_driver = "nvidia"
        gpu.evidence.append(Evidence(PROC_GPUS, detail=f"{d.name}/information"))


# Ubuntu's nvidia-prime (`prime-select`) keeps the chosen profile in /etc/prime-discrete: it writes "on"
# (nvidia), "on-demand" or "off" (intel) and reads anything else as intel; "intel" also writes
# /lib/modprobe.d/blacklist-nvidia.conf ("alias nvidia off"). canonical/nvidia-prime prime-select,
# PrimeSelect._get_profile / _write_profile / _blacklist_nvidia.
PRIME_DISCRETE = "/etc/prime-discrete"
PRIME_BLACKLIST = "/lib/modprobe.d/blacklist-nvidia.conf"
_PRIME_PROFILES = {"on": "nvidia", "on-demand": "on-demand"}


def prime_profile(text: str) -> str:
    """The prime-select profile named by /etc/prime-discrete's content, as prime-select itself reads it."""
    return _PRIME_PROFILES.get(text.strip(), "intel")


def _read_prime_profile(ctx: ProbeContext, machine: Machine) -> None:
    try:
        with ctx.path(PRIME_DISCRETE).open("rb") as fh:
            raw = fh.read(64).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return  # no nvidia-prime: not an Ubuntu hybrid-graphics setup
    except OSError as exc:
        machine.system.evidence.append(
            Evidence(PRIME_DISCRETE, ok=False, error=f"could not read {PRIME_DISCRETE}: {exc.strerror or exc}"))
        return
    machine.system.prime_profile = prime_profile(raw)
    blacklisted = ctx.path(PRIME_BLACKLIST).is_file()
    machine.system.evidence.append(Evidence(
        PRIME_DISCRETE,
        detail=f"{PRIME_DISCRETE}: {raw.strip()[:20]!r} (prime-select profile {machine.system.prime_profile})"
        + (f"; {PRIME_BLACKLIST} present" if blacklisted else ""),
    ))
