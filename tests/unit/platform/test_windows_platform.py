"""Windows platform: CIM Win32_VideoController and DxDiag.

No real ``Get-CimInstance Win32_VideoController`` recording exists (tests/fixtures/README.md, "Not found").
The CIM records below therefore carry exactly the values of the real DxDiag fixture (same machine: Intel Arc
iGPU + RTX 3050 4GB Laptop GPU, driver 32.0.15.5599), in the shape CIM's ConvertTo-Json prints. Nothing
else is invented: the PnP instance suffix that CIM would add after the ids is left out.
"""

from __future__ import annotations

import json

import pytest
from fakes.fsroot import fixture
from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.platform.windows import (
    WindowsPlatform,
    nvidia_driver_version,
    parse_dxdiag_display_devices,
    parse_pnp_device_id,
    parse_video_controllers,
)

DXDIAG = (
    "windows/dxdiag-display-devices__hybrid-intel-arc+rtx-3050-4gb-laptop__excerpt__Anclora-Aura-Reflect.txt"
)

# Values from the DxDiag fixture ("Card name", "Device Key" without "Enum\", "Driver Version").
CIM_FROM_DXDIAG = [
    {
        "Name": "Intel(R) Arc(TM) Graphics",
        "PNPDeviceID": "PCI\\VEN_8086&DEV_7D55&SUBSYS_053B1854&REV_08",
        "DriverVersion": "32.0.101.5768",
        "AdapterRAM": None,
        "VideoProcessor": "Intel(R) Arc(TM) Graphics Family",
    },
    {
        "Name": "NVIDIA GeForce RTX 3050 4GB Laptop GPU",
        "PNPDeviceID": "PCI\\VEN_10DE&DEV_25AB&SUBSYS_052F1854&REV_A1",
        "DriverVersion": "32.0.15.5599",
        "AdapterRAM": None,
        "VideoProcessor": "NVIDIA GeForce RTX 3050 4GB Laptop GPU",
    },
]


def _runner(payload) -> FakeRunner:
    return FakeRunner().add(["powershell"], Reply(json.dumps(payload)))


def _ctx(runner) -> ProbeContext:
    return ProbeContext(runner=runner, env={"COMPUTERNAME": "LAPTOP"}, os_name="windows")


@pytest.mark.parametrize(
    ("win", "nv"),
    [
        ("32.0.15.5599", "555.99"),  # the DxDiag fixture's own pairing
        ("31.0.15.3623", "536.23"),
        ("27.21.14.5671", "456.71"),
        ("9.18.13.4788", "347.88"),
        ("32.0.15.6070", "560.70"),
        ("garbage", None),
        ("32.0.15", None),
        ("", None),
    ],
)
def test_nvidia_driver_version_mapping(win, nv):
    assert nvidia_driver_version(win) == nv


def test_pnp_device_id():
    p = parse_pnp_device_id("PCI\\VEN_10DE&DEV_25AB&SUBSYS_052F1854&REV_A1\\4&2AA3B4C&0&0008")
    assert (p.vendor_id, p.device_id, p.subsystem_vendor_id, p.subsystem_device_id, p.revision) == (
        "10de",
        "25ab",
        "1854",
        "052f",
        "a1",
    )
    assert parse_pnp_device_id("ROOT\\BasicRender\\0000").vendor_id is None


def test_platform_from_cim_with_the_dxdiag_values():
    payload = {
        "VideoControllers": CIM_FROM_DXDIAG,
        "OperatingSystem": {
            "Caption": "Microsoft Windows 11 Home",
            "Version": "10.0.22631",
            "BuildNumber": "22631",
            "OSArchitecture": "64-bit",
            "TotalVisibleMemorySize": 16_500_000,
            "FreePhysicalMemory": 8_000_000,
        },
        "Processors": {
            "Name": "Intel(R) Core(TM) Ultra 7 155H",
            "Manufacturer": "GenuineIntel",
            "NumberOfCores": 16,
            "NumberOfLogicalProcessors": 22,
        },
    }
    runner = _runner(payload)
    p = WindowsPlatform()
    ctx = _ctx(runner)
    devs = p.pci_display_devices(ctx)
    s = p.system(ctx)
    assert len(runner.calls) == 1  # one PowerShell call answers both questions
    assert [d.pci_id for d in devs] == ["8086:7d55", "10de:25ab"]
    nv = devs[1]
    assert nv.device_name == "GA107M [GeForce RTX 3050 4GB Laptop GPU]"  # pci.ids name (chip for the rule)
    assert (nv.subsystem_vendor_id, nv.revision, nv.kernel_driver) == ("1854", "a1", "nvlddmkm")
    assert p.driver_versions(ctx)[1] == ("10de:25ab", "32.0.15.5599", "555.99")
    assert p.driver_versions(ctx)[0][2] is None  # an Intel version is never turned into an NVIDIA one
    assert (s.os, s.distro_name, s.arch, s.hostname) == (
        "windows",
        "Microsoft Windows 11 Home",
        "x86_64",
        "LAPTOP",
    )
    assert s.cpu.cores_logical == 22 and s.ram_total_mib == 16_500_000 // 1024


def test_single_adapter_plain_query_and_software_adapters():
    one = dict(CIM_FROM_DXDIAG[1])  # ConvertTo-Json prints an object, not a list, for one adapter
    assert [i.pci_id for i, _ in parse_video_controllers(one)] == ["10de:25ab"]
    basic = {"Name": "Microsoft Basic Display Adapter", "PNPDeviceID": "ROOT\\BasicDisplay\\0000"}
    assert parse_video_controllers([basic, None, 3]) == []
    runner = FakeRunner().add(["powershell"], Reply(json.dumps(CIM_FROM_DXDIAG)))  # the bare list form
    assert len(WindowsPlatform().pci_display_devices(_ctx(runner))) == 2


def test_location_info_gives_the_bus_address():
    rec = dict(CIM_FROM_DXDIAG[1], LocationInfo="PCI bus 1, device 0, function 0")
    ((info, _),) = parse_video_controllers([rec])
    assert info.address == "0000:01:00.0"


def test_powershell_missing_or_failing_is_reported_not_raised():
    p = WindowsPlatform()
    assert p.pci_display_devices(_ctx(FakeRunner())) == []
    s = p.system(_ctx(FakeRunner()))
    assert s.os == "windows" and s.evidence[-1].ok is False and "PowerShell" in s.evidence[-1].error
    broken = WindowsPlatform()
    assert broken.pci_display_devices(_ctx(FakeRunner().add(["powershell"], Reply("{not json")))) == []
    hung = WindowsPlatform()
    assert hung.pci_display_devices(_ctx(FakeRunner().add(["powershell"], Reply.hung()))) == []


def test_dxdiag_fixture_parses():
    devs = parse_dxdiag_display_devices(fixture(DXDIAG))
    assert [(i.pci_id, f.get("Driver Version")) for i, f in devs] == [
        ("8086:7d55", "32.0.101.5768"),
        ("10de:25ab", "32.0.15.5599"),
    ]
    assert devs[1][0].subsystem_vendor_id == "1854" and devs[1][0].revision == "a1"


def test_pci_probe_on_windows_classifies_the_nvidia_gpu():
    runner = _runner({"VideoControllers": CIM_FROM_DXDIAG})
    m = detect(ProbeContext(runner=runner, env={}, os_name="windows", only=("pci",)))
    nv = [g for g in m.gpus if g.vendor == "nvidia"]
    assert len(nv) == 1 and len(m.gpus) == 2
    assert (nv[0].chip, nv[0].compute_capability, nv[0].architecture) == ("GA107", "8.6", "Ampere")
    assert nv[0].name == "NVIDIA GeForce RTX 3050 4GB Laptop GPU"
    assert m.probes[0].ok


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["Name", "PNPDeviceID", "DriverVersion", "LocationInfo", "x"]),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(_JSON_VALUES, st.integers(0, 3000), st.text(max_size=30))
def test_garbled_cim_and_dxdiag_never_raise(value, cut, noise):
    parse_video_controllers(value)
    text = fixture(DXDIAG)
    parse_dxdiag_display_devices(text[:cut] + noise + text[cut : cut + 500])
    nvidia_driver_version(noise)
