"""Core texts in other languages, without Qt: a title and "what this means" per finding id; and which
language the command line prints in (:func:`choose_language`, :func:`output_language`).

The rules build their English text with this machine's values (versions, GPU names, paths). A title and
meaning here is per *id* and written to stay true without those values; the English detail and the evidence keep
the specifics and are shown next to it. The fix is a message with this machine's values (``Finding.fix_code``),
worded by :func:`gpusetup.messages.finding_words`, the one renderer of findings. The catalogue is a plain JSON
file, ``resources/translations/findings_<lang>.json``; ``tests/unit/test_findings_i18n.py`` keeps it complete.
(Install steps are worded from their title and explanation codes, gpusetup.messages, like every decision.)
Chinese follows ``docs/zh-glossary.md``.
"""

from __future__ import annotations

import json
import logging
import os
import string
from collections.abc import Mapping
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


# The languages the command line and the reports can speak ("en" is the source; the rest have catalogues).
OUTPUT_LANGUAGES: tuple[str, ...] = ("en", *FINDING_LANGUAGES)
_output: list[str] = ["en"]


def locale_language(environ: Mapping[str, str] | None = None) -> str:
    """The language the POSIX locale asks for, in gettext's order: ``LANGUAGE`` (a priority list such as
    "fr:zh_CN:en"; its first entry with a catalogue decides) before the first of LC_ALL, LC_MESSAGES, LANG that
    is set ("zh_CN.UTF-8" → "zh_CN"). As in GNU gettext, ``LANGUAGE`` is ignored when that locale is "C" or
    "POSIX", and a ``LANGUAGE`` naming only languages without a catalogue gives English (gettext's untranslated
    text), not the locale's language. zh_TW / zh_HK and anything else without a catalogue → "en"."""
    env = os.environ if environ is None else environ
    locale_code = next((env[var] for var in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(var)), "")
    base = locale_code.split(".")[0].split("@")[0]
    priority = env.get("LANGUAGE", "")
    if priority.strip(": ") and base not in ("", "C", "POSIX"):
        for entry in priority.split(":"):
            code = _catalogue_language(entry)
            if code is not None:
                return code
        return "en"
    return (_catalogue_language(locale_code) or "en") if locale_code else "en"


def _catalogue_language(value: str) -> str | None:
    """The output language a locale name has a catalogue for ("zh_CN.UTF-8" → "zh_CN", "en_GB" → "en"), or
    None (traditional Chinese, C, POSIX and languages without one)."""
    code = value.strip().split(".")[0].split("@")[0].replace("-", "_")
    if not code:
        return None
    if code.lower() in ("zh_tw", "zh_hk", "zh_hant", "zh_mo"):
        return None
    found = normalise_language(code)
    if found:
        return found
    return "en" if code.lower().split("_")[0] == "en" else None


def choose_language(option: str | None = None, configured: str | None = None,
                    environ: Mapping[str, str] | None = None) -> str:
    """The command line's language: ``--lang``, else ``GPUSETUP_LANG``, else the configuration file's
    ``defaults.language``, else the locale. Unknown names fall through to the next source."""
    env = os.environ if environ is None else environ
    for candidate in (option, env.get("GPUSETUP_LANG"), configured):
        if candidate:
            code = language_option(candidate)
            if code in OUTPUT_LANGUAGES:
                return code
            log.warning("language %r is not available (choose %s)", candidate, ", ".join(OUTPUT_LANGUAGES))
    return locale_language(env)


def language_option(value: str) -> str:
    """A language name as the command line accepts it: "zh-CN", "zh", "zh_CN.UTF-8" → "zh_CN"; "en_US" → "en"."""
    if normalise_language(value):
        return "zh_CN"
    return "en" if value.split(".")[0].replace("-", "_").lower().split("_")[0] == "en" else value


def set_output_language(language: str | None) -> None:
    """The language text reports, plans and self-test results are printed in (the CLI sets it once)."""
    _output[0] = normalise_language(language) or "en"


def output_language(language: str | None = None) -> str:
    """``language`` when given, else the language set for this process's printed output ("en" by default)."""
    return (normalise_language(language) or "en") if language else _output[0]


# Where the words are read: "cli" (the command line, reports) or "wizard". A message may have wording for the
# wizard (``code@wizard`` in the catalogue) that points at the wizard's pages and buttons instead of commands
# (issue 21: no CLI advice inside the wizard); the wizard sets it when it installs its language.
SURFACES: tuple[str, ...] = ("cli", "wizard")
_surface: list[str] = ["cli"]


def set_surface(name: str | None) -> None:
    """The surface this process's words are read on ("cli" when None or unknown)."""
    _surface[0] = name if name in SURFACES else "cli"


def surface() -> str:
    return _surface[0]


# catalogue kind → (file name prefix, top-level key)
_FILES: dict[str, tuple[str, str]] = {"findings": ("findings", "findings")}


@cache
def catalogue(language: str, kind: str = "findings") -> dict[str, dict[str, str]]:
    """id → {"title", "meaning"} for ``language``; empty (and logged) when the file is missing or broken.

    A broken catalogue must never break the diagnosis: the text is then simply shown in English.
    """
    code = normalise_language(language)
    if code is None:
        return {}
    prefix, key = _FILES[kind]
    path = resource("translations", f"{prefix}_{code}.json")
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
        entries = doc[key]
        return {
            str(fid): {k: str(e[k]) for k in ("title", "meaning", "title_values", "meaning_values") if e.get(k)}
            for fid, e in entries.items()
            if isinstance(e, dict) and e.get("title") and e.get("meaning")
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("translations %s unusable: %s", path, exc)
        return {}


def finding_text(finding: Finding | str, language: str | None) -> tuple[str, str] | None:
    """(title, meaning) of ``finding`` (or a finding id) in ``language``, or None to keep the English text.

    An entry may also word the title and meaning with this machine's values (``title_values``,
    ``meaning_values``: ``{gpu}``, ``{driver}``… from ``Finding.params``); they are used when the finding carries
    every value they name, else the plain title and meaning (a finding from an older report, or a case of the
    rule that does not know them)."""
    fid = finding if isinstance(finding, str) else finding.id
    entry = catalogue(language or "").get(fid) if normalise_language(language) else None
    if entry is None:
        return None
    values = {} if isinstance(finding, str) else dict(finding.params or {})
    return _with_values(entry, "title", values), _with_values(entry, "meaning", values)


def _with_values(entry: Mapping[str, str], key: str, values: Mapping[str, str]) -> str:
    template = entry.get(f"{key}_values")
    if template and values:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        if names <= set(values):
            try:
                return template.format_map(values)
            except (ValueError, KeyError, IndexError):
                log.warning("finding text %s of %s unusable", key, template[:40])
    return entry[key]

