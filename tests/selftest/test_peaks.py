"""The GPU spec table, peak computation and verdict bands."""

from __future__ import annotations

import json

import jsonschema
import pytest

from gpusetup.resources import resource
from gpusetup.selftest import peaks


@pytest.fixture(scope="module")
def specs() -> peaks.Specs:
    return peaks.load_specs()


def test_spec_file_matches_its_schema_and_has_sources():
    data = json.loads(resource("gpu_specs.json").read_text())
    jsonschema.validate(data, json.loads(resource("schema", "gpu_specs.schema.json").read_text()))
    assert len(data["tables"]["gpus"]["rows"]) == 73  # performance.md §1.1
    for table in data["tables"].values():
        assert table["source"] and table["checked"]


@pytest.mark.parametrize(("name", "pci", "row"), [
    ("NVIDIA GeForce RTX 4080 SUPER", None, "GeForce RTX 4080 SUPER"),
    ("NVIDIA GeForce RTX 4080", None, "GeForce RTX 4080"),
    ("NVIDIA GeForce RTX 3090", None, "GeForce RTX 3090"),
    ("NVIDIA H100 80GB HBM3", None, "H100 SXM5 80GB"),
    ("NVIDIA A100-SXM4-80GB", None, "A100 SXM4 80GB"),
    ("Tesla T4", None, "Tesla T4"),
    ("NVIDIA RTX 6000 Ada Generation", None, "RTX 6000 Ada"),
    ("NVIDIA L40S", None, "L40S"),
    ("some renamed board", "10de:2330", "H100 SXM5 80GB"),
    ("NVIDIA GeForce RTX 4070 SUPER", None, None),  # not in the table: must not match the plain 4070
    ("NVIDIA GeForce RTX 3060 Laptop GPU", None, None),  # laptop parts differ from the desktop row
])
def test_find_matches_names_and_pci_ids(specs, name, pci, row):
    found = specs.find(name, pci)
    assert (found.name if found else None) == row


def test_pcie_peaks(specs):
    assert specs.pcie_peak(4, 16) == 31.5
    assert specs.pcie_peak(4, 8) == 15.75
    assert specs.pcie_peak(3, 16) == 15.75
    assert specs.pcie_peak(None, 16) is None


def test_fp32_rates_reproduce_the_datasheet_at_the_rated_clock(specs):
    """SMs × per-SM rate × boost clock gives the table's FP32 figures (cross-check of the rate table)."""
    cases = [("GeForce RTX 3090", "8.6", 82, 1695), ("A100 SXM4 40GB", "8.0", 108, 1410),
             ("Tesla V100 SXM2 32GB", "7.0", 80, 1530), ("GeForce RTX 4090", "8.9", 128, 2520)]
    for name, cc, sms, mhz in cases:
        spec = specs.find(name)
        r = peaks.compute_peak("fp32", spec, specs, cc=cc, sm_count=sms, live_mhz=mhz, max_mhz=None)
        assert r.basis == "live-clock"
        assert r.value == pytest.approx(spec.fp32_tflops, rel=0.02), name


def test_geforce_tensor_peak_uses_half_rate_and_live_clock(specs):
    spec = specs.find("NVIDIA GeForce RTX 4090")
    r = peaks.compute_peak("tensor", spec, specs, cc="8.9", sm_count=128, live_mhz=2520, max_mhz=3120)
    assert r.value == pytest.approx(165.2, rel=0.01) and r.datasheet == 165.2
    boosted = peaks.compute_peak("tensor", spec, specs, cc="8.9", sm_count=128, live_mhz=2790, max_mhz=None)
    assert boosted.value > 165.2 and "2790 MHz" in boosted.detail and "datasheet 165.2" in boosted.detail


def test_implausible_live_peak_falls_back_to_the_datasheet(specs):
    spec = specs.find("NVIDIA A100-SXM4-80GB")
    r = peaks.compute_peak("tensor", spec, specs, cc="8.6", sm_count=108, live_mhz=1410, max_mhz=None)
    assert r.basis == "datasheet" and r.value == 312


def test_unknown_gpu_gets_no_tensor_peak_but_a_clock_based_fp32_one(specs):
    assert peaks.compute_peak("tensor", None, specs, cc="8.9", sm_count=60, live_mhz=2500, max_mhz=None) is None
    r = peaks.compute_peak("fp32", None, specs, cc="8.9", sm_count=60, live_mhz=2500, max_mhz=None)
    assert r.value == pytest.approx(60 * 256 * 2500e6 / 1e12)


@pytest.mark.parametrize(("fraction", "verdict"), [(0.80, "pass"), (0.70, "warn"), (0.55, "fail")])
def test_bands(specs, fraction, verdict):
    got, reason = peaks.judge(fraction, specs.band("h2d_pinned", None, "any"), "copy")
    assert got == verdict and f"{fraction:.0%}" in reason


def test_band_selection_is_most_specific(specs):
    assert specs.band("gemm_tensor", "geforce", "datasheet").pass_at == 0.90
    assert specs.band("gemm_tensor", "geforce", "live-clock").pass_at == 0.75
    assert specs.band("gemm_tensor", "datacenter", "live-clock").pass_at == 0.60
    assert specs.band("gemm_fp32", "datacenter", "dual-issue").pass_at == 0.50
    assert specs.band("gemm_fp32", "datacenter", "any").pass_at == 0.70
    assert peaks.judge(None, None, "x")[0] == "info"
