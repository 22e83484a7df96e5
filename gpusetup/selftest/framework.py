"""Tier 3: does the installed framework really use the GPU? Checked in the target environment.

Runs :mod:`gpusetup.selftest.fwcheck` as a script with the target interpreter (a subprocess through
:mod:`gpusetup.runner`, so a hanging import is stopped by a timeout) and turns its JSON into measurements:
the framework sees the GPU, a matmul and a convolution on it match the CPU, and how fast the matmul ran.
A framework that is not installed is reported as skipped, plainly; a CPU-only build on a GPU machine fails
with the fix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from gpusetup.messages import msg, render
from gpusetup.model import Measurement, Message
from gpusetup.runner import Runner

MARK = "GPUSETUP-FWCHECK: "
SCRIPT = Path(__file__).with_name("fwcheck.py")
CONV_TOLERANCE = 1e-3  # relative to the largest output; cuDNN's Winograd/FFT paths stay far below this


def run(runner: Runner, python: str, frameworks: Sequence[str], n: int, timeout: float,
        gpu_expected: bool) -> tuple[list[Measurement], list[Message]]:
    """(measurements, notes) for each framework in ``frameworks`` ("torch", "tensorflow", "jax", "numpy")."""
    if SCRIPT.is_file():
        argv = [python, str(SCRIPT), str(n), *frameworks]
    else:  # frozen build without loose .py files: pass the script's text instead
        source = resources.files("gpusetup.selftest").joinpath("fwcheck.py").read_text(encoding="utf-8")
        argv = [python, "-c", source, str(n), *frameworks]
    res = runner.run(argv, timeout=timeout)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    check = Measurement(name="framework_check", value=None, unit="", tier="framework")
    if line is None:
        why = res.error or (res.stderr.strip().splitlines() or ["no output"])[-1]
        return [_said(check, "fail", msg("selftest.fw.could-not-run", python=python, error=why))], []
    try:
        data = json.loads(line[len(MARK):])
    except json.JSONDecodeError as exc:
        return [_said(check, "fail", msg("selftest.fw.unreadable", error=str(exc)))], []
    notes = [msg("selftest.note.frameworks-checked", python=data.get("executable") or python,
                 version=data.get("python"))]
    return [_measure(e, python, gpu_expected) for e in data.get("frameworks", [])], notes


def no_python() -> Measurement:
    """The framework tier when there is no environment to check (the packaged app has no Python of its own)."""
    return _said(Measurement(name="framework_check", value=None, unit="", tier="framework"), "skipped",
                 msg("selftest.fw.no-python"))


def _measure(e: dict, python: str, gpu_expected: bool) -> Measurement:
    name = e.get("name", "?")
    m = Measurement(name=f"framework_{name}", value=None, unit="TFLOP/s", tier="framework")
    label = f"{name} {e.get('version', '')}".strip()
    if not e.get("installed", False):
        return _said(m, "skipped", msg("selftest.fw.not-installed", name=name, python=python))
    if e.get("error"):
        return _said(m, "fail", msg("selftest.fw.failed", label=label, error=e["error"]))
    problems = []
    ratio = e.get("matmul_err_ratio")
    if ratio is None or not ratio <= 1.0:
        problems.append(msg("selftest.fw.matmul-differs", ratio=ratio))
    conv = e.get("conv_rel_err")
    if conv is None or not conv <= CONV_TOLERANCE:
        problems.append(msg("selftest.fw.conv-differs", error=conv))
    if e.get("cpu_only"):
        m.value, m.unit = e.get("matmul_tflops"), "TFLOP/s"
        if problems:
            return _said(m, "fail", msg("selftest.fw.problems", label=label, problems=problems))
        return _said(m, "pass", msg("selftest.fw.cpu-ok", label=label))
    if not e.get("gpu"):
        m.value = None
        if not gpu_expected:
            return _said(m, "info", msg("selftest.fw.no-nvidia-gpu", label=label))
        if not e.get("build_cuda") and not e.get("build_rocm") and name == "torch":
            return _said(m, "fail", msg("selftest.fw.cpu-only-build", label=label))
        build = msg("selftest.fw.built-for", cuda=e["build_cuda"]) if e.get("build_cuda") else ""
        return _said(m, "fail", msg("selftest.fw.not-seeing-gpu", label=label, build=build))
    m.value = e.get("matmul_tflops")
    if problems:
        return _said(m, "fail", msg("selftest.fw.runs-but", label=label, device=e.get("device"), problems=problems))
    return _said(m, "pass", msg("selftest.fw.pass", label=label, device=e.get("device"), backend=e.get("conv_backend"),
                                error=f"{conv:.1g}"))


def _said(m: Measurement, verdict: str, reason: Message) -> Measurement:
    """Set the verdict and its reason, as words (English) and as data (code, params)."""
    m.verdict, m.reason, m.code, m.params = verdict, render(reason), reason.code, dict(reason.params)
    return m
