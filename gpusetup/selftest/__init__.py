"""The self-test: proof that the GPU works, measured against what it should reach.

Tiers, each working without the ones after it:

1. **driver** — ctypes on libcuda with shipped PTX (:mod:`.cudadrv`, :mod:`.bandwidth`, :mod:`.matmul`):
   copy bandwidth, a checked FP32 matmul and a bit-exact repeat-and-compare pass;
2. **cublas** — GEMM throughput for FP32/TF32/FP16/BF16 when a cuBLAS library exists (:mod:`.cublas`);
3. **framework** — each framework the user chose (else each installed) imports in the target environment and
   computes correctly on the GPU, or on the processor where there is none (:mod:`.framework`); one sentence per
   framework for a beginner comes from :mod:`.proof`;
4. **cpu** — numpy baseline, and the whole self-test on a machine without an NVIDIA GPU (:mod:`.cpu`).

Cancelling (the token, or Ctrl-C in the CLI) stops at the next step, frees all GPU memory and returns
what was measured so far. GPU memory use stays within half of the free memory both the driver and NVML
report; managed memory is never used.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup.cancel import Cancelled, CancelToken, Progress, no_progress
from gpusetup.i18n import output_language
from gpusetup.messages import add_note, msg, render
from gpusetup.model import Gpu, Machine, Measurement, Message, SelfTestResult
from gpusetup.runner import Runner, SubprocessRunner
from gpusetup.selftest import peaks
from gpusetup.selftest.base import MIB, RunCtx, Sizes

log = logging.getLogger("gpusetup.selftest")

MODES = ("quick", "full")
_VERDICT_RANK = {"skipped": 0, "info": 1, "pass": 2, "warn": 3, "fail": 4}


@dataclass
class SelfTestEnv:
    """Everything the self-test touches outside Python, injectable for tests (fake libcuda, fake NVML)."""

    cuda_loader: Callable[[str], Any] | None = None  # ctypes.CDLL by default
    cuda_candidates: Sequence[str] | None = None  # default: cudadrv.default_candidates()
    cublas_loader: Callable[[str], Any] | None = None
    cublas_candidates: Sequence[str] | None = None  # default: cublas.candidates(); [] disables the tier
    telemetry_factory: Callable[[str | None, int], Any] | None = None  # default: NVML
    runner: Runner | None = None
    python: str | None = None  # target interpreter for the framework tier (default: this one)
    # the frameworks the user chose ("torch"/"pytorch", "tensorflow", "jax", "numpy"); None: whichever of torch,
    # TensorFlow and JAX is installed there; () skips the tier
    frameworks: Sequence[str] | None = None
    sizes: Sizes | None = None  # default: Sizes.for_mode(mode)
    specs_path: Any = None
    tiers: Sequence[str] = ("driver", "cublas", "framework", "cpu")
    extra_notes: list[Message] = field(default_factory=list)


def run_selftest(machine: Machine, *, mode: str = "quick", device: int | None = None,
                 progress: Progress | None = None, cancel: CancelToken | None = None,
                 env: SelfTestEnv | None = None) -> SelfTestResult:
    """Run every tier that this machine allows and return the measurements with verdicts."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    env = env or SelfTestEnv()
    progress = progress or no_progress
    cancel = cancel or CancelToken()
    sizes = env.sizes or Sizes.for_mode(mode)
    result = SelfTestResult(mode=mode, device=device)
    t0 = time.perf_counter()
    ctx = RunCtx(sizes=sizes, cancel=cancel, progress=progress, device=device)
    ctx.specs = peaks.load_specs(env.specs_path)
    try:
        if "driver" in env.tiers:
            _gpu_tiers(machine, env, ctx, result, device)
        cancel.raise_if_cancelled()
        if "framework" in env.tiers and (env.frameworks is None or env.frameworks):
            with _tier_guard(result, "framework"):
                progress(render(msg("selftest.progress.framework"), output_language()), None)
                # lazy: the tiers' modules cost 187 ms (python -X importtime, 2 cores, load average 7) of everything
                # that imports this package for its spec table (selftest.peaks: generate, install); a self-test loads them
                from gpusetup.probe.pyenv import own_interpreter
                from gpusetup.selftest import framework

                python = env.python or own_interpreter()
                ms: list[Measurement]
                notes: list[Message]
                if python is None:  # the packaged app is not a Python: the environment must be named
                    ms, notes = [framework.no_python()], []
                else:
                    result.framework_python = python
                    ms, notes = framework.run(env.runner or SubprocessRunner(), python,
                                              env.frameworks, sizes.framework_n, sizes.framework_timeout,
                                              gpu_expected=bool(machine.nvidia_gpus) or result.gpu_tested, ctx=ctx)
                result.measurements.extend(ms)
                for note in notes:
                    add_note(result, note)
        cancel.raise_if_cancelled()
        if "cpu" in env.tiers:
            with _tier_guard(result, "cpu"):
                from gpusetup.selftest import cpu  # lazy: see selftest/__init__ run_selftest

                result.measurements.extend(cpu.run(sizes, cancel, progress,
                                                   ram_available_mib=machine.system.ram_available_mib,
                                                   python=env.python, runner=env.runner))
    except Cancelled:
        result.cancelled = True
        add_note(result, msg("selftest.note.cancelled"))
    result.notes[:0] = ctx.notes
    result.note_codes[:0] = ctx.note_codes
    for note in env.extra_notes:
        add_note(result, note)
    _speedup(result)
    result.verdict = _worst(result.measurements)
    result.duration_s = round(time.perf_counter() - t0, 3)
    progress("done", 1.0)
    return result


@contextlib.contextmanager
def _tier_guard(result: SelfTestResult, tier: str) -> Iterator[None]:
    """A bug in one tier becomes a failed measurement; the other tiers' results are kept."""
    try:
        yield
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001
        log.exception("self-test tier %s failed", tier)
        result.measurements.append(peaks.say(
            Measurement(name=f"{tier}_error", value=None, unit="", tier=tier),
            msg("selftest.error.internal-tier", tier=tier, error=f"{type(exc).__name__}: {exc}"), "fail"))


def _worst(ms: list[Measurement]) -> str:
    worst = "info"
    for m in ms:
        if _VERDICT_RANK.get(m.verdict, 0) > _VERDICT_RANK[worst]:
            worst = m.verdict
    return worst


def _speedup(result: SelfTestResult) -> None:
    by = {m.name: m for m in result.measurements}
    cpu = by.get("cpu_matmul_fp32")
    gpu = next((by[n] for n in ("cublas_fp32", "matmul_fp32_ptx") if n in by and by[n].value), None)
    if not cpu or not cpu.value or gpu is None or gpu.value is None:
        return
    result.measurements.append(peaks.say(Measurement(
        name="gpu_cpu_speedup", value=round(gpu.value * 1000 / cpu.value, 2), unit="x", tier="cpu",
        verdict="info", device=gpu.device,
    ), msg("selftest.speedup", measurement=gpu.name, gpu=f"{gpu.value:.3g}", cpu=f"{cpu.value:.4g}")))


def _machine_gpu(machine: Machine, bus_id: str | None, name: str) -> Gpu | None:
    from gpusetup.selftest.telemetry import _bus_key  # lazy: see selftest/__init__ run_selftest

    want = _bus_key(bus_id)
    for g in machine.nvidia_gpus:
        if want is not None and _bus_key(g.pci.address) == want:
            return g
    named = [g for g in machine.nvidia_gpus if g.name == name]
    return named[0] if len(named) == 1 else None


def _gpu_tiers(machine: Machine, env: SelfTestEnv, ctx: RunCtx, result: SelfTestResult,
               device: int | None) -> None:
    # lazy: see run_selftest
    from gpusetup.selftest import bandwidth, cudadrv, matmul
    from gpusetup.selftest.telemetry import NullTelemetry, default_telemetry

    ctx.step(msg("selftest.progress.driver"), 0.0)
    try:
        drv = cudadrv.CudaDriver.load(env.cuda_loader, env.cuda_candidates)
    except cudadrv.DriverNotFound as exc:
        add_note(result, msg("selftest.note.no-gpu-testable", why=exc.words))
        result.headline = msg("selftest.no-driver-library")
        return
    except cudadrv.DriverTooOld as exc:
        add_note(result, msg("selftest.note.driver-too-old", why=exc.words))
        result.headline = msg("selftest.driver-too-old")
        return
    if drv.fallbacks_used:
        used = ", ".join(f"{old} instead of {new}" for new, old in drv.fallbacks_used.items())
        add_note(ctx, msg("selftest.note.older-driver", used=used))
    try:
        drv.init()
        count = drv.device_count()
    except cudadrv.CudaError as exc:
        add_note(result, msg("selftest.note.cuda-init-failed", error=exc.name, description=exc.message))
        result.headline = msg("selftest.cuda-init-failed", error=exc.name)
        return
    if count == 0:
        add_note(result, msg("selftest.no-cuda-gpu"))
        result.headline = msg("selftest.no-cuda-gpu")
        return
    ordinal = 0 if device is None else device
    if not 0 <= ordinal < count:
        result.measurements.append(peaks.say(
            Measurement(name="gpu_select", value=None, unit="", tier="driver"),
            msg("selftest.error.no-such-gpu", number=ordinal, count=count, last=count - 1), "fail"))
        return
    ctx.device = result.device = ordinal
    session = None
    try:
        info = drv.device_info(ordinal)
        ctx.info = info
        result.gpu_name = info.name
        ctx.machine_gpu = _machine_gpu(machine, info.pci_bus_id, info.name)
        pci_dev = ctx.machine_gpu.pci.device_id if ctx.machine_gpu else None
        ctx.spec = ctx.specs.find(info.name, pci_dev)
        version = drv.version()
        facts = dict(number=ordinal, name=info.name, cc=str(info.compute_capability) if info.compute_capability else None, sms=info.sm_count,
                     mib=info.total_bytes // MIB, cuda=f"{version // 1000}.{version % 1000 // 10}")
        add_note(ctx, msg("selftest.note.gpu-spec-row", spec=ctx.spec.name, **facts) if ctx.spec
                 else msg("selftest.note.gpu-no-spec-row", **facts))
        factory = env.telemetry_factory or default_telemetry
        try:
            ctx.telemetry = factory(info.pci_bus_id, ordinal)
        except Exception as exc:  # noqa: BLE001 - telemetry is optional
            log.info("telemetry unavailable: %s", exc)
            ctx.telemetry = NullTelemetry()
        session = drv.open(ordinal)
        ctx.session = session
        result.gpu_tested = True
        _set_budget(ctx, session, machine)
        ctx.step(msg("selftest.progress.copy-test"), 0.1)
        with _near_gpu(info.pci_bus_id):
            result.measurements.extend(bandwidth.run(ctx, _host_available(machine)))
        ctx.step(msg("selftest.progress.matrix-test"), 0.4)
        result.measurements.extend(matmul.run(ctx))
        if "cublas" in env.tiers:
            _cublas_tier(env, ctx, result)
    except cudadrv.CudaError as exc:
        result.measurements.append(peaks.say(
            Measurement(name="gpu_error", value=None, unit="", tier="driver", device=ordinal),
            msg("selftest.error.gpu-hardware" if exc.hardware else "selftest.error.gpu", error=exc.words), "fail"))
    except cudadrv.DriverTooOld as exc:
        add_note(result, exc.words)
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug must not lose the results measured so far
        log.exception("self-test GPU tier failed")
        result.measurements.append(peaks.say(
            Measurement(name="gpu_error", value=None, unit="", tier="driver", device=ordinal),
            msg("selftest.error.internal-gpu", error=f"{type(exc).__name__}: {exc}"), "fail"))
    finally:
        if session is not None:
            for err in session.close():
                add_note(ctx, msg("selftest.note.free-failed", error=err))
        if ctx.telemetry is not None:
            ctx.telemetry.close()


@contextlib.contextmanager
def _near_gpu(bus_id: str | None) -> Iterator[None]:
    """Run the host copies on the CPUs of the GPU's NUMA node, as nvbandwidth does (a far node can cost 3-5×,
    performance.md §2.1). Linux only; anything unreadable leaves the affinity alone."""
    old = None
    try:
        if bus_id and hasattr(os, "sched_setaffinity"):
            dev = Path("/sys/bus/pci/devices") / bus_id.lower()
            node = int((dev / "numa_node").read_text().strip())
            if node >= 0:
                cpus = _cpulist((Path("/sys/devices/system/node") / f"node{node}" / "cpulist").read_text())
                old = os.sched_getaffinity(0)
                if cpus and cpus & old:
                    os.sched_setaffinity(0, cpus & old)
                else:
                    old = None
    except (OSError, ValueError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, old)


def _cpulist(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def _set_budget(ctx: RunCtx, session: Any, machine: Machine) -> None:
    """Half of the smallest free-memory figure (driver now, NVML now, detection earlier)."""
    free_drv, _ = session.mem_info()
    candidates = [free_drv]
    nv = ctx.telemetry.sample().free_bytes if ctx.telemetry is not None else None
    if nv:
        candidates.append(nv)
    if ctx.machine_gpu is not None and ctx.machine_gpu.memory_free_mib:
        candidates.append(ctx.machine_gpu.memory_free_mib * MIB)
    ctx.budget_bytes = min(candidates) // 2


def _host_available(machine: Machine) -> int | None:
    mib = machine.system.ram_available_mib
    return mib * MIB if mib else None


def _cublas_tier(env: SelfTestEnv, ctx: RunCtx, result: SelfTestResult) -> None:
    from gpusetup.selftest import cublas  # lazy: see selftest/__init__ run_selftest

    names = env.cublas_candidates if env.cublas_candidates is not None else cublas.candidates()
    blas = cublas.Cublas.load(env.cublas_loader, names) if names else None
    if blas is None:
        add_note(result, msg("selftest.note.no-cublas"))
        return
    ctx.step(msg("selftest.progress.cublas"), 0.7)
    try:
        result.measurements.extend(cublas.run(ctx, blas))
    except cublas.CublasError as exc:
        result.measurements.append(peaks.say(Measurement(name="cublas", value=None, unit="", tier="cublas",
                                                         device=ctx.device), exc.words, "fail"))
