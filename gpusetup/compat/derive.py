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
    # an older cuobjdump (CUDA 11.x) for libraries the current one refuses: CUDA 13's cuobjdump stops at sm_37
    # cubins ("Support for 'sm_37' has been removed") and calls torch 2.1-2.4's libtorch_cuda.so "Invalid ELF"
    cuobjdump_legacy: str | None = None
    python_probe: str = "3.12"  # Python used to evaluate markers in Requires-Dist
    today: str = field(default_factory=lambda: _dt.date.today().isoformat())


@dataclass
class Context:
    http: R.Http
    runner: Any
    options: Options
    problems: list[str] = field(default_factory=list)  # what could not be read (reported, never hidden)
    cache: Any = None  # an IndexCache: what cuobjdump read from a wheel is kept (PyPI files never change)
    reads: dict[str, int] = field(default_factory=lambda: {"libraries": 0, "cached": 0})


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


def _gpu_code(ctx: Context, w: R.Wheel, libraries: Sequence[str | Sequence[str]]) -> R.GpuCode | None:
    """cuobjdump on the first of ``libraries`` present in the wheel (fetched by range, size-bounded). An entry may
    be a group of libraries read together, their GPU code joined (torch 1.13 split libtorch_cuda.so in two)."""
    tool = R.find_cuobjdump(ctx.runner, ctx.options.cuobjdump)
    if tool is None:
        ctx.problems.append("cuobjdump not found (pip install nvidia-cuda-cuobjdump, or pass --cuobjdump)")
        return None
    z: R.RemoteZip | None = None
    names: list[str] = []
    for entry in libraries:
        group = (entry,) if isinstance(entry, str) else tuple(entry)
        cached = [_cached_code(ctx, w, lib) for lib in group]
        if all(c is not None for c in cached):  # every library of the group read before, or known to be absent
            found = [c for c in cached if isinstance(c, R.GpuCode)]
            if not found:
                continue
            code = _joined(found, [c.library for c in found])
            if code.sass or code.ptx or code.specific:
                return code
            continue
        if z is None:
            z = R.RemoteZip(ctx.http, w.file.url, w.file.size)
            names = [m.name for m in z.members]
        present = [lib for lib in group if lib in names]
        for lib in group:
            if lib not in names:
                _store_absent(ctx, w, lib)
        if not present:
            continue
        codes = []
        for lib in present:
            m = z.find(functools.partial(operator.eq, lib))[0]
            if m.size > ctx.options.max_library_bytes:
                ctx.problems.append(
                    f"{w.file.filename}: {lib} is {m.size >> 20} MiB, above --max-library-mb "
                    f"({ctx.options.max_library_bytes >> 20} MiB); its GPU code was not read"
                )
                break
            with tempfile.TemporaryDirectory(prefix="gpusetup-refresh-") as tmp:
                path = z.extract(m, Path(tmp) / Path(lib).name, ctx.options.max_library_bytes)
                one = _cuobjdump(ctx, tool, path)
            one.library = lib
            ctx.reads["libraries"] += 1
            _store_code(ctx, w, lib, one)
            codes.append(one)
        else:
            code = _joined(codes, present)
            if code.sass or code.ptx or code.specific:
                return code
            ctx.problems.append(f"{w.file.filename}: {' + '.join(present)} holds no GPU code")
    flat = [lib for e in libraries for lib in ((e,) if isinstance(e, str) else e)]
    ctx.problems.append(f"{w.file.filename}: none of {', '.join(flat)} is in the wheel")
    return None


def _cuobjdump(ctx: Context, tool: str, path: Path) -> R.GpuCode:
    """cuobjdump's lists for one library; the older cuobjdump (``cuobjdump_legacy``) when the current one refuses
    the file — sm_35/sm_37 cubins, or libraries it cannot parse."""
    try:
        return R.gpu_code(ctx.runner, tool, path)
    except R.RefreshError as exc:
        legacy = ctx.options.cuobjdump_legacy
        if not legacy or not any(s in str(exc) for s in ("has been removed", "Invalid ELF")):
            raise
        code = R.gpu_code(ctx.runner, legacy, path)
        code.tool = legacy
        said = str(exc).split(": ", 1)[-1].replace(f"{path.parent}/", "")  # the temporary folder means nothing later
        code.how = f"{_tool_release(ctx, legacy)} (the current cuobjdump said: {said[:120]})"
        return code


def _tool_release(ctx: Context, tool: str) -> str:
    """"cuobjdump 11.5" from ``cuobjdump --version`` ("Cuda compilation tools, release 11.5, V11.5.119")."""
    res = ctx.runner.run([tool, "--version"], timeout=60)
    m = re.search(r"release (\d+\.\d+)", res.stdout or "")
    return f"cuobjdump {m.group(1)}" if m else Path(tool).name


def _joined(codes: Sequence[R.GpuCode], libraries: Sequence[str]) -> R.GpuCode:
    """The GPU code of several libraries of one wheel, together (one library: itself)."""
    sass = sorted({s for c in codes for s in c.sass}, key=R._py_key)
    ptx = sorted({p for c in codes for p in c.ptx}, key=R._py_key)
    specific = sorted({s for c in codes for s in c.specific}, key=R._py_key)
    return R.GpuCode(sass, ptx, specific, library=" + ".join(libraries), tool=codes[0].tool if codes else "",
                     how="; ".join(sorted({c.how for c in codes if c.how})))


def _code_key(w: R.Wheel, lib: str) -> str:
    """A wheel file on PyPI never changes under its URL (a re-upload gets a new URL and sha256 fragment)."""
    return f"{w.file.url}!{lib}"


ABSENT = "absent"  # _cached_code: the wheel has no such library


def _cached_code(ctx: Context, w: R.Wheel, lib: str) -> R.GpuCode | str | None:
    """What cuobjdump read from this wheel's library before, ABSENT when the wheel has none, None when unknown."""
    if ctx.cache is None:
        return None
    got = ctx.cache.load("gpucode", _code_key(w, lib))
    if got is None:
        return None
    ctx.reads["cached"] += 1
    if got.get("absent"):
        return ABSENT
    return R.GpuCode(list(got["sass"]), list(got["ptx"]), list(got["specific"]), library=lib, tool=got.get("tool", ""),
                     how=got.get("how", ""))


def _store_absent(ctx: Context, w: R.Wheel, lib: str) -> None:
    if ctx.cache is not None:
        ctx.cache.store("gpucode", _code_key(w, lib), {"absent": True})


def _store_code(ctx: Context, w: R.Wheel, lib: str, code: R.GpuCode) -> None:
    if ctx.cache is not None:
        ctx.cache.store("gpucode", _code_key(w, lib), {"sass": code.sass, "ptx": code.ptx, "specific": code.specific,
                                                      "tool": code.tool, "how": code.how})


def _metadata(ctx: Context, f: R.IndexFile) -> R.Metadata:
    """A wheel's METADATA, through the cache when the context has one (a second refresh reads only new files)."""
    if ctx.cache is None:
        return R.wheel_metadata(ctx.http, f)

    def read() -> dict[str, Any]:
        m = R.wheel_metadata(ctx.http, f)
        return {"name": m.name, "version": m.version, "requires_python": m.requires_python,
                "requires_dist": m.requires_dist, "provides_extra": m.provides_extra, "how": m.how}

    got = ctx.cache.metadata_or_read(f.url, read)
    return R.Metadata(got["name"], got["version"], got["requires_python"], got["requires_dist"], got["provides_extra"],
                      [], got["how"])


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
    tool = f" (read with {code.how})" if code.how else ""
    return f"cuobjdump on {code.library} of {w.file.filename}{spec}{ptx}{tool}"


# ------------------------------------------------------------------------------------------ PyTorch

# libtorch_cuda.so (500 MiB-1.2 GiB) holds the kernels and any PTX; smaller CUDA libraries such as
# libtorch_cuda_linalg.so carry the same cubins but never the PTX, so they cannot answer "does this wheel JIT on a
# newer GPU". torch 1.13's wheels split it into libtorch_cuda_cu.so + libtorch_cuda_cpp.so (read together); torch
# 1.4's single libtorch.so held everything.
TORCH_LIBRARIES: tuple[str | tuple[str, ...], ...] = (
    "torch/lib/libtorch_cuda.so",
    ("torch/lib/libtorch_cuda_cu.so", "torch/lib/libtorch_cuda_cpp.so"),
    "torch/lib/libtorch.so",
)


def _torch_variant(ctx: Context, w: R.Wheel) -> tuple[str | None, str]:
    """The CUDA variant a wheel without nvidia-* dependencies was built for (torch 1.x bundled its CUDA libraries),
    from its ``torch/version.py`` read by range requests: ("cu102", how) or (None, why not)."""
    from gpusetup.compat import history as H  # lazy: only the refresh tool reads the history

    key = f"{w.file.url}!{H.TORCH_VERSION_PY}"
    got = ctx.cache.load("member", key) if ctx.cache is not None else None
    if got is not None:
        text = got.get("text")
    else:
        z = R.RemoteZip(ctx.http, w.file.url, w.file.size)
        found = z.find(functools.partial(operator.eq, H.TORCH_VERSION_PY))
        text = z.read(found[0], H.MAX_MEMBER_BYTES).decode("utf-8", "replace") if found else None
        if ctx.cache is not None:
            ctx.cache.store("member", key, {"text": text})
    built = H.torch_build(text)
    if not built or not built.get("cuda"):
        return None, f"{H.TORCH_VERSION_PY} of {w.file.filename} names no CUDA version"
    return H._variant(built), f"{H.TORCH_VERSION_PY} of {w.file.filename}: cuda = '{built['cuda']}'"


def derive_torch(ctx: Context) -> list[Fact]:
    """The releases facts of every series from the floor on (``min_series``), and the GPU code of the series asked
    for (``gpu_code_series``: older series than the floor too — their wheels are on PyPI, their variants table is
    not kept)."""
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
        want_release = _want_series(ctx, "torch", series)
        want_code = _want_code(ctx, series, newest_series) and (
            want_release or series in ctx.options.gpu_code_series)
        if not (want_release or want_code):
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
                meta = _metadata(ctx, w.file)
            except R.RefreshError as exc:
                ctx.problems.append(str(exc))
                continue
            machine = plat.split("-", 1)[1]
            pins = R.cuda_pins(R.requirements_for(meta, machine=machine, python=w.pythons[0]))
            values[fld] = pins.variant or ("cpu" if not pins.evidence else None)
            how.append(f"{fld} from Requires-Dist of {w.file.filename} ({meta.how}): "
                       + (", ".join(pins.evidence) or "no CUDA dependencies"))
            variant = pins.variant
            if not want_code:
                continue
            if variant is None and not pins.evidence:
                try:  # torch 1.x: CUDA inside the wheel, no nvidia-* dependencies to read the variant from
                    variant, said = _torch_variant(ctx, w)
                except R.RefreshError as exc:
                    ctx.problems.append(str(exc))
                    variant, said = None, str(exc)
                if variant is None:
                    continue
                how.append(said)
            if variant:
                try:
                    code = _gpu_code(ctx, w, TORCH_LIBRARIES)
                except R.RefreshError as exc:
                    ctx.problems.append(str(exc))
                    code = None
                if code and (code.sass or code.ptx):
                    facts.append(Fact(
                        "pytorch", "arch_lists",
                        {"torch_min": series, "torch_max": series, "variant": variant, "os": "linux", "machine": machine},
                        {"cc": code.sass, "ptx": code.ptx_max, "note": _code_note(code, w)},
                        w.file.url.split("#")[0], "cuobjdump --list-elf/--list-ptx on the wheel's CUDA library", d,
                    ))
        if not want_release:
            continue
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
                meta = _metadata(ctx, w.file)
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
            meta = _metadata(ctx, jw.file)
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
            pmeta = _metadata(ctx, w.file)
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


# ------------------------------------------------------------------------------ nvcc's host compilers

# NVIDIA publishes nvcc on PyPI: nvidia-cuda-nvcc-cu11 (11.7, 11.8), -cu12 (12.0-12.9) and, from 13.0, the
# CUDA Application Compiler headers as nvidia-cuda-crt. crt/host_config.h is where nvcc refuses a host compiler.
NVCC_PROJECTS = ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-crt")
_HOST_CONFIG = re.compile(r"^nvidia/[^/]+/include/crt/host_config\.h$")
_GCC_MSG = re.compile(r"gcc versions later than (\d+) are not supported")
_GCC_IF = re.compile(r"^#if __GNUC__ > (\d+)\s*$", re.MULTILINE)
_CLANG_MSG = re.compile(r"unsupported clang version! clang version must be less than (\d+)")
_MSVC_MSG = re.compile(r"Only the versions between (\d{4}) and (\d{4}) \(inclusive\) are supported")


def parse_host_config(text: str) -> dict[str, Any]:
    """The newest GCC and clang majors and the Visual Studio range nvcc accepts, read from the ``#error`` lines of
    its ``crt/host_config.h`` (the checks compare the major only: ``__GNUC__ > 13``, ``__clang_major__ >= 18``).
    A field the header does not state is None."""
    gcc = _GCC_MSG.search(text) or _GCC_IF.search(text)
    clang = _CLANG_MSG.search(text)
    msvc = _MSVC_MSG.search(text)
    return {
        "gcc_max": int(gcc.group(1)) if gcc else None,
        "clang_max": int(clang.group(1)) - 1 if clang else None,
        "msvc": f"{msvc.group(1)}-{msvc.group(2)}" if msvc else None,
    }


def _quote_host_config(text: str) -> str:
    parts = []
    for rx in (_GCC_MSG, _CLANG_MSG, _MSVC_MSG):
        m = rx.search(text)
        if m:
            parts.append(f"'{m.group(0)}'")
    return "; ".join(parts)


def _member_text(ctx: Context, w: R.Wheel, label: str, pred: Callable[[str], bool],
                 limit: int = 1 << 20) -> tuple[str, str] | None:
    """(member name, text) of the first member ``pred`` accepts (``label`` names the kind, for the cache key),
    read by range requests; kept in the cache (a file on PyPI never changes under its URL)."""
    key = f"{w.file.url}!{label}"
    if ctx.cache is not None:
        got = ctx.cache.load("member", key)
        if got is not None:
            ctx.reads["cached"] += 1
            return (got["name"], got["text"]) if got.get("name") else None
    z = R.RemoteZip(ctx.http, w.file.url, w.file.size)
    found = z.find(pred)
    out = (found[0].name, z.read(found[0], limit).decode("utf-8", "replace")) if found else None
    if ctx.cache is not None:
        ctx.cache.store("member", key, {"name": out[0] if out else None, "text": out[1] if out else None})
    return out


def _is_host_config(name: str) -> bool:
    return bool(_HOST_CONFIG.match(name))


def derive_host_compilers(ctx: Context) -> list[Fact]:
    """host_compilers/nvcc_host_compilers from every CUDA release series NVIDIA publishes nvcc for on PyPI: the
    newest patch of each X.Y is read; when patches of a series disagree, the most permissive is kept and the
    difference is said (gpusetup must never warn about a compiler the user's nvcc accepts)."""
    facts: list[Fact] = []
    d = ctx.options.today
    for project in NVCC_PROJECTS:
        try:
            wheels, page = _wheels(ctx, project)
        except R.RefreshError as exc:
            ctx.problems.append(f"{project}: {exc}")
            continue
        by_series: dict[str, list[R.Wheel]] = {}
        for w in wheels:
            if "linux-x86_64" in w.platforms and re.fullmatch(r"\d+\.\d+\.\d+", w.version):
                by_series.setdefault(_series_of(w.version), []).append(w)
        for series, ws in sorted(by_series.items(), key=lambda kv: _skey(kv[0])):
            if ctx.options.series and series not in ctx.options.series:
                continue
            read: list[tuple[R.Wheel, str, dict[str, Any]]] = []
            for version in sorted({w.version for w in ws}, key=R.version_key, reverse=True):
                w = next(x for x in ws if x.version == version)
                try:
                    got = _member_text(ctx, w, "crt/host_config.h", _is_host_config)
                except R.RefreshError as exc:
                    ctx.problems.append(str(exc))
                    continue
                if got is None:
                    ctx.problems.append(f"{w.file.filename}: no crt/host_config.h in the wheel")
                    continue
                read.append((w, got[1], parse_host_config(got[1])))
            if not read:
                continue
            newest_w, newest_text, values = read[0]
            if values["gcc_max"] is None:
                ctx.problems.append(f"{newest_w.file.filename}: host_config.h names no GCC limit")
                continue
            others = {f"{w.version}: gcc {v['gcc_max']}, clang {v['clang_max']}" for w, _t, v in read[1:]
                      if (v["gcc_max"], v["clang_max"]) != (values["gcc_max"], values["clang_max"])}
            for key in ("gcc_max", "clang_max"):
                seen = [v[key] for _w, _t, v in read if v[key] is not None]
                values[key] = max(seen) if seen else None
            evidence = (f"crt/host_config.h of {newest_w.file.filename}: {_quote_host_config(newest_text)}"
                        + (f"; other {series} patches differ ({'; '.join(sorted(others))}), the most permissive "
                           "is kept" if others else f"; {len(read)} {series} patch release(s) read, all alike"))
            facts.append(Fact(
                "host_compilers", "nvcc_host_compilers", {"cuda": series}, {**values, "evidence": evidence},
                newest_w.file.url.split("#")[0], "the #error checks of crt/host_config.h in NVIDIA's nvcc wheel", d,
                new_row={"cuda": series},
            ))
    return facts


DERIVERS: dict[str, Callable[[Context], list[Fact]]] = {
    "torch": derive_torch,
    "tensorflow": derive_tensorflow,
    "jax": derive_jax,
    "nvcc": derive_host_compilers,
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
    if f.table == "nvcc_host_compilers":  # oldest toolkit first, as the table is written
        for i, r in enumerate(rows):
            if R.version_key(str(r.get("cuda"))) > R.version_key(str(f.key["cuda"])):
                return i
        return len(rows)
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
