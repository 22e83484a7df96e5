"""System facts (OS, distro, kernel, WSL, container, Secure Boot, CPU, RAM, disk) from the platform."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext


def probe(ctx: ProbeContext, machine: Machine) -> None:
    machine.system = ctx.platform.system(ctx)
