"""Decisions as data, words from one catalogue.

The resolver and the planners say *what* they decided as a :class:`~gpusetup.model.Message` — a code such
as ``reject.driver-too-old`` and its parameters (``{"need": "580.65", "have": "535.104"}``). This module
turns a message into words in English or 简体中文 from ``resources/translations/messages_<lang>.json``
(schema: ``resources/schema/messages_i18n.schema.json``). Every surface (text, Markdown, HTML, the wizard)
renders through :func:`render`; none of them parses or rewrites a core sentence.

Adding a decision: call ``msg("area.what-happened", name=value, …)`` with a literal code, and add the code
to ``messages_en.json`` and ``messages_zh_CN.json`` (``tests/unit/test_messages_i18n.py`` fails until both
have it, with the same placeholders). A parameter may itself be a message (rendered in the same language)
or a list (joined with ``; `` / ``；``).

The English catalogue is the full, exact text for the CLI and reports (commands, flags, versions). A
Chinese entry is written for a beginner and may leave out parameters that are jargon (CLI flags, wheel tags,
issue numbers); the wizard puts the full English text under "详细信息" (Details). A code may also have a
wording for the wizard, ``code@wizard``, used when the words are read there (:func:`gpusetup.i18n.surface`):
it names the wizard's pages and buttons instead of ``gpusetup`` commands. Chinese follows
``docs/zh-glossary.md``.
"""

from __future__ import annotations

import json
import logging
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpusetup import errors
from gpusetup.i18n import finding_text, normalise_language, surface
from gpusetup.model import Finding, Message, Step
from gpusetup.resources import resource

log = logging.getLogger("gpusetup.messages")

SOURCE_LANGUAGE = "en"
_JOINERS = {"en": "; ", "zh_CN": "；"}


def msg(code: str, /, **params: Any) -> Message:
    """A message with this code and parameters (values: str/int/float/None, a Message, or a list of them)."""
    return Message(code=code, params=params)


def lang_code(language: str | None) -> str:
    """"en" for English / unknown / None, else the catalogue language ("zh_CN")."""
    return normalise_language(language) or SOURCE_LANGUAGE


@cache
def catalogue(language: str | None = None) -> dict[str, str]:
    """code → template for ``language`` ({} when its file is missing or broken: English is used instead).

    Besides ``messages_<lang>.json`` it holds the fixes of the findings that are data
    (:func:`data_finding_templates`), under the codes ``fix.<id>``, ``fix.<id>.<tool>`` and ``sure.<id>``.
    """
    code = lang_code(language)
    path = resource("translations", f"messages_{code}.json")
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
        out = {str(k): str(v) for k, v in doc["messages"].items() if isinstance(v, str) and v}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("message catalogue %s unusable: %s", path, exc)
        out = {}
    return {**data_finding_templates(code), **out}


def data_fix_code(fid: str, tool: str | None = None) -> str:
    """The code of a data-defined finding's fix (``fix.<id>``, or ``fix.<id>.<tool>`` for a tool's own words)."""
    return f"fix.{fid}" + (f".{tool}" if tool else "")


def data_sure_code(fid: str) -> str:
    """The code of what would confirm a data-defined finding (its ``to_be_sure``)."""
    return f"sure.{fid}"


@cache
def data_finding_templates(language: str | None = None) -> dict[str, str]:
    """The fixes of the findings defined as data, as message templates: English from
    ``resources/diagnostics/*.json`` (``fix``, ``fix_by_tool``, ``to_be_sure``), other languages from the same
    fields of that language's finding catalogue (``findings_<lang>.json``). One renderer then words every fix."""
    lang = lang_code(language)
    out: dict[str, str] = {}
    try:
        if lang == SOURCE_LANGUAGE:
            folder = resource("diagnostics")
            entries = [e for p in sorted(folder.glob("*.json")) if folder.is_dir()
                       for e in json.loads(p.read_text(encoding="utf-8")).get("entries", [])]
            docs = {str(e["id"]): e for e in entries}
        else:
            path = resource("translations", f"findings_{lang}.json")
            docs = {str(k): v for k, v in json.loads(path.read_text(encoding="utf-8"))["findings"].items()}
        for fid, e in docs.items():
            if isinstance(e.get("fix"), str) and e["fix"]:
                out[data_fix_code(fid)] = e["fix"]
            for tool, text in (e.get("fix_by_tool") or {}).items():
                if isinstance(text, str) and text:
                    out[data_fix_code(fid, str(tool))] = text
            if isinstance(e.get("to_be_sure"), str) and e["to_be_sure"]:
                out[data_sure_code(fid)] = e["to_be_sure"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("finding fixes for %s unusable: %s", lang, exc)
        return {}
    return out


def placeholders(template: str) -> set[str]:
    """The parameter names a template uses ("{need}" → "need")."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def as_message(value: Any) -> Message | None:
    """``value`` as a Message when it is one (or its JSON form ``{"code", "params"}``), else None."""
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("code"), str) and set(value) <= {"code", "params"}:
        params = value.get("params") or {}
        return Message(code=value["code"], params=dict(params) if isinstance(params, Mapping) else {})
    return None


def render(message: Message | Mapping[str, Any] | str | None, language: str | None = None) -> str:
    """The words of ``message`` in ``language`` (English when None, unknown, or the code is not translated).

    A plain string is returned as it is (older reports carry only the English text).
    """
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    m = as_message(message)
    if m is None:
        return str(message)
    lang = lang_code(language)
    template = _template(catalogue(lang), m.code) if lang != SOURCE_LANGUAGE else None
    if template is None:
        template = _template(catalogue(SOURCE_LANGUAGE), m.code)
        lang_used = SOURCE_LANGUAGE if template is not None else lang
    else:
        lang_used = lang
    if template is None:
        log.warning("no text for message code %s", m.code)
        return m.code + (" " + json.dumps(m.params, ensure_ascii=False, default=str) if m.params else "")
    values = _Values({k: _value(v, lang_used) for k, v in m.params.items()})
    return string.Formatter().vformat(template, (), values)


def _template(words: Mapping[str, str], code: str) -> str | None:
    """The template of ``code``: its wording for the surface the words are read on (``code@wizard``) when the
    catalogue has one, else its own."""
    where = surface()
    if where != "cli":
        special = words.get(f"{code}@{where}")
        if special is not None:
            return special
    return words.get(code)


def _english_text_fits(language: str | None) -> bool:
    """Whether the English text stored beside a code can be shown as it is: in English on the command line.
    Elsewhere the code is worded again (another language, or the wizard's ``code@wizard`` words: the stored text
    was written for the command line, e.g. a plan made by ``gpusetup plan`` or read from the journal)."""
    return lang_code(language) == SOURCE_LANGUAGE and surface() == "cli"


def render_parts(code: str, params: Mapping[str, Any] | None, fallback: str, language: str | None = None) -> str:
    """Words for an object that carries ``code``/``params`` beside its English text (Rejected, Action);
    the English ``fallback`` when it has no code (a report from an older version)."""
    if not code:
        return fallback
    if _english_text_fits(language) and fallback:
        return fallback
    return render(Message(code=code, params=dict(params or {})), language)


def message_of(obj: Any) -> Message | str:
    """The message a Rejected (``reason``) or an Action (``why``) carries, or its English text when it has no code."""
    code = getattr(obj, "code", "")
    if code:
        return Message(code=code, params=dict(getattr(obj, "params", {}) or {}))
    return str(getattr(obj, "reason", None) or getattr(obj, "why", "") or "")


def render_notes(notes: Iterable[str], codes: Iterable[Message | Mapping[str, Any]], language: str | None = None) -> list[str]:
    """A plan's notes in ``language``: from their codes when there is one per note, else the English."""
    notes, codes = list(notes), list(codes)
    if len(codes) != len(notes) or _english_text_fits(language):
        return notes
    return [render(c, language) for c in codes]


def add_note(target: Any, message: Message, *, index: int | None = None) -> None:
    """Append (or insert at ``index``) a note to a Plan / FrameworkPlan: the code and its English text."""
    text = render(message)
    if index is None:
        target.note_codes.append(message)
        target.notes.append(text)
    else:
        target.note_codes.insert(index, message)
        target.notes.insert(index, text)


def outcome_text(outcome: Any, language: str | None = None) -> str:
    """An install result's message (ExecResult / the wizard's InstallOutcome) in ``language``: from its data
    (``said``) when it has it, else its English ``message``."""
    said = getattr(outcome, "said", None)
    return render(said, language) if said is not None else str(getattr(outcome, "message", "") or "")


def worded_step(sid: str, title: Message, explain: Message, **fields: Any) -> Step:
    """An install step whose title and explanation are data (codes) beside their English words."""
    return Step(id=sid, title=render(title), explain=render(explain), title_code=title, explain_code=explain,
                **fields)


def step_title(step: Step, language: str | None = None) -> str:
    """A step's title in ``language`` (its English title when it carries no code: a plan saved earlier)."""
    return render(step.title_code, language) if step.title_code is not None and not _english_text_fits(language) \
        else step.title


def step_explain(step: Step, language: str | None = None) -> str:
    """What a step does and why, in ``language`` (its English text when it carries no code)."""
    return render(step.explain_code, language) if step.explain_code is not None and not _english_text_fits(language) \
        else step.explain


def variant_words(variant: str) -> Message:
    """A build's variant tag in words a beginner reads: "cu132" → "for CUDA 13.2", "and-cuda" → "with its CUDA
    libraries", "rocm6.4" → "for ROCm 6.4" (an unknown tag is shown as it is)."""
    v = (variant or "").strip().lower()
    cu = re.fullmatch(r"cu(\d{1,2})(\d)", v)
    if cu:
        return msg("word.variant.cuda", cuda=f"{cu.group(1)}.{cu.group(2)}")
    cuda = re.fullmatch(r"cuda(\d+(?:\.\d+)?)", v)
    if cuda:
        return msg("word.variant.cuda", cuda=cuda.group(1))
    rocm = re.fullmatch(r"rocm(\d+(?:\.\d+)*)", v)
    if rocm:
        return msg("word.variant.rocm", version=rocm.group(1))
    if v == "and-cuda":
        return msg("word.variant.and-cuda")
    if v == "cpu":
        return msg("word.variant.cpu")
    if v == "xpu":
        return msg("word.variant.xpu")
    if v == "mps":
        return msg("word.variant.mps")
    if v == "directml":
        return msg("word.variant.directml")
    return msg("word.variant.other", variant=variant)


def variant_label(variant: str, language: str | None = None) -> str:
    """The variant as a page shows it: the tag itself in English (as the commands and the index name it), its
    words in another language."""
    return variant if lang_code(language) == SOURCE_LANGUAGE else render(variant_words(variant), language)


@dataclass(frozen=True)
class FindingWords:
    """What a reader sees of one finding, in one language."""

    title: str
    meaning: str  # what it means (and what would confirm it)
    fix: str  # the fix: sentences in the language around the exact commands, with this machine's values
    translated: bool  # title and meaning come from the language's catalogue: the rule's English detail (which
    #                   carries this machine's values) is then worth showing as "English details"


def finding_words(finding: Finding, language: str | None = None) -> FindingWords:
    """Title, meaning and fix of ``finding`` in ``language``: the one renderer of findings for every surface.

    English is the rule's own text. Another language takes the title and meaning from its finding catalogue
    (:func:`gpusetup.i18n.finding_text`, per id) and the fix from the finding's message (``fix_code``, with
    this machine's values); a finding from an older report, without a message, keeps its English fix.
    """
    lang = lang_code(language)
    if lang == SOURCE_LANGUAGE:
        fix = finding.fix
        if surface() != "cli" and finding.fix_code is not None:  # the wizard may word it for its own pages
            fix = render(finding.fix_code, lang)
        return FindingWords(finding.title, finding.detail, fix, False)
    fix = render(finding.fix_code, lang) if finding.fix_code is not None else finding.fix
    translated = finding_text(finding, lang)
    if translated is None:
        return FindingWords(finding.title, finding.detail, fix, False)
    title, meaning = translated
    if finding.sure_code is not None:
        meaning += render(msg("finding.to-be-sure", what=finding.sure_code), lang)
    return FindingWords(title, meaning, fix, True)


def _value(v: Any, lang: str) -> str:
    if v is None:
        return ""
    m = as_message(v)
    if m is not None:
        return render(m, lang)
    if isinstance(v, (list, tuple)):
        return _JOINERS.get(lang, "; ").join(_value(x, lang) for x in v)
    return str(v)


errors.set_english_renderer(render)  # str(ToolError) is its English text


class _Values(dict[str, str]):
    """Template values; a placeholder without a value renders empty rather than failing a report."""

    def __missing__(self, key: str) -> str:
        log.warning("message parameter %s missing", key)
        return ""
