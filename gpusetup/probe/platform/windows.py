"""Windows: GPUs from CIM ``Win32_VideoController`` (one PowerShell call, shared by every question).

PowerShell takes a few hundred milliseconds to start, so the one call fetches the video controllers, OS and
CPU together and the answer is cached on the platform object. A DxDiag text report (what support teams often
get from users) is parsed too, with the same result shape.
"""

from __future__ import annotations

import ctypes
import json
import logging
import platform as _pyplatform
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpusetup import pcidb
from gpusetup.model import Cpu, Evidence, KernelModule, PcieLink, PciInfo, System
from gpusetup.probe import normalize_pci_address
from gpusetup.probe.platform import LoginEntry
from gpusetup.probe.platform.linux import disk_free
from gpusetup.versions import as_version, interpreter_version

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

log = logging.getLogger("gpusetup.probe.platform.windows")

CIM_SCRIPT = (
    "$ErrorActionPreference='SilentlyContinue';"
    "$v=@(Get-CimInstance Win32_VideoController | ForEach-Object {"
    "$loc=(Get-PnpDeviceProperty -InstanceId $_.PNPDeviceID -KeyName DEVPKEY_Device_LocationInfo).Data;"
    "[pscustomobject]@{Name=$_.Name;PNPDeviceID=$_.PNPDeviceID;DriverVersion=$_.DriverVersion;"
    "AdapterRAM=$_.AdapterRAM;VideoProcessor=$_.VideoProcessor;LocationInfo=$loc}});"
    "$os=Get-CimInstance Win32_OperatingSystem | Select-Object Caption,Version,BuildNumber,OSArchitecture,"
    "TotalVisibleMemorySize,FreePhysicalMemory;"
    "$cpu=@(Get-CimInstance Win32_Processor | Select-Object Name,Manufacturer,NumberOfCores,NumberOfLogicalProcessors);"
    "[pscustomobject]@{VideoControllers=$v;OperatingSystem=$os;Processors=$cpu} | ConvertTo-Json -Depth 4 -Compress"
)
# The plain query of the issue; its output (a list, or one object for one adapter) is parsed the same way.
VIDEO_ONLY_SCRIPT = (
    "Get-CimInstance Win32_VideoController | Select-Object Name,PNPDeviceID,DriverVersion,AdapterRAM,"
    "VideoProcessor | ConvertTo-Json"
)

_PNP = re.compile(
    r"VEN_(?P<ven>[0-9A-Fa-f]{4})&DEV_(?P<dev>[0-9A-Fa-f]{4})"
    r"(?:&SUBSYS_(?P<ssdev>[0-9A-Fa-f]{4})(?P<ssven>[0-9A-Fa-f]{4}))?(?:&REV_(?P<rev>[0-9A-Fa-f]{2}))?"
)
_LOCATION = re.compile(r"PCI bus (\d+), device (\d+), function (\d+)", re.I)


def parse_pnp_device_id(pnp: str | None) -> PciInfo:
    """``PCI\\VEN_10DE&DEV_25AB&SUBSYS_052F1854&REV_A1\\4&…`` → ids (SUBSYS is device id then vendor id)."""
    info = PciInfo()
    m = _PNP.search(pnp or "")
    if m:
        info.vendor_id = m.group("ven").lower()
        info.device_id = m.group("dev").lower()
        if m.group("ssven"):
            info.subsystem_vendor_id = m.group("ssven").lower()
            info.subsystem_device_id = m.group("ssdev").lower()
        if m.group("rev"):
            info.revision = m.group("rev").lower()
    return info


def nvidia_driver_version(windows_version: str | None) -> str | None:
    """NVIDIA's user-facing version from the Windows driver file version: ``32.0.15.5599`` → ``555.99``.

    The rule: take (third field - 10) * 10000 + fourth field, then put the dot before the last two digits
    (``27.21.14.5671`` → 456.71, ``31.0.15.3623`` → 536.23); the same rule open-source tools use (e.g.
    CaffeineMC sodium's ``NvidiaDriverVersion``). None when the string does not have that shape.
    """
    if not windows_version:
        return None
    parts = windows_version.strip().split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    third, fourth = int(parts[2]), int(parts[3])
    if third < 10 or fourth > 9999:
        return None
    merged = (third - 10) * 10000 + fourth
    if merged < 10000:  # below 100.00: not an NVIDIA-style number
        return None
    return f"{merged // 100}.{merged % 100:02d}"


def _as_list(value: Any) -> list[Any]:
    """ConvertTo-Json writes one object (not a list) when there is one adapter."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def parse_video_controllers(data: Any) -> list[tuple[PciInfo, dict[str, Any]]]:
    """CIM ``Win32_VideoController`` records (already JSON-decoded) → (PciInfo, raw record) pairs."""
    out: list[tuple[PciInfo, dict[str, Any]]] = []
    for rec in _as_list(data):
        if not isinstance(rec, dict):
            continue
        pnp = rec.get("PNPDeviceID")
        pnp = pnp if isinstance(pnp, str) else None
        # ROOT\BasicRender, remote-desktop and other software adapters: not a PCI device.
        if pnp and not pnp.upper().startswith("PCI\\") and "VEN_" not in pnp.upper():
            continue
        info = parse_pnp_device_id(pnp)
        name = rec.get("Name") if isinstance(rec.get("Name"), str) else None
        info.device_name = name
        loc = rec.get("LocationInfo")
        if isinstance(loc, str):
            m = _LOCATION.search(loc)
            if m:
                bus, dev, fn = (int(x) for x in m.groups())
                info.address = normalize_pci_address(f"0000:{bus:02x}:{dev:02x}.{fn:x}")
        info.class_code = "030000"
        out.append((info, rec))
    return out


def parse_dxdiag_display_devices(text: str) -> list[tuple[PciInfo, dict[str, str]]]:
    """DxDiag "Display Devices" blocks → (PciInfo, fields) pairs (``Device Key``/``Vendor ID`` lines)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "Card name":
            current = {}
            blocks.append(current)
        if current is not None and key not in current:
            current[key] = value
    out = []
    for b in blocks:
        info = parse_pnp_device_id(b.get("Device Key"))
        if info.vendor_id is None and b.get("Vendor ID", "").lower().startswith("0x"):
            info.vendor_id = b["Vendor ID"][2:].lower()[-4:]
            dev = b.get("Device ID", "")
            info.device_id = dev[2:].lower()[-4:] if dev.lower().startswith("0x") else None
        info.device_name = b.get("Card name")
        info.class_code = "030000"
        out.append((info, b))
    return out


class WindowsPlatform:
    name = "windows"

    def __init__(self) -> None:
        self._cim: dict[str, Any] | None = None
        self._cim_error: str | None = None

    # ------------------------------------------------------------------------------------------ CIM
    def cim(self, ctx: ProbeContext) -> dict[str, Any]:
        """The one PowerShell/CIM answer (cached). Empty dict when PowerShell is missing or failed."""
        if self._cim is not None:
            return self._cim
        self._cim = {}
        exe = ctx.runner.which("powershell") or ctx.runner.which("pwsh")
        if exe is None:
            self._cim_error = "PowerShell not found"
            return self._cim
        res = ctx.runner.run(
            [exe, "-NoProfile", "-NonInteractive", "-Command", CIM_SCRIPT], timeout=max(ctx.timeout, 10.0)
        )
        if not res.stdout.strip():
            self._cim_error = res.error or (res.stderr.strip()[:300] or "no output from Get-CimInstance")
            return self._cim
        try:
            data = json.loads(res.stdout.strip().lstrip("\ufeff"))
        except ValueError as exc:
            self._cim_error = f"unreadable CIM answer: {exc}"
            return self._cim
        if isinstance(data, list):  # the plain video-controller query
            data = {"VideoControllers": data}
        self._cim = data if isinstance(data, dict) else {}
        return self._cim

    # --------------------------------------------------------------------------------------- system
    def system(self, ctx: ProbeContext) -> System:
        s = System(os="windows")
        data = self.cim(ctx)
        raw_os = data.get("OperatingSystem")
        osrec: dict[str, Any] = raw_os if isinstance(raw_os, dict) else {}
        s.distro_name = osrec.get("Caption") or None
        s.os_version = osrec.get("Version") or _pyplatform.version() or None
        s.kernel = osrec.get("BuildNumber") or None
        arch = osrec.get("OSArchitecture") or _pyplatform.machine() or ctx.env.get("PROCESSOR_ARCHITECTURE")
        s.arch = {"AMD64": "x86_64", "64-bit": "x86_64", "ARM64": "arm64"}.get(str(arch), arch or None)
        s.hostname = ctx.env.get("COMPUTERNAME") or None
        s.python = as_version(interpreter_version())
        s.wsl = False
        s.container = "windows-container" if ctx.env.get("CONTAINER_SANDBOX_MOUNT_POINT") else None
        total_kib = _to_int(osrec.get("TotalVisibleMemorySize"))
        free_kib = _to_int(osrec.get("FreePhysicalMemory"))
        s.ram_total_mib = total_kib // 1024 if total_kib else None
        s.ram_available_mib = free_kib // 1024 if free_kib else None
        if s.ram_total_mib is None:
            s.ram_total_mib, s.ram_available_mib = _global_memory_status()
        procs = [p for p in _as_list(data.get("Processors")) if isinstance(p, dict)]
        cpu = Cpu()
        if procs:
            cpu.model = (procs[0].get("Name") or "").strip() or None
            cpu.vendor = procs[0].get("Manufacturer") or None
            cpu.cores_physical = sum(_to_int(p.get("NumberOfCores")) or 0 for p in procs) or None
            cpu.cores_logical = sum(_to_int(p.get("NumberOfLogicalProcessors")) or 0 for p in procs) or None
        else:
            cpu.model = ctx.env.get("PROCESSOR_IDENTIFIER") or None
            cpu.cores_logical = _to_int(ctx.env.get("NUMBER_OF_PROCESSORS"))
        cpu.flags = _windows_cpu_flags()
        s.cpu = cpu
        s.disk_free_mib = disk_free(ctx)
        s.evidence.append(
            Evidence(
                "Get-CimInstance Win32_OperatingSystem/Win32_Processor", ok=bool(data), error=self._cim_error
            )
        )
        return s

    # ------------------------------------------------------------------------------------------ PCI
    def pci_display_devices(self, ctx: ProbeContext) -> list[PciInfo]:
        out = []
        for info, rec in parse_video_controllers(self.cim(ctx).get("VideoControllers")):
            if info.vendor_id and info.device_id:
                vname, dname = pcidb.lookup(info.vendor_id, info.device_id)
                info.vendor_name = vname
                # Keep the driver's marketing name; pci.ids' chip name goes in device_name when known.
                info.device_name = dname or info.device_name
            wver = rec.get("DriverVersion") if isinstance(rec.get("DriverVersion"), str) else None
            if wver:
                # nvlddmkm is NVIDIA's Windows kernel driver; for others say which driver version is bound.
                info.kernel_driver = "nvlddmkm" if info.vendor_id == "10de" else f"driver {wver}"
            out.append(info)
        return out

    def driver_versions(self, ctx: ProbeContext) -> list[tuple[str | None, str | None, str | None]]:
        """(pci id, Windows driver version, NVIDIA version) per adapter, for the driver probe."""
        out = []
        for info, rec in parse_video_controllers(self.cim(ctx).get("VideoControllers")):
            wver = rec.get("DriverVersion") if isinstance(rec.get("DriverVersion"), str) else None
            nv = nvidia_driver_version(wver) if info.vendor_id == "10de" else None
            out.append((info.pci_id, wver, nv))
        return out

    def libcuda_candidates(self, ctx: ProbeContext) -> list[str]:
        root = ctx.env.get("SystemRoot") or ctx.env.get("SYSTEMROOT") or r"C:\Windows"
        return ["nvcuda.dll", rf"{root}\System32\nvcuda.dll"]

    def pcie_link(self, ctx: ProbeContext, address: str | None) -> PcieLink | None:
        return None  # not read here: NVML reports the link where it runs

    def secure_boot(self, ctx: ProbeContext) -> tuple[bool | None, str | None]:
        return None, None  # not read on this platform

    def kernel_modules(self, ctx: ProbeContext) -> list[KernelModule]:
        return []

    def login_entry(self, ctx: ProbeContext, argv: list[str]) -> LoginEntry | None:
        """A ``.cmd`` in the user's Startup folder (%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup),
        which Explorer runs at login; it starts the program detached (``start ""``) and closes its console."""
        appdata = ctx.env.get("APPDATA")
        if not appdata:
            return None
        folder = Path(appdata) / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
        return LoginEntry(folder / "gpusetup-resume.cmd", startup_cmd(argv))

    def python_candidates(self, ctx: ProbeContext, want: str | None) -> list[list[str]]:
        """The ``py`` launcher first (it knows every python.org install), then the usual folders."""
        out = [["py", f"-{want}" if want else "-3"]]
        local = ctx.env.get("LOCALAPPDATA")
        tag = want.replace(".", "") if want else None
        for base in ([f"{local}\\Programs\\Python"] if local else []) + [ctx.env.get("ProgramFiles") or r"C:\Program Files"]:
            try:
                dirs = sorted(Path(base).glob(f"Python{tag}" if tag else "Python3*"), reverse=True)
            except OSError:
                continue
            out += [[str(d / "python.exe")] for d in dirs if (d / "python.exe").is_file()]
        return out


def _to_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _global_memory_status() -> tuple[int | None, int | None]:
    """RAM via GlobalMemoryStatusEx when running on Windows (no command needed); (None, None) elsewhere."""
    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return None, None

    class MemoryStatusEx(ctypes.Structure):
        _fields_ = [  # noqa: RUF012 - ctypes layout
            ("dwLength", ctypes.c_ulong),
            ("dwMemoryLoad", ctypes.c_ulong),
            ("ullTotalPhys", ctypes.c_ulonglong),
            ("ullAvailPhys", ctypes.c_ulonglong),
            ("ullTotalPageFile", ctypes.c_ulonglong),
            ("ullAvailPageFile", ctypes.c_ulonglong),
            ("ullTotalVirtual", ctypes.c_ulonglong),
            ("ullAvailVirtual", ctypes.c_ulonglong),
            ("sullAvailExtendedVirtual", ctypes.c_ulonglong),
        ]

    st = MemoryStatusEx()
    st.dwLength = ctypes.sizeof(MemoryStatusEx)
    try:
        if windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(st)):
            return st.ullTotalPhys // 2**20, st.ullAvailPhys // 2**20
    except (OSError, AttributeError):
        pass
    return None, None


# PF_* ids of IsProcessorFeaturePresent (winnt.h): AVX2 = 40, AVX512F = 41; AVX = 39.
_PF_FLAGS = {39: "avx", 40: "avx2", 41: "avx512f"}


def _windows_cpu_flags() -> list[str]:
    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return []
    out = []
    for pf, name in _PF_FLAGS.items():
        try:
            if windll.kernel32.IsProcessorFeaturePresent(pf):
                out.append(name)
        except (OSError, AttributeError):
            return out
    return out


def startup_cmd(argv: list[str]) -> str:
    """A batch file that starts ``argv`` without keeping a console open: ``python.exe`` becomes ``pythonw.exe``
    beside it (no console window); each argument is quoted, ``%`` doubled (batch expands it even in quotes)."""
    args = list(argv)
    if args and Path(args[0]).name.lower() == "python.exe":
        windowless = str(args[0])[: -len("python.exe")] + "pythonw.exe"
        if Path(windowless).is_file():
            args[0] = windowless
    quoted = " ".join('"' + a.replace("%", "%%") + '"' for a in args)
    return ("@echo off\r\nrem GPU Setup: continues the installation that stopped for a restart;"
            " removed when it is finished\r\n"
            f'start "" {quoted}\r\n')
