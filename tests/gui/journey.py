"""What the journey tests (tests/gui/test_journey.py) stand on: a package index on 127.0.0.1 with real small wheels,
the real core behind the wizard on a computer without an NVIDIA GPU, a real X server, and the wizard as its own
process (so it can be killed with SIGKILL).

The framework is a stand-in for JAX, because the real jax and jaxlib wheels (~100 MB) cannot be fetched where
the tests run (no network but 127.0.0.1): ``jax`` 0.0.1 provides exactly the calls the framework check makes
(gpusetup/selftest/fwcheck.py ``check_jax``: ``jax.devices``, ``jax.jit``, ``jax.device_put``, ``jax.numpy.matmul``,
``jax.lax.conv_general_dilated``, ``block_until_ready``) and computes them with numpy on the processor; like the
real one it refuses to import without ``jaxlib`` and asks for no GPU backend it does not have (``jax.devices("gpu")``
raises RuntimeError, as jax does on a CPU-only jaxlib). Its results are checked by the proof against a float64
reference, so a stand-in that computed wrong would fail it. numpy is the one installed here, packed back into its
wheel (stand_ins.wheel_of_installed); ``slowpkg`` (3 MB served in slow chunks, ~10 s) keeps pip busy long enough
to close, cancel or kill the wizard while it runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import psutil

from gpusetup.gui.demo import demo_machine
from gpusetup.gui.services import Services
from gpusetup.model import Choice, FrameworkPlan

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from install.stand_ins import Index, _handler, build_wheel, layered_wheel, wheel_of_installed  # noqa: E402

JAX_INIT = b'''"""A stand-in for JAX (gpusetup's tests, tests/gui/journey.py): the framework check's calls, computed with
numpy on the processor."""
try:
    import jaxlib  # noqa: F401
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError("jax requires jaxlib to be installed") from exc

from jax import lax  # noqa: E402
from jax import numpy  # noqa: E402,F401
from jax._core import Array, CpuDevice  # noqa: E402

__version__ = "0.0.1"


def devices(backend=None):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
                           f"{backend} are present. Platforms present are: cpu")
    return [CpuDevice()]


def jit(fn):
    return fn


def device_put(x, device=None):
    return Array.of(x)


__all__ = ["Array", "devices", "device_put", "jit", "lax"]
'''
JAX_CORE = b'''import numpy as _np


class CpuDevice:
    device_kind = "cpu"
    platform = "cpu"
    id = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


class Array(_np.ndarray):
    @classmethod
    def of(cls, x):
        return _np.ascontiguousarray(_np.asarray(x, dtype=_np.float32)).view(cls)

    def block_until_ready(self):
        return self
'''
JAX_NUMPY = b'''import numpy as _np

from jax._core import Array


def matmul(a, b, precision=None):
    return Array.of(_np.matmul(_np.asarray(a), _np.asarray(b)))
'''
JAX_LAX = b'''import enum

import numpy as _np

from jax._core import Array


class Precision(enum.Enum):
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


def conv_general_dilated(lhs, rhs, window_strides, padding, precision=None):
    """NCHW x OIHW, stride 1, VALID: im2col and one matmul, in float32."""
    assert tuple(window_strides) == (1, 1) and padding == "VALID"
    x, w = _np.asarray(lhs, dtype=_np.float32), _np.asarray(rhs, dtype=_np.float32)
    nb, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = _np.stack([x[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
    return Array.of(_np.matmul(w.reshape(o, c * kh * kw), cols.reshape(nb, c * kh * kw, oh * ow)).reshape(nb, o, oh, ow))
'''


def jax_wheels(dest: Path) -> list[Path]:
    """The stand-in jax (needs jaxlib and numpy, as the real one does) and its jaxlib."""
    numpy_version = wheel_version(wheel_of_installed(dest, "numpy"))
    jax = layered_wheel(dest, "jax", "0.0.1", {"jax/__init__.py": JAX_INIT, "jax/_core.py": JAX_CORE,
                                               "jax/numpy.py": JAX_NUMPY, "jax/lax.py": JAX_LAX},
                        requires=("jaxlib==0.0.1", f"numpy=={numpy_version}"), dist_info_first=False)
    jaxlib = layered_wheel(dest, "jaxlib", "0.0.1", {"jaxlib/__init__.py": b"__version__ = '0.0.1'\n"})
    return [jax, jaxlib, next(dest.glob("numpy-*.whl"))]


def wheel_version(path: Path) -> str:
    return path.name.split("-")[1]


@contextlib.contextmanager
def serve_index(root: Path) -> Iterator[Index]:
    """The local index: /simple/ (the PyPI layout) with the stand-in JAX, its numpy and slowpkg."""
    wheels = jax_wheels(root)
    slow = build_wheel(root, "slowpkg", "1.0", payload=3 * 1024 * 1024)  # served in small slow chunks (~10 s)
    idx = Index(root)
    idx.layouts = {"simple": [*wheels, slow]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield idx
    finally:
        server.shutdown()
        server.server_close()


class JourneyServices(Services):
    """The real core (resolver, planner, installer, journal, self-test) on a recorded computer without an NVIDIA
    GPU; the resolver's JAX is the local index's stand-in (``slow``: with slowpkg beside it, so pip runs ~10 s).
    ``index_url`` None: the plan names no index and pip uses its configured one (PyPI, PIP_INDEX_URL, or the
    PyPI mirror set on the plan page)."""

    def __init__(self, state_dir: Path, index_url: str | None, slow: bool = False) -> None:
        super().__init__(state_dir)
        self.local_index, self.slow = index_url, slow

    def detect(self, progress=None, cancel=None):  # noqa: ANN001 - Services' signature
        return demo_machine("no-gpu")

    def resolve(self, machine, frameworks=(), python_version=None):  # noqa: ANN001 - Services' signature
        real = super().resolve(machine, frameworks, python_version)
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        jax = FrameworkPlan(framework="jax", ok=True, choice=Choice(
            version="0.0.1", variant="cpu", index_url=self.local_index, python=here,
            packages=["jax==0.0.1", *(["slowpkg==1.0"] if self.slow else [])]))
        return [p for p in real if p.framework != "jax"] + [jax]

    def build_plan(self, fplans, machine, target):  # noqa: ANN001 - Services' signature
        # an environment without its own pip, installed into by this test environment's pip: seconds, not a minute
        kwargs = {"index_url": self.index_url} if self.index_url is not None else {}
        return self._install_module().build_plan(fplans, machine, target=target.spec(), with_pip=False,
                                                 host_pip=True, **kwargs)


def isolate(monkeypatch, tmp_path: Path) -> dict[str, str]:  # noqa: ANN001 - pytest's MonkeyPatch
    """This test's own home, configuration and pip settings (the host's pip configuration kept out)."""
    from install.stand_ins import HOST_PIP_ENV_DROP

    for k in HOST_PIP_ENV_DROP:
        monkeypatch.delenv(k, raising=False)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
           "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "XDG_STATE_HOME": str(tmp_path / "home/.state"),
           "GPUSETUP_HOME": str(tmp_path / "gpusetup"), "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", "GPUSETUP_LIVE": "off", "PIP_RETRIES": "0",
           "GPUSETUP_LIBCUDA": str(tmp_path / "no-libcuda.so.1")}
    (tmp_path / "home").mkdir(exist_ok=True)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


# ------------------------------------------------------------------------------------- what is on disk

def imports(env: Path, module: str) -> tuple[bool, str]:
    """Does ``module`` import in the environment ``env`` (its own interpreter, isolated)? (yes/no, the error)."""
    py = env / "bin" / "python"
    if not py.exists():
        return False, f"{py} does not exist"
    res = subprocess.run([str(py), "-I", "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    return res.returncode == 0, (res.stderr.strip().splitlines() or [""])[-1]


def pip_into(env: Path) -> list[psutil.Process]:
    """The pip processes installing into ``env`` now."""
    out = []
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            line = " ".join(p.info["cmdline"] or [])
            if str(env) in line and " pip" in line and "install" in line:
                out.append(p)
    return out


# ------------------------------------------------------------------------------------ a real X server

@contextlib.contextmanager
def xvfb() -> Iterator[str | None]:
    """A private X display (Xvfb, which .ci/run installs); None where there is no Xvfb."""
    exe = shutil.which("Xvfb")
    if exe is None:
        yield None
        return
    n = next(n for n in range(120, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists())
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                break
            time.sleep(0.05)
        yield f":{n}"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)


def xcb_check(display: str):  # noqa: ANN201 - gpusetup.qtcheck.QtCheck
    """Can Qt's xcb plugin open a window on ``display`` (gpusetup.qtcheck, the check `gpusetup gui` runs)?"""
    from gpusetup.qtcheck import check

    saved = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    try:
        return check("xcb")
    finally:
        if saved is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = saved


# -------------------------------------------------------------------------------- the wizard as a process

APP = Path(__file__).resolve().parent / "journey_app.py"


def start_app(env: dict[str, str], display: str, state: Path, url: str, target: Path, language: str) -> subprocess.Popen:
    """The real app (gpusetup.gui.app.WizardApp) on ``display``, walked to the install by journey_app.py."""
    spec = {"state": str(state), "url": url, "target": str(target), "language": language, "status": str(state / "app.json")}
    child_env = {**os.environ, **env, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    return subprocess.Popen([sys.executable, str(APP), json.dumps(spec)], env=child_env, cwd=TESTS.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def kill_hard(proc: subprocess.Popen) -> str:
    """SIGKILL, as the OOM killer or a power cut would end it; what the app printed."""
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)
    return out


def sentence(template: str) -> re.Pattern[str]:
    """A catalogue template as a pattern: its placeholders match any value."""
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))
