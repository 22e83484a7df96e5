"""FP32 matrix multiply with gpusetup's own PTX kernel: correct, repeatable, and how fast.

Three answers from one kernel (``resources/kernels/selftest.ptx``, JIT-compiled by the driver):

* **correct**: result elements are compared with a float64 CPU reference within the rigorous FP32
  error bound γ_K·Σ|a||b| (γ_K = K·u/(1-K·u), u = 2⁻²⁴), so a wrong kernel or a broken GPU fails and
  rounding never does;
* **repeatable** (gpu-burn style): the same product is computed again and again and compared bit for bit
  with the first on the GPU (``compare_f32``); any difference or NaN is a hardware finding;
* **speed**: TFLOP/s between CUDA events. This is our portable kernel, not cuBLAS, so the number is
  reported against the FP32 peak but not judged (the cuBLAS tier is).
"""

from __future__ import annotations

import ctypes
import random
from array import array

from gpusetup import resources
from gpusetup.messages import msg
from gpusetup.model import Measurement
from gpusetup.selftest import cudadrv
from gpusetup.selftest.base import RunCtx, median_spread
from gpusetup.selftest.peaks import say

U = 2.0**-24


def load_ptx() -> str:
    return resources.read_text("kernels", "selftest.ptx")


def _matrix(rng: random.Random, count: int) -> array:
    return array("f", [rng.random() * 2.0 - 1.0 for _ in range(count)])


def choose_n(ctx: RunCtx, wanted: int) -> int | None:
    """Largest multiple of 64 ≤ wanted whose four matrices fit in half the memory budget."""
    n = wanted - wanted % 64
    while n >= 64:
        if 4 * n * n * 4 <= ctx.budget_bytes // 2:
            return n
        n = (n // 2) - (n // 2) % 64
    return None


def check_points(a: array, b: array, c: array, n: int, count: int, rng: random.Random) -> tuple[int, float]:
    """Compare ``count`` elements (always the corners) with a float64 reference.

    Returns (number outside the bound, worst error as a fraction of its bound)."""
    points = {(0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)}
    while len(points) < min(count, n * n):
        points.add((rng.randrange(n), rng.randrange(n)))
    gamma = n * U / (1 - n * U)
    bad, worst = 0, 0.0
    for i, j in points:
        row = a[i * n:(i + 1) * n]
        col = b[j::n]
        exact = sum(x * y for x, y in zip(row, col, strict=True))
        bound = gamma * sum(abs(x * y) for x, y in zip(row, col, strict=True)) + 1e-30
        err = abs(c[i * n + j] - exact)
        if not err <= bound:  # also catches NaN
            bad += 1
        worst = max(worst, err / bound if err == err else float("inf"))
    return bad, worst


def run(ctx: RunCtx) -> list[Measurement]:
    s = ctx.session
    sz = ctx.sizes
    n = choose_n(ctx, sz.gemm_n)
    if n is None:
        return [say(ctx.measurement("matmul_fp32_correct", None, "errors", "driver", verdict="skipped"),
                    msg("selftest.mm.no-memory"))]
    ctx.step(msg("selftest.progress.matrix-compiling"), 0.0)
    module = s.load_ptx(load_ptx())
    sgemm = s.function(module, "sgemm_tiled")
    compare = s.function(module, "compare_f32")

    rng = random.Random(20261122)
    a, b = _matrix(rng, n * n), _matrix(rng, n * n)
    nbytes = n * n * 4
    d_a, d_b, d_c0, d_c1 = s.alloc(nbytes), s.alloc(nbytes), s.alloc(nbytes), s.alloc(nbytes)
    d_counts = s.alloc(8)
    s.htod(d_a, a.buffer_info()[0], nbytes)
    s.htod(d_b, b.buffer_info()[0], nbytes)
    stream = s.stream()
    start, stop = s.event(), s.event()
    grid, block = (n // 64, n // 64, 1), (16, 16, 1)

    def gemm(dst: int) -> None:
        s.launch(sgemm, grid, block, [cudadrv.CUdeviceptr(d_a), cudadrv.CUdeviceptr(d_b),
                                      cudadrv.CUdeviceptr(dst), ctypes.c_int(n), ctypes.c_int(n),
                                      ctypes.c_int(n)], stream)

    # 1. The reference product, checked against the CPU.
    ctx.step(msg("selftest.progress.matrix-checking"), 0.1)
    gemm(d_c0)
    s.sync_stream(stream)
    c = array("f", bytes(nbytes))
    s.dtoh(c.buffer_info()[0], d_c0, nbytes)
    bad, worst = check_points(a, b, c, n, sz.check_points, rng)
    points = min(sz.check_points, n * n)
    out = [say(ctx.measurement(
        "matmul_fp32_correct", float(bad), "errors", "driver",
        verdict="pass" if bad == 0 else "fail",
    ), msg("selftest.mm.correct", points=points, n=n, worst=f"{worst:.2g}") if bad == 0 else
        msg("selftest.mm.wrong", bad=bad, points=points, n=n))]

    # 2. Speed, between events.
    ctx.step(msg("selftest.progress.matrix-timing"), 0.3)
    loops = sz.gemm_loops or max(1, min(100, round(2e11 / (2.0 * n**3))))  # ~20 ms a sample at 10 TFLOP/s
    samples = []
    for _ in range(sz.samples):
        ctx.cancel.raise_if_cancelled()
        s.record(start, stream)
        for _ in range(loops):
            gemm(d_c1)
        ctx.sample_clock()
        s.record(stop, stream)
        ms = s.elapsed_ms(start, stop)
        if ms > 0:
            samples.append(2.0 * n**3 * loops / (ms / 1e3) / 1e12)
    perf = say(ctx.measurement("matmul_fp32_ptx", None, "TFLOP/s", "driver", verdict="skipped"),
               msg("selftest.no-timing-sample"))
    if samples:
        med, spread = median_spread(samples)
        perf.value, perf.samples, perf.spread = med, [round(x, 4) for x in samples], spread
        say(perf, msg("selftest.mm.portable-kernel", n=n), "info")
    out.append(perf)

    # 3. Repeat and compare, bit for bit (gpu-burn).
    ctx.step(msg("selftest.progress.matrix-repeat"), 0.5)
    words = n * n
    threads = 256
    blocks = max(1, min(1024, (words + threads - 1) // threads))
    counts = (ctypes.c_uint32 * 2)()
    mismatched_runs, total_diff, total_nan = [], 0, 0
    s.memset32(d_counts, 0, 2)
    # NaNs in the reference itself count too.
    s.launch(compare, (blocks, 1, 1), (threads, 1, 1),
             [cudadrv.CUdeviceptr(d_c0), cudadrv.CUdeviceptr(d_c0), ctypes.c_uint64(words),
              cudadrv.CUdeviceptr(d_counts)], stream)
    s.sync_stream(stream)
    s.dtoh(ctypes.addressof(counts), d_counts, 8)
    total_nan += counts[1]
    for r in range(sz.gemm_repeats):
        ctx.step(msg("selftest.progress.matrix-repeat"), 0.5 + 0.5 * r / max(1, sz.gemm_repeats))
        gemm(d_c1)
        s.memset32(d_counts, 0, 2)
        s.launch(compare, (blocks, 1, 1), (threads, 1, 1),
                 [cudadrv.CUdeviceptr(d_c0), cudadrv.CUdeviceptr(d_c1), ctypes.c_uint64(words),
                  cudadrv.CUdeviceptr(d_counts)], stream)
        ctx.sample_clock()
        s.sync_stream(stream)
        s.dtoh(ctypes.addressof(counts), d_counts, 8)
        if counts[0] or counts[1]:
            mismatched_runs.append(r + 1)
            total_diff += counts[0]
            total_nan += counts[1]
    ok = not mismatched_runs and total_nan == 0
    if ok:
        reason = msg("selftest.mm.repeat-identical", repeats=sz.gemm_repeats, n=n)
    else:
        reason = msg("selftest.mm.repeat-differs", runs=", ".join(map(str, mismatched_runs)) or "-",
                     repeats=sz.gemm_repeats, changed=total_diff, nan=total_nan)
    out.append(say(ctx.measurement("matmul_repeat_bitexact", float(total_diff + total_nan), "errors", "driver",
                                   verdict="pass" if ok else "fail"), reason))
    for p in (d_a, d_b, d_c0, d_c1, d_counts):
        s.free(p)
    return out
