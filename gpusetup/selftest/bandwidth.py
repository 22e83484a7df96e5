"""Copy bandwidth through the driver API, the way nvbandwidth measures it (performance.md §2.1).

Host↔device with pinned memory (``cuMemHostAlloc``, portable) on a stream timed with CUDA events: a few
warm-up copies, then each sample is ``loops`` back-to-back async copies between two events; the median of
the samples is reported with the spread. Pageable copies use the synchronous entry points between events
on the legacy stream (the driver stages them through its own pinned buffers). Device→device counts read +
write (2 × bytes), the figure comparable with the memory peak. The PCIe link is read *while* the host
copies are queued, then a pattern written through H2D → D2D → D2H is verified byte for byte.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from gpusetup.messages import add_note, msg
from gpusetup.model import Measurement, Message
from gpusetup.selftest import cudadrv, peaks
from gpusetup.selftest.base import MIB, RunCtx, median_spread
from gpusetup.selftest.telemetry import Sample

_MIN_BYTES = 4 * MIB


@dataclass
class _Bufs:
    nbytes: int
    dev_a: int
    dev_b: int
    pinned_src: int
    pinned_dst: int
    pageable: ctypes.Array[ctypes.c_char]


def choose_bytes(ctx: RunCtx, wanted: int, host_available: int | None) -> int | None:
    """Largest power-of-two-ish size ≤ wanted that fits: two device buffers in the budget, three host
    buffers in a quarter of the available RAM. None when even the minimum does not fit."""
    n = wanted
    while n >= _MIN_BYTES:
        dev_ok = 2 * n <= ctx.budget_bytes
        host_ok = host_available is None or 3 * n <= host_available // 4
        if dev_ok and host_ok:
            return n
        n //= 2
    return None


def _allocate(ctx: RunCtx, nbytes: int) -> _Bufs | None:
    """Device and pinned buffers; on out-of-memory free what was taken and try half the size."""
    s = ctx.session
    while nbytes >= _MIN_BYTES:
        taken: list[tuple[str, int]] = []
        try:
            for kind in ("dev", "dev", "host", "host"):
                taken.append((kind, s.alloc(nbytes) if kind == "dev" else s.host_alloc(nbytes)))
            return _Bufs(nbytes, taken[0][1], taken[1][1], taken[2][1], taken[3][1],
                         ctypes.create_string_buffer(nbytes))
        except cudadrv.CudaError as exc:
            if exc.code != 2:  # only CUDA_ERROR_OUT_OF_MEMORY is worth a smaller try
                raise
        except MemoryError:
            pass
        for kind, ptr in taken:
            if kind == "dev":
                s.free(ptr)
            else:
                s.host_free(ptr)
        nbytes //= 2
    return None


def _fill_pattern(ptr: int, nbytes: int) -> None:
    period = bytes((i * 131 + 7) & 0xFF for i in range(251))  # prime length: shifted data cannot match
    block = (period * (MIB // 251 + 1))[:MIB]
    off = 0
    while off < nbytes:
        k = min(MIB, nbytes - off)
        ctypes.memmove(ptr + off, block, k)
        off += k


def _same(a: int, b: int, nbytes: int) -> int | None:
    """Offset of the first differing byte, or None."""
    off = 0
    while off < nbytes:
        k = min(16 * MIB, nbytes - off)
        if ctypes.string_at(a + off, k) != ctypes.string_at(b + off, k):
            x, y = ctypes.string_at(a + off, k), ctypes.string_at(b + off, k)
            return off + next(i for i in range(k) if x[i] != y[i])
        off += k
    return None


def run(ctx: RunCtx, host_available: int | None) -> list[Measurement]:
    s = ctx.session
    sz = ctx.sizes
    nbytes = choose_bytes(ctx, sz.copy_bytes, host_available)
    if nbytes is None:
        return [peaks.say(ctx.measurement("h2d_pinned", None, "GB/s", "driver", verdict="skipped"),
                          msg("selftest.bw.no-memory"))]
    if nbytes < sz.copy_bytes:
        add_note(ctx, msg("selftest.note.copy-reduced-memory", mib=nbytes // MIB))
    ctx.step(msg("selftest.progress.copy-allocating"), 0.05)
    b = _allocate(ctx, nbytes)
    if b is None:
        return [peaks.say(ctx.measurement("h2d_pinned", None, "GB/s", "driver", verdict="skipped"),
                          msg("selftest.bw.no-buffers"))]
    if b.nbytes < nbytes:
        add_note(ctx, msg("selftest.note.copy-reduced-driver", mib=b.nbytes // MIB))
    nbytes = b.nbytes
    _fill_pattern(b.pinned_src, nbytes)
    ctypes.memmove(ctypes.addressof(b.pageable), b.pinned_src, nbytes)
    stream = s.stream()
    start, stop = s.event(), s.event()
    out: list[Measurement] = []
    links: list[Sample] = []

    def timed(label: Message, copy_one: object, on_stream: bool, frac: float, count: int = 1) -> list[float]:
        ctx.step(msg("selftest.progress.copy", what=label), frac)
        st = stream if on_stream else 0
        for _ in range(sz.copy_warmup):
            copy_one(st)  # type: ignore[operator]
        s.synchronize()
        samples = []
        for _ in range(sz.samples):
            ctx.cancel.raise_if_cancelled()
            s.record(start, st)
            for _ in range(sz.copy_loops):
                copy_one(st)  # type: ignore[operator]
            if on_stream and count == 1 and ctx.telemetry is not None:
                links.append(ctx.telemetry.sample())  # the copies are in flight now
            s.record(stop, st)
            ms = s.elapsed_ms(start, stop)
            if ms <= 0:
                continue
            samples.append(count * nbytes * sz.copy_loops / (ms / 1e3) / 1e9)
        return samples

    h2d = timed(msg("selftest.progress.h2d-pinned"), lambda st: s.htod(b.dev_a, b.pinned_src, nbytes, st), True, 0.1)
    d2h = timed(msg("selftest.progress.d2h-pinned"), lambda st: s.dtoh(b.pinned_dst, b.dev_a, nbytes, st), True, 0.3)
    page_addr = ctypes.addressof(b.pageable)
    h2d_p = timed(msg("selftest.progress.h2d-pageable"), lambda st: s.htod(b.dev_a, page_addr, nbytes), False, 0.45)
    d2h_p = timed(msg("selftest.progress.d2h-pageable"), lambda st: s.dtoh(page_addr, b.dev_a, nbytes), False, 0.6)
    d2d = timed(msg("selftest.progress.d2d"), lambda st: s.dtod(b.dev_b, b.dev_a, nbytes, st), True, 0.75, count=2)

    # Integrity: the pattern must survive host → GPU → GPU → host.
    ctx.step(msg("selftest.progress.copy-verifying"), 0.85)
    s.htod(b.dev_a, b.pinned_src, nbytes)
    s.dtod(b.dev_b, b.dev_a, nbytes)
    ctypes.memset(b.pinned_dst, 0, nbytes)
    s.dtoh(b.pinned_dst, b.dev_b, nbytes)
    s.synchronize()
    bad = _same(b.pinned_src, b.pinned_dst, nbytes)

    link = _link_during(links)
    out.extend(_pcie_measurements(ctx, "h2d_pinned", msg("selftest.bw.what-h2d"), h2d, link))
    out.extend(_pcie_measurements(ctx, "d2h_pinned", msg("selftest.bw.what-d2h"), d2h, link))
    pinned_med = {"h2d": median_spread(h2d)[0] if h2d else None, "d2h": median_spread(d2h)[0] if d2h else None}
    for name, samples, key in (("h2d_pageable", h2d_p, "h2d"), ("d2h_pageable", d2h_p, "d2h")):
        m = _basic(ctx, name, samples)
        ref = pinned_med[key]
        if m.value is not None and ref:
            peaks.say(m, msg("selftest.bw.pageable", pct=f"{m.value / ref:.0%}"))
        out.append(m)
    out.append(_d2d_measurement(ctx, d2d))
    out.append(peaks.say(ctx.measurement(
        "copy_integrity", 0.0 if bad is None else 1.0, "errors", "driver",
        verdict="pass" if bad is None else "fail",
    ), msg("selftest.bw.intact", mib=nbytes // MIB) if bad is None else msg("selftest.bw.corrupted", byte=bad)))
    for p in (b.dev_a, b.dev_b):
        s.free(p)
    for p in (b.pinned_src, b.pinned_dst):
        s.host_free(p)
    return out


def _link_during(links: list[Sample]) -> Sample | None:
    """The widest/fastest link seen while copies ran (a link may train up during the first sample)."""
    seen = [x for x in links if x.pcie_gen]
    if not seen:
        return None
    return max(seen, key=lambda x: ((x.pcie_gen or 0) * (x.pcie_width or 0)))


def _basic(ctx: RunCtx, name: str, samples: list[float], unit: str = "GB/s") -> Measurement:
    if not samples:
        return peaks.say(ctx.measurement(name, None, unit, "driver", verdict="skipped"), msg("selftest.no-timing-sample"))
    med, spread = median_spread(samples)
    return ctx.measurement(name, med, unit, "driver", samples=[round(x, 3) for x in samples], spread=spread)


def _pcie_measurements(ctx: RunCtx, name: str, what: Message, samples: list[float],
                       link: Sample | None) -> list[Measurement]:
    m = _basic(ctx, name, samples)
    if m.value is None:
        return [m]
    specs: peaks.Specs = ctx.specs
    gen = width = gen_max = width_max = None
    if link is not None:
        gen, width = link.pcie_gen, link.pcie_width
        gen_max, width_max = link.pcie_gen_max, link.pcie_width_max
    link_words = f"PCIe Gen{gen} x{width}" if gen and width else None
    peak_now = specs.pcie_peak(gen, width)
    peak_best = specs.pcie_peak(gen_max or gen, width_max or width)
    if peak_best:
        m.rated, m.rated_basis = peak_best, "pcie-link"
        basis = msg("selftest.bw.basis-link", gen=gen_max or gen, width=width_max or width)
    elif ctx.spec is not None:
        m.rated, m.rated_basis = specs.pcie_peak(ctx.spec.pcie_gen, ctx.spec.pcie_width), "pcie-spec"
        basis = msg("selftest.bw.basis-spec", gen=ctx.spec.pcie_gen, width=ctx.spec.pcie_width)
    else:
        peaks.say(m, msg("selftest.bw.no-rated-peak", what=what))
        return [m]
    m.fraction = m.value / m.rated if m.rated else None
    verdict, reason = peaks.judge_message(m.fraction, specs.band(name, None, "any"), what)
    during = msg("selftest.bw.link-during", link=link_words) if link_words else ""
    if peak_now and peak_best and peak_now < peak_best:
        peaks.say(m, msg("selftest.bw.link-degraded", link=link_words, gen=gen_max, width=width_max, judged=reason),
                  "fail")
    elif link is not None and link.pcie_gen_device_max and gen_max and gen_max < link.pcie_gen_device_max:
        slot = msg("selftest.bw.slot-limits", gen=gen_max, device_gen=link.pcie_gen_device_max)
        peaks.say(m, msg("selftest.bw.judged", judged=reason, basis=basis, during=during, slot=slot),
                  "warn" if verdict == "pass" else verdict)
    else:
        peaks.say(m, msg("selftest.bw.judged", judged=reason, basis=basis, during=during, slot=""), verdict)
    return [m]


def _d2d_measurement(ctx: RunCtx, samples: list[float]) -> Measurement:
    m = _basic(ctx, "d2d", samples)
    if m.value is None:
        return m
    note = msg("selftest.bw.d2d-traffic", throughput=f"{m.value / 2:.4g}")
    if ctx.spec is None:
        return peaks.say(m, msg("selftest.bw.d2d-no-spec", note=note))
    m.rated, m.rated_basis, m.datasheet = ctx.spec.bandwidth_gbs, "datasheet", ctx.spec.bandwidth_gbs
    m.fraction = m.value / m.rated
    verdict, reason = peaks.judge_message(m.fraction, ctx.specs.band("d2d", ctx.spec.segment, "any"),
                                          msg("selftest.bw.what-memory-copy"))
    return peaks.say(m, msg("selftest.bw.d2d-judged", judged=reason, note=note, gpu=ctx.spec.name,
                            rated=f"{m.rated:g}"), verdict)
