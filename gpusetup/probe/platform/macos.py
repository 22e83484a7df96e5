"""macOS: GPUs from ``system_profiler SPDisplaysDataType -json``; facts from ``sysctl`` and ``sw_vers``.

Reported honestly: no current Mac runs CUDA (NVIDIA stopped macOS drivers after CUDA 10.2). Apple Silicon
GPUs are used through Metal (PyTorch's ``mps`` device, ``jax-metal``, ``tensorflow-metal``).
"""

from __future__ import annotations

import json
import platform as _pyplatform
import plistlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpusetup.model import Cpu, Evidence, KernelModule, PcieLink, PciInfo, System
from gpusetup.probe.platform import LoginEntry
from gpusetup.probe.platform.linux import disk_free, unix_python_candidates
from gpusetup.versions import as_version, interpreter_version

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

LAUNCH_AGENT = "io.github.gpusetup.resume"  # the job's label, also the plist's file name

_VENDOR_IDS = {"apple": "106b", "amd": "1002", "ati": "1002", "intel": "8086", "nvidia": "10de"}


def parse_system_profiler_displays(text: str) -> list[PciInfo]:
    """GPU entries of ``system_profiler SPDisplaysDataType -json`` → PciInfo (no PCI address on macOS)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data.get("SPDisplaysDataType") if isinstance(data, dict) else None
    out = []
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        model = it.get("sppci_model") or it.get("_name")
        if not isinstance(model, str) or not model.strip():
            continue
        info = PciInfo(device_name=model.strip(), class_code="030000")
        vendor = str(it.get("spdisplays_vendor") or "")
        vkey = vendor.lower().replace("sppci_vendor_", "").strip()
        m = re.search(r"0x([0-9a-f]{4})", vendor, re.I)
        if m:
            info.vendor_id = m.group(1).lower()
        else:
            for k, vid in _VENDOR_IDS.items():
                if vkey.startswith(k) or model.lower().startswith(k):
                    info.vendor_id = vid
                    break
        dev = it.get("spdisplays_device-id")
        if isinstance(dev, str) and re.fullmatch(r"0x[0-9a-fA-F]{4}", dev.strip()):
            info.device_id = dev.strip()[2:].lower()
        rev = it.get("spdisplays_revision-id")
        if isinstance(rev, str) and re.fullmatch(r"0x[0-9a-fA-F]{1,4}", rev.strip()):
            info.revision = rev.strip()[2:].lower()[-2:].rjust(2, "0")
        info.vendor_name = vendor.replace("sppci_vendor_", "") or None
        info.kernel_driver = (
            "Metal"
            if str(it.get("spdisplays_mtlgpufamilysupport") or it.get("spdisplays_metal") or "")
            else None
        )
        out.append(info)
    return out


def vram_mib(it: dict[str, Any]) -> int | None:
    """``"8 GB"`` / ``"1536 MB"`` → MiB."""
    for key in ("spdisplays_vram", "spdisplays_vram_shared", "_spdisplays_vram"):
        v = it.get(key)
        if isinstance(v, str):
            m = re.match(r"\s*(\d+)\s*(GB|MB)", v, re.I)
            if m:
                n = int(m.group(1))
                return n * 1024 if m.group(2).upper() == "GB" else n
    return None


class MacPlatform:
    name = "macos"

    def system(self, ctx: ProbeContext) -> System:
        s = System(os="macos", wsl=False, container=None)
        s.python = as_version(interpreter_version())
        s.arch = _pyplatform.machine() or None
        ver = ctx.runner.run(["sw_vers", "-productVersion"], timeout=min(ctx.timeout, 3.0))
        s.os_version = ver.stdout.strip() or None
        s.distro_name = f"macOS {s.os_version}" if s.os_version else "macOS"
        s.kernel = _pyplatform.release() or None
        keys = ["machdep.cpu.brand_string", "hw.memsize", "hw.physicalcpu", "hw.logicalcpu"]
        res = ctx.runner.run(["sysctl", "-n", *keys], timeout=min(ctx.timeout, 3.0))
        values = res.stdout.splitlines()
        vals = dict(zip(keys, values, strict=False)) if len(values) == len(keys) else {}
        cpu = Cpu(model=(vals.get("machdep.cpu.brand_string") or "").strip() or None)
        if cpu.model and cpu.model.startswith("Apple"):
            cpu.vendor = "Apple"
            s.arch = "arm64"
        cpu.cores_physical = _int(vals.get("hw.physicalcpu"))
        cpu.cores_logical = _int(vals.get("hw.logicalcpu"))
        s.cpu = cpu
        mem = _int(vals.get("hw.memsize"))
        s.ram_total_mib = mem // 2**20 if mem else None
        s.evidence.append(Evidence("sysctl / sw_vers", ok=bool(vals), error=None if vals else res.error))
        s.disk_free_mib = disk_free(ctx)
        return s

    def pci_display_devices(self, ctx: ProbeContext) -> list[PciInfo]:
        res = ctx.runner.run(
            ["system_profiler", "SPDisplaysDataType", "-json"], timeout=max(ctx.timeout, 10.0)
        )
        return parse_system_profiler_displays(res.stdout) if res.stdout else []

    def libcuda_candidates(self, ctx: ProbeContext) -> list[str]:
        return []  # no CUDA driver exists for current macOS

    def pcie_link(self, ctx: ProbeContext, address: str | None) -> PcieLink | None:
        return None  # not read here: NVML reports the link where it runs

    def secure_boot(self, ctx: ProbeContext) -> tuple[bool | None, str | None]:
        return None, None  # not read on this platform

    def kernel_modules(self, ctx: ProbeContext) -> list[KernelModule]:
        return []

    def login_entry(self, ctx: ProbeContext, argv: list[str]) -> LoginEntry | None:
        """A LaunchAgent in ~/Library/LaunchAgents that launchd runs once at login (RunAtLoad, no KeepAlive)."""
        home = ctx.env.get("HOME") or str(Path.home())
        return LoginEntry(Path(home) / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT}.plist", launch_agent(argv))

    def python_candidates(self, ctx: ProbeContext, want: str | None) -> list[list[str]]:
        fw = f"/Library/Frameworks/Python.framework/Versions/{want}/bin" if want else \
            "/Library/Frameworks/Python.framework/Versions/Current/bin"
        return unix_python_candidates(ctx, want, ("/opt/homebrew/bin", "/usr/local/bin", fw, "/usr/bin"))


def _int(v: str | None) -> int | None:
    try:
        return int(v.strip()) if v else None
    except ValueError:
        return None


def launch_agent(argv: list[str]) -> str:
    """The LaunchAgent property list that runs ``argv`` once when the user logs in (in the GUI session)."""
    job = {"Label": LAUNCH_AGENT, "ProgramArguments": list(argv), "RunAtLoad": True,
           "LimitLoadToSessionType": "Aqua", "ProcessType": "Interactive"}
    return plistlib.dumps(job, fmt=plistlib.FMT_XML).decode("utf-8")
