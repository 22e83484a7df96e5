"""The shipped image list against its schema and its own invariants; the YAML files against PyYAML."""

from __future__ import annotations

import json

import jsonschema
import pytest

from gpusetup.generate import facts
from gpusetup.generate.render import yaml_text
from gpusetup.resources import resource

yaml = pytest.importorskip("yaml")


def test_images_json_matches_its_schema() -> None:
    schema = json.loads(resource("schema", "compat", "images.schema.json").read_text(encoding="utf-8"))
    data = json.loads(resource("compat", "images.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert not errors, [e.message for e in errors]


def test_tags_name_their_own_cuda_and_os_and_no_digest_is_invented() -> None:
    for name in ("nvidia_cuda", "nvidia_cuda_newer"):
        for row in facts.table(name)["rows"]:
            for flavour, tag in row["tags"].items():
                assert tag.startswith(row["cuda"] + "-") and tag.endswith("-" + row["os"]), tag
                assert flavour.split("-")[-1] in tag
            assert all(d is None for d in row["digests"].values())
    for row in facts.table("framework_images")["rows"]:
        assert row["digest"] is None


def test_every_pip_build_has_kernels_or_a_minimum_cc_and_a_family_driver() -> None:
    for row in facts.table("pip_builds")["rows"]:
        assert row["min_cc"] or row["kernels"], row
        assert facts.family_minimum(facts.mm(row["cuda"])[0]), row
        for arch in row["platforms"]:
            assert row["min_cc"] or row["kernels"].get(arch), (row, arch)


@pytest.mark.parametrize("value", [
    {"a": "true", "b": "1.0", "c": "08", "d": "--expect", "e": "x: y", "f": "", "g": None, "h": [], "i": {}},
    {"list": [{"k": [1, 2, {"deep": "yes"}]}, "plain/path", "with space", "#hash", "*star", "~"]},
    {"nvidia.com/gpu": 2, "quote\"d": "tab\tchar", "unicode": "Grüße →", "on": "off", "num": 1.5, "neg": -3},
])
def test_yaml_round_trips(value: object) -> None:
    assert yaml.safe_load(yaml_text(["a header", "with\nnewline: 1"], value)) == value
