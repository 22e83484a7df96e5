"""Rated peaks and verdicts: what a healthy GPU should reach, and whether a measured number did.

The spec table (``resources/gpu_specs.json``, performance.md §1) gives the datasheet peaks. Where we know
the SM count, compute capability and the SM clock the GPU really ran at (read *during* the test), the
peak is recomputed as SMs × per-SM rate × clock, so a GeForce card boosting above its rated clock is not
reported at ">100%"; the datasheet peak is shown beside it. Bands (pass / warn / fail) are data too
(performance.md §0), and every verdict carries its reason in words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpusetup.messages import msg, render
from gpusetup.model import Measurement, Message, to_dict
from gpusetup.resources import resource
from gpusetup.versions import ComputeCapability

# A live-clock peak further than this factor from the datasheet means our per-SM rate does not fit this
# chip (or the clock reading is wrong): then the datasheet peak is used instead.
_MAX_LIVE_DEVIATION = 1.6
_HARMLESS_SUFFIX = {"generation", "workstation", "edition"}


def normalise_name(name: str) -> str:
    """NVML/driver name → the spec table's alias form: "NVIDIA GeForce RTX 4080 SUPER" → "rtx 4080 super"."""
    s = re.sub(r"[^a-z0-9]+", " ", name.lower())
    return " ".join(w for w in s.split() if w not in ("nvidia", "geforce", "tesla", "quadro"))


@dataclass(frozen=True)
class GpuSpec:
    name: str
    segment: str  # geforce / workstation / datacenter / consumer
    architecture: str
    bandwidth_gbs: float
    fp32_tflops: float
    tensor_tflops: float | None  # FP16/BF16 dense, FP32 accumulate
    tensor_half_rate: bool
    pcie_gen: int
    pcie_width: int
    verified: bool
    tensor_source: str


@dataclass(frozen=True)
class Band:
    test: str
    segment: str
    basis: str
    pass_at: float
    fail_below: float
    typical: str


@dataclass
class Rated:
    """A peak and how it was obtained, in words for the report."""

    value: float
    basis: str  # live-clock / max-clock / datasheet / pcie-link / pcie-spec
    detail: str
    datasheet: float | None = None


class Specs:
    def __init__(self, data: dict[str, Any]) -> None:
        t = data["tables"]
        self.gpus: list[tuple[GpuSpec, list[str], list[str]]] = []
        for r in t["gpus"]["rows"]:
            if r["vendor"] != "nvidia":
                continue
            spec = GpuSpec(
                name=r["name"], segment=r["segment"], architecture=r["architecture"],
                bandwidth_gbs=r["bandwidth_gbs"], fp32_tflops=r["fp32_tflops"],
                tensor_tflops=r.get("tensor_fp16_fp32acc_tflops"),
                tensor_half_rate=r["tensor_fp32acc_half_rate"], pcie_gen=r["pcie_gen"],
                pcie_width=r["pcie_width"], verified=r["verified"], tensor_source=r["tensor_source"],
            )
            self.gpus.append((spec, r["aliases"], r["pci_device_ids"]))
        self.rates = {r["cc"]: r for r in t["per_sm_rates"]["rows"]}
        self.pcie = {r["gen"]: r["x16_gbs"] for r in t["pcie"]["rows"]}
        self.bands = [
            Band(b["test"], b["segment"], b["basis"], b["pass"], b["fail_below"], b["typical"])
            for b in t["bands"]["rows"]
        ]

    def find(self, name: str | None, pci_device_id: str | None = None) -> GpuSpec | None:
        """The spec row for a GPU: by PCI device id first, then exact alias, then alias + harmless suffix."""
        if pci_device_id:
            pid = pci_device_id.lower()[-4:]
            for spec, _, ids in self.gpus:
                if pid in ids:
                    return spec
        if not name:
            return None
        n = normalise_name(name)
        for spec, aliases, _ in self.gpus:
            if n in aliases:
                return spec
        best: tuple[int, GpuSpec] | None = None
        for spec, aliases, _ in self.gpus:
            for a in aliases:
                rest = n[len(a):].split() if n.startswith(a + " ") else None
                if rest and all(w in _HARMLESS_SUFFIX for w in rest) and (best is None or len(a) > best[0]):
                    best = (len(a), spec)
        return best[1] if best else None

    def rate(self, cc: ComputeCapability | str | None) -> dict[str, Any] | None:
        """The per-SM rates row of a compute capability (the table is keyed by its text, "8.9")."""
        return self.rates.get(str(cc) if cc else "")

    def pcie_peak(self, gen: int | None, width: int | None) -> float | None:
        """Theoretical payload GB/s per direction for a link."""
        if not gen or not width or gen not in self.pcie:
            return None
        return self.pcie[gen] * width / 16

    def band(self, test: str, segment: str | None, basis: str) -> Band | None:
        best = None
        for b in self.bands:
            if b.test != test:
                continue
            if b.segment not in ("any", segment):
                continue
            if b.basis not in ("any", basis):
                continue
            # Most specific wins: a segment match beats "any", a basis match beats "any".
            score = (b.segment != "any") * 2 + (b.basis != "any")
            if best is None or score > best[0]:
                best = (score, b)
        return best[1] if best else None


@lru_cache(maxsize=4)
def _load(path: str) -> Specs:
    return Specs(json.loads(Path(path).read_text(encoding="utf-8")))


def load_specs(path: Path | None = None) -> Specs:
    return _load(str(path or resource("gpu_specs.json")))


# --------------------------------------------------------------------------------------- peaks


def _clock_peak(sm_count: int | None, per_clk: int | None, mhz: int | None) -> float | None:
    if not sm_count or not per_clk or not mhz:
        return None
    return sm_count * per_clk * mhz * 1e6 / 1e12


def compute_peak(kind: str, spec: GpuSpec | None, specs: Specs, *, cc: ComputeCapability | str | None, sm_count: int | None,
                 live_mhz: int | None, max_mhz: int | None) -> Rated | None:
    """Peak TFLOP/s for ``kind`` ("fp32" or "tensor"): from the clock measured during the run where we
    can, else the maximum SM clock, else the datasheet."""
    datasheet = None
    if spec is not None:
        datasheet = spec.fp32_tflops if kind == "fp32" else spec.tensor_tflops
    rate = specs.rate(cc)
    per_clk = None
    if rate is not None:
        per_clk = rate["fp32_flop_per_clk"] if kind == "fp32" else rate["tensor_fp16_flop_per_clk"]
        if kind == "tensor" and per_clk and spec is not None and spec.tensor_half_rate:
            per_clk //= 2
    if kind == "tensor" and spec is None:
        per_clk = None  # unknown whether FP32 accumulate runs at full or half rate on this part
    for mhz, basis, words in ((live_mhz, "live-clock", "the SM clock measured during the test"),
                              (max_mhz, "max-clock", "the GPU's maximum SM clock")):
        peak = _clock_peak(sm_count, per_clk, mhz)
        if peak is None:
            continue
        if datasheet and not (1 / _MAX_LIVE_DEVIATION < peak / datasheet < _MAX_LIVE_DEVIATION):
            break  # the per-SM rate does not fit this chip; trust the datasheet
        detail = f"{sm_count} SMs × {per_clk} FLOP/clock × {mhz} MHz ({words})"
        if datasheet:
            detail += f"; datasheet {datasheet:g} TFLOP/s"
        return Rated(peak, basis, detail, datasheet)
    if datasheet:
        return Rated(datasheet, "datasheet", f"the datasheet of the {spec.name if spec else 'GPU'}", datasheet)
    return None


# -------------------------------------------------------------------------------------- verdicts


def judge(fraction: float | None, band: Band | None, what: str | Message) -> tuple[str, str]:
    """(verdict, reason) for a fraction of peak against a band."""
    verdict, reason = judge_message(fraction, band, what)
    return verdict, render(reason)


def judge_message(fraction: float | None, band: Band | None, what: str | Message) -> tuple[str, Message]:
    """(verdict, reason as a gpusetup.messages message) for a fraction of peak against a band."""
    if fraction is None or band is None:
        return "info", msg("selftest.peak.unknown", what=what)
    pct = f"{fraction:.0%}"
    if fraction >= band.pass_at:
        return "pass", msg("selftest.peak.healthy", pct=pct, typical=band.typical)
    if fraction < band.fail_below:
        return "fail", msg("selftest.peak.below-floor", pct=pct, floor=f"{band.fail_below:.0%}", typical=band.typical)
    return "warn", msg("selftest.peak.below-usual", pct=pct, usual=f"{band.pass_at:.0%}",
                       floor=f"{band.fail_below:.0%}", typical=band.typical)


def say(m: Measurement, reason: Message, verdict: str | None = None) -> Measurement:
    """Set a measurement's reason as words (English) and as data (code, params); and its verdict, if given."""
    # nested messages kept in their JSON form ({"code", "params"}), so the result survives a JSON round trip
    m.reason, m.code, m.params = render(reason), reason.code, to_dict(dict(reason.params))
    if verdict is not None:
        m.verdict = verdict
    return m
