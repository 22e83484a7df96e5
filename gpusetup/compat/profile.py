"""Read the machine to plan for from a file: a diagnose JSON report, a serialised Machine, or a small profile.

Support teams plan for a user's machine from the report the user sent (``gpusetup plan --for report.json``);
anyone can describe a machine by hand with the small profile documented in ``docs/machine-profile.md``::

    {"os": "linux", "wsl": false, "arch": "x86_64", "python": "3.12", "driver": "580.95.05",
     "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1",
               "pci_id": "10de:1b06"}]}

Every problem is reported as a :class:`ProfileError` naming the file and the exact field, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from gpusetup.enrich import enrich
from gpusetup.messages import msg, render
from gpusetup.model import Driver, Gpu, Machine, Message, PciInfo, Report, SchemaError, System, from_dict
from gpusetup.pcidb import lookup
from gpusetup.versions import ComputeCapability, as_version

PROFILE_KEYS = {"os", "wsl", "arch", "python", "driver", "gpus", "jetson", "distro", "os_release", "kernel",
                "secure_boot", "nvswitches", "macos"}
# what a hand-written "distro": "ID VERSION" implies, so installer previews see the os-release the machine has
# (ID_LIKE from the distributions' os-release files; codenames of their releases)
_DISTRO_LIKE = {"ubuntu": "debian", "rhel": "fedora", "rocky": "rhel centos fedora", "almalinux": "rhel centos fedora",
                "centos": "rhel fedora", "ol": "fedora", "amzn": "fedora", "opensuse-leap": "suse opensuse"}
_CODENAMES = {("ubuntu", "20.04"): "focal", ("ubuntu", "22.04"): "jammy", ("ubuntu", "24.04"): "noble",
              ("debian", "11"): "bullseye", ("debian", "12"): "bookworm", ("debian", "13"): "trixie"}
_OS_RELEASE_KEYS = ("ID", "ID_LIKE", "VERSION_ID", "VERSION_CODENAME", "UBUNTU_CODENAME", "PRETTY_NAME")
_DISTRO = re.compile(r"^([a-z][a-z0-9._-]*)(?:\s+([0-9][0-9.]*))?$")
_KERNEL = re.compile(r"^\d+\.\d+[0-9A-Za-z.+~_-]*$")
GPU_KEYS = {"vendor", "name", "compute_capability", "pci_id", "gfx"}
OSES = ("linux", "windows", "macos")
VENDORS = ("nvidia", "amd", "intel", "apple", "other")
_PCI_VENDORS = {"10de": "nvidia", "1002": "amd", "1022": "amd", "8086": "intel", "106b": "apple"}
_PCI_ID = re.compile(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$")
_CC = re.compile(r"^\d{1,2}\.\d$")
_PY = re.compile(r"^3\.\d{1,2}(\.\d+)?t?$")  # "3.13t": a free-threaded build
_MACOS = re.compile(r"^\d{2}(\.\d{1,2}){0,2}$")
_DRIVER = re.compile(r"^\d{3}(\.\d{1,3}){0,2}$")
_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")


MAX_FILE_BYTES = 20 * 1024 * 1024  # reports are tens of KB; anything this big was the wrong file


class ProfileError(ValueError):
    """The machine file cannot be used; the message says what to fix.

    It carries ``message`` as data (a gpusetup.messages code), so ``gpusetup --lang zh_CN`` words it in
    Chinese; field names and values are quoted as they are spelled in the file.
    """

    def __init__(self, message: Message) -> None:
        self.message = message
        super().__init__(render(message))


def load_machine_file(path: str | Path) -> Machine:
    """A :class:`Machine` from a diagnose report, a serialised Machine, or a small machine profile."""
    p = Path(path).expanduser()
    hint = msg("profile.hint.give-report")
    if p.is_dir():
        raise ProfileError(msg("profile.error.folder", path=str(p), hint=hint))
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            raise ProfileError(msg("profile.error.too-large", path=str(p), mb=MAX_FILE_BYTES // (1024 * 1024), hint=hint))
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise ProfileError(msg("profile.error.missing", path=str(p), hint=hint)) from exc
    except PermissionError as exc:
        raise ProfileError(msg("profile.error.permission", path=str(p))) from exc
    except UnicodeDecodeError as exc:
        raise ProfileError(msg("profile.error.not-text", path=str(p), hint=hint)) from exc
    except OSError as exc:
        raise ProfileError(msg("profile.error.unreadable", path=str(p), reason=exc.strerror or str(exc))) from exc
    if not text.strip():
        raise ProfileError(msg("profile.error.empty", path=str(p), hint=hint))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(msg("profile.error.not-json", path=str(p), line=exc.lineno, column=exc.colno,
                               reason=exc.msg)) from exc
    except (ValueError, RecursionError) as exc:  # e.g. a 5000-digit number or [[[[...]]]] nested too deep
        raise ProfileError(msg("profile.error.unreadable-json", path=str(p), reason=str(exc))) from exc
    return machine_from_data(data, str(p))


def machine_from_data(data: Any, where: str = "input") -> Machine:
    """Same as :func:`load_machine_file` for already-parsed JSON; the chip rule then fills what the file
    leaves out (:func:`gpusetup.enrich.enrich`, as after detection)."""
    return enrich(_machine_from_data(data, where))


def _machine_from_data(data: Any, where: str) -> Machine:
    if not isinstance(data, dict):
        raise ProfileError(msg("profile.error.not-object", path=where, kind=type(data).__name__))
    try:
        if "machine" in data and isinstance(data["machine"], dict):
            return from_dict(Report, data).machine
        if "system" in data:
            return from_dict(Machine, data)
    except SchemaError as exc:
        raise ProfileError(msg("profile.error.bad-report", path=where, reason=str(exc))) from exc
    if "os" in data or "gpus" in data:
        return _from_profile(data, where)
    raise ProfileError(msg("profile.error.neither", path=where))


def _from_profile(data: dict[str, Any], where: str) -> Machine:
    unknown = sorted(set(data) - PROFILE_KEYS)
    if unknown:
        raise ProfileError(msg("profile.field.unknown", path=where, fields=", ".join(unknown),
                               allowed=", ".join(sorted(PROFILE_KEYS))))
    os_name = data.get("os")
    if os_name not in OSES:
        raise ProfileError(msg("profile.field.os", path=where, choices=", ".join(OSES), value=repr(os_name)))
    wsl = data.get("wsl", False)
    jetson = data.get("jetson", False)
    for key, val in (("wsl", wsl), ("jetson", jetson)):
        if not isinstance(val, bool):
            raise ProfileError(msg("profile.field.bool", path=where, field=key, value=repr(val)))
    if wsl and os_name == "macos":
        raise ProfileError(msg("profile.field.wsl-macos", path=where))
    arch = data.get("arch")
    if arch is not None and (not isinstance(arch, str) or arch.lower() not in ("x86_64", "amd64", "aarch64", "arm64")):
        raise ProfileError(msg("profile.field.arch", path=where, value=repr(arch)))
    python = data.get("python")
    if python is not None and (not isinstance(python, str) or not _PY.match(python)):
        raise ProfileError(msg("profile.field.python", path=where, value=repr(python)))
    macos = data.get("macos")
    if macos is not None and (not isinstance(macos, str) or not _MACOS.match(macos)):
        raise ProfileError(msg("profile.field.macos", path=where, value=repr(macos)))
    if macos is not None and os_name != "macos":
        raise ProfileError(msg("profile.field.macos-only", path=where, os=os_name))
    driver = data.get("driver")
    if driver is not None and (not isinstance(driver, str) or not _DRIVER.match(driver)):
        raise ProfileError(msg("profile.field.driver", path=where, value=repr(driver)))
    gpus_raw = data.get("gpus", [])
    if not isinstance(gpus_raw, list):
        raise ProfileError(msg("profile.field.gpus-list", path=where))
    gpus = [_gpu(g, f"{where}: gpus[{i}]") for i, g in enumerate(gpus_raw)]
    system = System(
        os=os_name,
        arch=arch.lower() if isinstance(arch, str) else None,
        wsl=wsl,
        wsl_version=2 if wsl else None,
        python=as_version(python),
        is_jetson=jetson,
        os_version=macos,
    )
    _linux_facts(system, data, where)
    return Machine(system=system, gpus=gpus, driver=Driver(version=as_version(driver)))


def _linux_facts(system: System, data: dict[str, Any], where: str) -> None:
    """distro / os_release, kernel, secure_boot, nvswitches: what the installer scripts look at, so that
    `install --dry-run --for` previews the script that will run there."""
    rel: dict[str, str] = {}
    distro = data.get("distro")
    if distro is not None:
        m = _DISTRO.match(distro.strip().lower()) if isinstance(distro, str) else None
        if not m:
            raise ProfileError(msg("profile.field.distro", path=where, value=repr(distro)))
        did, ver = m.group(1), m.group(2) or ""
        rel = {"ID": did, "VERSION_ID": ver, "ID_LIKE": _DISTRO_LIKE.get(did, "")}
        code = _CODENAMES.get((did, ver.split(".")[0] if did == "debian" else ver))
        if code:
            rel["VERSION_CODENAME"] = code
            if did == "ubuntu":
                rel["UBUNTU_CODENAME"] = code
    raw = data.get("os_release")
    if raw is not None:
        if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()) \
                or set(raw) - set(_OS_RELEASE_KEYS) or "ID" not in raw:
            raise ProfileError(msg("profile.field.os-release", path=where, allowed=", ".join(_OS_RELEASE_KEYS)))
        rel.update(raw)
    if rel:
        system.os_release = {k: v for k, v in rel.items() if v}
        system.distro_id = rel.get("ID") or None
        system.distro_version = rel.get("VERSION_ID") or None
        system.distro_like = rel.get("ID_LIKE", "").split()
        system.distro_name = rel.get("PRETTY_NAME") or None
    kernel = data.get("kernel")
    if kernel is not None:
        if not isinstance(kernel, str) or not _KERNEL.match(kernel):
            raise ProfileError(msg("profile.field.kernel", path=where, value=repr(kernel)))
        system.kernel = kernel
    sb = data.get("secure_boot")
    if sb is not None:
        if not isinstance(sb, bool):
            raise ProfileError(msg("profile.field.bool", path=where, field="secure_boot", value=repr(sb)))
        system.secure_boot = sb
    nvs = data.get("nvswitches")
    if nvs is not None:
        if not isinstance(nvs, int) or isinstance(nvs, bool) or not 0 <= nvs <= 64:
            raise ProfileError(msg("profile.field.nvswitches", path=where, value=repr(nvs)))
        system.nvswitches = nvs


def _gpu(raw: Any, where: str) -> Gpu:
    if not isinstance(raw, dict):
        raise ProfileError(msg("profile.field.gpu-object", path=where))
    unknown = sorted(set(raw) - GPU_KEYS)
    if unknown:
        raise ProfileError(msg("profile.field.unknown", path=where, fields=", ".join(unknown),
                               allowed=", ".join(sorted(GPU_KEYS))))
    pci = PciInfo()
    pci_id = raw.get("pci_id")
    if pci_id is not None:
        m = _PCI_ID.match(str(pci_id))
        if not m:
            raise ProfileError(msg("profile.field.pci-id", path=where, value=repr(pci_id)))
        pci.vendor_id, pci.device_id = m.group(1).lower(), m.group(2).lower()
        pci.vendor_name, pci.device_name = lookup(pci.vendor_id, pci.device_id)
    vendor = raw.get("vendor") or _PCI_VENDORS.get(pci.vendor_id or "")
    if vendor not in VENDORS:
        raise ProfileError(msg("profile.field.vendor", path=where, choices=", ".join(VENDORS), value=repr(vendor)))
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise ProfileError(msg("profile.field.name", path=where))
    cc = raw.get("compute_capability")
    if cc is not None and (not isinstance(cc, str) or not _CC.match(cc)):
        raise ProfileError(msg("profile.field.cc", path=where, value=repr(cc)))
    if cc is not None and vendor != "nvidia":
        raise ProfileError(msg("profile.field.cc-nvidia-only", path=where))
    gfx = raw.get("gfx")
    if gfx is not None and (not isinstance(gfx, str) or not _GFX.match(gfx.lower())):
        raise ProfileError(msg("profile.field.gfx", path=where, value=repr(gfx)))
    if gfx is not None and vendor != "amd":
        raise ProfileError(msg("profile.field.gfx-amd-only", path=where))
    if name is None and pci_id is None and cc is None and gfx is None and vendor not in ("apple",):
        raise ProfileError(msg("profile.field.gpu-empty", path=where))
    return Gpu(
        vendor=vendor,
        name=name or pci.device_name,
        pci=pci,
        compute_capability=ComputeCapability.parse(cc),
        compute_capability_source="profile" if cc else None,
        gfx_target=gfx.lower() if gfx else None,
    )
