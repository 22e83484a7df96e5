"""Finding texts in other languages, without Qt: a Chinese title and "what this means" per finding id.

The rules build their English text with this machine's values (versions, GPU names, paths). A translation
here is per finding *id* and written to stay true without those values; the English detail, the fix
commands and the evidence keep the specifics and are shown next to it. The catalogue is a plain JSON file,
``resources/translations/findings_<lang>.json``; ``tests/unit/test_findings_i18n.py`` keeps it complete.
"""

from __future__ import annotations

import json
import logging
from functools import cache
from typing import Any

from gpusetup.model import Finding
from gpusetup.resources import resource

log = logging.getLogger("gpusetup.i18n")

# Languages with a finding catalogue. English is the source language and needs none.
FINDING_LANGUAGES: tuple[str, ...] = ("zh_CN",)


def normalise_language(language: str | None) -> str | None:
    """"zh_CN" / "zh-CN" / "zh" / "zh_CN.UTF-8" → "zh_CN"; English, unknown or None → None (no translation)."""
    if not language:
        return None
    code = language.split(".")[0].replace("-", "_")
    if code in FINDING_LANGUAGES:
        return code
    if code.lower() in ("zh", "zh_cn", "zh_hans", "zh_sg"):
        return "zh_CN"
    return None


@cache
def catalogue(language: str) -> dict[str, dict[str, str]]:
    """id → {"title", "meaning"} for ``language``; empty (and logged) when the file is missing or broken.

    A broken catalogue must never break the diagnosis: the finding is then simply shown in English.
    """
    code = normalise_language(language)
    if code is None:
        return {}
    path = resource("translations", f"findings_{code}.json")
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
        entries = doc["findings"]
        return {
            str(fid): {"title": str(e["title"]), "meaning": str(e["meaning"])}
            for fid, e in entries.items()
            if isinstance(e, dict) and e.get("title") and e.get("meaning")
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("finding translations %s unusable: %s", path, exc)
        return {}


def finding_text(finding: Finding | str, language: str | None) -> tuple[str, str] | None:
    """(title, meaning) of ``finding`` (or a finding id) in ``language``, or None to keep the English text."""
    fid = finding if isinstance(finding, str) else finding.id
    entry = catalogue(language or "").get(fid) if normalise_language(language) else None
    if entry is None:
        return None
    return entry["title"], entry["meaning"]
