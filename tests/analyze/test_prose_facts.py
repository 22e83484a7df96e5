"""Facts people write in their own words (gpusetup/analyze/prose.py): each is read with the line it came from,
GPU models resolve to a chip and compute capability through gpusetup.enrich, and unrelated numbers raise nothing.

The lines are prose as people type it (the first is issue 22's example), written for these tests; they hold no tool
output — where a tool's output is needed, it is a recorded fixture (tests/fixtures). The negative cases put a number
next to a word that looks like a fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusetup.analyze import analyze_text
from gpusetup.analyze.prose import resolve_model
from gpusetup.versions import ComputeCapability

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def facts(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in analyze_text(text).fact_lines:
        out.setdefault(f.fact, []).append(f.value)
    return out


def test_issue_22_report_in_prose_gets_gpu_and_build_with_their_lines() -> None:
    a = analyze_text("GPU: RTX 5080\nPyTorch: 2.3.1+cu121\nCUDA: 12.8\n")
    gpu = a.machine.gpus[0]
    assert gpu.name == "NVIDIA GeForce RTX 5080" and gpu.compute_capability == ComputeCapability(12, 0)
    assert gpu.compute_capability_source and "chip rule" in gpu.compute_capability_source  # the enrich step
    torch = a.machine.python_envs[0].frameworks[0]
    assert (torch.name, str(torch.version)) == ("torch", "2.3.1+cu121")
    lines = {f.fact: f.line for f in a.fact_lines}
    assert lines == {"gpu": "GPU: RTX 5080", "framework": "PyTorch: 2.3.1+cu121"}
    # "CUDA: 12.8" alone names no driver or toolkit word: it could be any of three CUDA versions, so none is taken
    assert a.machine.driver.cuda_driver_version is None and not a.machine.cuda.toolkits


@pytest.mark.parametrize(("written", "cc"), [
    ("rtx5080", "12.0"), ("RTX 4090", "8.9"), ("geforce rtx 3060 laptop gpu", "8.6"), ("GTX-1080 Ti", "6.1"),
    ("NVIDIA A100", "8.0"), ("Tesla T4 GPU", "7.5"), ("h100", "9.0"), ("Quadro RTX 6000", "7.5"),
])
def test_gpu_names_in_any_case_and_spacing(written: str, cc: str) -> None:
    a = analyze_text(f"I am running on {written} and it fails\n")
    assert [str(g.compute_capability) for g in a.machine.gpus] == [cc], written


def test_a_short_datacentre_name_needs_a_gpu_word() -> None:
    assert facts("Server room L4 has two racks; see T4 in the floor plan\n").get("gpu") is None
    assert facts("Our NVIDIA T4 instance shows the error\n")["gpu"] == ["NVIDIA Tesla T4"]


def test_names_that_are_no_nvidia_gpu_raise_nothing() -> None:
    assert resolve_model("RTX 3000") == (None, None)  # a series, not a model
    assert facts("RTX 50 series cards and GTX 2000 do not exist as models\n").get("gpu") is None


def test_a_gpu_label_line_decides_which_gpu_is_this_machines() -> None:
    a = analyze_text("It worked on my old GTX 1080.\nGPU: RTX 5090\n")
    assert [g.name for g in a.machine.gpus] == ["NVIDIA GeForce RTX 5090"]


def test_tool_output_wins_over_prose() -> None:
    """A recorded nvidia-smi table lists the machine's GPUs exactly; a model named in the prose beside it is not
    added as another GPU."""
    table = (FIXTURES / "nvidia-smi-text" / "tesla-t4__535.86.10__linux__nvidia-smi__old-table-layout__nvidia-cloud-native-docs.txt")
    a = analyze_text(table.read_text(encoding="utf-8") + "\nI also tried an RTX 3090 yesterday\n")
    assert len(a.machine.gpus) == 1 and "T4" in (a.machine.gpus[0].name or "")


@pytest.mark.parametrize(("line", "value"), [
    ("Driver Version: 535.54.03", "535.54.03"),  # nvidia-smi's words typed alone
    ("NVIDIA driver 572.16 on Windows 11", "572.16"),
    ("nvidia driver version is 470.82.01", "470.82.01"),
    ("I installed the 550.120 driver", "550.120"),
])
def test_driver_versions_in_prose(line: str, value: str) -> None:
    a = analyze_text(line + "\n")
    assert str(a.machine.driver.version) == value
    assert facts(line + "\n")["driver"] == [value]


@pytest.mark.parametrize("line", [
    "Updated the printer driver to 2.0.5 and rebooted",  # not a GPU driver version (no 3-digit branch)
    "driver.py:123 raised an exception",
    "torch 2 is great",  # no version
    "PyTorch is at commit 1234567",
])
def test_unrelated_numbers_are_no_facts(line: str) -> None:
    found = facts(line + "\n")
    assert not found.get("driver") and not found.get("framework"), found


@pytest.mark.parametrize(("text", "version"), [
    ("torch==2.3.1+cu121\n", "2.3.1+cu121"),  # pip freeze
    ("torch                    2.3.1+cu121\n", "2.3.1+cu121"),  # pip list
    ("pytorch 2.1.0 py3.10_cuda12.1_cudnn8.9.2_0 pytorch\n", "2.1.0"),  # conda list
    (">>> print(torch.__version__)\n2.3.1+cu121\n", "2.3.1+cu121"),
    ("Processing ./torch-2.3.1+cu121-cp310-cp310-linux_x86_64.whl\n", "2.3.1+cu121"),  # a wheel file name
    ("https://download.pytorch.org/whl/cu121/torch-2.3.1%2Bcu121-cp311-cp311-win_amd64.whl\n", "2.3.1+cu121"),
    ("PyTorch version: 2.0.1\n", "2.0.1"),
    ("I use torch 2.3.1+cu118 in a venv\n", "2.3.1+cu118"),
])
def test_framework_builds_in_every_form(text: str, version: str) -> None:
    fws = analyze_text(text).machine.python_envs[0].frameworks
    assert [(fw.name, str(fw.version)) for fw in fws] == [("torch", version)]


def test_nvcc_release_cuda_near_driver_and_build_arches() -> None:
    text = ("nvcc: NVIDIA (R) Cuda compiler driver\n"
            "Cuda compilation tools, release 12.1, V12.1.105\n"
            "my driver supports CUDA 12.4 according to nvidia-smi\n"
            "nvcc fatal   : Unsupported gpu architecture 'compute_120'\n")
    a = analyze_text(text)
    assert str(a.machine.cuda.toolkits[0].version) == "12.1.105"
    assert str(a.machine.driver.cuda_driver_version) == "12.4"
    found = facts(text)
    assert found["build-arch"] == ["sm_120"] and found["toolkit"] == ["nvcc 12.1.105"]


def test_xids_in_prose_and_tables() -> None:
    found = facts("Xid 79 twice this week, then Xid 154\n| Xid | 48 |\n")
    assert found["xid"] == ["79", "154", "48"]
    a = analyze_text("Xid 79 twice this week, then Xid 154\n")
    assert [f.catalogue for f in a.findings if f.severity.rank >= 2] == ["F14"]  # fallen off the bus


@pytest.mark.parametrize("line", [
    "xid: none seen",
    "the XIDs page of the docs explains them",
    "[  12.345] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",  # the kernel's own: not prose
])
def test_no_prose_xid_from_other_lines(line: str) -> None:
    assert not facts(line + "\n").get("xid")


def test_jetson_named_in_prose() -> None:
    a = analyze_text("Running on a Jetson AGX Orin with JetPack 6\n")
    assert a.machine.system.is_jetson is True
