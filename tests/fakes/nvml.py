"""A fake NVML facade fed by real recorded ``nvidia-smi -q -x`` outputs.

:class:`FakeNvml` has exactly the public interface of :class:`gpusetup.probe.nvml.Nvml` (a test checks
this), and answers from a parsed XML fixture, so the NVML probe is exercised on real GPUs' values.
Scenario constructors cover the failure modes: NVML init failing with each error class, one of two GPUs
lost, a GPU lost in the middle of being read, and functions the driver does not support.

NVML tells things nvidia-smi's XML does not (compute capability, SM count); from XML they stay unknown
(None) unless a test passes them; :meth:`FakeNvml.from_capture` takes the compute capability from the
recorded ``--query-gpu`` CSV of the same machine. Nothing here is invented.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup.model import Gpu, GpuProcess, PcieLink
from gpusetup.probe.nvml import NvmlError
from gpusetup.probe.nvtypes import DRIVER_MODEL_CODES, MigInfo, encode_throttle_reasons
from gpusetup.probe.smi import (
    SmiSnapshot,
    gpus_from_csv,
    parse_smi_csv,
    parse_smi_q,
    parse_smi_version,
    parse_smi_xml,
    split_capture_sections,
)

_MIB = 1024 * 1024


@dataclass
class FakeDevice:
    gpu: Gpu
    mig: list[MigInfo] = field(default_factory=list)
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    lost: bool = False  # handle() raises GPU_IS_LOST
    lost_after_open: bool = False  # the first query after pci_info raises GPU_IS_LOST
    unsupported: set[str] = field(default_factory=set)  # methods answering None (NOT_SUPPORTED)


@dataclass(frozen=True)
class FakeHandle:
    index: int
    mig_index: int | None = None


class FakeNvml:
    """Answers like :class:`~gpusetup.probe.nvml.Nvml`, from recorded data."""

    def __init__(
        self,
        devices: list[FakeDevice] | None = None,
        *,
        driver_version: str | None = None,
        cuda_driver_version: int | None = None,
        nvml_version: str | None = None,
        init_error: str | None = None,
        count_error: str | None = None,
    ) -> None:
        self.devices = devices or []
        self._driver_version = driver_version
        self._cuda = cuda_driver_version
        self._nvml_version = nvml_version
        self.init_error = init_error
        self.count_error = count_error
        self.started = False
        self.init_calls = 0
        self.shutdown_calls = 0
        self.notes: list[str] = []
        self.hang_in: str | None = None  # a method name that blocks like NVML on a wedged GPU
        self.release = threading.Event()  # set it to let a hung call return (test clean-up)

    # ------------------------------------------------------------------------------ constructors

    @classmethod
    def from_snapshot(cls, snap: SmiSnapshot, **kwargs: Any) -> FakeNvml:
        devices = [FakeDevice(gpu=g, mig=list(snap.mig.get(i, []))) for i, g in enumerate(snap.gpus)]
        cuda = None
        if snap.cuda_version:
            major, _, minor = snap.cuda_version.partition(".")
            cuda = int(major) * 1000 + int(minor or 0) * 10
        kwargs.setdefault("driver_version", snap.driver_version)
        kwargs.setdefault("cuda_driver_version", cuda)
        return cls(devices, **kwargs)

    @classmethod
    def from_smi_xml(cls, path: str | Path, **kwargs: Any) -> FakeNvml:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        return cls.from_snapshot(parse_smi_xml(text), **kwargs)

    @classmethod
    def from_capture(cls, path: str | Path, state: str = "idle", **kwargs: Any) -> FakeNvml:
        """From a whole nvidia_gpu_exporter capture: ``-q`` for the GPU, ``--query-gpu`` CSV for the compute
        capability (the one place nvidia-smi prints it), ``--version`` for the NVML version."""
        sections = split_capture_sections(Path(path).read_text(encoding="utf-8", errors="replace"))
        snap = parse_smi_q(sections.get(f"{state} :: query (-q)", ""))
        csv_gpus = gpus_from_csv(
            parse_smi_csv(sections.get(f"{state} :: query-gpu (csv, what the exporter parses)", ""))
        )
        kwargs.setdefault("nvml_version", parse_smi_version(sections.get("capabilities :: version", "")).nvml)
        fake = cls.from_snapshot(snap, **kwargs)
        for dev, g in zip(fake.devices, csv_gpus, strict=False):
            if g.compute_capability:
                major, minor = g.compute_capability
                dev.compute_capability = (int(major), int(minor))
        return fake

    @classmethod
    def init_fails(cls, error_name: str) -> FakeNvml:
        """nvmlInit fails with this NVML error (``LIBRARY_NOT_FOUND``, ``DRIVER_NOT_LOADED``…)."""
        return cls(init_error=error_name)

    @classmethod
    def one_of_two_lost(cls, path_ok: str | Path, path_lost: str | Path) -> FakeNvml:
        """Two GPUs; the second one has fallen off the bus (its handle cannot be opened)."""
        a = cls.from_smi_xml(path_ok)
        b = cls.from_smi_xml(path_lost)
        lost = b.devices[0]
        lost.lost = True
        a.devices.append(lost)
        return a

    def with_unsupported(self, *methods: str) -> FakeNvml:
        """Every device answers None (NOT_SUPPORTED / FUNCTION_NOT_FOUND) to these methods."""
        for d in self.devices:
            d.unsupported.update(methods)
        return self

    # ------------------------------------------------------------------------------ lifecycle

    @classmethod
    def hangs_in(cls, method: str, path: str | Path) -> FakeNvml:
        """NVML blocks in ``method`` (``init``, ``temperature``…) the way it does when a GPU is wedged."""
        fake = cls.from_smi_xml(path)
        fake.hang_in = method
        return fake

    def _maybe_hang(self, method: str) -> None:
        if self.hang_in == method:
            self.release.wait(30)

    def init(self) -> None:
        self.init_calls += 1
        self._maybe_hang("init")
        if self.init_error:
            raise NvmlError.named(self.init_error)
        self.started = True

    def shutdown(self) -> None:
        if self.started:
            self.shutdown_calls += 1
        self.started = False

    def __enter__(self) -> FakeNvml:
        self.init()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def _need_started(self) -> None:
        if not self.started:
            raise NvmlError.named("UNINITIALIZED")

    # ------------------------------------------------------------------------------ system

    def driver_version(self) -> str | None:
        self._need_started()
        return self._driver_version

    def cuda_driver_version(self) -> int | None:
        self._need_started()
        return self._cuda

    def nvml_version(self) -> str | None:
        self._need_started()
        return self._nvml_version

    def device_count(self) -> int:
        self._need_started()
        if self.count_error:
            raise NvmlError.named(self.count_error)
        return len(self.devices)

    def handle(self, index: int) -> Any:
        self._need_started()
        if not 0 <= index < len(self.devices):
            raise NvmlError.named("INVALID_ARGUMENT")
        if self.devices[index].lost:
            raise NvmlError.named("GPU_IS_LOST")
        return FakeHandle(index)

    # ------------------------------------------------------------------------------ per device

    def _dev(self, h: FakeHandle, method: str) -> FakeDevice | None:
        self._need_started()
        self._maybe_hang(method)
        d = self.devices[h.index]
        if d.lost_after_open and method != "pci_info":
            raise NvmlError.named("GPU_IS_LOST")
        if method in d.unsupported:
            return None
        return d

    def _mig(self, h: FakeHandle) -> MigInfo | None:
        if h.mig_index is None:
            return None
        return self.devices[h.index].mig[h.mig_index]

    def name(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "name")
        m = self._mig(h)
        if m is not None:
            return m.name
        return d.gpu.name if d else None

    def uuid(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "uuid")
        m = self._mig(h)
        if m is not None:
            return m.uuid
        return d.gpu.uuid if d else None

    def serial(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "serial")
        return d.gpu.serial if d else None

    def vbios(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "vbios")
        return d.gpu.vbios if d else None

    def pci_info(self, h: FakeHandle) -> tuple[str | None, int | None, int | None]:
        d = self._dev(h, "pci_info")
        if d is None:
            return None, None, None
        p = d.gpu.pci
        bus = None
        if p.address:
            bus = "0000" + p.address.upper()  # NVML prints an 8-digit domain: 00000000:01:00.0
        dev_id = int(p.device_id + p.vendor_id, 16) if p.device_id and p.vendor_id else None
        sub = (
            int(p.subsystem_device_id + p.subsystem_vendor_id, 16)
            if p.subsystem_device_id and p.subsystem_vendor_id
            else None
        )
        return bus, dev_id, sub

    def memory_info(self, h: FakeHandle) -> tuple[int, int, int] | None:
        d = self._dev(h, "memory_info")
        m = self._mig(h)
        if m is not None:
            return (m.memory_total_mib * _MIB, 0, m.memory_total_mib * _MIB) if m.memory_total_mib else None
        if d is None or d.gpu.memory_total_mib is None:
            return None
        g = d.gpu
        return g.memory_total_mib * _MIB, (g.memory_used_mib or 0) * _MIB, (g.memory_free_mib or 0) * _MIB

    def compute_capability(self, h: FakeHandle) -> tuple[int, int] | None:
        d = self._dev(h, "compute_capability")
        return d.compute_capability if d else None

    def architecture(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "architecture")
        return d.gpu.architecture if d else None

    def sm_count(self, h: FakeHandle) -> int | None:
        d = self._dev(h, "sm_count")
        m = self._mig(h)
        if m is not None:
            return m.sm_count
        return d.sm_count if d else None

    def clock(self, h: FakeHandle, kind: str) -> int | None:
        d = self._dev(h, "clock")
        if d is None:
            return None
        c = d.gpu.clocks
        return {"graphics": c.graphics_mhz, "sm": c.sm_mhz, "memory": c.memory_mhz}[kind]

    def max_clock(self, h: FakeHandle, kind: str) -> int | None:
        d = self._dev(h, "max_clock")
        if d is None:
            return None
        c = d.gpu.clocks
        return {"graphics": c.graphics_max_mhz, "sm": c.sm_max_mhz, "memory": c.memory_max_mhz}[kind]

    def pcie_link(self, h: FakeHandle) -> PcieLink:
        d = self._dev(h, "pcie_link")
        if d is None:
            return PcieLink()
        p = d.gpu.pcie
        return PcieLink(
            p.gen_current, p.gen_max, p.gen_device_max, p.width_current, p.width_max, p.replay_counter
        )

    def ecc_mode(self, h: FakeHandle) -> tuple[bool, bool] | None:
        d = self._dev(h, "ecc_mode")
        if d is None or d.gpu.ecc.mode_current is None:
            return None
        e = d.gpu.ecc
        return e.mode_current == "Enabled", (e.mode_pending or e.mode_current) == "Enabled"

    def ecc_errors(self, h: FakeHandle, *, uncorrected: bool, aggregate: bool) -> int | None:
        d = self._dev(h, "ecc_errors")
        if d is None:
            return None
        e = d.gpu.ecc
        return {
            (False, False): e.volatile_corrected,
            (True, False): e.volatile_uncorrected,
            (False, True): e.aggregate_corrected,
            (True, True): e.aggregate_uncorrected,
        }[(uncorrected, aggregate)]

    def retired_pages(self, h: FakeHandle, *, double_bit: bool) -> int | None:
        d = self._dev(h, "retired_pages")
        if d is None:
            return None
        return d.gpu.ecc.retired_pages_dbe if double_bit else d.gpu.ecc.retired_pages_sbe

    def retired_pages_pending(self, h: FakeHandle) -> bool | None:
        d = self._dev(h, "retired_pages_pending")
        return d.gpu.ecc.retired_pages_pending if d else None

    def remapped_rows(self, h: FakeHandle) -> tuple[int, int, bool, bool] | None:
        d = self._dev(h, "remapped_rows")
        if d is None:
            return None
        e = d.gpu.ecc
        vals = (
            e.remapped_rows_correctable,
            e.remapped_rows_uncorrectable,
            e.remapped_rows_pending,
            e.remapped_rows_failure,
        )
        if any(v is None for v in vals):
            return None
        return int(vals[0]), int(vals[1]), bool(vals[2]), bool(vals[3])  # type: ignore[arg-type]

    def clock_event_reasons(self, h: FakeHandle) -> int | None:
        d = self._dev(h, "clock_event_reasons")
        return encode_throttle_reasons(d.gpu.throttle_reasons) if d else None

    def temperature(self, h: FakeHandle) -> int | None:
        d = self._dev(h, "temperature")
        return d.gpu.temperature_c if d else None

    def power_draw_w(self, h: FakeHandle) -> float | None:
        d = self._dev(h, "power_draw_w")
        return d.gpu.power_draw_w if d else None

    def power_limit_w(self, h: FakeHandle) -> float | None:
        d = self._dev(h, "power_limit_w")
        return d.gpu.power_limit_w if d else None

    def utilization_gpu(self, h: FakeHandle) -> int | None:
        d = self._dev(h, "utilization_gpu")
        return d.gpu.utilization_gpu_pct if d else None

    def persistence_mode(self, h: FakeHandle) -> bool | None:
        d = self._dev(h, "persistence_mode")
        return d.gpu.persistence_mode if d else None

    def compute_mode(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "compute_mode")
        return d.gpu.compute_mode if d else None

    def display_active(self, h: FakeHandle) -> bool | None:
        d = self._dev(h, "display_active")
        return d.gpu.display_active if d else None

    def driver_model(self, h: FakeHandle) -> str | None:
        d = self._dev(h, "driver_model")
        if d is None or d.gpu.driver_model not in DRIVER_MODEL_CODES:
            return None
        return d.gpu.driver_model

    def mig_mode(self, h: FakeHandle) -> bool | None:
        d = self._dev(h, "mig_mode")
        if d is None or d.gpu.mig_mode not in ("Enabled", "Disabled"):
            return None
        return d.gpu.mig_mode == "Enabled"

    def mig_mode_pending(self, h: FakeHandle) -> bool | None:
        d = self._dev(h, "mig_mode_pending")
        if d is None or d.gpu.mig_mode_pending not in ("Enabled", "Disabled"):
            return None
        return d.gpu.mig_mode_pending == "Enabled"

    def mig_devices(self, h: FakeHandle) -> list[MigInfo]:
        d = self._dev(h, "mig_devices")
        if d is None:
            return []
        return [
            MigInfo(
                index=j,
                name=self.name(FakeHandle(h.index, j)),
                uuid=self.uuid(FakeHandle(h.index, j)),
                gpu_instance_id=m.gpu_instance_id,
                compute_instance_id=m.compute_instance_id,
                sm_count=self.sm_count(FakeHandle(h.index, j)),
                memory_total_mib=m.memory_total_mib,
            )
            for j, m in enumerate(d.mig)
        ]

    def running_processes(self, h: FakeHandle) -> list[GpuProcess] | None:
        """The recorded processes (nvidia-smi ``<processes>``), biggest first, as NVML lists them."""
        d = self._dev(h, "running_processes")
        if d is None or d.gpu.processes is None:
            return None
        return sorted((copy.copy(p) for p in d.gpu.process_list), key=lambda p: -(p.used_mib or 0))

    def process_count(self, h: FakeHandle) -> int | None:
        d = self._dev(h, "process_count")
        return d.gpu.processes if d else None
