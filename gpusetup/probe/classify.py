"""Last pass of detection: GPUs that only the driver side reported (nvidia-smi, NVML under WSL2, a GPU whose
PCI entry was unreadable or whose recorded PCI id is masked) get their chip, architecture and compute
capability from the chip rule too — through :func:`gpusetup.enrich.enrich`, the same step that runs after a
``--for`` file is loaded.
"""

from __future__ import annotations

from gpusetup.enrich import NAME_MATCH_SOURCE, chips_for_name, classify_by_name, enrich
from gpusetup.model import Machine
from gpusetup.probe import ProbeContext

__all__ = ["NAME_MATCH_SOURCE", "chips_for_name", "classify_by_name", "probe"]


def probe(ctx: ProbeContext, machine: Machine) -> None:
    enrich(machine)
