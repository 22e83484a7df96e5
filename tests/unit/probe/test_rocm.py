"""rocm probe: amdgpu sysfs fixture, KFD topology, recorded rocm-smi --json and rocminfo outputs."""

from __future__ import annotations

import pathlib

import pytest
from fakes.fsroot import FIXTURES, add_amd_sysfs, fixture, make_root
from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.model import Machine
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.rocm import apply_rocm_smi, gfx_name, parse_rocminfo, probe

ROCMINFO = "rocm/rocminfo__mi300x-epyc-9534__abridged__ml-engineering.txt"


def _ctx(root, runner=None, only=None) -> ProbeContext:
    return ProbeContext(runner=runner or FakeRunner(), root=root, env={}, os_name="linux", only=only)


def test_sysfs_fixture_vram_vbios_link(tmp_path):
    m = detect(_ctx(add_amd_sysfs(tmp_path), only=("pci", "rocm")))
    amd = next(g for g in m.gpus if g.vendor == "amd")
    assert len(m.gpus) == 2  # rocm enriched the PCI entry, did not add one
    assert amd.memory_total_mib == 8573157376 // 2**20 and amd.memory_used_mib == 1490378752 // 2**20
    assert amd.vbios == "115-D050PIL-100"
    assert (amd.pcie.gen_current, amd.pcie.width_current, amd.pci.kernel_driver) == (3, 16, "amdgpu")
    assert amd.gfx_target is None  # the fixture has no KFD topology: unknown, not guessed


@pytest.mark.parametrize(
    ("v", "gfx"),
    [
        (90000, "gfx900"),
        (90010, "gfx90a"),
        (90402, "gfx942"),
        (100300, "gfx1030"),
        (110000, "gfx1100"),
        (110501, "gfx1151"),
        (120001, "gfx1201"),
        (0, None),
        (91600, None),
    ],
)
def test_gfx_names(v, gfx):
    assert gfx_name(v) == gfx


def test_kfd_topology_matches_by_pci_location(tmp_path):
    # KFD properties are "name value" lines; only the keys the probe reads are written here (no recording
    # of this file exists in the fixtures). location_id 0x0900 = bus 09, device 00, function 0.
    root = add_amd_sysfs(tmp_path)
    make_root(
        root,
        {
            "/sys/class/kfd/kfd/topology/nodes/0/properties": "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n",
            "/sys/class/kfd/kfd/topology/nodes/1/properties": "simd_count 256\ngfx_target_version 90000\nlocation_id 2304\ndomain 0\n",
        },
    )
    m = detect(_ctx(root, only=("pci", "rocm")))
    amd = next(g for g in m.gpus if g.vendor == "amd")
    assert amd.gfx_target == "gfx900" and len(m.gpus) == 2


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "rocm").glob("rocm-smi-json__*.json")), ids=lambda p: p.stem
)
def test_every_rocm_smi_json_fixture(path: pathlib.Path):
    m = Machine()
    apply_rocm_smi(m, path.read_text())
    assert m.gpus and all(g.vendor == "amd" for g in m.gpus)
    for g in m.gpus:
        assert g.memory_total_mib is None or g.memory_total_mib > 1000


def test_rx6700xt_details():
    m = Machine()
    apply_rocm_smi(m, fixture("rocm/rocm-smi-json__rx6700xt_rocm612__telegraf.json"))
    (g,) = m.gpus
    assert (g.pci.address, g.gfx_target, g.memory_total_mib) == (
        "0000:07:00.0",
        "gfx1031",
        12868124672 // 2**20,
    )
    assert g.name == "AMD Radeon RX 6700/6700 XT / 6800M" and g.pci.device_id == "73df"


def test_rocminfo_fills_gfx_when_counts_agree(tmp_path):
    agents = parse_rocminfo(fixture(ROCMINFO))
    assert [(a.get("type"), a.get("gfx"), a.get("marketing")) for a in agents] == [
        ("CPU", None, "AMD EPYC 9534 64-Core Processor"),
        ("GPU", "gfx942", "AMD Instinct MI300X"),
    ]
    make_root(
        tmp_path,
        {
            "/sys/class/drm/card0/device/uevent": "DRIVER=amdgpu\nPCI_ID=1002:74A1\nPCI_SLOT_NAME=0000:0c:00.0\n"
        },
    )
    runner = FakeRunner().add(["rocminfo"], Reply(fixture(ROCMINFO)))
    m = Machine()
    probe(_ctx(tmp_path, runner), m)
    (g,) = m.gpus
    assert g.gfx_target == "gfx942" and g.pci.address == "0000:0c:00.0"


def test_no_amd_gpu_and_other_os(tmp_path):
    m = Machine()
    probe(_ctx(tmp_path), m)
    assert m.gpus == []
    m = Machine()
    probe(ProbeContext(runner=FakeRunner(), root=tmp_path, env={}, os_name="windows"), m)
    assert m.gpus == []


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 4000), st.text(max_size=40))
def test_garbled_rocm_outputs(cut, noise):
    text = fixture("rocm/rocm-smi-json__mi100_rocm602__telegraf.json")
    apply_rocm_smi(Machine(), text[:cut] + noise)
    parse_rocminfo(fixture(ROCMINFO)[:cut] + noise)
