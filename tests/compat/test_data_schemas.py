"""Every compat data file (ours and the other helpers') validates against its schema; none lacks one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from gpusetup.compat import db
from gpusetup.resources import resource

DATA = sorted(resource("compat").glob("*.json"))
SCHEMAS = resource("schema", "compat")


@pytest.mark.parametrize("path", DATA, ids=[p.name for p in DATA])
def test_data_file_matches_its_schema(path: Path) -> None:
    schema_path = SCHEMAS / f"{path.stem}.schema.json"
    assert schema_path.is_file(), f"{path.name} has no schema at {schema_path}"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), schema)


@pytest.mark.parametrize("path", DATA, ids=[p.name for p in DATA])
def test_every_table_is_sourced_and_dated(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["name"] == path.stem
    for name, table in doc["tables"].items():
        assert table["source"] and all(s.startswith("https://") for s in table["source"]), name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", table["checked"]), name
        assert isinstance(table["verified"], bool), name


def test_schema_rejects_a_broken_row() -> None:
    doc = json.loads((resource("compat") / "cuda_drivers.json").read_text(encoding="utf-8"))
    doc["tables"]["family_minimums"]["rows"][0]["linux"] = "five-eighty"
    schema = json.loads((SCHEMAS / "cuda_drivers.schema.json").read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_unverified_facts_are_marked() -> None:
    """compat.md [S]/[I] facts that could not be confirmed carry verified=false (table or row)."""
    d = db.get_db(use_user_data=False)
    assert d.table("driver_branches", "architecture_min_driver").verified is False  # [I] in compat.md §3
    assert d.table("cudnn", "legacy_pins").verified is False  # [I] in compat.md §8
    rows = d.rows("cuda_drivers", "toolkit_drivers")
    assert all(r.get("verified") is False for r in rows if r["cuda"] == "13.3")  # [S] third-party copies
    torch215 = next(r for r in d.rows("pytorch", "releases") if r["version"] == "2.15")
    assert torch215.get("verified") is False  # RFC open when read


def test_db_info_reports_version_and_dates() -> None:
    info = db.get_db().info()
    assert info["origin"] == "embedded"
    assert re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", info["version"])
    assert info["checked"] and info["tables"]
    assert {"table", "checked", "verified", "rows", "source"} <= set(info["tables"][0])
