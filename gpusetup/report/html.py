"""A single self-contained HTML report (no external assets): findings first with severity colours, GPU cards,
the plan, and self-test results as bars against rated peaks. Follows the reader's light/dark preference."""

from __future__ import annotations

from gpusetup.escape import html as escape  # entities, and control characters shown visibly
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg
from gpusetup.messages import render as render_message
from gpusetup.model import Finding, Gpu, Report, Severity
from gpusetup.report import sections
from gpusetup.report.plans import describe
from gpusetup.selftest.proof import answers

_CSS = """
:root{--bg:#fff;--fg:#1d2125;--muted:#5f6b76;--card:#f5f7f9;--line:#d8dee4;--err:#c62828;--warn:#b26a00;--info:#1565c0;--ok:#2e7d32;--bar:#2e7d32}
@media (prefers-color-scheme: dark){:root{--bg:#15181b;--fg:#e6e9ec;--muted:#9aa5b1;--card:#1f2428;--line:#333b42;--err:#ef5350;--warn:#ffb74d;--info:#64b5f6;--ok:#81c784;--bar:#66bb6a}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","PingFang SC","Microsoft YaHei",sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:1020px;margin:0 auto;padding:24px}h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.muted{color:var(--muted)}.summary{display:flex;gap:10px;flex-wrap:wrap;margin:12px 0}.pill{border-radius:999px;padding:3px 12px;font-weight:600;border:1px solid var(--line)}
.finding{border-left:5px solid var(--info);background:var(--card);border-radius:6px;padding:10px 14px;margin:10px 0}
.finding.error{border-color:var(--err)}.finding.warning{border-color:var(--warn)}.finding.ok{border-color:var(--ok)}
.sev{font-weight:700;text-transform:uppercase;font-size:12px;letter-spacing:.05em}.error .sev{color:var(--err)}.warning .sev{color:var(--warn)}.info .sev{color:var(--info)}
.title{font-weight:600;font-size:16px}pre{background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:8px;overflow-x:auto;white-space:pre-wrap;font-size:13px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card h3{margin:0 0 6px;font-size:16px}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:3px 8px 3px 0;vertical-align:top;border-bottom:1px solid var(--line)}
td:first-child{color:var(--muted);white-space:nowrap;width:36%}.bar{height:14px;background:var(--line);border-radius:7px;overflow:hidden;min-width:160px}
.bar>span{display:block;height:100%;background:var(--bar)}.bar.warn>span{background:var(--warn)}.bar.fail>span{background:var(--err)}
details{margin:6px 0}summary{cursor:pointer;color:var(--muted)}
"""

_LABEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info", Severity.OK: "ok"}


def _rows(rows: list[tuple[str, object]]) -> str:
    out = []
    for k, v in rows:
        if v is None or v == "" or v == []:
            continue
        text = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        out.append(f"<tr><td>{escape(k)}</td><td>{escape(text)}</td></tr>")
    return f"<table>{''.join(out)}</table>" if out else ""


def _finding(f: Finding, lang: str = "en") -> str:
    sev = _LABEL[f.severity]
    words = finding_words(f, lang)
    parts = [f'<div class="finding {sev}"><div class="sev">{sev}{" · " + escape(f.catalogue) if f.catalogue else ""}</div>']
    parts.append(f'<div class="title">{escape(words.title)}</div>')
    if words.meaning:
        parts.append(f"<p>{escape(words.meaning)}</p>")
    if words.translated and f.detail:
        parts.append(f"<details><summary>{escape(render_message(msg('report.detail-english'), lang))}</summary>"
                     f"<p>{escape(f.title)}</p><p>{escape(f.detail)}</p></details>")
    if words.fix:
        head = "Fix" if lang == "en" else render_message(msg("report.fix"), lang).rstrip("：:")
        parts.append(f"<div><b>{escape(head)}</b></div><pre>{escape(words.fix)}</pre>")
    if f.evidence:
        parts.append(f"<details><summary>Evidence</summary><pre>{escape(chr(10).join(f.evidence))}</pre></details>")
    parts.append("</div>")
    return "".join(parts)


def _gpu_card(i: int, g: Gpu) -> str:
    return f'<div class="card"><h3>{escape(sections.gpu_title(i, g))}</h3>{_rows(sections.gpu_rows(g))}</div>'


def render(report: Report, language: str | None = None) -> str:
    """The report as one HTML page; its findings are worded in ``language`` (default: the output language)."""
    lang = output_language(language)
    m = report.machine
    counts = {s: sum(1 for f in report.findings if f.severity is s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
    pills = "".join(
        f'<span class="pill" style="color:var(--{c})">{n} {escape(one if n == 1 else many)}</span>'
        for (one, many, c), n in zip((("error", "errors", "err"), ("warning", "warnings", "warn"), ("note", "notes", "info")), counts.values(), strict=True)
    )
    body = [
        f"<h1>gpusetup report</h1><div class=muted>gpusetup {escape(m.tool_version or '?')} · collected {escape(m.collected_at or '?')}</div>",
        f'<div class="summary">{pills}</div>',
        "<h2>Findings</h2>",
        "".join(_finding(f, lang) for f in report.findings) or '<div class="finding ok"><div class="title">No problems found.</div></div>',
        f"<h2>GPUs ({len(m.gpus)})</h2>",
        f'<div class="cards">{"".join(_gpu_card(i, g) for i, g in enumerate(m.gpus))}</div>' if m.gpus else "<p>No display or 3D controller found.</p>",
    ]
    body += ["<h2>Driver</h2>", _rows(sections.driver_rows(m.driver)) or "<p>No NVIDIA driver found.</p>"]
    body += ["<h2>CUDA stack</h2>", _rows(sections.cuda_rows(m.cuda)) or "<p class=muted>Nothing found — framework wheels bring their own CUDA libraries.</p>"]
    body.append("<h2>Python and frameworks</h2>")
    body += [_rows(sections.framework_rows(env)) for env in m.python_envs]
    body += ["<h2>System</h2>", _rows(sections.system_rows(m.system))]
    if report.plans:
        body.append("<h2>Plan</h2>")
        for p in report.plans:
            t = describe(p, "en")  # Markdown and HTML are written to be shared (issue trackers): English
            ch = p.choice
            head = t.summary
            items = "".join(f"<li>First: {escape(a.why)}</li>" for a in t.actions)
            items += "".join(f"<li>{escape(n)}</li>" for n in t.notes)
            cmds = f"<pre>{escape(chr(10).join(ch.commands))}</pre>" if ch and ch.commands else ""
            rej = "".join(f"<li><b>{escape(option)}</b>: {escape(reason)}</li>" for option, reason in t.rejected)
            rej_html = f"<details><summary>Options that do not work here ({len(t.rejected)})</summary><ul>{rej}</ul></details>" if rej else ""
            body.append(f'<div class="card"><h3>{escape(p.framework)}: {escape(head)}</h3><ul>{items}</ul>{cmds}{rej_html}</div>')
    if report.selftest:
        st = report.selftest
        rows = []
        for meas in st.measurements:
            frac = meas.fraction if meas.fraction is not None else None
            width = max(0.0, min(1.0, frac or 0.0)) * 100
            cls = {"fail": "fail", "warn": "warn"}.get(meas.verdict, "")
            val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
            rated = f" of {meas.rated:.3g} ({frac:.0%})" if meas.rated and frac is not None else ""
            bar = f'<div class="bar {cls}" role="img" aria-label="{width:.0f}% of rated"><span style="width:{width:.0f}%"></span></div>' if frac is not None else ""
            rows.append(f"<tr><td>{escape(meas.name)}</td><td>{escape(val + rated)}{bar}</td><td>{escape(meas.verdict)}: {escape(meas.reason)}</td></tr>")
        notes = "".join(f"<p class=muted>{escape(n)}</p>" for n in st.notes)
        said = "".join(f'<li class="{escape(a.kind)}">{escape(render_message(a.sentence, lang))}</li>' for a in answers(st))
        body += [f"<h2>Self-test ({escape(st.mode)})</h2>", f"<ul>{said}</ul>" if said else "",
                 f"<table>{''.join(rows)}</table>", notes]
    raw = [c for c in m.commands if c.stdout_tail or c.stderr_tail]
    if raw:
        body.append("<h2>Raw command output</h2>")
        for cmd in raw:
            head = f"{' '.join(cmd.argv)} → exit {cmd.returncode}{' (timed out)' if cmd.timed_out else ''}, {cmd.duration_ms:.0f} ms"
            body.append(f"<details><summary>{escape(head)}</summary><pre>{escape((cmd.stdout_tail + cmd.stderr_tail)[-4000:])}</pre></details>")
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>gpusetup report</title><style>{_CSS}</style></head><body><main>{''.join(body)}</main></body></html>\n"
    )
