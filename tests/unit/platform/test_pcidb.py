"""pci.ids subset and the NVIDIA chip rule (compat.md §4.1), checked against the real pci.ids sections."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from fakes.fsroot import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup import pcidb
from gpusetup.resources import resource

NV_SECTION = "pci-ids/pci.ids__nvidia-10de-section-only.txt"


def _section(fixtures, name):
    return pcidb.parse_pci_ids((fixtures / name).read_text(encoding="utf-8", errors="replace"))


# Examples of compat.md §4.2 (PCI id → compute capability, architecture), including the ambiguous ones.
@pytest.mark.parametrize(
    ("device", "chip", "cc", "arch"),
    [
        ("11c7", "GK106", "3.0", "Kepler"),  # sold as "GeForce GTX 750 Ti" — a Kepler, not the Maxwell one
        ("1380", "GM107", "5.0", "Maxwell"),  # the Maxwell GTX 750 Ti
        ("0fc5", "GK107", "3.0", "Kepler"),  # sold as "GeForce GT 1030" — a Kepler
        ("1d01", "GP108", "6.1", "Pascal"),  # the Pascal GT 1030
        ("2822", "AD106", "8.9", "Ada Lovelace"),  # "RTX 3050 A Laptop GPU" is Ada, not Ampere
        ("28a3", "AD107", "8.9", "Ada Lovelace"),
        ("25ab", "GA107", "8.6", "Ampere"),  # RTX 3050 4GB Laptop (the DxDiag fixture's GPU)
        ("2560", "GA106", "8.6", "Ampere"),  # RTX 3060 Mobile (the lspci fixture's GPU)
        ("102d", "GK210", "3.7", "Kepler"),  # Tesla K80
        ("17fd", "GM200", "5.2", "Maxwell"),  # Tesla M40
        ("15f7", "GP100", "6.0", "Pascal"),
        ("1db1", "GV100", "7.0", "Volta"),
        ("1eb8", "TU104", "7.5", "Turing"),  # Tesla T4
        ("20b0", "GA100", "8.0", "Ampere"),
        ("2684", "AD102", "8.9", "Ada Lovelace"),  # RTX 4090
        ("2330", "GH100", "9.0", "Hopper"),
        ("2901", "GB100", "10.0", "Blackwell"),
        ("3182", "GB110", "10.3", "Blackwell Ultra"),
        ("2b00", "GB10B", "11.0", "Blackwell (Tegra Thor)"),
        ("2b85", "GB202", "12.0", "Blackwell"),  # RTX 5090
        ("2e12", "GB20B", "12.1", "Blackwell (GB10)"),
    ],
)
def test_chip_rule_on_shipped_pci_ids(device, chip, cc, arch):
    cls = pcidb.classify_pci("10de", device)
    assert cls == pcidb.ChipClass(chip, cc, arch, True)


def test_marketing_names_are_never_classified():
    assert pcidb.classify_nvidia("NVIDIA GeForce GTX 750 Ti") is None
    assert pcidb.classify_nvidia("GeForce RTX 3050 A Laptop GPU") is None
    # …only the chip outside the brackets counts
    assert pcidb.classify_nvidia("GK106 [GeForce GTX 750 Ti]").compute_capability == "3.0"
    assert pcidb.classify_nvidia("NVIDIA Corporation TU116 [GeForce GTX 1660 SUPER] (rev a1)").chip == "TU116"


def test_chip_suffixes_and_case():
    assert pcidb.classify_nvidia("GV100GL").chip == "GV100"
    assert pcidb.classify_nvidia("ad107glm").compute_capability == "8.9"
    assert pcidb.classify_nvidia("GK110B").compute_capability == "3.5"
    assert pcidb.classify_nvidia("GA10B").compute_capability == "8.7"  # not GA100's 8.0
    assert pcidb.classify_nvidia("GM20B").compute_capability == "5.3"  # not GM200's 5.2
    assert pcidb.classify_nvidia("GA1000") is None  # digits after a known chip: not that chip


def test_pre_kepler_and_chipsets_have_no_cuda():
    fermi = pcidb.classify_pci("10de", "0de1")  # GF108 [GeForce GT 430]
    assert fermi is not None and fermi.cuda is False and fermi.compute_capability is None
    assert fermi.chip == "GF108" and fermi.architecture == "Fermi"
    chipset = pcidb.classify_pci("10de", "0240")  # C51PV [GeForce 6150]
    assert chipset is not None and chipset.cuda is False
    assert pcidb.classify_nvidia("GT216").cuda is False
    assert pcidb.classify_nvidia("NV40").cuda is False


def test_unknown_chip_is_unknown_not_guessed():
    gb112 = pcidb.classify_pci("10de", "3200")
    assert gb112 == pcidb.ChipClass("GB112", None, "Blackwell (unconfirmed)", None)


def test_lookup_names_and_unknowns():
    assert pcidb.lookup("10de", "2560") == ("NVIDIA Corporation", "GA106M [GeForce RTX 3060 Mobile / Max-Q]")
    assert pcidb.lookup("0x10DE", "0x2204") == ("NVIDIA Corporation", "GA102 [GeForce RTX 3090]")
    assert pcidb.lookup("1002", "687f")[1] == "Vega 10 XL/XT [Radeon RX Vega 56/64]"
    assert pcidb.lookup("8086", "5917")[1] == "Kaby Lake-R GT2 [UHD Graphics 620]"
    assert pcidb.lookup("1af4", "1050")[1] == "Virtio 1.0 GPU"
    assert pcidb.lookup("1a03", "2000")[1] == "ASPEED Graphics Family"
    assert pcidb.lookup("1414", "008e")[1] == "Basic Render Driver"  # what WSL2 shows on its bus
    assert pcidb.lookup("17aa", "ffff") == ("Lenovo", None)  # every vendor is named
    assert pcidb.lookup("zzzz", "1234") == (None, None)
    assert pcidb.classify_pci("1002", "687f") is None


def test_subset_keeps_every_cuda_gpu_of_the_full_section(fixtures):
    """Every NVIDIA display GPU the chip rule classifies in the real pci.ids section is shipped, same name."""
    full = _section(fixtures, NV_SECTION).vendors["10de"][1]
    shipped = pcidb.pci_ids().vendors["10de"][1]
    non_gpu = re.compile(r"audio|usb|bridge|nvswitch|ucsi", re.I)
    missing = []
    for dev, name in full.items():
        cls = pcidb.classify_nvidia(name)
        if cls and cls.compute_capability and not non_gpu.search(name) and shipped.get(dev) != name:
            missing.append(f"{dev} {name}")
    assert missing == []
    assert sum(1 for n in shipped.values() if (c := pcidb.classify_nvidia(n)) and c.compute_capability) > 800


def test_subset_keeps_the_amd_and_intel_gpus(fixtures):
    amd_full = _section(fixtures, "pci-ids/pci.ids__amd-ati-1002-section-only.txt").vendors["1002"][1]
    amd = pcidb.pci_ids().vendors["1002"][1]
    for dev in ("687f", "744c", "73bf", "164e", "1638"):  # Vega 64, RX 7900, RX 6800, Raphael, Cezanne
        assert amd[dev] == amd_full[dev]
    intel = pcidb.pci_ids().vendors["8086"][1]
    assert any("Arc" in n for n in intel.values())
    assert not any("SMBus" in n or "USB" in n for n in intel.values())


def test_shipped_file_header_licence_version_and_size():
    path = resource("pci.ids")
    head = path.read_text(encoding="utf-8")[:3000]
    assert "Version: 2026.08.22" in head
    assert "3-clause BSD License" in head
    assert "gpusetup subset: cut by scripts/cut_pci_ids.py" in head
    assert path.stat().st_size < 400_000
    assert pcidb.data_versions()["pci.ids"] == "2026.08.22"


def test_gpu_chips_data_validates_and_carries_provenance():
    data = json.loads(resource("compat", "gpu_chips.json").read_text())
    schema = json.loads(resource("schema", "compat", "gpu_chips.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    for table in data["tables"].values():
        assert table["source"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", table["checked"])
    assert "chip prefix" in data["tables"]["cuda_chips"]["note"].lower()
    bad = json.loads(json.dumps(data))
    bad["tables"]["cuda_chips"]["rows"][0]["compute_capability"] = "three"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(bad)


def test_parse_handles_subsystems_comments_and_duplicates():
    text = "# Version: 1\n10de  NVIDIA\n\t2204  GA102 [X]\n\t\t1043 87b3  sub\n# c\nffff  Illegal\nC 03  Display\n\t00  VGA\n"
    db = pcidb.parse_pci_ids(text)
    assert db.version == "1"
    assert db.lookup("10de", "2204") == ("NVIDIA", "GA102 [X]")
    assert db.lookup("ffff", "0000") == ("Illegal", None)
    assert "03" not in db.vendors


_NV_LINES = (FIXTURES / NV_SECTION).read_text(encoding="utf-8").splitlines()[:400]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_garbled_pci_ids_never_raise(data):
    lines = list(_NV_LINES)
    start = data.draw(st.integers(0, len(lines)))
    chunk = lines[start : start + data.draw(st.integers(0, 120))]
    noise = data.draw(st.text(max_size=200))
    pos = data.draw(st.integers(0, len(chunk)))
    chunk.insert(pos, noise)
    db = pcidb.parse_pci_ids("\n".join(chunk)[: data.draw(st.integers(0, 20000))])
    for _vid, (_name, devices) in db.vendors.items():
        for name in devices.values():
            pcidb.classify_nvidia(name)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_classify_any_text_never_raises(text):
    result = pcidb.classify_nvidia(text)
    assert result is None or isinstance(result, pcidb.ChipClass)
