"""Reading the machine to plan for: diagnose reports, serialised Machines, small profiles, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpusetup.compat.profile import ProfileError, load_machine_file, machine_from_data
from gpusetup.model import Driver, Finding, Gpu, Machine, Report, Severity, System, to_dict

ISSUE_PROFILE = {
    "os": "linux",
    "wsl": False,
    "arch": "x86_64",
    "python": "3.12",
    "driver": "580.95.05",
    "gpus": [
        {"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1", "pci_id": "10de:1b06"},
        {"vendor": "amd", "name": "Radeon RX 7900 XTX", "gfx": "gfx1100"},
    ],
}


def write(tmp_path: Path, data: object, name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return p


def test_issue_profile_example(tmp_path: Path) -> None:
    m = load_machine_file(write(tmp_path, ISSUE_PROFILE))
    assert (m.system.os, m.system.arch, m.system.python, m.system.wsl) == ("linux", "x86_64", "3.12", False)
    assert m.driver.version == "580.95.05"
    assert [g.vendor for g in m.gpus] == ["nvidia", "amd"]
    assert m.gpus[0].compute_capability == "6.1" and m.gpus[0].pci.pci_id == "10de:1b06"
    assert m.gpus[1].gfx_target == "gfx1100"


def test_pci_id_only_gpu_gets_vendor_and_pci_name(tmp_path: Path) -> None:
    m = load_machine_file(write(tmp_path, {"os": "linux", "driver": None, "gpus": [{"pci_id": "10DE:1B06"}]}))
    g = m.gpus[0]
    assert g.vendor == "nvidia" and g.pci.device_id == "1b06"
    assert g.pci.device_name and "GP102" in g.pci.device_name
    assert m.driver.version is None


def test_diagnose_report_and_machine_json(tmp_path: Path) -> None:
    machine = Machine(
        system=System(os="windows", arch="AMD64", python="3.11.9"),
        driver=Driver(version="560.94"),
        gpus=[Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3060", compute_capability="8.6")],
    )
    report = Report(machine=machine, findings=[Finding(id="x", severity=Severity.WARNING, title="t")])
    for data in (to_dict(report), to_dict(machine)):
        m = load_machine_file(write(tmp_path, data))
        assert m.system.os == "windows" and m.driver.version == "560.94"
        assert m.gpus[0].compute_capability == "8.6"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not valid JSON (line 1"),
        ([1, 2], "expected a JSON object"),
        ({"hello": 1}, "neither a gpusetup diagnose report"),
        ({"os": "linux", "gpus": [], "pyhton": "3.12"}, "unknown field(s) pyhton"),
        ({"os": "beos", "gpus": []}, "'os' must be one of linux, windows, macos"),
        ({"os": "linux", "driver": 580, "gpus": []}, "'driver' must be an NVIDIA driver version"),
        ({"os": "linux", "python": "twelve", "gpus": []}, "'python' must be a version string"),
        ({"os": "linux", "wsl": "yes", "gpus": []}, "'wsl' must be true or false"),
        ({"os": "macos", "wsl": True, "gpus": []}, "WSL2 runs Linux"),
        ({"os": "linux", "gpus": {"vendor": "nvidia"}}, "'gpus' must be a list"),
        ({"os": "linux", "gpus": [{"vendor": "nvidia", "compute_capability": 8.6}]}, "gpus[0]: 'compute_capability' must be a string"),
        ({"os": "linux", "gpus": [{"vendor": "nvidia", "pci_id": "10de-1b06"}]}, "'pci_id' must look like"),
        ({"os": "linux", "gpus": [{"vendor": "amd", "gfx": "rdna3"}]}, "'gfx' must be an AMD gfx target"),
        ({"os": "linux", "gpus": [{"vendor": "nvidia", "gfx": "gfx1100"}]}, "'gfx' is for AMD GPUs only"),
        ({"os": "linux", "gpus": [{"vendor": "matrox", "name": "G200"}]}, "'vendor' must be one of"),
        ({"os": "linux", "gpus": [{"vendor": "nvidia"}]}, "give at least a name"),
        ({"machine": {"system": {"os": 5}}}, "does not match its format"),
    ],
)
def test_malformed_input_is_explained(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(ProfileError) as err:
        load_machine_file(write(tmp_path, data))
    assert message in str(err.value)
    assert "m.json" in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no such file"):
        load_machine_file(tmp_path / "absent.json")


def test_machine_from_data_defaults() -> None:
    m = machine_from_data({"os": "macos", "gpus": [{"vendor": "apple"}]})
    assert m.system.arch is None and m.gpus[0].vendor == "apple"
