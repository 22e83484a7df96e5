"""Tier 3: does the framework the user chose really compute, and where? Checked in the target environment.

Runs :mod:`gpusetup.selftest.fwcheck` as a script with the target interpreter (a subprocess through
:mod:`gpusetup.runner`, so a hanging import is stopped by a timeout) and turns its JSON into one measurement
per framework: whether it is installed, whether it starts, which device it computed on (the GPU when it sees
one, else the processor), a matmul and a convolution there checked against float64, and the matmul's speed —
on the GPU against its rated FP32 peak (the spec table, :mod:`.peaks`). A framework that is installed but does
not start, computes wrong results, or does not use the GPU of a machine that has one fails, with its reason.

Which frameworks: the ones the user chose (``frameworks``); ``None`` means "whichever of torch, TensorFlow
and JAX is installed there" (nothing is said about one that is not installed and was not asked for).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from gpusetup.messages import msg, render
from gpusetup.model import Measurement, Message
from gpusetup.runner import Runner
from gpusetup.selftest import peaks

MARK = "GPUSETUP-FWCHECK: "
SCRIPT = Path(__file__).with_name("fwcheck.py")
CONV_TOLERANCE = 1e-3  # relative to the largest output; cuDNN's Winograd/FFT paths stay far below this
KNOWN = ("torch", "tensorflow", "jax")  # what is looked for when the user chose none
# the wizard's and the install plan's names → the import names the check uses
IMPORT_NAMES = {"pytorch": "torch", "torch": "torch", "tensorflow": "tensorflow", "jax": "jax", "numpy": "numpy"}


def import_names(frameworks: Sequence[str]) -> tuple[str, ...]:
    """("pytorch", "jax") → ("torch", "jax"): the names the check knows, each once, in order."""
    return tuple(dict.fromkeys(IMPORT_NAMES.get(f.lower(), f.lower()) for f in frameworks))


def run(runner: Runner, python: str, frameworks: Sequence[str] | None, n: int, timeout: float,
        gpu_expected: bool, ctx: Any = None) -> tuple[list[Measurement], list[Message]]:
    """(measurements, notes) for each framework in ``frameworks`` ("torch", "tensorflow", "jax", "numpy"; None:
    those of torch/TensorFlow/JAX installed there). ``ctx`` (the run's :class:`~.base.RunCtx`) gives the GPU's
    spec row and clocks for the rated peak; without it the row is looked up by the framework's device name."""
    chosen = frameworks is not None
    names = import_names(frameworks) if frameworks is not None else KNOWN
    if SCRIPT.is_file():
        argv = [python, str(SCRIPT), str(n), *names]
    else:  # frozen build without loose .py files: pass the script's text instead
        source = resources.files("gpusetup.selftest").joinpath("fwcheck.py").read_text(encoding="utf-8")
        argv = [python, "-c", source, str(n), *names]
    res = runner.run(argv, timeout=timeout)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        why = res.error or (res.stderr.strip().splitlines() or ["no output"])[-1]
        return _each(names, chosen, "fail", msg("selftest.fw.could-not-run", python=python, error=why)), []
    try:
        data = json.loads(line[len(MARK):])
    except json.JSONDecodeError as exc:
        return _each(names, chosen, "fail", msg("selftest.fw.unreadable", error=str(exc))), []
    notes = [msg("selftest.note.frameworks-checked", python=data.get("executable") or python,
                 version=data.get("python"))]
    entries = [e for e in data.get("frameworks", []) if isinstance(e, dict)]
    if not chosen:
        entries = [e for e in entries if e.get("installed")]
        if not entries:
            return [_said(Measurement(name="framework_check", value=None, unit="", tier="framework"), "skipped",
                          msg("selftest.fw.none-installed", wanted=", ".join(names), python=python))], notes
    return [_measure(e, python, gpu_expected, ctx) for e in entries], notes


def _each(names: Sequence[str], chosen: bool, verdict: str, reason: Message) -> list[Measurement]:
    """The same outcome for every framework asked for (the check as a whole could not run)."""
    if not chosen:
        return [_said(Measurement(name="framework_check", value=None, unit="", tier="framework"), verdict, reason)]
    return [_said(Measurement(name=f"framework_{n}", value=None, unit="", tier="framework"), verdict, reason)
            for n in names]


def no_python() -> Measurement:
    """The framework tier when there is no environment to check (the packaged app has no Python of its own)."""
    return _said(Measurement(name="framework_check", value=None, unit="", tier="framework"), "skipped",
                 msg("selftest.fw.no-python"))


def _measure(e: dict, python: str, gpu_expected: bool, ctx: Any = None) -> Measurement:
    name = str(e.get("name", "?"))
    m = Measurement(name=f"framework_{name}", value=None, unit="", tier="framework")
    label = f"{name} {e.get('version') or next(iter((e.get('dists') or {}).values()), '')}".strip()
    if not e.get("installed", False):
        return _said(m, "skipped", msg("selftest.fw.not-installed", name=name, python=python))
    if e.get("error"):
        stage = e.get("stage")
        if stage == "import":
            return _said(m, "fail", msg("selftest.fw.does-not-start", label=label, error=e["error"]))
        if stage == "numpy":
            return _said(m, "skipped", msg("selftest.fw.no-numpy", label=label, python=python))
        return _said(m, "fail", msg("selftest.fw.failed", label=label, error=e["error"]))
    on_gpu = e.get("on") == "gpu" or (e.get("on") is None and bool(e.get("gpu")))
    if not on_gpu and gpu_expected and name != "numpy":  # it works, but not on the graphics card there
        if not e.get("build_cuda") and not e.get("build_rocm") and name == "torch":
            return _said(m, "fail", msg("selftest.fw.cpu-only-build", label=label))
        build = msg("selftest.fw.built-for", cuda=e["build_cuda"]) if e.get("build_cuda") else ""
        return _said(m, "fail", msg("selftest.fw.not-seeing-gpu", label=label, build=build))
    problems = []
    ratio = e.get("matmul_err_ratio")
    if ratio is None or not ratio <= 1.0:
        problems.append(msg("selftest.fw.matmul-differs", ratio=ratio))
    conv = e.get("conv_rel_err")
    if conv is None or not conv <= CONV_TOLERANCE:
        problems.append(msg("selftest.fw.conv-differs", error=conv))
    device = e.get("device") or ("GPU" if on_gpu else "cpu")
    if problems:
        where = device if on_gpu else msg("selftest.fw.the-processor")
        return _said(m, "fail", msg("selftest.fw.runs-but", label=label, device=where, problems=problems))
    flops = e.get("matmul_flops")
    if flops is None and e.get("matmul_tflops") is not None:  # an older check's output
        flops = float(e["matmul_tflops"]) * 1e12
    n = e.get("n") or "?"
    if not on_gpu:
        m.value, m.unit = (round(float(flops) / 1e9, 1) if flops else None), "GFLOP/s"
        return _said(m, "pass", msg("selftest.fw.cpu-ran", label=label, n=n, speed=_num(m.value),
                                    backend=e.get("conv_backend"), error=f"{conv:.1g}"))
    m.value, m.unit, m.device = (round(float(flops) / 1e12, 3) if flops else None), "TFLOP/s", 0
    return _rate(m, e, label, device, n, f"{conv:.1g}", ctx)


def _rate(m: Measurement, e: dict, label: str, device: str, n: Any, conv: str, ctx: Any) -> Measurement:
    """The GPU matmul's speed against the card's rated FP32 peak (the spec table): healthy unless it is below
    the floor the bands give for an FP32 GEMM (then "works, but slowly")."""
    specs = getattr(ctx, "specs", None) or peaks.load_specs()
    info = getattr(ctx, "info", None)
    if info is not None and peaks.normalise_name(getattr(info, "name", "") or "") != peaks.normalise_name(device):
        info = None  # the driver tier tested another card than the one the framework used
    same = info is not None
    spec = (getattr(ctx, "spec", None) if same else None) or specs.find(device)
    cc = e.get("cc") or (str(info.compute_capability) if info is not None and info.compute_capability else None)
    sm_count = e.get("sm_count") or (info.sm_count if info is not None else None)
    machine_gpu = getattr(ctx, "machine_gpu", None) if same else None
    max_mhz = machine_gpu.clocks.sm_max_mhz if machine_gpu is not None else None
    rated = peaks.compute_peak("fp32", spec, specs, cc=cc, sm_count=sm_count, live_mhz=None, max_mhz=max_mhz)
    common = dict(label=label, device=device, n=n, speed=_num(m.value), backend=e.get("conv_backend"), error=conv)
    if rated is None or m.value is None:
        return _said(m, "pass", msg("selftest.fw.gpu-ok", rated=msg("selftest.fw.unrated"), **common))
    m.rated, m.rated_basis, m.datasheet = rated.value, rated.basis, rated.datasheet
    m.fraction = m.value / rated.value
    rate = specs.rate(cc)
    band = specs.band("gemm_fp32", spec.segment if spec else None,
                      "dual-issue" if rate and rate.get("dual_issue_fp32") else "any")
    pct = f"{m.fraction:.0%}"
    if band is not None and m.fraction < band.fail_below:
        return _said(m, "warn", msg("selftest.fw.gpu-slow", label=label, device=device, n=n, speed=_num(m.value),
                                    pct=pct, peak=_num(rated.value), detail=rated.detail, typical=band.typical))
    return _said(m, "pass", msg("selftest.fw.gpu-ok", rated=msg("selftest.fw.rated", pct=pct, peak=_num(rated.value),
                                                              detail=rated.detail), **common))


def _num(v: float | None) -> str:
    if v is None:
        return "?"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _said(m: Measurement, verdict: str, reason: Message) -> Measurement:
    """Set the verdict and its reason, as words (English) and as data (code, params)."""
    peaks.say(m, reason, verdict)
    m.reason = render(reason)
    return m
