"""`gpusetup plan --emit uv|pixi|conda|requirements`, each file consumed by the tool that reads it.

The plan is a real one (the resolver on a machine profile). Stand-in wheels at the exact versions the plan
pins are served from the local index on 127.0.0.1: the framework index (``/whl/<variant>/``, standing in for
download.pytorch.org) has ``torch <version>+<variant>``; the PyPI stand-in (``/whl/pypi/``) has a plain
``torch <version>`` as the wrong build a careless file would pick, plus the PyPI-only packages.

- uv: real ``uv lock`` then ``uv sync --frozen`` (uv from the Python package index, in the test extra).
- requirements: real pip (``pip install --dry-run --report``) on the file; and again with the framework
  index unreachable (a closed port on 127.0.0.1), where pip must fail instead of taking PyPI's build.
- conda: conda itself does not install from the Python package index, so the test parses the YAML and then
  does what conda does with the ``pip:`` section (conda/env/installers/pip.py: the list joined into a
  temporary requirements file, ``pip install -U -r FILE --exists-action=b``), with real pip.
- pixi: pixi is not on the Python package index (the ``pixi`` project there is an unrelated Pixiv tool), so
  the manifest is checked against pixi's own published JSON schema, committed in
  tests/generate/schemas/ (prefix-dev/pixi schema/schema.json at 2b25fc76dd3b5cc50a235387d948474975c40d73,
  pixi v0.77.0).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
import tomllib
import yaml

from gpusetup.cli import main
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.generate.project import EmitError, Target, emit_project
from gpusetup.model import Choice, FrameworkPlan

from .stand_ins import HOST_PIP, Index, _handler, build_wheel

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
RTX3090 = {
    "os": "linux", "arch": "x86_64", "python": PY, "driver": "580.65.06",
    "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6", "pci_id": "10de:2204"}],
}
SCHEMA = Path(__file__).parents[1] / "generate" / "schemas" / "pixi-manifest-v0.77.0.schema.json"


def _pinned(req: str) -> tuple[str, str]:
    """(name, a concrete version satisfying the pin): 'torch==2.15.*' -> ('torch', '2.15.0')."""
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([0-9.]+?)(\.\*)?", req)
    assert m, f"the plan pins {req!r} in a form this test does not know"
    return m.group(1), m.group(2) + (".0" if m.group(3) else "")


def _serve(root: Path) -> Index:
    """The stand-in index, also answering HEAD (uv asks before a ranged metadata read)."""

    idx = Index(root)

    class H(_handler(idx)):  # type: ignore[misc,valid-type]
        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(405)  # no ranged reads here: uv then downloads the whole (small) wheel
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return idx


@pytest.fixture(scope="module")
def plan_and_index(tmp_path_factory: pytest.TempPathFactory):
    index = _serve(tmp_path_factory.mktemp("emit-index"))
    plans = resolve(machine_from_data(RTX3090), ["pytorch", "jax"], python_version=PY)
    torch, jax = plans
    assert torch.ok and torch.choice and torch.choice.index_url and torch.choice.variant.startswith("cu")
    assert jax.ok and jax.choice and jax.choice.index_url is None
    variant = torch.choice.variant
    gpu_wheels, pypi = [], []
    latest = _latest_known(torch.choice.version)  # what a file pins exactly when PyPI is needed too
    for p in plans:
        for req in p.choice.packages:
            name, version = _pinned(req)
            if p.choice.index_url:
                for v in dict.fromkeys([version, latest] if name == "torch" else [version]):
                    gpu_wheels.append(build_wheel(index.root, name, f"{v}+{variant}", requires=("tinydep>=1.0",)))
                    pypi.append(build_wheel(index.root, name, v, requires=("tinydep>=1.0",)))  # the wrong build
            else:
                pypi.append(build_wheel(index.root, name, version))
    dep = build_wheel(index.root, "tinydep", "1.0")
    index.layouts[variant] = [*gpu_wheels, dep]
    index.layouts["pypi"] = [*pypi, dep]
    yield plans, variant, index
    assert index.server is not None
    index.server.shutdown()
    index.server.server_close()


def _latest_known(minor: str) -> str:
    from gpusetup.compat.db import get_db

    return next(str(r["latest_known"]) for r in get_db().rows("pytorch", "releases") if r["version"] == minor)


def _closed_port_url() -> str:
    """An http://127.0.0.1 address where nothing listens: the framework index when it cannot be reached."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _pip_fails(req_file: Path, tmp: Path, extra: tuple[str, ...] = ()) -> str:
    """Run real pip on the file and return its error output; fail the test if pip succeeded."""
    r = subprocess.run([*HOST_PIP, "install", "--dry-run", "--ignore-installed", "--retries", "0", "--timeout", "5",
                        "--report", str(tmp / "r.json"), *extra, "-r", str(req_file)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode != 0, f"pip installed something with the framework index unreachable:\n{r.stdout}"
    return r.stderr


def _emit(plans: list[FrameworkPlan], kind: str, index) -> str:
    target = Target(os="linux", arch="x86_64", python=PY)
    return emit_project(plans, target, kind, index_url=f"{index.url}/whl/pypi/",
                        pytorch_mirror=f"{index.url}/whl").text


def _pip_report(req_file: Path, tmp: Path, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """What real pip would install for a requirements file: {name: (version, url)}."""
    report = tmp / "report.json"
    subprocess.run([*HOST_PIP, "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
                    *extra, "-r", str(req_file)], check=True, capture_output=True, text=True, timeout=120)
    items = json.loads(report.read_text())["install"]
    return {i["metadata"]["name"]: (i["metadata"]["version"], unquote(i["download_info"]["url"])) for i in items}


def test_requirements_file_gets_the_gpu_build_with_real_pip(plan_and_index, tmp_path: Path) -> None:
    plans, variant, index = plan_and_index
    text = _emit(plans, "requirements", index)  # torch (PyTorch index) and jax (PyPI): both indexes needed
    latest = _latest_known(plans[0].choice.version)
    assert f"--index-url {index.url}/whl/pypi/" in text and f"--extra-index-url {index.url}/whl/{variant}" in text
    assert f"\ntorch=={latest}+{variant}\n" in text  # the exact build: no PyPI wheel has this version
    f = tmp_path / "requirements.txt"
    f.write_text(text)
    got = _pip_report(f, tmp_path)
    version, url = got["torch"]
    assert version == f"{latest}+{variant}" and f"+{variant}" in url
    assert got["jax"][0] == _pinned(plans[1].choice.packages[0])[1]


def test_requirements_files_fail_loudly_when_the_framework_index_is_unreachable(plan_and_index, tmp_path: Path) -> None:
    """Issue 24: with ``--extra-index-url`` and ``torch==2.x.*``, pip took PyPI's torch (a CUDA 13 build on Linux, the
    CPU build on Windows) whenever the PyTorch index was slow or down, and reported success."""
    plans, variant, index = plan_and_index
    dead = _closed_port_url()
    target = Target(os="linux", arch="x86_64", python=PY)
    for chosen in (plans, plans[:1]):  # torch and jax (PyPI needed too), torch alone (the PyTorch index only)
        text = emit_project(chosen, target, "requirements", index_url=f"{index.url}/whl/pypi/",
                            pytorch_mirror=f"{dead}/whl").text
        assert f"{dead}/whl/{variant}" in text
        f = tmp_path / "requirements.txt"
        f.write_text(text)
        _pip_fails(f, tmp_path)
        conda = yaml.safe_load(emit_project(chosen, target, "conda", index_url=f"{index.url}/whl/pypi/",
                                            pytorch_mirror=f"{dead}/whl").text)
        specs = next(d["pip"] for d in conda["dependencies"] if isinstance(d, dict))
        f.write_text("\n".join(specs))
        _pip_fails(f, tmp_path, ("-U", "--exists-action=b"))
    # The control: the file gpusetup wrote before (framework index as an extra index, a wildcard pin) installs
    # PyPI's plain build with the same index unreachable, and pip calls that a success.
    old = [f"--index-url {index.url}/whl/pypi/", f"--extra-index-url {dead}/whl/{variant}", *plans[0].choice.packages]
    f.write_text("\n".join(old) + "\n")
    got = _pip_report(f, tmp_path, ("--retries", "0", "--timeout", "5"))
    assert "+" not in got["torch"][0]


def test_requirements_with_only_the_framework_index_installs_with_real_pip(plan_and_index, tmp_path: Path) -> None:
    plans, variant, index = plan_and_index
    text = _emit(plans[:1], "requirements", index)
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines[0] == f"--index-url {index.url}/whl/{variant}" and not any("extra-index" in x for x in lines)
    f = tmp_path / "requirements.txt"
    f.write_text(text)
    got = _pip_report(f, tmp_path)
    assert got["torch"][0].endswith(f"+{variant}") and "tinydep" in got  # dependencies from the same index


def test_conda_environment_file_as_conda_reads_it(plan_and_index, tmp_path: Path) -> None:
    plans, variant, index = plan_and_index
    env = yaml.safe_load(_emit(plans, "conda", index))
    assert env["name"] == "gpu-project" and env["channels"][0] == "conda-forge"
    deps = env["dependencies"]
    assert f"python={PY}" in deps and "pip" in deps
    specs = next(d["pip"] for d in deps if isinstance(d, dict))
    # conda/env/installers/pip.py: the pip list, joined by newlines, as a temporary requirements file.
    req = tmp_path / "condaenv.x.requirements.txt"
    req.write_text("\n".join(specs))
    got = _pip_report(req, tmp_path, ("-U", "--exists-action=b"))
    assert got["torch"][0].endswith(f"+{variant}")


def test_uv_project_locks_and_syncs_the_gpu_build_with_real_uv(plan_and_index, tmp_path: Path) -> None:
    from uv import find_uv_bin

    plans, variant, index = plan_and_index
    text = _emit(plans, "uv", index)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(text)
    doc = tomllib.loads(text)
    gpu_index = next(i for i in doc["tool"]["uv"]["index"] if i.get("explicit"))
    assert gpu_index["url"] == f"{index.url}/whl/{variant}"
    assert doc["tool"]["uv"]["sources"]["torch"] == {"index": gpu_index["name"]}
    # Not UV_NO_CONFIG: that also drops the [tool.uv] settings of the project itself. The fixture's
    # XDG_CONFIG_HOME / XDG_CONFIG_DIRS already point away from the user's and the system's uv.toml.
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_PYTHON_DOWNLOADS": "never"}
    for k in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL", "VIRTUAL_ENV"):
        env.pop(k, None)
    uv = find_uv_bin()
    r = subprocess.run([uv, "lock", "--python", sys.executable], cwd=proj, env=env, capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    lock = tomllib.loads((proj / "uv.lock").read_text())
    torch = next(p for p in lock["package"] if p["name"] == "torch")
    assert torch["version"].endswith(f"+{variant}")
    assert torch["source"] == {"registry": f"{index.url}/whl/{variant}"}
    r = subprocess.run([uv, "sync", "--frozen", "--python", sys.executable], cwd=proj, env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(proj / ".venv" / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip().endswith(f"+{variant}")


def test_pixi_manifest_matches_pixis_published_schema(plan_and_index) -> None:
    plans, variant, index = plan_and_index
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    text = _emit(plans, "pixi", index)
    doc = tomllib.loads(text)
    jsonschema.validate(doc, schema)
    assert doc["workspace"]["platforms"] == ["linux-64"]  # no driver known to the emitter: no __cuda claimed
    assert "system-requirements" not in doc
    assert doc["pypi-dependencies"]["torch"]["index"] == f"{index.url}/whl/{variant}"
    assert doc["pypi-dependencies"]["jax"]["extras"] == [plans[1].choice.variant]
    assert doc["pypi-options"]["index-url"] == f"{index.url}/whl/pypi/"
    # With the driver known, the platform carries its CUDA in the per-platform form of pixi 0.71+ (the
    # [system-requirements] table is deprecated there), and that form is valid too.
    target = Target(os="linux", arch="x86_64", python=PY, driver="550.54.14", driver_cuda="12.4")
    text = emit_project(plans, target, "pixi", pytorch_mirror=f"{index.url}/whl").text
    doc = tomllib.loads(text)
    jsonschema.validate(doc, schema)
    assert doc["workspace"]["platforms"] == [{"platform": "linux-64", "cuda": "12.4"}]
    assert "the NVIDIA driver 550.54.14 provides" in text
    # The schema is not vacuous: pixi's own names matter (a misspelt table is refused).
    doc["pypi-dependency"] = doc.pop("pypi-dependencies")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


@pytest.mark.parametrize(("name", "cc", "pci", "driver", "provides"), [
    ("NVIDIA GeForce RTX 3090", "8.6", "10de:2204", "550.54.14", "12.4"),  # issue 24: was 12.6 (the wheel's)
    ("Tesla T4", "7.5", "10de:1eb8", "470.82.01", "11.4"),                 # was 11.8
    ("NVIDIA H100 80GB HBM3", "9.0", "10de:2330", "580.65.06", "13.0"),    # was 13.2
])
def test_pixi_declares_the_cuda_the_driver_provides(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                     cc: str, pci: str, driver: str, provides: str) -> None:
    """pixi refuses `run`/`shell` when the machine's __cuda is lower than the manifest's: the value is what the
    driver provides (the toolkit → driver table the rest of gpusetup uses), never the wheel's CUDA."""
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": PY, "driver": driver,
                                "gpus": [{"vendor": "nvidia", "name": name, "compute_capability": cc, "pci_id": pci}]}))
    assert main(["plan", "--for", str(prof), "--emit", "pixi", "--offline"]) == 0
    text = capsys.readouterr().out
    doc = tomllib.loads(text)
    assert doc["workspace"]["platforms"] == [{"platform": "linux-64", "cuda": provides}]
    assert f"driver {driver} provides" in text and "works on this machine now" in text


def test_not_ok_plan_writes_the_gpu_build_and_says_what_first() -> None:
    fp = FrameworkPlan(framework="pytorch", ok=False,
                       choice=Choice(version="2.15", variant="cpu", index_url="https://download.pytorch.org/whl/cpu",
                                     packages=["torch==2.15.*"]),
                       gpu_choice=Choice(version="2.15", variant="cu130",
                                         index_url="https://download.pytorch.org/whl/cu130", packages=["torch==2.15.*"]))
    from gpusetup.model import Action

    fp.actions = [Action(kind="upgrade-driver", why="too old", min_version="580.65.06")]
    out = emit_project([fp], Target(os="windows", arch="AMD64", python="3.12"), "uv")
    assert "upgrade the NVIDIA driver (at least 580.65.06)" in out.text
    assert "https://download.pytorch.org/whl/cu130" in out.text and "whl/cpu" not in out.text
    assert "sys_platform == 'win32' and platform_machine == 'AMD64'" in out.text
    win = Target(os="windows", arch="AMD64", python="3.12", driver="560.94", driver_cuda="12.6")
    pixi = tomllib.loads(emit_project([fp], win, "pixi").text)
    # what the driver provides now (pixi's __cuda), not the wheel's 13.0: pixi refuses to run below it
    assert pixi["workspace"]["platforms"] == [{"platform": "win-64", "cuda": "12.6"}]
    with pytest.raises(EmitError):
        emit_project([FrameworkPlan(framework="jax", ok=False)], Target("linux", "x86_64", "3.12"), "uv")


def test_cli_writes_file_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RTX3090))
    out = tmp_path / "requirements.txt"
    assert main(["plan", "--for", str(prof), "--emit", "requirements", "-o", str(out)]) == 0
    assert "--index-url https://download.pytorch.org/whl/cu" in out.read_text()
    capsys.readouterr()
    assert main(["plan", "--for", str(prof), "--emit", "requirements", "-o", str(out)]) == 3
    assert "already exists" in capsys.readouterr().err
    assert main(["plan", "--for", str(prof), "--emit", "uv"]) == 0
    assert "[tool.uv.sources]" in capsys.readouterr().out
    assert main(["plan", "--for", str(prof), "--emit", "uv", "--json"]) == 3


def test_mirror_logins_never_reach_the_file() -> None:
    fp = FrameworkPlan(framework="pytorch", ok=True,
                       choice=Choice(version="2.15", variant="cu130", index_url="https://download.pytorch.org/whl/cu130",
                                     packages=["torch==2.15.*"]))
    for kind in ("uv", "pixi", "conda", "requirements"):
        out = emit_project([fp], Target("linux", "x86_64", "3.12"), kind,
                           index_url="https://bob:s3cr3t@pypi.mirror.example:8443/simple",
                           pytorch_mirror="https://bob:s3cr3t@torch.mirror.example/whl").text
        assert "s3cr3t" not in out and "bob" not in out, kind
        assert "https://pypi.mirror.example:8443/simple" in out and "https://torch.mirror.example/whl/cu130" in out
        assert "needs a login" in out


# Stand-in facts for the Triton test below. What is real: uv's PyTorch guide routes these packages to the
# PyTorch index (astral-sh/uv docs/guides/integration/pytorch.md at 26a9dd4b, 2026-08-21), and PyPI's newest
# uploads under those names are pytorch-triton-rocm 2.1.0, triton-rocm 3.0.0rc1 and triton-xpu 3.3.0b1
# (https://pypi.org/pypi/<name>/json, read 2026-11-27). What is a stand-in: the torch wheels' pinned Triton
# version (3.4.0 here) — download.pytorch.org cannot be reached from here to read a real wheel's METADATA;
# the form (an exact pin for Linux) is what uv's guide describes torch depending on.
_TRITON = {
    "rocm6.4": {"pins": ['pytorch-triton-rocm==3.4.0; platform_system == "Linux"'],
                "pytorch": [("pytorch_triton_rocm", "3.4.0"), ("triton_rocm", "3.4.0")],
                "pypi": [("pytorch_triton_rocm", "2.1.0"), ("triton_rocm", "3.0.0rc1")]},
    "xpu": {"pins": ['triton-xpu==3.4.0; platform_system == "Linux"'],
            "pytorch": [("triton_xpu", "3.4.0")],
            "pypi": [("triton_xpu", "3.3.0b1")]},
}


@pytest.mark.parametrize("variant", sorted(_TRITON))
def test_uv_locks_rocm_and_xpu_builds_with_their_triton_from_the_pytorch_index(tmp_path: Path, variant: str) -> None:
    """Issue 24: the ROCm/XPU files did not route Triton, so `uv lock` looked for torch's pinned Triton on PyPI
    and said the requirements are unsatisfiable."""
    from uv import find_uv_bin

    facts = _TRITON[variant]
    (tmp_path / "index").mkdir()
    index = _serve(tmp_path / "index")
    try:
        root = index.root
        torch = build_wheel(root, "torch", f"2.9.0+{variant}", requires=tuple(facts["pins"]))
        index.layouts[variant] = [torch, *(build_wheel(root, n, v) for n, v in facts["pytorch"])]
        index.layouts["pypi"] = [build_wheel(root, "torch", "2.9.0"), *(build_wheel(root, n, v) for n, v in facts["pypi"])]
        fp = FrameworkPlan(framework="pytorch", ok=True, choice=Choice(
            version="2.9", variant=variant, index_url=f"https://download.pytorch.org/whl/{variant}",
            packages=["torch==2.9.*"]))
        text = emit_project([fp], Target(os="linux", arch="x86_64", python=PY), "uv",
                            index_url=f"{index.url}/whl/pypi/", pytorch_mirror=f"{index.url}/whl").text
        doc = tomllib.loads(text)
        routed = {n.replace("_", "-") for n, _ in facts["pytorch"]}
        assert routed <= set(doc["tool"]["uv"]["sources"])
        env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_PYTHON_DOWNLOADS": "never"}
        for k in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL", "VIRTUAL_ENV"):
            env.pop(k, None)

        def lock(project_text: str, name: str) -> subprocess.CompletedProcess[str]:
            proj = tmp_path / name
            proj.mkdir()
            (proj / "pyproject.toml").write_text(project_text)
            return subprocess.run([find_uv_bin(), "lock", "--python", sys.executable], cwd=proj, env=env,
                                  capture_output=True, text=True, timeout=180)

        r = lock(text, "routed")
        assert r.returncode == 0, r.stderr
        packages = {p["name"]: p for p in tomllib.loads((tmp_path / "routed" / "uv.lock").read_text())["package"]}
        assert packages["torch"]["version"] == f"2.9.0+{variant}"
        for name in routed:
            assert packages[name]["source"] == {"registry": f"{index.url}/whl/{variant}"}, name
        # The control: the same file without the Triton routing (what gpusetup wrote before) does not lock.
        for name in routed:
            del doc["tool"]["uv"]["sources"][name]
        doc["project"]["dependencies"] = [d for d in doc["project"]["dependencies"]
                                          if d.split(" ")[0] not in routed]
        import tomli_w

        r = lock(tomli_w.dumps(doc), "unrouted")
        assert r.returncode != 0 and "unsatisfiable" in r.stderr.lower(), r.stderr
    finally:
        assert index.server is not None
        index.server.shutdown()
        index.server.server_close()
