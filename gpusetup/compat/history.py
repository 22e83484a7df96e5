"""Every release of the frameworks since 2020, read from the package index and the wheels themselves.

``scripts/refresh_compat.py --history`` writes the result into the ``wheels`` table of ``pytorch.json``,
``tensorflow.json`` and ``jax.json``: one row per project release, derived — never typed — from

- the project's index page (PEP 691 JSON, :mod:`gpusetup.compat.indexcache`): the versions, their upload date,
  yanked files, and every wheel's tags, grouped per platform as ``{"platform", "min_os", "pythons"}``:
  ``linux-x86_64`` / ``linux-aarch64`` with the lowest glibc the manylinux tag allows ("2.28"),
  ``macos-arm64`` with the lowest macOS ("14.0"), ``windows-x86_64``; Python tags ``3.12``, free-threaded
  ``3.13t``, ``py3`` for pure wheels (with the release's Requires-Python), ``abi3>=3.9``;
- each release's wheel METADATA (PEP 658 file, else the member read by HTTP range requests): Requires-Dist on
  ``torch`` (torchvision/torchaudio pairing), the ``[and-cuda]`` pins of TensorFlow, JAX's extras and the
  plugin versions they pull, the ``[with-cuda]`` pins of the JAX CUDA plugins;
- one small member of the wheel where the metadata does not say it: ``torch/version.py`` (``cuda = '12.8'``,
  ``hip = …``) and TensorFlow's ``tensorflow/python/platform/build_info.py`` (``cuda_version``,
  ``cudnn_version``), read by range requests (a few KB out of a 900 MB wheel).

Every read goes through a cache folder (``--cache``): index pages are revalidated with their validators,
metadata and wheel members — immutable on PyPI — are read once, so a refresh reads only new files.
What could not be read is reported (``problems``), never filled in.
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion
from packaging.version import Version as PkgVersion

from gpusetup.compat import refresh as R
from gpusetup.compat.indexcache import IndexCache

SINCE = "2020-01-01"

FAMILIES: dict[str, tuple[str, ...]] = {
    "pytorch": ("torch", "torchvision", "torchaudio"),
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-macos", "tensorflow-metal"),
    "jax": ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt",
            "jax-rocm60-plugin", "jax-rocm60-pjrt", "jax-rocm7-plugin", "jax-rocm7-pjrt"),
}
WORKERS = 8
TORCH_VERSION_PY = "torch/version.py"
TF_BUILD_INFO = "tensorflow/python/platform/build_info.py"
MAX_MEMBER_BYTES = 1 << 20


# ------------------------------------------------------------------------------------------- tags


def platform_of(tag: str) -> tuple[list[str], str | None] | None:
    """(platforms, minimum OS) a wheel platform tag installs on, or None for tags gpusetup does not plan for.

    ``manylinux_2_28_aarch64`` → (["linux-aarch64"], "2.28") — the glibc it needs; ``manylinux2014_x86_64`` →
    2.17, ``manylinux2010`` → 2.12, ``manylinux1`` → 2.5; ``macosx_14_0_arm64`` → (["macos-arm64"], "14.0");
    ``macosx_11_0_universal2`` → both Mac platforms; ``win_amd64`` → (["windows-x86_64"], None).
    """
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", tag)
    if m:
        return [f"linux-{m.group(3)}"], f"{m.group(1)}.{m.group(2)}"
    legacy = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
    m = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", tag)
    if m:
        return [f"linux-{m.group(2)}"], legacy[m.group(1)]
    m = re.fullmatch(r"linux_(\w+)", tag)
    if m:
        return [f"linux-{m.group(1)}"], None
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
    if m:
        arch = m.group(3)
        os_min = f"{m.group(1)}.{m.group(2)}"
        if arch in ("universal2", "universal"):
            return ["macos-arm64", "macos-x86_64"], os_min
        if arch in ("arm64", "x86_64"):
            return [f"macos-{arch}"], os_min
        if arch == "intel":
            return ["macos-x86_64"], os_min
        return None
    if tag == "win_amd64":
        return ["windows-x86_64"], None
    if tag == "win_arm64":
        return ["windows-arm64"], None
    if tag == "any":
        return ["any"], None
    return None


def python_of(interpreter: str, abi: str) -> str | None:
    """A wheel's Python tag as the data writes it: "3.12", free-threaded "3.13t", "py3", "abi3>=3.9"."""
    if interpreter.startswith("cp") and interpreter[2:].isdigit():
        digits = interpreter[2:]
        py = f"{digits[0]}.{digits[1:]}"
        if abi == "abi3":
            return f"abi3>={py}"
        if abi.startswith("cp") and abi.endswith("t"):
            return py + "t"
        return py
    if interpreter in ("py3", "py2.py3") or (interpreter.startswith("py3") and interpreter[3:].isdigit()):
        return "py3"
    return None


def _version_sort(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)) or (0,)


def _pkey(text: str) -> Any:
    try:
        return PkgVersion(text)
    except InvalidVersion:
        return PkgVersion("0")


@dataclass
class _Group:
    platform: str
    min_os: str | None
    pythons: set[str] = field(default_factory=set)
    files: list[R.IndexFile] = field(default_factory=list)


@dataclass
class Release:
    """One release of one project as the index shows it, before metadata is read."""

    project: str
    version: str
    date: str
    requires_python: str | None
    groups: dict[tuple[str, str | None], _Group]
    extra: dict[str, Any] = field(default_factory=dict)  # what the metadata and build files add to the row

    def files_field(self) -> list[dict[str, Any]]:
        out = []
        for g in sorted(self.groups.values(), key=lambda g: (g.platform, _version_sort(g.min_os or "0"))):
            out.append({"platform": g.platform, "min_os": g.min_os,
                        "pythons": sorted(g.pythons, key=lambda p: (_version_sort(p), p))})
        return out

    def pick(self, platform: str) -> R.IndexFile | None:
        """A wheel for ``platform``: the newest standard CPython, else any (for reading its metadata)."""
        best: tuple[Any, R.IndexFile] | None = None
        for g in self.groups.values():
            if g.platform != platform:
                continue
            for f in g.files:
                if not f.filename.endswith(".whl"):
                    continue  # a source archive's metadata is not read
                w = R.parse_wheel(f)
                pys = [p for p in (w.pythons if w else ()) if re.fullmatch(r"\d+\.\d+", p)]
                rank = (max((_version_sort(p) for p in pys), default=(0,)), -len(f.filename))
                if best is None or rank > best[0]:
                    best = (rank, f)
        return best[1] if best else None


# Pure-Python projects pip installs from their source archive as well (jax before 0.4.16 has no wheel).
PURE = frozenset({"jax"})


def releases(files: Iterable[R.IndexFile], project: str, since: str = SINCE) -> list[Release]:
    """The final releases of ``project`` first published on or after ``since`` (pre-releases, dev builds and
    yanked files left out), newest first."""
    by_version: dict[str, Release] = {}
    for f in files:
        if f.yanked:
            continue
        try:
            if f.filename.endswith(".whl"):
                _name, ver, _build, tags = parse_wheel_filename(f.filename)
            elif project in PURE and f.filename.endswith((".tar.gz", ".zip")):
                _name, ver = parse_sdist_filename(f.filename)
                tags = frozenset([Tag("py3", "none", "any")])
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
            continue
        if ver.is_prerelease or ver.is_devrelease or ver.local:
            continue
        version = str(ver)
        rel = by_version.setdefault(version, Release(project, version, "", f.requires_python, {}))
        day = (f.upload_time or "")[:10]
        if day and (not rel.date or day < rel.date):
            rel.date = day
        if f.requires_python and not rel.requires_python:
            rel.requires_python = f.requires_python
        for t in tags:
            plat = platform_of(t.platform)
            py = python_of(t.interpreter, t.abi)
            if plat is None or py is None:
                continue
            platforms, min_os = plat
            for p in platforms:
                g = rel.groups.setdefault((p, min_os), _Group(p, min_os))
                g.pythons.add(py)
                if f not in g.files:
                    g.files.append(f)
    out = [r for r in by_version.values() if r.groups and (not r.date or r.date >= since)]
    return sorted(out, key=lambda r: _pkey(r.version), reverse=True)


# -------------------------------------------------------------------------------------- the reader


@dataclass
class Reader:
    """The index, wheel metadata and wheel members, all through the cache folder."""

    cache: IndexCache
    index_url: str = "https://pypi.org/simple/"
    problems: list[str] = field(default_factory=list)
    reads: dict[str, int] = field(default_factory=lambda: {"metadata": 0, "member": 0, "cached": 0})

    @property
    def http(self) -> R.Http:
        return self.cache.http

    def page(self, project: str) -> tuple[list[R.IndexFile], str]:
        page = self.cache.page(self.index_url, project, max_age=0)
        return page.files, page.url

    def metadata(self, f: R.IndexFile) -> R.Metadata | None:
        key = f.url.split("#")[0]
        got = self.cache.load("metadata", key)
        if got is not None:
            self.reads["cached"] += 1
            return R.Metadata(got["name"], got["version"], got["requires_python"], got["requires_dist"],
                              got["provides_extra"], [], got["how"])
        # PyPI serves a PEP 658 file for every wheel even where its simple page does not flag it
        if f.metadata_url is None and "files.pythonhosted.org" in f.url:
            f = R.IndexFile(f.filename, f.url, f.requires_python, f.size, f.upload_time, f.yanked,
                            f.url.split("#")[0] + ".metadata")
        try:
            meta = R.wheel_metadata(self.http, f)
        except R.RefreshError as exc:
            self.problems.append(str(exc))
            return None
        self.reads["metadata"] += 1
        self.cache.store("metadata", key, {"name": meta.name, "version": meta.version,
                                           "requires_python": meta.requires_python,
                                           "requires_dist": meta.requires_dist,
                                           "provides_extra": meta.provides_extra, "how": meta.how})
        return meta

    def member(self, f: R.IndexFile, name: str) -> str | None:
        """A small text member of a wheel, read by range requests (None when the wheel has none)."""
        key = f"{f.url.split('#')[0]}!{name}"
        got = self.cache.load("member", key)
        if got is not None:
            self.reads["cached"] += 1
            return got.get("text")
        try:
            z = R.RemoteZip(self.http, f.url, f.size)
            found = z.find(lambda n: n == name)
            text = z.read(found[0], MAX_MEMBER_BYTES).decode("utf-8", "replace") if found else None
        except R.RefreshError as exc:
            self.problems.append(str(exc))
            return None
        self.reads["member"] += 1
        self.cache.store("member", key, {"text": text})
        return text


# ----------------------------------------------------------------------------------- enrichments


def _reqs(meta: R.Metadata) -> list[Requirement]:
    out = []
    for line in meta.requires_dist:
        try:
            out.append(Requirement(line))
        except InvalidRequirement:
            continue
    return out


def _extra_of(req: Requirement) -> str | None:
    m = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", str(req.marker or ""))
    return m.group(1) if m else None


def _py_literal(text: str, name: str) -> Any:
    """The value of ``name = <literal>`` (or ``name: T = <literal>``) in a small generated Python file."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target == name:
            # build_info = collections.OrderedDict([("cuda_version", "11.8"), …]) from TF 2.4 on
            if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and (
                    getattr(value.func, "attr", None) == "OrderedDict" or getattr(value.func, "id", None) == "dict"):
                value = value.args[0]
            try:
                got = ast.literal_eval(value)
            except ValueError:
                return None
            return dict(got) if isinstance(got, list) and all(isinstance(x, tuple) and len(x) == 2 for x in got) else got
    return None


def torch_build(text: str | None) -> dict[str, Any] | None:
    """What ``torch/version.py`` says the wheel was built with: {"cuda": "12.8"} / {"hip": "6.4"} / {} (CPU)."""
    if text is None:
        return None
    out: dict[str, Any] = {}
    cuda, hip = _py_literal(text, "cuda"), _py_literal(text, "hip")
    if cuda:
        out["cuda"] = str(cuda)
    if hip:
        out["hip"] = str(hip)
    return out


def tf_build(text: str | None) -> dict[str, Any] | None:
    """What TensorFlow's ``build_info.py`` says: {"cuda": "11.8", "cudnn": "8", "arch": ["sm_35", …,
    "compute_80"]} (CUDA builds), {} (CPU)."""
    if text is None:
        return None
    info = _py_literal(text, "build_info")
    out: dict[str, Any] = {}
    if isinstance(info, dict):
        if info.get("is_cuda_build") and info.get("cuda_version"):
            out["cuda"] = _tf_cuda(str(info["cuda_version"]))
            if info.get("cudnn_version"):
                out["cudnn"] = _tf_cuda(str(info["cudnn_version"]))
            arch = info.get("cuda_compute_capabilities")
            if isinstance(arch, list) and all(isinstance(a, str) for a in arch):
                out["arch"] = list(arch)  # TF_CUDA_COMPUTE_CAPABILITIES: sm_XY cubins, compute_XY PTX
        elif info.get("is_rocm_build"):
            out["rocm"] = True
        return out
    cuda, cudnn = _py_literal(text, "cuda_version_number"), _py_literal(text, "cudnn_version_number")
    if cuda:
        out["cuda"] = _tf_cuda(str(cuda))
    if cudnn:
        out["cudnn"] = _tf_cuda(str(cudnn))
    return out


def _tf_cuda(text: str) -> str:
    """Windows build_info writes "64_112" for CUDA 11.2 and "64_8" for cuDNN 8."""
    m = re.fullmatch(r"64_(\d+)", text)
    if not m:
        return text
    d = m.group(1)
    return f"{d[:-1]}.{d[-1]}" if len(d) >= 3 else d


def _pins(meta: R.Metadata, extra: str | None, machine: str = "x86_64") -> dict[str, Any]:
    reqs = R.requirements_for(meta, machine=machine, python="3.12", extras=[extra] if extra else [])
    if extra:
        reqs = [r for r in reqs if _extra_of(r) == extra]
    pins = R.cuda_pins(reqs)
    out: dict[str, Any] = {}
    if pins.cuda:
        out["cuda"] = pins.cuda
    if pins.cudnn:
        out["cudnn"] = pins.cudnn
    return out


def enrich_torch(reader: Reader, rel: Release) -> None:
    builds: dict[str, Any] = {}
    for platform in ("linux-x86_64", "linux-aarch64", "windows-x86_64"):
        f = rel.pick(platform)
        if f is None:
            continue
        built = torch_build(reader.member(f, TORCH_VERSION_PY))
        if built is not None:
            builds[platform] = _variant(built)
        if platform.startswith("linux"):
            meta = reader.metadata(f)
            if meta is not None:
                pins = _pins(meta, None, platform.split("-", 1)[1])
                if pins:
                    builds.setdefault(platform + ":pins", pins)
    rel.extra["builds"] = {k: v for k, v in builds.items() if not k.endswith(":pins")}
    pins = {k.split(":")[0]: v for k, v in builds.items() if k.endswith(":pins")}
    if pins:
        rel.extra["cuda_pins"] = pins


def _variant(built: dict[str, Any]) -> str:
    if built.get("cuda"):
        major, _, minor = built["cuda"].partition(".")
        return f"cu{major}{minor.split('.')[0]}"
    if built.get("hip"):
        return "rocm" + ".".join(str(built["hip"]).split(".")[:2])
    return "cpu"


def enrich_companion(reader: Reader, rel: Release) -> None:
    """torchvision / torchaudio: the torch release they require (Requires-Dist ``torch==X``)."""
    f = rel.pick("linux-x86_64") or rel.pick("any") or rel.pick("windows-x86_64")
    meta = reader.metadata(f) if f is not None else None
    if meta is None:
        return
    for req in _reqs(meta):
        if R.normalise(req.name) == "torch":
            pin = next((s.version for s in req.specifier if s.operator in ("==", "===")), None)
            rel.extra["torch"] = pin or str(req.specifier) or None
            return


def enrich_tensorflow(reader: Reader, rel: Release) -> None:
    builds: dict[str, Any] = {}
    for platform in ("linux-x86_64", "windows-x86_64"):
        f = rel.pick(platform)
        if f is None:
            continue
        built = tf_build(reader.member(f, TF_BUILD_INFO))
        if built is not None:
            builds[platform] = built
        if platform == "linux-x86_64":
            meta = reader.metadata(f)
            if meta is not None and "and-cuda" in meta.provides_extra:
                rel.extra["and_cuda"] = _pins(meta, "and-cuda")
    if builds:
        rel.extra["builds"] = builds


def enrich_jax(reader: Reader, rel: Release) -> None:
    """jax: its GPU extras and what each pulls (jaxlib and the plugin, with their version specifiers)."""
    f = rel.pick("any")
    meta = reader.metadata(f) if f is not None else None
    if meta is None:
        return
    extras: dict[str, list[str]] = {}
    for req in _reqs(meta):
        extra = _extra_of(req)
        if extra and re.fullmatch(r"(cuda\d*|rocm\d*)(-local|_pip|_local)?|cuda\d+_cudnn\d+|cuda", extra):
            spec = f"{R.normalise(req.name)}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"
            extras.setdefault(extra, []).append(spec)
    rel.extra["extras"] = {k: sorted(v) for k, v in sorted(extras.items())}
    if meta.requires_python:
        rel.requires_python = meta.requires_python


def enrich_plugin(reader: Reader, rel: Release) -> None:
    """jax-cudaNN-plugin / jax-rocmN-plugin: the CUDA / cuDNN pins of ``[with-cuda]``; ROCm plugins list their
    requirements as written."""
    f = rel.pick("linux-x86_64") or rel.pick("linux-aarch64")
    meta = reader.metadata(f) if f is not None else None
    if meta is None:
        return
    if "with-cuda" in meta.provides_extra:
        rel.extra["with_cuda"] = _pins(meta, "with-cuda")
    reqs = [f"{R.normalise(r.name)}{r.specifier}" for r in _reqs(meta) if _extra_of(r) is None]
    if reqs:
        rel.extra["requires"] = sorted(reqs)


ENRICH: dict[str, Callable[[Reader, Release], None]] = {
    "torch": enrich_torch,
    "torchvision": enrich_companion,
    "torchaudio": enrich_companion,
    "tensorflow": enrich_tensorflow,
    "tensorflow-gpu": enrich_tensorflow,
    "jax": enrich_jax,
    "jax-cuda12-plugin": enrich_plugin,
    "jax-cuda13-plugin": enrich_plugin,
    "jax-rocm60-plugin": enrich_plugin,
    "jax-rocm7-plugin": enrich_plugin,
}

# -------------------------------------------------------------------------------------- the table


@dataclass
class History:
    rows: dict[str, list[dict[str, Any]]]  # family → rows
    sources: dict[str, list[str]]  # family → page URLs read
    problems: list[str]
    stats: dict[str, Any]


def derive(reader: Reader, families: Sequence[str] = tuple(FAMILIES), since: str = SINCE,
           today: str | None = None, enrich: bool = True) -> History:
    """Rows of every release since ``since`` of every project of ``families``, newest first per project."""
    today = today or _dt.date.today().isoformat()
    rows: dict[str, list[dict[str, Any]]] = {}
    sources: dict[str, list[str]] = {}
    pages = reader.cache.pages(((reader.index_url, p) for fam in families for p in FAMILIES[fam]), max_age=0)
    for fam in families:
        out: list[dict[str, Any]] = []
        for project in FAMILIES[fam]:
            got = pages[(reader.index_url, project)]
            if isinstance(got, Exception):
                if "(404)" in str(got):
                    continue  # a project the index does not have (yet)
                reader.problems.append(f"{project}: {got}")
                continue
            sources.setdefault(fam, []).append(got.url)
            rels = releases(got.files, project, since)
            work = ENRICH.get(project) if enrich else None
            if work is not None:
                with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                    list(pool.map(lambda r, w=work: w(reader, r), rels))
            for rel in rels:
                row: dict[str, Any] = {"project": project, "version": rel.version, "date": rel.date or None}
                if rel.requires_python:
                    row["requires_python"] = rel.requires_python
                row["files"] = rel.files_field()
                row.update(rel.extra)
                out.append(row)
        rows[fam] = out
    stats = {"date": today, "http_requests": reader.http.requests, "bytes": reader.http.bytes,
             "not_modified": reader.http.not_modified, **reader.reads}
    return History(rows, sources, reader.problems, stats)


def table(history: History, family: str) -> dict[str, Any]:
    """The ``wheels`` table of one compat file."""
    return {
        "source": sorted(set(history.sources.get(family, []))),
        "checked": history.stats["date"],
        "verified": True,
        "note": ("Every release since 2020 of the family's projects, derived by scripts/refresh_compat.py --history "
                 "from the index pages (versions, upload dates, wheel tags: platform, minimum glibc/macOS, Python "
                 "tags incl. free-threaded) and each release's wheel METADATA and build files (torch/version.py, "
                 "TensorFlow build_info.py). Yanked files and pre-releases are left out."),
        "rows": history.rows.get(family, []),
    }


def dumps(history: History) -> str:
    return json.dumps({"stats": history.stats, "problems": history.problems, "sources": history.sources},
                      indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- TensorFlow's tested configs

_TR = re.compile(r"<tr><td>(tensorflow(?:_gpu)?)-(\d+\.\d+)\.\d+</td><td>([^<]*)</td><td>[^<]*</td><td>[^<]*</td>"
                 r"<td>([^<]*)</td><td>([^<]*)</td></tr>")


def tested_configs(text: str, section: str = "### Linux") -> list[dict[str, Any]]:
    """The GPU rows of TensorFlow's "Tested build configurations" (``site/en/install/source.md``, or
    ``source_windows.md`` with ``section="## Tested build configurations"``): version series, Python range,
    cuDNN and CUDA, newest first. Rows before 2.0 (Python 2 era) are left out."""
    start = text.find(section)
    if start < 0:
        return []
    gpu = text.find("GPU", start)
    table_end = text.find("</table>", gpu)
    out: list[dict[str, Any]] = []
    for _pkg, series, pythons, cudnn, cuda in _TR.findall(text[gpu:table_end]):
        if _version_sort(series) < (2, 0):
            continue
        m = re.fullmatch(r"\s*(\d+\.\d+)\s*-\s*(\d+\.\d+)\s*", pythons.split(",")[-1])
        if not m:
            continue
        cuda = cuda.strip() if "." in cuda else f"{cuda.strip()}.0"
        out.append({"version": series, "python_min": m.group(1), "python_max": m.group(2), "cuda": cuda,
                    "cudnn": cudnn.strip()})
    return out
