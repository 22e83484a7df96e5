"""Traps stay quiet: normal messages people mistake for the problem (TensorFlow's oneDNN, NUMA and TensorRT
notices, nvidia-smi's N/A on a Jetson, a label-out-of-range assert, a warning from a library the program does not
use) raise nothing above info. Inputs: tests/fixtures/traps (real lines, threads in PROVENANCE.md) and the solved
index's benign-log and device-side-assert threads of the dev split."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from gpusetup.analyze import analyze_text
from gpusetup.analyze.similar import solved_index
from gpusetup.model import Severity

ROOT = Path(__file__).resolve().parents[2]
TRAPS = ROOT / "tests" / "fixtures" / "traps"
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
split_eval: Any = importlib.import_module("split_eval")
FIXTURES = sorted(TRAPS.glob("*.txt"))
DEV_TRAPS = [r for r in solved_index().reports
             if r.family in ("benign-log", "device-side-assert") and split_eval.part_of(r.url) == "dev"]


def _alarms(text: str) -> list[str]:
    return [f"{f.id}: {f.title}" for f in analyze_text(text).findings if f.severity.rank >= Severity.WARNING.rank]


def test_every_trap_fixture_is_listed_with_its_thread() -> None:
    listed = (TRAPS / "PROVENANCE.md").read_text(encoding="utf-8")
    assert len(FIXTURES) >= 9
    for path in FIXTURES:
        assert f"`{path.name}`" in listed, path.name


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_trap_fixture_raises_nothing_above_info(path: Path) -> None:
    assert _alarms(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("report", DEV_TRAPS, ids=lambda r: r.url.split("github.com/")[-1])
def test_dev_trap_threads_raise_nothing_above_info(report: Any) -> None:
    assert _alarms("\n".join(report.signature)) == []


def test_the_tensorrt_notice_alone_is_no_missing_cuda_library() -> None:
    """Before: libnvinfer.so.7 missing beside TF-TRT's own warning was reported as F22 (an error)."""
    text = (TRAPS / "tf-trt-libnvinfer-not-found-warning__deeplabcut-2115.txt").read_text(encoding="utf-8")
    assert not any(f.catalogue == "F22" for f in analyze_text(text).findings)


def test_jax_fallback_notice_is_info_alone_and_a_warning_when_jax_is_used() -> None:
    notice = (TRAPS / "jax-cpu-fallback-notice-gpu-not-needed__cfa-variant-forecasting-20.txt").read_text(encoding="utf-8")
    f = next(f for f in analyze_text(notice).findings if f.catalogue == "F25")
    assert f.severity is Severity.INFO and "harmless" in f.detail
    used = analyze_text("import jax\n" + notice + "jax.devices() -> [CpuDevice(id=0)]\n")
    assert next(f for f in used.findings if f.catalogue == "F25").severity is Severity.WARNING
