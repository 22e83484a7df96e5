"""The double-clickable app, built for real with PyInstaller from packaging/gpusetup.spec: its command line
installs into a new environment from a package index on 127.0.0.1 with a *real* Python it found (never
itself), and its self-test proves the framework in that environment (fwcheck.py is bundled as a file).

The index serves the planned torch version as a small stand-in wheel that requires the real numpy wheel this
test environment runs; the proof checks numpy — the framework check's CPU-only path — in the new env.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from install.stand_ins import HOST_PIP_ENV_DROP, Index, _handler, build_wheel, wheel_of_installed

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.packaging, pytest.mark.network]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (it is in the test extra: pip install -e '.[test]')")
    cfg = sysconfig.get_config_var
    soname = cfg("INSTSONAME") or ""
    if cfg("Py_ENABLE_SHARED") and soname and not (Path(cfg("LIBDIR") or "") / soname).exists():
        pkg = re.sub(r"^(libpython\d+\.\d+).*", r"\1", soname)
        pytest.skip(f"PyInstaller needs this Python's shared library {soname}, which is not installed "
                    f"(Debian/Ubuntu: sudo apt-get install -y {pkg}; ./bootstrap.sh test installs it as root)")
    out = tmp_path_factory.mktemp("build")
    res = subprocess.run([sys.executable, "-m", "PyInstaller", str(ROOT / "packaging" / "gpusetup.spec"),
                          "--noconfirm", "--distpath", str(out / "dist"), "--workpath", str(out / "work")],
                         capture_output=True, text=True, timeout=1800, cwd=out)
    assert res.returncode == 0, res.stdout[-1500:] + res.stderr[-3000:]
    return out / "dist" / "gpusetup"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in HOST_PIP_ENV_DROP and not k.startswith("PYTHON")}
    out.update({"HOME": str(tmp_path / "home"), "GPUSETUP_HOME": str(tmp_path / "gpusetup"),
                "PIP_NO_CACHE_DIR": "1", "PIP_CONFIG_FILE": os.devnull, "NO_PROXY": "127.0.0.1",
                "no_proxy": "127.0.0.1", "QT_QPA_PLATFORM": "offscreen"})
    return out


def run(argv: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)


def test_the_app_bundles_what_it_runs_and_is_not_huge(app: Path) -> None:
    internal = app / "_internal"
    assert (internal / "gpusetup" / "selftest" / "fwcheck.py").is_file()
    assert (internal / ("uv.exe" if os.name == "nt" else "uv")).is_file()
    for never in ("PySide6/QtNetwork.abi3.so", "PySide6/QtQml.abi3.so", "pytest", "PyInstaller"):
        assert not (internal / never).exists(), never
    size = sum(p.stat().st_size for p in app.rglob("*") if p.is_file() and not p.is_symlink())
    assert size < 320 * 1024 * 1024, f"{size / 2**20:.0f} MiB: docs/packaging.md says what it holds"


def test_the_window_check_child_is_the_gui_program_itself(app: Path, env: dict[str, str]) -> None:
    res = run([str(app / "gpusetup-gui"), "--gpusetup-qt-probe"], env, timeout=120)
    assert res.returncode == 0 and "GPUSETUP-QT-OK offscreen" in res.stdout, res.stderr[-2000:]


def test_frozen_cli_installs_with_a_real_python_and_the_frozen_selftest_proves_that_env(
        app: Path, env: dict[str, str], tmp_path: Path) -> None:
    cli = str(app / "gpusetup")
    target = tmp_path / "new env"
    dry = run([cli, "install", "--dry-run", "--target", f"venv:{target}", "--pytorch-mirror",
               "http://127.0.0.1:9/whl"], env)
    assert dry.returncode == 0, dry.stderr[-2000:]
    create = next(ln for ln in dry.stdout.splitlines() if "-m venv" in ln)
    assert str(app) not in create, f"the app must not use itself as Python: {create}"
    want = re.search(r"'?torch==([^\s']+)'?", dry.stdout)
    assert want, dry.stdout
    version = want.group(1).replace(".*", ".0")

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    np_version = importlib.metadata.version("numpy")
    got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                          "-d", str(wheels), f"numpy=={np_version}"], capture_output=True, text=True, timeout=600)
    if got.returncode != 0:
        pytest.skip(f"could not fetch the numpy wheel for the local index: {got.stderr[-300:]}")
    numpy_whl = next(wheels.glob("numpy-*.whl"))
    torch_whl = build_wheel(wheels, "torch", f"{version}+cpu", requires=(f"numpy=={np_version}",))
    idx = Index(wheels)
    # "simple" (the PyPI mirror) has this test environment's pip: the plan updates the new environment's older pip
    idx.layouts = {"cpu": [torch_whl, numpy_whl], "simple": [wheel_of_installed(wheels, "pip")]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = run([cli, "install", "-y", "--target", f"venv:{target}", "--pytorch-mirror", f"{idx.url}/whl",
                   "--index-url", f"{idx.url}/simple"], env)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    finally:
        server.shutdown()
        server.server_close()
    py = target / "bin" / "python"
    assert py.is_file() and (target / "pyvenv.cfg").is_file()
    proof = run([cli, "selftest", "--python", str(py), "--framework", "numpy"], env)
    assert proof.returncode in (0, 1), proof.stdout[-2000:] + proof.stderr[-2000:]
    assert f"Framework: PROVEN on the CPU — numpy in {py} computes correctly" in proof.stdout, proof.stdout
