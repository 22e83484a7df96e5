"""JSON Schema for gpusetup's JSON report, generated from the dataclasses in :mod:`gpusetup.model`.

The committed copy lives at ``resources/schema/report.schema.json``; a test checks it matches what this
module generates, and validates real reports against it. Regenerate with ``python -m gpusetup.schema``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any

from gpusetup import model
from gpusetup.resources import resource

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
                "additionalProperties": False,
            }
        return {"$ref": f"#/$defs/{name}"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [m.value for m in tp]}
    if tp is str:
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


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    path = resource("schema", "report.schema.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
