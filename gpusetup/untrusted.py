"""Parsing what strangers send, within bounds decided before the first byte is parsed.

JSON from a report, a bundle's manifest or a pasted log is checked for its nesting depth first: ``[`` repeated
200,000 times made Python's decoder raise RecursionError, which stopped the whole ``analyze`` run (one bad file
in a fleet of 1,000 and nothing was analysed). :func:`loads` refuses such a document with a ValueError, like any
other malformed JSON, so every caller's existing ``except ValueError`` covers it.
"""

from __future__ import annotations

import json
import operator
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64  # gpusetup's own reports nest about 8 deep; nothing legitimate comes near this
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_KEEP = bytes(range(256)).translate(None, b"[]{}")  # every byte but the brackets: deleted
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # an opening bracket counts +1, a closing one -1 (v - 1)


class TooDeep(ValueError):
    """Nested deeper than the limit: refused before parsing."""


def json_depth(data: str | bytes) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (linear time, no recursion, no parsing)."""
    raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
    if b"[" not in raw and b"{" not in raw:
        return 0
    brackets = _STRING.sub(b"", raw).translate(_STEP, _KEEP)
    if not brackets:
        return 0
    # depth after the i-th bracket = (sum of the first i+1 values) - (i+1), each value being 2 or 0
    return max(0, max(map(operator.sub, accumulate(brackets), range(1, len(brackets) + 1))))


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for untrusted input: ValueError (:class:`TooDeep`) for a document nested deeper than
    ``max_depth`` — checked before parsing — and for anything the decoder cannot take (RecursionError included)."""
    depth = json_depth(data)
    if depth > max_depth:
        raise TooDeep(f"JSON nested {depth} levels deep (more than {max_depth}); not read")
    try:
        return json.loads(data)
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise TooDeep(f"JSON nested too deep to read: {exc}") from exc
