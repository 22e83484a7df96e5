"""`gpusetup diagnose`: detect everything, run the rules, print findings first, then the facts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpusetup import term
from gpusetup.commands import (
    positive_number,
    prepare_output,
    python_executable,
    refuse_overwrite,
    write_atomic,
)
from gpusetup.errors import EXIT_TOOL
from gpusetup.i18n import output_language
from gpusetup.messages import msg
from gpusetup.messages import render as words
from gpusetup.model import Report
from gpusetup.probe import ProbeContext, detect
from gpusetup.report import render
from gpusetup.report.prometheus import render_prometheus
from gpusetup.rules import evaluate


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Detect GPUs, driver, CUDA stack, frameworks, system and containers; report problems "
        "with their fixes. Exit code: 0 healthy, 1 warnings, 2 errors, 3 gpusetup could not run."
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="write JSON (schema: resources/schema/report.schema.json)")
    fmt.add_argument("--format", choices=["text", "json", "markdown", "html", "prometheus"],
                     help="output format (default text); prometheus: node_exporter textfile-collector metrics")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of the terminal (an "
                   "existing file is replaced only with --force; /dev/stdout, a FIFO or a device is written through)")
    p.add_argument("--force", action="store_true", help="replace the -o FILE if it exists")
    p.add_argument("--textfile", metavar="FILE.prom",
                   help="also write Prometheus metrics to FILE.prom (atomically; for node_exporter's textfile "
                        "collector), whatever the --format")
    p.add_argument("--python", metavar="PATH", type=python_executable, help="check the frameworks of this Python interpreter")
    p.add_argument("--deep", action="store_true", help="import each framework (in a subprocess) to ask it whether it sees the GPU; slower")
    p.add_argument("--show-ids", action="store_true", help="show GPU UUIDs, serials and the host name (masked by default)")
    p.add_argument("--timeout", type=positive_number, default=8.0, metavar="SECONDS", help="time limit for each external command (default 8)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    fmt = "json" if args.json else (args.format or "text")
    if args.output:
        prepare_output(args.output)  # a bad -o is reported before the detection, not after it
        refuse_overwrite(args.output, args.force)
    if args.textfile:
        prepare_output(args.textfile, "gpusetup.prom")
    ctx = ProbeContext(python=args.python, deep=args.deep, timeout=args.timeout)
    try:
        machine = detect(ctx)
    except Exception as exc:  # noqa: BLE001 - detect() already isolates probes; this is a last resort
        print("gpusetup: " + words(msg("diagnose.out.detection-failed", error=f"{type(exc).__name__}: {exc}"), output_language()),
              file=sys.stderr)
        return EXIT_TOOL
    report = Report(machine=machine, findings=evaluate(machine))
    use_color = fmt == "text" and not args.output and term.use_color(sys.stdout)
    if fmt == "prometheus":
        text = render_prometheus(report)
    else:
        text = render(report, fmt, color=bool(use_color), show_ids=args.show_ids)
    if args.textfile:
        write_atomic(Path(args.textfile), render_prometheus(report))
    if args.output:
        write_atomic(Path(args.output), term.for_file(text) if fmt == "text" else text)  # read on a terminal later
        print(words(msg("diagnose.out.written", path=args.output), output_language()), file=sys.stderr)
    else:
        sys.stdout.write(text)
    return report.worst.exit_code
