"""What every surface of an analysis shares, and its Markdown and HTML forms (the text form is the CLI's,
gpusetup/commands/analyze.py; JSON is :meth:`gpusetup.analyze.Analysis.to_dict`).

Words come from the message catalogues (English or 简体中文); what the input and the solved reports said (evidence,
signature lines, titles, links) is quoted as it is, through :mod:`gpusetup.escape` for each format.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpusetup.compat.resolver import resolve
from gpusetup.escape import html as esc
from gpusetup.escape import md_code, md_fence, md_text
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, lang_code, msg, render
from gpusetup.model import Finding, FrameworkPlan, Message, Severity
from gpusetup.report.plans import describe

if TYPE_CHECKING:
    from gpusetup.analyze import Analysis
    from gpusetup.analyze.similar import SimilarReport

# framework facts → the plan's framework names
_PLAN_NAMES = {"torch": "pytorch", "tensorflow": "tensorflow", "jax": "jax", "jaxlib": "jax"}


def plan_frameworks(analysis: Analysis) -> list[str]:
    """The frameworks the input names (pytorch when none)."""
    names = [_PLAN_NAMES[fw.name] for env in analysis.machine.python_envs for fw in env.frameworks
             if fw.name in _PLAN_NAMES]
    return list(dict.fromkeys(names)) or ["pytorch"]


def plan_for(analysis: Analysis, frameworks: list[str] | None = None) -> list[FrameworkPlan]:
    """The whole plan for the reporter's machine, from the facts the input held (the resolver of `gpusetup
    plan`); [] when the input names no GPU (a plan for an unknown machine would only guess)."""
    if not analysis.machine.gpus:
        return []
    return resolve(analysis.machine, frameworks or plan_frameworks(analysis))


def fix_text(analysis: Analysis, f: Finding, language: str | None = None) -> str:
    """A finding's fix in ``language`` (the computed one is the finding's fix_code, set by analyze)."""
    return finding_words(f, output_language(language)).fix


def title_text(f: Finding, language: str | None = None) -> str:
    return finding_words(f, output_language(language)).title


def similar_texts(s: SimilarReport, language: str | None = None) -> dict[str, str]:
    """Family, cause and fix of a similar report in ``language`` (English when the index has no other)."""
    lang = lang_code(output_language(language))
    r = s.report
    return {"family": s.family_name.get(lang) or s.family_name.get("en") or r.family,
            "cause": r.cause.get(lang) or r.cause.get("en", ""), "fix": r.fix.get(lang) or r.fix.get("en", ""),
            "closeness": f"{round(100 * s.closeness)}%"}


_FACT_WORDS = {"gpu": msg("analyze.out.fact.gpu"), "driver": msg("analyze.out.fact.driver-version"),
               "driver-cuda": msg("analyze.out.fact.driver-cuda"), "framework": msg("analyze.out.fact.framework"),
               "framework-cuda": msg("analyze.out.fact.framework"), "toolkit": msg("analyze.out.fact.toolkit"),
               "xid": msg("analyze.out.fact.xids")}


def fact_label(fact: str, language: str | None = None) -> str:
    word = _FACT_WORDS.get(fact)
    return render(word, output_language(language)) if word else fact


# ------------------------------------------------------------------------------------------------ Markdown

_MD_MARK = {Severity.ERROR: "🔴 **Error**", Severity.WARNING: "🟠 **Warning**", Severity.INFO: "🔵 Info",
            Severity.OK: "🟢 OK"}


def render_markdown(analysis: Analysis, language: str | None = None, plans: list[FrameworkPlan] | None = None) -> str:
    lang = output_language(language)

    def w(message: Message) -> str:
        return render(message, lang)

    n = len(analysis.inputs)
    out = [f"## {md_text(w(msg('analyze.out.heading-one', count=n) if n == 1 else msg('analyze.out.heading', count=n)))}", ""]
    out += [f"- {md_code(i.name)}: {md_text(i.error or i.describe())}" for i in analysis.inputs] + [""]
    out += [f"### {md_text(w(msg('analyze.out.findings')))}", ""]
    if not analysis.findings:
        out += [md_text(w(msg("analyze.out.no-problem"))), ""]
    for f in analysis.findings:
        code = f" {md_code(f.catalogue)}" if f.catalogue else ""
        out.append(f"- {_MD_MARK[f.severity]}{code}: {md_text(title_text(f, lang))}")
        if f.detail:
            out.append(f"  {md_text(f.detail)}")
        fix = fix_text(analysis, f, lang)
        if fix:
            out += ["", f"  **{md_text(w(msg('analyze.out.fix')))}** {md_text(fix)}"]
        if f.evidence:
            out += ["", f"  <details><summary>{md_text(w(msg('analyze.out.evidence')))}</summary>", "",
                    *md_fence(f.evidence, indent="  "), "  </details>"]
        out.append("")
    if analysis.similar:
        out += [f"### {md_text(w(msg('analyze.out.similar')))}", ""]
        for k, s in enumerate(analysis.similar, 1):
            t = similar_texts(s, lang)
            url = s.report.url
            link = (f"[{md_text(s.report.title or url)}](<{url}>)" if re.fullmatch(r"https?://[^\s<>]+", url)
                    else md_code(url))
            out.append(f"{k}. **{md_text(t['family'])}** ({md_text(t['closeness'])}): {link}")
            if s.same_cause:
                out.append("   - " + md_text(w(msg("analyze.out.similar-more", count=len(s.same_cause),
                                                    links=" ".join(s.same_cause[:3])))))
            out.append(f"   - {md_text(w(msg('analyze.out.similar-cause')))} {md_text(t['cause'])}")
            out.append(f"   - {md_text(w(msg('analyze.out.similar-fix')))} {md_text(t['fix'])}")
            if s.matched:
                out += [f"   - {md_text(w(msg('analyze.out.similar-matched')))}", "", *md_fence(s.matched, indent="     ")]
        out.append("")
    if analysis.fact_lines:
        out += [f"### {md_text(w(msg('analyze.out.fact-lines')))}", ""]
        out += [f"- {md_text(fact_label(x.fact, lang))}: {md_code(x.value)} ← {md_code(x.line)}" for x in analysis.fact_lines]
        out.append("")
    if plans is not None:
        out += [f"### {md_text(w(msg('analyze.out.plan')))}", ""]
        if not plans:
            out += [md_text(w(msg("analyze.out.plan-none"))), ""]
        for p in plans:
            pt = describe(p, lang)
            out.append(f"- **{md_text(pt.headline)}**")
            out += [f"  - {md_text(a.title)}: {md_text(a.why)}" for a in pt.actions]
            for c in pt.choices:
                out += [f"  - {md_text(c.label)}: {md_text(c.line)}", "", *md_fence(c.commands, "bash", indent="    ")]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------------- HTML

_CSS = """
:root{--bg:#fff;--fg:#1d2125;--muted:#5f6b76;--card:#f5f7f9;--line:#d8dee4;--err:#c62828;--warn:#b26a00;--info:#1565c0}
@media (prefers-color-scheme: dark){:root{--bg:#15181b;--fg:#e6e9ec;--muted:#9aa5b1;--card:#1f2428;--line:#333b42;--err:#ef5350;--warn:#ffb74d;--info:#64b5f6}}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","PingFang SC","Microsoft YaHei",sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:1020px;margin:0 auto;padding:24px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid var(--line)}
.finding,.similar{border-left:5px solid var(--info);background:var(--card);border-radius:6px;padding:10px 14px;margin:10px 0}
.finding.error{border-color:var(--err)}.finding.warning{border-color:var(--warn)}.similar{border-left-style:dashed;border-color:var(--muted)}
.sev{font-weight:700;text-transform:uppercase;font-size:12px}.title{font-weight:600}.muted{color:var(--muted)}
pre{border:1px solid var(--line);border-radius:4px;padding:8px;overflow-x:auto;white-space:pre-wrap;font-size:13px}
"""


def render_html(analysis: Analysis, language: str | None = None, plans: list[FrameworkPlan] | None = None) -> str:
    lang = output_language(language)

    def w(message: Message) -> str:
        return esc(render(message, lang))

    n = len(analysis.inputs)
    body = [f"<h1>{w(msg('analyze.out.heading-one', count=n) if n == 1 else msg('analyze.out.heading', count=n))}</h1><ul>"]
    body += [f"<li><code>{esc(i.name)}</code>: {esc(i.error or i.describe())}</li>" for i in analysis.inputs]
    body += ["</ul>", f"<h2>{w(msg('analyze.out.findings'))}</h2>"]
    if not analysis.findings:
        body.append(f"<p>{w(msg('analyze.out.no-problem'))}</p>")
    for f in analysis.findings:
        sev = f.severity.value
        parts = [f'<div class="finding {esc(sev)}"><div class="sev">{esc(sev)}'
                 f'{" · " + esc(f.catalogue) if f.catalogue else ""}</div>',
                 f'<div class="title">{esc(title_text(f, lang))}</div>']
        if f.detail:
            parts.append(f"<p>{esc(f.detail)}</p>")
        fix = fix_text(analysis, f, lang)
        if fix:
            parts.append(f"<div><b>{w(msg('analyze.out.fix'))}</b></div><pre>{esc(fix)}</pre>")
        if f.evidence:
            parts.append(f"<details><summary>{w(msg('analyze.out.evidence'))}</summary>"
                         f"<pre>{esc(chr(10).join(f.evidence))}</pre></details>")
        body.append("".join(parts) + "</div>")
    if analysis.similar:
        body.append(f"<h2>{w(msg('analyze.out.similar'))}</h2>")
        for s in analysis.similar:
            t = similar_texts(s, lang)
            link = s.report.url if re.fullmatch(r"https?://[^\s<>\"']+", s.report.url) else "#"
            matched = (f"<details><summary>{w(msg('analyze.out.similar-matched'))}</summary>"
                       f"<pre>{esc(chr(10).join(s.matched))}</pre></details>") if s.matched else ""
            more = (f"<p class=muted>{w(msg('analyze.out.similar-more', count=len(s.same_cause), links=' '.join(s.same_cause[:3])))}</p>"  # noqa: E501
                    if s.same_cause else "")
            body.append(f'<div class="similar"><div class="title">{esc(t["family"])} <span class=muted>'
                        f'({esc(t["closeness"])})</span></div><a href="{esc(link)}">{esc(s.report.title or link)}</a>'
                        f"{more}<p><b>{w(msg('analyze.out.similar-cause'))}</b> {esc(t['cause'])}</p>"
                        f"<p><b>{w(msg('analyze.out.similar-fix'))}</b> {esc(t['fix'])}</p>{matched}</div>")
    if analysis.fact_lines:
        body.append(f"<h2>{w(msg('analyze.out.fact-lines'))}</h2><ul>")
        body += [f"<li>{esc(fact_label(x.fact, lang))}: <code>{esc(x.value)}</code> ← <code>{esc(x.line)}</code></li>"
                 for x in analysis.fact_lines]
        body.append("</ul>")
    if plans is not None:
        body.append(f"<h2>{w(msg('analyze.out.plan'))}</h2>")
        if not plans:
            body.append(f"<p>{w(msg('analyze.out.plan-none'))}</p>")
        for p in plans:
            pt = describe(p, lang)
            items = "".join(f"<li>{esc(a.title)}: {esc(a.why)}</li>" for a in pt.actions)
            items += "".join(f"<li>{esc(c.label)}: {esc(c.line)}<pre>{esc(chr(10).join(c.commands))}</pre></li>"
                             for c in pt.choices)
            body.append(f"<div class=similar><div class=title>{esc(pt.headline)}</div><ul>{items}</ul></div>")
    html_lang = "zh-CN" if lang_code(lang) == "zh_CN" else "en"
    return (f"<!doctype html><html lang={html_lang}><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            f"<title>gpusetup analyze</title><style>{_CSS}</style></head><body><main>{''.join(body)}</main></body></html>\n")
