"""macOS platform: ``system_profiler SPDisplaysDataType -json``.

No recording with provenance is in tests/fixtures. The samples below have the key layout seen in public
projects' tests of this command (``_name``, ``sppci_model``, ``spdisplays_vendor``, ``sppci_cores``…);
they are shape examples, not recordings, and only check that we read those keys and stay honest about CUDA.
"""

from __future__ import annotations

import json

from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.platform.macos import MacPlatform, parse_system_profiler_displays

APPLE = {
    "SPDisplaysDataType": [
        {
            "_name": "Apple M3 Max",
            "spdisplays_vendor": "sppci_vendor_Apple",
            "sppci_bus": "spdisplays_builtin",
            "sppci_cores": "40",
            "sppci_device_type": "spdisplays_gpu",
            "sppci_model": "Apple M3 Max",
        }
    ]
}
INTEL_MAC = {
    "SPDisplaysDataType": [
        {"_name": "Intel Iris Pro", "sppci_model": "Intel Iris Pro", "spdisplays_vram_shared": "1536 MB"},
        {
            "_name": "Radeon Pro 5500M",
            "spdisplays_vendor": "sppci_vendor_AMD",
            "spdisplays_vram": "4 GB",
            "sppci_model": "Radeon Pro 5500M",
            "spdisplays_device-id": "0x7340",
        },
        {"sppci_bus": "no name at all"},
    ]
}


def _runner(payload) -> FakeRunner:
    r = FakeRunner().add(["system_profiler"], Reply(json.dumps(payload)))
    r.add(["sw_vers"], Reply("14.5\n"))
    r.add(["sysctl"], Reply("Apple M3 Max\n68719476736\n14\n14\n"))
    return r


def test_apple_silicon_is_reported_without_cuda():
    ctx = ProbeContext(runner=_runner(APPLE), env={}, os_name="macos", only=("system", "pci"))
    m = detect(ctx)
    (gpu,) = m.gpus
    assert gpu.vendor == "apple" and gpu.name == "Apple M3 Max"
    assert gpu.compute_capability is None and gpu.chip is None
    assert (m.system.os, m.system.os_version, m.system.arch) == ("macos", "14.5", "arm64")
    assert m.system.cpu.vendor == "Apple" and m.system.ram_total_mib == 65536
    assert MacPlatform().libcuda_candidates(ctx) == []


def test_intel_mac_with_amd_gpu():
    devs = parse_system_profiler_displays(json.dumps(INTEL_MAC))
    assert [(d.vendor_id, d.device_id, d.device_name) for d in devs] == [
        ("8086", None, "Intel Iris Pro"),
        ("1002", "7340", "Radeon Pro 5500M"),
    ]


def test_bad_output_is_empty():
    assert parse_system_profiler_displays("") == []
    assert parse_system_profiler_displays("[1, 2]") == []
    assert parse_system_profiler_displays('{"SPDisplaysDataType": "x"}') == []


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400), st.text(max_size=30))
def test_garbled_system_profiler_never_raises(cut, noise):
    text = json.dumps(INTEL_MAC)
    parse_system_profiler_displays(text[:cut] + noise + text[cut:])
