"""A Python for the plan: found on the machine (never the packaged app itself), or provided by uv, or a clear
message. Real interpreters, real venvs, a real uv binary; the download host is a closed local port."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from gpusetup.install import PlanError, build_plan, execute
from gpusetup.install import python as pyfind
from gpusetup.messages import render
from gpusetup.probe.platform import linux

from .stand_ins import PLENTY, installed, machine, torch_plan, uv_wheel

MINOR = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture
def packaged(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Behave as the frozen app on a machine whose only Python is what the test puts into ``bin``."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(linux, "PYTHON_DIRS", ())
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "no-uv-pythons"))
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "gpusetup-home"))
    monkeypatch.setenv("GPUSETUP_UV", str(tmp_path / "no-uv"))
    return bindir


def test_the_packaged_app_never_uses_itself_as_python(packaged: Path) -> None:
    assert pyfind.own_interpreter() is None
    assert all(argv[0] != sys.executable for argv, _ in pyfind.candidates(None))


def test_a_python_on_path_is_found_and_run_once_to_learn_its_version(packaged: Path) -> None:
    (packaged / f"python{MINOR}").symlink_to(sys.executable)
    found = pyfind.find_interpreter(MINOR)
    assert found is not None and found.minor == MINOR and found.venv and found.source == "PATH"
    assert pyfind.find_interpreter("3.1") is None  # no such version anywhere here


@pytest.mark.network
def test_packaged_app_installs_with_the_python_it_found(index, packaged: Path, tmp_path: Path) -> None:
    (packaged / f"python{MINOR}").symlink_to(sys.executable)
    fps = torch_plan(f"{index.url}/whl/cu126")
    fps[0].choice.python = MINOR
    plan = build_plan(fps, machine(), f"venv:{tmp_path / 'env'}")
    create = plan.steps[0]
    assert create.id == "create-venv" and create.argv[0] == str(packaged / f"python{MINOR}")
    assert plan.pip == [str(tmp_path / "env" / "bin" / "python"), "-m", "pip"]  # never the app's own pip
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY)
    assert res.ok, res.message
    assert installed(tmp_path / "env")["torch"] == "2.9.1+cu126"


def test_no_python_no_uv_and_no_index_says_what_to_do(packaged: Path, tmp_path: Path) -> None:
    """A wheelhouse install has no package index to fetch uv from: the plan stops before any change."""
    (tmp_path / "wheels").mkdir()
    fps = torch_plan("http://127.0.0.1:9/whl/cu126")
    fps[0].choice.python = "3.12"
    with pytest.raises(PlanError) as err:
        build_plan(fps, machine(), f"venv:{tmp_path / 'env'}", wheelhouse=tmp_path / "wheels")
    text = str(err.value)
    assert "gpusetup needs Python 3.12" in text and "pip install uv" in text
    assert err.value.message.code == "plan-error.no-python"


@pytest.fixture
def uv_on_index(index) -> Path:
    """The stand-in index also serves uv (as PyPI does), with its sha256 on the project page."""
    if importlib.util.find_spec("uv") is None:
        pytest.skip("uv is not installed here (pip install uv)")
    have = [w for w in index.layouts["simple"] if w.name.startswith("uv-")]
    if not have:
        have = [uv_wheel(index.root)]
        index.layouts["simple"].append(have[0])
    return have[0]


def test_uv_wheel_is_picked_for_this_computer_from_a_real_project_page(index, uv_on_index: Path) -> None:
    from gpusetup.install import uvfetch

    link = uvfetch.find_wheel(f"{index.url}/simple")
    assert link.filename == uv_on_index.name and link.sha256 and len(link.sha256) == 64
    assert link.url == f"{index.url}/files/{uv_on_index.name}"
    others = [("uv-0.7.0-py3-none-manylinux_2_17_x86_64.whl", "u1", "a" * 64),  # below the minimum
              ("uv-99.0.0rc1-py3-none-any.whl", "u2", "b" * 64),  # a pre-release
              ("uv-0.13.9-py3-none-win_arm64.whl", "u3", "c" * 64),  # another platform
              (link.filename, link.url, link.sha256)]
    assert uvfetch.pick_wheel(others).filename == link.filename
    # without the release gpusetup is tested with, the newest one (compared as versions: 0.10 > 0.9)
    plat = link.filename.split("-", 2)[2]
    older = [(f"uv-0.9.0-{plat}", "u4", "d" * 64), (f"uv-0.10.0-{plat}", "u5", "e" * 64)]
    assert uvfetch.pick_wheel(older).url == "u5"
    assert uvfetch.pick_wheel(older, preferred="0.9.0").url == "u4"


@pytest.mark.network
def test_a_changed_file_or_an_unreachable_index_is_refused_in_plain_words(
        index, uv_on_index: Path, tmp_path: Path, closed_port: int) -> None:
    from gpusetup.install import uvfetch

    with pytest.raises(uvfetch.FetchError) as err:
        uvfetch.fetch(f"http://127.0.0.1:{closed_port}/simple", tmp_path / "uv")
    assert f"127.0.0.1:{closed_port}/simple/uv/" in str(err.value) and "--index-url" in str(err.value)
    link = uvfetch.find_wheel(f"{index.url}/simple")
    link.sha256 = "0" * 64  # what a tampering mirror would cause: the bytes differ from the listed hash
    with pytest.raises(uvfetch.FetchError) as err:
        uvfetch.download(link, tmp_path, lambda _: None, index.url)
    assert "does not match the sha256" in str(err.value) and not (tmp_path / link.filename).exists()


def _real_uv() -> str | None:
    saved = os.environ.pop("GPUSETUP_UV", None)
    try:
        return pyfind.find_uv()
    finally:
        if saved is not None:
            os.environ["GPUSETUP_UV"] = saved


@pytest.mark.network
def test_uv_provides_python_and_says_clearly_when_it_cannot_download(
        packaged: Path, tmp_path: Path, closed_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    uv = _real_uv()
    if uv is None:
        pytest.skip("uv is not installed here (pip install uv)")
    monkeypatch.setenv("GPUSETUP_UV", uv)
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.setenv("GPUSETUP_PYTHON_MIRROR", f"http://127.0.0.1:{closed_port}/python-builds")
    fps = torch_plan(f"http://127.0.0.1:{closed_port}/whl/cu126")
    fps[0].choice.python = "3.12"
    plan = build_plan(fps, machine(), f"venv:{tmp_path / 'env'}")
    get = plan.steps[0]
    assert [s.id for s in plan.steps[:3]] == ["get-python", "create-venv", "seed-pip"]
    assert get.argv[:4] == [uv, "python", "install", "3.12"]
    assert get.argv[-2:] == ["--mirror", f"http://127.0.0.1:{closed_port}/python-builds"]
    managed = tmp_path / "gpusetup-home" / "data" / "python"
    assert get.env == {"UV_PYTHON_INSTALL_DIR": str(managed)}
    assert any("uv downloads one" in str(n) for n in plan.notes)
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY, check_network=False)
    assert not res.ok and res.failed_step == "get-python"
    assert f"127.0.0.1:{closed_port}/python-builds" in res.message  # uv's own words name the host it tried
    assert "set GPUSETUP_PYTHON_MIRROR" in res.message
    assert not (tmp_path / "env").exists()


def test_an_old_python_that_holds_a_framework_back_is_said_with_the_newer_one() -> None:
    from packaging.version import Version

    from gpusetup.compat.resolver import resolve
    from gpusetup.gui.demo import demo_machine
    from gpusetup.install.python import newer_python_offer
    from gpusetup.messages import render

    m = demo_machine("rtx3060")
    old = resolve(m, ["pytorch"], python_version="3.9")
    offer = newer_python_offer(m, old, "3.9")
    assert offer is not None and offer.code == "install.note.newer-python"
    p = offer.params
    assert p["have"] == old[0].choice.version and tuple(map(int, p["python"].split("."))) > (3, 9)
    newer = resolve(m, ["pytorch"], python_version=p["python"])[0].choice.version
    assert p["newer"] == newer and Version(newer) > Version(p["have"])
    assert f"gpusetup install --python {p['python']}" in render(offer, "en")
    assert p["newer"] in render(offer, "zh_CN")
    best = resolve(m, ["pytorch"], python_version=p["python"])
    assert newer_python_offer(m, best, p["python"]) is None, "nothing to offer when this Python gets the newest"


def _standalone_build(dest: Path) -> tuple[Path, str]:
    """A python-build-standalone-shaped archive (``python/bin``, ``python/lib``) of the running interpreter's
    own installation, under a made-up patch release X.Y.99, and the minor version it provides."""
    import shutil
    import sysconfig
    import tarfile

    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    base = Path(sys.base_prefix)
    stdlib = Path(sysconfig.get_paths(vars={"base": sys.base_prefix, "installed_base": sys.base_prefix})["stdlib"])
    if not (stdlib / "ensurepip").is_dir() or stdlib.parent.parent != base:
        pytest.skip("this Python's installation cannot stand in for a standalone build (no ensurepip, or split)")
    root = dest / "python"
    (root / "bin").mkdir(parents=True)
    exe = Path(sys.executable).resolve()
    shutil.copy2(exe, root / "bin" / f"python{minor}")
    for alias in ("python3", "python"):
        (root / "bin" / alias).symlink_to(f"python{minor}")
    shutil.copytree(stdlib, root / "lib" / f"python{minor}", symlinks=True,
                    ignore=shutil.ignore_patterns("test", "site-packages", "__pycache__", "idlelib", "tkinter"))
    for link in [q for q in root.rglob("*") if q.is_symlink()]:
        # Debian links e.g. sitecustomize.py to /etc/python3.X/; uv (rightly) refuses absolute links in an archive
        if Path(os.readlink(link)).is_absolute():
            target = link.resolve()
            link.unlink()
            if target.is_file():
                shutil.copy2(target, link)
    (root / "lib" / f"python{minor}" / "site-packages").mkdir()
    for lib in (base / "lib").glob("libpython*.so*"):
        shutil.copy2(lib, root / "lib" / lib.name, follow_symlinks=True)
    archive = dest / f"cpython-{minor}.99-stand-in.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="python")
    return archive, minor


@pytest.mark.network
def test_uv_downloads_and_installs_a_python_from_a_local_stand_in(
        index, uv_on_index: Path, packaged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The download path for real, as the packaged app (which carries no uv) takes it: uv is fetched from the
    package index and checked against its sha256, then fetches a Python build over HTTP from 127.0.0.1
    (described by a downloads list in uv's format), installs it into gpusetup's per-user folder, creates the
    environment with it, and the framework is installed and checked there."""
    import hashlib
    import json
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    builds = tmp_path / "builds"
    builds.mkdir()
    archive, minor = _standalone_build(builds)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(builds)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        major, mnr = (int(x) for x in minor.split("."))
        (builds / "downloads.json").write_text(json.dumps({f"cpython-{minor}.99-linux-x86_64-gnu": {
            "name": "cpython", "arch": {"family": "x86_64", "variant": None}, "os": "linux", "libc": "gnu",
            "major": major, "minor": mnr, "patch": 99, "prerelease": "", "url": f"{url}/{archive.name}",
            "sha256": hashlib.sha256(archive.read_bytes()).hexdigest(), "variant": None, "build": "20261110"}}))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS_JSON_URL", f"{url}/downloads.json")
        fps = torch_plan(f"{index.url}/whl/cu126")
        fps[0].choice.python = minor
        plan = build_plan(fps, machine(), f"venv:{tmp_path / 'env'}", index_url=f"{index.url}/simple")
        assert [s.id for s in plan.steps[:4]] == ["get-uv", "get-python", "create-venv", "seed-pip"]
        fetched = tmp_path / "gpusetup-home" / "data" / "uv" / "uv"
        assert plan.steps[1].argv[0] == str(fetched) and not fetched.exists()
        seen: list[tuple[str, float | None]] = []
        res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY,
                      progress=lambda said, frac: seen.append((render(said), frac)))
        assert res.ok, res.message
    finally:
        server.shutdown()
        server.server_close()
    assert fetched.is_file() and os.access(fetched, os.X_OK)
    # the fetch showed real progress: the wheel's name, bytes and a fraction, read from its pip-style output
    assert any(uv_on_index.name[:20] in label and "MB" in label for label, _ in seen), seen[:20]
    managed = tmp_path / "gpusetup-home" / "data" / "python"
    assert any(p.name.startswith(f"cpython-{minor}.99-") for p in managed.iterdir())
    env_py = tmp_path / "env" / "bin" / "python"
    cfg = (tmp_path / "env" / "pyvenv.cfg").read_text()
    assert str(managed) in cfg, cfg  # the environment runs on the Python uv provided
    assert installed(tmp_path / "env")["torch"] == "2.9.1+cu126" and env_py.is_file()
