"""A package index on 127.0.0.1 for the refresh tool and the live check: PEP 691 JSON or PEP 503 HTML
(chosen by the Accept header, or forced), PEP 658 ``.metadata`` files (optional), and HTTP range requests
on the files, like PyPI and files.pythonhosted.org.

Wheels are real zip files built here (``build_wheel``), so the range reader parses a real central directory.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import threading
import time
import urllib.parse
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def build_wheel(dest: Path, filename: str, metadata: str, members: dict[str, bytes] | None = None,
                compress: bool = True) -> Path:
    """A wheel named ``filename`` with ``*.dist-info/METADATA`` and the given members."""
    name, version = filename.split("-")[:2]
    di = f"{name}-{version}.dist-info"
    path = dest / filename
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as zf:
        for member, data in (members or {}).items():
            zf.writestr(member, data)
        zf.writestr(f"{di}/METADATA", metadata)
        zf.writestr(f"{di}/WHEEL", "Wheel-Version: 1.0\nGenerator: gpusetup-tests\nRoot-Is-Purelib: false\n")
        zf.writestr(f"{di}/RECORD", "")
    return path


def metadata(name: str, version: str, requires_python: str | None = None, requires: tuple[str, ...] = (),
             extras: tuple[str, ...] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Provides-Extra: {e}" for e in extras]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


class LocalIndex:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.projects: dict[str, list[Path]] = {}
        self.requires_python: dict[str, str] = {}
        self.pep658 = False
        self.force: str | None = None  # "json" / "html"
        self.ranges = True
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.server: ThreadingHTTPServer | None = None
        self.validators = False  # pages carry ETag and Last-Modified and answer conditional requests with 304
        self.not_modified = 0
        self.latency = 0.0  # seconds before every answer (a distant index)
        self.drip: float | None = None  # pages sent one byte per this many seconds (a stalling server)
        self.inflight = 0
        self.max_inflight = 0  # the most requests answered at the same time
        self.auth: list[str | None] = []  # Authorization headers received
        self.bodies: dict[tuple[str, bool, bool], tuple[bytes, str]] = {}  # pages built once (add() clears them)

    def add(self, project: str, wheel: Path, requires_python: str | None = None, layout: str = "simple") -> None:
        """Serve ``wheel`` on /simple/<project>/ (PyPI) or, with ``layout="cu130"``, /whl/cu130/<project>/."""
        self.projects.setdefault(project if layout == "simple" else f"{layout}/{project}", []).append(wheel)
        self.bodies.clear()
        if requires_python:
            self.requires_python[wheel.name] = requires_python

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"


_LOCK = threading.Lock()


def _handler(index: LocalIndex) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            with _LOCK:
                index.inflight += 1
                index.max_inflight = max(index.max_inflight, index.inflight)
            try:
                self._get()
            finally:
                with _LOCK:
                    index.inflight -= 1

        def _get(self) -> None:
            index.requests.append((self.path, self.headers.get("Range")))
            index.auth.append(self.headers.get("Authorization"))
            if index.latency:
                time.sleep(index.latency)
            parts = [urllib.parse.unquote(p) for p in self.path.split("?")[0].split("/") if p]
            if parts[:1] == ["files"] and len(parts) == 2:
                self._file(parts[1])
            elif parts[:1] == ["simple"] and len(parts) == 2:
                self._page(parts[1])
            elif parts[:1] == ["whl"] and len(parts) == 3:
                self._page(f"{parts[1]}/{parts[2]}")
            else:
                self.send_error(404)

        def _file(self, name: str) -> None:
            if name.endswith(".metadata"):
                wheel = index.root / name[: -len(".metadata")]
                if not index.pep658 or not wheel.is_file():
                    self.send_error(404)
                    return
                with zipfile.ZipFile(wheel) as zf:
                    meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
                    self._send(200, zf.read(meta), "text/plain")
                return
            f = index.root / name
            if not f.is_file():
                self.send_error(404)
                return
            data = f.read_bytes()
            rng = self.headers.get("Range")
            m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng or "")
            if m and index.ranges:
                start, end = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
                self._send(206, data[start : end + 1], "application/octet-stream",
                           {"Content-Range": f"bytes {start}-{end}/{len(data)}"})
                return
            self._send(200, data, "application/octet-stream")

        def _page(self, project: str) -> None:
            wheels = index.projects.get(project)
            if not wheels:
                self.send_error(404)
                return
            accept = self.headers.get("Accept", "")
            as_json = index.force == "json" or (index.force is None and "vnd.pypi.simple.v1+json" in accept)
            cached = index.bodies.get((project, as_json, index.pep658))
            if cached is not None:
                self._page_body(*cached)
                return
            if as_json:
                files = []
                for w in wheels:
                    entry = {"filename": w.name, "url": f"/files/{urllib.parse.quote(w.name)}",
                             "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()},
                             "requires-python": index.requires_python.get(w.name), "size": w.stat().st_size,
                             "upload-time": "2026-11-20T10:00:00Z", "yanked": False}
                    if index.pep658:
                        entry["core-metadata"] = True
                    files.append(entry)
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode()
                index.bodies[(project, as_json, index.pep658)] = (body, "application/vnd.pypi.simple.v1+json")
                self._page_body(body, "application/vnd.pypi.simple.v1+json")
                return
            links = []
            for w in wheels:
                rp = index.requires_python.get(w.name)
                attrs = f' data-requires-python="{html.escape(rp)}"' if rp else ""
                if index.pep658:
                    attrs += ' data-core-metadata="true"'
                links.append(f'<a href="/files/{urllib.parse.quote(w.name)}"{attrs}>{html.escape(w.name)}</a><br/>')
            body = ("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n").encode()
            index.bodies[(project, as_json, index.pep658)] = (body, "text/html")
            self._page_body(body, "text/html")

        def _page_body(self, body: bytes, ctype: str) -> None:
            extra: dict[str, str] = {}
            if index.validators:
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                extra = {"ETag": etag, "Last-Modified": "Fri, 20 Nov 2026 10:00:00 GMT"}
                if self.headers.get("If-None-Match") == etag:
                    index.not_modified += 1
                    self.send_response(304)
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.end_headers()
                    return
            if index.drip is None:
                self._send(200, body, ctype, extra)
                return
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for b in body:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(index.drip)
            except OSError:
                pass  # the client gave up

    return H


class _Server(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a client opening 20 connections at once (the plan's walks do) had its
    # extra SYNs dropped and retried by the kernel a second later — a stall no real index (PyPI's CDN) causes
    request_queue_size = 128
    daemon_threads = True


@contextmanager
def serve(index: LocalIndex) -> Iterator[LocalIndex]:
    server = _Server(("127.0.0.1", 0), _handler(index))
    index.server = server
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
