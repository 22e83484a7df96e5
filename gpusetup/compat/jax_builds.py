"""JAX's builds: every jax release with its jaxlib (``jax/wheels``, derived from PyPI) × the GPU extras the
release declares (``jax[cuda13]``, ``jax[cuda12]``, ``jax[rocm7-local]``…) whose plugin wheels PyPI has for this
Python and platform. What the extras pull is read from jax's own Requires-Dist, so an extra whose plugin
release was never published (``jax[rocm7-local]==0.12.0.1`` asks for ``jax-rocm7-plugin==0.12.0.1.*``) or that
pins a jaxlib from Google's find-links page (``jaxlib==0.4.26+cuda12.cudnn89``) is not offered, with that fact
as the reason. JAX's documented minimums (compute capability, driver) stay in ``jax/extras``; where JAX runs
on which GPUs in ``jax/platforms`` (its install page)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from gpusetup.compat import builds as B
from gpusetup.compat import wheels as W
from gpusetup.compat.db import CompatDB
from gpusetup.compat.torch_builds import gfx_checks
from gpusetup.messages import msg
from gpusetup.model import Message
from gpusetup.versions import version_key as vkey

_CUDA_EXTRA = re.compile(r"^cuda(\d+)$")
_ROCM_EXTRA = re.compile(r"^rocm(\d*)(?:-local)?$")
# jax-rocm60-plugin is built for ROCm 6, jax-rocm7-plugin for ROCm 7
_ROCM_MAJOR = {"jax-rocm60-plugin": 6, "jax-rocm7-plugin": 7}


@functools.lru_cache(maxsize=4096)
def _req(spec: str) -> Requirement | None:
    try:
        return Requirement(spec)
    except InvalidRequirement:
        return None


def _reqs(specs: Sequence[str]) -> list[Requirement]:
    return [r for r in (_req(s) for s in specs) if r is not None]


def _matching(db: CompatDB, rows: list[dict[str, Any]], name: str, req: Requirement) -> list[dict[str, Any]]:
    m = B.memo(db)
    key = ("jax_matching", name, str(req.specifier))
    if key not in m:
        m[key] = [r for r in rows if req.specifier.contains(r["version"], prereleases=True)]
    return m[key]


class Jax:
    name = "jax"
    label = "JAX"
    package = "jax"
    kinds = frozenset({"cuda", "rocm"})

    def newest_known(self, db: CompatDB) -> str | None:
        rows = W.get(db).releases("jax")
        return str(rows[0]["version"]) if rows else None

    def _platform(self, db: CompatDB, env: B.Env) -> dict[str, Any] | None:
        plat_os = "wsl2" if env.wsl else env.os
        return next((r for r in db.rows("jax", "platforms") if r["os"] == plat_os and r["machine"] == env.machine), None)

    def _jaxlib(self, db: CompatDB, wh: W.Wheels, c: B.Cand, env: B.Env, version: str) -> dict[str, Any] | None:
        """The jaxlib of the same release, checked against this machine (JAX pins jaxlib to its own version)."""
        lib = wh.release("jaxlib", version)
        rows = [lib] if lib is not None else []
        if not rows:
            c.platform_bad = msg("reason.jax-no-jaxlib", version=version)
            return None
        return B.wheel_check(db, c, env, "jaxlib", rows, version)

    def candidates(self, db: CompatDB, env: B.Env, gpus: Sequence[B.GpuRef], kind: str) -> Iterator[B.Cand]:
        wh = W.get(db)
        extras_rows = {r["extra"]: r for r in db.rows("jax", "extras")}
        plat = self._platform(db, env)
        vendor_col = "nvidia" if kind == "cuda" else "amd"
        support = (plat or {}).get(vendor_col, "no")
        for order, rel in enumerate(wh.releases("jax")):
            declared = rel.get("extras") or {}
            pattern = _CUDA_EXTRA if kind == "cuda" else _ROCM_EXTRA
            names = sorted((e for e in declared if pattern.match(e)), key=lambda e: vkey(re.sub(r"\D", "", e) or "0"),
                           reverse=True)
            if kind == "rocm":  # the -local extras (system ROCm) are the ones JAX documents; "rocm" is their old name
                names = [e for e in names if e.endswith("-local")] or names
            for j, extra in enumerate(names):
                c = B.Cand("jax", rel["version"], extra, kind, order=order * 10 + j)
                c.packages = [f"jax[{extra}]=={rel['version']}"]
                if support == "no" or plat is None:
                    c.platform_bad = (
                        msg("reason.jax-native-windows") if env.os == "windows" and not env.wsl
                        else msg("reason.jax-no-platform-build", where=env.where(), machine=env.machine)
                    )
                    yield c
                    continue
                if env.jetson and kind == "cuda":
                    c.platform_bad = msg("reason.jax-jetson")
                    yield c
                    continue
                if support == "experimental":
                    c.notes.append(msg("note.jax-wsl-experimental") if kind == "cuda"
                                   else msg("note.jax-amd-experimental", where=env.where()))
                plugin = self._installable(db, wh, c, env, rel, extra)
                if kind == "cuda":
                    self._cuda(db, c, env, gpus, extra, extras_rows)
                elif plugin is not None:
                    self._rocm(db, c, gpus, plugin)
                else:  # an extra whose requirements name no ROCm plugin: nothing says which GPUs it serves
                    c.platform_bad = c.platform_bad or msg("reason.jax-extra-unknown", extra=extra, version=rel["version"])
                yield c

    def _installable(self, db: CompatDB, wh: W.Wheels, c: B.Cand, env: B.Env, rel: dict[str, Any],
                     extra: str) -> str | None:
        """The GPU-independent checks of jax[extra]==version (jaxlib, plugin, wheels for this machine), kept per
        database and machine target: a plan asks them again for every GPU subset."""
        m = B.memo(db)
        key = ("jax_installable", rel["version"], extra, env.target(), env.where_machine(), env.os, env.wsl)
        if key not in m:
            probe = B.Cand("jax", rel["version"], extra, c.kind)
            self._jaxlib(db, wh, probe, env, rel["version"])
            plugin = self._plugin(db, wh, probe, env, (rel.get("extras") or {})[extra], extra, rel["version"])
            m[key] = (probe.platform_bad, probe.python_bad, probe.python_range, plugin)
        platform_bad, python_bad, python_range, plugin = m[key]
        c.platform_bad = c.platform_bad or platform_bad
        c.python_bad = c.python_bad or python_bad
        c.python_range = python_range
        return plugin

    def _plugin(self, db: CompatDB, wh: W.Wheels, c: B.Cand, env: B.Env, specs: Sequence[str], extra: str,
                version: str) -> str | None:
        """Check every requirement of the extra that the data follows (jaxlib, the plugin): a local version is
        not on PyPI, a plugin release must exist and install here. Returns the plugin project's name."""
        plugin = None
        for req in _reqs(specs):
            name = req.name.lower().replace("_", "-")
            if any(s.version and "+" in s.version for s in req.specifier):
                c.platform_bad = c.platform_bad or msg("reason.jax-extra-not-on-pypi", version=version, extra=extra,
                                                       requirement=str(req))
                continue
            if not re.match(r"^jax-(cuda|rocm)\d+-plugin$", name):
                continue
            plugin = name
            rows = _matching(db, wh.releases(name), name, req)
            if not rows:
                c.platform_bad = c.platform_bad or msg("reason.jax-plugin-missing", version=version, extra=extra,
                                                       requirement=f"{name}{req.specifier}")
                continue
            if c.platform_bad is None and c.python_bad is None:
                B.wheel_check(db, c, env, name, rows, rows[0]["version"])
        return plugin

    def _cuda(self, db: CompatDB, c: B.Cand, env: B.Env, gpus: Sequence[B.GpuRef], extra: str,
              extras_rows: dict[str, dict[str, Any]]) -> None:
        ex = extras_rows.get(extra)
        if ex is None:
            c.platform_bad = c.platform_bad or msg("reason.jax-extra-unknown", extra=extra, version=c.version)
            return
        for g in gpus:
            if B.cc_below(g.cc, ex["min_cc"]):
                c.gpu_bad[g.index] = msg("reason.cc-too-low", min=ex["min_cc"], gpu=g.label, cc=str(g.cc))
        family = B.family_minimum(db, ex["cuda_major"], env.driver_os)
        base, why = ex["min_driver_linux"] if env.driver_os == "linux" else family, msg("why.jax-extra-driver", extra=extra)
        if family and (base is None or vkey(family) > vkey(base)):
            # JAX's page rounds to the branch ("≥ 580"); the CUDA family's own minimum (13.0 GA: 580.65.06) is the floor
            base, why = family, msg("why.cuda-family-driver", major=ex["cuda_major"])
        B.needed_driver(db, c, env, gpus, base, why)
        B.cudnn_pin(db, c, "jax", ex["cuda_major"], gpus)

    def _rocm(self, db: CompatDB, c: B.Cand, gpus: Sequence[B.GpuRef], plugin: str) -> None:
        """JAX compiles its GPU code at run time with the system's ROCm (the -local extras): the GPUs are those the
        ROCm release serves. gpusetup has that list per ROCm release only from PyTorch's ROCm wheels (uv's table),
        so it is used here and marked as not verified for JAX."""
        major = _ROCM_MAJOR.get(plugin)
        rows = [r for r in db.rows("rocm", "index_gfx") if major and r["index"].startswith(f"rocm{major}.")]
        if not rows:
            c.platform_bad = c.platform_bad or msg("reason.no-gfx-list", variant=c.variant)
            return
        row = max(rows, key=lambda r: vkey(r["index"][4:]))
        gfx_checks(c, row["gfx"], gpus)
        c.notes.append(msg("note.jax-rocm-local", major=major, plugin=plugin))
        c.unverified.append(msg("unverified.jax-rocm-gfx", index=row["index"]))

    def cpu_choice(self, db: CompatDB, env: B.Env) -> tuple[B.Cand | None, list[Message]]:
        """The newest jax whose jaxlib has a wheel for this Python and platform (any Python, failing that)."""
        notes: list[Message] = []
        wh = W.get(db)
        target = env.target()
        for strict in (True, False):
            t = target if strict else W.Target(target.platform, None, target.os_release)
            for rel in wh.releases("jax"):
                lib = wh.release("jaxlib", rel["version"])
                if lib is None or not W.fits(lib, t) or not W.fits(rel, t):
                    continue
                if not strict:
                    notes.append(msg("note.cpu-needs-other-python", package="JAX", python=env.py_text))
                pkgs = [f"jax=={rel['version']}"] + ([] if rel.get("extras") else [f"jaxlib=={lib['version']}"])
                return B.Cand("jax", rel["version"], "cpu", "cpu", packages=pkgs), notes
        return None, notes

    def backend_notes(self, db: CompatDB, cand: B.Cand) -> list[Message]:
        return []


FAMILY = Jax()
