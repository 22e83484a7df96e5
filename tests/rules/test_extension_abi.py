"""The rule for compiled extensions built for another torch (gpusetup/rules/catalogue/extensions.py), written from
the solved index's extension-abi threads of the DEV split only; those threads are its fixtures (their verbatim
error lines). Threads of other families must not trigger it."""

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
# a PyTorch symbol (c10::, at::, torch::) missing, or a package's own check (std:: symbols are a compiler ABI
# matter the rule does not claim)
SIGNATURE = re.compile(r"undefined symbol:?\s*_ZN?K?(?:3c10|2at|5torch)|Symbol not found: _torch_|"
                       r"compiled with different CUDA versions|"
                       r"operator torchvision::|xFormers was built for|xFormers can't load")
ABI = [r for r in DEV if r.family == "extension-abi" and SIGNATURE.search(" ".join(r.signature))]
OTHERS = [r for r in DEV if r.family not in ("extension-abi", "extension-build", "vllm", "deepspeed",
                                                  "cuda-math-libs", "pip-resolution")]


def _fires(report: Any) -> bool:
    return any(f.id == "extension-built-for-other-torch" for f in analyze_text("\n".join(report.signature)).findings)


@pytest.mark.parametrize("report", ABI, ids=lambda r: r.url.split("github.com/")[-1])
def test_dev_threads_with_the_signature_are_recognised(report: Any) -> None:
    assert _fires(report)


def test_enough_dev_threads_carry_the_signature() -> None:
    assert len(ABI) >= 12


def test_no_other_family_triggers_it() -> None:
    assert [r.url for r in OTHERS if _fires(r)] == []


def test_the_package_is_named_in_the_fix() -> None:
    r = next(r for r in ABI if "flash_attn_2_cuda" in r.signature[0])
    f = next(f for f in analyze_text("\n".join(r.signature)).findings if f.id == "extension-built-for-other-torch")
    assert "(flash-attn)" in f.title and "--no-build-isolation" in f.fix and "flash-attn" in f.fix
