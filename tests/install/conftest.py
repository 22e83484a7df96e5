"""Fixtures for the install tests: the local index server, an isolated pip configuration, a closed port."""

from __future__ import annotations

import os
import socket
import threading
from http.server import ThreadingHTTPServer

import pytest

from .stand_ins import HOST_PIP_ENV_DROP, Index, _handler, build_wheel, wheel_of_installed


@pytest.fixture(scope="module", autouse=True)
def isolated_pip_env(tmp_path_factory: pytest.TempPathFactory):
    """Keep the host's pip configuration (find-links, constraints, extra indexes) out of these installs."""
    home = tmp_path_factory.mktemp("home")
    saved = dict(os.environ)
    for k in HOST_PIP_ENV_DROP:
        os.environ.pop(k, None)
    os.environ.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CONFIG_DIRS": str(home / "xdg"),
        "XDG_STATE_HOME": str(home / "state"), "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", "PIP_DEFAULT_TIMEOUT": "20",
        "PIP_RETRIES": "0",
    })
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def index(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("index")
    cu = build_wheel(root, "torch", "2.9.1+cu126", requires=("tinydep>=1.0",))
    cpu = build_wheel(root, "torch", "2.9.1+cpu", requires=("tinydep>=1.0",))
    dep = build_wheel(root, "tinydep", "1.0")
    user = build_wheel(root, "userpkg", "1.0")
    old = build_wheel(root, "tinydep", "0.9")
    slow = build_wheel(root, "slowpkg", "1.0", payload=3 * 1024 * 1024)
    pip = wheel_of_installed(root, "pip")  # what a new environment with an old pip is updated to
    idx = Index(root)
    idx.layouts = {
        "cu126": [cu, dep, slow],
        "broken-cu126": [cpu, dep],
        "cpu": [cpu, dep],
        "simple": [dep, old, user, slow, pip],
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield idx
    server.shutdown()
    server.server_close()


@pytest.fixture
def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

