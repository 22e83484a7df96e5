"""Tier 4: the CPU baseline (performance.md §4): numpy matmul GFLOP/s and STREAM-style memory bandwidth.

numpy is imported only by :mod:`.cpucheck`, in this Python when it has numpy, else in the environment under
test (the packaged app does not carry numpy: that environment's interpreter runs cpucheck). It gives the GPU/CPU
speed-up measured on this machine, and on a machine without an NVIDIA GPU it is the whole self-test.
Rated CPU peaks are not reliable (VMs hide the clock and the memory layout), so these are reported, not
judged. numpy cannot express STREAM's single-pass triad, so "copy" uses ``np.copyto`` with STREAM's
16 bytes per element, and the triad is labelled as numpy's two-pass version (it under-reports).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from gpusetup.cancel import CancelToken, Progress
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import Measurement, Message
from gpusetup.runner import Runner, SubprocessRunner
from gpusetup.selftest import cpucheck
from gpusetup.selftest.base import MIB, Sizes, median_spread
from gpusetup.selftest.peaks import say

cpucheck_script = Path(cpucheck.__file__).with_name("cpucheck.py")
CHILD_TIMEOUT = 300.0


def last_level_cache_bytes(root: Path = Path("/")) -> int | None:
    """Largest cache size the kernel lists for cpu0 (Linux sysfs); None when unknown."""
    base = root / "sys/devices/system/cpu/cpu0/cache"
    best = None
    try:
        for d in base.glob("index*"):
            text = (d / "size").read_text().strip().upper()
            mult = {"K": 1024, "M": MIB, "G": 1024 * MIB}.get(text[-1:], 1)
            value = int(text.rstrip("KMG")) * mult
            best = max(best or 0, value)
    except (OSError, ValueError):
        return best
    return best


def stream_bytes(sizes: Sizes, llc: int | None, ram_available_mib: int | None) -> int:
    """Per-array size: STREAM's rule of at least 4× the last-level cache, capped by the mode's limit
    (virtual machines often report the whole host's cache) and a twelfth of the available RAM."""
    if sizes.cpu_stream_bytes:
        return sizes.cpu_stream_bytes
    want = min(max(4 * (llc or 32 * MIB), 64 * MIB), sizes.cpu_stream_cap)
    if ram_available_mib:
        want = min(want, ram_available_mib * MIB // 12)
    return max(want, 8 * MIB)


def _numpy_here() -> bool:
    try:
        import numpy  # noqa: F401  # lazy: DESIGN: diagnose never imports numpy; the packaged app has none
    except ImportError:
        return False
    return True


def _in(python: str, runner: Runner, args: dict[str, int], timeout: float) -> dict[str, Any]:
    """cpucheck's result from ``python`` (the environment that was installed); {"missing": why} on failure."""
    if cpucheck_script.is_file():
        argv = [python, "-I", str(cpucheck_script), json.dumps(args)]
    else:  # frozen build without loose .py files: pass the script's text instead
        source = resources.files("gpusetup.selftest").joinpath("cpucheck.py").read_text(encoding="utf-8")
        argv = [python, "-I", "-c", source, json.dumps(args)]
    res = runner.run(argv, timeout=timeout)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(cpucheck.MARK)), None)
    if line is None:
        return {"missing": res.error or (res.stderr.strip().splitlines() or ["no output"])[-1]}
    try:
        return dict(json.loads(line[len(cpucheck.MARK):]))
    except ValueError as exc:
        return {"missing": f"unreadable output ({exc})"}


def run(sizes: Sizes, cancel: CancelToken, progress: Progress, *, ram_available_mib: int | None = None,
        root: Path = Path("/"), python: str | None = None, runner: Runner | None = None) -> list[Measurement]:
    """Measure with numpy in this Python; where it has none (the packaged app), in ``python``'s environment."""
    llc = last_level_cache_bytes(root)
    nbytes = stream_bytes(sizes, llc, ram_available_mib)
    count = nbytes // 8
    threads = os.cpu_count()
    progress(render(msg("selftest.progress.cpu"), output_language()), 0.0)
    if _numpy_here():
        data: dict[str, Any] = cpucheck.measure(sizes.cpu_gemm_n, sizes.samples, count, cancel.raise_if_cancelled)
    elif python:
        data = _in(python, runner or SubprocessRunner(), {"n": sizes.cpu_gemm_n, "samples": sizes.samples,
                                                          "count": count}, CHILD_TIMEOUT)
        cancel.raise_if_cancelled()
        if "missing" in data:
            return [_skipped(msg("selftest.cpu.no-numpy-in", python=python, why=data["missing"]))]
    else:
        return [_skipped(msg("selftest.cpu.no-numpy"))]
    samples = data["matmul"]
    n = sizes.cpu_gemm_n
    med, spread = median_spread(samples)
    out = [say(Measurement(
        name="cpu_matmul_fp32", value=max(samples), unit="GFLOP/s", tier="cpu", verdict="info",
        samples=[round(x, 2) for x in samples], spread=spread,
    ), msg("selftest.cpu.matmul", numpy=data["numpy"], n=n, count=len(samples), median=f"{med:.4g}",
           threads=threads))]
    progress(render(msg("selftest.progress.cpu-memory"), output_language()), 0.5)
    small = msg("selftest.cpu.small-arrays", llc=llc // MIB) if llc and nbytes < 4 * llc else ""
    copy_s, triad_s, ok = data["copy"], data["triad"], bool(data["ok"])
    mb = nbytes // MIB
    out.append(say(Measurement(
        name="cpu_copy", value=max(copy_s), unit="GB/s", tier="cpu", verdict="info",
        samples=[round(v, 2) for v in copy_s], spread=median_spread(copy_s)[1],
    ), msg("selftest.cpu.copy", mib=mb, small=small)))
    out.append(say(Measurement(
        name="cpu_triad_2pass", value=max(triad_s), unit="GB/s", tier="cpu",
        verdict="info" if ok else "fail", samples=[round(v, 2) for v in triad_s],
        spread=median_spread(triad_s)[1],
    ), msg("selftest.cpu.triad", mib=mb, small=small) if ok else msg("selftest.cpu.triad-wrong")))
    return out


def _skipped(why: Message) -> Measurement:
    return say(Measurement(name="cpu_matmul_fp32", value=None, unit="GFLOP/s", tier="cpu", verdict="skipped"), why)
