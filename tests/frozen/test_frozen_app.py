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
import platform
import re
import subprocess
import sys
import sysconfig
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from install.stand_ins import HOST_PIP_ENV_DROP, Index, _handler, build_wheel, uv_wheel, wheel_of_installed

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
    assert (internal / "gpusetup" / "selftest" / "cpucheck.py").is_file()
    # uv is fetched when a plan needs it, numpy's baseline runs in the environment under test (both tested below)
    for never in ("uv", "uv.exe", "numpy", "numpy.libs", "PySide6/QtNetwork.abi3.so", "PySide6/QtQml.abi3.so",
                  "PySide6/Qt/lib/libQt6Network.so.6", "pytest", "PyInstaller"):
        assert not (internal / never).exists(), never
    size = sum(p.stat().st_size for p in app.rglob("*") if p.is_file() and not p.is_symlink())
    # 109.6 MiB with Python 3.11 (Debian 12), 110.1 MiB with 3.12 (Ubuntu 24.04): a guard against what should not be
    # there (uv, numpy, full ICU: 30–40 MiB each), with room for the runtime's own size from one Python to the next
    assert size < 116 * 1024 * 1024, f"{size / 2**20:.0f} MiB: docs/packaging.md says what it holds"


def test_the_window_check_child_is_the_gui_program_itself(app: Path, env: dict[str, str]) -> None:
    res = run([str(app / "gpusetup-gui"), "--gpusetup-qt-probe"], env, timeout=120)
    assert res.returncode == 0 and "GPUSETUP-QT-OK offscreen" in res.stdout, res.stderr[-2000:]


def _needed(lib: Path) -> list[str]:
    import runpy

    return runpy.run_path(str(ROOT / "packaging" / "elf_needed.py"))["needed"](lib)


@pytest.mark.skipif(platform.system() != "Linux", reason="Qt plugin libraries are checked on Linux")
def test_every_qt_library_a_kept_plugin_needs_is_bundled(app: Path) -> None:
    """The spec drops plugins the wizard never loads and the Qt libraries only they used: what is left must
    not need a dropped one (a plugin whose library is missing fails to load at run time, silently)."""
    qt = app / "_internal" / "PySide6" / "Qt"
    plugins = sorted((qt / "plugins").rglob("*.so"))
    kinds = {p.parent.name for p in plugins}
    assert {"platforms", "platforminputcontexts", "iconengines", "imageformats", "xcbglintegrations",
            "wayland-shell-integration"} <= kinds, kinds
    names = {p.name for p in plugins}
    assert {"libqxcb.so", "libqwayland.so", "libqoffscreen.so", "libqsvg.so", "libqsvgicon.so",
            "libibusplatforminputcontextplugin.so", "libcomposeplatforminputcontextplugin.so"} <= names, names
    have = {p.name for p in (qt / "lib").iterdir()} | {p.name for p in (app / "_internal").iterdir()}
    for lib in [*plugins, *(qt / "lib").glob("libQt6*.so*")]:
        missing = [n for n in _needed(lib) if n.startswith("libQt6") and n not in have]
        assert not missing, f"{lib.relative_to(app)} needs {missing}, which the spec dropped"
    # what the spec's pruning keeps: no library that only a dropped plugin needed, and no link left dangling
    dangling = [p.name for p in (app / "_internal").iterdir() if p.is_symlink() and not p.exists()]
    assert not dangling, dangling
    assert not list((app / "_internal").glob("libgtk-3.so*")) and not list((app / "_internal").glob("libpango-*"))
    assert _needed(qt / "plugins" / "platforms" / "libqxcb.so"), "the ELF reader reads real libraries"
    assert list((qt / "translations").glob("qtbase_zh_CN.qm")), "Qt's own Chinese words (dialog buttons)"


def test_the_window_opens_on_x11(app: Path, env: dict[str, str]) -> None:
    """The trimmed bundle's xcb platform plugin loads on a virtual X server. Where this system lacks one of
    the X libraries Qt leaves to the system (a fresh Debian lacks libxcb-icccm4 and libxcb-keysyms1; the
    start-up check names and installs them), the plugin must fail for that reason only, never for a library
    the spec dropped."""
    import shutil
    import time

    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
    qt = app / "_internal" / "PySide6" / "Qt"
    ldd = subprocess.run(["ldd", str(qt / "plugins" / "platforms" / "libqxcb.so")], capture_output=True, text=True,
                         env={**env, "LD_LIBRARY_PATH": f"{qt / 'lib'}:{app / '_internal'}"}, timeout=60)
    missing = re.findall(r"^\s*(\S+) => not found", ldd.stdout, re.M)
    assert not [m for m in missing if m.startswith("libQt6") or (app / "_internal" / m).exists()], ldd.stdout
    display = f":{90 + os.getpid() % 400}"
    server = subprocess.Popen([xvfb, display, "-nolisten", "tcp", "-screen", "0", "1024x768x24"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not Path(f"/tmp/.X11-unix/X{display[1:]}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        xenv = {**env, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        res = run([str(app / "gpusetup-gui"), "--gpusetup-qt-probe"], xenv, timeout=120)
    finally:
        server.terminate()
        server.wait(timeout=10)
    if missing:  # the system's part is missing here: the window cannot open, and the reason is the system's
        assert res.returncode != 0 and "xcb" in res.stderr, res.stdout + res.stderr[-2000:]
    else:
        assert res.returncode == 0 and "GPUSETUP-QT-OK xcb" in res.stdout, res.stdout + res.stderr[-2000:]


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
    uv = importlib.util.find_spec("uv") is not None
    if uv:  # and uv, as PyPI has it
        idx.layouts["simple"].append(uv_wheel(wheels))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = run([cli, "install", "-y", "--target", f"venv:{target}", "--pytorch-mirror", f"{idx.url}/whl",
                   "--index-url", f"{idx.url}/simple"], env)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
        if uv:  # the packaged app fetches uv as its plan's first step would (both programs)
            for prog in ("gpusetup", "gpusetup-gui"):
                dest = tmp_path / prog / "uv"
                got = run([str(app / prog), "--gpusetup-fetch-uv", "--index-url", f"{idx.url}/simple", "--dest",
                           str(dest)], env)
                assert got.returncode == 0, got.stdout[-1000:] + got.stderr[-2000:]
                assert "Progress " in got.stdout and "sha256" in got.stdout, got.stdout[-1000:]
                ver = subprocess.run([str(dest), "--version"], capture_output=True, text=True, timeout=60)
                assert ver.stdout.startswith("uv "), ver
    finally:
        server.shutdown()
        server.server_close()
    py = target / "bin" / "python"
    assert py.is_file() and (target / "pyvenv.cfg").is_file()
    proof = run([cli, "selftest", "--python", str(py), "--framework", "numpy"], env)
    assert proof.returncode in (0, 1), proof.stdout[-2000:] + proof.stderr[-2000:]
    assert re.search(r"^✓ numpy works\. It ran on the processor: [\d.]+ GFLOP/s\.$", proof.stdout, re.M), proof.stdout
    assert f"Frameworks checked with {py} (Python " in proof.stdout
    # the app carries no numpy: the CPU baseline was measured by the new environment's numpy
    assert re.search(r"CPU FP32 matmul \(numpy\)\s+[\d.]+ GFLOP/s", proof.stdout), proof.stdout


@pytest.mark.skipif(platform.system() != "Linux", reason="the ICU stub is built on Linux")
def test_the_icu_stub_changes_nothing_the_wizard_shows(app: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """The spec replaces Qt's 31 MiB ICU data library with ICU's empty stub: every page of the wizard, in English
    and Chinese, light and dark, is drawn pixel for pixel as with the real library (put back into a copy of
    the app). The Welcome pages are left out of the comparison: they show the demo's random temporary folder."""
    import shutil

    import PySide6

    qt_lib = Path(PySide6.__file__).parent / "Qt" / "lib"
    stub = next((app / "_internal" / "PySide6" / "Qt" / "lib").glob("libicudata.so.*"))
    real = qt_lib / stub.name
    assert stub.stat().st_size < 1024 * 1024 < real.stat().st_size, (stub.stat().st_size, real.stat().st_size)
    full = tmp_path / "full"
    shutil.copytree(app, full, symlinks=True)
    shutil.copy2(real, full / "_internal" / "PySide6" / "Qt" / "lib" / stub.name)
    shots = {}
    for name, root in (("stub", app), ("full", full)):
        out = tmp_path / f"shots-{name}"
        res = run([str(root / "gpusetup"), "gui", "--fake-machine", "rtx3060", "--screenshots", str(out)],
                  {**env, "GPUSETUP_HOME": str(tmp_path / f"home-{name}")}, timeout=600)
        assert res.returncode == 0, res.stdout[-1000:] + res.stderr[-2000:]
        shots[name] = {p.name: p.read_bytes() for p in out.glob("*.png") if not p.name.startswith("1-welcome")}
    assert len(shots["stub"]) >= 20 and any("zh_CN" in n for n in shots["stub"]), sorted(shots["stub"])
    assert shots["stub"].keys() == shots["full"].keys()
    assert [n for n in shots["stub"] if shots["stub"][n] != shots["full"][n]] == []
