"""Platform-specific detection behind one small interface (no ``sys.platform`` checks elsewhere).

One implementation per platform: ``linux.py`` (sysfs/procfs), ``wsl.py`` (Linux under WSL2: GPU through
``/dev/dxg`` and ``/usr/lib/wsl/lib``), ``windows.py`` (CIM ``Win32_VideoController`` via PowerShell,
registry), ``macos.py`` (``system_profiler -json``). ``get_platform(ctx)`` picks one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpusetup.model import KernelModule, PcieLink, PciInfo, System
    from gpusetup.probe import ProbeContext


@dataclass(frozen=True)
class LoginEntry:
    """A file that starts a program at the user's next login: where it goes and what it says."""

    path: Path
    text: str


class Platform(Protocol):
    name: str  # linux / wsl / windows / macos

    def system(self, ctx: ProbeContext) -> System:
        """OS, distro, kernel, architecture, WSL, container, Secure Boot, CPU, RAM, disk."""
        ...

    def pci_display_devices(self, ctx: ProbeContext) -> list[PciInfo]:
        """Every display/3D controller on the bus (PCI class 0x03), with the bound kernel driver."""
        ...

    def libcuda_candidates(self, ctx: ProbeContext) -> list[str]:
        """Where the CUDA driver library may be, most likely first (``libcuda.so.1``, ``nvcuda.dll``…)."""
        ...

    def kernel_modules(self, ctx: ProbeContext) -> list[KernelModule]:
        """State of the GPU kernel modules (nvidia, nouveau, nova_core, amdgpu…); empty where none apply."""
        ...

    def login_entry(self, ctx: ProbeContext, argv: list[str]) -> LoginEntry | None:
        """The file that starts ``argv`` once at the user's next login (an XDG autostart entry, a ``.cmd`` in
        the Windows Startup folder, a macOS LaunchAgent); None where gpusetup knows no such place."""
        ...

    def python_candidates(self, ctx: ProbeContext, want: str | None) -> list[list[str]]:
        """Commands that may start a Python interpreter (``want`` is ``X.Y`` or None), most likely first:
        the ``py`` launcher on Windows, the usual install folders elsewhere. Each is checked by running it."""
        ...

    def pcie_link(self, ctx: ProbeContext, address: str | None) -> PcieLink | None:
        """The PCIe link of the device at ``address`` as the OS reports it (generation, width); None when the
        OS does not say (then NVML's reading is the only one)."""
        ...

    def secure_boot(self, ctx: ProbeContext) -> tuple[bool | None, str | None]:
        """(Secure Boot on?, where that came from); (None, None) when it cannot be read here."""
        ...


def get_platform(ctx: ProbeContext) -> Platform:
    # lazy: a cycle (each platform module imports gpusetup.probe, whose __init__ imports this package); and
    # only the running OS's module is needed
    if ctx.os_name == "windows":
        from gpusetup.probe.platform.windows import WindowsPlatform  # lazy: see above

        return WindowsPlatform()
    if ctx.os_name == "macos":
        from gpusetup.probe.platform.macos import MacPlatform  # lazy: see above

        return MacPlatform()
    # lazy: see above
    from gpusetup.probe.platform.linux import LinuxPlatform
    from gpusetup.probe.platform.wsl import WslPlatform, is_wsl

    return WslPlatform() if is_wsl(ctx) else LinuxPlatform()
