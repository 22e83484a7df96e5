"""Which NVIDIA driver branch a machine's GPUs need: one answer for the resolver's driver actions and for
``gpusetup install --driver`` (issue 26: the install used to take a branch from framework actions only, so a
Kepler GPU got the distribution's 535 although its last driver is 470).

Legacy GPUs get their last branch exactly (driver_branches/legacy_branches); otherwise the minimum a framework
needs; for data-centre servers with no framework asking, the current branch (the minimum of the newest CUDA
family, cuda_drivers/family_minimums), because the -server packages and the fabric manager are per branch;
else none, and the distribution recommends one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpusetup.compat.db import CompatDB
from gpusetup.versions import ComputeCapability, Version


@dataclass(frozen=True)
class BranchChoice:
    branch: int | None  # the branch to install; None: the distribution's recommendation
    legacy: bool = False  # the last branch for an old architecture: exactly this one, never a newer one
    architecture: str | None = None  # the legacy architecture
    modules: str | None = None  # "open" / "proprietary" kernel modules for every GPU; None when unknown


def _cc_in(cc: ComputeCapability | None, lo: str | None, hi: str | None) -> bool:
    if cc is None:
        return False
    low, high = ComputeCapability.parse(lo), ComputeCapability.parse(hi)
    return (low is None or low <= cc) and (high is None or cc <= high)


def legacy_row(db: CompatDB, cc: ComputeCapability | None) -> dict[str, Any] | None:
    """The driver_branches/legacy_branches row of a GPU whose architecture has a last branch, else None."""
    for row in db.rows("driver_branches", "legacy_branches"):
        if _cc_in(cc, row["cc_min"], row["cc_max"]):
            return row
    return None


def kernel_modules(db: CompatDB, ccs: Iterable[ComputeCapability | None]) -> str | None:
    """'open' when every GPU supports NVIDIA's open kernel modules, else 'proprietary'; None when unknown."""
    flavours = {f for f in (db.kernel_modules(cc) for cc in ccs) if f}
    if not flavours:
        return None
    return "proprietary" if "proprietary" in flavours else "open"


def current_branch(db: CompatDB) -> int | None:
    """The branch of the newest CUDA family's minimum driver (a family with no ``below_branch`` cut-off)."""
    best: tuple[int, str] | None = None
    for row in db.rows("cuda_drivers", "family_minimums"):
        if row.get("below_branch") is None and row.get("linux") and (best is None or row["major"] > best[0]):
            best = (int(row["major"]), str(row["linux"]))
    v = Version.parse(best[1]) if best else None
    return v.major if v is not None else None


def driver_branch(db: CompatDB, ccs: Iterable[ComputeCapability | None], need: str | None = None, *,
                  server: bool = False) -> BranchChoice:
    ccs = list(ccs)
    modules = kernel_modules(db, ccs)
    legacy = [r for r in (legacy_row(db, cc) for cc in ccs) if r]
    if legacy:
        row = min(legacy, key=lambda r: r["last_branch"])
        return BranchChoice(int(row["last_branch"]), True, str(row["architecture"]), modules)
    v = Version.parse(need) if need else None
    if v is not None and v.major is not None:
        return BranchChoice(v.major, modules=modules)
    if server:
        return BranchChoice(current_branch(db), modules=modules)
    return BranchChoice(None, modules=modules)
