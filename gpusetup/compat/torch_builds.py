"""PyTorch's builds: every release series with wheels (``pytorch/wheels``, derived from the index) × its CUDA /
ROCm / XPU variants (``pytorch/releases``: the download.pytorch.org indexes, from PyTorch's own pages), the
GPU code of each variant (``pytorch/arch_lists``, cuobjdump where the wheels are reachable), the gfx targets
of the ROCm indexes, Jetson's separate wheels and DirectML for AMD/Intel GPUs on native Windows."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from gpusetup.compat import builds as B
from gpusetup.compat import wheels as W
from gpusetup.compat.db import CompatDB
from gpusetup.messages import msg
from gpusetup.model import Choice, Message, Rejected
from gpusetup.versions import version_key as vkey

ROCM_WINDOWS_DOCS = ("https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/install/installrad/windows/"
                     "install-pytorch.html")
COMPANIONS = ("torchvision", "torchaudio")


def _release_rows(db: CompatDB) -> dict[str, dict[str, Any]]:
    return {r["version"]: r for r in db.rows("pytorch", "releases")}


def series_list(db: CompatDB) -> list[str]:
    """Every torch release series the data knows (wheels history ∪ the variants table), newest first."""
    m = B.memo(db)
    if "torch_series" not in m:
        found = {W.series_of(r["version"]) for r in W.get(db).releases("torch")} | set(_release_rows(db))
        m["torch_series"] = sorted(found, key=vkey, reverse=True)
    return m["torch_series"]


def platform_ok(db: CompatDB, kind: str, env: B.Env, version: str) -> bool:
    for row in db.rows("pytorch", "platforms"):
        if (
            row["kind"] == kind
            and row["os"] == env.wheel_os
            and row["machine"] == env.machine
            and B.in_range(vkey(version), row.get("torch_min"), row.get("torch_max"))
        ):
            return True
    return False


def arch_row(db: CompatDB, version: str, variant: str, env: B.Env) -> dict[str, Any] | None:
    """The first arch_lists row for this build (exact-release rows read from the wheels come first)."""
    m = B.memo(db)
    key = ("torch_arch", version, variant, env.wheel_os, env.machine)
    if key not in m:
        m[key] = next(
            (
                row
                for row in db.rows("pytorch", "arch_lists")
                if row["variant"] == variant
                and row["os"] == env.wheel_os
                and row["machine"] == env.machine
                and B.in_range(vkey(version), row["torch_min"], row["torch_max"])
            ),
            None,
        )
    return m[key]


def _pairs(spec: str | None, torch_version: str, project: str = "", version: str = "") -> bool:
    """Is a companion release (its Requires-Dist on torch: "2.12.0" or ">=2.14.0") made for this torch release?
    torchaudio 2.11.0 declares no torch requirement; torchaudio's releases carry torch's own version numbers
    (PyTorch's RELEASE.md compatibility matrix), so without a pin the same series pairs."""
    if not spec:
        return project == "torchaudio" and bool(version) and W.series_of(version) == W.series_of(torch_version)
    m = re.match(r"^\s*(?:==)?\s*(\d+(?:\.\d+)*)\s*$", spec)
    if m:
        return vkey(m.group(1)) == vkey(torch_version)
    low = re.search(r">=\s*(\d+\.\d+)", spec)
    return bool(low) and W.series_of(low.group(1)) == W.series_of(torch_version)  # type: ignore[union-attr]


def _made_for(db: CompatDB, project: str, torch_version: str) -> list[dict[str, Any]]:
    """The releases of a companion project made for this torch release, newest first (kept per database)."""
    m = B.memo(db)
    key = ("made_for", project, torch_version)
    if key not in m:
        m[key] = [r for r in W.get(db).releases(project) if _pairs(r.get("torch"), torch_version, project, r["version"])]
    return m[key]


def packages(db: CompatDB, series: str, chosen: dict[str, Any] | None, env: B.Env) -> tuple[list[str], list[Message]]:
    """The pins for the series on this machine (kept per database and machine target; see :func:`_packages`)."""
    m = B.memo(db)
    key = ("torch_packages", series, chosen["version"] if chosen else None, env.target(), env.where_machine())
    if key not in m:
        m[key] = _packages(db, series, chosen, env)
    return m[key]


def _packages(db: CompatDB, series: str, chosen: dict[str, Any] | None, env: B.Env) -> tuple[list[str], list[Message]]:
    """torch's pin for the series (the exact release when a newer one of the series has no wheel here) and the
    torchvision / torchaudio releases made for it (Requires-Dist ``torch==X``) that have a wheel here."""
    wh = W.get(db)
    rows = wh.series("torch", series)
    newest = rows[0] if rows else None
    pkgs = [B.series_pin("torch", series, chosen, newest)]
    notes: list[Message] = []
    exact = chosen is not None and chosen is not newest
    torch_version = chosen["version"] if chosen else (newest["version"] if newest else None)
    if torch_version is None:
        return pkgs, notes
    target = env.target()
    for proj in COMPANIONS:
        made_for = _made_for(db, proj, torch_version)
        if not made_for:
            continue
        fit = next((r for r in made_for if W.fits(r, target)), None)
        if fit is None:
            notes.append(msg("note.companion-no-wheel", package=proj, torch=torch_version, python=env.py_text,
                             where=env.where_machine()))
            continue
        pkgs.append(f"{proj}=={fit['version']}" if exact else f"{proj}=={W.series_of(fit['version'])}.*")
    return pkgs, notes


class Torch:
    name = "pytorch"
    label = "PyTorch"
    package = "torch"
    kinds = frozenset({"cuda", "rocm", "xpu", "mps"})

    def newest_known(self, db: CompatDB) -> str | None:
        rows = W.get(db).releases("torch")
        if rows:
            return str(rows[0]["version"])
        vals = [r.get("latest_known") or r["version"] for r in db.rows("pytorch", "releases")]
        return max(vals, key=vkey) if vals else None

    def candidates(self, db: CompatDB, env: B.Env, gpus: Sequence[B.GpuRef], kind: str) -> Iterator[B.Cand]:
        url = db.rows("pytorch", "indexes")[0]["url"]
        rels = _release_rows(db)
        wh = W.get(db)
        for order, series in enumerate(series_list(db)):
            rel = rels.get(series)
            rows = wh.series("torch", series)
            pypi_build = None
            if rows:
                pypi_build = (rows[0].get("builds") or {}).get(env.platform)
            if kind == "cuda":
                variants = sorted(rel["cuda_variants"], key=lambda x: vkey(B.cuda_of_variant(x)), reverse=True) if rel \
                    else ([pypi_build] if pypi_build and pypi_build.startswith("cu") else [])
            elif kind == "rocm":
                variants = list(rel["rocm_variants"]) if rel else []
            elif kind == "xpu":
                variants = ["xpu"] if rel and rel.get("xpu") else []
            else:
                variants = [kind]
            for j, variant in enumerate(variants):
                c = B.Cand("pytorch", series, variant, kind, order=order * 10 + j)
                from_pypi = rel is None  # a series the variants table does not list: PyPI's own build only
                c.index_url = None if (kind == "mps" or from_pypi) else url.format(variant=variant)
                chosen = self._wheels(db, c, env, rel, rows, series)
                c.packages, notes = packages(db, series, chosen, env)
                c.packages, c.notes = list(c.packages), c.notes + list(notes)
                if rel and rel.get("verified") is False and rel.get("note"):
                    c.unverified.append(msg("unverified.release", package="torch", version=series, detail=rel["note"]))
                if not (platform_ok(db, kind, env, series) or (from_pypi and pypi_build == variant)):
                    c.platform_bad = msg("reason.torch-no-platform-build", kind=B.kind_word(kind), version=series,
                                         where=env.where(), machine=env.machine)
                elif kind == "cuda":
                    self._cuda_checks(db, c, env, gpus)
                elif kind == "rocm":
                    self._rocm_checks(db, c, gpus)
                elif kind == "mps":
                    c.env["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"
                    c.notes.append(msg("note.env-mps-fallback"))
                yield c

    def _wheels(self, db: CompatDB, c: B.Cand, env: B.Env, rel: dict[str, Any] | None, rows: list[dict[str, Any]],
                series: str) -> dict[str, Any] | None:
        """The release of the series this machine installs (from the wheels history), or the data's Python range
        when the history has no row for the series (an older data bundle)."""
        if rows:
            return B.wheel_check(db, c, env, "torch", rows, series)
        if rel is not None:
            B.python_check(c, env, rel.get("python_min"), rel.get("python_max"))
        return None

    def _cuda_checks(self, db: CompatDB, c: B.Cand, env: B.Env, gpus: Sequence[B.GpuRef]) -> None:
        jetson = jetson_block(db, env, gpus)
        if jetson:
            c.platform_bad = jetson
            return
        arch = arch_row(db, c.version, c.variant, env)
        if arch is None:
            c.platform_bad = msg("reason.no-arch-list", where=env.where(), machine=env.machine)
            return
        if arch.get("verified") is False:
            c.unverified.append(
                msg("unverified.arch-list", package="torch", version=c.version, variant=c.variant,
                    detail=arch.get("note", ""))
            )
        cuda = B.cuda_of_variant(c.variant)
        major = vkey(cuda).major or 0
        uses_ptx = False
        for g in gpus:
            if not g.cc:
                continue
            how = B.coverage(g.cc, arch["cc"], arch.get("ptx"))
            highest = B.highest_cc(db, cuda) if how == "ptx" else None
            if how is None:
                c.gpu_bad[g.index] = msg("reason.no-kernels-cc", cc=str(g.cc), gpu=g.label)
            elif B.cc_above(g.cc, highest):
                # PTX alone is not enough when the wheel's pinned CUDA libraries (cuBLAS, cuDNN) predate the GPU.
                c.gpu_bad[g.index] = msg("reason.ptx-libraries-too-old", cc=str(g.cc), gpu=g.label, cuda=cuda,
                                         highest=highest)
            elif how == "ptx":
                uses_ptx = True
                c.notes.append(msg("note.ptx-jit", gpu=g.label, cc=str(g.cc)))
        base = B.family_minimum(db, major, env.driver_os) if major >= 11 else B.toolkit_driver(db, cuda, env.driver_os)
        why = msg("why.cuda-family-driver", major=major)
        if uses_ptx:
            t3 = B.toolkit_driver(db, cuda, env.driver_os)
            if t3 and (base is None or vkey(t3) > vkey(base)):
                base, why = t3, msg("why.ptx-jit-driver", cuda=cuda)
        B.needed_driver(db, c, env, gpus, base, why)

    def _rocm_checks(self, db: CompatDB, c: B.Cand, gpus: Sequence[B.GpuRef]) -> None:
        row = next((r for r in db.rows("rocm", "index_gfx") if r["index"] == c.variant), None)
        if row is None:
            c.platform_bad = msg("reason.no-gfx-list", variant=c.variant)
            return
        gfx_checks(c, row["gfx"], gpus)

    def cpu_choice(self, db: CompatDB, env: B.Env) -> tuple[B.Cand | None, list[Message]]:
        """The newest CPU build for this Python (or, failing that, for any Python) — never chosen silently."""
        notes: list[Message] = []
        kind = "mps" if (env.os == "macos" and env.machine == "arm64") else "cpu"
        rels = _release_rows(db)
        for strict in (True, False):
            for series in series_list(db):
                if not platform_ok(db, kind, env, series) and not platform_ok(db, "cpu", env, series):
                    continue
                c = B.Cand("pytorch", series, "cpu", "cpu")
                rows = W.get(db).series("torch", series)
                chosen = self._wheels(db, c, env, rels.get(series), rows, series)
                if strict and (c.python_bad or c.platform_bad):
                    continue
                if rows and chosen is None and c.platform_bad:
                    continue  # no wheel for this OS release at all: another Python would not help
                c.python_bad = c.platform_bad = None
                pkgs, pnotes = packages(db, series, chosen, env)
                c.packages = list(pkgs)
                notes += pnotes
                c.index_url = None if env.os == "macos" else db.rows("pytorch", "indexes")[0]["url"].format(variant="cpu")
                if not strict:
                    notes.append(msg("note.cpu-needs-other-python", package="torch", python=env.py_text))
                return c, notes
        return None, notes

    def backend_notes(self, db: CompatDB, cand: B.Cand) -> list[Message]:
        backend = {"rocm": msg("note.backend-rocm"), "xpu": msg("note.backend-xpu"), "mps": msg("note.backend-mps")}
        notes = []
        if cand.kind in backend:
            notes.append(backend[cand.kind])
        if cand.kind == "rocm":
            newer = [r["version"] for r in db.rows("pytorch", "releases")
                     if vkey(r["version"]) > vkey(cand.version) and not r["rocm_variants"]]
            if newer:
                notes.append(msg("note.rocm-newer-unknown", versions=B.span(newer)))
        return notes


def gfx_checks(c: B.Cand, gfx_list: Sequence[str], gpus: Sequence[B.GpuRef]) -> None:
    """Which AMD GPUs a build's gfx targets serve; consumer RDNA2 cards (gfx1031-gfx1036) run the gfx1030 kernels
    with HSA_OVERRIDE_GFX_VERSION=10.3.0 (ROCm/ROCm#2353) — process-wide, so only when every GPU is RDNA2."""
    override = "gfx1030" in gfx_list and bool(gpus) and all(
        g.gfx and re.fullmatch(r"gfx103[0-6]", g.gfx) for g in gpus)
    for g in gpus:
        if not g.gfx:
            c.gpu_bad[g.index] = msg("reason.gfx-unknown", gpu=g.label)
        elif g.gfx not in gfx_list and override:
            c.env["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"
            c.notes.append(msg("note.env-hsa-override", gpu=g.label, gfx=g.gfx, value="10.3.0", target="gfx1030",
                               source="https://github.com/ROCm/ROCm/issues/2353"))
        elif g.gfx not in gfx_list:
            c.gpu_bad[g.index] = msg("reason.no-kernels-gfx", gfx=g.gfx, gpu=g.label)


def jetson_block(db: CompatDB, env: B.Env, gpus: Sequence[B.GpuRef]) -> Message | None:
    """Why server-Arm (SBSA) CUDA wheels cannot be used on this Jetson, or None when they can."""
    if not env.jetson:
        return None
    for g in gpus:
        row = next((r for r in db.rows("pytorch", "jetson") if B.cc_in(g.cc, r["cc_min"], r["cc_max"])), None)
        if row is None or not row["sbsa_wheels"]:
            hint = row["note"] if row else msg("hint.jetson-no-data")
            if row is not None and row.get("verified", db.table("pytorch", "jetson").verified) is False:
                return msg("reason.jetson-sbsa-unverified", gpu=g.label, hint=hint)
            return msg("reason.jetson-sbsa", gpu=g.label, hint=hint)
    return None


def directml(db: CompatDB, kind: str, env: B.Env) -> Choice | Rejected | None:
    """DirectML for AMD and Intel GPUs on native Windows when no native build works: the Choice, or why not."""
    from gpusetup.compat.resolver import rejected  # lazy: a cycle (the resolver imports this module)

    if kind not in ("rocm", "xpu") or env.os != "windows" or env.wsl:
        return None
    rows = [r for r in db.rows("pytorch", "directml") if r["os"] == "windows" and r["machine"] == env.machine]
    if not rows:
        return None
    r = rows[0]
    c = B.Cand("pytorch", r["version"], "directml", kind)
    B.python_check(c, env, r["python_min"], r["python_max"])
    if c.python_bad is not None or (env.python is not None and env.python.free_threaded):
        return rejected(f"{r['package']} {r['version']}", msg("reason.directml-python", version=r["version"],
                        lo=r["python_min"], hi=r["python_max"], python=env.py_text))
    pkg = f"{r['package']}=={r['version']}"
    return Choice(version=r["version"], variant="directml", index_url=None, packages=[pkg],
                  commands=[f'python -m pip install "{pkg}"'],
                  python=env.py_text if env.python else None)


FAMILY = Torch()
