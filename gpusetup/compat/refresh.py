"""Facts about framework wheels, read from the package indexes and from the wheels themselves.

Used by ``scripts/refresh_compat.py`` (the maintainers' refresh tool) and, for the index part, by
:mod:`gpusetup.compat.live` (the plan-time check). Nothing here edits ``resources/compat``: the refresh tool
turns these facts into a proposed diff that a maintainer reviews.

What is read, and how:

- **Index pages** — PEP 691 JSON (``Accept: application/vnd.pypi.simple.v1+json``) or, when the index only
  speaks HTML, PEP 503 anchors (``data-requires-python``, ``data-core-metadata``, ``data-yanked``): every file
  of a project, its wheel tags (version, ``+cuXXX`` local label, Python tags, platforms).
- **Wheel METADATA** — from the PEP 658 ``.metadata`` file when the index offers one, else by reading just the
  ``*.dist-info/METADATA`` member of the remote wheel with HTTP range requests (the zip central directory
  and one member; a 500 MB wheel costs a few hundred kB). ``Requires-Dist`` of the ``nvidia-*`` /
  ``cuda-toolkit`` dependencies gives the CUDA and cuDNN versions the wheel was built for.
- **GPU code** — one shared library is fetched out of the wheel (again by range, bounded by a size limit)
  and ``cuobjdump --list-elf`` / ``--list-ptx`` lists the real ``sm_XY`` cubins and ``compute_XY`` PTX in it.
"""

from __future__ import annotations

import email.parser
import html
import json
import re
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpusetup import credentials, versions
from gpusetup.compat import fetch
from gpusetup.versions import Version

JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
MAX_PAGE_BYTES = 64 << 20  # torch's PyPI page is ~1 MB of JSON; a bound, not an expectation
MAX_METADATA_BYTES = 4 << 20
MAX_CENTRAL_DIR_BYTES = 32 << 20


class RefreshError(Exception):
    """A fact could not be read; the message says which and why."""


# ------------------------------------------------------------------------------------------- HTTP


class Http:
    """A small bounded HTTP client (requests): every read has a size limit, every request a per-read timeout
    *and* a deadline for the whole download (a server that drips a byte a second is cut off at ``deadline``
    seconds, not kept alive read after read)."""

    def __init__(self, timeout: float = 30.0, session: Any = None, deadline: float | None = None,
                 proxies: dict[str, str] | None = None) -> None:
        self.timeout = timeout
        self.deadline = deadline if deadline is not None else max(timeout * 4, 20.0)
        self._session = session
        self.proxies = dict(proxies or {})
        self.requests = 0
        self.bytes = 0
        self.not_modified = 0
        self._lock = threading.Lock()

    @property
    def session(self) -> Any:
        """The requests session, made on first use (importing requests costs 82-185 ms, python -X importtime; a
        plan whose pages are all cached never needs it). Clients with the same proxies share one session, so the
        download-size walks reuse the connections (and TLS sessions) the live check opened."""
        with self._lock:
            if self._session is None:
                self._session = shared_session(self.proxies)
            return self._session

    def _count(self, requests_: int = 0, bytes_: int = 0, not_modified: int = 0) -> None:
        with self._lock:
            self.requests += requests_
            self.bytes += bytes_
            self.not_modified += not_modified

    def request(self, url: str, *, accept: str | None = None, limit: int = MAX_PAGE_BYTES,
                byte_range: tuple[int, int] | None = None, etag: str | None = None,
                last_modified: str | None = None) -> Response:
        """GET ``url``: status 200/206 with the body, or 304 (empty body) when ``etag``/``last_modified`` still
        hold. Raises :class:`RefreshError` for anything else, a body over ``limit``, or the deadline passing."""
        import requests  # lazy: 82-185 ms (python -X importtime); only a refresh downloads

        headers = {}
        if accept:
            headers["Accept"] = accept
        if byte_range is not None:
            headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        self._count(requests_=1)
        where = _Where(url)  # scrubbed only when a message needs it (each scrub reads the environment)
        try:
            got = fetch.get(self.session, url, limit=limit, timeout=self.timeout,
                            deadline=time.monotonic() + self.deadline, headers=headers)
        except fetch.DeadlineExceeded as exc:
            raise RefreshError(f"{where}: the download did not finish in time (no complete answer within "
                               f"{self.deadline:.0f} s)") from exc
        except fetch.TooLarge as exc:
            raise RefreshError(f"{where}: larger than {limit} bytes, refused") from exc
        except requests.exceptions.RequestException as exc:
            raise RefreshError(f"{where}: {type(exc).__name__}: {scrub(str(exc))}") from exc
        ctype = got.headers.get("Content-Type", "")
        if got.status == 304 and (etag or last_modified):
            self._count(not_modified=1)
            return Response(304, b"", got.url, ctype, dict(got.headers))
        if got.status == 404:
            raise RefreshError(f"{where}: not found (404)")
        if got.status not in (200, 206):
            raise RefreshError(f"{where}: the server answered {got.status}")
        if byte_range is not None and got.status != 206:
            raise RefreshError(f"{where}: the server does not answer range requests")
        self._count(bytes_=len(got.body))
        return Response(got.status, got.body, got.url, ctype, dict(got.headers))

    def get(self, url: str, *, accept: str | None = None, limit: int = MAX_PAGE_BYTES,
            byte_range: tuple[int, int] | None = None) -> tuple[bytes, str, str]:
        """(body, final URL, content type). ``byte_range`` is inclusive (start, end)."""
        r = self.request(url, accept=accept, limit=limit, byte_range=byte_range)
        return r.body, r.url, r.content_type

    def size(self, url: str) -> int:
        """The length of a remote file, from a one-byte range request."""
        import requests  # lazy: 82-185 ms (python -X importtime); only a refresh downloads

        self._count(requests_=1)
        try:
            with self.session.get(url, headers={"Range": "bytes=0-0"}, stream=True, timeout=self.timeout) as r:
                rng = r.headers.get("Content-Range", "")
                m = re.search(r"/(\d+)$", rng)
                if r.status_code == 206 and m:
                    return int(m.group(1))
                raise RefreshError(f"{scrub(url)}: the server does not say the file size (no range support)")
        except requests.exceptions.RequestException as exc:
            raise RefreshError(f"{scrub(url)}: {type(exc).__name__}: {scrub(str(exc))}") from exc


POOL_SIZE = 64  # connections kept per host: the plan's walks read ~20 pages at once each, three walks side by side
_SESSIONS: dict[tuple[tuple[str, str], ...], Any] = {}
_SESSIONS_LOCK = threading.Lock()


def shared_session(proxies: dict[str, str] | None = None) -> Any:
    """The process's requests session for these proxies, with a connection pool large enough for the concurrent
    reads (requests' default of 10 connections per host made urllib3 discard connections — and print "Connection
    pool is full" on the plan's stderr — so every burst opened new TCP and TLS connections)."""
    key = tuple(sorted((proxies or {}).items()))
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            import requests  # lazy: 82-185 ms (python -X importtime); only a page that must be read
            from requests.adapters import HTTPAdapter  # lazy: with requests, only when a page must be read

            session = requests.Session()
            session.headers.setdefault("User-Agent", "gpusetup-compat-refresh")
            if proxies:
                session.proxies.update(proxies)
            for scheme in ("https://", "http://"):
                session.mount(scheme, HTTPAdapter(pool_connections=16, pool_maxsize=POOL_SIZE))
            _SESSIONS[key] = session
        return session


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    url: str
    content_type: str
    headers: dict[str, str]


class _Where:
    """A URL for messages, scrubbed of credentials when it is turned into text."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __str__(self) -> str:  # f"{where}" formats through str()
        return scrub(self.url)


def scrub(text: str) -> str:
    """The text with any credential in a URL replaced (one scrubber: gpusetup.credentials)."""
    return credentials.scrub(text)


# ------------------------------------------------------------------------------------------ index


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    requires_python: str | None = None
    size: int | None = None
    upload_time: str | None = None
    yanked: bool = False
    metadata_url: str | None = None  # PEP 658 / 714


@dataclass(frozen=True)
class Wheel:
    """A wheel's name parsed into what the resolver needs."""

    file: IndexFile
    project: str
    version: str  # public version, "2.9.1"
    local: str | None  # "cu130", "rocm6.4", "cpu" or None
    pythons: tuple[str, ...]  # ("3.12",) ; "3.13t" for free-threaded builds; "py3" for pure wheels
    platforms: tuple[str, ...]  # normalised: ("linux-x86_64",) ("linux-aarch64",) ("windows-x86_64",) ("macos-arm64",)
    prerelease: bool = False

    @property
    def series(self) -> str:
        parts = self.version.split(".")
        return ".".join(parts[:2])


def project_url(index_url: str, project: str) -> str:
    base = index_url if index_url.endswith("/") else index_url + "/"
    return urljoin(base, f"{normalise(project)}/")


def normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


_ANCHOR = re.compile(r"<a\s+([^>]*)>(.*?)</a>", re.IGNORECASE | re.DOTALL)
_ATTR = re.compile(r"([\w-]+)\s*=\s*(\"[^\"]*\"|'[^']*')")


def parse_index_page(body: bytes, page_url: str, content_type: str) -> list[IndexFile]:
    """Files of one project page, PEP 691 JSON or PEP 503 HTML."""
    if "json" in content_type or body.lstrip()[:1] == b"{":
        doc = json.loads(body)
        out = []
        for f in doc.get("files", []):
            meta = f.get("core-metadata", f.get("dist-info-metadata"))
            url = _absolute(page_url, f["url"])
            out.append(
                IndexFile(
                    filename=f["filename"],
                    url=url,
                    requires_python=f.get("requires-python") or None,
                    size=f.get("size"),
                    upload_time=f.get("upload-time"),
                    yanked=bool(f.get("yanked")),
                    metadata_url=url.split("#")[0] + ".metadata" if meta else None,
                )
            )
        return out
    text = body.decode("utf-8", "replace")
    out = []
    for attrs_text, label in _ANCHOR.findall(text):
        attrs = {k.lower(): html.unescape(v[1:-1]) for k, v in _ATTR.findall(attrs_text)}
        href = attrs.get("href")
        if not href:
            continue
        url = _absolute(page_url, href)
        filename = html.unescape(re.sub(r"<[^>]+>", "", label)).strip() or url.split("#")[0].rsplit("/", 1)[-1]
        meta = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
        out.append(
            IndexFile(
                filename=filename,
                url=url,
                requires_python=attrs.get("data-requires-python") or None,
                yanked="data-yanked" in attrs,
                metadata_url=url.split("#")[0] + ".metadata" if meta is not None else None,
            )
        )
    return out


def _absolute(page_url: str, href: str) -> str:
    """``href`` resolved against the page; an absolute http(s) URL (PyPI's file links) is taken as it is — urljoin
    on each of torch's ~7,000 files cost a tenth of a cold plan's CPU."""
    if href.startswith(("https://", "http://")) and "/./" not in href and "/../" not in href:
        return href
    return urljoin(page_url, href)


def list_files(http: Http, index_url: str, project: str) -> tuple[list[IndexFile], str]:
    """All files of ``project`` on the index, and the page URL they were read from."""
    url = project_url(index_url, project)
    body, final, ctype = http.get(url, accept=JSON_ACCEPT)
    return parse_index_page(body, final, ctype), final


def platform_of_tag(tag: str) -> str | None:
    """A wheel platform tag as gpusetup names platforms: "manylinux_2_28_x86_64" → "linux-x86_64", "any"."""
    return _platform(tag)


def _platform(tag: str) -> str | None:
    if tag.startswith("manylinux") or tag.startswith("musllinux") or tag.startswith("linux"):
        arch = tag.split("_", 3)[-1] if tag.startswith(("manylinux_", "musllinux_")) else tag.split("_", 1)[-1]
        return f"linux-{arch}"
    if tag == "win_amd64":
        return "windows-x86_64"
    if tag == "win_arm64":
        return "windows-arm64"
    if tag.startswith("macosx"):
        arch = tag.split("_", 3)[-1]
        return f"macos-{'arm64' if arch in ('arm64', 'universal2') else arch}"
    if tag == "any":
        return "any"
    return None


def parse_wheel(f: IndexFile) -> Wheel | None:
    """Wheel tags of an index file, or None for sdists and unparsable names."""
    if not f.filename.endswith(".whl"):
        return None
    try:
        name, version, _build, tags = parse_wheel_filename(f.filename)
    except (InvalidWheelFilename, ValueError):
        return None
    pythons = set()
    platforms = set()
    for t in tags:
        if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit():
            digits = t.interpreter[2:]
            py = f"{digits[0]}.{digits[1:]}"
            if t.abi.endswith("t") and t.abi.startswith("cp"):
                py += "t"
            pythons.add(py)
        elif t.interpreter.startswith("py"):
            pythons.add(t.interpreter)
        p = _platform(t.platform)
        if p:
            platforms.add(p)
    return Wheel(
        file=f,
        project=str(name),
        version=version.public,
        local=version.local,
        pythons=tuple(sorted(pythons, key=_py_key)),
        platforms=tuple(sorted(platforms)),
        prerelease=version.is_prerelease or version.is_devrelease,
    )


def _py_key(p: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", p)) or (0,)


def version_key(v: str) -> Version:
    """Sort key for index versions: the one version rule of gpusetup (:mod:`gpusetup.versions`)."""
    return versions.version_key(v)


# --------------------------------------------------------------------------- wheels read by range


@dataclass(frozen=True)
class ZipMember:
    name: str
    method: int
    compressed: int
    size: int
    header_offset: int
    crc: int | None = None  # CRC-32 from the central directory


class RemoteZip:
    """The members of a remote zip (a wheel), read with HTTP range requests only."""

    def __init__(self, http: Http, url: str, size: int | None = None) -> None:
        self.http = http
        self.url = url.split("#")[0]
        self.size = size or http.size(self.url)
        self.members = self._central_directory()

    def _range(self, start: int, length: int, limit: int) -> bytes:
        if length <= 0:
            return b""
        end = min(start + length, self.size) - 1
        data, _u, _t = self.http.get(self.url, byte_range=(start, end), limit=limit)
        return data

    def _central_directory(self) -> list[ZipMember]:
        tail_len = min(self.size, 1 << 16)
        tail = self._range(self.size - tail_len, tail_len, 1 << 17)
        pos = tail.rfind(b"PK\x05\x06")
        if pos < 0:
            raise RefreshError(f"{self.url}: not a zip file (no end-of-central-directory record)")
        _sig, _d, _dcd, _n_here, n_total, cd_size, cd_offset, _clen = struct.unpack("<IHHHHIIH", tail[pos : pos + 22])
        if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF or n_total == 0xFFFF:
            loc = tail.rfind(b"PK\x06\x07", 0, pos)
            if loc < 0:
                raise RefreshError(f"{self.url}: zip64 archive without a zip64 locator")
            (z64_off,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
            rec = self._range(z64_off, 56, 1 << 10)
            if rec[:4] != b"PK\x06\x06":
                raise RefreshError(f"{self.url}: damaged zip64 end record")
            n_total, cd_size, cd_offset = struct.unpack("<QQQ", rec[32:56])
        if cd_size > MAX_CENTRAL_DIR_BYTES:
            raise RefreshError(f"{self.url}: central directory of {cd_size} bytes is larger than the limit")
        tail_start = self.size - tail_len
        if cd_offset >= tail_start:
            cd = tail[cd_offset - tail_start : cd_offset - tail_start + cd_size]
        else:
            cd = self._range(cd_offset, cd_size, MAX_CENTRAL_DIR_BYTES)
        members = []
        i = 0
        while i + 46 <= len(cd) and cd[i : i + 4] == b"PK\x01\x02":
            (method,) = struct.unpack("<H", cd[i + 10 : i + 12])
            crc, comp, size = struct.unpack("<III", cd[i + 16 : i + 28])
            nlen, xlen, clen = struct.unpack("<HHH", cd[i + 28 : i + 34])
            (offset,) = struct.unpack("<I", cd[i + 42 : i + 46])
            name = cd[i + 46 : i + 46 + nlen].decode("utf-8", "replace")
            extra = cd[i + 46 + nlen : i + 46 + nlen + xlen]
            if 0xFFFFFFFF in (comp, size, offset):
                size, comp, offset = _zip64_extra(extra, size, comp, offset)
            members.append(ZipMember(name, method, comp, size, offset, crc))
            i += 46 + nlen + xlen + clen
        return members

    def find(self, pred: Callable[[str], bool]) -> list[ZipMember]:
        return [m for m in self.members if pred(m.name)]

    def read(self, member: ZipMember, limit: int) -> bytes:
        if member.size > limit or member.compressed > limit:
            raise RefreshError(
                f"{self.url}: {member.name} is {member.size} bytes, larger than the limit of {limit} bytes"
            )
        head = self._range(member.header_offset, 30, 64)
        if head[:4] != b"PK\x03\x04":
            raise RefreshError(f"{self.url}: damaged local header for {member.name}")
        nlen, xlen = struct.unpack("<HH", head[26:30])
        raw = self._range(member.header_offset + 30 + nlen + xlen, member.compressed, limit + 1)
        if member.method == 0:
            data = raw
        elif member.method == 8:
            d = zlib.decompressobj(-15)
            data = d.decompress(raw, limit + 1)
            if len(data) > limit:
                raise RefreshError(f"{self.url}: {member.name} inflates beyond the limit")
        else:
            raise RefreshError(f"{self.url}: {member.name} uses zip method {member.method}, which is not supported")
        if len(data) != member.size:
            raise RefreshError(f"{self.url}: {member.name} read {len(data)} bytes, expected {member.size}")
        return data

    def extract(self, member: ZipMember, dest: Path, limit: int, chunk: int = 32 << 20) -> Path:
        """Write one member to ``dest``, fetched by ranges of ``chunk`` bytes and inflated as it arrives: a 1.2 GB
        ``libtorch_cuda.so`` never sits in memory whole (``read`` holds the member and its compressed bytes).
        Bounded like ``read``: the member's sizes against ``limit`` before the first byte, the inflated output
        against both while it is written, the CRC at the end."""
        if member.size > limit or member.compressed > limit:
            raise RefreshError(
                f"{self.url}: {member.name} is {member.size} bytes, larger than the limit of {limit} bytes"
            )
        if member.method not in (0, 8):
            raise RefreshError(f"{self.url}: {member.name} uses zip method {member.method}, which is not supported")
        head = self._range(member.header_offset, 30, 64)
        if head[:4] != b"PK\x03\x04":
            raise RefreshError(f"{self.url}: damaged local header for {member.name}")
        nlen, xlen = struct.unpack("<HH", head[26:30])
        start = member.header_offset + 30 + nlen + xlen
        inflate = zlib.decompressobj(-15) if member.method == 8 else None
        written = crc = 0
        with open(dest, "wb") as out:
            for pos in range(start, start + member.compressed, chunk):
                raw = self._range(pos, min(chunk, start + member.compressed - pos), chunk + 1)
                data = inflate.decompress(raw, member.size + 1 - written) if inflate is not None else raw
                written += len(data)
                if written > member.size:
                    raise RefreshError(f"{self.url}: {member.name} inflates beyond its recorded size")
                crc = zlib.crc32(data, crc)
                out.write(data)
            if inflate is not None:
                tail = inflate.flush()
                written += len(tail)
                crc = zlib.crc32(tail, crc)
                out.write(tail)
        if written != member.size:
            raise RefreshError(f"{self.url}: {member.name} read {written} bytes, expected {member.size}")
        if member.crc is not None and crc != member.crc:
            raise RefreshError(f"{self.url}: {member.name} does not match its CRC-32")
        return dest


def _zip64_extra(extra: bytes, size: int, comp: int, offset: int) -> tuple[int, int, int]:
    j = 0
    while j + 4 <= len(extra):
        hid, hlen = struct.unpack("<HH", extra[j : j + 4])
        body = extra[j + 4 : j + 4 + hlen]
        if hid == 1:
            k = 0
            if size == 0xFFFFFFFF:
                (size,) = struct.unpack("<Q", body[k : k + 8])
                k += 8
            if comp == 0xFFFFFFFF:
                (comp,) = struct.unpack("<Q", body[k : k + 8])
                k += 8
            if offset == 0xFFFFFFFF:
                (offset,) = struct.unpack("<Q", body[k : k + 8])
            break
        j += 4 + hlen
    return size, comp, offset


# -------------------------------------------------------------------------------------- metadata


@dataclass
class Metadata:
    name: str
    version: str
    requires_python: str | None
    requires_dist: list[str]
    provides_extra: list[str]
    classifiers: list[str]
    how: str  # "PEP 658 .metadata file" / "METADATA read from the wheel by range requests"


def parse_metadata(text: str, how: str) -> Metadata:
    msg = email.parser.Parser().parsestr(text, headersonly=True)
    return Metadata(
        name=str(msg.get("Name", "")),
        version=str(msg.get("Version", "")),
        requires_python=msg.get("Requires-Python"),
        requires_dist=[str(r) for r in msg.get_all("Requires-Dist") or []],
        provides_extra=[str(r) for r in msg.get_all("Provides-Extra") or []],
        classifiers=[str(r) for r in msg.get_all("Classifier") or []],
        how=how,
    )


def wheel_metadata(http: Http, f: IndexFile) -> Metadata:
    """The wheel's METADATA: PEP 658 file when offered, else the member read by range requests."""
    if f.metadata_url:
        try:
            body, _u, _t = http.get(f.metadata_url, limit=MAX_METADATA_BYTES)
            return parse_metadata(body.decode("utf-8", "replace"), "PEP 658 .metadata file")
        except RefreshError:
            pass  # fall back to the wheel itself
    z = RemoteZip(http, f.url, f.size)
    found = z.find(lambda n: n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
    if not found:
        raise RefreshError(f"{f.filename}: no .dist-info/METADATA in the wheel")
    data = z.read(found[0], MAX_METADATA_BYTES)
    return parse_metadata(data.decode("utf-8", "replace"), "METADATA read from the wheel by HTTP range requests")


def requirements_for(meta: Metadata, *, machine: str = "x86_64", system: str = "Linux",
                     python: str = "3.12", extras: Iterable[str] = ()) -> list[Any]:
    """Requires-Dist entries that apply on this platform (and with these extras)."""
    wanted = [""] + list(extras)
    out = []
    for line in meta.requires_dist:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None:
            out.append(req)
            continue
        for extra in wanted:
            env = {
                "platform_machine": machine,
                "platform_system": system,
                "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}.get(system, system.lower()),
                "python_version": python,
                "python_full_version": python + ".0",
                "implementation_name": "cpython",
                "platform_python_implementation": "CPython",
                "os_name": "nt" if system == "Windows" else "posix",
                "extra": extra,
            }
            if req.marker.evaluate(env):
                out.append(req)
                break
    return out


@dataclass
class CudaPins:
    """What a wheel's Requires-Dist says about CUDA: the toolkit version and cuDNN, with the lines read."""

    cuda: str | None = None  # "13.0.2", "12.8.90", or a lower bound ">=13.0.48"
    cuda_major: int | None = None
    variant: str | None = None  # cuXYZ when the pin is exact
    cudnn: str | None = None  # the cudnn specifier as written: "==9.20.0.48", ">=9.3.0.75,<10"
    evidence: list[str] = field(default_factory=list)


_RUNTIME = re.compile(r"^nvidia-cuda-runtime(-cu(\d+))?$")


def cuda_pins(reqs: Sequence[Any]) -> CudaPins:
    pins = CudaPins()
    for req in reqs:
        name = normalise(req.name)
        spec = str(req.specifier)
        label = req.name + (f"[{','.join(sorted(req.extras))}]" if req.extras else "") + spec
        exact = next((s.version for s in req.specifier if s.operator in ("==", "===")), None)
        lower = next((s.version for s in req.specifier if s.operator in (">=", "~=")), None)
        if name == "cuda-toolkit" or _RUNTIME.match(name):
            v = exact or lower
            if v and pins.cuda is None:
                pins.cuda = v if exact else f">={v}"
                parts = v.split(".")
                pins.cuda_major = int(parts[0])
                if exact and len(parts) >= 2:
                    pins.variant = f"cu{parts[0]}{parts[1]}"
                pins.evidence.append(label)
            m = _RUNTIME.match(name)
            if pins.cuda_major is None and m and m.group(2):
                pins.cuda_major = int(m.group(2))
        elif name.startswith("nvidia-cudnn"):
            pins.cudnn = spec or None
            pins.evidence.append(label)
    return pins


# -------------------------------------------------------------------------------------- cuobjdump


_ELF = re.compile(r"^ELF file\s+\d+:\s+\S*?\.sm_(\d+)([a-z]?)\.cubin\s*$", re.MULTILINE)
_PTX = re.compile(r"^PTX file\s+\d+:\s+\S*?\.(?:sm|compute)_(\d+)([a-z]?)\.ptx\s*$", re.MULTILINE)


def _cc(digits: str) -> str:
    return f"{digits[:-1]}.{digits[-1]}"


@dataclass
class GpuCode:
    """The GPU code inside one shared library, as cuobjdump lists it."""

    sass: list[str]  # compute capabilities with a cubin that runs on the whole family ("7.5", "12.0")
    ptx: list[str]  # compute capabilities whose PTX is embedded
    specific: list[str]  # arch-/family-specific cubins ("9.0a", "10.0f"): run only on that CC / family
    library: str = ""
    tool: str = ""
    how: str = ""  # said when not the usual cuobjdump: "cuobjdump 11.5 (the current cuobjdump said: …)"

    @property
    def ptx_max(self) -> str | None:
        return max(self.ptx, key=_py_key) if self.ptx else None


def parse_cuobjdump(elf_out: str, ptx_out: str) -> GpuCode:
    sass, specific, ptx = set(), set(), set()
    for digits, suffix in _ELF.findall(elf_out):
        (specific.add(_cc(digits) + suffix) if suffix else sass.add(_cc(digits)))
    for digits, suffix in _PTX.findall(ptx_out):
        if not suffix:
            ptx.add(_cc(digits))
    return GpuCode(sorted(sass, key=_py_key), sorted(ptx, key=_py_key), sorted(specific, key=_py_key))


def find_cuobjdump(runner: Any, explicit: str | None = None) -> str | None:
    """cuobjdump: the given path, else PATH, else the one the nvidia-cuda-cuobjdump wheel installs."""
    if explicit:
        return explicit
    found = runner.which("cuobjdump")
    if found:
        return found
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        if base.is_dir():
            for cand in sorted(base.glob("cu*/bin/cuobjdump")) + sorted(base.glob("cuda_cuobjdump/bin/cuobjdump")):
                if cand.is_file():
                    return str(cand)
    return None


def gpu_code(runner: Any, cuobjdump: str, library: Path, timeout: float = 600.0) -> GpuCode:
    """Run cuobjdump --list-elf and --list-ptx on one library (through gpusetup.runner)."""
    elf = runner.run([cuobjdump, "--list-elf", str(library)], timeout=timeout)
    ptx = runner.run([cuobjdump, "--list-ptx", str(library)], timeout=timeout)
    for res in (elf, ptx):
        if res.error or res.timed_out:
            raise RefreshError(f"cuobjdump on {library.name}: {res.error}")
        if res.returncode not in (0, 255):
            raise RefreshError(f"cuobjdump on {library.name} failed (exit {res.returncode}): {res.stderr.strip()[:300]}")
    code = parse_cuobjdump(elf.stdout, ptx.stdout)
    code.library = library.name
    code.tool = cuobjdump
    return code
