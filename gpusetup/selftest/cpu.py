"""Tier 4: the CPU baseline (performance.md §4): numpy matmul GFLOP/s and STREAM-style memory bandwidth.

This is the only self-test module that imports numpy (lazily, inside :func:`run`). It gives the GPU/CPU
speed-up measured on this machine, and on a machine without an NVIDIA GPU it is the whole self-test.
Rated CPU peaks are not reliable (VMs hide the clock and the memory layout), so these are reported, not
judged. numpy cannot express STREAM's single-pass triad, so "copy" uses ``np.copyto`` with STREAM's
16 bytes per element, and the triad is labelled as numpy's two-pass version (it under-reports).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gpusetup.cancel import CancelToken, Progress
from gpusetup.messages import msg
from gpusetup.model import Measurement
from gpusetup.selftest.base import MIB, Sizes, median_spread
from gpusetup.selftest.peaks import say


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


def run(sizes: Sizes, cancel: CancelToken, progress: Progress, *, ram_available_mib: int | None = None,
        root: Path = Path("/")) -> list[Measurement]:
    try:
        import numpy as np  # lazy: DESIGN: diagnose never imports numpy; optional for the CPU tier (skipped without it)
    except ImportError:
        return [say(Measurement(name="cpu_matmul_fp32", value=None, unit="GFLOP/s", tier="cpu", verdict="skipped"),
                    msg("selftest.cpu.no-numpy"))]
    out: list[Measurement] = []
    threads = os.cpu_count()
    # Matmul: best of the samples after one warm-up, like the reference tools' "best N".
    progress("CPU: matrix multiply", 0.0)
    n = sizes.cpu_gemm_n
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    samples = []
    for _ in range(sizes.samples):
        cancel.raise_if_cancelled()
        t = time.perf_counter()
        a @ b
        samples.append(2.0 * n**3 / (time.perf_counter() - t) / 1e9)
    med, spread = median_spread(samples)
    out.append(say(Measurement(
        name="cpu_matmul_fp32", value=max(samples), unit="GFLOP/s", tier="cpu", verdict="info",
        samples=[round(x, 2) for x in samples], spread=spread,
    ), msg("selftest.cpu.matmul", numpy=np.__version__, n=n, count=len(samples), median=f"{med:.4g}",
           threads=threads)))
    del a, b

    progress("CPU: memory bandwidth", 0.5)
    llc = last_level_cache_bytes(root)
    nbytes = stream_bytes(sizes, llc, ram_available_mib)
    small = msg("selftest.cpu.small-arrays", llc=llc // MIB) if llc and nbytes < 4 * llc else ""
    count = nbytes // 8
    x = np.full(count, 1.0)
    y = np.full(count, 2.0)
    z = np.empty(count)
    copy_s, triad_s = [], []
    for i in range(max(3, sizes.samples + 1)):  # STREAM: best time, first iteration excluded
        cancel.raise_if_cancelled()
        t = time.perf_counter()
        np.copyto(z, x)
        t1 = time.perf_counter()
        np.multiply(y, 3.0, out=z)
        np.add(z, x, out=z)
        t2 = time.perf_counter()
        if i:
            copy_s.append(16 * count / (t1 - t) / 1e9)
            triad_s.append(24 * count / (t2 - t1) / 1e9)
    ok = bool(z[0] == 7.0 and z[-1] == 7.0)
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
