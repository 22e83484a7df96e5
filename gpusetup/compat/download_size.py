"""What an install really downloads, read from the package index before anything is fetched.

The plan shows "Download: 5.2 MB, from the package index (3 files)" when the index says so, and the table
estimate of ``resources/install/sizes.json`` — labelled as an estimate — when it cannot (offline,
``GPUSETUP_LIVE=off``, an index without file sizes, a dependency only available as source).

How, and why this way
---------------------
The files pip will fetch are the framework's wheel for the target's Python, OS and architecture plus every
dependency (with the markers evaluated for that target) that the target environment does not already
satisfy. This module walks that graph itself with the one index reader of the project
(:mod:`gpusetup.compat.refresh`): the project pages as PEP 691 JSON, which carry each file's ``size``
(PEP 700) — a PEP 503 HTML page (download.pytorch.org, many mirrors) has none, so the chosen file's server is
asked for its Content-Length (HEAD, else a one-byte range request) — and each chosen wheel's dependencies
from its PEP 658 ``.metadata`` file (or, when the index has none, the METADATA member read by HTTP range
requests out of the wheel's zip directory). pip's configured extra-index-url and proxy are honoured, a
mirror's password is never written into the answer. Every read is
bounded (page, metadata and zip-directory size limits, a timeout per request, a cap on projects and a
deadline for the whole walk), it never downloads a wheel, and it needs no Python of the target: the new
environment usually does not exist yet at plan time.

``pip install --dry-run --report`` was considered and not used: where an index offers no PEP 658 metadata
(download.pytorch.org's older builds, many mirrors) pip downloads every wheel to read its dependencies — for
a CUDA build several gigabytes, at plan time — and there is no pip option that bounds it; it also needs
pip ≥ 22.2 and, for another Python or platform, ``--only-binary=:all: --python-version --platform``, which
then ignores what the target already has. The walk here picks, per project, the newest version that meets
every specifier met so far (what pip's resolver returns when nothing conflicts — true of the framework pins
this planner writes); when a later specifier rules a pick out it re-picks, and gives up (estimate) rather
than guess when that does not settle.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import compatible_tags, cpython_tags, mac_platforms
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpusetup import resources
from gpusetup.messages import msg
from gpusetup.model import Message
from gpusetup.versions import PythonVersion, Version, planned_python

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from gpusetup.compat import refresh as R

# compat.refresh (with packaging.requirements, ~74 ms) is imported where the index is asked: every plan builds
# the offline estimate (gpusetup.install imports this module), only a live plan walks the index

TIMEOUT = 6.0  # per read
PAGE_SECONDS = 6 * 3600  # a page read within this is not asked again (a later one is revalidated)
DEADLINE = 25.0  # the whole walk (the wizard waits on it); TensorFlow on PyPI: 32 files, 6.6 s with JAX here
MAX_PROJECTS = 150
WORKERS = 24  # projects read side by side (a CUDA build has ~20 nvidia-* dependencies: one wave, not two)
_MANYLINUX_MINORS = range(40, 4, -1)  # manylinux_2_40 … manylinux_2_5, newest first (pip's order)


@dataclass(frozen=True)
class Target:
    """The interpreter and platform the install is for (they need not be this process's).

    ``python`` is read as a plan writes it — "3.12", free-threaded "3.13t", or the range a GPU build needs
    ("3.10–3.13": the lowest, the one the installer provides) — and kept as "X.Y" / "X.Yt"; "" when it names
    no Python (then no wheel fits and the size stays an estimate). ``macos`` is the macOS release the wheels
    must allow (macosx_14_0 wheels need 14 or newer); None: 15.
    """

    python: str  # "3.12", "3.13t"
    os: str = "linux"  # linux / windows / macos
    arch: str = "x86_64"  # x86_64 / aarch64 / arm64
    macos: str | None = None  # "14.5"

    def __post_init__(self) -> None:
        py = planned_python(self.python)
        object.__setattr__(self, "python", str(py) if py else "")

    @property
    def py(self) -> PythonVersion | None:
        return PythonVersion.parse(self.python)

    def markers(self, extra: str = "") -> dict[str, str]:
        system = {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}.get(self.os, "Linux")
        machine = {"windows": "AMD64" if self.arch == "x86_64" else "ARM64"}.get(self.os, self.arch)
        return {
            "platform_machine": machine, "platform_system": system,
            "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[system],
            "os_name": "nt" if system == "Windows" else "posix", "python_version": self.release,
            "python_full_version": self.release + ".0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "extra": extra,
        }

    def tags(self) -> dict[str, int]:
        """Wheel tags this target installs → rank (lower is preferred, as pip orders them)."""
        py = self.py
        if py is None:
            return {}
        major, minor = py.mm
        if self.os == "windows":
            plats = ["win_amd64"] if self.arch == "x86_64" else ["win_arm64"]
        elif self.os == "macos":
            plats = list(mac_platforms(macos_release(self.macos), "arm64" if self.arch in ("arm64", "aarch64") else "x86_64"))
        else:
            plats = [f"manylinux_2_{m}_{self.arch}" for m in _MANYLINUX_MINORS]
            plats += [f"manylinux2014_{self.arch}"]
            if self.arch == "x86_64":
                plats += ["manylinux2010_x86_64", "manylinux1_x86_64"]
            plats.append(f"linux_{self.arch}")
        ordered = [*cpython_tags((major, minor), abis=[py.abi], platforms=plats),
                   *compatible_tags((major, minor), interpreter=f"cp{major}{minor}", platforms=plats)]
        return {str(t): i for i, t in reversed(list(enumerate(ordered)))}

    @property
    def release(self) -> str:
        """"3.13" for 3.13 and 3.13t (what markers and Requires-Python compare)."""
        py = self.py
        return py.release if py else self.python


def pip_platforms(os_name: str, arch: str, macos: str | None = None) -> list[str]:
    """The ``--platform`` values ``pip download`` needs for a machine that is not this one: manylinux tags
    (glibc 2.28 and 2.17), ``win_amd64``, or the Mac's own release (``macosx_14_0_arm64`` — pip widens it to the
    older releases, so wheels needing a newer macOS than the target's are never fetched; unknown: macOS 11, the
    first Apple-silicon release)."""
    arch = arch.lower().replace("amd64", "x86_64")
    if os_name == "windows":
        return ["win_amd64"] if arch == "x86_64" else ["win_arm64"]
    if os_name == "macos":
        mac_arm = arch in ("arm64", "aarch64")
        major, minor = macos_release(macos) if macos else ((11, 0) if mac_arm else (10, 15))
        if major >= 11:
            minor = 0  # pip expands macOS 11+ tags by major release only
        return [f"macosx_{major}_{minor}_{'arm64' if mac_arm else 'x86_64'}"]
    arch = arch.replace("arm64", "aarch64")
    return [f"manylinux_2_28_{arch}", f"manylinux_2_17_{arch}", f"manylinux2014_{arch}"]


def pip_python(python: str | None) -> list[str]:
    """``pip download`` options for a target Python: ``--python-version 3.13`` and, for a free-threaded build,
    ``--abi cp313t`` (its wheels carry that ABI; pip would otherwise fetch the standard cp313 ones)."""
    py = planned_python(python)
    if py is None:
        return []
    out = ["--python-version", py.release]
    if py.free_threaded:
        out += ["--implementation", "cp", "--abi", py.abi]
    return out


def macos_release(text: str | None) -> tuple[int, int]:
    """(major, minor) of a macOS version for wheel tags: "14.5" → (14, 5); unknown → (15, 0)."""
    v = Version.parse(text)
    if v is None or v.major is None:
        return (15, 0)
    return (v.major, v.minor) if v.major >= 11 else (10, v.minor)


@dataclass
class DownloadSize:
    """The answer: ``source`` "index" (bytes and files are what pip will fetch) or "estimate"."""

    source: str
    bytes: int = 0
    files: list[dict[str, Any]] = field(default_factory=list)  # {"project", "version", "file", "size"}
    reason: str = ""  # estimate: "offline" / "no-sizes" / "unreachable" / "unresolved"
    detail: str = ""  # what stopped the exact figure (English, for logs and --json)
    estimate_mib: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "bytes": self.bytes if self.source == "index" else None,
                "files": len(self.files) if self.source == "index" else None,
                "estimate_mib": self.estimate_mib, "reason": self.reason or None, "detail": self.detail or None}

    def message(self) -> Message:
        """The size as words: exact from the index, else the estimate and why it is one."""
        if self.source == "index":
            if len(self.files) == 1:
                return msg("size.download-index-one", size=human(self.bytes))
            return msg("size.download-index", size=human(self.bytes), files=len(self.files))
        size = human(self.estimate_mib << 20)
        if self.reason == "no-sizes":
            return msg("size.download-estimate-no-sizes", size=size)
        if self.reason == "unreachable":
            return msg("size.download-estimate-unreachable", size=size)
        if self.reason == "unresolved":
            return msg("size.download-estimate-unresolved", size=size)
        return msg("size.download-estimate-offline", size=size)


def human(n: int) -> str:
    """Bytes as people read them: "812 KB", "5.2 MB", "300 MB", "2.4 GB" (powers of 1024, as pip shows them)."""
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GB"
    if n >= 100 << 20:
        return f"{round(n / (1 << 20))} MB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    return f"{max(1, round(n / 1024))} KB"


class _Cache:
    """Index pages and metadata read in this process, for a few minutes: going Back in the wizard and planning
    again (another folder, another framework) does not read them again. Bounded; only answers, never errors."""

    def __init__(self, seconds: float = 600.0, entries: int = 2000) -> None:
        self.seconds, self.entries = seconds, entries
        self._data: dict[tuple[str, ...], tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> Any:
        with self._lock:
            hit = self._data.get(key)
            return hit[1] if hit and time.monotonic() - hit[0] < self.seconds else None

    def put(self, key: tuple[str, ...], value: Any) -> Any:
        with self._lock:
            if len(self._data) >= self.entries:
                self._data.clear()
            self._data[key] = (time.monotonic(), value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_CACHE = _Cache()


def forget() -> None:
    """Drop what this process remembers of the indexes (a changed mirror; tests that change their index)."""
    from gpusetup.compat import indexcache  # lazy: see _Walk

    _CACHE.clear()
    indexcache.forget()


class Unresolved(Exception):
    """The walk cannot give an exact figure (the message says why); the caller labels the estimate."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class _Step:
    """What one project's step of a walk round found (errors kept, raised in order by the round)."""

    pick: _Pick | None = None
    meta: R.Metadata | None = None
    choose_error: Unresolved | None = None
    meta_error: Unresolved | None = None


@dataclass
class _Pick:
    project: str
    version: Version
    file: R.IndexFile
    size: int | None = None  # PEP 700, else the server's Content-Length (HEAD) or Content-Range


class _Walk:
    def __init__(self, target: Target, installed: Mapping[str, str], http: Any, deadline: float,
                 extra: Sequence[str] = (), cache: Any = None) -> None:
        # lazy: compat.refresh costs 28-74 ms (python -X importtime) of every plan and install; only a walk of
        # the index needs it
        from gpusetup.compat import indexcache, refresh

        self.R = refresh
        self.cache = cache if cache is not None else indexcache.shared()
        self.extra = list(extra)
        self.target = target
        self.tags = target.tags()
        self.tag_ranks: dict[str, int | None] = {}
        self.installed = {self.R.normalise(k): v for k, v in installed.items()}
        self.http = http
        self.deadline = deadline
        self.pages: dict[tuple[str, str], list[R.IndexFile] | Unresolved] = {}
        self.specs: dict[str, SpecifierSet] = {}
        self.extras: dict[str, set[str]] = {}
        self.index_of: dict[str, str] = {}
        self.picks: dict[str, _Pick] = {}
        self.satisfied: set[str] = set()  # already in the target environment at a fitting version

    def _page(self, index: str, project: str) -> list[R.IndexFile]:
        key = (index, project)
        if key not in self.pages:
            if time.monotonic() > self.deadline:
                raise Unresolved("unreachable", "the index did not answer in time")
            files: list[R.IndexFile] = []
            for n, url in enumerate([index, *self.extra]):  # pip reads its extra-index-url beside every index
                try:
                    got_page = self.cache.page(url, project, max_age=PAGE_SECONDS, http=self.http).files
                except self.R.RefreshError as exc:  # a project the index lacks (404) is not a network failure
                    if n and "(404)" in str(exc):
                        continue
                    self.pages[key] = Unresolved("unresolved" if "(404)" in str(exc) else "unreachable", str(exc))
                    break
                files += got_page
            else:
                self.pages[key] = files
        got = self.pages[key]
        if isinstance(got, Unresolved):
            raise got
        return got

    def _choose(self, index: str, project: str) -> _Pick | None:
        """The newest version meeting every specifier seen, its best wheel for the target (None: installed)."""
        spec = self.specs.get(project, SpecifierSet())
        have = Version.parse(self.installed.get(project))
        if have is not None and have.packaging is not None and spec.contains(have.packaging, prereleases=True):
            return None
        best: tuple[Any, int, R.IndexFile] | None = None  # (version, -rank, file)
        py = Version.parse(self.target.release + ".0")
        rp_ok: dict[str, bool] = {}
        for f in self._page(index, project):
            if f.yanked or not f.filename.endswith(".whl"):
                continue
            rank = _tag_rank(f.filename, self.tags, self.tag_ranks)  # cheap first: most files are other platforms'
            if rank is None:
                continue
            try:
                _name, ver, _build, _tags = parse_wheel_filename(f.filename)
            except InvalidWheelFilename:
                continue
            if not spec.contains(ver):
                continue
            if f.requires_python and py is not None and py.packaging is not None:
                if f.requires_python not in rp_ok:
                    try:
                        rp_ok[f.requires_python] = SpecifierSet(f.requires_python).contains(py.packaging,
                                                                                             prereleases=True)
                    except InvalidSpecifier:
                        rp_ok[f.requires_python] = True
                if not rp_ok[f.requires_python]:
                    continue
            if best is None or (ver, -rank) > (best[0], best[1]):
                best = (ver, -rank, f)
        if best is None:
            raise Unresolved("unresolved", f"{project}{spec}: no wheel for Python {self.target.python} on "
                                           f"{self.target.os} {self.target.arch} on {index}")
        return _Pick(project, Version(str(best[0])), best[2], best[2].size)

    def _add(self, req: Requirement, index: str, queue: list[str]) -> None:
        name = self.R.normalise(req.name)
        old = self.specs.get(name)
        self.specs[name] = (old & req.specifier) if old is not None else SpecifierSet(str(req.specifier))
        extras = self.extras.setdefault(name, set())
        new_extras = set(req.extras) - extras
        extras |= new_extras
        self.index_of.setdefault(name, index)
        pick = self.picks.get(name)
        fits = pick is not None and self.specs[name].contains(str(pick.version), prereleases=True)
        if name in self.satisfied and self.specs[name].contains(self.installed[name], prereleases=True):
            fits = True
        if not fits or new_extras:
            self.picks.pop(name, None)
            self.satisfied.discard(name)
            queue.append(name)

    def run(self, groups: Sequence[tuple[str, Sequence[str]]]) -> list[_Pick]:
        from packaging.requirements import InvalidRequirement, Requirement  # lazy: 6 ms, only for a walk

        queue: list[str] = []
        for index, reqs in groups:
            for line in reqs:
                try:
                    self._add(Requirement(line), index, queue)
                except InvalidRequirement as exc:
                    raise Unresolved("unresolved", f"{line}: {exc}") from exc
        rounds = 0
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            while queue:
                rounds += 1
                names = list(dict.fromkeys(queue))
                queue.clear()
                if len(self.specs) > MAX_PROJECTS or rounds > 40:
                    raise Unresolved("unresolved", f"more than {MAX_PROJECTS} projects or re-picks; not walked")
                # each project of a round is read side by side (a CUDA build's ~20 nvidia-* projects), page, pick,
                # size and metadata one after the other in its own thread: a round waits for its slowest project,
                # not for the slowest page and then the slowest metadata
                steps = dict(zip(names, pool.map(self._step, names), strict=True))
                for st in steps.values():  # the errors in the order the lockstep rounds raised them
                    if st.choose_error is not None:
                        raise st.choose_error
                unsized = sorted(st.pick.file.filename for st in steps.values()
                                 if st.pick is not None and st.pick.size is None)
                if unsized:
                    raise Unresolved("no-sizes", f"the index gives no size for {', '.join(unsized[:5])}")
                for st in steps.values():
                    if st.meta_error is not None:
                        raise st.meta_error
                chosen = {n: st.pick for n, st in steps.items()}
                metas = {n: st.meta for n, st in steps.items()}
                for n, pick in chosen.items():
                    if pick is None:
                        self.satisfied.add(n)
                        continue
                    self.picks[n] = pick
                    meta = metas[n]
                    assert meta is not None
                    for line in meta.requires_dist:
                        try:
                            req = Requirement(line)
                        except InvalidRequirement:
                            continue
                        if _applies(req, self.target, self.extras.get(n, set())):
                            self._add(req, self.index_of[n], queue)
        return list(self.picks.values())

    def _step(self, name: str) -> _Step:
        """One project of a round: its page, the pick, the pick's size when the page has none (a PEP 503 page:
        download.pytorch.org, many mirrors — the file's server is asked) and its metadata."""
        st = _Step()
        try:
            st.pick = self._choose(self.index_of[name], name)
        except Unresolved as exc:
            st.choose_error = exc
            return st
        if st.pick is None:
            return st
        if st.pick.size is None:
            self._size(st.pick)
            if st.pick.size is None:
                return st  # no size: the round says so before any metadata error
        try:
            st.meta = self._metadata(st.pick)
        except Unresolved as exc:
            st.meta_error = exc
        return st

    def _size(self, pick: _Pick) -> None:
        """The file's length from a HEAD (Content-Length after redirects), else a one-byte range request."""
        key = ("size", pick.file.url)
        got = _CACHE.get(key)
        if got is None and time.monotonic() < self.deadline:
            got = _head_length(self.http, pick.file.url.split("#")[0])
            if got is None:
                with suppress(self.R.RefreshError):
                    got = self.http.size(pick.file.url.split("#")[0])
            if got is not None:
                _CACHE.put(key, got)
        pick.size = got

    def _metadata(self, pick: _Pick | None) -> R.Metadata | None:
        if pick is None:
            return None
        if time.monotonic() > self.deadline:
            raise Unresolved("unreachable", "the index did not answer in time")
        def read() -> dict[str, Any]:
            meta = self.R.wheel_metadata(self.http, pick.file)
            return {"name": meta.name, "version": meta.version, "requires_python": meta.requires_python,
                    "requires_dist": meta.requires_dist, "provides_extra": meta.provides_extra, "how": meta.how}

        try:  # read once when the walks of several frameworks want the same wheel (cuDNN, numpy) at once
            got = self.cache.metadata_or_read(pick.file.url, read)
        except self.R.RefreshError as exc:
            raise Unresolved("unresolved", f"the dependencies of {pick.file.filename} cannot be read: {exc}") from exc
        return self.R.Metadata(got["name"], got["version"], got["requires_python"], got["requires_dist"],
                               got["provides_extra"], [], got["how"])


def _tag_rank(filename: str, ranks: Mapping[str, int], seen: dict[str, int | None] | None = None) -> int | None:
    """The best rank of a wheel's tags (its compressed tag sets expanded, as PEP 425 writes them) for the target,
    read from the file name alone; None when no tag fits. ``seen``: ranks of tag triples already worked out (a
    page's thousands of wheels share a few dozen "cp312-cp312-manylinux_2_28_x86_64" triples)."""
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    triple = "-".join(parts[-3:])
    if seen is not None and triple in seen:
        return seen[triple]
    pys, abis, plats = (x.split(".") for x in parts[-3:])
    found = [r for i in pys for a in abis for p in plats if (r := ranks.get(f"{i}-{a}-{p}")) is not None]
    rank = min(found) if found else None
    if seen is not None:
        seen[triple] = rank
    return rank


def _head_length(http: Any, url: str) -> int | None:
    """Content-Length of a HEAD (no body is read); None when the server does not say it."""
    import requests  # lazy: see _Walk (only a walk of the index asks servers)

    http.requests += 1
    try:
        r = http.session.head(url, allow_redirects=True, timeout=http.timeout)
    except requests.exceptions.RequestException:
        return None
    length = r.headers.get("Content-Length", "")
    return int(length) if r.status_code == 200 and length.isdigit() else None


def _applies(req: Requirement, target: Target, extras: Iterable[str]) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate(target.markers(e)) for e in ["", *extras])


def measure(groups: Sequence[tuple[str, Sequence[str]]], target: Target, *, estimate_mib: int,
            installed: Mapping[str, str] | None = None, timeout: float = TIMEOUT, deadline: float = DEADLINE,
            http: Any = None, extra_indexes: Sequence[str] = (), proxy: str | None = None) -> DownloadSize:
    """The bytes pip will download for ``groups`` — (index URL, requirement lines) as the plan's pip steps
    pass them — into an environment for ``target`` that already has ``installed`` (name → version).
    ``extra_indexes``: pip's configured extra-index-url (read beside every index, as pip does; only http(s)).

    Never raises for network trouble or an index without sizes: the answer is then the table estimate,
    labelled as one, with the reason.
    """
    from gpusetup.compat import indexcache  # lazy: see _Walk

    extra = [u for u in extra_indexes if u.startswith(("http://", "https://"))]
    cache = indexcache.shared()
    # the answer (files and sizes), not the pages, is what a later plan needs: kept as long as the pages would be
    question = [[[u, list(r)] for u, r in groups], [target.python, target.os, target.arch, target.macos],
                sorted((installed or {}).items()), extra]
    known = cache.recall("download-size", question, valid_for=PAGE_SECONDS)
    if known is not indexcache.MISSING:
        return DownloadSize("index", bytes=known["bytes"], files=known["files"], estimate_mib=estimate_mib)
    from gpusetup.compat import refresh  # lazy: requests is imported only when the index is really asked

    if http is None:  # pip's own proxy setting (the environment's HTTPS_PROXY is honoured by requests itself)
        http = refresh.Http(timeout=timeout, deadline=deadline, proxies={"http": proxy, "https": proxy} if proxy else None)
    walk = _Walk(target, installed or {}, http, time.monotonic() + deadline, extra, cache)
    try:
        picks = walk.run(groups)
    except Unresolved as exc:
        return DownloadSize("estimate", reason=exc.reason, detail=str(exc), estimate_mib=estimate_mib)
    files: list[dict[str, Any]] = [{"project": p.project, "version": str(p.version), "file": p.file.filename,
                                    "size": int(p.size or 0)} for p in sorted(picks, key=lambda p: p.project)]
    size = DownloadSize("index", bytes=sum(f["size"] for f in files), files=files, estimate_mib=estimate_mib)
    cache.remember("download-size", question, {"bytes": size.bytes, "files": files})
    return size


def measure_all(jobs: Mapping[str, tuple[Sequence[tuple[str, Sequence[str]]], Target, int]],
                **kwargs: Any) -> dict[str, DownloadSize]:
    """:func:`measure` for several installs at once (key → (groups, target, estimate MiB)), side by side."""
    if len(jobs) <= 1:
        return {k: measure(g, t, estimate_mib=e, **kwargs) for k, (g, t, e) in jobs.items()}
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {k: pool.submit(measure, g, t, estimate_mib=e, **kwargs) for k, (g, t, e) in jobs.items()}
        return {k: f.result() for k, f in futures.items()}


def table_estimate(choices: Iterable[tuple[str, str]]) -> tuple[int, int]:
    """(download MiB, installed MiB) from ``resources/install/sizes.json`` for (framework, variant) pairs: a
    framework's own measured row where the table has one, else the generic row for the variant."""
    rows = resources.read_json("install", "sizes.json")["tables"]["disk"]["rows"]
    down = inst = 0
    for framework, variant in choices:
        generic = next(r for r in rows if "framework" not in r and variant.startswith(r["variant_prefix"]))
        row = next((r for r in rows if r.get("framework") == framework and variant.startswith(r["variant_prefix"])),
                   generic)
        down += row["download_mib"]
        inst += row.get("installed_mib", generic["installed_mib"])
    return down, inst


DRIVER_ACTIONS = ("install-driver", "upgrade-driver")


def install_choice(fp: Any, *, wsl: bool = False, driver: bool | None = None) -> Any:
    """The build an install of this FrameworkPlan puts in place (gpusetup.install.build_plan follows this rule,
    and every surface that names "what will be installed" asks it): the choice when it works now; the GPU build
    when the driver install it needs is part of the same install (``driver`` None: when an action asks for
    it; True: always; False: never) and this is not WSL2, where the driver is Windows'; else the choice (the CPU
    build, until an action the user does first). None when there is nothing to install."""
    if fp.ok and fp.choice is not None:
        ch = fp.choice
    else:
        needs_driver = any(a.kind in DRIVER_ACTIONS for a in fp.actions)
        want_driver = driver is True or (driver is None and needs_driver)
        ch = fp.gpu_choice if (fp.gpu_choice is not None and needs_driver and want_driver and not wsl) else fp.choice
    return ch if ch is not None and ch.packages else None


def estimates(fplans: Iterable[Any]) -> dict[str, DownloadSize]:
    """Per framework, the table estimate labelled as one (the index was not asked)."""
    out: dict[str, DownloadSize] = {}
    for fp in fplans:
        ch = install_choice(fp)
        if ch is not None:
            out[fp.framework] = offline(table_estimate([(fp.framework, ch.variant)])[0])
    return out


def offline(estimate_mib: int, reason: str = "offline") -> DownloadSize:
    """The estimate when the index was not asked (``--offline``, ``GPUSETUP_LIVE=off``, a wheelhouse)."""
    return DownloadSize("estimate", reason=reason, estimate_mib=estimate_mib)
