"""Plan-time check against the live package index: does the chosen wheel really exist for this Python, OS and
architecture, and does the index have a newer release than the shipped data knows?

Short timeout, answers cached in the cache folder for a few hours, never fatal: when the index cannot be
reached, the plan stands on the shipped data and a note says so. Off when ``GPUSETUP_LIVE=off`` (the test
suite sets it) or ``gpusetup plan --offline``; ``GPUSETUP_LIVE_INDEX`` (or ``--live-index``) points it at
another index, e.g. a mirror or a test index on 127.0.0.1 — every index host in the plan is then replaced by
that one, keeping the path (``/simple/``, ``/whl/cu130/``).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion
from packaging.version import Version as PkgVersion

from gpusetup import credentials
from gpusetup.compat.db import get_db
from gpusetup.compat.indexcache import IndexCache
from gpusetup.messages import add_note, msg, render
from gpusetup.mirrors import through
from gpusetup.model import Message
from gpusetup.versions import Version

PYPI = "https://pypi.org/simple/"
CACHE_SECONDS = 6 * 3600
TIMEOUT = 4.0  # per read
DEADLINE = 12.0  # per page, the whole download (a server that drips a byte a second is cut off here)
MAX_CACHED_FILES = 20000
_PROJECTS = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


@dataclass
class LiveCheck:
    status: str  # "checked" / "offline" / "off"
    index: str | None = None
    notes: list[Any] = field(default_factory=list)  # Messages for every plan (none today; kept for the schema)
    framework_notes: dict[str, list[Any]] = field(default_factory=dict)  # framework → Messages
    newer: dict[str, str] = field(default_factory=dict)  # framework → newest version on the index, when newer

    def to_dict(self) -> dict[str, Any]:
        """English words (the JSON document); the plans' note_codes carry the same as codes."""
        return {"status": self.status, "index": self.index, "notes": [render(n) for n in self.notes],
                "newer": dict(self.newer),
                "framework_notes": {k: [render(n) for n in v] for k, v in self.framework_notes.items()}}


def enabled() -> bool:
    return os.environ.get("GPUSETUP_LIVE", "on").strip().lower() not in ("0", "off", "no", "false")


def _override(url: str, base: str | None) -> str:
    if not base:
        return url
    b, u = urlsplit(base), urlsplit(url)
    return urlunsplit((b.scheme, b.netloc, u.path, u.query, ""))


class _Pages:
    """Index pages for one check: the shared index cache (parsed files with their validators, on disk, private;
    :mod:`gpusetup.compat.indexcache`), read side by side, each download bounded by a deadline."""

    def __init__(self, timeout: float, cache: Path | None | IndexCache, now: float) -> None:
        if isinstance(cache, IndexCache):
            self.cache = cache
        else:
            self.cache = IndexCache(folder=cache, max_age=CACHE_SECONDS, now=now)
        self._http: Any = None
        self.timeout = timeout
        self.got: dict[tuple[str, str], Any] = {}

    def http(self) -> Any:
        if self._http is None:
            from gpusetup.compat import refresh as R  # lazy: only a page that must be read needs requests

            self._http = R.Http(timeout=self.timeout, deadline=DEADLINE)
        return self._http

    def prefetch(self, wanted: list[tuple[str, str]]) -> None:
        """Read the pages a check needs at once (a cold plan waits for the slowest, not for the sum)."""
        todo = [w for w in dict.fromkeys(wanted) if w not in self.got]
        if todo:
            lazy = _LazyHttp(self)
            self.got.update(self.cache.pages(todo, max_age=CACHE_SECONDS, http=lazy))

    def page(self, index: str, project: str) -> Any:
        key = (index, project)
        if key not in self.got:
            self.prefetch([key])
        got = self.got[key]
        if isinstance(got, Exception):
            raise got
        return got

    def files(self, index: str, project: str) -> list[str]:
        return [f.filename for f in self.page(index, project).files if not f.yanked][:MAX_CACHED_FILES]

    def find(self, index: str, project: str, version: str, prefix: bool, local: str | None, python: str | None,
             platform: str | None) -> str | None:
        """The shortest file name on the page that is this build for this Python and platform (None: none is);
        derived once per page version and kept with the cache."""
        page = self.page(index, project)

        def compute() -> str | None:
            try:  # the pin as pip reads it: "==2.9.1" exactly, "==2.9.*" any 2.9.x
                pin = SpecifierSet(f"=={version}.*" if prefix else f"=={version}")
            except InvalidSpecifier:
                return None
            found = sorted((n for n in self.files(index, project)
                            if _for_platform(n, platform) and _matches(n, pin, local, python, platform)), key=len)
            return found[0] if found else None

        return self.cache.answer("live-find", [project, version, prefix, local, python, platform], compute, page=page)

    def newest(self, index: str, project: str) -> str | None:
        """The newest final release on the page (kept with the cache, per page version)."""
        from gpusetup.compat import refresh as R  # lazy: see _Pages.http

        page = self.page(index, project)

        def compute() -> str | None:
            # each version string once (torch's ~7,000 wheels name ~200 versions), as parse_wheel reads it
            found: set[str] = set()
            for text in {n.split("-")[1] for n in self.files(index, project) if n.endswith(".whl") and n.count("-") >= 4}:
                try:
                    v = PkgVersion(text)
                except InvalidVersion:
                    continue
                if not (v.is_prerelease or v.is_devrelease):
                    found.add(v.public)
            return max(found, key=R.version_key) if found else None

        return self.cache.answer("live-newest", [project], compute, page=page)


class _LazyHttp:
    """Creates the HTTP client (and imports requests) only when a page is really read."""

    def __init__(self, pages: _Pages) -> None:
        self.pages = pages

    def request(self, *args: Any, **kwargs: Any) -> Any:
        return self.pages.http().request(*args, **kwargs)


def _platform(machine: Any) -> str | None:
    s = machine.system
    os_name = (s.os or "").lower()
    arch = (s.arch or "").lower()
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64" if os_name != "macos" else "arm64"}.get(arch, arch)
    if s.wsl or os_name == "linux":
        return f"linux-{arch or 'x86_64'}"
    if os_name == "windows":
        return "windows-x86_64"
    if os_name in ("macos", "darwin"):
        return f"macos-{'arm64' if arch in ('arm64', 'aarch64') else arch}"
    return None


def _spec(package: str) -> tuple[str, str, bool]:
    """'torch==2.14.*' → ('torch', '2.14', prefix=True); 'jax[cuda13]==0.12.0.1' → ('jax', '0.12.0.1', False)."""
    m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([0-9][0-9a-zA-Z.]*?)(\.\*)?$", package.strip())
    if not m:
        return package, "", False
    return m.group(1), m.group(2), bool(m.group(3))


def _for_platform(name: str, platform: str | None) -> bool:
    """The cheap test first, on the file name's platform tags alone (most of a page is other platforms' wheels):
    False only when no tag can be ``platform`` (parse_wheel then decides)."""
    if not platform:
        return True
    if not name.endswith(".whl"):
        return False
    from gpusetup.compat import refresh as R  # lazy: see _Pages.files

    tags = name[:-4].rsplit("-", 1)[-1].split(".")
    return any(R.platform_of_tag(t) in (platform, "any") for t in tags)


def _matches(name: str, pin: SpecifierSet, local: str | None, python: str | None, platform: str | None) -> bool:
    from gpusetup.compat import refresh as R  # lazy: see _Pages.files

    w = R.parse_wheel(R.IndexFile(name, ""))
    if w is None or w.prerelease:
        return False
    have = Version(w.version).packaging
    if have is None or not pin.contains(have, prereleases=True):
        return False
    if local is not None and w.local != local:
        return False
    if python and not any(p == python or p.startswith("py3") for p in w.pythons):
        return False
    return not (platform and not any(p == platform or p == "any" for p in w.platforms))


def _data_newest(db: Any, framework: str) -> str | None:
    from gpusetup.compat.resolver import family  # lazy: the resolver is loaded by every plan anyway

    return family(framework).newest_known(db)


def _short(index: str, exc: Exception) -> str:
    """'download.pytorch.org: the name does not resolve' — not the whole exception chain."""
    host = urlsplit(index).hostname or index
    text = str(exc)
    if "NameResolution" in text or "Name or service not known" in text or "getaddrinfo" in text:
        why = "the name does not resolve"
    elif "Timeout" in text or "timed out" in text:
        why = "timed out"
    elif "did not finish in time" in text:
        why = "the download did not finish in time"
    elif "404" in text:
        why = "not found (404)"
    elif "answered" in text:
        why = text.rsplit(": ", 1)[-1]
    elif "Connection" in text:
        why = "the connection failed"
    else:
        why = type(exc).__name__
    return f"{host}: {why}"


def _pypi_same_build(db: Any, framework: str, series: str, variant: str, platform: str | None) -> bool:
    """Whether PyPI's wheel of this torch release is the same build as the chosen variant (its PyPI default)."""
    if framework != "pytorch" or platform not in ("linux-x86_64", "linux-aarch64"):
        return False
    field = "pypi_default_linux" if platform == "linux-x86_64" else "pypi_default_aarch64"
    row = next((r for r in db.rows("pytorch", "releases") if r["version"] == series), None)
    return bool(row and row.get(field) == variant)


def check(
    plans: Sequence[Any],
    machine: Any,
    *,
    index: str | None = None,
    timeout: float = TIMEOUT,
    cache: Path | None | IndexCache = None,
    now: float | None = None,
    pypi_mirror: str | None = None,
    pytorch_mirror: str | None = None,
) -> LiveCheck:
    """Check each plan's chosen wheel and the newest release on the index the install will use (the user's
    mirrors applied, gpusetup.mirrors.through). Never raises for network trouble: an index that cannot be
    reached is a note, ``live.offline-index`` for the one that holds the chosen build (:func:`unreachable`).

    ``cache``: a folder (tests), or the index cache to share; None: the process's shared cache
    (:func:`gpusetup.compat.indexcache.shared`). Credentials in ``index`` are used, never shown or stored."""
    from gpusetup.compat import refresh as R  # lazy: see _Pages.files
    from gpusetup.compat.indexcache import shared  # lazy: with refresh above, only a live check needs it

    base = index or os.environ.get("GPUSETUP_LIVE_INDEX") or None
    pages = _Pages(timeout, shared() if cache is None and now is None else cache, time.time() if now is None else now)
    db = get_db()
    pypi = _override(_slash(_real(pypi_mirror)) if pypi_mirror else PYPI, base)
    torch_mirror = _real(pytorch_mirror) if pytorch_mirror else None
    result = LiveCheck(status="checked", index=credentials.mask_url(pypi))
    pages.prefetch(_wanted(plans, base, pypi, torch_mirror))
    platform = _platform(machine)
    where = (platform or "this platform").replace("-", " ").replace("linux", "Linux").replace("windows", "Windows").replace("macos", "macOS")
    failures = 0
    reads = 0
    for p in plans:
        notes = result.framework_notes.setdefault(p.framework, [])
        choice = p.choice if p.ok or p.gpu_choice is None else p.gpu_choice
        if choice is not None and choice.packages:
            name, version, prefix = _spec(choice.packages[0])
            project = "jaxlib" if name == "jax" else name  # jax is pure Python; jaxlib carries the platform
            idx = _index_of(choice, base, pypi, torch_mirror)
            local = choice.variant if (choice.index_url and re.match(r"^(cu\d+|rocm[\d.]+|xpu|cpu)$", choice.variant)) else None
            python = choice.python if choice.python and re.fullmatch(r"\d+\.\d+t?", choice.python) else None
            label = f"{version}{'.*' if prefix else ''}" + (f"+{local}" if local else "")
            params = {"index": credentials.mask_url(idx), "package": project, "version": label, "python": python or "any",
                      "platform": where}
            reads += 1
            reachable = True
            found: str | None = None
            try:
                found = pages.find(idx, project, version, prefix, local, python, platform)
            except R.RefreshError as exc:
                reachable = "(404)" in str(exc)  # an index without the project simply lacks the wheel
                if not reachable:
                    failures += 1
                    notes.append(msg("live.offline-index", index=credentials.mask_url(idx), detail=_short(idx, exc),
                                     checked=db.checked))
                    if idx != pypi and _pypi_same_build(db, p.framework, version, choice.variant, platform):
                        # PyPI carries the very same build (the release's PyPI default variant): check it there
                        try:
                            same = pages.find(pypi, project, version, prefix, None, python, platform)
                        except R.RefreshError:
                            same = None
                        if same:
                            notes.append(msg("live.wheel-found-pypi", **{**params, "index": credentials.mask_url(pypi)},
                                             file=same))
            if reachable:
                if found:
                    notes.append(msg("live.wheel-found", **params, file=found))
                else:
                    notes.append(msg("live.wheel-missing", **params, checked=db.checked))
        project = _PROJECTS[p.framework]
        reads += 1
        try:
            newest = pages.newest(pypi, project)
        except R.RefreshError as exc:
            failures += 1
            notes.append(msg("live.offline", detail=_short(pypi, exc), checked=db.checked))
            continue
        known = _data_newest(db, p.framework)
        if newest and known and R.version_key(newest) > R.version_key(known):
            result.newer[p.framework] = newest
            notes.append(msg("live.newer-release", checked=db.checked, package=project, newest=newest, known=known))
    if failures:
        result.status = "offline" if failures == reads else "partial"
    return result


def _real(url: str) -> str:
    """A mirror URL with its password (kept in this process by gpusetup.credentials), or as it is."""
    try:
        return credentials.reveal(url)
    except credentials.MissingCredential:
        return url


def _slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def unreachable(plan: Any) -> list[str]:
    """The indexes (masked URLs) that hold a plan's chosen build and could not be reached when it was checked:
    the install will fail there until the network, a proxy or a mirror lets it through."""
    out: list[str] = []
    for m in getattr(plan, "note_codes", None) or []:
        code = m.code if isinstance(m, Message) else (m.get("code") if isinstance(m, dict) else None)
        params = m.params if isinstance(m, Message) else (m.get("params") or {} if isinstance(m, dict) else {})
        if code == "live.offline-index" and params.get("index") and params["index"] not in out:
            out.append(str(params["index"]))
    return out


def _index_of(choice: Any, base: str | None, pypi: str, torch_mirror: str | None) -> str:
    """The index a chosen build is read from: its own (through the user's PyTorch mirror), else PyPI's."""
    upstream = through(choice.index_url, None, torch_mirror)
    return _slash(_override(upstream, base) if upstream else pypi)


def _choice_page(choice: Any, base: str | None, pypi: str, torch_mirror: str | None = None) -> tuple[str, str] | None:
    if choice is None or not choice.packages:
        return None
    name, _version, _prefix = _spec(choice.packages[0])
    project = "jaxlib" if name == "jax" else name
    return (_index_of(choice, base, pypi, torch_mirror), project)


def _wanted(plans: Sequence[Any], base: str | None, pypi: str, torch_mirror: str | None = None) -> list[tuple[str, str]]:
    """Every page the check reads: each chosen wheel's index page and the framework's PyPI page."""
    out: list[tuple[str, str]] = []
    for p in plans:
        page = _choice_page(p.choice if p.ok or p.gpu_choice is None else p.gpu_choice, base, pypi, torch_mirror)
        if page:
            out.append(page)
        out.append((pypi, _PROJECTS[p.framework]))
    return out


def apply(plans: Sequence[Any], live: LiveCheck) -> None:
    """Add the live check's notes to each plan (code + English, so every surface and language shows them)."""
    for p in plans:
        for m in live.framework_notes.get(p.framework, []) + live.notes:
            add_note(p, m)
