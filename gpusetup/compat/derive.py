"""Turn what the indexes and wheels say (:mod:`gpusetup.compat.refresh`) into proposed compat-data rows.

A :class:`Fact` is one derived value set for one row of one table, with the URL it was read from, how it was
derived and the date. :func:`propose` applies facts to a copy of the compat files (rows matched by their key,
new rows added, every touched row marked ``verified`` with its ``provenance``); :func:`unified_diff` shows
the change for review. The maintainers' tool (``scripts/refresh_compat.py``) writes that diff and a facts
report; it never edits ``resources/compat`` itself.
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import functools
import json
import logging
import operator
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gpusetup.compat import refresh as R

log = logging.getLogger("gpusetup.compat.derive")


@dataclass
class Fact:
    file: str  # "pytorch"
    table: str  # "releases"
    key: dict[str, Any]  # how the row is found: {"version": "2.15"}
    values: dict[str, Any]  # fields to set
    source: str  # URL read
    how: str  # plain words: "python tags of the wheels on the index", "cuobjdump --list-elf/--list-ptx on …"
    date: str
    new_row: dict[str, Any] = field(default_factory=dict)  # defaults for fields a new row needs
    complete: bool = True  # the fact settles every claim of the row (else a row marked unverified stays so)


@dataclass
class Options:
    index_url: str = "https://pypi.org/simple/"
    series: Sequence[str] = ()  # only these release series ("2.15"); empty = all the data knows + newer
    min_series: dict[str, str] = field(default_factory=dict)  # per project: ignore older series
    gpu_code: bool = False  # run cuobjdump on the CUDA libraries (downloads the library members)
    gpu_code_series: Sequence[str] = ()  # limit cuobjdump to these series (empty = the newest of each project)
    max_library_bytes: int = 256 << 20  # the largest library member fetched for cuobjdump
    cuobjdump: str | None = None
    python_probe: str = "3.12"  # Python used to evaluate markers in Requires-Dist
    today: str = field(default_factory=lambda: _dt.date.today().isoformat())


@dataclass
class Context:
    http: R.Http
    runner: Any
    options: Options
    problems: list[str] = field(default_factory=list)  # what could not be read (reported, never hidden)


def _wheels(ctx: Context, project: str) -> tuple[list[R.Wheel], str]:
    files, page = R.list_files(ctx.http, ctx.options.index_url, project)
    wheels = [w for w in (R.parse_wheel(f) for f in files) if w and not w.prerelease and not w.file.yanked]
    return wheels, page


def _series_of(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _skey(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", s))


def _py_range(wheels: Iterable[R.Wheel]) -> tuple[str | None, str | None, list[str]]:
    std: set[str] = set()
    ft: set[str] = set()
    for w in wheels:
        for p in w.pythons:
            if p.endswith("t"):
                ft.add(p)
            elif re.fullmatch(r"\d+\.\d+", p):
                std.add(p)
    ordered = sorted(std, key=_skey)
    return (ordered[0] if ordered else None, ordered[-1] if ordered else None, sorted(ft, key=_skey))


def _pick(wheels: Sequence[R.Wheel], version: str, platform: str, python: str | None = None) -> R.Wheel | None:
    cands = [w for w in wheels if w.version == version and platform in w.platforms and w.local is None]
    if python:
        exact = [w for w in cands if python in w.pythons]
        cands = exact or cands
    return sorted(cands, key=lambda w: [_skey(p) for p in w.pythons], reverse=True)[0] if cands else None


def _gpu_code(ctx: Context, w: R.Wheel, libraries: Sequence[str]) -> R.GpuCode | None:
    """cuobjdump on the first of ``libraries`` present in the wheel (fetched by range, size-bounded)."""
    tool = R.find_cuobjdump(ctx.runner, ctx.options.cuobjdump)
    if tool is None:
        ctx.problems.append("cuobjdump not found (pip install nvidia-cuda-cuobjdump, or pass --cuobjdump)")
        return None
    z = R.RemoteZip(ctx.http, w.file.url, w.file.size)
    for lib in libraries:
        found = z.find(functools.partial(operator.eq, lib))
        if not found:
            continue
        m = found[0]
        if m.size > ctx.options.max_library_bytes:
            ctx.problems.append(
                f"{w.file.filename}: {lib} is {m.size >> 20} MiB, above --max-library-mb "
                f"({ctx.options.max_library_bytes >> 20} MiB); its GPU code was not read"
            )
            continue
        with tempfile.TemporaryDirectory(prefix="gpusetup-refresh-") as tmp:
            path = Path(tmp) / Path(lib).name
            path.write_bytes(z.read(m, ctx.options.max_library_bytes))
            code = R.gpu_code(ctx.runner, tool, path)
        code.library = lib
        if code.sass or code.ptx or code.specific:
            return code
        ctx.problems.append(f"{w.file.filename}: {lib} holds no GPU code")
    ctx.problems.append(f"{w.file.filename}: none of {', '.join(libraries)} is in the wheel")
    return None


def _want_series(ctx: Context, project: str, series: str) -> bool:
    if ctx.options.series and series not in ctx.options.series:
        return False
    floor = ctx.options.min_series.get(project)
    return not (floor and _skey(series) < _skey(floor))


def _want_code(ctx: Context, series: str, newest: str) -> bool:
    if not ctx.options.gpu_code:
        return False
    return series in ctx.options.gpu_code_series if ctx.options.gpu_code_series else series == newest


def _code_note(code: R.GpuCode, w: R.Wheel) -> str:
    spec = f"; arch-specific cubins {', '.join(code.specific)}" if code.specific else ""
    ptx = f"; PTX {', '.join(code.ptx)}" if code.ptx else "; no PTX"
    return f"cuobjdump on {code.library} of {w.file.filename}{spec}{ptx}"


# ------------------------------------------------------------------------------------------ PyTorch

# libtorch_cuda.so (~500 MiB) holds the kernels and any PTX; smaller CUDA libraries such as libtorch_cuda_linalg.so
# carry the same cubins but never the PTX, so they cannot answer "does this wheel JIT on a newer GPU".
TORCH_LIBRARIES = ("torch/lib/libtorch_cuda.so",)


def derive_torch(ctx: Context) -> list[Fact]:
    wheels, page = _wheels(ctx, "torch")
    facts: list[Fact] = []
    by_series: dict[str, list[R.Wheel]] = {}
    for wheel in wheels:
        if wheel.local is None:
            by_series.setdefault(_series_of(wheel.version), []).append(wheel)
    all_series = sorted(by_series, key=_skey)
    newest_series = all_series[-1] if all_series else ""
    d = ctx.options.today
    for series in all_series:
        if not _want_series(ctx, "torch", series):
            continue
        ws = by_series[series]
        latest = max({w.version for w in ws}, key=R.version_key)
        linux = [w for w in ws if "linux-x86_64" in w.platforms]
        lo, hi, ft = _py_range(linux or ws)
        values: dict[str, Any] = {"latest_known": latest, "python_min": lo, "python_max": hi}
        how = [f"versions and Python tags of the {len(ws)} torch {series}.x wheels on the index"
               + (f" (free-threaded: {', '.join(ft)})" if ft else "")]
        for plat, fld in (("linux-x86_64", "pypi_default_linux"), ("linux-aarch64", "pypi_default_aarch64")):
            w = _pick(ws, latest, plat, ctx.options.python_probe)
            if w is None:
                continue
            try:
                meta = R.wheel_metadata(ctx.http, w.file)
            except R.RefreshError as exc:
                ctx.problems.append(str(exc))
                continue
            machine = plat.split("-", 1)[1]
            pins = R.cuda_pins(R.requirements_for(meta, machine=machine, python=w.pythons[0]))
            values[fld] = pins.variant or ("cpu" if not pins.evidence else None)
            how.append(f"{fld} from Requires-Dist of {w.file.filename} ({meta.how}): "
                       + (", ".join(pins.evidence) or "no CUDA dependencies"))
            if pins.variant and _want_code(ctx, series, newest_series):
                try:
                    code = _gpu_code(ctx, w, TORCH_LIBRARIES)
                except R.RefreshError as exc:
                    ctx.problems.append(str(exc))
                    code = None
                if code and (code.sass or code.ptx):
                    facts.append(Fact(
                        "pytorch", "arch_lists",
                        {"torch_min": series, "torch_max": series, "variant": pins.variant, "os": "linux", "machine": machine},
                        {"cc": code.sass, "ptx": code.ptx_max, "note": _code_note(code, w)},
                        w.file.url.split("#")[0], "cuobjdump --list-elf/--list-ptx on the wheel's CUDA library", d,
                    ))
        facts.append(Fact(
            "pytorch", "releases", {"version": series}, values, page, "; ".join(how), d, complete=False,
            new_row={"version": series, "latest_known": latest, "python_min": lo, "python_max": hi, "torchvision": None,
                     "torchaudio": None, "cuda_variants": [], "rocm_variants": [], "xpu": False,
                     "pypi_default_linux": None,
                     "note": "added by the refresh tool from the index; download.pytorch.org variants not read"},
        ))
    return facts


# --------------------------------------------------------------------------------------- TensorFlow

# libtensorflow_framework.so.2 (~160 MiB) carries the GPU code with the wheel's build flags; libtensorflow_cc.so.2
# (~1 GiB) is the fallback.
TF_LIBRARIES = ("tensorflow/libtensorflow_framework.so.2", "tensorflow/libtensorflow_cc.so.2")


def derive_tensorflow(ctx: Context) -> list[Fact]:
    wheels, page = _wheels(ctx, "tensorflow")
    facts: list[Fact] = []
    by_series: dict[str, list[R.Wheel]] = {}
    for wheel in wheels:
        by_series.setdefault(_series_of(wheel.version), []).append(wheel)
    all_series = sorted(by_series, key=_skey)
    newest_series = all_series[-1] if all_series else ""
    d = ctx.options.today
    for series in all_series:
        if not _want_series(ctx, "tensorflow", series):
            continue
        ws = by_series[series]
        latest = max({w.version for w in ws}, key=R.version_key)
        linux = [w for w in ws if "linux-x86_64" in w.platforms]
        lo, hi, _ft = _py_range(linux)
        values: dict[str, Any] = {"latest_known": latest, "python_min": lo, "python_max": hi}
        how = [f"versions and Python tags of the {len(linux)} Linux x86_64 tensorflow {series}.x wheels on the index"]
        w = _pick(ws, latest, "linux-x86_64", ctx.options.python_probe)
        if w is not None:
            try:
                meta = R.wheel_metadata(ctx.http, w.file)
                if "and-cuda" in meta.provides_extra:
                    pins = R.cuda_pins(R.requirements_for(meta, python=w.pythons[0], extras=["and-cuda"]))
                    if pins.cuda:
                        values["cuda"] = ".".join(pins.cuda.lstrip(">=").split(".")[:2])
                    if pins.cudnn:
                        m = re.search(r"(?:>=|==)(\d+\.\d+)", pins.cudnn)
                        if m:
                            values["cudnn"] = m.group(1)
                    how.append(f"cuda/cudnn from the [and-cuda] Requires-Dist of {w.file.filename} ({meta.how}): "
                               + ", ".join(pins.evidence))
                else:
                    how.append(f"{w.file.filename} has no [and-cuda] extra")
            except R.RefreshError as exc:
                ctx.problems.append(str(exc))
            if _want_code(ctx, series, newest_series):
                try:
                    code = _gpu_code(ctx, w, TF_LIBRARIES)
                except R.RefreshError as exc:
                    ctx.problems.append(str(exc))
                    code = None
                if code and (code.sass or code.ptx):
                    facts.append(Fact(
                        "tensorflow", "arch_lists", {"tf_min": series, "tf_max": series, "os": "linux", "machine": "x86_64"},
                        {"cc": code.sass, "ptx": code.ptx_max, "note": _code_note(code, w)},
                        w.file.url.split("#")[0], "cuobjdump --list-elf/--list-ptx on the wheel's CUDA library", d,
                    ))
        facts.append(Fact("tensorflow", "tested_configs", {"version": series}, values, page, "; ".join(how), d,
                          new_row={"version": series, "cuda": None, "cudnn": None},
                          complete="cuda" in values and "cudnn" in values))
    return facts


# ---------------------------------------------------------------------------------------------- JAX


def derive_jax(ctx: Context) -> list[Fact]:
    jax_wheels, _page = _wheels(ctx, "jax")
    facts: list[Fact] = []
    d = ctx.options.today
    versions = sorted({w.version for w in jax_wheels}, key=R.version_key)
    if not versions:
        return facts
    newest = versions[-1]
    # the newest release of each asked-for series (default: the newest release only)
    newest_of: dict[str, str] = {}
    for v in versions:
        newest_of[_series_of(v)] = v
    targets = [v for s, v in newest_of.items() if s in ctx.options.series] if ctx.options.series else versions[-1:]
    for v in targets:
        jw = next(w for w in jax_wheels if w.version == v)
        try:
            meta = R.wheel_metadata(ctx.http, jw.file)
        except R.RefreshError as exc:
            ctx.problems.append(str(exc))
            continue
        # the releases themselves (Python tags, extras, plugins) are the wheels table (--history)
        extras = sorted((e for e in meta.provides_extra if re.fullmatch(r"cuda\d+", e)), key=_skey, reverse=True)
        for extra in extras:
            plugin = f"jax-{extra}-plugin"
            try:
                pw, ppage = _wheels(ctx, plugin)
            except R.RefreshError as exc:
                ctx.problems.append(str(exc))
                continue
            w = _pick(pw, v, "linux-x86_64", ctx.options.python_probe)
            if w is None:
                ctx.problems.append(f"{plugin} {v}: no Linux x86_64 wheel on the index")
                continue
            arm = _pick(pw, v, "linux-aarch64", ctx.options.python_probe)
            pmeta = R.wheel_metadata(ctx.http, w.file)
            pins = R.cuda_pins(R.requirements_for(pmeta, python=w.pythons[0], extras=["with-cuda"]))
            values: dict[str, Any] = {"cudnn_requirement": pins.cudnn, "cuda_requirement": pins.cuda,
                                      "aarch64_wheels": arm is not None}
            how = (f"Requires-Dist [with-cuda] of {w.file.filename} ({pmeta.how}): {', '.join(pins.evidence)}; "
                   f"aarch64 wheel {'present' if arm else 'absent'} on the index")
            if ctx.options.gpu_code and v == newest:
                libs = tuple(m.name for m in R.RemoteZip(ctx.http, w.file.url, w.file.size).members
                             if m.name.endswith(".so") and "/_" in m.name)
                codes = []
                for lib in libs:
                    try:
                        c = _gpu_code(ctx, w, (lib,))
                    except R.RefreshError as exc:
                        ctx.problems.append(str(exc))
                        c = None
                    if c and (c.sass or c.ptx):
                        codes.append(c)
                if codes:
                    values["kernels_sass"] = sorted({s for c in codes for s in c.sass}, key=_skey)
                    values["kernels_ptx"] = sorted({p for c in codes for p in c.ptx}, key=_skey)
                    how += f"; cuobjdump on {', '.join(c.library.rsplit('/', 1)[-1] for c in codes)}"
            facts.append(Fact("jax", "plugins", {"version": v, "extra": extra}, values, ppage, how, d,
                              new_row={"version": v, "extra": extra}))
    return facts


DERIVERS: dict[str, Callable[[Context], list[Fact]]] = {
    "torch": derive_torch,
    "tensorflow": derive_tensorflow,
    "jax": derive_jax,
}


# ------------------------------------------------------------------------------------------ propose


def _matches(row: dict[str, Any], key: dict[str, Any]) -> bool:
    return all(row.get(k) == v for k, v in key.items())


def propose(files: dict[str, dict[str, Any]], facts: Sequence[Fact]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """A copy of ``files`` with the facts applied, and one line per change for the summary."""
    out = copy.deepcopy(files)
    changes: list[str] = []
    for f in facts:
        doc = out.get(f.file)
        if doc is None:
            changes.append(f"skipped {f.file}/{f.table}: no such file")
            continue
        table = doc["tables"].setdefault(
            f.table, {"source": [f.source], "checked": f.date, "verified": True,
                      "note": "Derived by scripts/refresh_compat.py from the indexes and wheels.", "rows": []})
        rows = table["rows"]
        values = {k: v for k, v in f.values.items() if v is not None or k in ("ptx",)}
        prov = {"source": f.source, "how": f.how, "date": f.date, "fields": sorted(values)}
        row = next((r for r in rows if _matches(r, f.key)), None)
        label = f"{f.file}/{f.table} {' '.join(f'{k}={v}' for k, v in f.key.items())}"
        if row is None:
            row = {**f.new_row, **f.key, **values, "verified": f.complete, "provenance": prov}
            rows.insert(_insert_at(rows, f), row)
            changes.append(f"new row {label}: {json.dumps(values, ensure_ascii=False)}")
            continue
        diff = {k: (row.get(k), v) for k, v in values.items() if row.get(k) != v}
        if diff:
            changes.append(f"changed {label}: " + "; ".join(f"{k} {a!r} → {b!r}" for k, (a, b) in diff.items()))
        row.update(values)
        if row.get("verified") is False and f.complete:
            changes.append("  (this row was verified=false; now derived from the artifact)")
            row["verified"] = True
        elif row.get("verified") is False:
            changes.append(f"  (still verified=false: the index confirms only {', '.join(sorted(values))})")
        elif f.complete:
            row["verified"] = True
        row["provenance"] = prov
    return out, changes


def _insert_at(rows: list[dict[str, Any]], f: Fact) -> int:
    """Release tables stay newest first (the resolver prefers earlier rows); exact arch rows go before the range
    rows (the first match wins)."""
    version = f.key.get("version")
    if version is None:
        return 0
    for i, r in enumerate(rows):
        if "version" in r and R.version_key(str(r["version"])) < R.version_key(str(version)):
            return i
    return len(rows)


def dump(doc: dict[str, Any]) -> str:
    """The compat files' own formatting (indent 1, UTF-8 kept)."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def unified_diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], prefix: str = "resources/compat") -> str:
    parts: list[str] = []
    for name in sorted(after):
        a, b = dump(before[name]) if name in before else "", dump(after[name])
        if a != b:
            parts.extend(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                              f"a/{prefix}/{name}.json", f"b/{prefix}/{name}.json"))
    return "".join(parts)


def facts_report(facts: Sequence[Fact], problems: Sequence[str], ctx: Context) -> dict[str, Any]:
    return {
        "index": ctx.options.index_url,
        "date": ctx.options.today,
        "http_requests": ctx.http.requests,
        "bytes_downloaded": ctx.http.bytes,
        "facts": [asdict(f) for f in facts],
        "problems": list(problems),
    }
