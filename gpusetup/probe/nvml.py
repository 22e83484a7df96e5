"""NVML (the NVIDIA management library, through ``pynvml`` from ``nvidia-ml-py``): the first NVIDIA source.

:class:`Nvml` is a small facade so that the probe never touches pynvml directly: it starts NVML lazily,
turns bytes into str, falls back across versioned entry points (``_v3`` → ``_v2`` → plain), turns
"not supported" into ``None``, logs a missing function once, and maps every NVML error to an
:class:`NvmlError` with a plain-words message. Device getters return ``None`` when the GPU cannot
answer that question and raise :class:`NvmlError` only when the GPU itself is gone or unusable (lost,
needs reset, driver unloaded…), so the probe can mark that one GPU and carry on with the others.

``tests/fakes/nvml.py`` implements exactly the public methods of :class:`Nvml`.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from gpusetup.model import Clocks, Ecc, Evidence, Gpu, GpuProcess, Machine, PcieLink, Reading
from gpusetup.probe import find_or_add_gpu
from gpusetup.probe.nvtypes import (
    ARCHITECTURES,
    DRIVER_MODELS,
    MigInfo,
    cuda_version_from_int,
    decode_throttle_reasons,
    describe_mig,
)
from gpusetup.probe.smi import split_pci_device_id
from gpusetup.versions import ComputeCapability, as_version

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

log = logging.getLogger("gpusetup.probe.nvml")

SOURCE = "nvml"
MAX_PROCESSES = 32  # processes kept per GPU (a busy shared server can list hundreds)
_NOT_AVAILABLE = 2**64 - 1  # NVML_VALUE_NOT_AVAILABLE for unsigned long long

# NVML return codes (nvml.h, mirrored by nvidia-ml-py) → (name, what it means for the user).
NVML_ERRORS: dict[int, tuple[str, str]] = {
    1: ("UNINITIALIZED", "NVML was used before it was started (an internal gpusetup problem)."),
    2: ("INVALID_ARGUMENT", "NVML rejected a query as invalid for this GPU."),
    3: ("NOT_SUPPORTED", "This GPU or driver does not support this query."),
    4: (
        "NO_PERMISSION",
        "No permission to talk to the GPU: this user cannot open the NVIDIA device files (/dev/nvidia*). "
        "Check the device permissions or group membership; inside a container, start it with GPU access "
        "(--gpus all or the NVIDIA runtime).",
    ),
    5: ("ALREADY_INITIALIZED", "NVML was already started (harmless)."),
    6: ("NOT_FOUND", "NVML could not find the requested GPU or object."),
    7: ("INSUFFICIENT_SIZE", "NVML needed a bigger buffer for this answer (an internal problem)."),
    8: (
        "INSUFFICIENT_POWER",
        "A GPU is not getting enough power: check that its PCIe power cables are plugged in firmly and that "
        "the power supply can feed it.",
    ),
    9: (
        "DRIVER_NOT_LOADED",
        "The NVIDIA driver is not running: its kernel module is not loaded (not installed for this kernel, "
        "blocked by Secure Boot, or the open-source nouveau driver has the GPU).",
    ),
    10: ("TIMEOUT", "The GPU did not answer in time; it may be hung or busy resetting."),
    11: (
        "IRQ_ISSUE",
        "The NVIDIA kernel driver has an interrupt problem with the GPU (often firmware/BIOS settings or a "
        "virtual-machine passthrough issue).",
    ),
    12: (
        "LIBRARY_NOT_FOUND",
        "The NVIDIA management library (libnvidia-ml / nvml.dll) was not found: the NVIDIA driver is not "
        "installed, or not visible here (inside a container, start it with the NVIDIA runtime / --gpus all).",
    ),
    13: (
        "FUNCTION_NOT_FOUND",
        "The installed NVIDIA driver is older than this query needs (a newer driver would answer it).",
    ),
    14: (
        "CORRUPTED_INFOROM",
        "The GPU's infoROM (its small on-board configuration memory) is corrupted. The GPU may still work, "
        "but ECC and error counters cannot be trusted; contact the GPU vendor.",
    ),
    15: (
        "GPU_IS_LOST",
        'The GPU stopped responding ("GPU is lost"): it has fallen off the PCIe bus. Reboot; if it happens '
        "again, check power cables, cooling and that the card is seated properly.",
    ),
    16: ("RESET_REQUIRED", "The GPU needs a reset (nvidia-smi -r, or a reboot) before it can be used again."),
    17: ("OPERATING_SYSTEM", "The operating system blocked the request to the GPU."),
    18: (
        "LIB_RM_VERSION_MISMATCH",
        "Driver/library version mismatch: the NVIDIA kernel module that is running and the NVIDIA "
        "libraries on disk are different versions, usually after a driver update without a reboot. "
        "Reboot (or unload and reload the nvidia kernel modules).",
    ),
    19: ("IN_USE", "The GPU is busy with another operation; try again later."),
    20: ("MEMORY", "NVML ran out of memory."),
    21: ("NO_DATA", "NVML has no data for this query yet."),
    22: ("VGPU_ECC_NOT_SUPPORTED", "ECC is not supported on this virtual GPU."),
    23: ("INSUFFICIENT_RESOURCES", "Not enough GPU resources for this request."),
    24: ("FREQ_NOT_SUPPORTED", "This clock frequency is not supported."),
    25: (
        "ARGUMENT_VERSION_MISMATCH",
        "The Python NVML bindings (nvidia-ml-py) are newer than the installed driver understands.",
    ),
    26: ("DEPRECATED", "This NVML query is deprecated by the installed driver."),
    27: ("NOT_READY", "The GPU is not ready yet (still starting up or resetting)."),
    28: ("GPU_NOT_FOUND", "NVML could not find the GPU (it may have been removed or hidden)."),
    29: ("INVALID_STATE", "The GPU is in a state that does not allow this query."),
    30: ("RESET_TYPE_NOT_SUPPORTED", "This kind of GPU reset is not supported."),
    999: (
        "UNKNOWN",
        "NVML reported an unknown error; the driver is likely in a bad state. A reboot usually clears it; "
        "check the kernel log (dmesg) for NVRM/Xid messages.",
    ),
}
NVML_CODES: dict[str, int] = {name: code for code, (name, _) in NVML_ERRORS.items()}

# Per-field errors that mean "no answer to this question" rather than "this GPU is unusable".
_SOFT = {
    "NOT_SUPPORTED",
    "NOT_FOUND",
    "NO_DATA",
    "INVALID_ARGUMENT",
    "INSUFFICIENT_SIZE",
    "NO_PERMISSION",
    "FUNCTION_NOT_FOUND",
    "ARGUMENT_VERSION_MISMATCH",
    "DEPRECATED",
    "VGPU_ECC_NOT_SUPPORTED",
    "INVALID_STATE",
    "CORRUPTED_INFOROM",
    "OPERATING_SYSTEM",
    "MEMORY",
    "UNKNOWN",
    "IN_USE",
    "NOT_READY",
}


class NvmlError(Exception):
    """An NVML failure in plain words. ``name`` is the NVML error name (``GPU_IS_LOST``)."""

    def __init__(self, code: int | None, name: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.name = name
        self.message = message

    @classmethod
    def from_code(cls, code: int | None) -> NvmlError:
        if code is None:
            return cls(None, "UNKNOWN", NVML_ERRORS[999][1])
        name, msg = NVML_ERRORS.get(code, (f"ERROR_{code}", f"NVML failed with error code {code}."))
        return cls(code, name, msg)

    @classmethod
    def named(cls, name: str) -> NvmlError:
        return cls.from_code(NVML_CODES.get(name, 999))


PYNVML_MISSING = NvmlError(
    None,
    "PYNVML_MISSING",
    "The Python NVML bindings (the nvidia-ml-py package) are not installed, so the driver could not be "
    "asked directly; nvidia-smi is used instead.",
)


_CLOCK_TYPES = {"graphics": 0, "sm": 1, "memory": 2}


def _s(v: Any) -> Any:
    """bytes → str (older bindings return bytes for names, UUIDs, versions)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace").strip("\x00").strip()
    if isinstance(v, str):
        return v.strip()
    return v


class Nvml:
    """Facade over pynvml. ``lib`` is the pynvml module (injected in tests; imported lazily otherwise)."""

    def __init__(self, lib: Any = None) -> None:
        self._lib = lib
        self._started = False
        self._warned: set[str] = set()
        self.notes: list[str] = []  # soft failures worth showing (no permission for a field…)

    # ------------------------------------------------------------------------------ lifecycle

    @property
    def lib(self) -> Any:
        if self._lib is None:
            try:
                import pynvml  # noqa: PLC0415 - lazy: diagnose must stay fast when NVML is absent
            except ImportError as exc:
                raise PYNVML_MISSING from exc
            self._lib = pynvml
        return self._lib

    def _error(self, exc: BaseException) -> NvmlError:
        if isinstance(exc, NvmlError):
            return exc
        code = getattr(exc, "value", None)
        if isinstance(code, int):
            return NvmlError.from_code(code)
        return NvmlError(None, "UNKNOWN", f"NVML failed: {exc}")

    def init(self) -> None:
        """Start NVML; raises :class:`NvmlError` (library missing, driver not loaded, mismatch…)."""
        if self._started:
            return
        lib = self.lib
        try:
            if hasattr(lib, "nvmlInitWithFlags"):
                lib.nvmlInitWithFlags(0)
            else:
                lib.nvmlInit()
        except Exception as exc:  # noqa: BLE001 - every NVML error class becomes plain words
            raise self._error(exc) from exc
        self._started = True

    def shutdown(self) -> None:
        if not self._started:
            return
        self._started = False
        try:
            self.lib.nvmlShutdown()
        except Exception as exc:  # noqa: BLE001 - shutting down must never fail the report
            log.debug("nvmlShutdown failed: %s", exc)

    def __enter__(self) -> Nvml:
        self.init()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ------------------------------------------------------------------------------ calling

    def _call(self, names: tuple[str, ...], *args: Any, fatal: bool = True) -> Any:
        """Try each versioned entry point in turn. Soft errors → None; fatal ones raise NvmlError."""
        last: NvmlError | None = None
        for fname in names:
            fn = getattr(self.lib, fname, None)
            if fn is None:
                self._warn_once(fname, "not in this version of nvidia-ml-py")
                continue
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001
                err = self._error(exc)
                if err.name == "FUNCTION_NOT_FOUND":
                    self._warn_once(fname, "not in the installed driver")
                    last = err
                    continue
                if err.name in _SOFT or not fatal:
                    if err.name == "NO_PERMISSION":
                        note = f"{fname}: {err.message}"
                        if note not in self.notes:
                            self.notes.append(note)
                    elif err.name not in ("NOT_SUPPORTED", "NOT_FOUND", "NO_DATA"):
                        log.debug("%s: %s", fname, err.name)
                    return None
                raise err from exc
        if last is not None:
            log.debug("%s: no entry point worked (%s)", names[0], last.name)
        return None

    def _warn_once(self, fname: str, why: str) -> None:
        if fname not in self._warned:
            self._warned.add(fname)
            log.info("NVML function %s is %s; check that nvidia-ml-py suits your driver version", fname, why)

    # ------------------------------------------------------------------------------ system

    def driver_version(self) -> str | None:
        return _s(self._call(("nvmlSystemGetDriverVersion",), fatal=False))

    def cuda_driver_version(self) -> int | None:
        """Highest CUDA the driver supports, encoded like 12080 (→ "12.8")."""
        v = self._call(("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"), fatal=False)
        return int(v) if isinstance(v, int) else None

    def nvml_version(self) -> str | None:
        return _s(self._call(("nvmlSystemGetNVMLVersion",), fatal=False))

    def device_count(self) -> int:
        try:
            return int(self.lib.nvmlDeviceGetCount())
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc

    def handle(self, index: int) -> Any:
        """The device handle; raises :class:`NvmlError` (GPU lost, no permission…) for that one GPU."""
        try:
            return self.lib.nvmlDeviceGetHandleByIndex(index)
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc

    # ------------------------------------------------------------------------------ per device

    def name(self, h: Any) -> str | None:
        return _s(self._call(("nvmlDeviceGetName",), h))

    def uuid(self, h: Any) -> str | None:
        return _s(self._call(("nvmlDeviceGetUUID",), h))

    def serial(self, h: Any) -> str | None:
        return _s(self._call(("nvmlDeviceGetSerial",), h))

    def vbios(self, h: Any) -> str | None:
        return _s(self._call(("nvmlDeviceGetVbiosVersion",), h))

    def pci_info(self, h: Any) -> tuple[str | None, int | None, int | None]:
        """(bus id "00000000:01:00.0", pciDeviceId 0x220410DE, pciSubSystemId)."""
        info = self._call(("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo"), h)
        if info is None:
            return None, None, None
        bus = _s(getattr(info, "busId", None)) or _s(getattr(info, "busIdLegacy", None))
        return bus, getattr(info, "pciDeviceId", None), getattr(info, "pciSubSystemId", None)

    def memory_info(self, h: Any) -> tuple[int, int, int] | None:
        """(total, used, free) in bytes."""
        m = self._call(("nvmlDeviceGetMemoryInfo",), h)
        if m is None:
            return None
        return int(m.total), int(m.used), int(m.free)

    def compute_capability(self, h: Any) -> tuple[int, int] | None:
        cc = self._call(("nvmlDeviceGetCudaComputeCapability",), h)
        if not cc:
            return None
        return int(cc[0]), int(cc[1])

    def architecture(self, h: Any) -> str | None:
        """ "Ampere", "Ada Lovelace"… (None for codes this version does not know)."""
        code = self._call(("nvmlDeviceGetArchitecture",), h)
        return None if code is None else ARCHITECTURES.get(int(code))

    def sm_count(self, h: Any) -> int | None:
        """Multiprocessor count when NVML tells it (device attributes; mostly MIG devices)."""
        attrs = self._call(("nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"), h)
        n = getattr(attrs, "multiprocessorCount", None) if attrs is not None else None
        return int(n) if n else None

    def clock(self, h: Any, kind: str) -> int | None:
        return self._call(("nvmlDeviceGetClockInfo",), h, _CLOCK_TYPES[kind])

    def max_clock(self, h: Any, kind: str) -> int | None:
        return self._call(("nvmlDeviceGetMaxClockInfo",), h, _CLOCK_TYPES[kind])

    def pcie_link(self, h: Any) -> PcieLink:
        return PcieLink(
            gen_current=self._call(("nvmlDeviceGetCurrPcieLinkGeneration",), h),
            gen_max=self._call(("nvmlDeviceGetMaxPcieLinkGeneration",), h),
            gen_device_max=self._call(("nvmlDeviceGetGpuMaxPcieLinkGeneration",), h),
            width_current=self._call(("nvmlDeviceGetCurrPcieLinkWidth",), h),
            width_max=self._call(("nvmlDeviceGetMaxPcieLinkWidth",), h),
            replay_counter=self._call(("nvmlDeviceGetPcieReplayCounter",), h),
        )

    def ecc_mode(self, h: Any) -> tuple[bool, bool] | None:
        m = self._call(("nvmlDeviceGetEccMode",), h)
        if not m:
            return None
        return bool(m[0]), bool(m[1])

    def ecc_errors(self, h: Any, *, uncorrected: bool, aggregate: bool) -> int | None:
        return self._call(("nvmlDeviceGetTotalEccErrors",), h, 1 if uncorrected else 0, 1 if aggregate else 0)

    def retired_pages(self, h: Any, *, double_bit: bool) -> int | None:
        pages = self._call(
            ("nvmlDeviceGetRetiredPages_v2", "nvmlDeviceGetRetiredPages"), h, 1 if double_bit else 0
        )
        if pages is None:
            return None
        if isinstance(pages, tuple):  # _v2 returns (addresses, timestamps)
            pages = pages[0]
        return len(pages)

    def retired_pages_pending(self, h: Any) -> bool | None:
        v = self._call(("nvmlDeviceGetRetiredPagesPendingStatus",), h)
        return None if v is None else bool(v)

    def remapped_rows(self, h: Any) -> tuple[int, int, bool, bool] | None:
        """(correctable, uncorrectable, pending, failure) — Ampere and newer data-centre GPUs."""
        r = self._call(("nvmlDeviceGetRemappedRows",), h)
        if r is None:
            return None
        return int(r[0]), int(r[1]), bool(r[2]), bool(r[3])

    def clock_event_reasons(self, h: Any) -> int | None:
        return self._call(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"), h
        )

    def temperature(self, h: Any) -> int | None:
        return self._call(("nvmlDeviceGetTemperature",), h, 0)

    def power_draw_w(self, h: Any) -> float | None:
        mw = self._call(("nvmlDeviceGetPowerUsage",), h)
        return None if mw is None else round(mw / 1000.0, 2)

    def power_limit_w(self, h: Any) -> float | None:
        mw = self._call(("nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"), h)
        return None if mw is None else round(mw / 1000.0, 2)

    def utilization_gpu(self, h: Any) -> int | None:
        u = self._call(("nvmlDeviceGetUtilizationRates",), h)
        return None if u is None else int(u.gpu)

    def persistence_mode(self, h: Any) -> bool | None:
        v = self._call(("nvmlDeviceGetPersistenceMode",), h)
        return None if v is None else bool(v)

    def compute_mode(self, h: Any) -> str | None:
        """NVML_COMPUTEMODE_*: 0 Default, 1 Exclusive_Thread, 2 Prohibited, 3 Exclusive_Process."""
        v = self._call(("nvmlDeviceGetComputeMode",), h)
        if v is None:
            return None
        return {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}.get(int(v))

    def display_active(self, h: Any) -> bool | None:
        v = self._call(("nvmlDeviceGetDisplayActive",), h)
        return None if v is None else bool(v)

    def driver_model(self, h: Any) -> str | None:
        """WDDM / TCC / MCDM on Windows; None elsewhere."""
        m = self._call(("nvmlDeviceGetDriverModel_v2", "nvmlDeviceGetDriverModel"), h)
        if m is None:
            return None
        cur = m[0] if isinstance(m, (list, tuple)) else m
        return DRIVER_MODELS.get(int(cur), str(cur))

    def mig_mode(self, h: Any) -> bool | None:
        m = self._call(("nvmlDeviceGetMigMode",), h)
        if not m:
            return None
        return bool(m[0])

    def mig_mode_pending(self, h: Any) -> bool | None:
        """The MIG mode the GPU takes after its next reset (nvmlDeviceGetMigMode's second value)."""
        m = self._call(("nvmlDeviceGetMigMode",), h)
        if not m or len(m) < 2:
            return None
        return bool(m[1])

    def mig_devices(self, h: Any) -> list[MigInfo]:
        count = self._call(("nvmlDeviceGetMaxMigDeviceCount",), h) or 0
        out = []
        for j in range(int(count)):
            mh = self._call(("nvmlDeviceGetMigDeviceHandleByIndex",), h, j, fatal=False)
            if mh is None:
                continue
            mem = self.memory_info(mh)
            out.append(
                MigInfo(
                    index=j,
                    name=self.name(mh),
                    uuid=self.uuid(mh),
                    gpu_instance_id=self._call(("nvmlDeviceGetGpuInstanceId",), mh, fatal=False),
                    compute_instance_id=self._call(("nvmlDeviceGetComputeInstanceId",), mh, fatal=False),
                    sm_count=self.sm_count(mh),
                    memory_total_mib=mem[0] // (1024 * 1024) if mem else None,
                )
            )
        return out

    def running_processes(self, h: Any) -> list[GpuProcess] | None:
        """Compute and graphics processes on the GPU with the memory each holds, biggest first (None: unknown).

        NVML reports ``usedGpuMemory`` in bytes, or NVML_VALUE_NOT_AVAILABLE (2**64-1) where the driver cannot
        tell (Windows WDDM); the name comes from nvmlSystemGetProcessName (None when the process is not ours
        to see). At most :data:`MAX_PROCESSES` are kept.
        """
        found: dict[int, GpuProcess] = {}
        known = False
        for kind, names in (
            ("C", ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses")),
            ("G", ("nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses")),
        ):
            procs = self._call(names, h)
            if procs is None:
                continue
            known = True
            for p in list(procs)[: MAX_PROCESSES * 2]:
                pid = int(getattr(p, "pid", 0) or 0)
                used = getattr(p, "usedGpuMemory", None)
                mib = int(used) // (1024 * 1024) if isinstance(used, int) and 0 <= used < _NOT_AVAILABLE else None
                if pid in found:
                    prev = found[pid]
                    prev.kind = "C+G" if prev.kind != kind else kind
                    sizes = [v for v in (prev.used_mib, mib) if v is not None]
                    prev.used_mib = max(sizes) if sizes else None
                    continue
                found[pid] = GpuProcess(pid=pid, used_mib=mib, kind=kind)
        if not known:
            return None
        for proc in found.values():
            proc.name = _s(self._call(("nvmlSystemGetProcessName",), proc.pid, fatal=False))
        return sorted(found.values(), key=lambda p: -(p.used_mib or 0))[:MAX_PROCESSES]

    def process_count(self, h: Any) -> int | None:
        seen: set[int] = set()
        known = False
        for names in (
            ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses"),
            ("nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses"),
        ):
            procs = self._call(names, h)
            if procs is None:
                continue
            known = True
            seen.update(int(getattr(p, "pid", 0)) for p in procs)
        return len(seen) if known else None


# ----------------------------------------------------------------------------------------- probe


def _make(ctx: ProbeContext) -> Any:
    if ctx.nvml_factory is not None:
        return ctx.nvml_factory()
    return Nvml()


def nvml_timeout(ctx: ProbeContext) -> float:
    """How long NVML may take: it starts every GPU that is not in persistence mode, which takes a few
    seconds on big machines; a GPU that fell off the bus makes it hang far longer."""
    return max(0.1, 2 * (ctx.timeout or 8.0))


def probe(ctx: ProbeContext, machine: Machine) -> None:
    """Ask NVML about the driver and every GPU, in a worker thread with a time limit.

    NVML calls cannot be interrupted, and they hang like nvidia-smi does on a wedged GPU. The worker fills
    a private copy of the GPU list and driver; only when it finishes in time is its result copied back,
    so a hung NVML leaves a plain "timed out" finding and the rest of the report still appears.
    """
    scratch = Machine(gpus=copy.deepcopy(machine.gpus), driver=copy.deepcopy(machine.driver))
    done = threading.Event()
    crash: list[BaseException] = []

    def work() -> None:
        try:
            _probe(ctx, scratch)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            crash.append(exc)
        finally:
            done.set()

    limit = nvml_timeout(ctx)
    threading.Thread(target=work, name="gpusetup-nvml", daemon=True).start()
    if not done.wait(limit):
        msg = (
            f"timed out: NVML did not answer within {limit:g} s. A GPU that fell off the bus or a wedged "
            "driver does this; check the kernel log (dmesg) for NVRM/Xid messages and reboot."
        )
        machine.driver.nvml_error = msg
        machine.driver.evidence.append(Evidence(SOURCE, ok=False, error=msg, detail="TIMEOUT"))
        machine.driver.versions.append(Reading(None, SOURCE, error=msg))
        return
    if crash:
        raise crash[0]
    n = len(machine.gpus)
    for original, updated in zip(machine.gpus, scratch.gpus[:n], strict=True):
        original.__dict__.update(updated.__dict__)  # keep object identity for anyone holding a Gpu
    machine.gpus.extend(scratch.gpus[n:])
    machine.driver.__dict__.update(scratch.driver.__dict__)


def _probe(ctx: ProbeContext, machine: Machine) -> None:
    start = time.perf_counter()
    drv = machine.driver
    try:
        nv = _make(ctx)
        nv.init()
    except NvmlError as err:
        _init_failed(machine, err)
        return
    except Exception as exc:  # noqa: BLE001 - a broken binding must not stop the report
        _init_failed(machine, NvmlError(None, "UNKNOWN", f"NVML could not be started: {exc}"))
        return
    try:
        version = nv.driver_version()
        drv.versions.append(Reading(as_version(version), SOURCE))
        if version and not drv.version:
            drv.version = as_version(version)
        cuda = cuda_version_from_int(nv.cuda_driver_version())
        if cuda:
            drv.cuda_driver_version = as_version(cuda)
            drv.cuda_driver_version_source = SOURCE
        drv.nvml_version = as_version(nv.nvml_version())
        try:
            count = nv.device_count()
        except NvmlError as err:
            drv.nvml_error = err.message
            drv.evidence.append(
                Evidence(SOURCE, ok=False, error=err.message, detail=f"nvmlDeviceGetCount: {err.name}")
            )
            return
        failed: list[Gpu] = []
        for i in range(count):
            gpu = _probe_device(nv, i, machine)
            if gpu is not None:
                failed.append(gpu)
        _attach_failures_to_pci_entries(machine, failed)
        ms = (time.perf_counter() - start) * 1000
        notes = getattr(nv, "notes", [])
        drv.evidence.append(
            Evidence(
                SOURCE,
                detail=f"{count} device(s) read in {ms:.0f} ms"
                + (f"; {'; '.join(notes[:3])}" if notes else ""),
            )
        )
    finally:
        nv.shutdown()


def _init_failed(machine: Machine, err: NvmlError) -> None:
    machine.driver.nvml_error = err.message
    machine.driver.versions.append(Reading(None, SOURCE, error=err.message))
    machine.driver.evidence.append(Evidence(SOURCE, ok=False, error=err.message, detail=err.name))


def _probe_device(nv: Any, index: int, machine: Machine) -> Gpu | None:
    """Fill one GPU. Returns the placeholder GPU when it could not even be opened (None otherwise)."""
    try:
        h = nv.handle(index)
        bus, dev_id, sub_id = nv.pci_info(h)
    except NvmlError as err:
        gpu = Gpu(vendor="nvidia", index=index)
        gpu.evidence.append(Evidence(SOURCE, ok=False, error=f"GPU {index}: {err.message}", detail=err.name))
        return gpu
    gpu = find_or_add_gpu(machine, "nvidia", bus)
    gpu.index = index
    try:
        if dev_id is not None:
            vendor_id, device_id = split_pci_device_id(f"{int(dev_id) & 0xFFFFFFFF:08x}")
            gpu.pci.vendor_id = gpu.pci.vendor_id or vendor_id
            gpu.pci.device_id = gpu.pci.device_id or device_id
        if sub_id is not None:
            sv, sd = split_pci_device_id(f"{int(sub_id) & 0xFFFFFFFF:08x}")
            gpu.pci.subsystem_vendor_id = gpu.pci.subsystem_vendor_id or sv
            gpu.pci.subsystem_device_id = gpu.pci.subsystem_device_id or sd
        gpu.name = nv.name(h) or gpu.name
        gpu.uuid = nv.uuid(h)
        gpu.serial = nv.serial(h)
        gpu.vbios = nv.vbios(h)
        mem = nv.memory_info(h)
        if mem:
            gpu.memory_total_mib, gpu.memory_used_mib, gpu.memory_free_mib = (v // (1024 * 1024) for v in mem)
        cc = nv.compute_capability(h)
        if cc:
            gpu.compute_capability = ComputeCapability(cc[0], cc[1])
            gpu.compute_capability_source = SOURCE
        gpu.sm_count = nv.sm_count(h)
        gpu.architecture = gpu.architecture or nv.architecture(h)
        gpu.clocks = Clocks(
            graphics_mhz=nv.clock(h, "graphics"),
            sm_mhz=nv.clock(h, "sm"),
            memory_mhz=nv.clock(h, "memory"),
            graphics_max_mhz=nv.max_clock(h, "graphics"),
            sm_max_mhz=nv.max_clock(h, "sm"),
            memory_max_mhz=nv.max_clock(h, "memory"),
        )
        gpu.pcie = nv.pcie_link(h)
        gpu.ecc = _ecc(nv, h)
        gpu.throttle_reasons = decode_throttle_reasons(nv.clock_event_reasons(h))
        gpu.temperature_c = nv.temperature(h)
        gpu.power_draw_w = nv.power_draw_w(h)
        gpu.power_limit_w = nv.power_limit_w(h)
        gpu.utilization_gpu_pct = nv.utilization_gpu(h)
        gpu.persistence_mode = nv.persistence_mode(h)
        gpu.compute_mode = nv.compute_mode(h)
        gpu.display_active = nv.display_active(h)
        gpu.driver_model = nv.driver_model(h)
        mig = nv.mig_mode(h)
        gpu.mig_mode = None if mig is None else ("Enabled" if mig else "Disabled")
        if mig is not None:
            pending = nv.mig_mode_pending(h)
            gpu.mig_mode_pending = None if pending is None else ("Enabled" if pending else "Disabled")
        if mig:
            gpu.mig_devices = [describe_mig(m) for m in nv.mig_devices(h)]
        gpu.process_list = nv.running_processes(h) or []
        gpu.processes = nv.process_count(h)
    except NvmlError as err:
        gpu.evidence.append(Evidence(SOURCE, ok=False, error=f"GPU {index}: {err.message}", detail=err.name))
        return None
    gpu.evidence.append(Evidence(SOURCE))
    return None


def _ecc(nv: Any, h: Any) -> Ecc:
    ecc = Ecc()
    mode = nv.ecc_mode(h)
    if mode is not None:
        ecc.mode_current = "Enabled" if mode[0] else "Disabled"
        ecc.mode_pending = "Enabled" if mode[1] else "Disabled"
    if mode and mode[0]:
        ecc.volatile_corrected = nv.ecc_errors(h, uncorrected=False, aggregate=False)
        ecc.volatile_uncorrected = nv.ecc_errors(h, uncorrected=True, aggregate=False)
        ecc.aggregate_corrected = nv.ecc_errors(h, uncorrected=False, aggregate=True)
        ecc.aggregate_uncorrected = nv.ecc_errors(h, uncorrected=True, aggregate=True)
        ecc.retired_pages_sbe = nv.retired_pages(h, double_bit=False)
        ecc.retired_pages_dbe = nv.retired_pages(h, double_bit=True)
        ecc.retired_pages_pending = nv.retired_pages_pending(h)
    rows = nv.remapped_rows(h)
    if rows is not None:
        (
            ecc.remapped_rows_correctable,
            ecc.remapped_rows_uncorrectable,
            ecc.remapped_rows_pending,
            ecc.remapped_rows_failure,
        ) = rows
    return ecc


def _attach_failures_to_pci_entries(machine: Machine, failed: list[Gpu]) -> None:
    """A GPU NVML could not open still shows up: on its PCI entry when that is unambiguous, else on its own."""
    if not failed:
        return
    unread = [
        g for g in machine.nvidia_gpus if g.pci.address and not any(e.source == SOURCE for e in g.evidence)
    ]
    if len(unread) == len(failed):
        for pci_gpu, f in zip(sorted(unread, key=lambda g: g.pci.address or ""), failed, strict=True):
            pci_gpu.index = f.index
            pci_gpu.evidence.extend(f.evidence)
        return
    machine.gpus.extend(failed)
