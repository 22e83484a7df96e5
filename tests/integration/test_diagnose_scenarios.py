"""`diagnose` end to end over whole fake machines built from real recorded outputs: every probe, the rules,
every report format and the JSON schema."""

from __future__ import annotations

import json

import jsonschema
import pytest
from fakes.scenarios import SCENARIOS, XML_FIXTURES, scenario

from gpusetup.model import Report, Severity
from gpusetup.probe import detect
from gpusetup.report import render
from gpusetup.resources import resource
from gpusetup.rules import evaluate

SCHEMA = json.loads(resource("schema", "report.schema.json").read_text())


def _run(tmp_path, name):
    machine = detect(scenario(tmp_path, name))
    report = Report(machine=machine, findings=evaluate(machine))
    data = json.loads(render(report, "json"))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    for fmt in ("text", "markdown", "html"):
        assert render(report, fmt)
    crashed = [p for p in machine.probes if not p.ok and p.error and "not available" not in p.error]
    assert not crashed, f"probes crashed: {crashed}"
    assert not [f for f in report.findings if f.id == "rule-crashed"]
    return machine, report


@pytest.mark.parametrize("fixture", XML_FIXTURES)
def test_every_recorded_nvidia_smi_xml_machine(tmp_path, fixture):
    machine, report = _run(tmp_path, f"xml:{fixture}")
    nvidia = machine.nvidia_gpus
    assert nvidia, "the recorded GPU must be reported"
    if "no-driver" not in fixture:
        assert machine.driver.version, "driver version from NVML"
        assert all(g.name for g in nvidia)
    # PCI and driver views are merged, not duplicated
    addrs = [g.pci.address for g in nvidia if g.pci.address]
    assert len(addrs) == len(set(addrs))


def test_no_gpu_machine(tmp_path):
    machine, report = _run(tmp_path, "no-gpu")
    assert machine.gpus == []
    assert report.findings and report.findings[0].severity in (Severity.WARNING, Severity.ERROR)


def test_nvidia_gpu_without_driver_is_classified_from_pci_ids(tmp_path):
    machine, report = _run(tmp_path, "nvidia-no-driver")
    (gpu,) = machine.gpus
    assert gpu.vendor == "nvidia" and gpu.pci.kernel_driver == "nouveau"
    assert gpu.compute_capability == "7.5" and gpu.chip and gpu.chip.startswith("TU116")
    assert "1660" in (gpu.name or gpu.pci.device_name or "")
    assert report.worst is Severity.ERROR
    assert any("driver" in f.title.lower() for f in report.findings)


def test_hung_nvidia_smi_still_gives_a_report(tmp_path):
    machine, report = _run(tmp_path, "hung-nvidia-smi")
    assert machine.gpus and machine.gpus[0].vendor == "nvidia"
    assert any(c.timed_out for c in machine.commands)
    assert report.worst is Severity.ERROR


def test_amd_and_intel_are_reported_honestly(tmp_path):
    machine, _ = _run(tmp_path, "amd-and-intel")
    vendors = sorted(g.vendor for g in machine.gpus)
    assert vendors == ["amd", "intel"]
    amd = next(g for g in machine.gpus if g.vendor == "amd")
    assert amd.memory_total_mib and amd.memory_total_mib > 1000


def test_scenarios_cover_the_named_kinds():
    assert {"no-gpu", "nvidia-no-driver", "hung-nvidia-smi", "amd-and-intel"} <= set(SCENARIOS)
    assert len(XML_FIXTURES) >= 17
