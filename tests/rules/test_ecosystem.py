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
