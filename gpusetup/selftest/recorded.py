"""Recorded measurements (the demonstration machines) judged like live ones.

CUDA's bandwidthTest counts a device-to-device copy as read + write (``2 * memSize`` bytes per copy, in its
``testDeviceToDeviceTransfer``), the same basis as the self-test's own ``d2d``; so a recorded number is
compared with the GPU's rated memory bandwidth from the spec table and judged by the same band.
"""

from __future__ import annotations

import copy

from gpusetup.messages import msg
from gpusetup.model import Machine, SelfTestResult
from gpusetup.selftest import peaks


def rate_recorded(result: SelfTestResult, machine: Machine) -> SelfTestResult:
    """A copy of ``result`` whose unrated memory-copy measurement gets the GPU's rated peak and a verdict."""
    out = copy.deepcopy(result)
    specs = peaks.load_specs()
    for m in out.measurements:
        if m.name != "d2d" or m.value is None or m.rated is not None:
            continue
        gpu = machine.gpus[m.device or 0] if len(machine.gpus) > (m.device or 0) else None
        spec = specs.find(gpu.name if gpu else None, getattr(gpu, "pci_device_id", None)) if gpu else None
        if spec is None:
            continue
        m.rated, m.rated_basis, m.datasheet = spec.bandwidth_gbs, "datasheet", spec.bandwidth_gbs
        m.fraction = m.value / m.rated
        verdict, reason = peaks.judge_message(m.fraction, specs.band("d2d", spec.segment, "any"),
                                              msg("selftest.bw.what-memory-copy"))
        peaks.say(m, msg("selftest.recorded.d2d-judged", judged=reason, gpu=spec.name, rated=f"{m.rated:g}",
                         how=m.reason), verdict)
        if out.gpu_name is None and gpu is not None:
            out.gpu_name = gpu.name
    ranks = {"skipped": 0, "info": 1, "pass": 2, "warn": 3, "fail": 4}
    out.verdict = max((m.verdict for m in out.measurements), key=lambda v: ranks.get(v, 1), default=out.verdict)
    return out
