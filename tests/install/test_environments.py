"""Which Python environment the proof can run in: the core's verdict on a picked path (not found, no Python
inside, not a Python, too old, no framework, ready) and the list of environments found on this computer.
Real venvs made here; the framework in them is a stand-in wheel (real dist-info, installed by real pip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup.install import environments
from gpusetup.probe import ProbeContext, pyenv

from .stand_ins import build_wheel


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(home, a venv with torch 2.9.1+cpu, a venv with nothing), the venvs under home/.virtualenvs."""
    home = tmp_path_factory.mktemp("home")
    wheels = tmp_path_factory.mktemp("wheels")
    build_wheel(wheels, "torch", "2.9.1+cpu")
    with_torch, empty = home / ".virtualenvs" / "torch-cpu", home / ".virtualenvs" / "empty"
    for v in (with_torch, empty):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(v)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(with_torch / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-index", "--find-links", str(wheels), "torch==2.9.1+cpu"],
                   check=True, timeout=300)
    return home, with_torch, empty


def test_a_venv_with_a_framework_is_ready_by_folder_or_program(venvs) -> None:
    _, with_torch, _ = venvs
    for given in (str(with_torch), str(with_torch / "bin" / "python")):
        c = environments.check(given)
        assert c.ok and c.python == str(with_torch / "bin" / "python") and c.kind == "venv", c
        assert c.found == {"torch": "2.9.1+cpu"} and c.frameworks == ["torch"]
        assert c.version == sys.version.split()[0]
        assert (c.message.code, c.message.params["found"]) == ("envcheck.ready", "torch 2.9.1+cpu")


def test_why_an_environment_cannot_be_used(venvs, tmp_path: Path) -> None:
    home, _, empty = venvs
    c = environments.check(str(empty))
    assert not c.ok and c.message.code == "envcheck.no-framework" and c.python == str(empty / "bin" / "python")
    assert c.message.params["wanted"] == "torch, tensorflow, jax" and c.short.code == "envcheck.short.no-framework"
    assert environments.check(str(tmp_path / "nowhere")).message.code == "envcheck.not-found"
    assert environments.check("  ").message.code == "envcheck.not-found"
    assert environments.check(str(home)).message.code == "envcheck.no-python-inside"
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    assert environments.check(str(text)).message.code == "envcheck.not-a-python"
    text.chmod(0o755)  # runs, but is not a Python
    c = environments.check(str(text))
    assert c.message.code == "envcheck.not-a-python" and c.python is None


def test_a_python_older_than_the_check_supports(tmp_path: Path) -> None:
    """A stand-in interpreter (no Python 3.7 is installed on the machines the tests run on): a script that
    answers gpusetup's question about sys.path the way Python 3.7.9 in a venv would."""
    env = tmp_path / "old"
    (env / "bin").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.7.9\n")
    py = env / "bin" / "python"
    answer = json.dumps({"executable": str(py), "version": "3.7.9", "prefix": str(env), "base_prefix": "/usr",
                         "path": []})
    py.write_text(f"#!/bin/sh\necho '{answer}'\n")
    py.chmod(0o755)
    c = environments.check(str(env))
    assert not c.ok and c.message.code == "envcheck.too-old", c
    assert c.message.params == {"python": str(py), "version": "3.7.9", "need": "3.8"}
    assert c.short.params == {"need": "3.8"}


def test_the_list_has_the_installed_one_first_then_what_is_found(venvs) -> None:
    home, with_torch, empty = venvs
    env = {**os.environ, "HOME": str(home)}
    listed = environments.known(None, [str(empty)], env=env)
    paths = [c.path for c in listed]
    assert str(with_torch) in paths and str(empty) in paths
    assert listed[0].path == str(with_torch), "usable ones first"
    ready = [c for c in listed if c.ok]
    assert all(c.found for c in ready) and [c for c in listed if not c.ok][0].path == str(empty)
    assert len({os.path.abspath(c.python or "") for c in listed if c.kind == "venv"}) == \
        len([c for c in listed if c.kind == "venv"]), "each environment once"


def test_a_venv_of_this_same_python_is_read_as_itself_not_as_this_environment(venvs) -> None:
    """A venv's python links to its base interpreter, so it is the same *file* as this test's own venv's
    python: it must still be asked for its own sys.path (before: this environment's was reported)."""
    _, with_torch, _ = venvs
    py = with_torch / "bin" / "python"
    info = pyenv.python_info(ProbeContext(python=str(py)))
    assert info.prefix == str(with_torch) and info.is_venv
    assert any(d.startswith(str(with_torch)) for d in info.site_dirs), info.site_dirs
    assert not pyenv.is_current(ProbeContext(python=str(py)))
    assert pyenv.is_current(ProbeContext(python=sys.executable))


def test_the_cli_takes_an_environment_folder_for_python(venvs, tmp_path: Path) -> None:
    """`gpusetup selftest --python FOLDER` checks the environment in that folder (its bin/python)."""
    import argparse

    from gpusetup.commands import python_executable

    home, with_torch, _ = venvs
    assert python_executable(str(with_torch)) == str(with_torch / "bin" / "python")
    with pytest.raises(argparse.ArgumentTypeError, match="is a folder without a Python environment in it"):
        python_executable(str(home))
    out = subprocess.run([sys.executable, "-m", "gpusetup", "selftest", "--json", "--python", str(with_torch),
                          "--framework", "torch"], capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout)
    st = report["selftest"]
    assert st["framework_python"] == str(with_torch / "bin" / "python"), out.stderr[-1500:]
    assert any(n.startswith(f"Frameworks checked with {with_torch / 'bin' / 'python'} (Python ") for n in st["notes"])


def _journal(folder: Path, target: str, python: list[str], packages: list[str], *events: str) -> None:
    from gpusetup.install.journal import Journal

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.json").write_text(json.dumps({"target": target, "python": python, "packages": packages,
                                                  "steps": []}))
    for e in events:
        Journal(folder).append(e)


def test_the_environments_the_installer_made_come_from_its_journal(venvs, tmp_path: Path) -> None:
    """Newest first: the current install (even unfinished: the proof says whether it works), then the history;
    an install that was rolled back, or whose environment is gone, is not offered."""
    _, with_torch, empty = venvs
    jdir = tmp_path / "install"
    _journal(jdir, f"venv:{with_torch}", [str(with_torch / "bin" / "python")],
             ["torch==2.9.*", "torchvision==0.24.*", "jax[cuda12]==0.7.2"], "plan", "start")
    _journal(jdir / "history" / "20261120T100000", f"venv:{empty}", [], ["tensorflow[and-cuda]==2.20.*"],
             "plan", "finished")
    _journal(jdir / "history" / "20261121T100000", f"venv:{tmp_path / 'gone'}", [], ["jax==0.7.2"], "plan", "finished")
    _journal(jdir / "history" / "20261122T090000", f"venv:{empty}", [], ["jax==0.7.2"], "plan", "rolled-back")
    made = environments.from_journal(jdir)
    assert [(m.folder, m.status, m.frameworks) for m in made] == [
        (str(with_torch), "unfinished", ["pytorch", "jax"]),
        (str(empty), "finished", ["tensorflow"]),
    ]
    assert made[0].python == str(with_torch / "bin" / "python")
    assert made[1].python == str(empty / "bin" / "python"), "found in the folder when the plan names no python"
    assert environments.from_journal(tmp_path / "nothing") == []


def _stand_in_conda(bindir: Path, envs: list[str]) -> Path:
    """A stand-in for `conda env list --json`: no conda here. The shape is conda's own ({"envs": [folders], the
    base environment first}); the folders are this test's."""
    bindir.mkdir(parents=True, exist_ok=True)
    conda = bindir / "conda"
    conda.write_text(f"#!{sys.executable}\nimport json, sys\n"
                     f"assert sys.argv[1:] == ['env', 'list', '--json'], sys.argv\n"
                     f"print(json.dumps({{'envs': {envs!r}}}))\n")
    conda.chmod(0o755)
    return conda


def test_a_conda_environment_named_in_the_plan_is_proven_after_a_restart(venvs, tmp_path: Path) -> None:
    """An install into `conda:NAME` saves only the name (the plan runs `conda run -n NAME python`). After a restart
    the proof must still run there, not in gpusetup's own environment: the folder comes from conda (closing note of
    issue 21 left this out: "conda targets are not re-proven after a restart")."""
    _, with_torch, _ = venvs
    base = tmp_path / "miniforge3"
    (base / "envs").mkdir(parents=True)
    (base / "envs" / "gpu").symlink_to(with_torch, target_is_directory=True)
    conda = _stand_in_conda(tmp_path / "bin", [str(base), str(base / "envs" / "gpu")])
    jdir = tmp_path / "install"
    _journal(jdir, "conda:gpu", ["conda", "run", "--no-capture-output", "-n", "gpu", "python"],
             ["torch==2.9.*"], "plan", "finished")
    _journal(jdir / "history" / "20261120T100000", "conda:removed-since", ["conda", "run", "-n", "removed-since", "python"],
             ["jax==0.7.2"], "plan", "finished")
    made = environments.from_journal(jdir, env={"CONDA_EXE": str(conda), "PATH": ""})
    assert [(m.target, m.python, m.frameworks) for m in made] == [
        ("conda:gpu", str(base / "envs" / "gpu" / "bin" / "python"), ["pytorch"])], "a removed environment is left out"
    checked = environments.check(made[0].python)
    assert checked.ok and checked.found == {"torch": "2.9.1+cpu"}, "the proof can run there"
    # no conda on this computer: nothing to prove there, and no error
    assert environments.from_journal(jdir, env={"PATH": str(tmp_path / "empty")}) == []
    # in a conda installation's usual folder it is found without running conda at all
    home = tmp_path / "home"
    (home / "miniconda3" / "envs").mkdir(parents=True)
    (home / "miniconda3" / "envs" / "gpu").symlink_to(with_torch, target_is_directory=True)
    found = environments.from_journal(jdir, env={"HOME": str(home), "CONDA_EXE": str(tmp_path / "no" / "bin" / "conda"),
                                                 "PATH": ""})
    assert [m.python for m in found] == [str(home / "miniconda3" / "envs" / "gpu" / "bin" / "python")]
    assert environments.conda_env_folder("base", [str(base), str(base / "envs" / "gpu")]) == str(base)
    assert environments.conda_env_folder("gp", [str(base), str(base / "envs" / "gpu")]) is None


def test_gpusetups_own_environment_is_not_offered_without_a_framework(venvs) -> None:
    """The wizard runs from its own environment (here: the test's), which holds gpusetup, not a framework: it is
    not a default to prove (issue 21: "the default existing environment is gpusetup's own .venv")."""
    home, with_torch, _ = venvs
    listed = environments.known(None, [], env={**os.environ, "HOME": str(home)})
    own = os.path.abspath(sys.prefix)
    assert not [c for c in listed if c.python and os.path.abspath(str(Path(c.python).parent.parent)) == own]
    assert listed[0].path == str(with_torch)


def test_the_packaged_app_is_not_a_python_to_prove(venvs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged app runs an embedded Python, and answers `-c` like one: it must not be listed as "Python"."""
    home, with_torch, _ = venvs
    app = tmp_path / "GPU Setup" / "gpusetup"
    app.parent.mkdir()
    app.symlink_to(with_torch / "bin" / "python")  # an executable that does answer as a Python
    monkeypatch.setattr(sys, "executable", str(app))
    monkeypatch.setattr(environments, "frozen", lambda: True)
    c = environments.check(str(app))
    assert c.message.code == "envcheck.not-a-python" and not c.ok
    assert str(app) not in environments.candidates(None, [str(app)], env={**os.environ, "HOME": str(home)})
    assert environments.own_environment() is None
