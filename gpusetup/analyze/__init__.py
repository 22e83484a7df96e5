"""`gpusetup analyze`: run the diagnosis rules on what users send (text, not machines).

Flow: each input is read into parts (:mod:`gpusetup.analyze.readers` — plain text, zip, and the hook for
support bundles), every recogniser (:mod:`gpusetup.analyze.recognisers`) extracts the facts it understands
into a partial :class:`~gpusetup.model.Machine`, the partial machines of all inputs are merged, and the same
rules as ``gpusetup diagnose`` run on the result. Partial facts are normal: rules fire on what is there and
say what would make them sure; :func:`missing_facts` lists what the input lacked.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpusetup.analyze import prose as _prose  # noqa: F401 - registers the recognisers of facts written in prose
from gpusetup.analyze.fixes import ComputedFix, computed_fixes
from gpusetup.analyze.readers import InputPart, UnreadableInput, read_bytes, read_path, register_reader
from gpusetup.analyze.recognisers import (
    RECOGNISER_LABELS_EXTRA,
    RECOGNISERS,
    Extraction,
    FactLine,
    labels,
    merge_machines,
    recogniser,
)
from gpusetup.analyze.similar import SimilarReport, query_lines, similar_reports
from gpusetup.enrich import enrich
from gpusetup.messages import msg, render
from gpusetup.model import Finding, Machine, Message, Severity, to_dict
from gpusetup.rules import evaluate
from gpusetup.rules._util import text_lines
from gpusetup.rules.unrecognised import not_recognised

__all__ = [
    "Analysis",
    "AnalyzedInput",
    "InputPart",
    "UnreadableInput",
    "analyze_parts",
    "analyze_paths",
    "analyze_text",
    "facts_summary",
    "missing_fact_messages",
    "missing_facts",
    "read_bytes",
    "recogniser",
    "register_reader",
]


@dataclass
class AnalyzedInput:
    name: str
    kinds: list[str] = field(default_factory=list)
    error: str | None = None  # why it could not be read
    said: Message | None = None  # the same as data, to word it in the CLI's language
    notes: list[str] = field(default_factory=list)
    # read, but with a reservation the exit code reflects (1): nothing recognised in it, unverified files of a
    # bundle, a report from a newer gpusetup
    warnings: list[Message] = field(default_factory=list)

    def describe(self) -> str:
        names = {**labels(), **RECOGNISER_LABELS_EXTRA}
        return ", ".join(names.get(k, k) for k in self.kinds) or names["text"]


@dataclass
class Analysis:
    inputs: list[AnalyzedInput]
    machine: Machine
    findings: list[Finding]
    similar: list[SimilarReport] = field(default_factory=list)  # closest solved reports: similar, not certain
    fact_lines: list[FactLine] = field(default_factory=list)  # facts read from prose, each with its line
    fixes: dict[str, ComputedFix] = field(default_factory=dict)  # finding id → fix computed for this machine

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)

    @property
    def has_report(self) -> bool:
        """One of the inputs is our own report (a bundle or `diagnose --json`)."""
        return any(k in ("gpusetup-report", "gpusetup-bundle") for i in self.inputs for k in i.kinds)

    @property
    def unreadable(self) -> list[AnalyzedInput]:
        return [i for i in self.inputs if i.error]

    @property
    def warned(self) -> list[AnalyzedInput]:
        return [i for i in self.inputs if i.warnings and not i.error]

    @property
    def exit_code(self) -> int:
        """3 when an input could not be read; else the worst finding's code, at least 1 when an input was read
        with a warning (an input that yielded nothing is never "healthy")."""
        if self.unreadable:
            return 3
        worst = self.worst.exit_code
        return max(worst, 1) if self.warned else worst

    def to_dict(self) -> dict[str, Any]:
        """The documented ``--json`` shape: inputs, facts, findings."""
        return {
            "inputs": [
                {"name": i.name, "kinds": i.kinds, "description": i.describe(), "error": i.error, "notes": i.notes,
                 "warnings": [render(w) for w in i.warnings]}
                for i in self.inputs
            ],
            "facts": facts_summary(self.machine),
            # facts read from what a person wrote, each with the line it came from
            "fact_lines": [f.to_dict() for f in self.fact_lines],
            "missing": missing_facts(self.machine, self.has_report),
            # the report's Finding objects, whole (gpu_index included): resources/schema/analyze.schema.json
            "findings": [to_dict(f) for f in self.findings],
            # the closest threads of the solved-report index (resources/solved), best first: similar, not certain
            "similar": [s.to_dict() for s in self.similar],
        }


# Recognisers that would misread a kind of input: our own installer logs quote the plan's commands
# ("pip install torch==2.4.0"), which say what was to be installed, not what is.
NOT_FOR_KIND: dict[str, tuple[str, ...]] = {"gpusetup-log": ("framework-mentions", "conda-list", "prose-frameworks",
                                                             "prose-driver", "prose-gpu", "prose-toolkit")}
MAX_LINE_CHARS = 4096  # longer lines are cut into pieces of this size before any pattern looks at them
_ESCAPED_NL = re.compile(r"(?:\\r)?\\n")  # a line break written as backslash-n (a log pasted inside JSON)


def split_long_lines(text: str, width: int = MAX_LINE_CHARS) -> str:
    """Lines longer than ``width`` → several lines, so every later pattern works on short lines (linear time).

    A log pasted as one JSON string keeps its line breaks as ``\\n``: those become real line breaks first.
    The rest is cut at the last space before ``width`` (or at ``width`` when there is none).
    """
    if len(text) <= width or all(len(ln) <= width for ln in text.split("\n")):
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        for piece in _ESCAPED_NL.split(line):
            start = 0
            while len(piece) - start > width:
                cut = piece.rfind(" ", start + width // 2, start + width)
                cut = cut if cut > start else start + width
                out.append(piece[start:cut])
                start = cut + 1 if piece[cut:cut + 1] == " " else cut
            out.append(piece[start:])
    return "\n".join(out)


def extract(part: InputPart) -> tuple[Extraction, AnalyzedInput]:
    """Run every recogniser over one part."""
    ex = Extraction(part.name)
    info = AnalyzedInput(part.name, kinds=list(part.kinds))
    if part.machine is not None:
        ex.machine = merge_machines(ex.machine, part.machine)
        if "gpusetup-report" not in info.kinds:
            info.kinds.append("gpusetup-report")
    if part.text is not None:
        text: str | None = None  # cut to size when a line-by-line recogniser first needs it (a report never does)
        skip = {name for kind in info.kinds for name in NOT_FOR_KIND.get(kind, ())}
        for r in RECOGNISERS:
            if r.name in skip:
                continue
            if text is None and not r.exclusive:
                text = split_long_lines(part.text)
            try:
                # structured input (our JSON report) is parsed whole; log-like text line by line, cut to size
                hit = r.fn(part.text if r.exclusive or text is None else text, ex)
            except Exception as exc:  # noqa: BLE001 - one confused recogniser must not lose the others' facts
                info.notes.append(f"{r.label}: could not be read ({type(exc).__name__}: {exc})")
                continue
            if hit and r.name not in info.kinds:
                info.kinds.append(r.name)
            if hit and r.exclusive:
                break  # structured input (our own report): its text is not a log to grep
        for k in ex.kinds:
            if k not in info.kinds:
                info.kinds.append(k)
    info.notes.extend(ex.notes)
    info.warnings.extend(part.notices)
    info.warnings.extend(ex.warnings)
    return ex, info


def _yielded_nothing(infos: list[AnalyzedInput], machine: Machine) -> bool:
    """No recogniser found anything in any part of one input, and it held no ready machine."""
    return not any(i.kinds for i in infos) and not facts_summary(machine)


@dataclass
class _Read:
    """One input, recognised: what the rest of the analysis needs once its text is let go."""

    infos: list[AnalyzedInput]
    machine: Machine
    facts: list[FactLine]
    has_text: bool  # text that is not one of gpusetup's own reports: worth a search for similar solved reports


def _analyze_input(name: str, parts: list[InputPart]) -> _Read:
    """One input's parts → their AnalyzedInputs, the input's partial machine and the facts read from its prose;
    never raises (one input failing never stops the others)."""
    infos: list[AnalyzedInput] = []
    machine = Machine(tool_version=None)
    facts: list[FactLine] = []
    has_text = False
    for part in parts:
        try:
            ex, info = extract(part)
        except Exception as exc:  # noqa: BLE001 - one input failing never stops the others
            said = msg("analyze.read.failed", name=part.name, error=f"{type(exc).__name__}: {str(exc)[:200]}")
            infos.append(AnalyzedInput(part.name, error=render(said), said=said))
            continue
        infos.append(info)
        machine = merge_machines(machine, ex.machine)
        facts.extend(f for f in ex.facts if f not in facts)
        has_text = has_text or (part.text is not None and not {"gpusetup-report", "gpusetup-plan"} & set(info.kinds))
    readable = [i for i in infos if not i.error]
    if readable and _yielded_nothing(readable, machine):
        readable[0].warnings.append(msg("analyze.warn.nothing-recognised", name=name))
    return _Read(infos, machine, facts, has_text)


def analyze_parts(parts: list[InputPart], unreadable: list[AnalyzedInput] | None = None, *,
                  exclude_similar: Iterable[str] = (), one_input: str | None = None) -> Analysis:
    """Recognise, merge, run the rules; then, for an input that shows a problem, the closest solved reports
    (``exclude_similar``: thread URLs left out of that search, as the evaluation does for a thread's own).
    Each part is its own input — or, with ``one_input`` (its name), all of them the parts of one input (a
    bundle), which is then said to have yielded nothing only when none of its parts yielded anything."""
    groups = [(one_input, parts)] if one_input is not None else [(part.name, [part]) for part in parts]
    return _finish(list(unreadable or []), [_analyze_input(name, group) for name, group in groups], exclude_similar)


def _finish(inputs: list[AnalyzedInput], reads: list[_Read], exclude_similar: Iterable[str] = ()) -> Analysis:
    machine = Machine(tool_version=None)
    fact_lines: list[FactLine] = []
    for r in reads:
        inputs.extend(r.infos)
        machine = merge_machines(machine, r.machine)
        fact_lines.extend(f for f in r.facts if f not in fact_lines)
    enrich(machine)  # chip and compute capability of GPUs known only by name or PCI id (as for a --for profile)
    findings = evaluate(machine)
    fixes = computed_fixes(machine, findings)
    silent = not_recognised(machine, findings, {k for i in inputs for k in i.kinds})
    if silent is not None:
        findings.append(silent)
    unavailable: list[str] = []
    similar = find_similar(machine, exclude_similar, unavailable) if any(r.has_text for r in reads) else []
    if unavailable and inputs:
        inputs[-1].notes.extend(unavailable)
    return Analysis(inputs=inputs, machine=machine, findings=findings, similar=similar, fact_lines=fact_lines,
                    fixes=fixes)


def find_similar(machine: Machine, exclude: Iterable[str] = (), note: list[str] | None = None) -> list[SimilarReport]:
    """Similar solved reports for text that shows a problem (error, failure or warning lines); none for text
    without such lines, which never loads the index. Whole-machine reports are not searched (the caller).
    The ranking is the search's alone: putting the families of the rules' findings first pushed the right report
    out of the three shown more often than it helped (dev split, benchmarks/analyze_eval.py)."""
    lines = query_lines(text_lines(machine))
    if not lines:
        return []
    try:
        return similar_reports(lines, exclude=exclude)
    except ImportError as exc:  # a build without the retrieval package (bm25s, numpy): said, not a failure
        if note is not None:
            note.append(render(msg("analyze.out.similar-unavailable", reason=str(exc))))
        return []


def analyze_text(text: str, name: str = "text", *, exclude_similar: Iterable[str] = ()) -> Analysis:
    return analyze_parts([InputPart(name, text)], exclude_similar=exclude_similar)


def analyze_paths(paths: list[str], stdin: io.BufferedIOBase | None = None) -> Analysis:
    """Every input read, recognised and merged one at a time (its text is let go before the next is read, so
    a thousand inputs need the memory of one); an input that cannot be read or makes a reader or recogniser
    fail is reported for itself and the others are analysed all the same."""
    inputs: list[AnalyzedInput] = []
    reads: list[_Read] = []
    for p in paths:
        try:
            parts = read_path(p, stdin=stdin)
        except UnreadableInput as exc:
            inputs.append(AnalyzedInput(p, error=str(exc), said=exc.message))
            continue
        except Exception as exc:  # noqa: BLE001 - a reader's bug or a hostile file: this input only
            said = msg("analyze.read.failed", name=p, error=f"{type(exc).__name__}: {str(exc)[:200]}")
            inputs.append(AnalyzedInput(p, error=render(said), said=said))
            continue
        reads.append(_analyze_input(p, parts))
        del parts
    return _finish(inputs, reads)


# -------------------------------------------------------------------------------------------- facts


def _text(value: object) -> str | None:
    """A typed version or compute capability as the text JSON holds."""
    return None if value is None else str(value)


def facts_summary(m: Machine) -> dict[str, Any]:
    """The facts the inputs held, compact and without empty values (for humans and ``--json``)."""
    out: dict[str, Any] = {}
    s = m.system
    # os_version is the OS's own version ("10.0.22631", "14.5"); on Linux our reports may hold the kernel there,
    # which is shown as "kernel" already, so the OS is then just its name.
    os_shown = s.os_version if s.os_version and s.os_version != s.kernel else s.os
    for key, val in (("os", os_shown), ("distro", s.distro_name), ("kernel", s.kernel),
                     ("arch", s.arch), ("wsl", s.wsl), ("container", s.container)):
        if val not in (None, ""):
            out[key] = val
    if m.driver.version:
        out["driver_version"] = str(m.driver.version)
    if m.driver.versions:
        out["driver_readings"] = [f"{r.value} ({r.source})" for r in m.driver.versions if r.value]
    if m.driver.cuda_driver_version:
        out["driver_cuda_version"] = str(m.driver.cuda_driver_version)
    for key in ("nvml_error", "cuinit_error"):
        if getattr(m.driver, key):
            out[key] = getattr(m.driver, key)
    if m.gpus:
        out["gpus"] = [
            {k: v for k, v in (("index", g.index), ("name", g.name), ("compute_capability", _text(g.compute_capability)),
                               ("driver_model", g.driver_model), ("pci", g.pci.address)) if v is not None}
            for g in m.gpus
        ]
    fws = [fw for env in m.python_envs for fw in env.frameworks]
    if fws:
        out["frameworks"] = [
            {k: v for k, v in (("name", fw.name), ("version", _text(fw.version)), ("build_cuda", _text(fw.build_cuda)),
                               ("installer", fw.installer), ("build", fw.build),
                               ("gpu_available", fw.gpu_available)) if v is not None}
            for fw in fws
        ]
    if m.cuda.toolkits:
        out["cuda_toolkits"] = [f"{t.version} ({t.source})" for t in m.cuda.toolkits]
    if m.cuda.env:
        out["environment"] = dict(m.cuda.env)
    if m.packages:
        out["packages"] = list(m.packages)
    if m.package_history:
        out["package_history"] = list(m.package_history)
    xids = sorted({int(x) for x in re.findall(r"Xid \(PCI:[^)]*\): (\d+)", "\n".join(m.kernel_log))})
    if xids:
        out["xids"] = xids
    if m.kernel_log:
        out["kernel_log_lines"] = len(m.kernel_log)
    return out


def missing_facts(m: Machine, has_report: bool = False) -> list[str]:
    """What the inputs did not say that would make a diagnosis surer, with the command that tells it.

    ``has_report``: the inputs hold our own report (a bundle or ``diagnose --json``). Its probes already looked
    for the driver, the GPUs and the frameworks, so "not there" is an answer, not a gap — and asking for the
    report it already is would be no help.
    """
    return [render(m) for m in missing_fact_messages(m, has_report)]


def missing_fact_messages(m: Machine, has_report: bool = False) -> list[Message]:
    """:func:`missing_facts` as data (message codes), for output in the CLI's language."""
    if has_report:
        return []
    need = []
    if not m.driver.version and not m.driver.versions:
        need.append(msg("analyze.missing.driver"))
    if not m.gpus:
        need.append(msg("analyze.missing.gpu"))
    if not any(env.frameworks for env in m.python_envs):
        need.append(msg("analyze.missing.framework"))
    if not m.system.os:
        need.append(msg("analyze.missing.os"))
    if need:
        need.append(msg("analyze.missing.bundle"))
    return need
