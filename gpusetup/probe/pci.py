"""GPUs as the PCI bus sees them: present even with no driver installed.

Each display device becomes a :class:`~gpusetup.model.Gpu` (or enriches the one already there), named from
the shipped pci.ids subset. NVIDIA devices are classified to chip, architecture and compute capability by the
chip rule (``resources/compat/gpu_chips.json``) — the driver, when present, later confirms or corrects it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpusetup import pcidb
from gpusetup.enrich import classify_pci_device
from gpusetup.model import Evidence, PciInfo
from gpusetup.probe import find_or_add_gpu

if TYPE_CHECKING:
    from gpusetup.model import Gpu, Machine
    from gpusetup.probe import ProbeContext

VENDORS = {"10de": "nvidia", "1002": "amd", "1022": "amd", "8086": "intel", "106b": "apple"}
_SHORT = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}

# Display adapters that are not GPUs for computing: emulated VGA of virtual machines and the small display
# chip of a server's management controller (BMC). Named so nobody mistakes them for a compute GPU.
NON_COMPUTE = {
    "1af4": "virtual display adapter (VM)",
    "1b36": "virtual display adapter (VM)",
    "15ad": "virtual display adapter (VMware)",
    "80ee": "virtual display adapter (VirtualBox)",
    "1234": "virtual display adapter (QEMU standard VGA)",  # QEMU's own vendor id, not in pci.ids
    "1013": "emulated VGA (VM)",
    "1414": "Hyper-V/WSL virtual display (not a compute GPU by itself)",
    "1a03": "server management (BMC) display, no compute",
    "102b": "server management (BMC) display, no compute",
}


def probe(ctx: ProbeContext, machine: Machine) -> None:
    devices = ctx.platform.pci_display_devices(ctx)
    for dev in devices:
        vendor = VENDORS.get(dev.vendor_id or "", "other")
        gpu = find_or_add_gpu(machine, vendor, dev.address)
        merge_pci(gpu.pci, dev)
        if gpu.vendor == "other" and vendor != "other":
            gpu.vendor = vendor
        _name(gpu, vendor)
        if vendor == "nvidia":
            classify_pci_device(gpu)
        if gpu.pcie.gen_current is None:
            link = ctx.platform.pcie_link(ctx, gpu.pci.address)
            if link is not None:
                gpu.pcie.gen_current = link.gen_current
                gpu.pcie.gen_device_max = gpu.pcie.gen_device_max or link.gen_device_max
                gpu.pcie.width_current = link.width_current
                gpu.pcie.width_max = gpu.pcie.width_max or link.width_max
        gpu.evidence.append(Evidence(f"PCI ({ctx.platform.name})", detail=_detail(gpu.pci)))


def merge_pci(into: PciInfo, new: PciInfo) -> None:
    """Fill what is still unknown; never overwrite a value another source already set."""
    for field in (
        "address",
        "vendor_id",
        "device_id",
        "subsystem_vendor_id",
        "subsystem_device_id",
        "class_code",
        "revision",
        "vendor_name",
        "device_name",
        "kernel_driver",
    ):
        if getattr(into, field) is None and getattr(new, field) is not None:
            setattr(into, field, getattr(new, field))
    if into.vendor_id and into.device_id:
        vname, dname = pcidb.lookup(into.vendor_id, into.device_id)
        into.vendor_name = into.vendor_name or vname
        # pci.ids' "<chip> [<product>]" beats a driver's marketing string for classification.
        if dname and (into.device_name is None or not _has_chip(into.device_name)):
            into.device_name = dname


def _has_chip(name: str) -> bool:
    return pcidb.classify_nvidia(name) is not None


def _name(gpu: Gpu, vendor: str) -> None:
    """A readable name when no driver gave one: the product in brackets, with the vendor in front."""
    if gpu.name:
        return
    dname = gpu.pci.device_name
    if dname:
        m = re.search(r"\[([^\]]+)\]", dname)
        product = m.group(1) if m else dname
        short = _SHORT.get(vendor)
        gpu.name = product if not short or product.lower().startswith(short.lower()) else f"{short} {product}"
    elif gpu.pci.pci_id:
        vname = gpu.pci.vendor_name or "unknown vendor"
        gpu.name = f"Unknown device {gpu.pci.pci_id} ({vname})"
    note = NON_COMPUTE.get(gpu.pci.vendor_id or "")
    if note and gpu.name:
        gpu.name = f"{gpu.name} — {note}"


def _detail(p: PciInfo) -> str:
    bits = [p.address or "?", p.pci_id or "?"]
    if p.subsystem_vendor_id and p.subsystem_device_id:
        bits.append(f"subsys {p.subsystem_vendor_id}:{p.subsystem_device_id}")
    if p.revision:
        bits.append(f"rev {p.revision}")
    bits.append(f"driver {p.kernel_driver or 'none'}")
    return " ".join(bits)
