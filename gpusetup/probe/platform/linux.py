"""Linux: facts from procfs/sysfs files (through ``ctx.path()`` so tests use fixture trees), commands only
as fallbacks (``lspci`` when sysfs is unreadable, ``mokutil`` when the EFI variable is not readable).

Every parser here is a pure function of text, tolerant of truncated or garbled input: it returns what it
could read and never raises for bad content.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform as _pyplatform
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from gpusetup import pcidb
from gpusetup.model import Cpu, Evidence, KernelModule, PcieLink, PciInfo, System
from gpusetup.probe import normalize_pci_address
from gpusetup.probe.platform import LoginEntry
from gpusetup.versions import as_version, interpreter_version

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

log = logging.getLogger("gpusetup.probe.platform.linux")

SECURE_BOOT_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

# CPU flags that decide which CPU builds run well (x86 in /proc/cpuinfo "flags", ARM in "Features").
IMPORTANT_CPU_FLAGS: tuple[str, ...] = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512dq",
    "avx512cd",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
    # aarch64
    "asimd",
    "asimdhp",
    "asimddp",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
)

# Kernel modules that own GPUs (reported when loaded or installed; nvidia always, so rules can say "missing").
GPU_MODULES: tuple[str, ...] = (
    "nvidia",
    "nvidia_uvm",
    "nvidia_drm",
    "nvidia_modeset",
    "nouveau",
    "nova_core",
    "amdgpu",
    "i915",
    "xe",
    "vfio_pci",
)

DISPLAY_CLASS_NAMES = (
    "VGA compatible controller",
    "3D controller",
    "Display controller",
    "XGA compatible controller",
)


# ------------------------------------------------------------------------------------- file helpers


def read_text(ctx: ProbeContext, path: str, limit: int = 2_000_000) -> str | None:
    """File content, or None when missing/unreadable (no permission, EIO from a dead device)."""
    try:
        with open(ctx.path(path), encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except (OSError, ValueError):
        return None


def read_first_line(ctx: ProbeContext, path: str) -> str | None:
    text = read_text(ctx, path, 4096)
    if text is None:
        return None
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return line or None


def _exists(ctx: ProbeContext, path: str) -> bool:
    try:
        return ctx.path(path).exists()
    except OSError:
        return False


# ------------------------------------------------------------------------------------------ parsers


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` → dict (quotes and escapes removed; bad lines skipped)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        value = re.sub(r"\\(.)", r"\1", value)
        out[key] = value
    return out


def parse_cpuinfo(text: str) -> Cpu:
    """``/proc/cpuinfo`` → model, vendor, core counts and the flags that matter for CPU builds."""
    cpu = Cpu()
    logical = 0
    cores: set[tuple[str, str]] = set()
    flags: set[str] = set()
    phys_id = core_id = None
    cores_per_socket: int | None = None
    sockets: set[str] = set()
    for raw in text.splitlines():
        key, sep, value = raw.partition(":")
        if not sep:
            if phys_id is not None and core_id is not None:
                cores.add((phys_id, core_id))
            phys_id = core_id = None
            continue
        key = key.strip().lower()
        value = value.strip()
        if key == "processor":
            logical += 1
        elif key in ("model name", "cpu model") and not cpu.model and value:
            cpu.model = value
        elif key == "hardware" and not cpu.model and value:
            cpu.model = value  # older ARM kernels
        elif key == "vendor_id" and not cpu.vendor:
            cpu.vendor = value or None
        elif key == "cpu implementer" and not cpu.vendor:
            cpu.vendor = _ARM_IMPLEMENTERS.get(value.lower(), f"ARM implementer {value}") if value else None
        elif key in ("flags", "features"):
            flags.update(value.split())
        elif key == "physical id":
            phys_id = value
            sockets.add(value)
        elif key == "core id":
            core_id = value
        elif key == "cpu cores":
            with contextlib.suppress(ValueError):
                cores_per_socket = int(value)
    if phys_id is not None and core_id is not None:
        cores.add((phys_id, core_id))
    cpu.cores_logical = logical or None
    if cores:
        cpu.cores_physical = len(cores)
    elif cores_per_socket:
        cpu.cores_physical = cores_per_socket * max(1, len(sockets))
    cpu.flags = [f for f in IMPORTANT_CPU_FLAGS if f in flags]
    return cpu


_ARM_IMPLEMENTERS = {"0x41": "ARM", "0x4e": "NVIDIA", "0x51": "Qualcomm", "0x61": "Apple", "0xc0": "Ampere"}


def parse_meminfo(text: str) -> tuple[int | None, int | None]:
    """``/proc/meminfo`` → (total MiB, available MiB)."""
    vals: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+):\s+(\d+)\s*kB", line)
        if m:
            vals[m.group(1)] = int(m.group(2))
    total = vals.get("MemTotal")
    avail = vals.get("MemAvailable")
    if avail is None and "MemFree" in vals:
        avail = vals["MemFree"] + vals.get("Cached", 0) + vals.get("Buffers", 0)
    return (total // 1024 if total is not None else None, avail // 1024 if avail is not None else None)


def parse_proc_modules(text: str) -> dict[str, dict[str, str | int | list[str]]]:
    """``/proc/modules`` → {name: {size, refcount, used_by, state, taint}}."""
    out: dict[str, dict[str, str | int | list[str]]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or not re.fullmatch(r"[\w-]+", parts[0]):
            continue
        info: dict[str, str | int | list[str]] = {}
        if parts[1].isascii() and parts[1].isdigit():  # "¹" is a digit to isdigit(), not to int()
            info["size"] = int(parts[1])
        if parts[2].isascii() and parts[2].isdigit():
            info["refcount"] = int(parts[2])
        if len(parts) > 3:
            info["used_by"] = [u for u in parts[3].split(",") if u and u != "-"]
        if len(parts) > 4:
            info["state"] = parts[4]
        taint = re.search(r"\(([A-Z]+)\)\s*$", line)
        if taint:
            info["taint"] = taint.group(1)
        out[parts[0]] = info
    return out


def parse_uevent(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip():
            out[k.strip()] = v.strip()
    return out


_LSPCI_HEAD = re.compile(
    r"^(?P<addr>(?:[0-9a-fA-F]{4,}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[^:\[]+?)(?:\s*\[(?P<classid>[0-9a-fA-F]{4})\])?:\s+(?P<rest>.*)$"
)
_IDS = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_REV = re.compile(r"\(rev ([0-9a-fA-F]{2})\)")


def parse_lspci(text: str) -> list[PciInfo]:
    """Display devices from ``lspci -nn -D -k`` (or ``-v``/``-vv``/``-vvnn``, root or not).

    With ``-nn`` the ids are read directly; without, the vendor/device names are kept and the vendor id is
    found from the vendor name in pci.ids. ``Capabilities: <access denied>`` (non-root) is simply ignored.
    """
    devices: list[PciInfo] = []
    current: PciInfo | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            current = None
            continue
        if not line[0].isspace():
            current = None
            m = _LSPCI_HEAD.match(line)
            if not m:
                continue
            cls = m.group("cls").strip()
            classid = (m.group("classid") or "").lower()
            if not (classid.startswith("03") or (not classid and cls in DISPLAY_CLASS_NAMES)):
                continue
            rest = m.group("rest")
            rest = re.sub(r"\s*\(prog-if [^)]*\]?\)\s*$", "", rest)
            current = PciInfo(address=normalize_pci_address(m.group("addr")))
            current.class_code = (classid + "00") if classid else _CLASS_BY_NAME.get(cls)
            rev = _REV.search(rest)
            if rev:
                current.revision = rev.group(1).lower()
                rest = rest[: rev.start()].rstrip()
            ids = list(_IDS.finditer(rest))
            if ids:
                last = ids[-1]
                current.vendor_id, current.device_id = last.group(1).lower(), last.group(2).lower()
                rest = rest[: last.start()].rstrip()
            _split_vendor_device(current, rest)
            devices.append(current)
            continue
        if current is None:
            continue
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        value = value.strip()
        if key == "Subsystem":
            ids = list(_IDS.finditer(value))
            if ids:
                current.subsystem_vendor_id = ids[-1].group(1).lower()
                current.subsystem_device_id = ids[-1].group(2).lower()
        elif key == "Kernel driver in use" and value:
            current.kernel_driver = value
    return devices


_CLASS_BY_NAME = {
    "VGA compatible controller": "030000",
    "XGA compatible controller": "030100",
    "3D controller": "030200",
    "Display controller": "038000",
}


def _split_vendor_device(info: PciInfo, text: str) -> None:
    """``NVIDIA Corporation GA106M [GeForce …]`` → vendor name + device name (longest known vendor prefix)."""
    db = pcidb.pci_ids()
    names = db.vendor_names
    if info.vendor_id and info.vendor_id in names:
        vname = names[info.vendor_id]
        if text.startswith(vname):
            info.vendor_name, info.device_name = vname, text[len(vname) :].strip() or None
            return
    best = None
    for vid, vname in names.items():
        fits = text.startswith(vname) and (len(text) == len(vname) or text[len(vname)] == " ")
        if fits and (best is None or len(vname) > len(names[best])):
            best = vid
    if best is not None:
        vname = names[best]
        info.vendor_name = vname
        info.device_name = text[len(vname) :].strip() or None
        if info.vendor_id is None:
            info.vendor_id = best
    else:
        info.device_name = text or None


def parse_link_speed(text: str | None) -> int | None:
    """sysfs ``8.0 GT/s PCIe`` → PCIe generation 3 (None when unknown)."""
    if not text:
        return None
    m = re.search(r"([\d.]+)\s*GT/s", text)
    if not m:
        return None
    try:
        gts = float(m.group(1))
    except ValueError:
        return None
    for gen, speed in ((1, 2.5), (2, 5.0), (3, 8.0), (4, 16.0), (5, 32.0), (6, 64.0), (7, 128.0)):
        if abs(gts - speed) < 0.5:
            return gen
    return None


def _int_or_none(text: str | None, base: int = 10) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip(), base)
    except ValueError:
        return None


def _hex_id(text: str | None, width: int = 4) -> str | None:
    """``0x10de`` → ``10de``; garbage → None."""
    if not text:
        return None
    s = text.strip().lower()
    s = s[2:] if s.startswith("0x") else s
    if not re.fullmatch(r"[0-9a-f]+", s):
        return None
    return s[-width:].rjust(width, "0")


# -------------------------------------------------------------------------------------- the platform


PYTHON_DIRS = ("/usr/bin", "/usr/local/bin", "/opt/python/bin")  # where distributions put python3.X


class LinuxPlatform:
    """Linux on bare metal, in a VM or in a container."""

    name = "linux"

    # ---------------------------------------------------------------------------------------- system
    def system(self, ctx: ProbeContext) -> System:
        s = System(os="linux")
        s.evidence.append(Evidence("/etc/os-release"))
        osr = read_text(ctx, "/etc/os-release") or read_text(ctx, "/usr/lib/os-release")
        if osr is None:
            s.evidence[-1] = Evidence("/etc/os-release", ok=False, error="not readable")
        else:
            rel = parse_os_release(osr)
            s.distro_id = rel.get("ID") or None
            s.distro_version = rel.get("VERSION_ID") or None
            s.distro_name = rel.get("PRETTY_NAME") or rel.get("NAME") or None
            s.distro_like = rel.get("ID_LIKE", "").split()
            s.os_release = {k: rel[k] for k in OS_RELEASE_KEYS if rel.get(k)}
        s.kernel = read_first_line(ctx, "/proc/sys/kernel/osrelease") or (
            _pyplatform.release() if ctx.root == Path("/") else None
        )
        s.os_version = s.kernel
        s.arch = _pyplatform.machine() or None
        s.hostname = read_first_line(ctx, "/proc/sys/kernel/hostname") or (
            _pyplatform.node() if ctx.root == Path("/") else None
        )
        s.python = as_version(interpreter_version())
        s.wsl, s.wsl_version = detect_wsl(ctx)
        s.nvswitches = count_nvswitches(ctx.path("/sys/bus/pci/devices"))
        s.init_system = "systemd" if ctx.path("/run/systemd/system").is_dir() else (
            read_first_line(ctx, "/proc/1/comm") or None)
        s.container = detect_container(ctx)
        s.secure_boot, s.secure_boot_source = self.secure_boot(ctx)
        cmdline = read_first_line(ctx, "/proc/cmdline")
        s.kernel_cmdline = cmdline[:2000] if cmdline else None
        cpuinfo = read_text(ctx, "/proc/cpuinfo")
        if cpuinfo is not None:
            s.cpu = parse_cpuinfo(cpuinfo)
        else:
            s.evidence.append(Evidence("/proc/cpuinfo", ok=False, error="not readable"))
        if s.cpu.cores_logical is None and ctx.root == Path("/"):
            s.cpu.cores_logical = os.cpu_count()
        meminfo = read_text(ctx, "/proc/meminfo")
        if meminfo is not None:
            s.ram_total_mib, s.ram_available_mib = parse_meminfo(meminfo)
        s.disk_free_mib = disk_free(ctx)
        s.is_jetson = (
            _exists(ctx, "/etc/nv_tegra_release")
            or "jetson" in (read_text(ctx, "/proc/device-tree/model", 256) or "").lower()
        )
        return s

    def secure_boot(self, ctx: ProbeContext) -> tuple[bool | None, str | None]:
        """Secure Boot from the EFI variable (5 bytes: 4 attribute bytes + 1 value byte), else mokutil."""
        var = ctx.path(SECURE_BOOT_VAR)
        try:
            data = var.read_bytes()
            if len(data) >= 5:
                return data[4] == 1, "EFI variable SecureBoot"
            if len(data) == 1:  # some tools expose the value only
                return data[0] == 1, "EFI variable SecureBoot"
        except OSError:
            pass
        if (
            not _exists(ctx, "/sys/firmware/efi")
            and _exists(ctx, "/sys/firmware/acpi")
            and detect_container(ctx) is None
        ):
            return False, "legacy BIOS boot (no /sys/firmware/efi): Secure Boot does not apply"
        if ctx.runner.which("mokutil") is None:
            return None, None
        res = ctx.runner.run(["mokutil", "--sb-state"], timeout=min(ctx.timeout, 3.0))
        return parse_mokutil(res.stdout + "\n" + res.stderr)

    # ----------------------------------------------------------------------------------------- PCI
    def pci_display_devices(self, ctx: ProbeContext) -> list[PciInfo]:
        devices = self._sysfs_pci(ctx)
        if devices is not None:
            return devices
        if ctx.runner.which("lspci") is None:
            return []
        res = ctx.runner.run(["lspci", "-nn", "-D", "-k"], timeout=min(ctx.timeout, 5.0))
        if not res.stdout:
            return []
        return parse_lspci(res.stdout)

    def _sysfs_pci(self, ctx: ProbeContext) -> list[PciInfo] | None:
        """Display devices from ``/sys/bus/pci/devices``; None when sysfs cannot be read at all."""
        base = ctx.path("/sys/bus/pci/devices")
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            return None
        if not entries:
            return None
        out = []
        for entry in entries:
            info = read_sysfs_pci_device(base / entry, entry)
            if info is not None:
                out.append(info)
        return out

    def pcie_link(self, ctx: ProbeContext, address: str | None) -> PcieLink | None:
        """Current and max PCIe link from sysfs (works without any GPU driver)."""
        addr = normalize_pci_address(address)
        if not addr:
            return None
        d = f"/sys/bus/pci/devices/{addr}"
        link = PcieLink(
            gen_current=parse_link_speed(read_first_line(ctx, f"{d}/current_link_speed")),
            gen_device_max=parse_link_speed(read_first_line(ctx, f"{d}/max_link_speed")),
            width_current=_int_or_none(read_first_line(ctx, f"{d}/current_link_width")),
            width_max=_int_or_none(read_first_line(ctx, f"{d}/max_link_width")),
        )
        if link == PcieLink():
            return None
        return link

    # -------------------------------------------------------------------------------------- libcuda
    def libcuda_candidates(self, ctx: ProbeContext) -> list[str]:
        out = ["libcuda.so.1"]  # what the dynamic loader (and every framework) finds first
        for d in (
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu/nvidia",
            "/usr/lib/aarch64-linux-gnu/tegra",
            "/usr/lib/nvidia",
            "/usr/lib",
        ):
            p = f"{d}/libcuda.so.1"
            if _exists(ctx, p):
                out.append(p)
        return out

    # ------------------------------------------------------------------------------------ autostart
    def login_entry(self, ctx: ProbeContext, argv: list[str]) -> LoginEntry | None:
        """A Desktop Entry in the XDG autostart folder ($XDG_CONFIG_HOME/autostart, default ~/.config/autostart)."""
        home = ctx.env.get("HOME") or str(Path.home())
        folder = Path(ctx.env.get("XDG_CONFIG_HOME") or f"{home}/.config") / "autostart"
        return LoginEntry(folder / "gpusetup-resume.desktop", desktop_entry(argv))

    # -------------------------------------------------------------------------------------- python
    def python_candidates(self, ctx: ProbeContext, want: str | None) -> list[list[str]]:
        return unix_python_candidates(ctx, want, PYTHON_DIRS)

    # ------------------------------------------------------------------------------- kernel modules
    def kernel_modules(self, ctx: ProbeContext) -> list[KernelModule]:
        text = read_text(ctx, "/proc/modules")
        loaded = parse_proc_modules(text) if text is not None else None
        kernel = read_first_line(ctx, "/proc/sys/kernel/osrelease")
        if kernel is None and ctx.root == Path("/"):
            kernel = _pyplatform.release()
        available = modules_for_kernel(ctx, kernel)
        nv_version_file = read_text(ctx, "/proc/driver/nvidia/version", 8192) or ""
        out: list[KernelModule] = []
        for name in GPU_MODULES:
            is_loaded = None if loaded is None else name in loaded
            avail = None if available is None else name in available
            if not (is_loaded or avail or name == "nvidia"):
                continue
            mod = KernelModule(name=name, loaded=is_loaded, available_for_running_kernel=avail)
            if is_loaded:
                mod.version = as_version(read_first_line(ctx, f"/sys/module/{name}/version"))
            if name == "nvidia":
                if "Open Kernel Module" in nv_version_file:
                    mod.flavour = "open"
                elif nv_version_file.strip():
                    mod.flavour = "proprietary"
                if mod.version is None:
                    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", nv_version_file)
                    mod.version = as_version(m.group(1)) if m else None
                if is_loaded or avail:
                    self._modinfo(ctx, mod, kernel)
                mod.dkms_status = dkms_status(ctx)
            out.append(mod)
        return out

    def _modinfo(self, ctx: ProbeContext, mod: KernelModule, kernel: str | None) -> None:
        """Licence (open = "Dual MIT/GPL", proprietary = "NVIDIA"), signer and version via ``modinfo``."""
        if ctx.runner.which("modinfo") is None:
            return
        argv = ["modinfo"]
        if kernel:
            argv += ["-k", kernel]
        res = ctx.runner.run([*argv, mod.name], timeout=min(ctx.timeout, 3.0))
        if not res.ok:
            return
        info = parse_modinfo(res.stdout)
        lic = info.get("license", "")
        if mod.flavour is None and lic:
            mod.flavour = "open" if "GPL" in lic or "MIT" in lic else "proprietary"
        mod.signer = info.get("signer") or mod.signer
        if mod.version is None:
            mod.version = as_version(info.get("version"))


def parse_modinfo(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep and re.fullmatch(r"[\w.-]+", k.strip()) and k.strip() not in out:
            out[k.strip()] = v.strip()
    return out


def parse_mokutil(text: str) -> tuple[bool | None, str | None]:
    low = text.lower()
    if "secureboot enabled" in low:
        return True, "mokutil --sb-state"
    if "secureboot disabled" in low:
        return False, "mokutil --sb-state"
    if "doesn't support secure boot" in low or "not supported" in low:
        return False, "mokutil --sb-state (no EFI Secure Boot on this system)"
    return None, None


OS_RELEASE_KEYS = ("ID", "ID_LIKE", "VERSION_ID", "VERSION_CODENAME", "UBUNTU_CODENAME", "PRETTY_NAME")


def count_nvswitches(base: Path) -> int | None:
    """NVIDIA NVSwitch bridges on the PCI bus (vendor 10de, class 0x0680: "GA100 [A100 NVSwitch]", "GH100 [H100
    NVSwitch]" in pci.ids); they are there before any driver is. None when sysfs cannot be read."""
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    n = 0
    for entry in entries:
        try:
            vendor = (base / entry / "vendor").read_text().strip().lower()
            cls = (base / entry / "class").read_text().strip().lower()
        except (OSError, ValueError):
            continue
        if vendor == "0x10de" and cls.startswith("0x0680"):
            n += 1
    return n


def read_sysfs_pci_device(d: Path, entry: str) -> PciInfo | None:
    """One ``/sys/bus/pci/devices/<addr>`` entry → PciInfo when it is a display device (class 0x03xxxx)."""

    def rd(name: str) -> str | None:
        try:
            return (d / name).read_text(encoding="utf-8", errors="replace").strip() or None
        except (OSError, ValueError):
            return None

    uevent = parse_uevent(rd("uevent") or "")
    cls = _hex_id(rd("class"), 6)
    if cls is None and uevent.get("PCI_CLASS"):
        cls = _hex_id(uevent["PCI_CLASS"], 6)
    if cls is None or not cls.startswith("03"):
        return None
    info = PciInfo(address=normalize_pci_address(uevent.get("PCI_SLOT_NAME") or entry), class_code=cls)
    info.vendor_id = _hex_id(rd("vendor"))
    info.device_id = _hex_id(rd("device"))
    if (info.vendor_id is None or info.device_id is None) and ":" in uevent.get("PCI_ID", ""):
        v, _, dv = uevent["PCI_ID"].partition(":")
        info.vendor_id, info.device_id = info.vendor_id or _hex_id(v), info.device_id or _hex_id(dv)
    info.subsystem_vendor_id = _hex_id(rd("subsystem_vendor"))
    info.subsystem_device_id = _hex_id(rd("subsystem_device"))
    if info.subsystem_vendor_id is None and ":" in uevent.get("PCI_SUBSYS_ID", ""):
        sv, _, sd = uevent["PCI_SUBSYS_ID"].partition(":")
        info.subsystem_vendor_id, info.subsystem_device_id = _hex_id(sv), _hex_id(sd)
    info.revision = _hex_id(rd("revision"), 2)
    try:
        info.kernel_driver = os.path.basename(os.readlink(d / "driver"))
    except OSError:
        info.kernel_driver = uevent.get("DRIVER") or None
    return info


def detect_wsl(ctx: ProbeContext) -> tuple[bool, int | None]:
    """WSL from ``/proc/version`` ("microsoft"), ``WSL_DISTRO_NAME`` or ``/dev/dxg``; version 1 or 2."""
    version = read_text(ctx, "/proc/version", 4096) or ""
    osrelease = read_first_line(ctx, "/proc/sys/kernel/osrelease") or ""
    text = f"{version} {osrelease}"
    has_ms = "microsoft" in text.lower()
    dxg = _exists(ctx, "/dev/dxg")
    env = bool(ctx.env.get("WSL_DISTRO_NAME") or ctx.env.get("WSL_INTEROP"))
    if not (has_ms or dxg or env):
        return False, None
    if "WSL2" in text or "microsoft-standard" in text.lower() or dxg:
        return True, 2
    if re.search(r"-Microsoft\b", text):  # WSL1 kernels: 4.4.0-19041-Microsoft
        return True, 1
    return True, None


def detect_container(ctx: ProbeContext) -> str | None:
    """docker / podman / kubernetes / lxc / containerd / other container, or None on the host."""
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if _exists(ctx, "/run/.containerenv"):
        return "podman"
    if _exists(ctx, "/.dockerenv"):
        return "docker"
    cg = (read_text(ctx, "/proc/1/cgroup", 65536) or "").lower()
    for marker, name in (
        ("kubepods", "kubernetes"),
        ("libpod", "podman"),
        ("docker", "docker"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ):
        if marker in cg:
            return name
    env_container = ctx.env.get("container")
    if env_container:
        return env_container
    return None


def disk_free(ctx: ProbeContext) -> dict[str, int]:
    """Free MiB where installs go: the home directory and the working directory."""
    out: dict[str, int] = {}
    targets = []
    home = ctx.env.get("HOME") or ctx.env.get("USERPROFILE")
    if home:
        targets.append(home)
    with contextlib.suppress(OSError):
        targets.append(os.getcwd())
    for t in targets:
        p = ctx.path(t)
        try:
            out[t] = shutil.disk_usage(p).free // (1024 * 1024)
        except OSError:
            continue
    return out


def modules_for_kernel(ctx: ProbeContext, kernel: str | None) -> set[str] | None:
    """Module names installed for this kernel (``modules.dep`` + ``modules.builtin``); None if unknown."""
    if not kernel:
        return None
    base = f"/lib/modules/{kernel}"
    dep = read_text(ctx, f"{base}/modules.dep", 20_000_000)
    builtin = read_text(ctx, f"{base}/modules.builtin", 5_000_000) or ""
    if dep is None:
        if not _exists(ctx, base):
            return None
        return _walk_modules(ctx.path(base))
    names = set()
    for text in (dep, builtin):
        for line in text.splitlines():
            path = line.split(":", 1)[0].strip()
            if path:
                names.add(_module_name(path))
    return names


def _module_name(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    base = re.sub(r"\.ko(\.(xz|zst|gz))?$", "", base)
    return base.replace("-", "_")


def _walk_modules(base: Path) -> set[str]:
    """Fallback when modules.dep is missing: look for GPU modules only, in the usual folders."""
    names: set[str] = set()
    for sub in ("updates", "extra", "kernel/drivers/video", "kernel/drivers/gpu", "kernel/nvidia"):
        root = base / sub
        if not root.is_dir():
            continue
        for _dir, _subdirs, files in os.walk(root):
            for f in files:
                if ".ko" in f:
                    names.add(_module_name(f))
    return names


def dkms_status(ctx: ProbeContext) -> list[str]:
    """``dkms status`` lines about nvidia (build state per kernel); empty without dkms."""
    if ctx.runner.which("dkms") is None:
        return []
    res = ctx.runner.run(["dkms", "status"], timeout=min(ctx.timeout, 5.0))
    return [ln.strip() for ln in (res.stdout or "").splitlines() if "nvidia" in ln.lower()][:20]


def unix_python_candidates(ctx: ProbeContext, want: str | None, dirs: tuple[str, ...]) -> list[list[str]]:
    """python3.X (or python3) in the system folders, pyenv's versions and uv's managed Pythons."""
    names = [f"python{want}"] if want else ["python3"]
    out = [[f"{d}/{n}"] for d in dirs for n in names]
    home = ctx.env.get("HOME") or str(Path.home())
    pyenv = Path(ctx.env.get("PYENV_ROOT") or f"{home}/.pyenv") / "versions"
    uv_dir = Path(ctx.env.get("UV_PYTHON_INSTALL_DIR") or
                  f"{ctx.env.get('XDG_DATA_HOME') or home + '/.local/share'}/uv/python")
    for root, pattern in ((pyenv, f"{want}.*" if want else "3.*"), (uv_dir, f"cpython-{want or '3'}*")):
        try:
            found = sorted(root.glob(pattern), reverse=True)[:8]
        except OSError:
            continue
        out += [[str(p / "bin" / (f"python{want}" if want else "python3"))] for p in found]
    return [c for c in out if Path(c[0]).is_file()]


def _desktop_quote(arg: str) -> str:
    """A Desktop Entry Exec argument (freedesktop spec: quote when needed, escape \\ " ` $, a literal % is %%)."""
    arg = arg.replace("%", "%%")
    if arg and not any(c in arg for c in ' \t\n"\'\\><~|&;$*?#()`='):
        return arg
    return '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'


def desktop_entry(argv: list[str]) -> str:
    """The autostart Desktop Entry that runs ``argv`` (hidden from menus; removed by gpusetup when done)."""
    return ("[Desktop Entry]\nType=Application\nName=GPU Setup (continue the installation)\n"
            "Name[zh_CN]=GPU Setup（继续安装）\n"
            "Comment=Continues the GPU setup that stopped for a restart; removed when it is finished\n"
            f"Exec={' '.join(_desktop_quote(a) for a in argv)}\nTerminal=false\nNoDisplay=true\n"
            "X-GNOME-Autostart-enabled=true\n")
