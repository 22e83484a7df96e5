"""The published JSON schemas keep the README's promise: within a major version, minor versions only add
fields, so a reader validating with an older schema accepts a newer report; `analyze --json` has a schema
its output validates against."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from gpusetup import schema
from gpusetup.cli import main
from gpusetup.model import Finding, Gpu, Machine, Report, Severity, to_dict
from gpusetup.resources import resource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
F14 = FIXTURES / "recorded-issues" / "F14__fallen-off-bus-without-xid__nvsentinel-155.txt"


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(resource("schema", name).read_text(encoding="utf-8")))


def _report() -> dict:
    m = Machine()
    m.gpus = [Gpu(vendor="nvidia", name="NVIDIA A100-SXM4-80GB", index=0, compute_capability="8.0")]
    return to_dict(Report(machine=m, findings=[Finding("xid-79", Severity.ERROR, "GPU fell off the bus", gpu_index=0)]))


def test_committed_analyze_schema_matches_the_generator() -> None:
    assert resource("schema", "analyze.schema.json").read_text(encoding="utf-8") == schema.analyze_schema_text(), (
        "run: python -m gpusetup.schema"
    )


@pytest.mark.parametrize("where", ["top", "machine", "gpu", "finding", "system"])
def test_a_newer_minor_versions_added_field_is_accepted(where: str) -> None:
    v = _validator("report.schema.json")
    doc = _report()
    v.validate(doc)
    newer = copy.deepcopy(doc)
    target = {"top": newer, "machine": newer["machine"], "gpu": newer["machine"]["gpus"][0],
              "finding": newer["findings"][0], "system": newer["machine"]["system"]}[where]
    target["added_in_a_later_minor_version"] = {"anything": [1, 2]}
    v.validate(newer)


def test_a_wrong_type_is_still_refused() -> None:
    doc = _report()
    doc["machine"]["gpus"][0]["index"] = "zero"
    with pytest.raises(jsonschema.ValidationError):
        _validator("report.schema.json").validate(doc)
    doc = _report()
    del doc["findings"][0]["severity"]
    with pytest.raises(jsonschema.ValidationError):
        _validator("report.schema.json").validate(doc)


def test_analyze_json_validates_and_findings_carry_gpu_index(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["analyze", str(F14), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2 and out["findings"]
    _validator("analyze.schema.json").validate(out)
    assert all("gpu_index" in f for f in out["findings"])
    # each finding is the report's Finding, so the report schema's definition accepts it too
    finding_schema = {**json.loads(resource("schema", "report.schema.json").read_text(encoding="utf-8")),
                      "$ref": "#/$defs/Finding"}
    for f in out["findings"]:
        jsonschema.Draft202012Validator(finding_schema).validate(f)


def test_analyze_json_fleet_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for i in range(2):
        p = tmp_path / f"node-{i}.json"
        p.write_text(json.dumps(_report()), encoding="utf-8")
        paths.append(str(p))
    main(["analyze", *paths, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert len(out["machines"]) == 2
    _validator("analyze.schema.json").validate(out)
    broken = {**out, "machines": [{**out["machines"][0], "worst": "catastrophic"}]}
    with pytest.raises(jsonschema.ValidationError):
        _validator("analyze.schema.json").validate(broken)
