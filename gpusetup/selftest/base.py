"""Shared pieces of the self-test tiers: problem sizes per mode, statistics, the running context."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from gpusetup.cancel import CancelToken, Progress
from gpusetup.i18n import output_language
from gpusetup.messages import render
from gpusetup.model import Measurement, Message

MIB = 1024 * 1024


@dataclass
class Sizes:
    """How big and how long. ``quick`` finishes in seconds; ``full`` follows nvbandwidth's defaults."""

    copy_bytes: int  # per buffer; nvbandwidth uses 512 MiB
    copy_warmup: int  # copies before timing (nvbandwidth: 4)
    copy_loops: int  # copies per timed sample (nvbandwidth: 16)
    samples: int  # timed samples; the median is reported (nvbandwidth: 3)
    gemm_n: int  # square size of the own-kernel SGEMM (multiple of 64)
    gemm_repeats: int  # repeat-and-compare passes (gpu-burn style)
    check_points: int  # result elements checked against the CPU reference
    cublas_n: int  # square GEMM size for cuBLAS (4096-8192 reach the peak)
    cublas_loops: int
    cpu_gemm_n: int
    cpu_stream_bytes: int  # per array; 0 = from the cache size (4x the last-level cache)
    cpu_stream_cap: int  # upper limit for the automatic size
    framework_n: int
    framework_timeout: float
    gemm_loops: int = 0  # launches per timed sample; 0 = about 20 ms of work at 10 TFLOP/s

    @classmethod
    def for_mode(cls, mode: str) -> Sizes:
        if mode == "full":
            return cls(512 * MIB, 4, 16, 5, 2048, 20, 1024, 8192, 10, 2048, 0, 512 * MIB, 4096, 300.0)
        return cls(64 * MIB, 4, 8, 3, 1024, 5, 256, 4096, 5, 1024, 0, 128 * MIB, 2048, 120.0)


def median_spread(samples: list[float]) -> tuple[float, float | None]:
    """Median and (max - min) / median."""
    med = statistics.median(samples)
    spread = (max(samples) - min(samples)) / med if med and len(samples) > 1 else None
    return med, spread


@dataclass
class RunCtx:
    """What a tier needs: the open session, the GPU's identity, telemetry, sizes, cancel and progress."""

    sizes: Sizes
    cancel: CancelToken
    progress: Progress
    device: int | None = None
    session: Any = None  # cudadrv.Session
    info: Any = None  # cudadrv.DeviceInfo
    spec: Any = None  # peaks.GpuSpec | None
    specs: Any = None  # peaks.Specs
    telemetry: Any = None  # telemetry.Telemetry
    machine_gpu: Any = None  # model.Gpu matched to the CUDA device, when detection found it
    budget_bytes: int = 0  # device memory the self-test may use
    clock_samples: list[int] = field(default_factory=list)  # SM MHz read while kernels ran
    notes: list[str] = field(default_factory=list)  # English, for readers that do not know the codes
    note_codes: list[Message] = field(default_factory=list)  # the same notes as data (messages.add_note)

    def sample_clock(self) -> None:
        """Record the SM clock now (while a kernel runs), to judge a result against the clock it ran at."""
        if self.telemetry is None:
            return
        mhz = self.telemetry.sample().sm_clock_mhz
        if mhz:
            self.clock_samples.append(mhz)

    def step(self, label: str | Message, fraction: float | None = None) -> None:
        """Report progress (a message is worded in the output language: the CLI's, or the wizard's)."""
        self.cancel.raise_if_cancelled()
        self.progress(label if isinstance(label, str) else render(label, output_language()), fraction)

    def measurement(self, name: str, value: float | None, unit: str, tier: str, **kw: Any) -> Measurement:
        return Measurement(name=name, value=value, unit=unit, tier=tier, device=self.device, **kw)
