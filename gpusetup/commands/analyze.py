"""`gpusetup analyze FILE... [--json]`: diagnose from what a user sent (logs, tracebacks, reports)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from gpusetup.analyze import analyze_paths, facts_summary, missing_facts
from gpusetup.analyze.fleet import fleet_rows
from gpusetup.commands import write_atomic
from gpusetup.errors import EXIT_TOOL
from gpusetup.model import Severity
from gpusetup.report.fleet import fleet_json, fleet_table


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Recognise what each input is (PyTorch collect_env, nvidia-smi table/-q/XML, kernel log, "
        "Python traceback, docker error, a message mixing prose and logs, a gpusetup JSON report or support "
        "bundle), extract the facts it holds, and run the same diagnosis rules as `gpusetup diagnose`. "
        "Exit code: 0 nothing found, 1 warnings, 2 errors, 3 an input could not be read."
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="input files; '-' reads standard input")
    p.add_argument("--json", action="store_true", help='write JSON: {"inputs", "facts", "missing", "findings"} (schema: resources/schema/analyze.schema.json)')
    p.add_argument("-o", "--output", metavar="FILE", help="write the result to FILE instead of the terminal")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.files.count("-") > 1:
        print("gpusetup analyze: '-' (standard input) can be given only once", file=sys.stderr)
        return EXIT_TOOL
    rows = fleet_rows(args.files)
    if rows is not None:
        return _fleet(args, rows)
    analysis = analyze_paths(args.files)
    out = json.dumps(analysis.to_dict(), indent=2, ensure_ascii=False) + "\n" if args.json else render_text(analysis)
    if args.output:
        write_atomic(Path(args.output), out)
        print(f"Result written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(out)
    for bad in analysis.unreadable:
        print(f"gpusetup analyze: {bad.error}", file=sys.stderr)
    if analysis.unreadable:
        return EXIT_TOOL
    return analysis.worst.exit_code


def _fleet(args: argparse.Namespace, rows) -> int:  # noqa: ANN001 - list[FleetRow], imported lazily
    """Many whole-machine reports/bundles: a fleet table, one row per machine."""
    out = json.dumps(fleet_json(rows), indent=2, ensure_ascii=False) + "\n" if args.json else fleet_table(rows)
    if args.output:
        write_atomic(Path(args.output), out)
        print(f"Result written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(out)
    if any(r.error for r in rows):
        return EXIT_TOOL
    return max((r.worst for r in rows), key=lambda s: s.rank, default=Severity.OK).exit_code


_MARK = {"error": "ERROR  ", "warning": "WARNING", "info": "INFO   ", "ok": "OK     "}


def render_text(analysis) -> str:  # noqa: ANN001 - gpusetup.analyze.Analysis (kept out of import time)
    w = 100
    lines: list[str] = []
    n = len(analysis.inputs)
    lines.append(f"gpusetup analyze — {n} input{'s' if n != 1 else ''}")
    for i in analysis.inputs:
        if i.error:
            lines.append(f"  {i.name}: NOT READ — {i.error}")
        else:
            lines.append(f"  {i.name}: {i.describe()}")
        for note in i.notes:
            lines.append(f"      note: {note}")
    lines.append("")
    if not any(not i.error for i in analysis.inputs):
        lines.append("No input could be read, so nothing was analysed.")
        return "\n".join(lines) + "\n"
    if analysis.findings:
        lines.append("Findings (most severe first):")
        for f in analysis.findings:
            code = f" {f.catalogue}" if f.catalogue else ""
            lines.append("")
            lines.append(f"{_MARK.get(f.severity.value, f.severity.value)}{code}  {f.title}  [{f.id}]")
            for label, body in (("What it means", f.detail), ("Fix", f.fix)):
                if body:
                    wrapped = textwrap.wrap(body, w - 6) or [""]
                    lines.append(f"    {label}: {wrapped[0]}")
                    lines.extend(f"      {ln}" for ln in wrapped[1:])
            if f.evidence:
                lines.append("    Evidence:")
                lines.extend(f"      > {e}" for e in f.evidence)
    else:
        lines.append("No known problem found in the input.")
    facts = facts_summary(analysis.machine)
    lines.append("")
    lines.append("Facts found in the input:")
    shown = 0
    for key in ("os", "distro", "kernel", "wsl", "container", "driver_version", "driver_cuda_version",
                "nvml_error", "cuinit_error", "xids"):
        if key in facts:
            lines.append(f"  {key.replace('_', ' ')}: {facts[key]}")
            shown += 1
    for g in facts.get("gpus", []):
        lines.append("  GPU: " + ", ".join(f"{k} {v}" for k, v in g.items()))
        shown += 1
    for fw in facts.get("frameworks", []):
        lines.append("  framework: " + ", ".join(f"{k} {v}" for k, v in fw.items()))
        shown += 1
    for t in facts.get("cuda_toolkits", []):
        lines.append(f"  CUDA toolkit: {t}")
        shown += 1
    if facts.get("packages"):
        lines.append(f"  NVIDIA/CUDA packages: {len(facts['packages'])} listed")
        shown += 1
    if not shown:
        lines.append("  (none of the facts gpusetup knows how to read)")
    missing = missing_facts(analysis.machine, analysis.has_report)
    if missing:
        lines.append("")
        lines.append("Not in the input (would make the diagnosis surer):")
        lines.extend(f"  - {m}" for m in missing)
    return "\n".join(lines) + "\n"
