"""JSON Schema for gpusetup's JSON report, generated from the dataclasses in :mod:`gpusetup.model`.

The committed copy lives at ``resources/schema/report.schema.json``; a test checks it matches what this
module generates, and validates real reports against it. Regenerate with ``python -m gpusetup.schema``.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import types
import typing
from typing import Any

from gpusetup import model
from gpusetup.resources import resource
from gpusetup.versions import ComputeCapability, Version

SCHEMA_ID = "https://gpusetup.invalid/schema/report.schema.json"


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if tp is Any:
        return {}
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        subs = [_type_schema(a, defs) for a in args if a is not type(None)]
        if type(None) in args:
            subs.append({"type": "null"})
        return subs[0] if len(subs) == 1 else {"anyOf": subs}
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return {"type": "array", "items": _type_schema(item, defs)}
    if origin is dict:
        _, val = typing.get_args(tp) or (str, Any)
        return {"type": "object", "additionalProperties": _type_schema(val, defs)}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder against recursion
            hints = typing.get_type_hints(tp)
            props = {}
            required = []
            for f in dataclasses.fields(tp):
                props[f.name] = _type_schema(hints[f.name], defs)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    required.append(f.name)
            doc = (tp.__doc__ or "").strip().split("\n")[0]
            if doc.startswith(f"{name}("):  # dataclass's generated signature, not a description
                doc = ""
            defs[name] = {
                "type": "object",
                "description": doc,
                "properties": props,
                "required": sorted(props),  # writers always emit every field
                # no "additionalProperties": false — a newer minor version may add fields (README promise)
            }
        return {"$ref": f"#/$defs/{name}"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [m.value for m in tp]}
    if tp in (str, Version, ComputeCapability):  # versions and compute capabilities are texts in JSON
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    raise TypeError(f"no schema for {tp!r}")


def report_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    root = _type_schema(model.Report, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpusetup report",
        "description": (
            "What `gpusetup diagnose --json` writes. Versioned by `schema_version` (major changes break "
            "readers; minor versions only add fields). Generated from gpusetup/model.py."
        ),
        **root,
        "$defs": dict(sorted(defs.items())),
    }


ANALYZE_SCHEMA_ID = "https://gpusetup.invalid/schema/analyze.schema.json"


def analyze_schema() -> dict[str, Any]:
    """What `gpusetup analyze --json` writes: one merged diagnosis (inputs, facts, missing, findings), or, for
    several whole-machine reports or bundles, a fleet table (columns, machines). Findings are the report's
    Finding objects."""
    defs: dict[str, Any] = {}
    finding = _type_schema(model.Finding, defs)
    plan = _type_schema(model.FrameworkPlan, defs)
    strings = {"type": "array", "items": {"type": "string"}}
    both = {"type": "object", "required": ["en"], "additionalProperties": {"type": "string"},
            "description": "English, and Simplified Chinese (zh_CN) where the index has it"}
    similar = {
        "type": "object",
        "description": "A thread of the solved-report index (resources/solved) close to the input: similar, not "
                       "certain. closeness: 1 when the input holds all of its error words.",
        "required": ["url", "title", "family", "family_name", "component", "closeness", "signature", "cause", "fix",
                     "matched", "same_cause"],
        "properties": {
            "url": {"type": "string"}, "title": {"type": "string"}, "family": {"type": "string"},
            "family_name": {"type": "object", "additionalProperties": {"type": "string"}},
            "component": {"type": "string"}, "closeness": {"type": "number", "minimum": 0, "maximum": 1},
            "signature": strings, "cause": both, "fix": both, "matched": strings,
            "same_cause": {**strings, "description": "links of other close reports of the same cause family"},
        },
    }
    fact_line = {
        "type": "object",
        "description": "A fact read from what a person wrote, with the line it came from.",
        "required": ["fact", "value", "line", "input"],
        "properties": {"fact": {"type": "string"}, "value": {"type": "string"}, "line": {"type": "string"},
                       "input": {"type": "string"}},
    }
    single = {
        "type": "object",
        "description": "One diagnosis merged from every input.",
        "required": ["inputs", "facts", "missing", "findings"],
        "properties": {
            "inputs": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "kinds", "description", "error", "notes"],
                "properties": {
                    "name": {"type": "string"},
                    "kinds": strings,
                    "description": {"type": "string"},
                    "error": {"type": ["string", "null"]},
                    "notes": strings,
                    "warnings": {**strings, "description": "Read with a reservation (exit code at least 1): "
                                 "nothing recognised in it, files a bundle's manifest does not list, a report "
                                 "from a newer gpusetup."},
                },
            }},
            "facts": {"type": "object", "description": "The facts the inputs held (keys appear when known)."},
            "fact_lines": {"type": "array", "items": fact_line},
            "missing": strings,
            "findings": {"type": "array", "items": finding},
            "similar": {"type": "array", "items": similar},
            "plan": {"type": "array", "items": plan,
                     "description": "With --plan: the plan for the reporter's machine (as `gpusetup plan --json`'s plans)"},
        },
    }
    fleet = {
        "type": "object",
        "description": "Several whole-machine reports or bundles: one row per machine.",
        "required": ["columns", "machines"],
        "properties": {
            "columns": {"type": "array", "items": {
                "type": "object", "required": ["key", "id"],
                "properties": {"key": {"type": "string"}, "id": {"type": "string"}},
            }},
            "machines": {"type": "array", "items": {
                "type": "object",
                "required": ["label", "error", "gpus", "driver", "worst", "findings"],
                "properties": {
                    "label": {"type": "string"},
                    "error": {"type": ["string", "null"]},
                    "gpus": {"type": ["string", "null"]},
                    "driver": {"type": ["string", "null"]},
                    "worst": {"type": "string", "enum": [m.value for m in model.Severity]},
                    "findings": strings,
                },
            }},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ANALYZE_SCHEMA_ID,
        "title": "gpusetup analyze result",
        "description": (
            "What `gpusetup analyze --json` writes. Minor versions of gpusetup only add fields. "
            "Generated by gpusetup/schema.py."
        ),
        "oneOf": [single, fleet],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"


def analyze_schema_text() -> str:
    return json.dumps(analyze_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m gpusetup.schema``: regenerate the committed schema files (``--check``: only compare)."""
    parser = argparse.ArgumentParser(
        prog="python -m gpusetup.schema",
        description="Write resources/schema/report.schema.json and analyze.schema.json from gpusetup/model.py "
                    "(what `gpusetup diagnose --json` and `gpusetup analyze --json` write).")
    parser.add_argument("--check", action="store_true",
                        help="change nothing: exit 1 and name the files that differ from what would be written")
    args = parser.parse_args(argv)
    stale = []
    for name, text in (("report.schema.json", schema_text()), ("analyze.schema.json", analyze_schema_text())):
        path = resource("schema", name)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    for name in stale:
        print(f"out of date: {name} (run python -m gpusetup.schema)")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
