"""`gpusetup db update` against a real HTTP server on 127.0.0.1 (threaded http.server).

Covers: a good update (and the old copy kept), a corrupt download, a wrong checksum in the manifest, a bad
signature, a dropped connection, a server that is down, a schema-invalid file, rollback refusal and the
https-only rule. After every failure the data in use must be unchanged.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gpusetup.cli import main
from gpusetup.compat import db, update
from gpusetup.resources import resource

from .conftest import KEY, PUB, SHIPPED_KEYS  # the test key is pinned for every compat test (conftest)

pytestmark = pytest.mark.network

OTHER_KEY = Ed25519PrivateKey.generate()


class _Handler(SimpleHTTPRequestHandler):
    drop: set[str] = set()

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        name = self.path.rsplit("/", 1)[-1]
        if name in self.server.drop:  # type: ignore[attr-defined]
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b'{"name": "pyto')
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        super().do_GET()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, ThreadingHTTPServer]]:
    root = tmp_path / "www"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    httpd.drop = set()  # type: ignore[attr-defined]
    t = threading.Thread(target=partial(httpd.serve_forever, poll_interval=0.05), daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/bundle/", root / "bundle", httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(timeout=5)


def publish(out: Path, version: str, key: Ed25519PrivateKey = KEY, edit=None) -> Path:
    """A bundle of the embedded data at ``version``; ``edit(src_dir)`` may change files before signing."""
    src = out.parent / f"src-{version}"
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(resource("compat"), src)
    if edit:
        edit(src)
    if out.exists():
        shutil.rmtree(out)
    return update.build_bundle(src, out, key, version)


def run_update(url: str, dest: Path) -> update.UpdateResult:
    return update.update(url, dest=dest, keys=[PUB], timeout=5)


def in_use(dest: Path) -> db.CompatDB:
    db.clear_cache()
    return db.get_db()


def test_good_update_then_newer_keeps_old_copy(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    dest = _isolated_compat_dir
    publish(bundle, "2099.01.01")
    r = run_update(url, dest)
    assert r.ok, r.message
    assert "Installed compatibility data version 2099.01.01" in r.message
    assert (dest / "pytorch.json").is_file() and (dest / "manifest.json").is_file()
    d = in_use(dest)
    assert d.origin == str(dest) and d.version == "2099.01.01"

    again = run_update(url, dest)
    assert again.ok and "already up to date" in again.message

    publish(bundle, "2099.02.01")
    r2 = run_update(url, dest)
    assert r2.ok and r2.previous == dest.with_name("compat.old")
    assert json.loads((dest.with_name("compat.old") / "manifest.json").read_text())["bundle_version"] == "2099.01.01"
    assert in_use(dest).version == "2099.02.01"


def _assert_unchanged(r: update.UpdateResult, dest: Path, expect: str) -> None:
    assert not r.ok
    assert r.message.startswith("Update failed:")
    assert "keeps using" in r.message
    assert expect in r.message, r.message
    assert not any(p.name.startswith(".compat-new-") for p in dest.parent.glob(".*")), "temp dir left behind"


def test_corrupt_download(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    data = bytearray((bundle / "jax.json").read_bytes())
    data[10] ^= 0x20  # same size, different bytes: the download is corrupt
    (bundle / "jax.json").write_bytes(bytes(data))
    r = run_update(url, _isolated_compat_dir)
    _assert_unchanged(r, _isolated_compat_dir, "jax.json: checksum mismatch")
    assert "built-in data" in r.message
    assert in_use(_isolated_compat_dir).origin == "embedded"


def test_truncated_download(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    (bundle / "rocm.json").write_bytes((bundle / "rocm.json").read_bytes()[:-40])
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "incomplete download")


def test_wrong_checksum_in_signed_manifest(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["files"][0]["sha256"] = "0" * 64
    raw = json.dumps(manifest).encode()
    (bundle / "manifest.json").write_bytes(raw)
    (bundle / "manifest.json.sig").write_bytes(update.sign_manifest(raw, KEY))
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "checksum mismatch")


def test_bad_signature(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01", key=OTHER_KEY)
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "does not match gpusetup's pinned key")


def test_tampered_manifest_fails_signature(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    raw = (bundle / "manifest.json").read_bytes().replace(b"2099.01.01", b"2099.09.09")
    (bundle / "manifest.json").write_bytes(raw)
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "pinned key")


def test_dropped_connection_keeps_previous_install(server, _isolated_compat_dir: Path) -> None:
    url, bundle, httpd = server
    dest = _isolated_compat_dir
    publish(bundle, "2099.01.01")
    assert run_update(url, dest).ok
    publish(bundle, "2099.03.01")
    httpd.drop.add("pytorch.json")  # type: ignore[attr-defined]
    r = run_update(url, dest)
    _assert_unchanged(r, dest, "pytorch.json")
    assert "connection was dropped" in r.message
    assert "installed before (version 2099.01.01)" in r.message
    assert in_use(dest).version == "2099.01.01"


def test_server_down(tmp_path: Path, _isolated_compat_dir: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on this port now
    r = run_update(f"http://127.0.0.1:{port}/", _isolated_compat_dir)
    _assert_unchanged(r, _isolated_compat_dir, "connection failed")


def test_missing_file_on_server(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    (bundle / "cudnn.json").unlink()
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "answered 404")


def test_schema_invalid_file_is_refused(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server

    def break_driver(src: Path) -> None:
        doc = json.loads((src / "cuda_drivers.json").read_text())
        doc["tables"]["family_minimums"]["rows"][0]["linux"] = "latest"
        (src / "cuda_drivers.json").write_text(json.dumps(doc))

    publish(bundle, "2099.01.01", edit=break_driver)
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "does not match its schema")


def test_older_bundle_is_refused(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2020.01.01")
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "older than the data in use")


def test_incomplete_bundle_is_refused(server, tmp_path: Path, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    src = tmp_path / "partial"
    shutil.copytree(resource("compat"), src)
    (src / "jax.json").unlink()
    update.build_bundle(src, bundle, KEY, "2099.01.01")
    _assert_unchanged(run_update(url, _isolated_compat_dir), _isolated_compat_dir, "incomplete: it lacks jax")


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.org/compat", True),
        ("http://127.0.0.1:8000/x/", True),
        ("http://localhost/x/", True),
        ("http://[::1]:8000/", True),
        ("http://example.org/compat/", False),
        ("http://10.0.0.1/compat/", False),
        ("ftp://example.org/", False),
        ("file:///etc/passwd", False),
    ],
)
def test_https_only_except_loopback(url: str, ok: bool) -> None:
    if ok:
        assert update.check_url(url).endswith("/")
    else:
        with pytest.raises(update.UpdateError):
            update.check_url(url)


def test_broken_user_copy_falls_back_to_embedded(_isolated_compat_dir: Path) -> None:
    dest = _isolated_compat_dir
    dest.mkdir(parents=True)
    (dest / "manifest.json").write_text(json.dumps({"bundle_version": "2099.01.01"}))
    (dest / "pytorch.json").write_text("{ not json")
    d = in_use(dest)
    assert d.origin == "embedded"
    assert d.fallback_reason and "refused" in d.fallback_reason  # unsigned, so not even parsed


def test_shipped_public_key_is_valid() -> None:
    keys = SHIPPED_KEYS()
    assert keys and all(len(k) == 32 for k in keys)
    with pytest.raises(update.UpdateError, match="pinned key"):
        update.verify_signature(b"{}", base64.b64encode(KEY.sign(b"{}")), keys)


def test_cli_update_without_url_and_with_http(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "update"]) == 2
    assert "no update URL is configured" in capsys.readouterr().out
    assert main(["db", "update", "--url", "http://example.org/compat/"]) == 3
    assert "must use https" in capsys.readouterr().err


def test_cli_update_failure_exit_2(server, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setattr(update, "pinned_keys", SHIPPED_KEYS)
    url, bundle, _ = server
    publish(bundle, "2099.01.01")  # signed with the test key, not the shipped one
    assert main(["db", "update", "--url", url, "--timeout", "5"]) == 2
    out = capsys.readouterr().out
    assert "Update failed" in out and "pinned key" in out and "built-in data" in out


# ---------------------------------------------------------------- verified where it is loaded (issue 16, defect 4)


def _install_good(server, dest: Path) -> None:
    url, bundle, _ = server
    publish(bundle, "2099.01.01")
    assert run_update(url, dest).ok
    assert in_use(dest).origin == str(dest)


def test_a_file_changed_after_the_update_is_refused_at_load(server, _isolated_compat_dir: Path, caplog) -> None:
    dest = _isolated_compat_dir
    _install_good(server, dest)
    doc = json.loads((dest / "pytorch.json").read_text())
    doc["tables"] = {k: {**t, "rows": []} for k, t in doc["tables"].items()}  # "recommend nothing"
    (dest / "pytorch.json").write_text(json.dumps(doc))
    d = in_use(dest)
    assert d.origin == "embedded"
    assert "pytorch.json was changed after the signed update was installed" in d.fallback_reason
    assert "refused" in d.fallback_reason and "built-in data" in d.fallback_reason
    assert d.info()["fallback_reason"] == d.fallback_reason
    assert any("does not verify" in r.getMessage() for r in caplog.records)


def test_an_unsigned_folder_named_by_the_environment_is_refused(_isolated_compat_dir: Path) -> None:
    dest = _isolated_compat_dir  # GPUSETUP_COMPAT_DIR points here
    shutil.copytree(resource("compat"), dest)
    (dest / "manifest.json").write_text(json.dumps({"format": 1, "bundle_version": "2099.12.31", "files": []}))
    d = in_use(dest)
    assert d.origin == "embedded" and "has no signature" in d.fallback_reason


def test_a_copy_signed_by_another_key_is_refused_at_load(server, _isolated_compat_dir: Path) -> None:
    url, bundle, _ = server
    dest = _isolated_compat_dir
    other = Ed25519PrivateKey.generate()
    update.build_bundle(resource("compat"), dest, other, "2099.01.01")
    d = in_use(dest)
    assert d.origin == "embedded" and "pinned key" in d.fallback_reason


def test_a_rewritten_manifest_with_matching_hashes_is_refused(server, _isolated_compat_dir: Path) -> None:
    """Rewriting data *and* the manifest's checksums does not help: the signature covers the manifest."""
    dest = _isolated_compat_dir
    _install_good(server, dest)
    (dest / "jax.json").write_text((dest / "jax.json").read_text().replace('"rows": [', '"rows": [ ', 1))
    manifest = json.loads((dest / "manifest.json").read_text())
    import hashlib

    for f in manifest["files"]:
        if f["name"] == "jax.json":
            data = (dest / "jax.json").read_bytes()
            f["sha256"], f["size"] = hashlib.sha256(data).hexdigest(), len(data)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    d = in_use(dest)
    assert d.origin == "embedded" and "signature does not match" in d.fallback_reason
