"""The catalogue as data: failures, their wordings per tool, causes and fixes in ``resources/diagnostics/``.

Each ``resources/diagnostics/*.json`` file (schema: ``resources/schema/diagnostics.schema.json``) holds

- ``entries``: whole findings (F36 onwards). An entry fires when one of its ``wordings`` (a regular expression
  with the tool that prints it and the public report it was taken from) matches a line of the evidence, none
  of its ``unless`` patterns does, and its ``check`` (a named function below, for what plain patterns cannot
  say: comparing versions, reading live facts) agrees. Title, detail and fix may name the regular
  expression's groups and the check's values as ``{name}``; ``fix_by_tool`` gives the fix in the terms of the
  tool whose words matched.
- ``wordings``: more words for failures whose rule is code (F01–F35): ``{"F23": [{"tool": …, "pattern": …}]}``.
  The rule asks :func:`wording_rx` for them, so a new tool's phrasing of a known failure is data, not code.

Adding a failure or a wording is a JSON edit plus a real excerpt in ``tests/fixtures/recorded-issues/``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gpusetup import resources
from gpusetup.messages import data_fix_code, data_sure_code
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.resources import resource
from gpusetup.rules import rule
from gpusetup.rules._util import joined_text, make, text_lines

SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}
MAX_LINE = 2000  # longer lines are cut before matching: patterns look for short messages, never at 10 MB lines


@dataclass(frozen=True)
class Wording:
    tool: str
    rx: re.Pattern[str]
    source: str
    multiline: bool = False  # matched against the whole text (a message the tool spreads over lines)
    strict: bool = False  # the tool accepts only the exact major.minor it was built with (old TensorFlow/PyTorch)
    context: re.Pattern[str] | None = None  # must also match somewhere in the evidence for the wording to count


@dataclass(frozen=True)
class Entry:
    id: str
    catalogue: str
    severity: Severity
    title: str
    detail: str
    fix: str
    wordings: tuple[Wording, ...]
    unless: tuple[re.Pattern[str], ...] = ()
    context: tuple[re.Pattern[str], ...] = ()  # when given, one must match too (anywhere in the evidence)
    check: str | None = None
    fix_by_tool: dict[str, str] = field(default_factory=dict)
    to_be_sure: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # tables a check reads (e.g. gfx overrides)
    file: str = ""


# A check sees the machine and the first match (None for fact-only entries) and returns the values for the
# texts, or None when the entry does not apply after all. Checks may also fire without a wording match
# (facts from live detection): ``Check.facts`` says so.
CheckFn = Callable[[Machine, "re.Match[str] | None"], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Check:
    fn: CheckFn
    facts: bool = False  # may fire on structured facts alone (then it returns its own "evidence")


CHECKS: dict[str, Check] = {}


def check(name: str, *, facts: bool = False) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        CHECKS[name] = Check(fn, facts)
        return fn

    return deco


def _compile(pat: str) -> re.Pattern[str]:
    return re.compile(pat, re.IGNORECASE)


def _wording(w: dict[str, Any]) -> Wording:
    return Wording(w["tool"], _compile(w["pattern"]), w["source"], bool(w.get("multiline")), bool(w.get("strict")),
                   _compile(w["context"]) if w.get("context") else None)


def _files() -> list[tuple[str, dict[str, Any]]]:
    out = []
    folder = resource("diagnostics")
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        out.append((path.name, resources.read_json("diagnostics", path.name)))
    return out


@lru_cache(maxsize=1)
def load() -> tuple[tuple[Entry, ...], dict[str, tuple[Wording, ...]]]:
    """All entries and all extra wordings (cached; the data ships with the program)."""
    entries: list[Entry] = []
    extra: dict[str, list[Wording]] = {}
    for name, doc in _files():
        for e in doc.get("entries", []):
            entries.append(Entry(
                id=e["id"], catalogue=e["catalogue"], severity=SEVERITIES[e["severity"]], title=e["title"],
                detail=e["detail"], fix=e["fix"],
                wordings=tuple(_wording(w) for w in e.get("wordings", [])),
                unless=tuple(_compile(p) for p in e.get("unless", [])),
                context=tuple(_compile(p) for p in e.get("context", [])),
                check=e.get("check"), fix_by_tool=dict(e.get("fix_by_tool", {})), to_be_sure=e.get("to_be_sure"),
                data=dict(e.get("data", {})), file=name,
            ))
        for code, ws in doc.get("wordings", {}).items():
            extra.setdefault(code, []).extend(_wording(w) for w in ws)
    return tuple(entries), {k: tuple(v) for k, v in extra.items()}


def entries() -> tuple[Entry, ...]:
    return load()[0]


def wordings(code: str) -> tuple[Wording, ...]:
    """The data-defined wordings of catalogue entry ``code`` (e.g. "F23"), every tool's."""
    return load()[1].get(code, ())


def wording_rx(code: str) -> re.Pattern[str] | None:
    """One regular expression matching any data-defined wording of ``code`` (None when there is none)."""
    ws = [w for w in wordings(code) if w.context is None]
    if not ws:
        return None
    return re.compile("|".join(f"(?:{w.rx.pattern})" for w in ws), re.IGNORECASE)


def first_wording(machine: Machine, code: str) -> tuple[Wording, re.Match[str], str] | None:
    """The first evidence matched by a wording of ``code``: (wording, match, the line or lines matched)."""
    text = joined_text(machine)
    ws = [w for w in wordings(code) if w.context is None or w.context.search(text)]
    for ln in _lines(machine):
        for w in ws:
            if w.multiline:
                continue
            m = w.rx.search(ln)
            if m:
                return w, m, ln
    for w in ws:
        if w.multiline:
            m = w.rx.search(text)
            if m:
                return w, m, m.group(0)
    return None


def _lines(machine: Machine) -> list[str]:
    return [ln if len(ln) <= MAX_LINE else ln[:MAX_LINE] for ln in text_lines(machine)]


class _Values(string.Formatter):
    def get_value(self, key, args, kwargs):  # noqa: ANN001, ANN201 - string.Formatter signature
        v = kwargs.get(key)
        return "?" if v is None else v


def _fill(text: str, values: dict[str, Any]) -> str:
    return _Values().vformat(text, (), values)


def evaluate_entry(entry: Entry, machine: Machine) -> list[Finding]:
    lines = _lines(machine)
    if entry.unless and any(rx.search(ln) for rx in entry.unless for ln in lines):
        return []
    hit: tuple[Wording, re.Match[str]] | None = None
    evidence: list[str] = []
    seen: dict[str, Any] = {}  # values named by any matching line (the first line may not carry them all)
    text = joined_text(machine)
    usable = [w for w in entry.wordings if w.context is None or w.context.search(text)]
    for ln in lines:
        for w in usable:
            if w.multiline:
                continue
            m = w.rx.search(ln)
            if m:
                if hit is None:
                    hit = (w, m)
                for k, v in m.groupdict().items():
                    if v is not None:
                        seen.setdefault(k, v)
                evidence.append(ln)
                break
    if hit is None:
        for w in usable:
            m = w.rx.search(text) if w.multiline else None
            if m:
                hit = (w, m)
                evidence.extend(x.strip() for x in m.group(0).splitlines() if x.strip())
                break
    chk = CHECKS.get(entry.check) if entry.check else None
    if hit is None and not (chk and chk.facts):
        return []
    if entry.context and hit is not None and not any(rx.search(ln) for rx in entry.context for ln in lines):
        return []
    values: dict[str, Any] = {**seen, **{k: v for k, v in (hit[1].groupdict() if hit else {}).items() if v is not None}}
    if chk is not None:
        got = chk.fn(machine, hit[1] if hit else None)
        if got is None:
            return []
        evidence.extend(str(e) for e in got.pop("evidence", []))
        values.update(got)
    if not evidence:
        return []
    severity = values.pop("severity", None) or entry.severity
    tool = values.pop("fix_key", None) or (hit[0].tool if hit else "facts")
    fix = entry.fix_by_tool.get(tool, entry.fix)
    # The fix (and what would confirm it) as messages: their codes name this entry's templates, English from
    # this file, other languages from their finding catalogue (gpusetup.messages.data_finding_templates).
    fix_msg = Message(code=data_fix_code(entry.id, tool if tool in entry.fix_by_tool else None),
                      params=_params(fix, values))
    sure = Message(code=data_sure_code(entry.id), params=_params(entry.to_be_sure, values)) \
        if entry.to_be_sure else None
    finding = make(
        entry.id, severity, _fill(entry.title, values), _fill(entry.detail, values), _fill(fix, values),
        evidence, catalogue=entry.catalogue,
        to_be_sure=_fill(entry.to_be_sure, values) if entry.to_be_sure else None,
    )
    finding.fix_code, finding.sure_code = fix_msg, sure  # the English words stay exactly this file's
    finding.params = {k: v for k, v in fix_msg.params.items() if v != "?"}  # for a translated title and meaning
    return [finding]


def _params(template: str | None, values: dict[str, Any]) -> dict[str, Any]:
    """The values a data template names, as ``_fill`` words them ("?" for an unknown one), plus every other value
    (a translation may name values the English leaves out)."""
    names = {name for _, name, _, _ in string.Formatter().parse(template or "") if name}
    out = {k: ("?" if v is None else str(v)) for k, v in values.items()}
    out.update({n: "?" for n in names if values.get(n) is None})
    return out


def _register() -> None:
    for entry in entries():
        def fn(machine: Machine, _e: Entry = entry) -> list[Finding]:
            return evaluate_entry(_e, machine)

        rule(entry.id, catalogue=entry.catalogue)(fn)


# Named checks live in checks.py (version comparisons, live facts); importing it fills CHECKS.
from gpusetup.rules.catalogue import checks  # noqa: E402,F401 - registers the named checks

_register()
