"""The last classification pass: chip rule for GPUs only the driver reported, marketing names only when
unambiguous (compat.md §4.1: marketing names are reused across chips)."""

from gpusetup.model import Gpu, Machine, PciInfo
from gpusetup.probe import ProbeContext
from gpusetup.probe.classify import NAME_MATCH_SOURCE, chips_for_name, probe


def _run(*gpus: Gpu) -> Machine:
    m = Machine(gpus=list(gpus))
    probe(ProbeContext(), m)
    return m


def test_masked_pci_id_falls_back_to_an_unambiguous_name():
    # the recorded telegraf RTX 3090 XML has its pci_device_id redacted
    (g,) = _run(Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090", architecture="Ampere")).gpus
    assert (g.chip, g.compute_capability, g.compute_capability_source) == ("GA102", "8.6", NAME_MATCH_SOURCE)


def test_ambiguous_marketing_names_stay_unclassified():
    # pci.ids has a Kepler GK107 and a Pascal GP108 "GeForce GT 1030"
    assert len(chips_for_name("NVIDIA GeForce GT 1030")) >= 2
    (g,) = _run(Gpu(vendor="nvidia", name="NVIDIA GeForce GT 1030")).gpus
    assert g.compute_capability is None


def test_pci_id_wins_over_the_name():
    gpu = Gpu(vendor="nvidia", name="Graphics Device", pci=PciInfo(vendor_id="10de", device_id="2182"))
    (g,) = _run(gpu).gpus
    assert g.chip == "TU116" and g.compute_capability == "7.5"


def test_values_from_the_driver_are_kept():
    gpu = Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090", compute_capability="8.6", compute_capability_source="nvml", architecture="Ampere")
    (g,) = _run(gpu).gpus
    assert g.compute_capability_source == "nvml"


def test_other_vendors_untouched():
    (g,) = _run(Gpu(vendor="amd", name="Radeon RX 7900 XTX")).gpus
    assert g.compute_capability is None and g.chip is None
