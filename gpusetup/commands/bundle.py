"""`gpusetup bundle`: one zip for a support team, redacted by default."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

from gpusetup.bundle import build_bundle, planned_items
from gpusetup.commands import positive_number, prepare_output, python_executable
from gpusetup.compat.resolver import resolve
from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import Machine, Report
from gpusetup.probe import ProbeContext, detect
from gpusetup.rules import evaluate
from gpusetup.rules.report_level import evaluate_report
from gpusetup.selftest import run_selftest


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Collect the diagnose report, the plan and raw outputs (each with its command, exit code "
        "and duration) into one zip with a manifest. User names, host names, IP/MAC addresses, serial numbers, "
        "GPU UUIDs, e-mail addresses and secrets are removed unless you pass --no-redact."
    )
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the zip (default: gpusetup-bundle-<time>.zip here)")
    p.add_argument("--show", action="store_true", help="only list what would be collected and why; collect nothing")
    p.add_argument("--no-redact", action="store_true", help="keep names, addresses and ids (only if you are sure)")
    p.add_argument("--python", metavar="PATH", type=python_executable, help="the Python environment to describe (default: this one)")
    p.add_argument("--selftest", action="store_true", help="also run the quick self-test and include its results")
    p.add_argument("--no-plan", action="store_true", help="do not include an install plan")
    p.add_argument("--size-cap", type=positive_number, default=20, metavar="MB", help="largest total size of the files (default 20 MB)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    ctx = ProbeContext(python=args.python)
    if args.show:
        # Listing needs no detection: show every item with its reason and command.
        for item in planned_items(Machine(), Report(Machine()), ctx, args.python):
            how = " ".join(item.command) if item.command else (f"read {item.source_path}" if item.source_path else "from the report")
            print(f"{item.name:<44} {item.why}\n{'':<44} ({how})")
        print("\nplus: lspci for each GPU, /proc/driver/nvidia/gpus/*, and gpusetup's own logs and install journals.")
        print("Nothing was collected. Private data is removed before zipping unless --no-redact is given.")
        return 0
    out = args.output or f"gpusetup-bundle-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.zip"
    prepare_output(out, example="bundle.zip")  # checked before the slow detection and collection
    machine = detect(ctx)
    report = Report(machine=machine, findings=evaluate(machine))
    if not args.no_plan:
        report.plans = _plans(machine)
    if args.selftest:
        report.selftest = _selftest(machine)
        if report.selftest is not None:
            report.findings = evaluate_report(report)  # adds findings from the measurements
    if args.no_redact:
        print("gpusetup: " + render(msg("bundle.out.no-redact"), output_language()), file=sys.stderr)
    try:
        result = build_bundle(
            Path(out), report, ctx, redact=not args.no_redact, python=args.python, size_cap=int(args.size_cap * 1024 * 1024)
        )
    except OSError as exc:
        raise ToolError(msg("cli.error.cannot-write-here", path=str(out), reason=exc.strerror or str(exc))) from exc
    m = result.manifest
    lang = output_language()
    print(render(msg("bundle.out.written", path=str(result.path), kib=f"{result.size / 1024:.0f}", files=len(m["files"])), lang))
    if result.redacted:
        kinds = ", ".join(f"{k} ×{n}" for k, n in m["redactions"].items())
        print(render(msg("bundle.out.removed", kinds=kinds) if kinds else msg("bundle.out.removed-nothing"), lang))
    if m["cut"]:
        print(render(msg("bundle.out.cut", count=len(m["cut"])), lang))
    print(render(msg("bundle.out.send", path=str(result.path)), lang))
    return 0


def _plans(machine):
    try:
        return resolve(machine, ("pytorch", "tensorflow", "jax"))
    except Exception:  # noqa: BLE001 - a bundle must still be written
        return []


def _selftest(machine):
    return run_selftest(machine, mode="quick")
