"""The self-test result worded in 简体中文 — its notes, every measurement's reason, labels and verdicts, through
the fake libcuda/libcublas with real NVML captures — carries no English sentence (the checker the wizard
walk uses, tests/gui/beginner_text.py); in English it is the text the result keeps for older readers."""

from __future__ import annotations

import re

import pytest
from conftest import gpu_env, live_objects
from gui.beginner_text import english_runs

from gpusetup.messages import render, render_notes
from gpusetup.model import Machine, SelfTestResult
from gpusetup.selftest import SelfTestEnv, run_selftest
from gpusetup.selftest.text import format_text

CJK = re.compile(r"[\u4e00-\u9fff]")
GPU = "NVIDIA GeForce RTX 4080 SUPER"


def _no_english(r: SelfTestResult) -> None:
    assert len(r.note_codes) == len(r.notes)
    assert render_notes(r.notes, r.note_codes, "en") == r.notes
    for text, code in zip(r.notes, r.note_codes, strict=True):
        assert render(code) == text  # the English kept in the result is the catalogue's
    for m in r.measurements:
        assert m.code, f"{m.name}: a reason without a code: {m.reason!r}"
        assert render({"code": m.code, "params": m.params}) == m.reason
    zh = format_text(r, "zh_CN")
    assert CJK.search(zh)
    runs = [(line, run) for line in zh.splitlines() for run in english_runs(line, [GPU])]
    assert not runs, runs


def test_a_whole_gpu_run_in_chinese(build_fake, build_cublas, nvml_4080s) -> None:
    lib = build_fake()
    r = run_selftest(Machine(), env=gpu_env(lib, nvml_4080s, build_cublas(lib)))
    assert r.gpu_tested and r.verdict == "pass"
    _no_english(r)
    zh = format_text(r, "zh_CN")
    assert f"gpusetup 自检（快速）：{GPU}（GPU 0）" in zh and "结果：通过" in zh
    assert "cuBLAS FP16 矩阵乘法（张量核心）" in zh
    assert format_text(r, "en").startswith(f"gpusetup self-test (quick) — {GPU} (GPU 0)")
    assert live_objects(lib) == 0


def test_an_old_driver_little_memory_and_no_cublas_in_chinese(build_fake, nvml_4080s) -> None:
    r = run_selftest(Machine(), env=gpu_env(build_fake("FAKE_OLD_DRIVER"), nvml_4080s, None,
                                            tiers=("driver", "cublas")))
    assert any("instead of" in n for n in r.notes) and any("cuBLAS not found" in n for n in r.notes)
    _no_english(r)


@pytest.mark.parametrize(("func", "code"), [
    ("cuInit", 100), ("cuInit", 34), ("cuDevicePrimaryCtxRetain", 46), ("cuMemAlloc_v2", 2),
    ("cuLaunchKernel", 719), ("cuModuleLoadDataEx", 218), ("cuMemFree_v2", 214),
])
def test_driver_errors_in_chinese(build_fake, func: str, code: int) -> None:
    r = run_selftest(Machine(), env=gpu_env(build_fake(f'FAKE_FAIL_FUNC="{func}"', f"FAKE_FAIL_CODE={code}"), None))
    _no_english(r)


def test_no_driver_library_and_a_gpu_number_out_of_range_in_chinese(build_fake) -> None:
    none = run_selftest(Machine(), env=SelfTestEnv(cuda_candidates=["/nonexistent/libcuda.so.1"], tiers=("driver",)))
    assert not none.gpu_tested and "is not installed" in none.notes[0]
    _no_english(none)
    env = gpu_env(build_fake(), None)
    out_of_range = run_selftest(Machine(), device=7, env=env)
    assert out_of_range.measurements[0].name == "gpu_select"
    _no_english(out_of_range)


def test_progress_is_worded_in_the_output_language(build_fake, build_cublas) -> None:
    """What the self-test says while it works (the CLI's stderr line, the wizard's progress bar) follows the
    output language (`gpusetup --lang`, the wizard's language switch)."""
    from gpusetup.i18n import set_output_language

    lib = build_fake()
    labels: list[str] = []
    env = gpu_env(lib, None, build_cublas(lib), tiers=("driver", "cublas", "cpu"))
    set_output_language("zh_CN")
    run_selftest(Machine(), progress=lambda label, fraction: labels.append(label), env=env)
    shown = [label for label in labels if label != "done"]  # "done" is the end marker, never shown
    assert "寻找 NVIDIA 驱动程序" in shown and "复制测试：电脑→显卡，锁页内存" in shown and "cuBLAS：FP16 矩阵乘法" in shown
    for label in shown:
        assert CJK.search(label) and not english_runs(label), label
    set_output_language(None)
    labels.clear()
    run_selftest(Machine(), progress=lambda label, fraction: labels.append(label), env=env)
    assert "copy test: host→GPU, pinned" in labels and "matrix test: repeat-and-compare" in labels
