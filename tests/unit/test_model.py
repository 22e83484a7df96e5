import json

import pytest

from gpusetup.model import Finding, Gpu, Machine, PciInfo, Report, SchemaError, Severity, from_dict, to_dict


def test_machine_round_trips_through_json():
    m = Machine(tool_version="0")
    m.gpus.append(Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090", pci=PciInfo(address="0000:01:00.0", vendor_id="10de", device_id="2204")))
    text = json.dumps(to_dict(m))
    back = from_dict(Machine, json.loads(text))
    assert back == m
    assert back.gpus[0].pci.pci_id == "10de:2204"


def test_from_dict_rejects_wrong_types_with_a_path():
    with pytest.raises(SchemaError, match=r"\$\.gpus\[0\]\.memory_total_mib"):
        from_dict(Machine, {"gpus": [{"vendor": "nvidia", "memory_total_mib": "lots"}]})


def test_unknown_keys_are_ignored_for_newer_writers():
    m = from_dict(Machine, {"gpus": [], "something_new": 1})
    assert m.gpus == []


def test_worst_severity_and_exit_code():
    r = Report(machine=Machine(), findings=[Finding("a", Severity.INFO, "x"), Finding("b", Severity.WARNING, "y")])
    assert r.worst is Severity.WARNING
    assert r.worst.exit_code == 1
    assert Report(machine=Machine()).worst.exit_code == 0
