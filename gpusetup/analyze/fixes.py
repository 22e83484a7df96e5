"""The fix computed for the reporter's machine: when the input's facts suffice (a GPU whose compute capability is
known, from a tool or from its model named in prose), a finding's fix comes from the same resolver as ``gpusetup
plan`` for that machine — the build to install, its exact command, what to do first — instead of the rule's
general advice. Versions come from the resolver and its data (resources/compat), never from this module.

Where a fact is missing, the rule's own fix stays: it names the command whose output would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpusetup.compat.db import DataError, get_db
from gpusetup.compat.resolver import oldest_gpu_build, resolve
from gpusetup.messages import msg, render
from gpusetup.model import Finding, FrameworkPlan, Gpu, Machine, Message
from gpusetup.versions import Version

# Findings whose cause is the framework build vs the GPU's architecture (F04 / F05): the plan's build fixes them.
ARCH_FINDINGS = ("gpu-too-new-for-build", "gpu-too-old-for-build")


@dataclass
class ComputedFix:
    finding_id: str
    message: Message  # the fix as data, to word it in any language
    plan: FrameworkPlan  # the resolver's plan it was computed from


def _gpu_for(machine: Machine, finding: Finding) -> tuple[int, Gpu] | None:
    """The GPU a finding is about: its own index, else the only NVIDIA GPU whose compute capability is known."""
    known = [(i, g) for i, g in enumerate(machine.gpus) if g.vendor == "nvidia" and g.compute_capability]
    if finding.gpu_index is not None:
        for i, g in known:
            if g.index == finding.gpu_index:
                return i, g
    return known[0] if len(known) == 1 else None


def _oldest_release() -> Version | None:
    try:
        rows = get_db().rows("pytorch", "releases")
    except (DataError, KeyError):
        return None
    versions = [Version(str(r.get("version"))) for r in rows if r.get("version")]
    return min(versions) if versions else None


def arch_fix(machine: Machine, finding: Finding) -> ComputedFix | None:
    """F04/F05: the build the plan picks for this GPU, and (for a GPU newer than the oldest builds) the oldest
    release that has code for it. None when the GPU or its compute capability is not known."""
    found = _gpu_for(machine, finding)
    if found is None:
        return None
    position, gpu = found
    try:
        plan = resolve(machine, ["pytorch"], gpu_index=position)[0]
        oldest = oldest_gpu_build(machine, "pytorch", gpu_index=position)
    except (ValueError, DataError):
        return None
    choice = plan.choice if plan.ok else plan.gpu_choice
    if choice is None or not choice.variant.startswith("cu") or not choice.commands:
        return None
    cc = gpu.compute_capability
    name = gpu.name or f"GPU {gpu.index}"
    sm = f"sm_{cc.major}{cc.minor}" if cc else "?"
    driver_known = machine.driver.version or any(r.value for r in machine.driver.versions)
    first: list[Message | str] = []
    for a in plan.actions:
        if a.kind in ("install-driver", "upgrade-driver") and not driver_known and a.min_version:
            first.append(msg("analyze.fix.driver-unknown", need=a.min_version))  # unknown is not "not installed"
        else:
            first.append(Message(code=a.code, params=dict(a.params)) if a.code else a.why)
    floor = _oldest_release()
    params: dict[str, Any] = dict(gpu=name, sm=sm, cc=str(cc), version=choice.version, variant=choice.variant,
                                  command=choice.commands[0])
    if oldest is not None and floor is not None and Version(oldest.version) > floor:
        message = msg("analyze.fix.arch-needs-newer", min_version=oldest.version, min_variant=oldest.variant,
                      **params)
    else:
        message = msg("analyze.fix.arch-plan", **params)
    if first:
        message = msg("analyze.fix.first", fix=message, actions=first)
    return ComputedFix(finding.id, message, plan)


def computed_fixes(machine: Machine, findings: list[Finding]) -> dict[str, ComputedFix]:
    """Finding id → the fix computed for this machine (for the findings where the facts suffice). Each such
    finding's English ``fix`` is replaced by the computed one, so every surface (JSON included) shows it."""
    out: dict[str, ComputedFix] = {}
    for f in findings:
        if f.id in ARCH_FINDINGS and f.id not in out:
            fix = arch_fix(machine, f)
            if fix is not None:
                out[f.id] = fix
                f.fix = render(fix.message, "en")
    return out
