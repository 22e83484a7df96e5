"""`gpusetup analyze FILE... [--json]`: diagnose from what a user sent (logs, tracebacks, reports)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from gpusetup import term
from gpusetup.analyze import analyze_paths, facts_summary, missing_fact_messages
from gpusetup.analyze.fleet import fleet_rows
from gpusetup.analyze.output import fact_label as fact_word
from gpusetup.analyze.output import plan_for, render_html, render_markdown, similar_texts
from gpusetup.commands import prepare_output, refuse_overwrite, write_atomic
from gpusetup.commands.plan import plan_lines
from gpusetup.errors import EXIT_TOOL
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg, render
from gpusetup.model import FrameworkPlan, Message, Severity, to_dict
from gpusetup.report.fleet import fleet_json, fleet_table
from gpusetup.report.plans import describe


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Recognise what each input is (PyTorch collect_env, nvidia-smi table/-q/XML, kernel log, "
        "Python traceback, docker error, a message mixing prose and logs, a gpusetup JSON report or support "
        "bundle), extract the facts it holds, and run the same diagnosis rules as `gpusetup diagnose`. "
        "Exit code: 0 nothing found, 1 warnings (also: an input in which nothing could be recognised, files a "
        "bundle's manifest does not list, a report from a newer gpusetup), 2 errors, 3 an input could not be read."
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="input files; '-' reads standard input")
    p.add_argument("--json", action="store_true", help='write JSON: {"inputs", "facts", "fact_lines", "missing", '
                   '"findings", "similar"} (schema: resources/schema/analyze.schema.json); same as --format json')
    p.add_argument("--format", choices=("text", "json", "markdown", "html"), default=None,
                   help="output format (default text)")
    p.add_argument("--plan", action="store_true",
                   help="also print the whole install plan for the reporter's machine, from the facts in the input "
                        "(the resolver of `gpusetup plan`)")
    p.add_argument("--framework", "-f", action="append", choices=("pytorch", "tensorflow", "jax"),
                   help="framework for --plan (repeat for several; default: those the input names, else pytorch)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the result to FILE instead of the terminal (an existing file is replaced only with "
                        "--force)")
    p.add_argument("--force", action="store_true", help="replace the -o FILE if it exists")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.files.count("-") > 1:
        print("gpusetup analyze: " + render(msg("analyze.out.stdin-once"), output_language()), file=sys.stderr)
        return EXIT_TOOL
    if args.output:
        prepare_output(args.output)  # a bad or existing -o is reported before the inputs are read, not after
        refuse_overwrite(args.output, args.force)
    rows = fleet_rows(args.files)
    if rows is not None:
        return _fleet(args, rows)
    analysis = analyze_paths(args.files)
    fmt = "json" if args.json else (args.format or "text")
    plans = plan_for(analysis, args.framework) if args.plan else None
    if fmt == "json":
        doc = analysis.to_dict()
        if plans is not None:
            doc["plan"] = [to_dict(p) for p in plans]
        out = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        out = render_markdown(analysis, plans=plans)
    elif fmt == "html":
        out = render_html(analysis, plans=plans)
    else:
        out = render_text(analysis, plans=plans)
    if args.output:
        write_atomic(Path(args.output), out if fmt != "text" else term.for_file(out))
        print(render(msg("analyze.out.written", path=args.output), output_language()), file=sys.stderr)
    else:
        sys.stdout.write(out)
    for bad in analysis.unreadable:
        print(f"gpusetup analyze: {render(bad.said or bad.error, output_language())}", file=sys.stderr)
    for item in analysis.warned if (args.json or args.output) else []:  # (the text on the terminal says them)
        for warning in item.warnings:
            print(f"gpusetup analyze: {render(msg('analyze.out.warning', warning=warning), output_language())}",
                  file=sys.stderr)
    return analysis.exit_code  # 3 unreadable; an input that yielded nothing is a warning (1), never healthy


def _fleet(args: argparse.Namespace, rows) -> int:  # noqa: ANN001 - list[FleetRow], imported lazily
    """Many whole-machine reports/bundles: a fleet table, one row per machine."""
    out = json.dumps(fleet_json(rows), indent=2, ensure_ascii=False) + "\n" if args.json else fleet_table(rows)
    if args.output:
        write_atomic(Path(args.output), out if args.json else term.for_file(out))
        print(render(msg("analyze.out.written", path=args.output), output_language()), file=sys.stderr)
    else:
        sys.stdout.write(out)
    if any(r.error for r in rows):
        return EXIT_TOOL
    return max((r.worst for r in rows), key=lambda s: s.rank, default=Severity.OK).exit_code


_MARK = {"error": "ERROR  ", "warning": "WARNING", "info": "INFO   ", "ok": "OK     "}
# the facts the input held, in the order shown, and the label of each (gpusetup.analyze.facts_summary keys)
_FACT_LABELS: dict[str, Message] = {
    "os": msg("analyze.out.fact.os"), "distro": msg("analyze.out.fact.distro"), "kernel": msg("analyze.out.fact.kernel"),
    "wsl": msg("analyze.out.fact.wsl"), "container": msg("analyze.out.fact.container"),
    "driver_version": msg("analyze.out.fact.driver-version"), "driver_cuda_version": msg("analyze.out.fact.driver-cuda"),
    "nvml_error": msg("analyze.out.fact.nvml-error"), "cuinit_error": msg("analyze.out.fact.cuinit-error"),
    "xids": msg("analyze.out.fact.xids"),
}


# what kind of input each was, in the output language (English: the recogniser's own label, AnalyzedInput.describe)
_KINDS: dict[str, Message] = {
    "gpusetup-report": msg("analyze.kind.gpusetup-report"),
    "gpusetup-plan": msg("analyze.kind.gpusetup-plan"),
    "nvidia-smi-xml": msg("analyze.kind.nvidia-smi-xml"),
    "nvidia-smi-q": msg("analyze.kind.nvidia-smi-q"),
    "prose-driver": msg("analyze.kind.prose-driver"),
    "prose-frameworks": msg("analyze.kind.prose-frameworks"),
    "prose-gpu": msg("analyze.kind.prose-gpu"),
    "prose-toolkit": msg("analyze.kind.prose-toolkit"),
    "prose-xid": msg("analyze.kind.prose-xid"),
    "nvidia-smi-table": msg("analyze.kind.nvidia-smi-table"),
    "collect-env": msg("analyze.kind.collect-env"),
    "conda-list": msg("analyze.kind.conda-list"),
    "package-list": msg("analyze.kind.package-list"),
    "apt-history": msg("analyze.kind.apt-history"),
    "device-query": msg("analyze.kind.device-query"),
    "framework-mentions": msg("analyze.kind.framework-mentions"),
    "system-hints": msg("analyze.kind.system-hints"),
    "environment": msg("analyze.kind.environment"),
    "nvidia-proc-version": msg("analyze.kind.nvidia-proc-version"),
    "log-lines": msg("analyze.kind.log-lines"),
    "lspci": msg("analyze.kind.lspci"),
    "kernel-log": msg("analyze.kind.kernel-log"),
    "traceback": msg("analyze.kind.traceback"),
    "docker-error": msg("analyze.kind.docker-error"),
    "error-lines": msg("analyze.kind.error-lines"),
    "text": msg("analyze.kind.text"),
}


def _describe(item, lang: str) -> str:  # noqa: ANN001 - gpusetup.analyze.AnalyzedInput
    if lang == "en" or not all(k in _KINDS for k in item.kinds):
        return str(item.describe())
    return "、".join(render(_KINDS[k], lang) for k in item.kinds) or render(_KINDS["text"], lang)


def render_text(analysis, language: str | None = None,  # noqa: ANN001 - gpusetup.analyze.Analysis
                plans: list[FrameworkPlan] | None = None) -> str:
    """The analysis as text in ``language`` (default: the CLI's, ``gpusetup --lang``). Headings, labels and
    finding titles follow the language; what the input itself said (evidence, facts, file names) is quoted
    as it is, and a rule's own English detail is shown beside a translated meaning."""
    lang = output_language(language)

    def w(message: Message) -> str:
        return render(message, lang)

    width = 100
    lines: list[str] = []
    n = len(analysis.inputs)
    lines.append(term.paint("bold", w(msg("analyze.out.heading-one" if n == 1 else "analyze.out.heading", count=n))))
    for i in analysis.inputs:
        if i.error:
            lines.append(f"  {i.name}: " + w(msg("analyze.out.not-read", error=i.said or i.error)))
        else:
            lines.append(f"  {i.name}: {_describe(i, lang)}")
        for note in i.notes:
            lines.append("      " + w(msg("analyze.out.note", note=note)))
        for warning in i.warnings:
            lines.append("      " + w(msg("analyze.out.warning", warning=warning)))
    lines.append("")
    if not any(not i.error for i in analysis.inputs):
        lines.append(w(msg("analyze.out.nothing-read")))
        return "\n".join(lines) + "\n"
    if analysis.findings:
        lines.append(w(msg("analyze.out.findings")))
        for f in analysis.findings:
            code = f" {f.catalogue}" if f.catalogue else ""
            words = finding_words(f, lang)
            lines.append("")
            lines.append(f"{term.paint(f.severity.value, _MARK.get(f.severity.value, f.severity.value))}{code}  "
                         f"{words.title}  [{f.id}]")
            parts = [(w(msg("analyze.out.meaning")), words.meaning)]
            if words.translated:
                parts.append((w(msg("analyze.out.detail-english")), f.detail))
            for label, body in (*parts, (w(msg("analyze.out.fix")), words.fix)):
                if body:
                    # Chinese has no spaces to wrap at (textwrap would cut a quoted English message instead)
                    wrapped = (textwrap.wrap(body, width - 6) if body.isascii() else [body]) or [""]
                    gap = "" if label.endswith("：") else " "  # no space after a full-width colon
                    lines.append(f"    {label}{gap}{wrapped[0]}")
                    lines.extend(f"      {ln}" for ln in wrapped[1:])
            if f.evidence:
                lines.append("    " + w(msg("analyze.out.evidence")))
                lines.extend(f"      > {e}" for e in f.evidence)
    else:
        lines.append(term.paint("ok", w(msg("analyze.out.no-problem"))))
    if analysis.similar:
        lines.append("")
        lines.append(w(msg("analyze.out.similar")))
        for n, s in enumerate(analysis.similar, 1):
            t = similar_texts(s, lang)
            lines.append("")
            lines.append("  " + w(msg("analyze.out.similar-head", n=n, family=t["family"], closeness=t["closeness"],
                                      title=s.report.title)))
            lines.append(f"     {s.report.url}")
            if s.same_cause:
                lines.append("     " + w(msg("analyze.out.similar-more", count=len(s.same_cause),
                                               links=" ".join(s.same_cause[:2]) + (" …" if len(s.same_cause) > 2 else ""))))
            for label, body in ((w(msg("analyze.out.similar-cause")), t["cause"]),
                                (w(msg("analyze.out.similar-fix")), t["fix"])):
                wrapped = (textwrap.wrap(body, width - 8) if body.isascii() else [body]) or [""]
                lines.append(f"     {label} {wrapped[0]}")
                lines.extend(f"       {ln}" for ln in wrapped[1:])
            if s.matched:
                lines.append(f"     {w(msg('analyze.out.similar-matched'))}")
                lines.extend(f"       > {m}" for m in s.matched)
    facts = facts_summary(analysis.machine)
    lines.append("")
    lines.append(w(msg("analyze.out.facts")))
    shown = 0
    for key, fact_label in _FACT_LABELS.items():
        if key in facts:
            lines.append("  " + w(msg("analyze.out.fact", label=fact_label, value=facts[key])))
            shown += 1
    for g in facts.get("gpus", []):
        lines.append("  " + w(msg("analyze.out.fact", label=msg("analyze.out.fact.gpu"),
                              value=", ".join(f"{k} {v}" for k, v in g.items()))))
        shown += 1
    for fw in facts.get("frameworks", []):
        lines.append("  " + w(msg("analyze.out.fact", label=msg("analyze.out.fact.framework"),
                              value=", ".join(f"{k} {v}" for k, v in fw.items()))))
        shown += 1
    for t in facts.get("cuda_toolkits", []):
        lines.append("  " + w(msg("analyze.out.fact", label=msg("analyze.out.fact.toolkit"), value=t)))
        shown += 1
    if facts.get("packages"):
        lines.append("  " + w(msg("analyze.out.packages", count=len(facts["packages"]))))
        shown += 1
    if not shown:
        lines.append("  " + w(msg("analyze.out.no-facts")))
    if analysis.fact_lines:
        lines.append("")
        lines.append(w(msg("analyze.out.fact-lines")))
        lines.extend("  " + w(msg("analyze.out.fact-line", fact=fact_word(x.fact, lang), value=x.value, line=x.line))
                     for x in analysis.fact_lines)
    missing = missing_fact_messages(analysis.machine, analysis.has_report)
    if missing:
        lines.append("")
        lines.append(w(msg("analyze.out.missing")))
        lines.extend(f"  - {render(m, lang)}" for m in missing)
    if plans is not None:
        lines.append("")
        lines.append(w(msg("analyze.out.plan")))
        if not plans:
            lines.append("  " + w(msg("analyze.out.plan-none")))
        for fp in plans:
            lines.append("")
            lines += plan_lines(describe(fp, lang), lang)
    return "\n".join(lines) + "\n"
