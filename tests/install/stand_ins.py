"""Local stand-ins for the real world: a PEP 503 index on 127.0.0.1 with wheels built here, real venvs, real pip.

The index serves two layouts, like the real ones: ``/simple/<project>/`` (PyPI) and ``/whl/<variant>/<project>/``
(download.pytorch.org). ``/whl/broken-cu126/`` lists only a ``+cpu`` torch, the misconfigured-mirror case.
``slowpkg`` is 3 MB served in small, slow chunks so a test can cancel or crash in the middle of a download.
It also answers absolute-URL requests, i.e. acts as an HTTP proxy, so proxy support can be checked.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import random
import subprocess
import sys
import time
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gpusetup.model import Choice, FrameworkPlan, Machine, System

HOST_PIP_ENV_DROP = ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT", "PIP_CONFIG_FILE",
                     "PIP_REQUIRE_VIRTUALENV", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                     "ALL_PROXY", "all_proxy", "UV_INDEX_URL")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(dest: Path, name: str, version: str, requires: tuple[str, ...] = (), payload: int = 0) -> Path:
    """A minimal, valid pure-Python wheel: a module that knows its version, dist-info, RECORD."""
    files: dict[str, bytes] = {
        f"{name}/__init__.py": f"__version__ = {version!r}\n".encode(),
    }
    if payload:
        rnd = random.Random(42)
        files[f"{name}/blob.bin"] = rnd.randbytes(payload)
    di = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    files[f"{di}/METADATA"] = meta.encode()
    files[f"{di}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: gpusetup-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in files.items()) + f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = record.encode()
    path = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for p, d in files.items():
            zf.writestr(p, d)
    return path


def layered_wheel(dest: Path, name: str, version: str, files: dict[str, bytes], requires: tuple[str, ...] = (),
                  dist_info_first: bool = True) -> Path:
    """A wheel laid out like TensorFlow's and the repacked jaxlib of ../shared/repro/resume-over-broken-install.sh:
    the ``.dist-info`` members come FIRST, so while pip unpacks it the metadata already says "installed" and
    the package files are not there yet. ``files`` in the order given; RECORD lists them with their hashes."""
    di = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    info = {f"{di}/METADATA": meta.encode(),
            f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: gpusetup-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in {**files, **info}.items()) + f"{di}/RECORD,,\n"
    info[f"{di}/RECORD"] = record.encode()
    members = {**info, **files} if dist_info_first else {**files, **info}
    path = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for p, d in members.items():
            zf.writestr(p, d)
    return path


def framework_pair(dest: Path, parts: int = 4000) -> tuple[Path, Path]:
    """A framework shaped like JAX: ``jax`` 0.0.1 needs ``jaxlib`` 0.0.1, checks for it on import as the real
    one does, and ``jaxlib`` is a wheel with its ``.dist-info`` first and ``parts`` data files before the module
    that ``import jaxlib`` loads last (so unpacking it takes long enough to be interrupted half-way)."""
    jax_files = {"jax/__init__.py": (
        b"try:\n    import jaxlib\nexcept ModuleNotFoundError as exc:\n"
        b"    raise ModuleNotFoundError('jax requires jaxlib to be installed') from exc\n"
        b"__version__ = '0.0.1'\n")}
    lib_files = {"jaxlib/__init__.py": b"from jaxlib.xla_extension import READY\n__version__ = '0.0.1'\n"}
    lib_files.update({f"jaxlib/data/part{i:05d}.bin": bytes([i % 251]) * 512 + str(i).encode() for i in range(parts)})
    lib_files["jaxlib/xla_extension.py"] = b"READY = True\n"  # what `import jaxlib` loads, unpacked last
    return (layered_wheel(dest, "jax", "0.0.1", jax_files, requires=("jaxlib==0.0.1",), dist_info_first=False),
            layered_wheel(dest, "jaxlib", "0.0.1", lib_files))


def uv_wheel(dest: Path) -> Path:
    """The installed uv package packed back into the wheel PyPI serves for this platform: the real program
    under ``uv-X.data/scripts/``, the real dist-info (its WHEEL file names the platform tags)."""
    import importlib.metadata

    dist = importlib.metadata.distribution("uv")
    tags = [ln.split(": ", 1)[1] for ln in (dist.read_text("WHEEL") or "").splitlines() if ln.startswith("Tag: ")]
    assert tags, "the installed uv package has no WHEEL tags to rebuild its wheel from"
    py, abi = tags[0].split("-")[:2]
    plats = ".".join(t.split("-", 2)[2] for t in tags)
    path = dest / f"uv-{dist.version}-{py}-{abi}-{plats}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for f in dist.files or []:
            src = Path(str(dist.locate_file(f))).resolve()
            if not src.is_file():
                continue
            name = str(f)
            if name.startswith("../../../bin/"):
                name = f"uv-{dist.version}.data/scripts/" + name.rsplit("/", 1)[1]
            elif name.startswith(".."):
                continue
            zf.write(src, name)
    return path


def wheel_of_installed(dest: Path, name: str) -> Path:
    """A wheel of a distribution installed in this test environment, rebuilt from its installed files (its
    real code and metadata; no network): e.g. the pip a new environment is updated to. Scripts outside
    site-packages (bin/pip) and INSTALLER/REQUESTED/RECORD are left out; RECORD is written anew."""
    import importlib.metadata

    dist = importlib.metadata.distribution(name)
    files: dict[str, bytes] = {}
    for f in dist.files or []:
        p = str(f)
        if p.startswith("..") or "__pycache__" in p or p.endswith((".pyc", "/INSTALLER", "/REQUESTED", "/RECORD",
                                                                     "/direct_url.json")):
            continue
        files[p] = Path(str(dist.locate_file(f))).read_bytes()
    di = next(p.split("/", 1)[0] for p in files if p.split("/", 1)[0].endswith(".dist-info"))
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in files.items()) + f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = record.encode()
    path = dest / f"{name}-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for p, d in files.items():
            zf.writestr(p, d)
    return path


class Index:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layouts: dict[str, list[Path]] = {}
        self.slow = True
        self.served: list[tuple[str, int]] = []  # (file, bytes) of every wheel sent
        self.head = False  # True: HEAD on /files/ answers the Content-Length (what a CDN does)
        self.pep658 = False  # True: the HTML pages advertise PEP 658 metadata and /files/X.whl.metadata is served
        self.json = False  # True: PEP 691 JSON pages (when asked by Accept) with PEP 700 sizes and PEP 658 metadata
        self.proxied: list[str] = []
        self.auth: tuple[str, str] | None = None  # (user, password): basic auth required on every request
        self.auth_seen: list[bool] = []  # per request: did it carry the right credentials
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _handler(index: Index) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            parts = [urllib.parse.unquote(p) for p in self.path.split("/") if p]
            f = index.root / parts[-1] if parts[:1] == ["files"] and len(parts) == 2 else None
            if not index.head or f is None or not f.is_file():
                self.send_error(405 if not index.head else 404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(f.stat().st_size))
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path
            if path.startswith("http://"):
                index.proxied.append(path)
                path = urllib.parse.urlparse(path).path
            if index.auth is not None:
                want = "Basic " + base64.b64encode(":".join(index.auth).encode()).decode()
                ok = self.headers.get("Authorization") == want
                index.auth_seen.append(ok)
                if not ok:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="index"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            parts = [urllib.parse.unquote(p) for p in path.split("/") if p]
            if (parts[:1] == ["files"] and len(parts) == 2 and parts[1].endswith(".whl.metadata")
                    and (index.json or index.pep658)):
                wheel = index.root / parts[1].removesuffix(".metadata")
                if not wheel.is_file():
                    self.send_error(404)
                    return
                with zipfile.ZipFile(wheel) as zf:
                    body = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")))
                self._send(200, body, "text/plain")
                return
            if parts[:1] == ["files"] and len(parts) == 2:
                f = index.root / parts[1]
                if not f.is_file():
                    self.send_error(404)
                    return
                data = f.read_bytes()
                index.served.append((parts[1], len(data)))
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                chunk = 32 * 1024 if index.slow and parts[1].startswith("slowpkg") else len(data)
                try:
                    for i in range(0, len(data), chunk):
                        self.wfile.write(data[i:i + chunk])
                        if chunk < len(data):
                            time.sleep(0.1)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
            # /simple/<project>/ or /whl/<layout>/<project>/
            layout, project = ("simple", parts[1]) if parts[:1] == ["simple"] and len(parts) == 2 else (
                (parts[1], parts[2]) if parts[:1] == ["whl"] and len(parts) == 3 else (None, None))
            wheels = [w for w in index.layouts.get(layout or "", [])
                      if w.name.split("-")[0].lower().replace("_", "-") == (project or "").lower()]
            if not wheels:
                self.send_error(404)
                return
            if index.json and "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                files = [{"filename": w.name, "url": f"/files/{urllib.parse.quote(w.name)}",
                          "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()},
                          "size": w.stat().st_size, "core-metadata": True} for w in wheels]
                self._send(200, json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode(),
                           "application/vnd.pypi.simple.v1+json")
                return
            meta = ' data-core-metadata="true"' if index.pep658 else ""
            links = "".join(
                f'<a href="/files/{urllib.parse.quote(w.name)}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}"{meta}>'
                f"{html.escape(w.name)}</a><br>\n" for w in wheels)
            body = f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return H


HOST_PIP = [sys.executable, "-m", "pip"]
MIB = 1024 * 1024


def PLENTY(path: str) -> int:  # noqa: N802 - reads as a constant at call sites
    """Injectable free-space probe: lots of room."""
    return 500 * 1024 * MIB


def machine() -> Machine:
    return Machine(system=System(os="linux", distro_id="ubuntu", distro_version="24.04", arch="x86_64"))


def torch_plan(index_url: str, packages: list[str] | None = None, variant: str = "cu126") -> list[FrameworkPlan]:
    return [FrameworkPlan(framework="pytorch", ok=True, choice=Choice(
        version="2.9.1", variant=variant, index_url=index_url,
        packages=packages if packages is not None else ["torch==2.9.1+cu126"]))]


def installed(venv: Path) -> dict[str, str]:
    """{name: version} in a venv, read by its own interpreter."""
    out = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import json,importlib.metadata as m;print(json.dumps({d.metadata['Name']: d.version "
                          "for d in m.distributions()}))"], capture_output=True, text=True, check=True, cwd=venv)
    return json.loads(out.stdout)
