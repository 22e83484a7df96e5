"""`gpusetup selftest` answers in one sentence per framework, for real (the framework check runs in a child
Python, the processor does the work): only the frameworks chosen (else the installed ones), in the environment
named or the one gpusetup's installer made (its journal), a framework that is installed but does not start told
apart from one that is not installed, with the command that repairs it.

The environments are real venvs. The broken ones hold what an interrupted install leaves — a distribution's
metadata without its files: numpy's own METADATA copied from this test environment; and, for the case issue 21
reported ("No module named 'tensorflow.python'" after a resumed install, which the proof called "not installed"),
a stand-in `tensorflow` 2.20.0 whose package lacks its `python` subpackage (the real wheel is 600 MB).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tiny_sizes

from gpusetup.cli import main
from gpusetup.selftest import base


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No GPU library (whatever this machine has), small sizes, gpusetup's state in tmp_path."""
    monkeypatch.setenv("GPUSETUP_LIBCUDA", str(tmp_path / "no-libcuda.so.1"))
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "gpusetup"))
    monkeypatch.delenv("GPUSETUP_STATE_DIR", raising=False)
    monkeypatch.setattr(base.Sizes, "for_mode", classmethod(lambda cls, mode: tiny_sizes()))
    return tmp_path / "gpusetup"


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    return next(where.glob("lib/python3*/site-packages"))


@pytest.fixture(scope="module")
def broken_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv where numpy and tensorflow are installed as far as their metadata goes, and do not import."""
    env = tmp_path_factory.mktemp("envs") / "broken env"
    site = _venv(env)
    dist = importlib.metadata.distribution("numpy")
    meta = Path(dist._path)  # type: ignore[attr-defined]  # its real .dist-info folder
    shutil.copytree(meta, site / meta.name)  # METADATA first, the package never unpacked
    (site / "tensorflow").mkdir()
    (site / "tensorflow" / "__init__.py").write_text("from tensorflow.python import pywrap_tensorflow  # noqa\n")
    info = site / "tensorflow-2.20.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.20.0\n")
    return env


def test_the_chosen_framework_is_answered_first_in_one_sentence(capsys) -> None:
    rc = main(["selftest", "--python", sys.executable, "--framework", "numpy"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "gpusetup self-test (quick) — no NVIDIA GPU tested"
    assert re.fullmatch(r"✓ numpy works\. It ran on the processor: [0-9.]+ GFLOP/s\.", lines[2]), lines[:4]
    assert lines[4] == "Details:" and "Result: PASS" in out and rc == 0
    zh = subprocess.run([sys.executable, "-m", "gpusetup", "--lang", "zh_CN", "selftest", "--python", sys.executable,
                         "--framework", "numpy", "--quick"], capture_output=True, text=True, timeout=300).stdout
    assert re.search(r"^✓ numpy 运行正常，在 CPU 上运行：[0-9.]+ GFLOP/s。$", zh, re.M), zh[:600]


def test_without_a_choice_no_framework_that_is_not_there_is_named(capsys) -> None:
    """The test environment has numpy and no torch/TensorFlow/JAX: nothing is said about each of them."""
    main(["selftest", "--python", sys.executable])
    out = capsys.readouterr().out
    assert f"Framework: NOT PROVEN — none of torch, tensorflow, jax is installed in {sys.executable}, " in out
    for name in ("PyTorch", "TensorFlow", "JAX"):
        assert f"{name} is not installed" not in out


def test_installed_but_broken_frameworks_do_not_start_and_are_offered_a_repair(broken_env: Path, capsys) -> None:
    py = broken_env / "bin" / "python"
    rc = main(["selftest", "--python", str(py), "--framework", "tensorflow", "--framework", "numpy",
               "--framework", "jax"])
    out = capsys.readouterr().out
    tf, repair_tf, numpy, jax, install_jax, blank = out.splitlines()[2:8]
    assert tf == "✗ TensorFlow is installed but does not start: ModuleNotFoundError: No module named 'tensorflow.python'."
    assert repair_tf == f"    To repair it: gpusetup install --framework tensorflow --target 'venv:{broken_env}'"
    assert numpy == "✗ numpy is installed but does not start: ModuleNotFoundError: No module named 'numpy'."
    assert jax == f"! JAX is not installed in {broken_env}."  # numpy: nothing gpusetup installs, so no command
    assert install_jax == f"    To install it there: gpusetup install --framework jax --target 'venv:{broken_env}'"
    assert blank == ""
    assert rc == 2
    # as data: what the report keeps
    main(["selftest", "--python", str(py), "--framework", "tensorflow", "--json"])
    ms = json.loads(capsys.readouterr().out)["selftest"]["measurements"]
    tf_m = next(m for m in ms if m["name"] == "framework_tensorflow")
    assert tf_m["verdict"] == "fail" and tf_m["code"] == "selftest.fw.does-not-start"


def test_without_python_the_environment_the_installer_made_is_checked(cpu_only: Path, broken_env: Path,
                                                                          capsys) -> None:
    """After `gpusetup install` (and a resume, or a new terminal), a bare `gpusetup selftest` proves what was
    installed where it was installed — not gpusetup's own environment — for the frameworks installed there."""
    jdir = cpu_only / "state" / "install"
    jdir.mkdir(parents=True)
    (jdir / "plan.json").write_text(json.dumps({"target": f"venv:{broken_env}", "steps": [],
                                                "python": [str(broken_env / "bin" / "python")],
                                                "packages": ["tensorflow==2.20.*"]}))
    (jdir / "journal.jsonl").write_text('{"event": "plan", "ts": "2026-11-22T10:00:00Z"}\n'
                                        '{"event": "finished", "ok": true, "ts": "2026-11-22T10:05:00Z"}\n')
    main(["selftest"])
    out = capsys.readouterr().out
    assert out.splitlines()[2].startswith("✗ TensorFlow is installed but does not start:"), out[:500]
    assert f"checked in the environment gpusetup installed last (venv:{broken_env})" in out
    assert "numpy" not in out.split("Details:")[0], "numpy is there too, but it was not installed by gpusetup"
