"""``gpusetup db update``: download a newer compat data bundle, verify it, install it atomically.

Trust model (why Ed25519 with a pinned key): HTTPS alone only proves we talk to *some* server holding a
certificate for the host; a compromised mirror or CDN could still serve wrong version facts, which would make
the resolver recommend builds that cannot work. So the bundle's ``manifest.json`` is signed with an Ed25519
key whose public half ships inside gpusetup (``resources/keys/compat-update-ed25519.pub``); the manifest
lists the sha256 and size of every data file. Ed25519 signatures are small, fast to verify, have no
parameters to get wrong, and the ``cryptography`` package verifies them on every platform we support.
A bundle older than the data in use is refused (no rollback to stale facts).

Layout at the URL: ``manifest.json``, ``manifest.json.sig`` (base64 signature of the exact manifest bytes)
and the files the manifest names. Installation writes a complete new directory next to the current one,
checks it loads, then swaps it in with two renames; the previous copy is kept as ``compat.old``. Any
error leaves the data in use untouched — gpusetup then keeps using the previously installed or the
embedded data, and the message says which.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import ipaddress
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from gpusetup import paths, resources
from gpusetup.compat import db as compat_db
from gpusetup.compat import fetch
from gpusetup.credentials import scrub
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.resources import resource
from gpusetup.versions import Version

MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"
FORMAT = 1
MAX_MANIFEST_BYTES = 1 << 20
MAX_FILE_BYTES = 16 << 20
_FILE_NAME = re.compile(r"^[a-z0-9_]+\.json$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
URL_ENV = "GPUSETUP_DB_URL"


class UpdateError(Exception):
    """Why an update was refused, in plain words. ``message`` is the same as data (a gpusetup.messages code)
    for the reasons a user can act on (the URL, the network, the server, a mismatch); the checks of the
    bundle's inner format keep their English words (``message`` None)."""

    def __init__(self, message: Message | str) -> None:
        self.message = message if isinstance(message, Message) else None
        super().__init__(render(message))


@dataclass
class UpdateResult:
    ok: bool
    message: str  # English words; ``said`` is the same as data (a gpusetup.messages message)
    version: str | None = None  # bundle version now in use
    installed_to: Path | None = None
    previous: Path | None = None  # where the old copy was kept
    said: Message | None = None

    @classmethod
    def of(cls, ok: bool, said: Message, version: str | None = None, installed_to: Path | None = None,
           previous: Path | None = None) -> UpdateResult:
        return cls(ok, render(said), version, installed_to, previous, said)


# ------------------------------------------------------------------------------------------- keys


def pinned_keys() -> list[bytes]:
    """The shipped Ed25519 public keys (raw 32 bytes), one base64 line each; '#' lines are comments."""
    keys = []
    for line in resources.read_text("keys", "compat-update-ed25519.pub", limit=64 * 1024).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            raw = base64.b64decode(line, validate=True)
            if len(raw) != 32:
                raise UpdateError("resources/keys/compat-update-ed25519.pub: a key is not 32 bytes")
            keys.append(raw)
    return keys


def verify_signature(manifest: bytes, signature_b64: bytes, keys: Iterable[bytes]) -> None:
    # lazy: cryptography costs ~9 ms (python -X importtime) of every command that loads the data (compat.db imports
    # this module); only an updated copy is verified
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        sig = base64.b64decode(signature_b64.strip(), validate=True)
    except ValueError as exc:
        raise UpdateError("the manifest signature is not valid base64") from exc
    for raw in keys:
        try:
            Ed25519PublicKey.from_public_bytes(raw).verify(sig, manifest)
            return
        except InvalidSignature:
            continue
    raise UpdateError(msg("db.update.error.signature"))


def sign_manifest(manifest: bytes, private_key: Any) -> bytes:
    """Base64 Ed25519 signature (for the bundle tool and tests)."""
    return base64.b64encode(private_key.sign(manifest)) + b"\n"


def build_bundle(src: Path, out: Path, private_key: Any, bundle_version: str, names: Iterable[str] | None = None) -> Path:
    """Write a signed bundle of ``src/*.json`` into ``out`` (used by scripts/make_compat_bundle.py and tests)."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for path in sorted(src.glob("*.json")) if names is None else [src / n for n in names]:
        data = path.read_bytes()
        (out / path.name).write_bytes(data)
        files.append({"name": path.name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    manifest = json.dumps({"format": FORMAT, "bundle_version": bundle_version, "files": files}, indent=1).encode()
    (out / MANIFEST).write_bytes(manifest)
    (out / SIGNATURE).write_bytes(sign_manifest(manifest, private_key))
    return out


# ------------------------------------------------------------------------------------------- fetch


def check_url(url: str) -> str:
    """HTTPS only; plain http only to a loopback address (local tests and mirrors on this machine)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url if url.endswith("/") else url + "/"
    if parts.scheme == "http" and parts.hostname:
        host = parts.hostname
        loopback = host == "localhost"
        with contextlib.suppress(ValueError):
            loopback = loopback or ipaddress.ip_address(host).is_loopback
        if loopback:
            return url if url.endswith("/") else url + "/"
        raise UpdateError(msg("db.update.error.plain-http", host=host))
    raise UpdateError(msg("db.update.error.bad-url", url=scrub(repr(url))))


def _get(session: Any, url: str, limit: int, timeout: float, deadline: float | None = None) -> bytes:
    """One file of the bundle: at most ``limit`` bytes, the whole download within ``timeout`` seconds (and
    before ``deadline``, the whole update's). Messages show the URL without its password."""
    import requests  # lazy: 82-185 ms (python -X importtime); only `db update` downloads

    shown = scrub(url)
    end = time.monotonic() + timeout
    end = min(end, deadline) if deadline is not None else end
    try:
        got = fetch.get(session, url, limit=limit, timeout=timeout, deadline=end, read_status=(200,),
                        check_url=check_url)  # a redirect must not leave https
    except fetch.DeadlineExceeded as exc:
        raise UpdateError(msg("db.update.error.deadline", url=shown, seconds=f"{max(exc.seconds, 1):.0f}")) from exc
    except fetch.TooLarge as exc:
        raise UpdateError(msg("db.update.error.too-large", url=shown, limit=limit)) from exc
    except requests.exceptions.ChunkedEncodingError as exc:
        raise UpdateError(msg("db.update.error.dropped", url=shown)) from exc
    except requests.exceptions.ConnectionError as exc:
        raise UpdateError(msg("db.update.error.connection", url=shown, error=type(exc).__name__)) from exc
    except requests.exceptions.Timeout as exc:
        raise UpdateError(msg("db.update.error.timeout", url=shown, seconds=f"{timeout:.0f}")) from exc
    except requests.exceptions.RequestException as exc:
        raise UpdateError(msg("db.update.error.download", url=shown, error=scrub(str(exc)))) from exc
    if got.status != 200:
        raise UpdateError(msg("db.update.error.status", url=shown, status=f"{got.status} {got.reason}"))
    return got.body


def _parse_manifest(raw: bytes) -> dict[str, Any]:
    try:
        m = json.loads(raw)
    except ValueError as exc:
        raise UpdateError("the signed manifest is not valid JSON") from exc
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("bundle_version"), str):
        raise UpdateError(f"the manifest has an unknown format (this gpusetup reads format {FORMAT})")
    files = m.get("files")
    if not isinstance(files, list) or not files:
        raise UpdateError("the manifest lists no files")
    seen = set()
    for f in files:
        if (
            not isinstance(f, dict)
            or not _FILE_NAME.match(str(f.get("name", "")))
            or not _SHA256.match(str(f.get("sha256", "")))
            or not isinstance(f.get("size"), int)
        ):
            raise UpdateError(f"the manifest has a malformed file entry: {f!r}")
        seen.add(f["name"])
    missing = [n for n in compat_db.REQUIRED_FILES if f"{n}.json" not in seen]
    if missing:
        raise UpdateError(f"the bundle is incomplete: it lacks {', '.join(missing)}")
    return m


@functools.lru_cache(maxsize=32)
def _validator(schema_path: Path) -> Any:
    import jsonschema  # lazy: 72 ms (python -X importtime); only downloaded data is validated

    return jsonschema.Draft202012Validator(json.loads(schema_path.read_text(encoding="utf-8")))


def _validate(name: str, data: bytes) -> None:
    import jsonschema  # lazy: 72 ms (python -X importtime); only downloaded data is validated

    stem = name[: -len(".json")]
    schema_path = resource("schema", "compat", f"{stem}.schema.json")
    if not schema_path.is_file():
        raise UpdateError(f"{name}: this gpusetup has no schema for it, so it cannot be checked")
    try:
        doc = json.loads(data)
        _validator(schema_path).validate(doc)
    except ValueError as exc:
        raise UpdateError(f"{name}: not valid JSON") from exc
    except jsonschema.ValidationError as exc:
        raise UpdateError(f"{name}: does not match its schema: {exc.message}") from exc


# ------------------------------------------------------------------------------------------ update


def update(
    url: str | None = None,
    *,
    dest: Path | None = None,
    keys: list[bytes] | None = None,
    timeout: float = 20.0,
    session: Any = None,
    deadline_s: float | None = None,
) -> UpdateResult:
    """Download, verify and install a data bundle. Never raises; on any error the data in use is unchanged.

    ``timeout``: seconds one download may take, start to end (not per read: a server dripping a byte a second
    is stopped too); ``deadline_s``: the whole update's limit (default three times ``timeout``)."""
    dest = dest or compat_db.user_dir()
    deadline = time.monotonic() + (deadline_s if deadline_s is not None else 3 * timeout)
    try:
        return _update(url, dest, keys, timeout, session, deadline)
    except UpdateError as exc:
        return UpdateResult.of(False, msg("db.update.failed", reason=exc.message or str(exc), in_use=_in_use(dest)))
    except Exception as exc:  # noqa: BLE001 - an update must never crash the tool
        return UpdateResult.of(False, msg("db.update.failed-unexpectedly", error=f"{type(exc).__name__}: {exc}",
                                          in_use=_in_use(dest)))


def _in_use(dest: Path) -> Message:
    compat_db.clear_cache()
    try:
        db = compat_db._cached(str(dest))
    except compat_db.DataError as exc:
        return msg("db.update.unloadable", reason=str(exc))
    if db.origin == "embedded":
        return msg("db.update.keeps-built-in", version=db.version)
    return msg("db.update.keeps-installed", version=db.version)


def _update(url: str | None, dest: Path, keys: list[bytes] | None, timeout: float, session: Any,
            deadline: float) -> UpdateResult:
    import requests  # lazy: 82-185 ms (python -X importtime); only `db update` downloads

    url = url or os.environ.get(URL_ENV)
    if not url:
        raise UpdateError(msg("db.update.error.no-url", env=URL_ENV))
    base = check_url(url)
    keys = pinned_keys() if keys is None else keys
    sess = session or requests.Session()
    _clean_leftovers(dest)
    manifest_raw = _get(sess, urljoin(base, MANIFEST), MAX_MANIFEST_BYTES, timeout, deadline)
    signature = _get(sess, urljoin(base, SIGNATURE), 4096, timeout, deadline)
    verify_signature(manifest_raw, signature, keys)
    manifest = _parse_manifest(manifest_raw)
    version = manifest["bundle_version"]

    compat_db.clear_cache()
    current = compat_db._cached(str(dest))
    floor = read_floor(dest)
    newest = max((v for v in (current.version, floor) if v), key=Version)
    if Version(version) < Version(newest):
        raise UpdateError(msg("db.update.error.older", version=version, current=newest))
    if current.origin != "embedded" and version == current.version:
        return UpdateResult.of(True, msg("db.update.up-to-date", version=version), version, dest)

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".compat-new-", dir=dest.parent))
    try:
        for f in manifest["files"]:
            data = _get(sess, urljoin(base, f["name"]), MAX_FILE_BYTES, timeout, deadline)
            if len(data) != f["size"]:
                raise UpdateError(msg("db.update.error.incomplete", name=f["name"], got=len(data), size=f["size"]))
            digest = hashlib.sha256(data).hexdigest()
            if digest != f["sha256"]:
                raise UpdateError(msg("db.update.error.checksum", name=f["name"], got=digest[:12], expected=f["sha256"][:12]))
            _validate(f["name"], data)
            _write(tmp / f["name"], data)
        _write(tmp / MANIFEST, manifest_raw)
        _write(tmp / SIGNATURE, signature)
        compat_db.read_files(tmp)  # the resolver must be able to load it
        write_floor(dest, version)  # before the swap: a crash between its two renames cannot lower it
        previous = _swap(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    compat_db.clear_cache()
    said = msg("db.update.installed-kept", version=version, path=str(dest), previous=str(previous)) if previous \
        else msg("db.update.installed", version=version, path=str(dest))
    return UpdateResult.of(True, said, version, dest, previous)


FLOOR_SUFFIX = ".floor.json"
LEFTOVER_AGE_S = 3600  # a .compat-new-* folder this old belongs to no running update


def _floor_path(dest: Path) -> Path:
    return dest.with_name(dest.name + FLOOR_SUFFIX)


def read_floor(dest: Path) -> str | None:
    """The newest bundle version ever installed here: kept beside the data, not in it, so that losing the data
    (a crash between the two renames of the swap, a deleted folder) never lets an older signed bundle back in."""
    try:
        with open(_floor_path(dest), "rb") as fh:
            doc = json.loads(fh.read(4096))
        version = doc.get("version") if isinstance(doc, dict) else None
        if isinstance(version, str):
            Version(version)
            return version
    except (OSError, ValueError, TypeError):
        pass
    return None


def write_floor(dest: Path, version: str) -> None:
    """Raise the floor to ``version`` (never lower it), atomically."""
    old = read_floor(dest)
    if old is not None and Version(old) >= Version(version):
        return
    path = _floor_path(dest)
    path.parent.mkdir(parents=True, exist_ok=True)
    paths.write_private(path, json.dumps({"version": version}) + "\n")


def _clean_leftovers(dest: Path) -> None:
    """Folders of downloads that were killed (``.compat-new-*``) are removed once they are an hour old; a data
    folder lost between the two renames of a crashed swap is put back from ``<dest>.old``."""
    old = dest.with_name(dest.name + ".old")
    if not dest.exists() and old.is_dir() and not old.is_symlink():
        with contextlib.suppress(OSError):
            os.replace(old, dest)
    try:
        entries = list(dest.parent.glob(".compat-new-*"))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        try:
            if entry.is_dir() and not entry.is_symlink() and now - entry.stat().st_mtime > LEFTOVER_AGE_S:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _swap(new: Path, dest: Path) -> Path | None:
    """Put ``new`` in place of ``dest``; keep the old copy as ``<dest>.old``; restore it if the swap fails."""
    old = dest.with_name(dest.name + ".old")
    previous = None
    if dest.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(dest, old)
        previous = old
    try:
        os.replace(new, dest)
    except OSError:
        if previous is not None:
            os.replace(old, dest)
        raise
    return previous
