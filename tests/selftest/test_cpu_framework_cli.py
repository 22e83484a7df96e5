"""CPU tier (real), framework tier (real subprocess with this interpreter), and `gpusetup selftest`."""

from __future__ import annotations

import json
import sys

import jsonschema
import pytest
from conftest import live_objects, tiny_sizes

from gpusetup.cancel import Cancelled, CancelToken
from gpusetup.cli import main
from gpusetup.messages import render
from gpusetup.model import Machine
from gpusetup.resources import resource
from gpusetup.runner import SubprocessRunner
from gpusetup.selftest import SelfTestEnv, base, cpu, framework, run_selftest


def test_no_gpu_machine_runs_the_cpu_tier_for_real_and_says_so(tmp_path):
    env = SelfTestEnv(cuda_candidates=[str(tmp_path / "libcuda.so.1")], sizes=tiny_sizes(),
                      frameworks=("numpy", "torch"))
    r = run_selftest(Machine(), env=env)
    m = {x.name: x for x in r.measurements}
    assert not r.gpu_tested and r.gpu_name is None
    assert "No NVIDIA GPU can be tested" in r.notes[0] and "the whole self-test" in r.notes[0]
    for name in ("cpu_matmul_fp32", "cpu_copy", "cpu_triad_2pass"):
        assert m[name].value > 0 and m[name].verdict == "info" and m[name].tier == "cpu"
        # its reason as data: the same English, and Chinese words for the Verify page
        said = {"code": m[name].code, "params": m[name].params}
        assert m[name].code.startswith("selftest.cpu.") and render(said) == m[name].reason
        assert "STREAM" in m[name].reason or "logical CPUs" in m[name].reason
        assert "逻辑 CPU" in render(said, "zh_CN") or "数组" in render(said, "zh_CN")
    # The framework check ran in a real subprocess of this interpreter.
    assert m["framework_numpy"].verdict == "pass" and m["framework_numpy"].value > 0
    if "torch" not in sys.modules:
        try:
            import torch  # noqa: F401
        except ImportError:
            assert m["framework_torch"].verdict == "skipped"
            assert "not installed" in m["framework_torch"].reason
    assert "gpu_cpu_speedup" not in m  # nothing to compare without a GPU
    assert r.verdict == "pass"


def test_cpu_tier_cancel_stops_before_measuring():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        cpu.run(tiny_sizes(), token, lambda *_: None)


def test_without_numpy_here_the_cpu_tier_runs_in_the_environment_under_test(tmp_path, monkeypatch):
    """The packaged app carries no numpy: the baseline is measured by the target environment's interpreter
    (here a real child process of this Python, which has numpy), and one without numpy is named plainly."""
    monkeypatch.setattr(cpu, "_numpy_here", lambda: False)
    assert cpu.run(tiny_sizes(), CancelToken(), lambda *_: None)[0].code == "selftest.cpu.no-numpy"
    got = {m.name: m for m in cpu.run(tiny_sizes(), CancelToken(), lambda *_: None, python=sys.executable)}
    assert got["cpu_matmul_fp32"].value > 0 and got["cpu_copy"].value > 0
    assert got["cpu_triad_2pass"].verdict == "info"  # the child computed the triad right
    import numpy

    assert got["cpu_matmul_fp32"].params["numpy"] == numpy.__version__  # measured by numpy, in the child
    import venv

    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)  # a real environment without numpy
    py = str(bare / "bin" / "python")
    (skipped,) = cpu.run(tiny_sizes(), CancelToken(), lambda *_: None, python=py)
    assert skipped.verdict == "skipped" and skipped.code == "selftest.cpu.no-numpy-in"
    assert py in skipped.reason and "numpy" in skipped.params["why"]


def test_last_level_cache_and_stream_size(tmp_path):
    d = tmp_path / "sys/devices/system/cpu/cpu0/cache"
    for i, size in enumerate(["48K", "2048K", "32768K"]):
        (d / f"index{i}").mkdir(parents=True)
        (d / f"index{i}" / "size").write_text(size + "\n")
    assert cpu.last_level_cache_bytes(tmp_path) == 32 * base.MIB
    assert cpu.last_level_cache_bytes(tmp_path / "nowhere") is None
    quick = base.Sizes.for_mode("quick")
    assert cpu.stream_bytes(quick, 32 * base.MIB, None) == 128 * base.MIB
    assert cpu.stream_bytes(quick, 260 * base.MIB, None) == 128 * base.MIB  # capped: VMs report host caches
    assert cpu.stream_bytes(quick, 32 * base.MIB, 1200) == 100 * base.MIB


def _fw(entry: dict, gpu_expected: bool = True):
    return framework._measure(entry, "/envs/x/bin/python", gpu_expected)


def test_framework_verdicts_from_check_output():
    good = {"name": "torch", "installed": True, "version": "2.9.1+cu128", "build_cuda": "12.8", "gpu": True,
            "device": "NVIDIA GeForce RTX 4080 SUPER", "matmul_err_ratio": 0.02, "matmul_tflops": 48.1,
            "conv_rel_err": 3e-7, "conv_backend": "cuDNN 91002"}
    m = _fw(good)  # an older check's output (matmul_tflops, no "on"): still read
    assert m.verdict == "pass" and m.value == 48.1 and "cuDNN 91002" in m.reason
    assert _fw({**good, "matmul_err_ratio": 40.0}).verdict == "fail"
    assert _fw({**good, "conv_rel_err": 0.2}).verdict == "fail"
    cpu_build = {"name": "torch", "installed": True, "version": "2.9.1+cpu", "build_cuda": None, "gpu": False,
                 "on": "cpu", "device": "cpu", "n": 1024, "matmul_err_ratio": 0.01, "matmul_flops": 4.2e10,
                 "conv_rel_err": 1e-7, "conv_backend": "native"}
    m = _fw(cpu_build)
    assert m.verdict == "fail" and "CPU-only build" in m.reason and "gpusetup plan" in m.reason
    on_cpu = _fw(cpu_build, gpu_expected=False)  # no NVIDIA GPU here: the processor is the proof
    assert on_cpu.verdict == "pass" and on_cpu.value == 42.0 and on_cpu.unit == "GFLOP/s" and on_cpu.device is None
    blind = {"name": "tensorflow", "installed": True, "version": "2.20.0", "build_cuda": "12.5.1", "gpu": False}
    assert "does not see the GPU" in _fw(blind).reason
    assert _fw({"name": "jax", "installed": False}).verdict == "skipped"
    assert _fw({"name": "jax", "installed": True, "error": "RuntimeError: boom"}).verdict == "fail"


def test_framework_check_with_a_broken_interpreter(tmp_path):
    ms, notes = framework.run(SubprocessRunner(), str(tmp_path / "nopython"), ["torch"], 64, 10, True)
    assert ms[0].verdict == "fail" and "could not run" in ms[0].reason and notes == []


@pytest.fixture
def fake_gpu_cli(build_fake, build_cublas, monkeypatch):
    """`gpusetup selftest` end to end with the fake libraries found through the environment overrides."""
    lib = build_fake()
    monkeypatch.setenv("GPUSETUP_LIBCUDA", str(lib))
    monkeypatch.setenv("GPUSETUP_LIBCUBLAS", str(build_cublas(lib)))
    monkeypatch.setattr(base.Sizes, "for_mode", classmethod(lambda cls, mode: tiny_sizes()))
    return lib


def test_cli_text_shows_numbers_peaks_fractions_verdicts_and_speedup(fake_gpu_cli, capsys):
    rc = main(["selftest", "--quick"])
    out = capsys.readouterr().out
    assert "NVIDIA GeForce RTX 4080 SUPER (GPU 0)" in out
    assert "host→GPU copy, pinned memory" in out and "25.1 GB/s  of 31.5 rated (80%)" in out
    assert "[PASS]" in out and "healthy" in out
    assert "cuBLAS FP16 GEMM (tensor cores)" in out and "110 TFLOP/s  of 104.4 rated (105%)" in out
    assert "GPU/CPU speed-up (FP32 matmul)" in out
    assert "Result: PASS" in out
    assert rc == 0
    assert live_objects(fake_gpu_cli) == 0


def test_cli_json_validates_and_carries_the_selftest(fake_gpu_cli, capsys):
    rc = main(["selftest", "--json", "--device", "0"])
    data = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads(resource("schema", "report.schema.json").read_text())).validate(data)
    st = data["selftest"]
    assert st["gpu_tested"] and st["verdict"] == "pass" and rc == 0
    names = {m["name"] for m in st["measurements"]}
    assert {"h2d_pinned", "d2d", "matmul_repeat_bitexact", "cublas_bf16", "cpu_matmul_fp32"} <= names


def test_cli_wrong_device_exits_2_and_bad_device_exits_3(fake_gpu_cli, capsys):
    assert main(["selftest", "--device", "4"]) == 2
    assert "no GPU number 4" in capsys.readouterr().out
    assert main(["selftest", "--device", "-1"]) == 3


class _BrokenRunner:
    def run(self, argv, timeout=0, env=None, input=None):
        raise RuntimeError("runner exploded")

    def which(self, name):
        return None


def test_a_bug_in_one_tier_keeps_the_other_results(tmp_path):
    env = SelfTestEnv(cuda_candidates=[str(tmp_path / "none.so")], sizes=tiny_sizes(), runner=_BrokenRunner())
    r = run_selftest(Machine(), env=env)
    m = {x.name: x for x in r.measurements}
    assert m["framework_error"].verdict == "fail" and "runner exploded" in m["framework_error"].reason
    assert m["cpu_matmul_fp32"].value > 0
    assert r.verdict == "fail"


def test_numa_helpers():
    from gpusetup.selftest import _cpulist, _near_gpu

    assert _cpulist("0-3,8,10-11\n") == {0, 1, 2, 3, 8, 10, 11}
    with _near_gpu("0000:ff:1f.7"):  # no such device: affinity untouched
        pass


def test_ctrl_c_stops_after_the_current_step_frees_memory_and_prints_partial_results(
        fake_gpu_cli, monkeypatch, capsys):
    import os
    import signal

    from gpusetup.selftest import bandwidth

    real = bandwidth.run

    def copy_then_ctrl_c(ctx, host):
        out = real(ctx, host)
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C during the copy test
        return out

    monkeypatch.setattr(bandwidth, "run", copy_then_ctrl_c)
    rc = main(["selftest"])
    out = capsys.readouterr().out
    assert rc == 130
    assert "host→GPU copy, pinned memory" in out and "FP32 matmul" not in out
    assert "CANCELLED" in out and "freed" in out
    assert live_objects(fake_gpu_cli) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_framework_check_runs_from_source_text_when_no_script_file(monkeypatch, tmp_path):
    """Frozen builds have no loose fwcheck.py: the script text is passed with -c instead."""
    monkeypatch.setattr(framework, "SCRIPT", tmp_path / "missing.py")
    ms, _ = framework.run(SubprocessRunner(), sys.executable, ["numpy"], 32, 60, False)
    assert ms[0].name == "framework_numpy" and ms[0].verdict == "pass"
