"""Markdown report to paste into an issue tracker: findings first, facts as tables, raw output collapsed."""

from __future__ import annotations

from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg
from gpusetup.messages import render as render_message
from gpusetup.model import Report, Severity
from gpusetup.report import sections
from gpusetup.report.plans import describe

_MARK = {Severity.ERROR: "🔴 **Error**", Severity.WARNING: "🟠 **Warning**", Severity.INFO: "🔵 Info", Severity.OK: "🟢 OK"}


def _cell(v: object) -> str:
    if v is None or v == "" or v == []:
        return "—"
    text = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[tuple[str, object]]) -> list[str]:
    rows = [(k, v) for k, v in rows if v not in (None, "", [])]
    if not rows:
        return []
    return ["| | |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows], ""]


def render(report: Report, language: str | None = None) -> str:
    """The report in Markdown. Its findings are worded in ``language`` (default: the output language), with the
    rule's English detail kept beside a translation for whoever reads the issue; the rest is English."""
    lang = output_language(language)
    m = report.machine
    out: list[str] = [f"## gpusetup report ({m.tool_version or '?'}, {m.collected_at or 'time unknown'})", ""]
    problems = [f for f in report.findings if f.severity is not Severity.OK]
    out += [f"### Findings ({len(problems)})", ""]
    if not problems:
        out += ["No problems found.", ""]
    for f in report.findings:
        code = f" `{f.catalogue}`" if f.catalogue else ""
        words = finding_words(f, lang)
        out.append(f"- {_MARK[f.severity]}: {words.title}{code}")
        if words.meaning:
            out.append(f"  {words.meaning}")
        if words.translated and f.detail:
            out.append(f"  <details><summary>{f.title}</summary>\n\n  {f.detail}\n  </details>")
        if words.fix:
            fix_head = "Fix:" if lang == "en" else render_message(msg("report.fix"), lang)
            out += ["", f"  **{fix_head}**", "", "  ```", *[f"  {line}" for line in words.fix.splitlines()], "  ```"]
        if f.evidence:
            out += ["  <details><summary>evidence</summary>", "", "  ```", *[f"  {e}" for e in f.evidence], "  ```", "  </details>"]
        out.append("")
    out += [f"### GPUs ({len(m.gpus)})", ""]
    for i, g in enumerate(m.gpus):
        out += [f"**{sections.gpu_title(i, g)}**", "", *_table(sections.gpu_rows(g))]
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
            out.append(f"- **{p.framework}**: " + (f"{ch.version} `{ch.variant}` ({t.status_text})" if ch else t.summary))
            for a in t.actions:
                out.append(f"  - first: {_cell(a.why)}")
            if ch and ch.commands:
                out += ["", "  ```bash", *[f"  {cmd}" for cmd in ch.commands], "  ```"]
            if t.rejected:
                out += ["", f"  <details><summary>{len(t.rejected)} options not chosen</summary>", ""]
                out += [f"  - `{option}`: {_cell(reason)}" for option, reason in t.rejected]
                out += ["", "  </details>"]
        out.append("")
    if report.selftest:
        out += ["### Self-test", "", "| test | result | rated | verdict |", "|---|---|---|---|"]
        for meas in report.selftest.measurements:
            val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
            rated = f"{meas.rated:.3g} ({meas.fraction:.0%})" if meas.rated and meas.fraction is not None else "—"
            out.append(f"| {meas.name} | {val} | {rated} | {meas.verdict}: {_cell(meas.reason)} |")
        out.append("")
    raw = [c for c in m.commands if c.stdout_tail or c.stderr_tail]
    if raw:
        out += ["<details><summary>Raw command output</summary>", ""]
        for cmd in raw:
            out += [f"`{' '.join(cmd.argv)}` → exit {cmd.returncode}{' (timed out)' if cmd.timed_out else ''}, {cmd.duration_ms:.0f} ms", "", "```", (cmd.stdout_tail + cmd.stderr_tail).rstrip()[-3000:], "```", ""]
        out += ["</details>", ""]
    return "\n".join(out).rstrip() + "\n"
