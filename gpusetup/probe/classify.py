"""Last pass: GPUs that only the driver side reported (nvidia-smi, NVML under WSL2, a GPU whose PCI entry
was unreadable or whose recorded PCI id is masked) get their chip, architecture and compute capability from
the chip rule too.

The PCI probe classifies what it sees on the bus before NVML runs; this catches the rest. When there is no
usable PCI id, the marketing name is matched against the pci.ids entries (``GA102 [GeForce RTX 3090]``);
only an exact, unambiguous match counts, because marketing names are reused across chips.
"""

from __future__ import annotations

import re

from gpusetup import pcidb
from gpusetup.model import Evidence, Gpu, Machine
from gpusetup.probe import ProbeContext

NAME_MATCH_SOURCE = "chip rule (pci.ids name match)"
_BRACKET = re.compile(r"^(\S+)\s+\[(.+)\]$")


def probe(ctx: ProbeContext, machine: Machine) -> None:
    from gpusetup.probe.pci import classify

    for gpu in machine.nvidia_gpus:
        if gpu.compute_capability and gpu.architecture:
            continue
        if gpu.pci.device_name or (gpu.pci.pci_id and pcidb.lookup(gpu.pci.vendor_id or "", gpu.pci.device_id or "")[1]):
            classify(gpu)
        if gpu.compute_capability is None and gpu.name:
            classify_by_name(gpu)


def chips_for_name(name: str) -> set[str]:
    """Chips whose pci.ids entry carries exactly this marketing name (``NVIDIA`` prefix ignored)."""
    want = re.sub(r"^NVIDIA\s+", "", name.strip(), flags=re.I).lower()
    chips = set()
    for dev in pcidb.pci_ids().devices("10de").values():
        m = _BRACKET.match(dev)
        if not m:
            continue
        names = [n.strip().lower() for n in m.group(2).split("/")]
        if want in names:
            chips.add(re.sub(r"(GL|GLM|M|BM|L)$", "", m.group(1)))
    return chips


def classify_by_name(gpu: Gpu) -> None:
    chips = chips_for_name(gpu.name or "")
    classes = {c for c in (pcidb.classify_nvidia(chip) for chip in chips) if c is not None}
    ccs = {c.compute_capability for c in classes}
    if len(ccs) != 1 or None in ccs:
        return
    cls = next(iter(classes))
    gpu.chip = gpu.chip or (cls.chip if len(classes) == 1 else None)
    gpu.architecture = gpu.architecture or cls.architecture
    gpu.compute_capability = cls.compute_capability
    gpu.compute_capability_source = NAME_MATCH_SOURCE
    gpu.evidence.append(Evidence(NAME_MATCH_SOURCE, detail=f"{gpu.name!r} is listed in pci.ids only for chip(s) {', '.join(sorted(chips))}"))
