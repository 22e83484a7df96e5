"""`gpusetup docker` end to end with --for, refusals that write nothing, overwrite protection, the check script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.generate import GenerateError, generate_setup
from gpusetup.model import to_dict
from gpusetup.resources import resource

from .hosts import HOSTS


def _report(tmp_path: Path, host: str) -> Path:
    path = tmp_path / f"{host}.json"
    path.write_text(json.dumps({"machine": to_dict(HOSTS[host].machine()), "findings": []}), encoding="utf-8")
    return path


def test_cli_writes_the_setup_for_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proj"
    rc = main(["docker", "--framework", "pytorch", "--for", str(_report(tmp_path, "rtx4090-535")), "--out", str(out),
               "--runtime", "apptainer", "--gpus", "1"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "nvidia/cuda:12.2.2-base-ubuntu22.04" in text and "torch==2.14.1 (cu126)" in text
    assert (out / "Dockerfile").is_file() and (out / ".devcontainer/devcontainer.json").is_file()
    assert "apptainer exec --nv" in (out / "slurm/job.sbatch").read_text()
    assert "--runtime apptainer --gpus 1" in (out / "Dockerfile").read_text()  # the regenerate command


def test_cli_refusal_writes_nothing_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "proj"
    rc = main(["docker", "--framework", "pytorch", "--for", str(_report(tmp_path, "mixed-410")), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert "too old" in err and "450.80.02" in err


def test_cli_json_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["docker", "--framework", "jax", "--for", str(_report(tmp_path, "h100-590")), "--out",
               str(tmp_path / "j"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["ok"] and data["image"] == "nvidia/cuda:13.0.2-base-ubuntu24.04"
    rc = main(["docker", "--check", "--for", str(_report(tmp_path, "rtx3080-595")), "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["findings"][0]["id"] == "container-gpu-ok"


def test_cli_bad_input_is_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docker", "--framework", "pytorch", "--for", str(tmp_path / "missing.json")]) == 3
    assert main(["docker"]) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["docker", "--framework", "pytorch", "--for", str(bad)]) == 3
    assert "gpusetup:" in capsys.readouterr().err


def test_changed_files_are_never_overwritten_without_force(tmp_path: Path) -> None:
    m = HOSTS["rtx3080-595"].machine()
    generate_setup(m, "pytorch", tmp_path, generated_on="2026-11-22")
    generate_setup(m, "pytorch", tmp_path, generated_on="2026-11-22")  # identical: fine
    (tmp_path / "Dockerfile").write_text("# my edits\n")
    with pytest.raises(GenerateError, match="Dockerfile") as err:
        generate_setup(m, "pytorch", tmp_path, generated_on="2026-11-22")
    assert (tmp_path / "Dockerfile").read_text() == "# my edits\n"
    # said as data too: the English for the CLI, Chinese without the CLI flags for the wizard
    from gpusetup.messages import render

    assert str(err.value).endswith("choose another --out folder or pass --force to overwrite them.")
    assert err.value.message is not None and render(err.value.message) == str(err.value)
    zh = render(err.value.message, "zh_CN")
    assert "Dockerfile" in zh and "没有写入任何文件" in zh and "--" not in zh
    res = generate_setup(m, "pytorch", tmp_path, generated_on="2026-11-22", force=True)
    assert res.ok and (tmp_path / "Dockerfile").read_text().startswith("# syntax=docker/dockerfile:1")


def test_refusal_result_for_the_wizard(tmp_path: Path) -> None:
    res = generate_setup(HOSTS["no-driver"].machine(), "pytorch", tmp_path / "x")
    assert not res.ok and res.refused and res.alternative and not (tmp_path / "x").exists()
    ok = generate_setup(HOSTS["rtx3080-595"].machine(), "pytorch", tmp_path / "y")
    assert ok.ok and ok.refused is None and ok.next_commands[1].startswith("docker build")


def test_bad_options_are_reported(tmp_path: Path) -> None:
    m = HOSTS["rtx3080-595"].machine()
    for kwargs in ({"runtime": "singularity"}, {"gpus": 0}, {"colour": "blue"}, {"cuda": "x"}):
        with pytest.raises(GenerateError):
            generate_setup(m, "pytorch", tmp_path, **kwargs)


def test_gpu_check_script_says_when_the_framework_is_missing(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(resource("generate", "gpu_check.py")), "--framework", "tensorflow"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "not installed" in proc.stderr
