"""Markdown report to paste into an issue tracker: findings first, facts as tables, raw output collapsed.

Every value from the machine or from a report (GPU names, evidence, tool output) goes through
:mod:`gpusetup.escape`: inline text with Markdown and HTML escaped (a ``<script>`` in a GPU name stays text),
code blocks in fences that nothing inside can close (evidence containing ``` does not end the block).
"""

from __future__ import annotations

from gpusetup.escape import md_code, md_fence, md_text
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg
from gpusetup.messages import render as render_message
from gpusetup.model import Report, Severity
from gpusetup.report import sections
from gpusetup.report.plans import describe
from gpusetup.selftest.proof import answers
from gpusetup.selftest.text import MARKS

_MARK = {Severity.ERROR: "🔴 **Error**", Severity.WARNING: "🟠 **Warning**", Severity.INFO: "🔵 Info", Severity.OK: "🟢 OK"}


def _cell(v: object) -> str:
    if v is None or v == "" or v == []:
        return "—"
    text = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return md_text(text)  # one line, | and Markdown/HTML escaped


def _table(rows: list[tuple[str, object]]) -> list[str]:
    rows = [(k, v) for k, v in rows if v not in (None, "", [])]
    if not rows:
        return []
    return ["| | |", "|---|---|", *[f"| {_cell(k)} | {_cell(v)} |" for k, v in rows], ""]


def render(report: Report, language: str | None = None) -> str:
    """The report in Markdown. Its findings are worded in ``language`` (default: the output language), with the
    rule's English detail kept beside a translation for whoever reads the issue; the rest is English."""
    lang = output_language(language)
    m = report.machine
    out: list[str] = [f"## gpusetup report ({md_text(m.tool_version or '?')}, {md_text(m.collected_at or 'time unknown')})",
                      ""]
    problems = [f for f in report.findings if f.severity is not Severity.OK]
    out += [f"### Findings ({len(problems)})", ""]
    if not problems:
        out += ["No problems found.", ""]
    for f in report.findings:
        code = f" {md_code(f.catalogue)}" if f.catalogue else ""
        words = finding_words(f, lang)
        out.append(f"- {_MARK[f.severity]}: {md_text(words.title)}{code}")
        if words.meaning:
            out.append(f"  {md_text(words.meaning)}")
        if words.translated and f.detail:
            out += [f"  <details><summary>{md_text(f.title)}</summary>", "", f"  {md_text(f.detail)}", "  </details>"]
        if words.fix:
            fix_head = "Fix:" if lang == "en" else render_message(msg("report.fix"), lang)
            out += ["", f"  **{md_text(fix_head)}**", "", *md_fence(words.fix.splitlines(), indent="  ")]
        if f.evidence:
            out += ["  <details><summary>evidence</summary>", "", *md_fence(f.evidence, indent="  "), "  </details>"]
        out.append("")
    out += [f"### GPUs ({len(m.gpus)})", ""]
    for i, g in enumerate(m.gpus):
        out += [f"**{md_text(sections.gpu_title(i, g))}**", "", *_table(sections.gpu_rows(g))]
    out += ["### Driver", "", *(_table(sections.driver_rows(m.driver)) or ["No NVIDIA driver found.", ""])]
    out += ["### CUDA stack", "", *(_table(sections.cuda_rows(m.cuda)) or ["Nothing found (framework wheels bring their own CUDA libraries).", ""])]
    out += ["### Python and frameworks", ""]
    for env in m.python_envs:
        out += _table(sections.framework_rows(env))
    out += ["### System", "", *_table(sections.system_rows(m.system))]
    if report.plans:
        out += ["### Plan", ""]
        for p in report.plans:
            t = describe(p, "en")  # Markdown and HTML are written to be shared (issue trackers): English
            ch = p.choice
            out.append(f"- **{md_text(p.framework)}**: " + (f"{md_text(ch.version)} {md_code(ch.variant)} "
                                                            f"({md_text(t.status_text)})" if ch else md_text(t.summary)))
            for a in t.actions:
                out.append(f"  - first: {_cell(a.why)}")
            if ch and ch.commands:
                out += ["", *md_fence(ch.commands, "bash", indent="  ")]
            if t.rejected:
                out += ["", f"  <details><summary>{len(t.rejected)} options not chosen</summary>", ""]
                out += [f"  - {md_code(option)}: {_cell(reason)}" for option, reason in t.rejected]
                out += ["", "  </details>"]
        out.append("")
    if report.selftest:
        out += ["### Self-test", ""]
        said = answers(report.selftest)  # the answer per framework first, as the CLI and the wizard give it
        out += [f"- {MARKS.get(a.kind, '·')} {_cell(render_message(a.sentence, lang))}" for a in said] + ([""] if said else [])
        out += ["| test | result | rated | verdict |", "|---|---|---|---|"]
        for meas in report.selftest.measurements:
            val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
            rated = f"{meas.rated:.3g} ({meas.fraction:.0%})" if meas.rated and meas.fraction is not None else "—"
            out.append(f"| {_cell(meas.name)} | {val} | {rated} | {_cell(meas.verdict)}: {_cell(meas.reason)} |")
        out.append("")
    raw = [c for c in m.commands if c.stdout_tail or c.stderr_tail]
    if raw:
        out += ["<details><summary>Raw command output</summary>", ""]
        for cmd in raw:
            out += [f"{md_code(' '.join(cmd.argv))} → exit {cmd.returncode}{' (timed out)' if cmd.timed_out else ''}, "
                    f"{cmd.duration_ms:.0f} ms", "", *md_fence([(cmd.stdout_tail + cmd.stderr_tail).rstrip()[-3000:]]), ""]
        out += ["</details>", ""]
    return "\n".join(out).rstrip() + "\n"
