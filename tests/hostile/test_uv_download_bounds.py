"""Fetching uv from a package index is bounded in size and time (issue 25: every reader has a size and a time
bound; the closing note of that issue left the uv download bounded only by the step's deadline).

A hostile or broken index served on 127.0.0.1: a server that drips the file a few bytes at a time, one that announces
or sends far more than a uv wheel can be, a project page of endless size, and a wheel whose program unpacks to more
than uv can be. Each is refused in words that say what to do, and nothing is left behind."""

from __future__ import annotations

import hashlib
import threading
import time
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpusetup.install import uvfetch
from gpusetup.versions import Version

FILENAME = "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"


class _Hostile(BaseHTTPRequestHandler):
    mode = "drip"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        mode = type(self).mode
        self.send_response(200)
        if mode == "big-announced":
            self.send_header("Content-Length", str(10 * 1000 * 1000 * 1000))
            self.end_headers()
            self.wfile.write(b"x" * 1024)
            return
        if mode == "endless-page":
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.end_headers()
        else:
            self.end_headers()
        try:
            for _ in range(100_000):
                if mode == "drip":
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.02)
                else:  # "endless" / "endless-page": no length announced, more and more bytes
                    self.wfile.write(b"x" * 65536)
        except OSError:
            pass  # the client gave up: what it should do


@pytest.fixture
def hostile() -> Iterator[tuple[str, type[_Hostile]]]:
    handler = type("Handler", (_Hostile,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _link(url: str) -> uvfetch.WheelLink:
    return uvfetch.WheelLink(FILENAME, f"{url}/{FILENAME}", "0" * 64, Version("0.13.9"), frozenset())


def test_a_server_that_drips_the_wheel_is_given_up_at_the_deadline(hostile, tmp_path: Path) -> None:
    url, handler = hostile
    handler.mode = "drip"
    started = time.monotonic()
    with pytest.raises(uvfetch.FetchError, match=r"took longer than .* given up.*--index-url"):
        uvfetch.download(_link(url), tmp_path, lambda _: None, url, timeout=5, deadline=0.5)
    assert time.monotonic() - started < 60, "given up near the deadline, not at the end of the drip"
    assert not (tmp_path / FILENAME).exists(), "no half file left behind"


def test_a_size_announced_above_any_uv_wheel_is_refused_before_the_download(hostile, tmp_path: Path) -> None:
    url, handler = hostile
    handler.mode = "big-announced"
    lines: list[str] = []
    with pytest.raises(uvfetch.FetchError, match=r"announces 10000 MB .* refused"):
        uvfetch.download(_link(url), tmp_path, lines.append, url)
    assert lines == [] and not (tmp_path / FILENAME).exists()


def test_more_bytes_than_any_uv_wheel_are_not_taken(hostile, tmp_path: Path) -> None:
    url, handler = hostile
    handler.mode = "endless"
    with pytest.raises(uvfetch.FetchError, match=r"sent more than 1 MB .* refused"):
        uvfetch.download(_link(url), tmp_path, lambda _: None, url, max_bytes=1_000_000)
    assert not (tmp_path / FILENAME).exists()


def test_an_endless_project_page_is_refused(hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    url, handler = hostile
    handler.mode = "endless-page"
    monkeypatch.setattr(uvfetch, "MAX_PAGE_BYTES", 256 * 1024)
    with pytest.raises(uvfetch.FetchError, match=r"more than 0.3 MB for one project page: not a package index, refused"):
        uvfetch.find_wheel(f"{url}/simple")


def test_a_project_page_that_drips_is_given_up(hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    url, handler = hostile
    handler.mode = "drip"
    monkeypatch.setattr(uvfetch, "PAGE_DEADLINE", 0.5)
    with pytest.raises(uvfetch.FetchError, match=r"Cannot reach .*/simple/uv/: the page was still arriving after 0 s"):
        uvfetch.find_wheel(f"{url}/simple")


def test_a_program_that_unpacks_to_more_than_uv_can_be_is_refused(tmp_path: Path) -> None:
    wheel = tmp_path / FILENAME
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("uv-0.13.9.data/scripts/uv", b"\0" * (4 * 1024 * 1024))  # 4 MiB of zeros: a few KB zipped
    assert wheel.stat().st_size < 64 * 1024
    dest = tmp_path / "bin" / "uv"
    with pytest.raises(uvfetch.FetchError, match="refused"):
        uvfetch.unpack(wheel, dest, max_bytes=1024 * 1024)
    assert not dest.exists() and not list(tmp_path.glob("bin/.uv-*")), "no program, no half-written file"
    # the same wheel within the bound unpacks, whole
    assert uvfetch.unpack(wheel, dest).stat().st_size == 4 * 1024 * 1024
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == hashlib.sha256(b"\0" * (4 * 1024 * 1024)).hexdigest()
