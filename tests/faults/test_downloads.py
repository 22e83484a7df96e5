"""Downloads end on time and `db update` keeps its promises when things go wrong (issue 25):

* a server dripping one byte a second hung `db update` and the live index check past 90 s (the timeouts were
  per read): now each download has a wall-clock deadline, start to end;
* `db update --url http://u:PW@…` printed the password in its error;
* a crash between the two renames of `db update` restored the built-in data and lost the no-downgrade floor,
  so an older signed bundle was then accepted; killed downloads left `.compat-new-*` folders forever.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gpusetup.cli import main
from gpusetup.compat import db, fetch, update
from gpusetup.compat.refresh import Http, RefreshError
from gpusetup.resources import resource

pytestmark = [pytest.mark.faults, pytest.mark.network]
KEY = Ed25519PrivateKey.generate()
PUB = KEY.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class DripServer:
    """A server on 127.0.0.1 that answers every request one byte every ``interval`` seconds, for ever
    (``phase``: "body" sends its headers at once and drips the body, "headers" drips the status line)."""

    def __init__(self, phase: str = "body", interval: float = 0.2) -> None:
        self.phase, self.interval = phase, interval
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            if self.phase == "body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
                payload = b"{" + b" " * 100_000_000
            else:
                payload = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 100_000_000
            for i in range(len(payload)):
                if self.stop.is_set():
                    break
                conn.sendall(payload[i:i + 1])
                time.sleep(self.interval)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture(params=["body", "headers"])
def drip(request: pytest.FixtureRequest) -> Iterator[DripServer]:
    server = DripServer(request.param)
    yield server
    server.close()


@pytest.fixture
def compat_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    user = tmp_path / "userdata" / "compat"
    monkeypatch.setenv("GPUSETUP_COMPAT_DIR", str(user))
    monkeypatch.delenv("GPUSETUP_DB_URL", raising=False)
    monkeypatch.setattr(update, "pinned_keys", lambda: [PUB])
    db.clear_cache()
    yield user
    db.clear_cache()


def test_a_dripping_server_cannot_hold_a_download(drip: DripServer) -> None:
    start = time.monotonic()
    with pytest.raises(fetch.DeadlineExceeded):
        fetch.get(requests.Session(), drip.url + "manifest.json", limit=1 << 20, timeout=1.5)
    assert time.monotonic() - start < 6  # 1.5 s and the time to give up, on a loaded machine


def test_db_update_from_a_dripping_server_gives_up_on_time(drip: DripServer, compat_dir: Path) -> None:
    start = time.monotonic()
    r = update.update(drip.url, dest=compat_dir, timeout=1.5)
    assert time.monotonic() - start < 8
    assert not r.ok and "did not finish within" in r.message, r.message
    assert "keeps using" in r.message


def test_the_live_index_client_gives_up_on_time(drip: DripServer) -> None:
    """compat.refresh.Http is what the live index check (gpusetup.compat.live: a deadline per page) and the refresh
    tool read with."""
    start = time.monotonic()
    with pytest.raises(RefreshError, match="no complete answer within"):
        Http(timeout=1.5, deadline=3.0).get(drip.url + "simple/torch/")
    assert time.monotonic() - start < 8


def test_db_update_errors_never_show_the_password(compat_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for url in (f"http://u:Pa55w0rdX@127.0.0.1:{port}/", "https://u:Pa55w0rdX@example.com:1/",
                "u:Pa55w0rdX@nonexistent.invalid"):
        rc = main(["db", "update", "--url", url, "--timeout", "2"])
        captured = capsys.readouterr()
        assert rc in (2, 3)
        assert "Pa55w0rdX" not in captured.out + captured.err, captured
        assert "u:****@" in captured.out + captured.err


# ------------------------------------------------------------------------------- the floor and leftovers


class _Files:
    """A plain static server for signed bundles."""

    def __init__(self, root: Path) -> None:
        from functools import partial
        from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/bundle/"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _publish(www: Path, version: str) -> None:
    src = www.parent / f"src-{version}"
    if not src.exists():
        shutil.copytree(resource("compat"), src)
    out = www / "bundle"
    if out.exists():
        shutil.rmtree(out)
    update.build_bundle(src, out, KEY, version)


def test_a_crash_between_the_renames_does_not_lower_the_floor(tmp_path: Path, compat_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    www = tmp_path / "www"
    www.mkdir()
    files = _Files(www)
    try:
        _publish(www, "2099.01.01")
        assert update.update(files.url, dest=compat_dir, timeout=10).ok
        _publish(www, "2099.03.01")
        real_replace = os.replace

        def crash_on_second_rename(src: object, dst: object) -> None:
            if str(dst) == str(compat_dir):  # compat → compat.old has happened; new → compat is next
                raise KeyboardInterrupt  # gpusetup killed between the two renames of the swap
            real_replace(src, dst)  # type: ignore[arg-type]

        monkeypatch.setattr(update.os, "replace", crash_on_second_rename)
        with pytest.raises(KeyboardInterrupt):
            update.update(files.url, dest=compat_dir, timeout=10)
        monkeypatch.setattr(update.os, "replace", real_replace)
        assert not compat_dir.exists()  # the data in use is gone: gpusetup would fall back to its built-in copy
        assert update.read_floor(compat_dir) == "2099.03.01"
        _publish(www, "2099.02.01")  # older than what was being installed, newer than what was in use
        r = update.update(files.url, dest=compat_dir, timeout=10)
        assert not r.ok and "older than the data in use" in r.message, r.message
        assert compat_dir.exists()  # the previous copy was put back from compat.old
        _publish(www, "2099.03.01")
        assert update.update(files.url, dest=compat_dir, timeout=10).ok
    finally:
        files.close()


def test_killed_downloads_leave_no_folders_for_ever(tmp_path: Path, compat_dir: Path) -> None:
    compat_dir.parent.mkdir(parents=True)
    stale = compat_dir.parent / ".compat-new-killed"
    stale.mkdir()
    (stale / "pytorch.json").write_text("{}")
    old = time.time() - 2 * update.LEFTOVER_AGE_S
    os.utime(stale, (old, old))
    fresh = compat_dir.parent / ".compat-new-running"  # another db update, running now
    fresh.mkdir()
    www = tmp_path / "www"
    www.mkdir()
    files = _Files(www)
    try:
        _publish(www, "2099.01.01")
        assert update.update(files.url, dest=compat_dir, timeout=10).ok
    finally:
        files.close()
    assert not stale.exists() and fresh.exists()
