"""A small block-style YAML writer for plain dicts/lists/scalars (no PyYAML in gpusetup's core).

Output is meant for people to read and edit: block style, two-space indents, strings quoted only when YAML
would otherwise read them as something else (a number, a bool, null, or text with special characters).
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./@+-]*$")
_NOT_PLAIN = re.compile(
    r"^(?:[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|"
    r"\.(?:nan|NaN|NAN)|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
    r"null|Null|NULL|~|\d[\d:.]*)$"
)


def scalar(value: Any) -> str:
    """One scalar as YAML text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if text and _PLAIN.match(text) and not _NOT_PLAIN.match(text):
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def dump(data: Any, indent: int = 0) -> str:
    """Serialise ``data`` as block YAML; lists of scalars inside mappings stay block lists too."""
    return "".join(_lines(data, indent))


def _key(k: Any) -> str:
    return scalar(str(k))


def _lines(data: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(data, dict):
        if not data:
            return [pad + "{}\n"]
        for k, v in data.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{_key(k)}:\n")
                out.extend(_lines(v, indent + 2))
            else:
                out.append(f"{pad}{_key(k)}: {_inline_empty(v)}\n")
        return out
    if isinstance(data, list):
        if not data:
            return [pad + "[]\n"]
        for item in data:
            if isinstance(item, (dict, list)) and item:
                sub = _lines(item, indent + 2)
                first = sub[0][indent + 2:]
                out.append(f"{pad}- {first}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_inline_empty(item)}\n")
        return out
    return [pad + scalar(data) + "\n"]


def _inline_empty(v: Any) -> str:
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return scalar(v)
