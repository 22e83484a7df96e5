"""The GPU tiers end to end through the fake libcuda/libcublas, with real NVML captures as telemetry."""

from __future__ import annotations

import ctypes
import json
import re

import jsonschema
import pytest
from conftest import gpu_env, live_objects

from gpusetup.cancel import CancelToken
from gpusetup.model import Machine, Report, SelfTestResult, from_dict, to_dict
from gpusetup.resources import resource
from gpusetup.selftest import run_selftest


def by_name(result: SelfTestResult):
    return {m.name: m for m in result.measurements}


def test_end_to_end_numbers_peaks_and_verdicts(build_fake, build_cublas, nvml_4080s):
    lib = build_fake()
    tele: list = []
    env = gpu_env(lib, nvml_4080s, build_cublas(lib), telemetries=tele)
    r = run_selftest(Machine(), env=env)
    m = by_name(r)
    assert r.gpu_tested and r.gpu_name == "NVIDIA GeForce RTX 4080 SUPER" and r.device == 0
    # Host copies: the fake moves 25.1 GB/s; the link read *during* the copy is the load capture's Gen4 x16
    # (31.5 GB/s per direction), not the idle capture's Gen1.
    h2d = m["h2d_pinned"]
    assert h2d.value == pytest.approx(25.1, rel=1e-3)
    assert h2d.rated == pytest.approx(31.5) and h2d.rated_basis == "pcie-link"
    assert h2d.fraction == pytest.approx(25.1 / 31.5, rel=1e-3)
    assert h2d.verdict == "pass" and "Gen4 x16" in h2d.reason
    assert len(h2d.samples) == 3 and h2d.spread is not None
    assert any(tele[0].busy), "telemetry was never sampled while copies were queued"
    assert m["d2h_pinned"].verdict == "pass"
    assert m["h2d_pageable"].verdict == "info" and "of the pinned figure" in m["h2d_pageable"].reason
    # Device copy: 330 GB/s one way = 660 GB/s of memory traffic against the datasheet 736.
    d2d = m["d2d"]
    assert d2d.value == pytest.approx(660, rel=1e-3) and d2d.rated == 736.0 and d2d.verdict == "pass"
    assert m["copy_integrity"].verdict == "pass"
    assert m["matmul_fp32_correct"].verdict == "pass" and m["matmul_fp32_correct"].value == 0
    assert m["matmul_fp32_ptx"].value == pytest.approx(14.0, rel=1e-3) and m["matmul_fp32_ptx"].verdict == "info"
    assert m["matmul_repeat_bitexact"].verdict == "pass"
    # cuBLAS: peaks from the SM clock measured under load (2805 MHz), datasheet beside it.
    fp16 = m["cublas_fp16"]
    assert fp16.rated_basis == "live-clock"
    assert fp16.rated == pytest.approx(80 * 512 * 2805e6 / 1e12)
    assert fp16.datasheet == 104.4
    assert fp16.fraction < 1.0 and fp16.verdict == "pass"
    fp32 = m["cublas_fp32"]
    assert fp32.rated == pytest.approx(80 * 256 * 2805e6 / 1e12) and fp32.verdict == "pass"
    assert "55-70%" in fp32.reason  # judged by the dual-issue FP32 band of Ada
    assert m["cublas_tf32"].verdict == "info" and m["cublas_bf16"].verdict == "pass"
    assert r.verdict == "pass"
    # the copy, matrix and cuBLAS tiers say their reasons as data: the same English, and Chinese for Verify
    from gpusetup.messages import render

    worded = [x for x in r.measurements if x.tier == "cublas" or x.name in ("h2d_pinned", "d2h_pinned",
              "h2d_pageable", "d2h_pageable", "d2d", "copy_integrity") or x.name.startswith("matmul_")]
    assert len(worded) >= 11
    for x in worded:
        assert x.code and render({"code": x.code, "params": x.params}) == x.reason, x
        zh = render({"code": x.code, "params": x.params}, "zh_CN")
        assert re.search(r"[\u4e00-\u9fff]", zh) and "peak" not in zh, zh
    assert live_objects(lib) == 0
    # Results survive the JSON round trip and validate against the report schema.
    data = to_dict(Report(machine=Machine(), selftest=r))
    jsonschema.Draft202012Validator(json.loads(resource("schema", "report.schema.json").read_text())).validate(
        json.loads(json.dumps(data)))
    assert from_dict(SelfTestResult, to_dict(r)) == r


def test_idle_link_during_the_copy_is_a_failure_with_the_fix(build_fake, nvml_4080s):
    """If the link stays at Gen1 while copying (here: the real idle capture), the verdict says so."""
    lib = build_fake()
    idle_only = {"idle": nvml_4080s["idle"], "load": nvml_4080s["idle"]}
    r = run_selftest(Machine(), env=gpu_env(lib, idle_only))
    h2d = by_name(r)["h2d_pinned"]
    assert h2d.verdict == "fail"
    assert "Gen1 x16" in h2d.reason and "Gen4 x16" in h2d.reason and "slot" in h2d.reason
    assert r.verdict == "fail"


def test_slow_copies_warn_and_fail_by_the_bands(build_fake, nvml_4080s, monkeypatch):
    lib = build_fake()
    monkeypatch.setenv("FAKE_CUDA_H2D_GBPS", "21.0")  # 67% of Gen4 x16: between the 60% floor and 75%
    monkeypatch.setenv("FAKE_CUDA_D2H_GBPS", "12.0")  # 38%: below the floor
    monkeypatch.setenv("FAKE_CUDA_D2D_GBPS", "150.0")  # 300 GB/s traffic = 41% of 736
    m = by_name(run_selftest(Machine(), env=gpu_env(lib, nvml_4080s)))
    assert m["h2d_pinned"].verdict == "warn" and "67%" in m["h2d_pinned"].reason
    assert m["d2h_pinned"].verdict == "fail" and "below the 60% floor" in m["d2h_pinned"].reason
    assert m["d2d"].verdict == "fail"


def test_without_telemetry_the_spec_table_gives_the_link_and_the_datasheet_the_peak(build_fake, build_cublas):
    lib = build_fake()
    m = by_name(run_selftest(Machine(), env=gpu_env(lib, None, build_cublas(lib))))
    assert m["h2d_pinned"].rated_basis == "pcie-spec" and "link state unknown" in m["h2d_pinned"].reason
    assert m["cublas_fp16"].rated_basis == "datasheet" and m["cublas_fp16"].rated == 104.4


def test_old_driver_runs_every_gpu_test(build_fake, nvml_4080s):
    lib = build_fake("FAKE_OLD_DRIVER")
    r = run_selftest(Machine(), env=gpu_env(lib, nvml_4080s))
    m = by_name(r)
    assert m["matmul_fp32_correct"].verdict == "pass" and m["h2d_pinned"].verdict == "pass"
    assert any("cuEventElapsedTime instead of cuEventElapsedTime_v2" in n for n in r.notes)
    assert any("CUDA 9.0" in n for n in r.notes)
    assert live_objects(lib) == 0


def _launches_of_a_clean_run(lib_path) -> int:
    lib = ctypes.CDLL(str(lib_path))
    before = lib.fake_sgemm_launches()
    run_selftest(Machine(), env=gpu_env(lib_path, None))
    return lib.fake_sgemm_launches() - before


@pytest.mark.parametrize("nan", [False, True], ids=["bitflip", "nan"])
def test_corrupted_repeat_is_a_hardware_finding(build_fake, nan):
    total = _launches_of_a_clean_run(build_fake())
    # The last two sgemm launches are the last two repeats; corrupt the second-to-last one (repeat 3 of 4).
    defines = [f"FAKE_CORRUPT_LAUNCH={total - 1}"] + (["FAKE_CORRUPT_NAN"] if nan else [])
    lib = build_fake(*defines)
    r = run_selftest(Machine(), env=gpu_env(lib, None))
    rep = by_name(r)["matmul_repeat_bitexact"]
    assert rep.verdict == "fail" and rep.value == (2 if nan else 1)  # NaN: differs and is NaN
    assert "HARDWARE FINDING" in rep.reason and "repeats 3 of 4" in rep.reason
    assert ("1 NaN" in rep.reason) == nan
    assert by_name(r)["matmul_fp32_correct"].verdict == "pass"  # the first result was fine
    assert r.verdict == "fail"
    assert live_objects(lib) == 0


def test_little_free_memory_shrinks_buffers_and_never_exceeds_half(build_fake):
    lib = build_fake("FAKE_FREE_MB=24")
    r = run_selftest(Machine(), env=gpu_env(lib, None))
    m = by_name(r)
    assert m["h2d_pinned"].value is not None
    assert any("reduced to 4 MiB" in n for n in r.notes)
    assert "gpu_error" not in m
    assert ctypes.CDLL(str(lib)).fake_peak_used_bytes() <= 12 * 1024 * 1024
    assert live_objects(lib) == 0


def test_almost_no_free_memory_skips_plainly(build_fake):
    lib = build_fake("FAKE_FREE_MB=4")
    m = by_name(run_selftest(Machine(), env=gpu_env(lib, None)))
    assert m["h2d_pinned"].verdict == "skipped" and "not enough free GPU" in m["h2d_pinned"].reason
    assert m["matmul_fp32_correct"].verdict == "pass"  # 4 × 64×64 floats still fit in half of 4 MiB
    assert "gpu_error" not in m
    assert ctypes.CDLL(str(lib)).fake_peak_used_bytes() <= 2 * 1024 * 1024
    assert live_objects(lib) == 0


@pytest.mark.parametrize(
    ("func", "code", "name", "expect"),
    [
        ("cuInit", 100, "CUDA_ERROR_NO_DEVICE", "note"),
        ("cuInit", 999, "CUDA_ERROR_UNKNOWN", "note"),
        ("cuInit", 34, "CUDA_ERROR_STUB_LIBRARY", "note"),
        ("cuInit", 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "note"),
        ("cuDeviceGetName", 999, "CUDA_ERROR_UNKNOWN", "error"),
        ("cuDevicePrimaryCtxRetain", 46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "error"),
        ("cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY", "error"),
        ("cuMemHostAlloc", 209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "error"),
        ("cuMemcpyHtoDAsync_v2", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "hardware"),
        ("cuModuleLoadDataEx", 218, "CUDA_ERROR_INVALID_PTX", "error"),
        ("cuModuleLoadDataEx", 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "error"),
        ("cuLaunchKernel", 719, "CUDA_ERROR_LAUNCH_FAILED", "hardware"),
        ("cuLaunchKernel", 702, "CUDA_ERROR_LAUNCH_TIMEOUT", "error"),
        ("cuEventElapsedTime_v2", 600, "CUDA_ERROR_NOT_READY", "error"),
        ("cuMemFree_v2", 214, "CUDA_ERROR_ECC_UNCORRECTABLE", "cleanup"),
    ],
)
def test_each_driver_error_is_reported_in_words_and_memory_is_freed(build_fake, func, code, name, expect):
    lib = build_fake(f'FAKE_FAIL_FUNC="{func}"', f"FAKE_FAIL_CODE={code}")
    r = run_selftest(Machine(), env=gpu_env(lib, None))
    m = by_name(r)
    text = " ".join(r.notes) + " " + " ".join(x.reason for x in r.measurements)
    assert name in text
    if expect == "note":
        assert not r.gpu_tested and "The CPU tier below is the whole self-test" in text
    elif expect == "cleanup":
        assert any("While freeing GPU memory" in n for n in r.notes)
    else:
        err = m["gpu_error"]
        assert err.verdict == "fail" and func in err.reason
        assert ("hardware problem" in err.reason) == (expect == "hardware")
        assert r.verdict == "fail"
    if expect != "cleanup":
        assert live_objects(lib) == 0


def test_pinned_memory_refused_skips_the_copy_test_plainly(build_fake):
    lib = build_fake('FAKE_FAIL_FUNC="cuMemHostAlloc"', "FAKE_FAIL_CODE=2")
    r = run_selftest(Machine(), env=gpu_env(lib, None))
    m = by_name(r)
    assert m["h2d_pinned"].verdict == "skipped" and "ulimit -l" in m["h2d_pinned"].reason
    assert m["matmul_fp32_correct"].verdict == "pass" and "gpu_error" not in m
    assert live_objects(lib) == 0


def test_cublas_that_cannot_start_is_reported(build_fake, build_cublas):
    lib = build_fake()
    r = run_selftest(Machine(), env=gpu_env(lib, None, build_cublas(lib, "FAKE_CUBLAS_FAIL_CREATE")))
    err = by_name(r)["cublas"]
    assert err.verdict == "fail" and "CUBLAS_STATUS_NOT_INITIALIZED" in err.reason
    assert by_name(r)["matmul_fp32_correct"].verdict == "pass"
    assert live_objects(lib) == 0


def test_missing_cublas_is_a_note_not_a_failure(build_fake):
    lib = build_fake()
    r = run_selftest(Machine(), env=gpu_env(lib, None))
    assert any("cuBLAS not found" in n for n in r.notes)
    assert r.verdict == "pass"


def test_cancel_returns_what_was_measured_and_frees_gpu_memory(build_fake, build_cublas):
    lib = build_fake()
    token = CancelToken()

    def progress(label, fraction):
        if label.startswith("matrix test"):
            token.cancel()

    env = gpu_env(lib, None, build_cublas(lib), tiers=("driver", "cublas", "framework", "cpu"))
    r = run_selftest(Machine(), progress=progress, cancel=token, env=env)
    m = by_name(r)
    assert r.cancelled and "h2d_pinned" in m and "d2d" in m
    assert "matmul_fp32_correct" not in m and "cpu_matmul_fp32" not in m
    assert any("Cancelled" in n for n in r.notes)
    assert live_objects(lib) == 0


def test_device_number_out_of_range(build_fake):
    r = run_selftest(Machine(), device=3, env=gpu_env(build_fake(), None))
    sel = by_name(r)["gpu_select"]
    assert sel.verdict == "fail" and "no GPU number 3" in sel.reason and "sees 1" in sel.reason


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="quick, full"):
        run_selftest(Machine(), mode="fast")
