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
from pathlib import Path

from gpusetup.model import Measurement
from gpusetup.runner import Runner

MARK = "GPUSETUP-FWCHECK: "
SCRIPT = Path(__file__).with_name("fwcheck.py")
CONV_TOLERANCE = 1e-3  # relative to the largest output; cuDNN's Winograd/FFT paths stay far below this


def run(runner: Runner, python: str, frameworks: Sequence[str], n: int, timeout: float,
        gpu_expected: bool) -> tuple[list[Measurement], list[str]]:
    """(measurements, notes) for each framework in ``frameworks`` ("torch", "tensorflow", "jax", "numpy")."""
    if SCRIPT.is_file():
        argv = [python, str(SCRIPT), str(n), *frameworks]
    else:  # frozen build without loose .py files: pass the script's text instead
        from importlib import resources

        source = resources.files("gpusetup.selftest").joinpath("fwcheck.py").read_text(encoding="utf-8")
        argv = [python, "-c", source, str(n), *frameworks]
    res = runner.run(argv, timeout=timeout)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        why = res.error or (res.stderr.strip().splitlines() or ["no output"])[-1]
        return [Measurement(name="framework_check", value=None, unit="", tier="framework", verdict="fail",
                            reason=f"the framework check could not run with {python}: {why}")], []
    try:
        data = json.loads(line[len(MARK):])
    except json.JSONDecodeError as exc:
        return [Measurement(name="framework_check", value=None, unit="", tier="framework", verdict="fail",
                            reason=f"the framework check printed unreadable output ({exc})")], []
    notes = [f"Frameworks checked with {data.get('executable') or python} (Python {data.get('python')})."]
    return [_measure(e, python, gpu_expected) for e in data.get("frameworks", [])], notes


def no_python() -> Measurement:
    """The framework tier when there is no environment to check (the packaged app has no Python of its own)."""
    return Measurement(name="framework_check", value=None, unit="", tier="framework", verdict="skipped",
                       reason="no Python environment was given, so no framework was checked: not proven. "
                              "Name the environment: gpusetup selftest --python PATH/bin/python")


def _measure(e: dict, python: str, gpu_expected: bool) -> Measurement:
    name = e.get("name", "?")
    m = Measurement(name=f"framework_{name}", value=None, unit="TFLOP/s", tier="framework")
    label = f"{name} {e.get('version', '')}".strip()
    if not e.get("installed", False):
        m.verdict = "skipped"
        m.reason = (f"{name} is not installed in {python}; `gpusetup plan` shows which build fits this "
                    "machine and `gpusetup install` sets it up")
        return m
    if e.get("error"):
        m.verdict = "fail"
        m.reason = f"{label} failed: {e['error']}"
        return m
    problems = []
    ratio = e.get("matmul_err_ratio")
    if ratio is None or not ratio <= 1.0:
        problems.append(f"its matmul differs from the CPU beyond FP32 rounding (error ratio {ratio})")
    conv = e.get("conv_rel_err")
    if conv is None or not conv <= CONV_TOLERANCE:
        problems.append(f"its convolution differs from the CPU (relative error {conv})")
    if e.get("cpu_only"):
        m.value, m.unit = e.get("matmul_tflops"), "TFLOP/s"
        m.verdict = "fail" if problems else "pass"
        m.reason = (f"{label} on the CPU: matmul and convolution match a float64 reference (CPU-only run of "
                    "the framework check)" if not problems else f"{label}: " + "; ".join(problems))
        return m
    if not e.get("gpu"):
        m.value = None
        if not gpu_expected:
            m.verdict = "info"
            m.reason = f"{label} is installed; there is no NVIDIA GPU for it to use"
        elif not e.get("build_cuda") and not e.get("build_rocm") and name == "torch":
            m.verdict = "fail"
            m.reason = (f"{label} is a CPU-only build, so it cannot use your GPU. Install a CUDA build: "
                        "`gpusetup plan` shows the right one")
        else:
            build = f" (built for CUDA {e['build_cuda']})" if e.get("build_cuda") else ""
            m.verdict = "fail"
            m.reason = (f"{label}{build} is installed but does not see the GPU. `gpusetup diagnose` explains "
                        "why (driver too old for this build, missing CUDA libraries, CUDA_VISIBLE_DEVICES)")
        return m
    m.value = e.get("matmul_tflops")
    if problems:
        m.verdict = "fail"
        m.reason = f"{label} runs on {e.get('device')}, but " + "; ".join(problems)
        return m
    m.verdict = "pass"
    m.reason = (f"{label} sees {e.get('device')}; a matmul (TF32 off) matches the CPU within FP32 rounding and a "
                f"convolution ({e.get('conv_backend')}) matches within {conv:.1g}")
    return m
