"""gpusetup/resources.py is the one reader of the shipped data, and every read is bounded (issue 13)."""

from __future__ import annotations

import pytest

from gpusetup import pcidb, resources


def test_reads_are_bounded(tmp_path, monkeypatch) -> None:
    (tmp_path / "big.json").write_text("[" + "0," * 600 + "0]", encoding="utf-8")
    monkeypatch.setenv("GPUSETUP_RESOURCES", str(tmp_path))
    assert len(resources.read_json("big.json", limit=2000)) == 601
    with pytest.raises(resources.ResourceTooLarge):
        resources.read_json("big.json", limit=1000)


def test_pcidb_reads_the_shipped_files_through_resources(tmp_path, monkeypatch) -> None:
    """A replaced pci.ids past the bound is refused (logged), not read whole; the chip rule still answers."""
    (tmp_path / "compat").mkdir()
    (tmp_path / "compat" / "gpu_chips.json").write_bytes(resources.read_bytes("compat", "gpu_chips.json"))
    (tmp_path / "pci.ids").write_bytes(b"10de  NVIDIA Corporation\n" + b"#" * resources.MAX_BYTES)
    monkeypatch.setenv("GPUSETUP_RESOURCES", str(tmp_path))
    pcidb.pci_ids.cache_clear()
    pcidb._rules.cache_clear()
    try:
        assert pcidb.lookup("10de", "2504") == (None, None)
        chip = pcidb.classify_nvidia("GA106 [GeForce RTX 3060]")
        assert chip is not None and str(chip.compute_capability) == "8.6"
    finally:
        pcidb.pci_ids.cache_clear()
        pcidb._rules.cache_clear()
