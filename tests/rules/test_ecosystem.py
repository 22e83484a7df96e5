"""Rules for the ecosystem around the frameworks (gpusetup/rules/catalogue/ecosystem.py), written from the solved
index's DEV split only; those threads are the fixtures (their verbatim error lines). Threads of other families must
not trigger them (except where the thread's family is the component and the cause is the same, listed below)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from gpusetup.analyze import analyze_text
from gpusetup.analyze.similar import solved_index

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
split_eval: Any = importlib.import_module("split_eval")
DEV = [r for r in solved_index().reports if split_eval.part_of(r.url) == "dev"]

# rule id → (its family, the signature that selects the dev threads it was written from, families that share it)
RULES = {
    "cuda-compiler-not-found": ("cuda-toolkit", r"No CMAKE_CUDA_COMPILER could be found|nvcc: no such file",
                                {"extension-build", "llama-cpp"}),
    "gpu-feature-needs-newer-gpu": ("gpu-feature-unsupported", r"FlashAttention only supports Ampere|Bfloat16 is only",
                                    {"gpu-too-old"}),
    "ptx-newer-than-driver": ("driver-too-old", r"PTX was compiled with an unsupported toolchain", {"no-kernel-image"}),
    "bitsandbytes-without-cuda": ("bitsandbytes", r"CUDA Setup failed|compiled without GPU support|libbitsandbytes_cpu",
                                  set()),
    "nvcc-arch-unsupported": ("extension-build", r"Unsupported gpu architecture|is not defined for option 'gpu-arch",
                              {"cuda-toolkit"}),
}
CASES = [(rid, r) for rid, (fam, sig, _) in RULES.items() for r in DEV
         if r.family == fam and re.search(sig, " ".join(r.signature))]


def _ids(report: Any) -> set[str]:
    return {f.id for f in analyze_text("\n".join(report.signature)).findings}


@pytest.mark.parametrize(("rule_id", "report"), CASES, ids=lambda x: x if isinstance(x, str) else
                         x.url.split("github.com/")[-1])
def test_dev_threads_of_each_rule_are_recognised(rule_id: str, report: Any) -> None:
    assert rule_id in _ids(report)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_each_rule_has_dev_threads_and_no_other_family_triggers_it(rule_id: str) -> None:
    family, _sig, shared = RULES[rule_id]
    assert sum(1 for rid, _ in CASES if rid == rule_id) >= 3
    others = [r.url for r in DEV if r.family not in {family, *shared} and rule_id in _ids(r)]
    assert others == []


def test_the_compiler_fix_names_the_toolkit_torch_was_built_with() -> None:
    text = "torch==2.3.1+cu121\nOSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    f = next(f for f in analyze_text(text).findings if f.id == "cuda-compiler-not-found")
    assert "CUDA toolkit 12.1" in f.fix


# Which way nvcc refused an architecture, as each dev thread's resolution says (the cause recorded in the index):
# the toolkit too old for a newer GPU, or an old architecture the toolkit dropped still listed; "either" where the
# thread's error lines do not say which toolkit ran (its resolution needed `nvcc --version`).
ARCH_WAYS = {
    "CMU-Perceptual-Computing-Lab/openpose/issues/1805": "too-new",  # CUDA 10.1, RTX 3090
    "NVlabs/tiny-cuda-nn/issues/239": "too-new",  # CUDA 11.3, RTX 4090
    "ServeurpersoCom/acestep.cpp/issues/11": "too-new",  # compute_121a, nvcc too old for Blackwell
    "erikwijmans/Pointnet2_PyTorch/issues/91": "too-new",  # /usr/local/cuda-8.0/bin/nvcc, compute_75
    "GOMC-WSU/GOMC/issues/522": "dropped-since",  # compute_35 under CUDA 12
    "HawkAaron/warp-transducer/issues/79": "dropped-since",  # compute_30 under CUDA 11
    "kaldi-asr/kaldi/issues/1918": "dropped",  # compute_20 under CUDA 9
    "horsicq/Formats/issues/9": "either",  # compute_50: dropped by CUDA 13, but the lines do not say 13
    "torch/cutorch/issues/585": "either",  # compute_61: CUDA 7.5 was too old, but the lines do not say 7.5
}


@pytest.mark.parametrize("thread", sorted(ARCH_WAYS))
def test_which_way_nvcc_refused_the_architecture(thread: str) -> None:
    report = next(r for r in DEV if r.url.endswith(thread))
    f = next(f for f in analyze_text("\n".join(report.signature)).findings if f.id == "nvcc-arch-unsupported")
    assert f.fix_code is not None and f.fix_code.code == f"fix.nvcc-arch-unsupported.{ARCH_WAYS[thread]}", f.fix


def test_the_toolkit_named_in_the_text_decides_the_way_and_the_release() -> None:
    """With nvcc's own release line (recorded output of `nvcc --version`), the fix names the releases that work."""
    old = ("Cuda compilation tools, release 11.0, V11.0.221\n"
           "nvcc fatal   : Unsupported gpu architecture 'compute_86'\n")
    f = next(f for f in analyze_text(old).findings if f.id == "nvcc-arch-unsupported")
    assert f.fix_code.code == "fix.nvcc-arch-unsupported.too-new" and f.fix_code.params["first"] == "11.1"
    assert "Build with CUDA 11.1 or newer" in f.fix and "(nvcc from CUDA 11.0)" in f.detail
    new = ("Cuda compilation tools, release 13.0, V13.0.48\n"
           "nvcc fatal   : Unsupported gpu architecture 'compute_50'\n")
    f = next(f for f in analyze_text(new).findings if f.id == "nvcc-arch-unsupported")
    assert f.fix_code.code == "fix.nvcc-arch-unsupported.dropped-since" and f.fix_code.params["last"] == "12.9"
    assert "-gencode arch=compute_50,code=sm_50" in f.fix
    # the same machine read in Chinese: title with its values, fix translated, commands kept
    from gpusetup.messages import finding_words

    words = finding_words(f, "zh_CN")
    assert words.title == "nvcc 无法为显卡架构 compute_50（计算能力 5.0）生成代码"
    assert "删掉" in words.fix and "-gencode arch=compute_50,code=sm_50" in words.fix and "CUDA 12.9" in words.fix
