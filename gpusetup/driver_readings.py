"""Which NVIDIA driver version is running, from the readings the probes (or an analysed report) recorded.

Pure functions over :class:`~gpusetup.model.Machine` shared by the driver probe (which picks
``machine.driver.version``) and the rules (kernel module ≠ user space, F09), so both compare the same way
whether the facts were detected live or read from what a user sent.
"""

from __future__ import annotations

from gpusetup.model import Machine
from gpusetup.versions import Version

PROC_VERSION = "/proc/driver/nvidia/version"
SYS_VERSION = "/sys/module/nvidia/version"
LIBNVML_SOURCE = "libnvidia-ml file name"

# Sources that report the *driver* version (libcuda's reading is the CUDA API version, not comparable).
USER_SPACE_SOURCES = ("nvml", "nvidia-smi", LIBNVML_SOURCE)
KERNEL_SOURCES = (PROC_VERSION, SYS_VERSION)


def _first(machine: Machine, sources: tuple[str, ...], *, clean_only: bool = False) -> Version | None:
    for src in sources:
        for r in machine.driver.versions:
            if r.source == src and r.value and not (clean_only and r.error):
                return r.value
    return None


def same_version(a: Version | str, b: Version | str) -> bool:
    """ "570.124" and "570.124.06" are the same driver (NVML prints two parts); "570.124" ≠ "570.133"."""
    pa, pb = Version(a).release, Version(b).release
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def best_driver_version(machine: Machine) -> Version | None:
    """NVML, then nvidia-smi, then the kernel module (what is running), then the library on disk.

    A reading that came with an error (nvidia-smi naming its library version while failing) is used only
    when nothing cleaner is known."""
    order = ("nvml", "nvidia-smi", PROC_VERSION, SYS_VERSION, LIBNVML_SOURCE)
    return _first(machine, order, clean_only=True) or _first(machine, order)


def driver_mismatch(machine: Machine) -> tuple[Version, Version] | None:
    """(kernel module version, user-space version) when they differ, else None.

    User space is what NVML/nvidia-smi report, or, when they cannot start (which is what a mismatch
    does to them), the version of the installed ``libnvidia-ml.so.<version>``.
    """
    kernel = _first(machine, KERNEL_SOURCES)
    user = _first(machine, ("nvml", "nvidia-smi"))
    if user is None:
        on_disk = {r.value for r in machine.driver.versions if r.source == LIBNVML_SOURCE and r.value}
        user = on_disk.pop() if len(on_disk) == 1 else None  # several versions on disk: no single answer
    if kernel and user and not same_version(kernel, user):
        return kernel, user
    return None
