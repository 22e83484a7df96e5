"""The CUDA driver API through ctypes: just enough for the self-test, with no toolkit or framework needed.

Why ctypes on ``libcuda`` and not a binding package: this tier must run *before* anything is installed,
on any driver from R384 on. Signatures below follow ``cuda.h`` (CUDA 13.0 header, checked line by line);
the 64-bit memory entry points are the ``_v2`` symbols, because their unversioned ancestors take 32-bit
sizes and pointers (cuda.h, ``__CUDA_API_VERSION_INTERNAL`` block) and must never be called from 64-bit
code. Entry points whose ``_v2`` form has the *same* signature as the old one fall back to the old symbol
when a driver lacks the new one (``cuEventElapsedTime_v2`` exists only from CUDA 12.8 drivers on).

Everything a :class:`Session` allocates is tracked and freed by :meth:`Session.close`, so a cancelled or
failed self-test never leaves GPU memory behind. Managed memory is never used.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpusetup.cuda_results import CU_RESULTS, result_message, result_name  # noqa: F401 - re-exported
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.probe.platform.host import python_platform
from gpusetup.versions import ComputeCapability

# ------------------------------------------------------------------------------------------ CUresult

# code -> (name, first sentence of its description in cuda.h, CUDA 13.0). Generated from the header.

# Plain words for the codes a user actually meets, with the fix. Others fall back to cuda.h's sentence.

# Codes that mean the GPU itself misbehaved (a hardware finding, not a set-up problem).
HARDWARE_CODES = frozenset({214, 220, 700, 714, 715, 716, 717, 718, 719})






class CudaError(Exception):
    """A driver call failed: ``code`` (CUresult), ``name`` (CUDA_ERROR_…), ``function`` and plain words."""

    def __init__(self, code: int, function: str, detail: str = "") -> None:
        self.code = code
        self.name = result_name(code)
        self.function = function
        self.message = result_message(code)
        self.detail = detail
        self.compiler_log = ""  # what the PTX compiler said, when loading a kernel failed
        text = f"{function} failed with {self.name} ({code}): {self.message}"
        if detail:
            text += f"\n{detail}"
        super().__init__(text)

    @property
    def hardware(self) -> bool:
        return self.code in HARDWARE_CODES

    @property
    def words(self) -> Message:
        """The error as data (cuda.h's English description is left out of the Chinese words)."""
        log = msg("selftest.cuda.compiler-said", log=self.compiler_log) if self.compiler_log else ""
        return msg("selftest.cuda.call-failed", function=self.function, name=self.name, code=self.code,
                   description=self.message, log=log)


class _WordedError(Exception):
    """An error whose words are a message (``words``); ``str()`` is its English text."""

    def __init__(self, words: Message) -> None:
        self.words = words
        super().__init__(render(words))


class DriverNotFound(_WordedError):
    """No loadable libcuda: no NVIDIA driver (or not this OS); the self-test falls back to the CPU tier."""


class DriverTooOld(_WordedError):
    """libcuda lacks an entry point the self-test needs and has no safe older equivalent."""


# ------------------------------------------------------------------------------------------ bindings

CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_INTEGRATED = 18
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_MEMHOSTALLOC_PORTABLE = 0x01
CU_JIT_INFO_LOG_BUFFER = 3
CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_JIT_TARGET_FROM_CUCONTEXT = 8

_P = ctypes.c_void_p
_I = ctypes.c_int
_U = ctypes.c_uint
_SZ = ctypes.c_size_t
# cuda.h: CUdeviceptr_v2 is `unsigned long long` on 64-bit hosts, `unsigned int` otherwise.
CUdeviceptr = ctypes.c_uint64 if ctypes.sizeof(ctypes.c_void_p) == 8 else ctypes.c_uint32
_PI = ctypes.POINTER(ctypes.c_int)
_PP = ctypes.POINTER(ctypes.c_void_p)
_PSZ = ctypes.POINTER(ctypes.c_size_t)

# name -> argtypes, exactly as cuda.h declares them. Handles (CUcontext, CUstream…) are opaque pointers.
_PROTOTYPES: dict[str, list[Any]] = {
    "cuInit": [_U],
    "cuDriverGetVersion": [_PI],
    "cuDeviceGetCount": [_PI],
    "cuDeviceGet": [_PI, _I],
    "cuDeviceGetName": [ctypes.c_char_p, _I, _I],
    "cuDeviceGetAttribute": [_PI, _I, _I],
    "cuDeviceTotalMem_v2": [_PSZ, _I],
    "cuDeviceGetPCIBusId": [ctypes.c_char_p, _I, _I],
    "cuDevicePrimaryCtxRetain": [_PP, _I],
    "cuDevicePrimaryCtxRelease_v2": [_I],
    "cuCtxCreate_v2": [_PP, _U, _I],
    "cuCtxDestroy_v2": [_P],
    "cuCtxSetCurrent": [_P],
    "cuCtxSynchronize": [],
    "cuMemGetInfo_v2": [_PSZ, _PSZ],
    "cuMemAlloc_v2": [ctypes.POINTER(CUdeviceptr), _SZ],
    "cuMemFree_v2": [CUdeviceptr],
    "cuMemHostAlloc": [_PP, _SZ, _U],
    "cuMemFreeHost": [_P],
    "cuMemcpyHtoD_v2": [CUdeviceptr, _P, _SZ],
    "cuMemcpyDtoH_v2": [_P, CUdeviceptr, _SZ],
    "cuMemcpyDtoD_v2": [CUdeviceptr, CUdeviceptr, _SZ],
    "cuMemcpyHtoDAsync_v2": [CUdeviceptr, _P, _SZ, _P],
    "cuMemcpyDtoHAsync_v2": [_P, CUdeviceptr, _SZ, _P],
    "cuMemcpyDtoDAsync_v2": [CUdeviceptr, CUdeviceptr, _SZ, _P],
    "cuMemsetD32_v2": [CUdeviceptr, _U, _SZ],
    "cuMemsetD16_v2": [CUdeviceptr, ctypes.c_ushort, _SZ],
    "cuStreamCreate": [_PP, _U],
    "cuStreamDestroy_v2": [_P],
    "cuStreamSynchronize": [_P],
    "cuEventCreate": [_PP, _U],
    "cuEventRecord": [_P, _P],
    "cuEventSynchronize": [_P],
    "cuEventElapsedTime_v2": [ctypes.POINTER(ctypes.c_float), _P, _P],
    "cuEventDestroy_v2": [_P],
    "cuModuleLoadDataEx": [_PP, _P, _U, ctypes.POINTER(_I), _PP],
    "cuModuleUnload": [_P],
    "cuModuleGetFunction": [_PP, _P, ctypes.c_char_p],
    "cuLaunchKernel": [_P, _U, _U, _U, _U, _U, _U, _U, _P, _PP, _PP],
    "cuGetErrorName": [_I, ctypes.POINTER(ctypes.c_char_p)],
}

# _v2 symbol -> older symbol with the identical C signature (cuda.h declares both the same way).
FALLBACKS: dict[str, str] = {
    "cuEventElapsedTime_v2": "cuEventElapsedTime",  # _v2 only in CUDA >= 12.8 drivers
    "cuDevicePrimaryCtxRelease_v2": "cuDevicePrimaryCtxRelease",  # _v2 from CUDA 11.0
    "cuCtxCreate_v2": "cuCtxCreate",
    "cuCtxDestroy_v2": "cuCtxDestroy",
    "cuStreamDestroy_v2": "cuStreamDestroy",
    "cuEventDestroy_v2": "cuEventDestroy",
}
# Entry points we can live without (used only when present).
OPTIONAL = frozenset({"cuGetErrorName", "cuCtxCreate_v2", "cuDevicePrimaryCtxRetain",
                      "cuDevicePrimaryCtxRelease_v2", "cuDeviceGetPCIBusId", "cuMemsetD16_v2"})


def default_candidates(platform: str | None = None) -> list[str]:
    """Where the driver library lives: loader cache, WSL's driver folder, Windows' system32."""
    platform = platform or python_platform()
    override = os.environ.get("GPUSETUP_LIBCUDA")
    if override:
        return [override]
    if platform == "win32":
        return ["nvcuda.dll"]
    if platform == "darwin":
        return []
    # Never the unversioned libcuda.so: that name is usually the toolkit's stub.
    return ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"]


Loader = Callable[[str], Any]


class CudaDriver:
    """Bound entry points of one libcuda, plus which ones came from a fallback."""

    def __init__(self, lib: Any, path: str) -> None:
        self.lib = lib
        self.path = path
        self.fallbacks_used: dict[str, str] = {}
        self.missing: list[str] = []
        self._fn: dict[str, Any] = {}
        for name, argtypes in _PROTOTYPES.items():
            fn, used = self._resolve(name)
            if fn is None:
                if name not in OPTIONAL:
                    raise DriverTooOld(msg("selftest.driver.missing-function", path=path, function=name))
                self.missing.append(name)
                continue
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
            self._fn[name] = fn
            if used != name:
                self.fallbacks_used[name] = used
        self._initialised = False

    def _resolve(self, name: str) -> tuple[Any, str]:
        for candidate in (name, FALLBACKS.get(name)):
            if candidate is None:
                continue
            try:
                return getattr(self.lib, candidate), candidate
            except AttributeError:
                continue
        return None, name

    @classmethod
    def load(cls, loader: Loader | None = None, candidates: Sequence[str] | None = None) -> CudaDriver:
        """Open the first libcuda that loads. Raises :class:`DriverNotFound` with every reason tried."""
        loader = loader or ctypes.CDLL
        names = list(candidates) if candidates is not None else default_candidates()
        if not names:
            raise DriverNotFound(msg("selftest.driver.no-cuda-on-os"))
        reasons = []
        for name in names:
            try:
                lib = loader(name)
            except OSError as exc:
                reasons.append(str(exc))
                continue
            return cls(lib, name)
        if all("No such file" in r or "cannot open" in r or "not found" in r for r in reasons):
            raise DriverNotFound(msg("selftest.driver.not-installed", names=" or ".join(names)))
        raise DriverNotFound(msg("selftest.driver.not-loadable", reasons="; ".join(reasons)))

    def has(self, name: str) -> bool:
        return name in self._fn

    def call(self, name: str, *args: Any) -> None:
        """Call an entry point; a non-zero CUresult raises :class:`CudaError`."""
        rc = self._fn[name](*args)
        if rc != 0:
            raise CudaError(int(rc), name)

    # ------------------------------------------------------------------------------ device queries

    def init(self) -> None:
        if not self._initialised:
            self.call("cuInit", 0)
            self._initialised = True

    def version(self) -> int:
        """cuDriverGetVersion: 12080 means the driver supports CUDA 12.8. Works before cuInit."""
        v = ctypes.c_int()
        self.call("cuDriverGetVersion", ctypes.byref(v))
        return v.value

    def device_count(self) -> int:
        n = ctypes.c_int()
        self.call("cuDeviceGetCount", ctypes.byref(n))
        return n.value

    def device(self, ordinal: int) -> int:
        d = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(d), ordinal)
        return d.value

    def attribute(self, dev: int, attr: int) -> int | None:
        """One device attribute; None when this driver does not know it (attributes come and go)."""
        v = ctypes.c_int()
        try:
            self.call("cuDeviceGetAttribute", ctypes.byref(v), attr, dev)
        except CudaError as exc:
            if exc.code == 1:  # CUDA_ERROR_INVALID_VALUE: attribute unknown to this driver
                return None
            raise
        return v.value

    def device_info(self, ordinal: int) -> DeviceInfo:
        dev = self.device(ordinal)
        name = ctypes.create_string_buffer(256)
        self.call("cuDeviceGetName", name, 256, dev)
        total = ctypes.c_size_t()
        self.call("cuDeviceTotalMem_v2", ctypes.byref(total), dev)
        bus_id = None
        if self.has("cuDeviceGetPCIBusId"):
            buf = ctypes.create_string_buffer(64)
            try:
                self.call("cuDeviceGetPCIBusId", buf, 64, dev)
                bus_id = buf.value.decode("ascii", "replace") or None
            except CudaError:
                bus_id = None
        major = self.attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = self.attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        return DeviceInfo(
            ordinal=ordinal,
            handle=dev,
            name=name.value.decode("utf-8", "replace"),
            compute_capability=ComputeCapability(major, minor) if major is not None and minor is not None else None,
            sm_count=self.attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            clock_khz=self.attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            memory_clock_khz=self.attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
            bus_width_bits=self.attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
            l2_bytes=self.attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
            async_engines=self.attribute(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT),
            integrated=bool(self.attribute(dev, CU_DEVICE_ATTRIBUTE_INTEGRATED)),
            total_bytes=total.value,
            pci_bus_id=bus_id,
        )

    def open(self, ordinal: int) -> Session:
        return Session(self, ordinal)


@dataclass
class DeviceInfo:
    ordinal: int
    handle: int
    name: str
    compute_capability: ComputeCapability | None
    sm_count: int | None
    clock_khz: int | None  # CU_DEVICE_ATTRIBUTE_CLOCK_RATE: the maximum SM clock the driver reports
    memory_clock_khz: int | None
    bus_width_bits: int | None
    l2_bytes: int | None
    async_engines: int | None
    integrated: bool
    total_bytes: int
    pci_bus_id: str | None = None


@dataclass
class Kernel:
    name: str
    handle: int


@dataclass
class _Tracked:
    device: list[int] = field(default_factory=list)
    host: list[int] = field(default_factory=list)
    streams: list[int] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    modules: list[int] = field(default_factory=list)


class Session:
    """A current context on one device; tracks every allocation and frees all of it on :meth:`close`."""

    def __init__(self, drv: CudaDriver, ordinal: int) -> None:
        self.drv = drv
        drv.init()
        self.dev = drv.device(ordinal)
        self.ordinal = ordinal
        self._owned = _Tracked()
        self._primary = False
        ctx = ctypes.c_void_p()
        if drv.has("cuDevicePrimaryCtxRetain"):
            # The primary context is shared with the runtime (cuBLAS), so both tiers see the same memory.
            drv.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), self.dev)
            self._primary = True
        elif drv.has("cuCtxCreate_v2"):
            drv.call("cuCtxCreate_v2", ctypes.byref(ctx), 0, self.dev)
        else:
            raise DriverTooOld(msg("selftest.driver.no-context"))
        self.ctx = ctx.value
        try:
            drv.call("cuCtxSetCurrent", ctypes.c_void_p(self.ctx))
        except CudaError:
            self._release_context()
            raise
        self.closed = False

    # --------------------------------------------------------------------------------- memory

    def mem_info(self) -> tuple[int, int]:
        """(free, total) bytes as the driver sees them now."""
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self.drv.call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def alloc(self, nbytes: int) -> int:
        ptr = CUdeviceptr()
        self.drv.call("cuMemAlloc_v2", ctypes.byref(ptr), nbytes)
        self._owned.device.append(ptr.value)
        return ptr.value

    def free(self, ptr: int) -> None:
        if ptr in self._owned.device:
            self._owned.device.remove(ptr)
            self.drv.call("cuMemFree_v2", CUdeviceptr(ptr))

    def host_alloc(self, nbytes: int) -> int:
        """Pinned (page-locked) host memory, portable across contexts, as nvbandwidth allocates it."""
        p = ctypes.c_void_p()
        self.drv.call("cuMemHostAlloc", ctypes.byref(p), nbytes, CU_MEMHOSTALLOC_PORTABLE)
        assert p.value is not None
        self._owned.host.append(p.value)
        return p.value

    def host_free(self, ptr: int) -> None:
        if ptr in self._owned.host:
            self._owned.host.remove(ptr)
            self.drv.call("cuMemFreeHost", ctypes.c_void_p(ptr))

    def htod(self, dst: int, src: int, nbytes: int, stream: int | None = None) -> None:
        if stream is None:
            self.drv.call("cuMemcpyHtoD_v2", CUdeviceptr(dst), ctypes.c_void_p(src), nbytes)
        else:
            self.drv.call("cuMemcpyHtoDAsync_v2", CUdeviceptr(dst), ctypes.c_void_p(src), nbytes,
                          ctypes.c_void_p(stream))

    def dtoh(self, dst: int, src: int, nbytes: int, stream: int | None = None) -> None:
        if stream is None:
            self.drv.call("cuMemcpyDtoH_v2", ctypes.c_void_p(dst), CUdeviceptr(src), nbytes)
        else:
            self.drv.call("cuMemcpyDtoHAsync_v2", ctypes.c_void_p(dst), CUdeviceptr(src), nbytes,
                          ctypes.c_void_p(stream))

    def dtod(self, dst: int, src: int, nbytes: int, stream: int | None = None) -> None:
        if stream is None:
            self.drv.call("cuMemcpyDtoD_v2", CUdeviceptr(dst), CUdeviceptr(src), nbytes)
        else:
            self.drv.call("cuMemcpyDtoDAsync_v2", CUdeviceptr(dst), CUdeviceptr(src), nbytes,
                          ctypes.c_void_p(stream))

    def memset32(self, dst: int, value: int, count: int) -> None:
        self.drv.call("cuMemsetD32_v2", CUdeviceptr(dst), value & 0xFFFFFFFF, count)

    def memset16(self, dst: int, value: int, count: int) -> None:
        self.drv.call("cuMemsetD16_v2", CUdeviceptr(dst), value & 0xFFFF, count)

    # ------------------------------------------------------------------------- streams and events

    def stream(self) -> int:
        s = ctypes.c_void_p()
        self.drv.call("cuStreamCreate", ctypes.byref(s), 0)
        self._owned.streams.append(s.value or 0)
        return s.value or 0

    def sync_stream(self, stream: int) -> None:
        self.drv.call("cuStreamSynchronize", ctypes.c_void_p(stream))

    def synchronize(self) -> None:
        self.drv.call("cuCtxSynchronize")

    def event(self) -> int:
        e = ctypes.c_void_p()
        self.drv.call("cuEventCreate", ctypes.byref(e), 0)
        self._owned.events.append(e.value or 0)
        return e.value or 0

    def record(self, event: int, stream: int = 0) -> None:
        self.drv.call("cuEventRecord", ctypes.c_void_p(event), ctypes.c_void_p(stream))

    def elapsed_ms(self, start: int, stop: int) -> float:
        """Milliseconds between two recorded events (waits for ``stop``)."""
        self.drv.call("cuEventSynchronize", ctypes.c_void_p(stop))
        ms = ctypes.c_float()
        self.drv.call("cuEventElapsedTime_v2", ctypes.byref(ms), ctypes.c_void_p(start), ctypes.c_void_p(stop))
        return float(ms.value)

    # -------------------------------------------------------------------------------- kernels

    def load_ptx(self, ptx: str) -> int:
        """JIT the PTX for this GPU; a JIT failure raises CudaError with the compiler's log as detail."""
        image = ctypes.create_string_buffer(ptx.encode("ascii"))
        log = ctypes.create_string_buffer(8192)
        opts = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        mod = ctypes.c_void_p()
        try:
            self.drv.call("cuModuleLoadDataEx", ctypes.byref(mod), image, 2, opts, vals)
        except CudaError as exc:
            exc.detail = exc.compiler_log = log.value.decode("utf-8", "replace").strip()
            if exc.detail:
                exc.args = (f"{exc.args[0]}\nPTX compiler said: {exc.detail}",)
            raise
        self._owned.modules.append(mod.value or 0)
        return mod.value or 0

    def function(self, module: int, name: str) -> Kernel:
        f = ctypes.c_void_p()
        self.drv.call("cuModuleGetFunction", ctypes.byref(f), ctypes.c_void_p(module), name.encode("ascii"))
        return Kernel(name, f.value or 0)

    def launch(self, kernel: Kernel, grid: tuple[int, int, int], block: tuple[int, int, int],
               args: Iterable[Any], stream: int = 0, shared_bytes: int = 0) -> None:
        """cuLaunchKernel with ``args`` as ctypes scalars (CUdeviceptr, c_int…) in the kernel's order."""
        keep = list(args)
        params = (ctypes.c_void_p * max(1, len(keep)))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in keep]
        )
        self.drv.call("cuLaunchKernel", ctypes.c_void_p(kernel.handle), *grid, *block, shared_bytes,
                      ctypes.c_void_p(stream), params, None)

    # -------------------------------------------------------------------------------- cleanup

    def close(self) -> list[Message]:
        """Free everything this session made, newest first. Returns the errors met, as data (never raises)."""
        if self.closed:
            return []
        errors: list[Message] = []

        def attempt(name: str, *args: Any) -> None:
            try:
                self.drv.call(name, *args)
            except CudaError as exc:
                errors.append(exc.words)

        try:
            self.drv.call("cuCtxSynchronize")
        except CudaError as exc:
            errors.append(exc.words)
        for e in reversed(self._owned.events):
            attempt("cuEventDestroy_v2", ctypes.c_void_p(e))
        for s in reversed(self._owned.streams):
            attempt("cuStreamDestroy_v2", ctypes.c_void_p(s))
        for p in reversed(self._owned.device):
            attempt("cuMemFree_v2", CUdeviceptr(p))
        for h in reversed(self._owned.host):
            attempt("cuMemFreeHost", ctypes.c_void_p(h))
        for m in reversed(self._owned.modules):
            attempt("cuModuleUnload", ctypes.c_void_p(m))
        self._owned = _Tracked()
        errors.extend(self._release_context())
        self.closed = True
        return errors

    def _release_context(self) -> list[Message]:
        try:
            if self._primary and self.drv.has("cuDevicePrimaryCtxRelease_v2"):
                self.drv.call("cuDevicePrimaryCtxRelease_v2", self.dev)
            elif not self._primary:
                self.drv.call("cuCtxDestroy_v2", ctypes.c_void_p(self.ctx))
        except CudaError as exc:
            return [exc.words]
        return []

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
