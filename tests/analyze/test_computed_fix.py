"""The fix computed for the reporter's machine (gpusetup/analyze/fixes.py): when the input's facts name the GPU,
the "no kernel image" finding's fix comes from the resolver of `gpusetup plan` for that machine (versions from
resources/compat, never typed in), a new GPU is never told to install an older framework, and `analyze --plan`
prints the whole plan. Prose inputs are typed as people write them (no tool output invented)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpusetup.analyze import analyze_text
from gpusetup.analyze.fixes import oldest_torch_with_kernels
from gpusetup.cli import main
from gpusetup.compat.resolver import resolve

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
PROSE = "GPU: RTX 5080\nPyTorch: 2.3.1+cu121\nCUDA: 12.8\n" + NO_KERNEL


def test_new_gpu_in_prose_gets_the_plans_build_and_minimum() -> None:
    a = analyze_text(PROSE)
    f = next(f for f in a.findings if f.id == "gpu-too-new-for-build")
    plan = resolve(a.machine, ["pytorch"])[0]
    choice = plan.choice if plan.ok else plan.gpu_choice
    oldest = oldest_torch_with_kernels(a.machine.gpus[0].compute_capability, a.machine)
    assert choice is not None and oldest is not None
    assert f"torch {oldest.version} or newer, built with {oldest.variant} or newer" in f.fix
    assert choice.commands[0] in f.fix and "sm_120" in f.fix
    assert "older framework" not in f.fix and "older release" not in f.fix
    # the driver is unknown, not missing: the fix says which command shows it
    assert "no NVIDIA driver is installed" not in f.fix and "`nvidia-smi`" in f.fix


def test_the_minimum_comes_from_the_data_not_from_the_code() -> None:
    a = analyze_text(PROSE)
    oldest = oldest_torch_with_kernels(a.machine.gpus[0].compute_capability, a.machine)
    assert oldest is not None and re.fullmatch(r"cu\d+", oldest.variant)
    assert int(oldest.variant[2:]) >= 128  # Blackwell needs a CUDA 12.8+ build (resources/compat arch lists)


def test_unknown_gpu_is_never_told_to_install_an_older_framework() -> None:
    a = analyze_text(NO_KERNEL)
    f = next(f for f in a.findings if f.catalogue in ("F04", "F05"))
    assert "older framework release" not in f.fix and "use a newer GPU" not in f.fix
    assert "nvidia-smi --query-gpu=name,compute_cap" in f.fix  # the command that settles it


def test_known_driver_means_no_driver_action_for_a_new_enough_one() -> None:
    a = analyze_text("GPU: RTX 5080\nNVIDIA driver 580.95.05\ntorch==2.3.1+cu121\n" + NO_KERNEL)
    f = next(f for f in a.findings if f.id == "gpu-too-new-for-build")
    assert "Before installing it" not in f.fix


def test_fix_in_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "report.txt"
    src.write_text(PROSE, encoding="utf-8")
    main(["--lang", "zh_CN", "analyze", str(src)])
    out = capsys.readouterr().out
    assert "您的 NVIDIA GeForce RTX 5080（sm_120）需要 torch" in out


def test_analyze_plan_prints_the_whole_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "report.txt"
    src.write_text(PROSE, encoding="utf-8")
    main(["analyze", "--plan", str(src)])
    out = capsys.readouterr().out
    assert "Plan for the reporter's machine" in out and "== PyTorch" in out and "--index-url" in out
    main(["analyze", "--plan", "--json", str(src)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["plan"][0]["framework"] == "pytorch" and doc["plan"][0]["gpu_choice"]["variant"].startswith("cu")


def test_plan_without_a_gpu_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = tmp_path / "report.txt"
    src.write_text(NO_KERNEL, encoding="utf-8")
    main(["analyze", "--plan", str(src)])
    assert "No plan: the input does not say which GPU" in capsys.readouterr().out
