"""TensorFlow's builds: every release series TensorFlow tested (``tensorflow/tested_configs``, read from its
docs) × how its GPU build is installed there (``tensorflow/gpu_builds``: ``[and-cuda]`` from 2.14, CUDA/cuDNN
from conda or the system before it, native Windows up to 2.10); the wheels each series has
(``tensorflow/wheels``) and the GPU code inside them (``build_info.py``'s CUDA capabilities, or cuobjdump in
``tensorflow/arch_lists``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from gpusetup.compat import builds as B
from gpusetup.compat import wheels as W
from gpusetup.compat.db import CompatDB
from gpusetup.messages import msg
from gpusetup.model import Message
from gpusetup.versions import version_key as vkey


def _configs(db: CompatDB, os_name: str) -> list[dict[str, Any]]:
    table = "tested_configs_windows" if os_name == "windows" else "tested_configs"
    rows = B.opt_rows(db, "tensorflow", table)
    return sorted(rows, key=lambda r: vkey(r["version"]), reverse=True)


def chosen_row(db: CompatDB, c: B.Cand) -> dict[str, Any] | None:
    """The newest tensorflow release of the candidate's series (its [and-cuda] pins)."""
    rows = W.get(db).series("tensorflow", c.version)
    return rows[0] if rows else None


def arch_of(db: CompatDB, series: str, env: B.Env, built: dict[str, Any] | None) -> dict[str, Any] | None:
    """The GPU code of this release's wheel: tensorflow/arch_lists (cuobjdump) for the series, else what its
    ``build_info.py`` lists (TF_CUDA_COMPUTE_CAPABILITIES: ``sm_XY`` is a cubin, ``compute_XY`` a cubin and PTX
    for XY — cuobjdump shows exactly that for 2.16-2.21)."""
    m = B.memo(db)
    key = ("tf_arch", series, env.wheel_os, env.machine)
    if key not in m:
        m[key] = next(
            (row for row in B.opt_rows(db, "tensorflow", "arch_lists")
             if row["os"] == env.wheel_os and row["machine"] == env.machine
             and B.in_range(vkey(series), row["tf_min"], row.get("tf_max"))),
            None,
        )
    if m[key] is not None:
        return m[key]
    codes = (built or {}).get("arch")
    if not codes:
        return None
    sass = [f"{d[:-1]}.{d[-1]}" for a in codes if (d := re.sub(r"\D", "", a))]
    ptx = [f"{d[:-1]}.{d[-1]}" for a in codes if a.startswith("compute_") and (d := re.sub(r"\D", "", a))]
    return {"cc": sass, "ptx": max(ptx, key=vkey) if ptx else None, "from": "build_info"}


class TensorFlow:
    name = "tensorflow"
    label = "TensorFlow"
    package = "tensorflow"
    kinds = frozenset({"cuda"})

    def newest_known(self, db: CompatDB) -> str | None:
        rows = W.get(db).releases("tensorflow")
        if rows:
            return str(rows[0]["version"])
        vals = [r.get("latest_known") or r["version"] for r in db.rows("tensorflow", "tested_configs")]
        return max(vals, key=vkey) if vals else None

    def candidates(self, db: CompatDB, env: B.Env, gpus: Sequence[B.GpuRef], kind: str) -> Iterator[B.Cand]:
        wh = W.get(db)
        builds = db.rows("tensorflow", "gpu_builds")
        configs: dict[str, dict[str, dict[str, Any]]] = {}
        for os_name in ("linux", "windows"):
            for cfg in _configs(db, os_name):
                configs.setdefault(cfg["version"], {})[os_name] = cfg
        for order, series in enumerate(sorted(configs, key=vkey, reverse=True)):
            rows = wh.series("tensorflow", series)
            for b in builds:
                if not B.in_range(vkey(series), b["tf_min"], b.get("tf_max")):
                    continue
                tested = configs[series].get(b["os"])
                if tested is None:
                    continue
                cfg = tested
                c = B.Cand("tensorflow", series, b["variant"], "cuda", order=order)
                chosen = self._wheels(db, c, env, rows, cfg, series)
                c.packages = [b["requirement"].format(version=B.series_pin("tensorflow", series, chosen,
                                                                          rows[0] if rows else None).split("==")[1])]
                c.packages += list(b.get("packages", []))
                c.conda = list(b.get("conda", []))
                if b.get("verified") is False:
                    c.unverified.append(msg("unverified.build", package="tensorflow", variant=b["variant"],
                                            detail=b.get("note", "")))
                if b["os"] == "windows":
                    c.notes.append(msg("note.tf-last-windows-gpu", version=b.get("tf_max") or series,
                                       detail=b.get("note", "")))
                elif b["variant"] != "and-cuda":
                    c.notes.append(msg("note.tf-system-cuda", version=series, cuda=cfg["cuda"], cudnn=cfg["cudnn"],
                                       commands="; ".join([*b.get("conda", []), *b.get("env_setup", [])])
                                       or f"CUDA {cfg['cuda']}, cuDNN {cfg['cudnn']}",
                                       source=(b.get("provenance") or {}).get("source", "")))
                if not (env.wheel_os == b["os"] and env.machine == b["machine"]):
                    if b["os"] == "windows":
                        continue  # the Windows-only build is not an option elsewhere
                    c.platform_bad = self._platform_reason(env)
                    yield c
                    continue
                built = ((chosen or (rows[0] if rows else {})).get("builds") or {}).get(env.platform)
                self._gpu_checks(db, c, cfg, env, gpus, built)
                yield c

    def _wheels(self, db: CompatDB, c: B.Cand, env: B.Env, rows: list[dict[str, Any]], cfg: dict[str, Any],
                series: str) -> dict[str, Any] | None:
        if rows:
            return B.wheel_check(db, c, env, "tensorflow", rows, series)
        B.python_check(c, env, cfg.get("python_min"), cfg.get("python_max"))
        return None

    @staticmethod
    def _platform_reason(env: B.Env) -> Message:
        if env.os == "windows" and not env.wsl:
            return msg("reason.tf-native-windows")
        return msg("reason.tf-no-platform-build", where=env.where(), machine=env.machine)

    def _gpu_checks(self, db: CompatDB, c: B.Cand, cfg: dict[str, Any], env: B.Env, gpus: Sequence[B.GpuRef],
                    built: dict[str, Any] | None) -> None:
        cuda = cfg["cuda"]
        major = vkey(cuda).major or 0
        min_cc = next(
            (r for r in db.rows("tensorflow", "min_cc") if B.in_range(vkey(c.version), r["tf_min"], r.get("tf_max"))),
            None,
        )
        highest = B.highest_cc(db, cuda)
        arch = arch_of(db, c.version, env, built)
        if arch is not None:
            # [and-cuda] with lower-bound pins brings the newest CUDA libraries of the major; exact pins (2.15-2.19)
            # and CUDA installed beside TensorFlow keep the tested release's, which know no newer GPU
            open_pins = c.variant == "and-cuda" and str((chosen_row(db, c) or {}).get("and_cuda", {}).get("cuda", "")).startswith(">=")
            self._kernel_checks(db, c, arch, gpus, cuda, None if open_pins else highest)
        elif min_cc and min_cc.get("verified", db.table("tensorflow", "min_cc").verified) is False:
            c.unverified.append(msg("unverified.tf-min-cc", version=c.version, detail=min_cc.get("note", "")))
        for g in gpus:
            if not g.cc or arch is not None:
                continue
            if min_cc and B.cc_below(g.cc, min_cc["cc_min"]):
                c.gpu_bad[g.index] = msg(
                    "reason.cc-too-low" if db.table("tensorflow", "min_cc").verified else "reason.cc-too-low-inferred",
                    min=min_cc["cc_min"], gpu=g.label, cc=str(g.cc),
                )
            elif B.cc_above(g.cc, highest):
                c.gpu_bad[g.index] = msg("reason.tf-no-ptx-record", cc=str(g.cc), gpu=g.label, cuda=cuda,
                                         version=c.version)
        base = B.min_driver_for_cuda(db, cuda, env.driver_os) if major < 11 else B.family_minimum(db, major, env.driver_os)
        why = msg("why.cuda-family-driver", major=major)
        if env.wsl:
            wsl = db.rows("tensorflow", "wsl")[0]
            if vkey(wsl["driver_min"]) > vkey(base or ""):
                base, why = wsl["driver_min"], msg("why.wsl-driver")
        B.needed_driver(db, c, env, gpus, base, why)
        B.cudnn_pin(db, c, "tensorflow", major, gpus)

    def _kernel_checks(self, db: CompatDB, c: B.Cand, arch: dict[str, Any], gpus: Sequence[B.GpuRef], cuda: str,
                       highest: str | None) -> None:
        """Which GPUs the wheel's cubins serve, which only its PTX, and where PTX JIT is reported to fail."""
        cubins = ", ".join(arch["cc"])
        ptx = arch.get("ptx") or "none"
        for g in gpus:
            if not g.cc:
                continue
            how = B.coverage(g.cc, arch["cc"], arch.get("ptx"))
            if how is None:
                c.gpu_bad[g.index] = msg("reason.tf-no-kernels-cc", cc=str(g.cc), gpu=g.label, cubins=cubins, ptx=ptx)
            elif how == "ptx":
                fail = next(
                    (
                        r
                        for r in B.opt_rows(db, "tensorflow", "ptx_jit_failures")
                        if B.in_range(vkey(c.version), r["tf_min"], r.get("tf_max"))
                        and B.cc_in(g.cc, r["cc_min"], r.get("cc_max"))
                    ),
                    None,
                )
                if fail:
                    params = {"cc": str(g.cc), "gpu": g.label, "ptx": ptx, "error": fail["error"],
                              "source": fail["sources"][0]}
                    if fail.get("verified") is False:
                        c.gpu_bad[g.index] = msg("reason.tf-ptx-jit-fails-unverified", **params)
                        c.unverified.append(msg("unverified.tf-ptx-jit", cc=str(g.cc), detail=fail["note"]))
                    else:
                        c.gpu_bad[g.index] = msg("reason.tf-ptx-jit-fails", **params)
                elif B.cc_above(g.cc, highest):
                    # PTX alone is not enough when the CUDA libraries the release was built with predate the GPU
                    c.gpu_bad[g.index] = msg("reason.ptx-libraries-too-old", cc=str(g.cc), gpu=g.label, cuda=cuda,
                                             highest=highest)
                else:
                    c.notes.append(msg("note.tf-ptx-jit", gpu=g.label, version=c.version, cc=str(g.cc), ptx=ptx))

    def cpu_choice(self, db: CompatDB, env: B.Env) -> tuple[B.Cand | None, list[Message]]:
        """The newest TensorFlow with a wheel for this Python and platform (on a Mac before 2.13:
        tensorflow-macos); failing that, the newest for any Python."""
        notes: list[Message] = []
        wh = W.get(db)
        projects = ["tensorflow"] + (["tensorflow-macos"] if env.wheel_os == "macos" else [])
        target = env.target()
        if wh.has("tensorflow"):
            for strict in (True, False):
                relaxed = target if strict else W.Target(target.platform, None, target.os_release)
                for project in projects:
                    row = wh.newest_fitting(project, None, relaxed)
                    if row is None:
                        continue
                    series = W.series_of(row["version"])
                    chosen = wh.newest_fitting(project, wh.series(project, series), relaxed)
                    pin = B.series_pin(project, series, chosen, wh.series(project, series)[0])
                    if not strict:
                        notes.append(msg("note.cpu-needs-other-python", package="TensorFlow", python=env.py_text))
                    return B.Cand("tensorflow", series, "cpu", "cpu", packages=[pin]), notes
            return None, notes
        rows = _configs(db, "linux")
        fits = [r for r in rows if env.python is None or B.in_range(env.python.release, r["python_min"], r["python_max"])]
        rel = (fits or rows)[0]
        if not fits:
            notes.append(msg("note.cpu-needs-other-python", package="TensorFlow", python=env.py_text))
        return B.Cand("tensorflow", rel["version"], "cpu", "cpu", packages=[f"tensorflow=={rel['version']}.*"]), notes

    def backend_notes(self, db: CompatDB, cand: B.Cand) -> list[Message]:
        return []


FAMILY = TensorFlow()
