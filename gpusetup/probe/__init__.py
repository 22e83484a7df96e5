"""Detection: many small probes, each filling its part of one :class:`~gpusetup.model.Machine`.

Each probe module exposes ``probe(ctx: ProbeContext, machine: Machine) -> None``. ``detect()`` runs them
in order, times each, and turns any exception into a recorded probe error, so one failing source never
hides the others. Probes read the filesystem through ``ctx.path()`` (tests point ``ctx.root`` at fixture
trees), run commands through ``ctx.runner`` and reach NVML / libcuda through injectable factories.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from gpusetup import __version__
from gpusetup.cancel import Cancelled, CancelToken
from gpusetup.model import Gpu, Machine, PciInfo, ProbeRun
from gpusetup.probe.platform import Platform, get_platform
from gpusetup.probe.platform.host import current_os
from gpusetup.runner import Runner, SubprocessRunner

log = logging.getLogger("gpusetup.probe")

# Order matters: system first (platform facts), PCI before NVML (NVML enriches PCI devices), NVML before
# nvidia-smi (the fallback runs only when NVML gave nothing), driver last among NVIDIA sources (it
# cross-checks every version reading the others left).
PROBE_ORDER: tuple[str, ...] = (
    "system",
    "pci",
    "nvml",
    "smi",
    "libcuda",
    "driver",
    "toolkit",
    "frameworks",
    "containers",
    "rocm",
    "kernel_log",
    "packages",
    "classify",
)


# Run before everything (platform facts, the PCI view that later probes enrich).
_FIRST = frozenset({"system", "pci"})
# Independent of the NVIDIA chain and of each other: each writes only its own part of the Machine.
_PARALLEL = frozenset({"toolkit", "frameworks", "containers", "kernel_log"})


@dataclass
class ProbeContext:
    """Everything a probe may touch, injected so tests can replace each piece with a fake."""

    runner: Runner = field(default_factory=SubprocessRunner)
    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    os_name: str = field(default_factory=lambda: current_os())
    # Returns an NVML facade (gpusetup.probe.nvml.Nvml-like) or raises; None means "use the real pynvml".
    nvml_factory: Callable[[], Any] | None = None
    # Loads a shared library by path/name (ctypes.CDLL in real life; a fake C library in tests).
    library_loader: Callable[[str], Any] | None = None
    python: str | None = None  # target interpreter for the framework probe (default: this one)
    deep: bool = False  # import frameworks in a subprocess (slower, tells is_available())
    timeout: float = 8.0  # per external command
    only: tuple[str, ...] | None = None  # restrict to these probes (tests, benchmarks)
    _platform: Any = None

    def path(self, p: str | os.PathLike[str]) -> Path:
        """An absolute system path resolved under ``root`` (``/proc/x`` → ``<root>/proc/x``)."""
        s = os.fspath(p)
        if self.root == Path("/"):
            return Path(s)
        return self.root / s.lstrip("/\\")

    @property
    def platform(self) -> Platform:
        """The :class:`~gpusetup.probe.platform.Platform` for this OS (chosen once)."""
        if self._platform is None:
            self._platform = get_platform(self)
        return self._platform


def detect(
    ctx: ProbeContext | None = None,
    progress: Callable[[str, float], None] | None = None,
    cancel: CancelToken | None = None,
) -> Machine:
    """Run every probe and return the machine's facts. Never raises for a failing source.

    With ``cancel``, stops between probes once it is cancelled and raises :class:`Cancelled`; probes already
    waiting on a command finish on their own (each command has its time limit) and their result is dropped.
    """
    ctx = ctx or ProbeContext()
    machine = Machine(
        tool_version=__version__,
        collected_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    )
    names = [n for n in PROBE_ORDER if ctx.only is None or n in ctx.only]
    first = [n for n in names if n in _FIRST]
    parallel = [n for n in names if n in _PARALLEL]
    chain = [n for n in names if n not in _FIRST and n not in _PARALLEL]
    results: dict[str, ProbeRun] = {}
    done = 0

    def step(name: str) -> None:
        nonlocal done
        if cancel is not None:
            cancel.raise_if_cancelled()
        if progress:
            progress(name, done / len(names))
        results[name] = run_probe(name, ctx, machine)
        done += 1

    for name in first:
        step(name)
    if cancel is not None:
        cancel.raise_if_cancelled()
    # Probes that mostly wait on commands and touch their own part of the Machine run in threads beside the
    # NVIDIA chain, so a slow `docker info` or `nvcc --version` does not add to the total.
    pool = ThreadPoolExecutor(max_workers=max(1, len(parallel)), thread_name_prefix="probe")
    try:
        futures = {name: pool.submit(run_probe, name, ctx, machine) for name in parallel}
        for name in chain:
            step(name)
        for name, fut in futures.items():
            results[name] = fut.result()
    except Cancelled:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    machine.probes = [results[n] for n in names]
    if progress:
        progress("done", 1.0)
    records = getattr(ctx.runner, "records", None)
    if records is not None:
        machine.commands = list(records)
    return machine


def _probe_modules() -> dict[str, ModuleType]:
    """The probe module for each name of :data:`PROBE_ORDER` (each has ``probe(ctx, machine)``)."""
    # lazy: importing the 13 probe modules takes 0.16 s (measured on the 2-core test machine), which commands
    # that never detect (plan --for, analyze, docker --for, --help) should not pay: every command imports this
    # package at start-up (gpusetup.cli reads probe.platform.host). They also import this package back.
    from gpusetup.probe import (
        classify,
        containers,
        driver,
        frameworks,
        kernel_log,
        libcuda,
        nvml,
        packages,
        pci,
        rocm,
        smi,
        system,
        toolkit,
    )

    return {"system": system, "pci": pci, "nvml": nvml, "smi": smi, "libcuda": libcuda, "driver": driver,
            "toolkit": toolkit, "frameworks": frameworks, "containers": containers, "rocm": rocm,
            "kernel_log": kernel_log, "packages": packages, "classify": classify}


def run_probe(name: str, ctx: ProbeContext, machine: Machine) -> ProbeRun:
    start = time.perf_counter()
    module = _probe_modules()[name]
    try:
        module.probe(ctx, machine)
    except Exception as exc:  # noqa: BLE001 - a probe bug must not hide the rest of the report
        log.exception("probe %s failed", name)
        return ProbeRun(name, _ms(start), ok=False, error=f"{type(exc).__name__}: {exc}")
    return ProbeRun(name, _ms(start))


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


# ------------------------------------------------------------------------------ shared GPU helpers


def normalize_pci_address(addr: str | None) -> str | None:
    """``00000000:01:00.0`` (NVML), ``0000:01:00.0`` (sysfs), ``01:00.0`` (lspci) → ``0000:01:00.0``."""
    if not addr:
        return None
    a = addr.strip().lower()
    parts = a.split(":")
    if len(parts) == 2:
        parts = ["0000", *parts]
    if len(parts) != 3:
        return a
    domain, bus, devfn = parts
    try:
        domain = f"{int(domain, 16):04x}"
        bus = f"{int(bus, 16):02x}"
        if "." in devfn:
            dev, fn = devfn.split(".", 1)
            devfn = f"{int(dev, 16):02x}.{int(fn, 16):x}"
    except ValueError:
        return a
    return f"{domain}:{bus}:{devfn}"


def find_or_add_gpu(machine: Machine, vendor: str, address: str | None) -> Gpu:
    """The GPU at this PCI address (so NVML/nvidia-smi enrich the PCI entry), or a new one."""
    norm = normalize_pci_address(address)
    if norm:
        for gpu in machine.gpus:
            if normalize_pci_address(gpu.pci.address) == norm:
                return gpu
    gpu = Gpu(vendor=vendor, pci=PciInfo(address=norm))
    machine.gpus.append(gpu)
    return gpu
