"""A pasted collect_env report carries torchvision/torchaudio and nvidia-* wheel lines: analyze reads them, so
F21 (a CPU torch replacing the CUDA build) can be named from a user's paste."""

from __future__ import annotations

from pathlib import Path

from gpusetup.analyze import analyze_text

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "collect-env"
REAL = FIX / "ubuntu-22.04__3x-rtx-3090__driver-515.65.01__torch-1.12.1+cu116__pytorch-issue-86556.txt"


def test_companions_are_read_from_a_real_report():
    a = analyze_text(REAL.read_text(), "collect_env.txt")
    env = a.machine.python_envs[0]
    assert {(c.name, str(c.version)) for c in env.companions} == {("torchaudio", "0.12.1+cu116"), ("torchvision", "0.13.1+cu116")}
    assert not [f for f in a.findings if f.catalogue == "F21"], "the real report is healthy: no F21"


def test_cpu_torch_beside_cuda_companions_is_named_f21():
    # The real report as it would read after `pip install <something>` swapped torch for the CPU build
    # (the ComfyUI-Manager case, tests/fixtures/recorded-issues/F21__*): only the torch lines differ.
    text = REAL.read_text()
    text = text.replace("PyTorch version: 1.12.1+cu116", "PyTorch version: 1.12.1+cpu")
    text = text.replace("CUDA used to build PyTorch: 11.6", "CUDA used to build PyTorch: None")
    text = text.replace("Is CUDA available: True", "Is CUDA available: False")
    text = text.replace("[pip3] torch==1.12.1+cu116", "[pip3] torch==1.12.1+cpu")
    a = analyze_text(text, "collect_env.txt")
    assert a.findings and a.findings[0].catalogue == "F21", [(f.catalogue, f.id) for f in a.findings]
