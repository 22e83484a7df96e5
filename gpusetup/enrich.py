"""The one place that turns what is known about an NVIDIA GPU's identity (chip codename, pci.ids device name,
PCI id, marketing name) into its chip, architecture and compute capability, when no driver reported them.

:func:`enrich` applies the chip rule (:func:`chip_class`, :func:`classify_pci_device`, :func:`classify_by_name`)
to a whole :class:`~gpusetup.model.Machine`; it runs after detection and after a ``--for`` file is loaded, and
the rules, the resolver and the container generator read the ``Gpu`` it filled (compute capability and its
source, chip, architecture, ``cuda_supported`` when a chip has no CUDA support, and the evidence of how it was
classified), so they cannot disagree. Values a driver reported are never replaced.
"""

from __future__ import annotations

import re

from gpusetup import pcidb
from gpusetup.model import Evidence, Gpu, Machine
from gpusetup.versions import ComputeCapability

CHIP_RULE_SOURCE = "chip rule (pci.ids)"
NAME_MATCH_SOURCE = "chip rule (pci.ids name match)"
_BRACKET = re.compile(r"^(\S+)\s+\[(.+)\]$")


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


def chip_class_by_name(name: str | None) -> tuple[pcidb.ChipClass | None, set[str], bool]:
    """The chip class a marketing name stands for, when pci.ids lists it for chips of one compute capability
    only (marketing names are reused across chips, so an ambiguous name gives None); the chips it is listed
    for; and whether that is a single chip (only then is the chip itself known)."""
    chips = chips_for_name(name or "") if name else set()
    classes = {c for c in (pcidb.classify_nvidia(chip) for chip in chips) if c is not None}
    ccs = {c.compute_capability for c in classes}
    if len(ccs) != 1 or None in ccs:
        return None, chips, False
    return next(iter(classes)), chips, len(classes) == 1


def chip_class(gpu: Gpu, *, by_name: bool = True) -> tuple[pcidb.ChipClass | None, str | None]:
    """The chip rule for one GPU, and how it was found ("chip rule on 'GA102 [GeForce RTX 3090]'", "PCI id
    10de:2204", "pci.ids name match for 'NVIDIA GeForce RTX 3090'"); (None, None) when nothing matches.

    Order: the pci.ids device name, the chip codename and the name (a codename in them counts), then the PCI id
    looked up in the shipped pci.ids, then (``by_name``) an unambiguous pci.ids marketing-name match.
    """
    for text in (gpu.pci.device_name, gpu.chip, gpu.name):
        if text:
            found = pcidb.classify_nvidia(text)
            if found:
                return found, f"chip rule on {text!r}"
    if gpu.pci.vendor_id and gpu.pci.device_id:
        found = pcidb.classify_pci(gpu.pci.vendor_id, gpu.pci.device_id)
        if found:
            return found, f"PCI id {gpu.pci.vendor_id}:{gpu.pci.device_id}"
    if by_name and gpu.name:
        found, _chips, _single = chip_class_by_name(gpu.name)
        if found:
            return found, f"pci.ids name match for {gpu.name!r}"
    return None, None


def classify_pci_device(gpu: Gpu) -> None:
    """Chip rule on what the PCI bus showed (pci.ids device name, else the id); a driver's values are kept.
    Records why not when the id is unknown, and that the chip has no CUDA support when so."""
    cls = pcidb.classify_nvidia(gpu.pci.device_name or "") if gpu.pci.device_name else None
    how = f"chip rule on {gpu.pci.device_name!r}"
    if cls is None and gpu.pci.vendor_id and gpu.pci.device_id:
        cls = pcidb.classify_pci(gpu.pci.vendor_id, gpu.pci.device_id)
        how = f"PCI id {gpu.pci.vendor_id}:{gpu.pci.device_id}"
    if cls is None:
        gpu.evidence.append(
            Evidence(
                CHIP_RULE_SOURCE,
                ok=False,
                error=f"PCI id {gpu.pci.pci_id or '?'} is not in the shipped pci.ids or has no known chip",
            )
        )
        return
    _apply(gpu, cls, how)


def _apply(gpu: Gpu, cls: pcidb.ChipClass, how: str) -> None:
    """What the chip rule says, for the facts no driver reported; ``how`` is kept as the evidence's detail."""
    gpu.chip = gpu.chip or cls.chip
    gpu.architecture = gpu.architecture or cls.architecture
    if gpu.compute_capability is None and cls.compute_capability is not None:
        gpu.compute_capability = ComputeCapability.parse(cls.compute_capability)
        gpu.compute_capability_source = CHIP_RULE_SOURCE
        gpu.evidence.append(Evidence(CHIP_RULE_SOURCE, detail=how))
    if gpu.cuda_supported is None and cls.cuda is False:
        gpu.cuda_supported = False
    if cls.cuda is False:
        gpu.evidence.append(
            Evidence(
                CHIP_RULE_SOURCE,
                ok=True,
                detail=f"{cls.chip}: {cls.architecture} — {pcidb.NO_CUDA} in current CUDA releases",
            )
        )


def classify_by_name(gpu: Gpu) -> None:
    """Compute capability from an unambiguous pci.ids marketing-name match (GPUs only a driver reported)."""
    cls, chips, single = chip_class_by_name(gpu.name)
    if cls is None:
        return
    gpu.chip = gpu.chip or (cls.chip if single else None)
    gpu.architecture = gpu.architecture or cls.architecture
    gpu.compute_capability = ComputeCapability.parse(cls.compute_capability)
    gpu.compute_capability_source = NAME_MATCH_SOURCE
    gpu.evidence.append(Evidence(NAME_MATCH_SOURCE, detail=f"{gpu.name!r} is listed in pci.ids only for chip(s) {', '.join(sorted(chips))}"))


def enrich(machine: Machine) -> Machine:
    """Fill chip, architecture and compute capability of every NVIDIA GPU that lacks them, from the chip rule
    (after detection, and after loading a ``--for`` report or profile). Returns the same machine."""
    for gpu in machine.nvidia_gpus:
        if gpu.compute_capability and gpu.architecture:
            continue
        if gpu.pci.device_name or (gpu.pci.pci_id and pcidb.lookup(gpu.pci.vendor_id or "", gpu.pci.device_id or "")[1]):
            classify_pci_device(gpu)
        if gpu.compute_capability is None and gpu.cuda_supported is None:
            found, how = chip_class(gpu, by_name=False)  # a chip codename in the chip or name field
            if found is not None and how:
                _apply(gpu, found, how)
        if gpu.compute_capability is None and gpu.cuda_supported is None and gpu.name:
            classify_by_name(gpu)
    return machine
