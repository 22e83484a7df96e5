"""The pci probe: GPUs named from pci.ids and NVIDIA ones classified by the chip rule, on fake roots."""

from __future__ import annotations

from fakes.fsroot import add_amd_sysfs, fixture, make_root
from fakes.runner import FakeRunner, Reply

from gpusetup.enrich import CHIP_RULE_SOURCE
from gpusetup.model import Gpu, Machine, PciInfo
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.pci import probe

LSPCI_VVNN = "lspci/lspci-vvnn__lenovo-legion5-15ach6h__rtx-3060-mobile-ga106m+amd-cezanne-igpu__fedora40__excerpt-4-devices__linuxhw-LsPCI.txt"


def _ctx(root, runner=None) -> ProbeContext:
    return ProbeContext(runner=runner or FakeRunner(), root=root, env={}, os_name="linux")


def _nv_dev(root, addr: str, device: str, driver: str | None = None):
    files = {
        f"/sys/bus/pci/devices/{addr}/class": "0x030000\n",
        f"/sys/bus/pci/devices/{addr}/vendor": "0x10de\n",
        f"/sys/bus/pci/devices/{addr}/device": f"0x{device}\n",
        f"/sys/bus/pci/devices/{addr}/revision": "0xa1\n",
    }
    if driver:
        files[f"/sys/bus/pci/devices/{addr}/uevent"] = f"DRIVER={driver}\nPCI_SLOT_NAME={addr}\n"
    make_root(root, files)


def test_amd_and_intel_from_the_sysfs_fixture(tmp_path):
    m = Machine()
    probe(_ctx(add_amd_sysfs(tmp_path)), m)
    by_vendor = {g.vendor: g for g in m.gpus}
    assert set(by_vendor) == {"amd", "intel"}
    amd = by_vendor["amd"]
    assert amd.name == "AMD Radeon RX Vega 56/64"
    assert amd.pci.device_name == "Vega 10 XL/XT [Radeon RX Vega 56/64]"
    assert amd.pci.vendor_name == "Advanced Micro Devices, Inc. [AMD/ATI]"
    assert amd.compute_capability is None  # the chip rule is for NVIDIA only
    assert (amd.pcie.gen_current, amd.pcie.width_current) == (3, 16)
    assert by_vendor["intel"].name == "Intel UHD Graphics 620"


def test_nvidia_without_driver_is_classified_by_chip(tmp_path):
    _nv_dev(tmp_path, "0000:01:00.0", "0fc5")  # GK107 [GeForce GT 1030]: the Kepler one
    _nv_dev(tmp_path, "0000:02:00.0", "2822", "nouveau")  # AD106M [GeForce RTX 3050 A Laptop GPU]
    _nv_dev(tmp_path, "0000:03:00.0", "0de1")  # GF108 (Fermi): no CUDA support
    m = detect(ProbeContext(root=tmp_path, runner=FakeRunner(), env={}, os_name="linux", only=("pci",)))
    kepler, ada, fermi = m.gpus
    assert (kepler.name, kepler.chip, kepler.compute_capability, kepler.architecture) == (
        "NVIDIA GeForce GT 1030",
        "GK107",
        "3.0",
        "Kepler",
    )
    assert kepler.compute_capability_source == CHIP_RULE_SOURCE
    assert kepler.pci.kernel_driver is None  # no driver bound
    assert (ada.chip, ada.compute_capability, ada.pci.kernel_driver) == ("AD106", "8.9", "nouveau")
    assert fermi.compute_capability is None and fermi.architecture == "Fermi"
    assert any("no CUDA support" in (e.detail or "") for e in fermi.evidence)


def test_unknown_nvidia_id_is_named_honestly(tmp_path):
    _nv_dev(tmp_path, "0000:01:00.0", "ffff")
    m = Machine()
    probe(_ctx(tmp_path), m)
    (gpu,) = m.gpus
    assert gpu.vendor == "nvidia" and gpu.name == "Unknown device 10de:ffff (NVIDIA Corporation)"
    assert gpu.compute_capability is None
    assert any(not e.ok and "not in the shipped pci.ids" in e.error for e in gpu.evidence)


def test_lspci_fallback_feeds_the_probe(tmp_path):
    runner = FakeRunner().add(["lspci", "-nn", "-D", "-k"], Reply(fixture(LSPCI_VVNN)))
    m = Machine()
    probe(_ctx(tmp_path, runner), m)
    nv = m.nvidia_gpus[0]
    assert (nv.pci.address, nv.chip, nv.compute_capability) == ("0000:01:00.0", "GA106", "8.6")
    assert nv.pci.kernel_driver == "nvidia"
    assert [g.vendor for g in m.gpus] == ["nvidia", "amd"]


def test_driver_facts_already_present_are_kept(tmp_path):
    _nv_dev(tmp_path, "0000:01:00.0", "2204", "nvidia")
    m = Machine()
    m.gpus.append(
        Gpu(
            vendor="nvidia",
            name="NVIDIA GeForce RTX 3090",
            pci=PciInfo(address="00000000:01:00.0"),
            compute_capability="8.6",
            compute_capability_source="nvml",
            memory_total_mib=24576,
        )
    )
    probe(_ctx(tmp_path), m)
    (gpu,) = m.gpus  # enriched, not duplicated
    assert gpu.name == "NVIDIA GeForce RTX 3090" and gpu.compute_capability_source == "nvml"
    assert gpu.memory_total_mib == 24576
    assert gpu.pci.device_id == "2204" and gpu.chip == "GA102"


def test_no_display_device(tmp_path):
    make_root(tmp_path, {"/sys/bus/pci/devices/0000:00:03.0/class": "0x020000\n"})
    m = Machine()
    probe(_ctx(tmp_path), m)
    assert m.gpus == []


def test_virtual_and_bmc_adapters_are_named_as_such(tmp_path):
    for addr, vendor, device in (
        ("0000:00:02.0", "1af4", "1050"),
        ("0000:03:00.0", "1a03", "2000"),
        ("0000:00:01.0", "1234", "1111"),
    ):
        make_root(
            tmp_path,
            {
                f"/sys/bus/pci/devices/{addr}/class": "0x030000\n",
                f"/sys/bus/pci/devices/{addr}/vendor": f"0x{vendor}\n",
                f"/sys/bus/pci/devices/{addr}/device": f"0x{device}\n",
            },
        )
    m = Machine()
    probe(_ctx(tmp_path), m)
    names = sorted(g.name for g in m.gpus)
    assert names == [
        "ASPEED Graphics Family — server management (BMC) display, no compute",
        "Unknown device 1234:1111 (unknown vendor) — virtual display adapter (QEMU standard VGA)",
        "Virtio 1.0 GPU — virtual display adapter (VM)",
    ]
    assert {g.vendor for g in m.gpus} == {"other"}
