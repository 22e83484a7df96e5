"""The CUDA driver API (``libcuda.so.1`` / ``nvcuda.dll``) through ctypes: version and ``cuInit`` only.

This is what every CUDA program does first, so it is the most honest answer to "can CUDA start here?":
NVML may work while ``cuInit`` fails (a missing ``nvidia-uvm`` module, a container without the device
nodes, a forward-compatibility package on an unsupported GPU), and the reverse.

Results:
- ``machine.driver.versions`` gets a ``Reading(source="libcuda (cuDriverGetVersion)")`` whose value is the
  CUDA version the driver library supports ("12.8", from 12080);
- ``machine.driver.cuinit_error`` is the CUresult *name* (``CUDA_ERROR_NO_DEVICE``) when ``cuInit`` fails,
  with the plain meaning in ``machine.driver.evidence``; ``"TIMED_OUT"`` when it never returned (it runs
  in a worker thread with a time limit, because it hangs on a wedged GPU like NVML does).
Names and codes of :data:`CU_RESULTS` are those of ``cuda.h`` (checked against CUDA 13.0's header).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from typing import TYPE_CHECKING, Any

from gpusetup.model import Evidence, Reading
from gpusetup.probe.nvtypes import cuda_version_from_int
from gpusetup.versions import as_version

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

from gpusetup.cuda_results import SETUP_MEANINGS, setup_meaning

log = logging.getLogger("gpusetup.probe.libcuda")

SOURCE = "libcuda (cuDriverGetVersion)"
DEFAULT_CANDIDATES = ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", "nvcuda.dll"]

# CUresult codes from cuda.h → (name, what it means for someone setting up a GPU).
CU_RESULTS = SETUP_MEANINGS  # kept under its old name for readers of this module


def cu_result(code: int) -> tuple[str, str]:
    """A CUresult code → (name, plain meaning); unknown codes keep their number."""
    return setup_meaning(code)


CUINIT_TIMED_OUT = "TIMED_OUT"  # cuinit_error when cuInit never returned (not a CUresult)


def cuinit_timeout(ctx: ProbeContext) -> float:
    """cuInit starts every GPU not in persistence mode (seconds on big machines) and hangs on a wedged one."""
    return max(0.1, 2 * (ctx.timeout or 8.0))


def _cu_init(fn: Any) -> int:
    fn.restype = ctypes.c_int
    return int(fn(0))


def _call_with_limit(call: Any, limit: float) -> tuple[int | None, BaseException | None] | None:
    """Run ``call`` in a daemon thread: (result, None), (None, exception), or None when it did not return."""
    box: list[tuple[int | None, BaseException | None]] = []

    def work() -> None:
        try:
            box.append((call(), None))
        except Exception as exc:  # noqa: BLE001 - reported by the caller
            box.append((None, exc))

    t = threading.Thread(target=work, name="gpusetup-cuinit", daemon=True)
    t.start()
    t.join(limit)
    return box[0] if box else None


def _candidates(ctx: ProbeContext) -> list[str]:
    """The platform's list (which may be empty: no CUDA on macOS); the default list if it has none."""
    try:
        return list(ctx.platform.libcuda_candidates(ctx))
    except Exception as exc:  # noqa: BLE001 - a platform module that fails must not stop this probe
        log.debug("libcuda_candidates failed: %s", exc)
    return list(DEFAULT_CANDIDATES)


def load_libcuda(ctx: ProbeContext) -> tuple[Any | None, str | None, list[str]]:
    """(library, which candidate loaded, what failed for the others)."""
    loader = ctx.library_loader or ctypes.CDLL
    tried: list[str] = []
    for cand in _candidates(ctx):
        try:
            return loader(cand), cand, tried
        except OSError as exc:
            tried.append(f"{cand}: {exc}")
        except Exception as exc:  # noqa: BLE001 - odd loaders (tests, Windows) must not stop the report
            tried.append(f"{cand}: {type(exc).__name__}: {exc}")
    return None, None, tried


def probe(ctx: ProbeContext, machine: Machine) -> None:
    """Load libcuda, call ``cuInit(0)`` and ``cuDriverGetVersion``; record both with their source."""
    drv = machine.driver
    lib, name, tried = load_libcuda(ctx)
    if lib is None and not tried:
        return  # the platform has no CUDA driver library at all (macOS): nothing to report
    if lib is None:
        msg = "the CUDA driver library (libcuda) was not found: the NVIDIA driver is not installed or not visible"
        drv.evidence.append(Evidence(SOURCE, ok=False, error=msg, detail="; ".join(tried)[:1000] or None))
        drv.versions.append(Reading(None, SOURCE, error=msg))
        return
    cu_init = getattr(lib, "cuInit", None)
    get_version = getattr(lib, "cuDriverGetVersion", None)
    if cu_init is None or get_version is None:
        missing = "cuInit" if cu_init is None else "cuDriverGetVersion"
        msg = f"{name} has no {missing}: it is not a CUDA driver library"
        drv.evidence.append(Evidence(SOURCE, ok=False, error=msg, detail=name))
        drv.versions.append(Reading(None, SOURCE, error=msg))
        return
    # cuDriverGetVersion works without cuInit, so the version is known even when CUDA cannot start.
    ver = ctypes.c_int(0)
    try:
        get_version.restype = ctypes.c_int
        rc_ver = int(get_version(ctypes.byref(ver)))
    except Exception as exc:  # noqa: BLE001
        rc_ver, ver.value = -1, 0
        log.debug("cuDriverGetVersion raised: %s", exc)
    version = cuda_version_from_int(ver.value) if rc_ver == 0 else None
    if version:
        drv.versions.append(Reading(as_version(version), SOURCE))
        if not drv.cuda_driver_version:
            drv.cuda_driver_version = as_version(version)
            drv.cuda_driver_version_source = SOURCE
    else:
        err_name = cu_result(rc_ver)[0] if rc_ver >= 0 else "call failed"
        drv.versions.append(Reading(None, SOURCE, error=f"cuDriverGetVersion failed ({err_name})"))
    limit = cuinit_timeout(ctx)
    outcome = _call_with_limit(lambda: _cu_init(cu_init), limit)
    if outcome is None:
        drv.cuinit_error = CUINIT_TIMED_OUT
        drv.evidence.append(
            Evidence(
                "libcuda (cuInit)",
                ok=False,
                error=f"timed out: cuInit did not return within {limit:g} s. A GPU that fell off the bus or a "
                "wedged driver does this; check the kernel log (dmesg) for NVRM/Xid messages and reboot.",
                detail=name,
            )
        )
        return
    rc, failure = outcome
    if failure is not None or rc is None:
        drv.cuinit_error = "CUDA_ERROR_UNKNOWN"
        drv.evidence.append(
            Evidence("libcuda (cuInit)", ok=False, error=f"cuInit could not be called: {failure}")
        )
        return
    if rc == 0:
        drv.evidence.append(
            Evidence(
                "libcuda (cuInit)",
                detail=f"{name}: cuInit(0) = CUDA_SUCCESS, driver API CUDA {version or '?'}",
            )
        )
        return
    err_name, meaning = cu_result(rc)
    drv.cuinit_error = err_name
    drv.evidence.append(
        Evidence("libcuda (cuInit)", ok=False, error=meaning, detail=f"{name}: cuInit(0) = {rc} ({err_name})")
    )
