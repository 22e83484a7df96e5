"""gpusetup installed as a wheel, with no extras, into a fresh environment: no Qt, and it runs.

Issue 24: PySide6 and numpy were hard dependencies, so the diagnose image installed gpusetup with ``--no-deps``
and a hand-kept list that lacked platformdirs — ``gpusetup diagnose`` died with ModuleNotFoundError and the
DaemonSet wrote nothing. Now the core (diagnose, plan, analyze, install, docker) is ``pip install gpusetup``;
``gpusetup[gui]`` adds the wizard.

No network here: the wheel is built from this checkout (no build isolation), and the dependencies the wheel
declares are offered to the fresh environment from this test environment's own installed copies (their
folders linked into one directory on the new environment's path), so pip resolves the wheel's real
Requires-Dist against them with ``--no-index``. Nothing else of this environment is visible there: importing
PySide6 and numpy must fail: analyze's similar-report search (issue 22) is the extra gpusetup[analyze] (bm25s,
which needs numpy); the core's analyze names its findings and says how to add the search.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import gpusetup
from gpusetup.generate import generate_setup

from .hosts import HOSTS

ROOT = Path(gpusetup.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not a checkout: no pyproject.toml beside the package")
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(out), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (whl,) = out.glob("gpusetup-*.whl")
    return whl


def _core_requirements(whl: Path) -> list[str]:
    with zipfile.ZipFile(whl) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("Requires-Dist: ")]


@pytest.fixture(scope="module")
def deps(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's core dependencies (and theirs), linked from this environment into one folder."""
    folder = tmp_path_factory.mktemp("deps")
    seen: set[str] = set()
    todo = list(_core_requirements(wheel))
    while todo:
        req = Requirement(todo.pop())
        if req.marker and not req.marker.evaluate({"extra": ""}):
            continue  # extras (gui, selftest, test) are not part of the core
        key = re.sub(r"[-_.]+", "-", req.name).lower()
        if key in seen:
            continue
        seen.add(key)
        dist = md.distribution(req.name)
        todo += list(dist.requires or [])
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            src = Path(str(dist.locate_file(top)))
            if src.exists() and not (folder / top).exists():
                os.symlink(src, folder / top)
    assert not {"pyside6", "pyside6-essentials", "shiboken6"} & seen, seen
    return folder


def _venv(where: Path, deps: Path, with_pip: bool) -> Path:
    argv = [sys.executable, "-m", "venv", str(where)] + ([] if with_pip else ["--without-pip"])
    subprocess.run(argv, check=True, capture_output=True, timeout=300)
    purelib = Path(subprocess.run([str(where / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "core-deps.pth").write_text(f"{deps}\n")
    return where / "bin"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "GPUSETUP_"))}
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "QT_QPA_PLATFORM": "offscreen"}


@pytest.mark.skipif(sys.platform == "win32", reason="the venv layout below is the POSIX one")
def test_the_wheel_without_extras_brings_no_qt_and_runs(wheel: Path, deps: Path, tmp_path: Path) -> None:
    assert all("extra ==" in r for r in _core_requirements(wheel) if re.match(r"(PySide6|shiboken6|numpy|bm25s)", r))
    bin_ = _venv(tmp_path / "core", deps, with_pip=False)
    env = _env()
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_ / "python"), "install", "--no-index",
                        "-q", str(wheel)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for module in ("PySide6", "shiboken6", "numpy", "bm25s"):
        probe = subprocess.run([str(bin_ / "python"), "-c", f"import {module}"], capture_output=True, env=env)
        assert probe.returncode != 0, f"{module} is importable in the core environment"
    cwd = tmp_path  # not the checkout: the installed package must find its own data
    d = subprocess.run([str(bin_ / "gpusetup"), "diagnose", "--json"], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=300)
    assert d.returncode in (0, 1, 2), d.stderr
    assert '"schema_version"' in d.stdout
    p = subprocess.run([str(bin_ / "gpusetup"), "plan", "--offline"], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=300)
    assert p.returncode in (0, 1) and "Compatibility data" in p.stdout, p.stderr
    g = subprocess.run([str(bin_ / "gpusetup"), "gui"], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=300)
    assert g.returncode == 3 and "gpusetup[gui]" in g.stderr
    err = tmp_path / "error.txt"  # a real flash-attn import error (https://github.com/Dao-AILab/flash-attention/issues/931)
    err.write_text("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n",
                   encoding="utf-8")
    a = subprocess.run([str(bin_ / "gpusetup"), "analyze", "--json", str(err)], capture_output=True, text=True,
                       env=env, cwd=cwd, timeout=300)
    assert a.returncode in (0, 1, 2) and "gpusetup[analyze]" in a.stdout, a.stdout + a.stderr
    assert "extension-abi" in a.stdout or "torch" in a.stdout  # the rule finding is there without the search


@pytest.mark.skipif(sys.platform == "win32", reason="the image's steps are Linux commands")
def test_the_diagnose_image_runs_from_its_own_install_steps(wheel: Path, deps: Path, tmp_path: Path) -> None:
    """The generated diagnose/Dockerfile's RUN steps, in a clean venv instead of /opt/gpusetup, then the
    command the DaemonSet runs: ``gpusetup diagnose`` writing Prometheus metrics."""
    setup = generate_setup(HOSTS["rtx3080-595"].machine(), "pytorch", tmp_path / "setup", generated_on="2026-11-22")
    text = (tmp_path / "setup" / "diagnose" / "Dockerfile").read_text()
    run = re.search(r"^RUN python3 -m venv /opt/gpusetup.*?(?<!\\)$", text, re.M | re.S)
    assert setup.ok and run, text
    steps = [s.strip() for s in run.group(0).removeprefix("RUN ").replace("\\\n", " ").split("&&")]
    assert steps[0] == "python3 -m venv /opt/gpusetup"
    assert not any("--no-deps" in s for s in steps)  # the wheel's own dependencies, no hand-kept list
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    os.symlink(wheel, wheels / wheel.name)
    prefix = tmp_path / "opt-gpusetup"
    bin_ = _venv(prefix, deps, with_pip=True)  # step 1, as the Dockerfile does it (with pip)
    env = _env()
    for step in steps[1:]:
        cmd = step.replace("/opt/gpusetup", str(prefix)).replace("/tmp/wheels", str(wheels))
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, f"{cmd}\n{r.stdout}{r.stderr}"
    d = subprocess.run([str(bin_ / "gpusetup"), "diagnose", "--format", "prometheus"], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert d.returncode in (0, 1, 2), d.stderr
    from prometheus_client.parser import text_string_to_metric_families

    names = {fam.name for fam in text_string_to_metric_families(d.stdout)}
    assert {"gpusetup_build_info", "gpusetup_last_run_timestamp_seconds", "gpusetup_worst_severity"} <= names


def test_the_package_list_in_pyproject_names_every_package() -> None:
    """pyproject.toml lists the packages explicitly (so resources/ and installers/ ride along in the wheel):
    a new sub-package must be added there."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.relative_to(ROOT).parent.parts) for p in (ROOT / "gpusetup").rglob("__init__.py")}
    assert found <= listed, found - listed
