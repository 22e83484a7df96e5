"""Tier 2: GEMM throughput through cuBLAS, when a cuBLAS library is on this machine.

cuBLAS is what frameworks use, so its TFLOP/s is the number to hold against the rated peak (the §2.4
numbers in performance.md are cuBLAS numbers). We look for it in the system toolkit, the loader path and
the ``nvidia-cublas`` wheels, and drive it through ctypes on the driver session's primary context and
stream (cuBLAS uses the CUDA runtime, which shares the primary context). Matrices are filled on the GPU
with 1.0 (``cuMemsetD32``/``D16``), so no host data or numpy is needed and every result element must be
exactly K; one element is read back to check that.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpusetup.messages import add_note, msg, render
from gpusetup.model import Measurement
from gpusetup.probe.platform.host import python_platform
from gpusetup.selftest import cudadrv, peaks
from gpusetup.selftest.base import RunCtx, median_spread

CUBLAS_OP_N = 0
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14  # library_types.h
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 77  # cublas_api.h
CUBLAS_GEMM_DEFAULT = -1

CUBLAS_STATUS = {
    0: ("CUBLAS_STATUS_SUCCESS", ""),
    1: ("CUBLAS_STATUS_NOT_INITIALIZED", "cuBLAS could not start: the CUDA runtime failed to initialise "
        "(driver too old for this cuBLAS, or no GPU)."),
    3: ("CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS could not allocate GPU memory."),
    7: ("CUBLAS_STATUS_INVALID_VALUE", "cuBLAS rejected the parameters."),
    8: ("CUBLAS_STATUS_ARCH_MISMATCH", "this GPU lacks a feature this operation needs."),
    11: ("CUBLAS_STATUS_MAPPING_ERROR", "cuBLAS could not access GPU memory."),
    13: ("CUBLAS_STATUS_EXECUTION_FAILED", "the GPU failed to run the cuBLAS kernel."),
    14: ("CUBLAS_STATUS_INTERNAL_ERROR", "cuBLAS hit an internal error (often a driver/cuBLAS mismatch)."),
    15: ("CUBLAS_STATUS_NOT_SUPPORTED", "this cuBLAS does not support the operation."),
    16: ("CUBLAS_STATUS_LICENSE_ERROR", "cuBLAS licence error."),
}


class CublasError(Exception):
    def __init__(self, code: int, function: str) -> None:
        name, words = CUBLAS_STATUS.get(code, (f"cublasStatus {code}", "unknown cuBLAS error"))
        self.code, self.name = code, name
        # as data: the status table's English words are left out of the Chinese text
        self.words = msg("selftest.cublas.call-failed", function=function, name=name, description=words)
        super().__init__(render(self.words))


def candidates(platform: str | None = None, search_path: Sequence[str] | None = None) -> list[str]:
    """Where a cuBLAS may be: override, wheels in sys.path, the toolkit, then the loader's search."""
    platform = platform or python_platform()
    override = os.environ.get("GPUSETUP_LIBCUBLAS")
    if override:
        return [override]
    found: list[str] = []
    paths = list(search_path if search_path is not None else sys.path)
    if platform == "win32":
        patterns = ["nvidia/cublas/bin/cublas64_*.dll", "nvidia/cu*/bin/cublas64_*.dll"]
        toolkit = [os.path.join(os.environ.get("CUDA_PATH", ""), "bin", "cublas64_*.dll")]
    else:
        patterns = ["nvidia/cublas/lib/libcublas.so.*", "nvidia/cu*/lib/libcublas.so.*"]
        toolkit = ["/usr/local/cuda/lib64/libcublas.so.*", "/usr/local/cuda-*/lib64/libcublas.so.*"]
    for base in paths:
        for pat in patterns:
            found.extend(sorted(glob.glob(os.path.join(base, pat)), reverse=True))
    for pat in toolkit:
        found.extend(sorted(glob.glob(pat), reverse=True))
    if platform != "win32":
        lib = ctypes.util.find_library("cublas")
        if lib:
            found.append(lib)
    return [p for i, p in enumerate(found) if p not in found[:i] and "Lt" not in os.path.basename(p)]


@dataclass
class Cublas:
    lib: Any
    path: str

    @classmethod
    def load(cls, loader: Callable[[str], Any] | None, names: Sequence[str]) -> Cublas | None:
        loader = loader or ctypes.CDLL
        for name in names:
            try:
                return cls(loader(name), name)
            except (OSError, AttributeError):  # not loadable, or not a cuBLAS (missing entry points)
                continue
        return None

    def __post_init__(self) -> None:
        P, Int, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p  # noqa: N806
        protos: dict[str, list[Any]] = {
            "cublasCreate_v2": [ctypes.POINTER(ctypes.c_void_p)],
            "cublasDestroy_v2": [P],
            "cublasSetStream_v2": [P, P],
            "cublasGetVersion_v2": [P, ctypes.POINTER(ctypes.c_int)],
            "cublasSgemm_v2": [P, Int, Int, Int, Int, Int, P, cudadrv.CUdeviceptr, Int, cudadrv.CUdeviceptr,
                               Int, P, cudadrv.CUdeviceptr, Int],
            "cublasGemmEx": [P, Int, Int, Int, Int, Int, P, cudadrv.CUdeviceptr, Int, Int, cudadrv.CUdeviceptr,
                             Int, Int, U, cudadrv.CUdeviceptr, Int, Int, Int, Int],
        }
        for name, argtypes in protos.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int

    def call(self, name: str, *args: Any) -> None:
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise CublasError(int(rc), name)


# dtype -> (A/B/C type, compute type, element size, memset value for 1.0, peak kind, band test)
_DTYPES: dict[str, tuple[int, int, int, int, str, str]] = {
    "fp32": (CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 0x3F800000, "fp32", "gemm_fp32"),
    "tf32": (CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 0x3F800000, "", ""),
    "fp16": (CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 0x3C00, "tensor", "gemm_tensor"),
    "bf16": (CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 0x3F80, "tensor", "gemm_tensor"),
}


def _value_of(raw: int, size: int, dtype: str) -> float:
    if size == 4:
        return ctypes.c_float.from_buffer_copy(raw.to_bytes(4, "little")).value
    if dtype == "bf16":
        return ctypes.c_float.from_buffer_copy((raw << 16).to_bytes(4, "little")).value
    return struct.unpack("<e", raw.to_bytes(2, "little"))[0]


def run(ctx: RunCtx, blas: Cublas) -> list[Measurement]:
    s = ctx.session
    out: list[Measurement] = []
    handle = ctypes.c_void_p()
    blas.call("cublasCreate_v2", ctypes.byref(handle))
    try:
        stream = s.stream()
        blas.call("cublasSetStream_v2", handle, ctypes.c_void_p(stream))
        version = ctypes.c_int()
        try:
            blas.call("cublasGetVersion_v2", handle, ctypes.byref(version))
            add_note(ctx, msg("selftest.note.cublas-version", version=version.value, path=blas.path))
        except CublasError:
            pass
        start, stop = s.event(), s.event()
        n = ctx.sizes.cublas_n
        while n > 256 and 3 * n * n * 4 > ctx.budget_bytes // 2:
            n //= 2
        for i, dtype in enumerate(_DTYPES):
            ctx.step(msg("selftest.progress.cublas-dtype", dtype=dtype.upper()), i / len(_DTYPES))
            out.append(_one(ctx, blas, handle, stream, start, stop, dtype, n))
    finally:
        try:
            blas.call("cublasDestroy_v2", handle)
        except CublasError as exc:
            add_note(ctx, exc.words)
    return out


def _one(ctx: RunCtx, blas: Cublas, handle: ctypes.c_void_p, stream: int, start: int, stop: int,
         dtype: str, n: int) -> Measurement:
    s = ctx.session
    dt, compute, size, one, kind, test = _DTYPES[dtype]
    name = f"cublas_{dtype}"
    cc = ctx.info.compute_capability if ctx.info else None
    major = cc.major if cc else 0
    if dtype == "bf16" and major and major < 8:
        return peaks.say(ctx.measurement(name, None, "TFLOP/s", "cublas", verdict="skipped"),
                         msg("selftest.cublas.needs-ampere", dtype="BF16", cc=str(cc)))
    if dtype == "tf32" and major and major < 8:
        return peaks.say(ctx.measurement(name, None, "TFLOP/s", "cublas", verdict="skipped"),
                         msg("selftest.cublas.needs-ampere", dtype="TF32", cc=str(cc)))
    count = n * n
    bufs = [s.alloc(count * size) for _ in range(3)]
    try:
        for p in bufs[:2]:
            if size == 4:
                s.memset32(p, one, count)
            else:
                s.memset16(p, one, count)
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        a, b, c = (cudadrv.CUdeviceptr(p) for p in bufs)

        def gemm() -> None:
            if dtype == "fp32":
                blas.call("cublasSgemm_v2", handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, ctypes.byref(alpha),
                          a, n, b, n, ctypes.byref(beta), c, n)
            else:
                blas.call("cublasGemmEx", handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, ctypes.byref(alpha),
                          a, dt, n, b, dt, n, ctypes.byref(beta), c, dt, n, compute, CUBLAS_GEMM_DEFAULT)

        gemm()  # warm-up: picks the kernel, loads it
        s.sync_stream(stream)
        raw = ctypes.c_uint32(0)
        s.dtoh(ctypes.addressof(raw), bufs[2], size)
        got = _value_of(raw.value, size, dtype)
        samples = []
        for _ in range(ctx.sizes.samples):
            ctx.cancel.raise_if_cancelled()
            s.record(start, stream)
            for _ in range(ctx.sizes.cublas_loops):
                gemm()
            ctx.sample_clock()
            s.record(stop, stream)
            ms = s.elapsed_ms(start, stop)
            if ms > 0:
                samples.append(2.0 * n**3 * ctx.sizes.cublas_loops / (ms / 1e3) / 1e12)
    except CublasError as exc:
        return peaks.say(ctx.measurement(name, None, "TFLOP/s", "cublas"), exc.words,
                         "skipped" if exc.code == 15 else "fail")
    finally:
        for p in bufs:
            s.free(p)
    m = ctx.measurement(name, None, "TFLOP/s", "cublas")
    if got != float(n):
        return peaks.say(m, msg("selftest.cublas.wrong-result", dtype=dtype.upper(), n=n, got=f"{got:g}"), "fail")
    if not samples:
        return peaks.say(m, msg("selftest.no-timing-sample"), "skipped")
    med, spread = median_spread(samples)
    m.value, m.samples, m.spread = med, [round(x, 3) for x in samples], spread
    _rate(ctx, m, kind, test, dtype, n)
    return m


def _rate(ctx: RunCtx, m: Measurement, kind: str, test: str, dtype: str, n: int) -> None:
    what = f"cuBLAS {dtype.upper()} {n}×{n}"
    if not kind:
        peaks.say(m, msg("selftest.cublas.tf32-not-rated", what=what), "info")
        return
    specs: peaks.Specs = ctx.specs
    info = ctx.info
    live = max(ctx.clock_samples) if ctx.clock_samples else None
    max_mhz = ctx.machine_gpu.clocks.sm_max_mhz if ctx.machine_gpu is not None else None
    if max_mhz is None and ctx.telemetry is not None:
        max_mhz = ctx.telemetry.sample().sm_max_clock_mhz
    rated = peaks.compute_peak(kind, ctx.spec, specs, cc=info.compute_capability if info else None,
                               sm_count=info.sm_count if info else None, live_mhz=live, max_mhz=max_mhz)
    if rated is None:
        peaks.say(m, msg("selftest.cublas.no-peak", what=what), "info")
        return
    m.rated, m.rated_basis, m.datasheet = rated.value, rated.basis, rated.datasheet
    m.fraction = m.value / rated.value if m.value is not None else None
    segment = ctx.spec.segment if ctx.spec else None
    rate = specs.rate(info.compute_capability if info else None)
    if test == "gemm_fp32":
        basis = "dual-issue" if rate and rate["dual_issue_fp32"] else "any"
    else:
        basis = "datasheet" if rated.basis == "datasheet" else "live-clock"
    band = specs.band(test, segment, basis)
    verdict, reason = peaks.judge_message(m.fraction, band, what)
    peaks.say(m, msg("selftest.cublas.judged", what=what, judged=reason, detail=rated.detail), verdict)
