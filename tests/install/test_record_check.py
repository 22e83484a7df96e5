"""The file check after an install (gpusetup.install.snippets.CHECK_FILES) finds a missing file on every Python.

From Python 3.12, ``importlib.metadata.Distribution.files`` leaves out the files that no longer exist, so a check
built on it passed an install with a file missing — exactly what it is there to catch. Found in a fresh Ubuntu 24.04
root (Python 3.12.3), where tests/install/test_interrupted.py failed; this machine's CI runs Python 3.11, so the
check also runs here under a stand-in of 3.12's behaviour, and under every other Python 3.8+ this machine has (the
check runs in the environment being installed, whatever its Python)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from other_pythons import other_pythons

from gpusetup.install import snippets
from install.stand_ins import build_wheel

# Python 3.12's Distribution.files, on an older Python (CPython 3.12 Lib/importlib/metadata/__init__.py:
# `skip_missing_files` filters `files` with `path.locate().exists()`)
AS_IN_312 = """\
import importlib.metadata as _md
_files = _md.Distribution.files
_md.Distribution.files = property(
    lambda self: None if _files.fget(self) is None else [p for p in _files.fget(self) if p.locate().exists()])
"""


def _pythons() -> list[tuple[str, str, str]]:
    """(id, interpreter, prelude): this one as it is, this one acting like 3.12, and each other Python 3.8+ this
    machine has."""
    return [("this-python", sys.executable, ""), ("files-as-in-3.12", sys.executable, AS_IN_312),
            *((f"python{version}", exe, "") for version, exe in other_pythons((3, 8)))]


def _install(wheel: Path, env: Path) -> None:
    """Install a pure wheel the way an installer does (unpacked into site-packages, RECORD kept): any Python's
    environment, without that Python's pip (pip no longer runs on the oldest ones)."""
    site = next(env.glob("lib/python3.*/site-packages"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)


PYTHONS = _pythons()


@pytest.mark.parametrize(("python", "prelude"), [(p, pre) for _, p, pre in PYTHONS], ids=[i for i, _, _ in PYTHONS])
def test_a_file_missing_after_the_install_is_found(python: str, prelude: str, tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tinypkg", "1.0", payload=4096)
    env = tmp_path / "env"
    subprocess.run([python, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    py = env / "bin" / "python"
    _install(wheel, env)
    argv = [str(py), "-I", "-c", prelude + snippets.CHECK_FILES, "60", "tinypkg==1.0"]
    fine = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    blob = next(env.glob("lib/python3.*/site-packages/tinypkg/blob.bin"))
    blob.unlink()
    seen = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert seen.returncode == 1, seen.stdout + seen.stderr
    assert "tinypkg 1.0: 1 file(s) missing or different from its RECORD, e.g. missing: tinypkg/blob.bin" in seen.stdout
    assert '"broken": {"tinypkg": "1.0"}' in seen.stdout


@pytest.mark.parametrize("python", [p for _, p, pre in PYTHONS if not pre], ids=[i for i, _, pre in PYTHONS if not pre])
def test_the_other_checks_run_in_any_python_the_environment_has(python: str, tmp_path: Path) -> None:
    """What the installer runs in the target environment after pip — the list of what is installed, the version
    check against the plan, the import in a fresh interpreter — works whatever that environment's Python is."""
    wheel = build_wheel(tmp_path, "tinypkg", "1.0")
    env = tmp_path / "env"
    subprocess.run([python, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    _install(wheel, env)
    py = str(env / "bin" / "python")

    def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([py, "-I", "-c", code, *args], capture_output=True, text=True, timeout=120)

    listed = run(snippets.LIST)
    assert listed.returncode == 0 and json.loads(listed.stdout) == {"tinypkg": "1.0"}, listed.stderr
    assert run(snippets.VERIFY, "tinypkg==1.0").stdout == "Verified: tinypkg 1.0\n"
    wrong = run(snippets.VERIFY, "tinypkg==2.0")
    assert wrong.returncode == 1 and "tinypkg 1.0 is installed, but the plan is tinypkg 2.0" in wrong.stderr
    imported = run(snippets.IMPORT, "60", "tinypkg")
    assert imported.returncode == 0 and imported.stdout.startswith("tinypkg 1.0: imports"), imported.stderr
