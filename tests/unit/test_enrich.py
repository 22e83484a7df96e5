"""One enrich step owns the PCI id / name → compute capability fallback, after detection and after `--for`;
the resolver and the container generator read the Gpu it filled instead of classifying again."""

from __future__ import annotations

from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.enrich import CHIP_RULE_SOURCE, NAME_MATCH_SOURCE, chip_class, enrich
from gpusetup.generate import facts
from gpusetup.model import Gpu, Machine, PciInfo


def test_for_profile_with_only_a_pci_id_is_enriched_once_for_every_consumer() -> None:
    # 10de:1b06 is GP102 [GeForce GTX 1080 Ti] in the shipped pci.ids; gpu_chips.json: GP102 → 6.1 (Pascal)
    m = machine_from_data({"os": "linux", "driver": "550.54.15", "python": "3.12",
                           "gpus": [{"vendor": "nvidia", "pci_id": "10de:1b06"}]})
    g = m.gpus[0]
    assert (g.chip, g.architecture, g.compute_capability) == ("GP102", "Pascal", "6.1")
    assert g.compute_capability_source == CHIP_RULE_SOURCE
    target = facts.gpu_targets(m)[0]
    assert target.cc == (6, 1) and target.gpu is g  # the generator reads the enriched Gpu itself
    plan = resolve(m, ["pytorch"])[0]
    assert any("GP102 [GeForce GTX 1080 Ti]" in str(n) for n in plan.notes)


def test_a_driver_reported_value_is_never_replaced() -> None:
    g = Gpu(vendor="nvidia", name="NVIDIA GeForce GTX 1080 Ti", compute_capability="6.1",
            compute_capability_source="nvml", architecture="Pascal",
            pci=PciInfo(vendor_id="10de", device_id="1b06", device_name="GP102 [GeForce GTX 1080 Ti]"))
    m = Machine(gpus=[g])
    enrich(m)
    assert g.compute_capability_source == "nvml" and g.evidence == []


def test_name_only_gpu_gets_its_capability_from_an_unambiguous_name() -> None:
    g = Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090")
    enrich(Machine(gpus=[g]))
    assert (g.compute_capability, g.compute_capability_source) == ("8.6", NAME_MATCH_SOURCE)
    found, how = chip_class(Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090"))
    assert found is not None and found.compute_capability == "8.6" and how and "name match" in how
    assert chip_class(Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090"), by_name=False) == (None, None)
