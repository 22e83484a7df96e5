"""uv on demand: the packaged app does not carry uv (37 MiB, more than the whole wizard); when a plan needs it
to provide a Python, a first step fetches the ``uv`` wheel from the package index the plan already uses
(PyPI, or the mirror in ``--index-url`` / pip's configuration), checks it against the sha256 the index lists,
and unpacks the one program into ``<data dir>/uv/`` — what ``pip install uv`` would do, without a Python.

It runs as a step of the plan (``gpusetup --gpusetup-fetch-uv …`` in the packaged app, ``python -m
gpusetup.install.uvfetch …`` otherwise), so the wizard shows it with the other steps, and its output is
pip's own progress format (``Downloading <file> (<size>)``, ``Progress <done> of <total>``), which the
installer's progress reader turns into bytes, speed and time left. A download that cannot be had says which
index it asked and what to set instead; a file whose sha256 differs from the index's is refused.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import json
import os
import stat
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from gpusetup import credentials, paths
from gpusetup.install import net
from gpusetup.versions import Version

PYPI = "https://pypi.org/simple"
# The uv release this gpusetup is tested with (tests/install/test_python.py runs it); an index without it
# gives the newest release at or above UV_MINIMUM (the oldest with every option the plan's steps use).
UV_PREFERRED = "0.13.9"
UV_MINIMUM = "0.8"
FLAG = "--gpusetup-fetch-uv"  # the packaged programs answer this (packaging/launch_*.py)
TIMEOUT = 60.0  # per read: a connection silent this long is given up
CHUNK = 256 * 1024
# Bounds (issue 25: every reader has a size and a time bound). uv 0.13.9's manylinux x86_64 wheel is 39.6 MB and its
# program 38.4 MB unpacked (the wheel the tests serve); these leave room for growth and stop a hostile or broken index.
MAX_PAGE_BYTES = 8 * 1024 * 1024  # the project page (PyPI's for uv: about 1 MB)
MAX_WHEEL_BYTES = 200 * 1000 * 1000
MAX_PROGRAM_BYTES = 400 * 1024 * 1024  # the program unpacked from the wheel (a zip bomb stops here)
DOWNLOAD_DEADLINE = 30 * 60.0  # the whole download, however slowly the server drips it
PAGE_DEADLINE = 120.0  # the project page


class FetchError(RuntimeError):
    """Why uv could not be had, in words that say what to do."""


@dataclass
class WheelLink:
    filename: str
    url: str
    sha256: str | None
    version: Version
    tags: frozenset[Tag]


def program_name() -> str:
    return "uv.exe" if os.name == "nt" else "uv"


def default_dest() -> Path:
    """Where the fetched program lives: ``<data dir>/uv/uv`` (per user; removed with gpusetup's data)."""
    return paths.data_dir() / "uv" / program_name()


def index_for(index_url: str | None) -> str:
    """The index the plan uses for PyPI packages: the user's mirror, pip's configured one, else PyPI."""
    return (index_url or net.pip_config_value("index-url") or PYPI).rstrip("/")


def command() -> list[str]:
    """The argv prefix that runs this module: the packaged command-line program with a hidden flag (the
    window program beside it answers the same flag), or this Python."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        exe = Path(sys.executable)
        cli = exe.with_name("gpusetup.exe" if os.name == "nt" else "gpusetup")
        return [str(cli if cli.is_file() else exe), FLAG]
    return [sys.executable, "-m", "gpusetup.install.uvfetch"]


# ----------------------------------------------------------------------------------------- the index


class _Links(html.parser.HTMLParser):
    """``<a href="…#sha256=…" data-yanked>`` of a PEP 503 project page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, bool]] = []  # (href, text, yanked)
        self._a: tuple[str, bool] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            a = dict(attrs)
            self._a = (a.get("href") or "", "data-yanked" in a)
            self._text = ""

    def handle_data(self, data: str) -> None:
        if self._a is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._a is not None:
            self.links.append((self._a[0], self._text.strip(), self._a[1]))
            self._a = None


def parse_project_page(body: bytes, content_type: str, page_url: str) -> list[tuple[str, str, str | None]]:
    """(filename, absolute url, sha256 or None) of every file a project page lists, yanked ones left out.
    Reads PEP 691 JSON and PEP 503 HTML (hash in the URL fragment)."""
    out = []
    if "json" in content_type:
        data = json.loads(body)
        for f in data.get("files", []):
            if f.get("yanked"):
                continue
            url = urllib.parse.urljoin(page_url, f["url"])
            sha = (f.get("hashes") or {}).get("sha256")
            out.append((f["filename"], url.split("#", 1)[0], sha))
        return out
    parser = _Links()
    parser.feed(body.decode("utf-8", "replace"))
    for href, text, yanked in parser.links:
        if yanked:
            continue
        url = urllib.parse.urljoin(page_url, href)
        base, _, frag = url.partition("#")
        sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
        name = urllib.parse.unquote(base.rsplit("/", 1)[-1]) or text
        out.append((name, base, sha))
    return out


def pick_wheel(files: list[tuple[str, str, str | None]], supported: list[Tag] | None = None,
               preferred: str = UV_PREFERRED, minimum: str = UV_MINIMUM) -> WheelLink | None:
    """The uv wheel for this computer: the preferred release when listed, else the newest release at or
    above ``minimum``; among its files, the one whose platform tag this computer ranks first."""
    supported = list(sys_tags()) if supported is None else supported
    rank = {t: i for i, t in enumerate(supported)}
    wheels = []
    for name, url, sha in files:
        if not name.endswith(".whl"):
            continue
        try:
            project, pv, _build, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        version = Version(str(pv))
        if project != "uv" or version.is_prerelease or version < minimum:
            continue
        best = min((rank[t] for t in tags if t in rank), default=None)
        if best is not None:
            wheels.append((best, WheelLink(name, url, sha, version, tags)))
    if not wheels:
        return None
    # the preferred release when listed, else the newest; within it, the platform tag ranked best here
    want = Version(preferred)
    release = want if any(w.version == want for _, w in wheels) else max(w.version for _, w in wheels)
    return min((w for w in wheels if w[1].version == release), key=lambda w: w[0])[1]


# ------------------------------------------------------------------------------------------ fetching


def _open(url: str, accept: str, timeout: float) -> Any:
    """GET through pip's proxy and CA settings, with the index's login (a masked URL is revealed here)."""
    opener, real, headers = net.opener_for(url)
    headers["Accept"] = accept
    return opener.open(urllib.request.Request(real, headers=headers), timeout=timeout)


def _explain(exc: BaseException, what: str, index: str) -> FetchError:
    shown = credentials.mask_url(index)
    hint = (f" gpusetup fetches uv (the tool that installs Python) from the package index {shown}: set a "
            "reachable mirror with --index-url or pip's index-url setting, or install Python "
            "yourself (python.org) and plan again.")
    if isinstance(exc, urllib.error.HTTPError):
        return FetchError(f"{what} answered HTTP {exc.code}.{hint}")
    reason = getattr(exc, "reason", exc)
    return FetchError(f"Cannot reach {what}: {reason}.{hint}")


def _read_page(resp: Any, limit: int, deadline: float) -> bytes:
    """At most ``limit`` bytes of a response, read as they arrive; a page still coming after ``deadline`` seconds is
    not an index answering (TimeoutError, explained like any failure to reach it)."""
    read = getattr(resp, "read1", resp.read)
    started, parts, size = time.monotonic(), [], 0
    while size < limit:
        chunk = read(min(CHUNK, limit - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
        if time.monotonic() - started > deadline:
            raise TimeoutError(f"the page was still arriving after {deadline:.0f} s")
    return b"".join(parts)


def find_wheel(index: str, timeout: float = TIMEOUT) -> WheelLink:
    page = index.rstrip("/") + "/uv/"
    shown = credentials.mask_url(page)
    try:
        with _open(page, "application/vnd.pypi.simple.v1+json, text/html;q=0.1", timeout) as resp:
            body = _read_page(resp, MAX_PAGE_BYTES + 1, PAGE_DEADLINE)
            ctype = resp.headers.get("Content-Type", "")
        if len(body) > MAX_PAGE_BYTES:
            raise FetchError(f"{shown} answered with more than {MAX_PAGE_BYTES / 1e6:.1f} MB for one project page: "
                             "not a package index, refused. Use another mirror.")
    except (urllib.error.URLError, OSError, ValueError, credentials.MissingCredential) as exc:
        raise _explain(exc, shown, index) from exc
    try:
        files = parse_project_page(body, ctype, credentials.reveal(page))
    except (ValueError, KeyError, TypeError) as exc:
        raise FetchError(f"{shown} did not answer as a package index ({exc}).") from exc
    link = pick_wheel(files)
    if link is None:
        raise FetchError(f"{shown} lists no uv release ≥ {UV_MINIMUM} for this computer "
                         f"({next(iter(sys_tags()), '?')}); use an index that mirrors PyPI's uv.")
    if not link.sha256:
        raise FetchError(f"{shown} gives no sha256 for {link.filename}, so the download could not be checked; "
                         "use an index that lists file hashes (PyPI and its mirrors do).")
    return link


def download(link: WheelLink, into: Path, out: Callable[[str], None], index: str,
             timeout: float = TIMEOUT, deadline: float = DOWNLOAD_DEADLINE,
             max_bytes: int = MAX_WHEEL_BYTES) -> Path:
    """Download ``link`` into the folder ``into``, printing pip-style progress, and check its sha256.

    Bounded: each read waits at most ``timeout`` seconds, the whole download ``deadline`` seconds (a server that
    drips a byte at a time is given up), and no more than ``max_bytes`` are taken (a size announced above it is
    refused before the download)."""
    target = into / link.filename
    digest = hashlib.sha256()
    shown = credentials.mask_url(link.url)
    started = time.monotonic()
    try:
        with _open(link.url, "*/*", timeout) as resp, open(target, "wb") as fh:
            total = int(resp.headers.get("Content-Length") or 0)
            if total > max_bytes:
                raise FetchError(f"{shown} announces {total / 1e6:.0f} MB for {link.filename}, more than a uv wheel "
                                 f"can be ({max_bytes / 1e6:.0f} MB): refused. Use another mirror.")
            size = f" ({total / 1e6:.1f} MB)" if total else ""
            out(f"Downloading {link.filename}{size}")
            done, last = 0, 0.0
            read = getattr(resp, "read1", resp.read)  # what has arrived: a drip cannot hold one read past the deadline
            while True:
                chunk = read(CHUNK)
                if not chunk:
                    break
                fh.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                now = time.monotonic()
                if done > max_bytes:
                    raise FetchError(f"{shown} sent more than {max_bytes / 1e6:.0f} MB for {link.filename}, more "
                                     "than a uv wheel can be: refused. Use another mirror.")
                if now - started > deadline:
                    raise FetchError(f"Downloading {link.filename} from {shown} took longer than {deadline / 60:.0f} "
                                     f"minutes ({done / 1e6:.1f} MB so far): given up. Try again, or use a faster "
                                     "mirror with --index-url.")
                if total and (now - last >= 0.25 or done == total):
                    out(f"Progress {done} of {total}")
                    last = now
    except FetchError:
        target.unlink(missing_ok=True)
        raise
    except (urllib.error.URLError, OSError, ValueError, credentials.MissingCredential) as exc:
        target.unlink(missing_ok=True)
        raise _explain(exc, shown, index) from exc
    if digest.hexdigest() != (link.sha256 or "").lower():
        target.unlink(missing_ok=True)
        raise FetchError(f"{link.filename} from {shown} does not match the sha256 the index "
                         f"lists ({digest.hexdigest()} ≠ {link.sha256}): refused. Try again, or use another mirror.")
    return target


def unpack(wheel: Path, dest: Path, max_bytes: int = MAX_PROGRAM_BYTES) -> Path:
    """Put the wheel's ``uv`` program at ``dest`` (written beside it, then renamed: never half a program), at most
    ``max_bytes`` of it."""
    name = program_name()
    with zipfile.ZipFile(wheel) as zf:
        member = next((m for m in zf.namelist()
                       if m.endswith(f".data/scripts/{name}") and m.count("/") == 2), None)
        if member is None:
            raise FetchError(f"{wheel.name} holds no {name} program (not a uv wheel?).")
        if zf.getinfo(member).file_size > max_bytes:
            raise FetchError(f"{wheel.name} says its {name} program is {zf.getinfo(member).file_size / 1e6:.0f} MB "
                             "unpacked, more than uv can be: refused.")
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".uv-")
        try:
            written = 0
            with os.fdopen(fd, "wb") as fh, zf.open(member) as src:
                while chunk := src.read(CHUNK):
                    written += len(chunk)
                    if written > max_bytes:  # the size in the zip's directory can lie
                        raise FetchError(f"{wheel.name}'s {name} program unpacks to more than "
                                         f"{max_bytes / 1e6:.0f} MB: refused.")
                    fh.write(chunk)
            os.chmod(tmp, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return dest


def fetch(index_url: str | None, dest: Path, out: Callable[[str], None] = print) -> Path:
    """Fetch, check and unpack uv from the index; the path of the program."""
    index = index_for(index_url)
    link = find_wheel(index)
    out(f"Collecting uv=={link.version} from {credentials.mask_url(index)}")
    with tempfile.TemporaryDirectory(prefix="gpusetup-uv-") as tmp:
        wheel = download(link, Path(tmp), out, index)
        out(f"sha256 {link.sha256} checked")
        path = unpack(wheel, dest)
    out(f"Successfully installed uv-{link.version} → {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpusetup-fetch-uv", description="Fetch the uv program from a package index.")
    p.add_argument("--index-url", help="the package index (default: pip's index-url setting, else PyPI)")
    p.add_argument("--dest", type=Path, default=None, help="where to put the program")
    p.add_argument("--remove", action="store_true", help="delete the program fetched earlier (undo)")
    args = p.parse_args(argv)
    dest = args.dest or default_dest()
    if args.remove:
        dest.unlink(missing_ok=True)
        return 0
    try:
        fetch(args.index_url, dest, out=lambda line: print(line, flush=True))
    except FetchError as exc:
        print(f"ERROR: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
