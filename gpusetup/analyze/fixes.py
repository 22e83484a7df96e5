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
from gpusetup.compat.resolver import resolve
from gpusetup.messages import msg, render
from gpusetup.model import Finding, FrameworkPlan, Gpu, Machine, Message
from gpusetup.versions import ComputeCapability, Version, kernel_coverage, version_key

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


@dataclass(frozen=True)
class Build:
    version: str  # release series, "2.7"
    variant: str  # cu128


def _in(version: str, lo: str | None, hi: str | None) -> bool:
    v = version_key(version)
    return not (lo and v < version_key(lo)) and not (hi and v > version_key(hi))


def oldest_torch_with_kernels(cc: ComputeCapability, machine: Machine) -> Build | None:
    """The oldest PyTorch release (and its lowest CUDA variant) whose wheels carry native kernels (SASS) for this
    compute capability on this machine's platform, from the same data tables the resolver reads
    (``pytorch.releases``, ``pytorch.arch_lists``) and the one coverage rule (:func:`kernel_coverage`). It answers
    "this GPU needs torch ≥ X with cuYYY"; the build to install is the resolver's (:func:`resolve`)."""
    s = machine.system
    os_ = "linux" if s.wsl or not s.os else s.os.lower()
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get((s.arch or "").lower(), s.arch or "x86_64")
    try:
        db = get_db()
        releases = sorted(db.rows("pytorch", "releases"), key=lambda r: version_key(str(r["version"])))
        arch_rows = db.rows("pytorch", "arch_lists")
    except (DataError, KeyError):
        return None

    def cuda_of(variant: str) -> Version:
        digits = variant[2:]
        return version_key(f"{digits[:-1]}.{digits[-1:]}") if digits.isdigit() and len(digits) >= 2 else version_key("0")

    for rel in releases:
        variants = sorted((v for v in rel.get("cuda_variants") or [] if str(v).startswith("cu")), key=cuda_of)
        for variant in variants:
            row = next((r for r in arch_rows if r.get("variant") == variant and r.get("os") == os_
                        and r.get("machine") == arch and _in(str(rel["version"]), r.get("torch_min"), r.get("torch_max"))),
                       None)
            if row and kernel_coverage(cc, row.get("cc") or (), row.get("ptx")) == "sass":
                return Build(str(rel["version"]), variant)
    return None


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
    except (ValueError, DataError):
        return None
    oldest = oldest_torch_with_kernels(gpu.compute_capability, machine) if gpu.compute_capability else None
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
                if hasattr(f, "fix_code"):  # a model that carries the fix as data (main, issue 21): that one too
                    setattr(f, "fix_code", fix.message)  # noqa: B010 - the field does not exist on every model
    return out
