"""`gpusetup selftest`: measure the GPU (copies, matmul, cuBLAS, frameworks) against its rated peak."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from gpusetup import term
from gpusetup.cancel import CancelToken
from gpusetup.commands import gpu_number, prepare_output, python_executable, refuse_overwrite, write_atomic
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg
from gpusetup.messages import render as render_message
from gpusetup.model import Report
from gpusetup.probe import ProbeContext, detect
from gpusetup.report import render
from gpusetup.rules.report_level import evaluate_measurements
from gpusetup.selftest import SelfTestEnv, run_selftest
from gpusetup.selftest.text import format_text


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the self-test: copy bandwidth and a checked matrix multiply through the NVIDIA driver "
        "alone, cuBLAS GEMM throughput when cuBLAS is present, the installed frameworks on the GPU, and a CPU "
        "baseline. Each number is shown against the GPU's rated peak with a verdict and the reason. "
        "Exit code: 0 healthy, 1 warnings, 2 problems found, 3 gpusetup could not run, 130 cancelled."
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="small buffers and few repetitions: seconds (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="nvbandwidth-sized buffers (512 MiB) and larger matrices: longer, more exact")
    p.add_argument("--json", action="store_true",
                   help="write the JSON report with the self-test (schema: resources/schema/report.schema.json)")
    p.add_argument("--device", type=gpu_number, metavar="N", help="CUDA device number to test (default 0)")
    p.add_argument("--python", metavar="PATH", type=python_executable,
                   help="check the frameworks of this Python interpreter (default: the environment `gpusetup install` "
                        "installed last, else this one)")
    p.add_argument("--framework", action="append", choices=["torch", "pytorch", "tensorflow", "jax", "numpy"],
                   help="check this framework in the target environment (repeat for several; default: the ones "
                        "installed there; numpy is the processor-only path of the same check)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the result to FILE instead of the terminal (an existing file is replaced only with "
                        "--force)")
    p.add_argument("--force", action="store_true", help="replace the -o FILE if it exists")
    p.set_defaults(handler=run, mode="quick")


def run(args: argparse.Namespace) -> int:
    if args.output:
        prepare_output(args.output, example="selftest.txt")  # before the measurements, not after them
        refuse_overwrite(args.output, args.force)
    token = CancelToken()
    quiet = args.json or not sys.stderr.isatty()

    def on_sigint(signum: int, frame: Any) -> None:
        if token.cancelled:
            raise KeyboardInterrupt
        token.cancel()
        print("\n" + render_message(msg("selftest.cli.stopping"), output_language()), file=sys.stderr)

    def progress(label: str, fraction: float | None) -> None:
        if not quiet and label != "done":
            term.rewrite_line(sys.stderr, f"  {label}…")

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        progress(render_message(msg("selftest.progress.detecting"), output_language()), None)
        machine = detect(ProbeContext(only=("system", "pci", "nvml")))
        env = _target(args)
        result = run_selftest(machine, mode=args.mode, device=args.device, progress=progress, cancel=token, env=env)
    finally:
        signal.signal(signal.SIGINT, old)
        if not quiet:
            term.rewrite_line(sys.stderr, "")
    report = Report(machine=machine, selftest=result)
    report.findings = evaluate_measurements(report)
    text = render(report, "json") if args.json else format_text(result) + _findings_text(report)
    if args.output:
        write_atomic(Path(args.output), text)
        print(render_message(msg("selftest.cli.written", path=args.output), output_language()), file=sys.stderr)
    else:
        sys.stdout.write(text)
    if result.cancelled:
        return 130
    return {"fail": 2, "warn": 1}.get(result.verdict, 0)


def _target(args: argparse.Namespace) -> SelfTestEnv:
    """Where the frameworks are checked: ``--python``; else the environment gpusetup's installer made last (from
    its journal: after a resume or a new terminal the proof is about what was installed, with the frameworks
    installed there), else this interpreter. Which: ``--framework``, else the installed ones."""
    env = SelfTestEnv(python=args.python)
    if args.framework:
        env.frameworks = tuple(dict.fromkeys(args.framework))
    if args.python:
        return env
    from gpusetup.install.environments import from_journal  # lazy: the installer's modules only for this

    made = from_journal()
    if made:
        env.python = made[0].python
        if not args.framework and made[0].frameworks:
            env.frameworks = tuple(made[0].frameworks)
        env.extra_notes.append(msg("selftest.note.installed-env", target=made[0].target))
    return env


def _findings_text(report) -> str:  # noqa: ANN001 - Report, imported lazily
    """What the measurements mean, in the words of the diagnosis rules (empty when all is well)."""
    if not report.findings:
        return ""
    lang = output_language()
    lines = ["", render_message(msg("selftest.cli.what-this-means"), lang)]
    for f in report.findings:
        words = finding_words(f, lang)
        lines.append(f"  {f.severity.value.upper()}: {words.title}" + (f" [{f.catalogue}]" if f.catalogue else ""))
        if words.translated:
            lines.append(f"    {words.meaning}")
        if words.fix:
            lines.append("    " + render_message(msg("selftest.cli.fix", fix=words.fix), lang))
    return "\n".join(lines) + "\n"
