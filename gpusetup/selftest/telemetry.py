"""GPU telemetry read *while* the self-test runs: PCIe link, SM clock, free memory.

Why during the run: an idle GPU drops its PCIe link to Gen1 and its clocks to a few hundred MHz to save
power, so a link or clock read before the test says nothing about the test. The sampler is injectable; the
default asks NVML through :class:`gpusetup.probe.nvml.Nvml` and answers ``None`` for anything it cannot read.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from gpusetup.probe.nvml import Nvml

log = logging.getLogger("gpusetup.selftest.telemetry")


@dataclass
class Sample:
    pcie_gen: int | None = None
    pcie_width: int | None = None
    pcie_gen_max: int | None = None  # what GPU and slot can do together
    pcie_width_max: int | None = None
    pcie_gen_device_max: int | None = None  # what the GPU alone can do
    sm_clock_mhz: int | None = None
    sm_max_clock_mhz: int | None = None
    free_bytes: int | None = None


class Telemetry(Protocol):
    def sample(self) -> Sample: ...

    def close(self) -> None: ...


class NullTelemetry:
    """No NVML: every value unknown."""

    def sample(self) -> Sample:
        return Sample()

    def close(self) -> None:
        pass


def _bus_key(bus_id: str | None) -> tuple[int, str] | None:
    """"00000000:01:00.0" (NVML) and "0000:01:00.0" (CUDA) → (0, "01:00.0")."""
    if not bus_id or ":" not in bus_id:
        return None
    domain, _, rest = bus_id.strip().lower().partition(":")
    try:
        return int(domain, 16), rest
    except ValueError:
        return None


class NvmlTelemetry:
    """Samples one GPU through an NVML facade (``Nvml`` or a fake with the same methods)."""

    def __init__(self, nvml: Any, pci_bus_id: str | None, fallback_index: int | None = None) -> None:
        self.nvml = nvml
        self.handle: Any = None
        try:
            nvml.init()
            want = _bus_key(pci_bus_id)
            for i in range(nvml.device_count()):
                h = nvml.handle(i)
                bus, _, _ = nvml.pci_info(h)
                if want is not None and _bus_key(bus) == want:
                    self.handle = h
                    break
            if self.handle is None and fallback_index is not None and want is None:
                self.handle = nvml.handle(fallback_index)
        except Exception as exc:  # noqa: BLE001 - telemetry is optional; the test runs without it
            log.info("NVML telemetry unavailable: %s", exc)
            self.handle = None

    def sample(self) -> Sample:
        if self.handle is None:
            return Sample()
        s = Sample()
        try:
            link = self.nvml.pcie_link(self.handle)
            s.pcie_gen, s.pcie_width = link.gen_current, link.width_current
            s.pcie_gen_max, s.pcie_width_max = link.gen_max, link.width_max
            s.pcie_gen_device_max = link.gen_device_max
            s.sm_clock_mhz = self.nvml.clock(self.handle, "sm") or None
            s.sm_max_clock_mhz = self.nvml.max_clock(self.handle, "sm") or None
            mem = self.nvml.memory_info(self.handle)
            s.free_bytes = mem[2] if mem else None
        except Exception as exc:  # noqa: BLE001
            log.info("NVML sample failed: %s", exc)
        return s

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.nvml.shutdown()


TelemetryFactory = Callable[[str | None, int], Telemetry]


def default_telemetry(pci_bus_id: str | None, index: int) -> Telemetry:
    return NvmlTelemetry(Nvml(), pci_bus_id, index)
