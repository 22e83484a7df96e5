"""WSL2: a Linux user space whose GPU belongs to Windows.

The GPU is reached through ``/dev/dxg`` (the DirectX kernel driver) and the Windows driver's libraries mounted
at ``/usr/lib/wsl/lib`` (``libcuda.so.1``, ``nvidia-smi``). There is no ``nvidia.ko`` and no PCI GPU on the
Linux side — installing a Linux NVIDIA driver inside WSL breaks it, which is why this is its own platform.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpusetup.model import KernelModule, PciInfo, System
from gpusetup.probe.platform.linux import LinuxPlatform, _exists, detect_wsl, parse_proc_modules, read_text

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

WSL_LIB = "/usr/lib/wsl/lib"


def is_wsl(ctx: ProbeContext) -> bool:
    """True under WSL (1 or 2): ``/proc/version`` says "microsoft", ``WSL_DISTRO_NAME`` is set, or ``/dev/dxg``."""
    return detect_wsl(ctx)[0]


class WslPlatform(LinuxPlatform):
    name = "wsl"

    def system(self, ctx: ProbeContext) -> System:
        s = super().system(ctx)
        s.wsl = True
        # WSL boots without the distro's firmware view: Secure Boot is the Windows host's business.
        if s.secure_boot_source is None or "legacy BIOS" in (s.secure_boot_source or ""):
            s.secure_boot, s.secure_boot_source = None, "not visible inside WSL (set by the Windows host)"
        return s

    def pci_display_devices(self, ctx: ProbeContext) -> list[PciInfo]:
        # WSL2 shows a virtual "Microsoft Basic Render Driver" (1414:008e) at most; the real GPU is reported
        # by nvidia-smi/NVML from /usr/lib/wsl/lib. Keep what the bus shows, honestly.
        return super().pci_display_devices(ctx)

    def libcuda_candidates(self, ctx: ProbeContext) -> list[str]:
        out = [f"{WSL_LIB}/libcuda.so.1"]
        drivers = ctx.path("/usr/lib/wsl/drivers")
        try:
            for d in sorted(os.listdir(drivers)):
                if d.startswith("nv"):
                    p = f"/usr/lib/wsl/drivers/{d}/libcuda.so.1.1"
                    if _exists(ctx, p):
                        out.append(p)
        except OSError:
            pass
        out.append("libcuda.so.1")
        return out

    def kernel_modules(self, ctx: ProbeContext) -> list[KernelModule]:
        """Only ``dxgkrnl`` matters here (built into the WSL kernel; ``/dev/dxg`` exists when it works)."""
        loaded = parse_proc_modules(read_text(ctx, "/proc/modules") or "")
        dxg = _exists(ctx, "/dev/dxg") or "dxgkrnl" in loaded
        out = [KernelModule(name="dxgkrnl", loaded=dxg, available_for_running_kernel=dxg)]
        # A Linux nvidia.ko loaded inside WSL is a mistake worth reporting.
        if "nvidia" in loaded:
            out.append(KernelModule(name="nvidia", loaded=True))
        return out
