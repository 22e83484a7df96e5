"""The core's answers a beginner reads: one sentence per framework the user chose, on the GPU or the processor,
in the checked environment, with what to offer; one line about the graphics card; recorded measurements
(demonstrations) judged like live ones.

The framework check's own output comes from real runs where one exists (tests/fixtures/fwcheck: jax[cpu] 0.10.2
and tensorflow-cpu 2.21.0, whole and with part of their files gone); no GPU recording of it exists (see that README), so the GPU entries below
are built in the test from the check's fields, with the card's name as the driver reports it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gui.beginner_text import english_runs

from gpusetup.gui.demo import demo_machine, load_demo
from gpusetup.messages import render
from gpusetup.model import Measurement, SelfTestResult, from_dict
from gpusetup.runner import CommandResult as RunResult
from gpusetup.selftest import framework
from gpusetup.selftest.proof import answers, headline, offer_command, summary
from gpusetup.selftest.recorded import rate_recorded

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fwcheck"
JAX_CPU = FIXTURES / "jax-0.10.2-cpu__python-3.11__debian-12-2vcpu.txt"
JAX_BROKEN = FIXTURES / "jax-0.10.2-jaxlib-files-missing__python-3.11__debian-12.txt"
TF_CPU = FIXTURES / "tensorflow-cpu-2.21.0__python-3.11__debian-12-2vcpu.txt"
TF_BROKEN = FIXTURES / "tensorflow-cpu-2.21.0-python-subpackage-missing__python-3.11__debian-12.txt"
CJK = re.compile(r"[\u4e00-\u9fff]")


class Replay:
    """A runner answering the framework check with a recorded stdout (and remembering what it was asked)."""

    def __init__(self, stdout: str) -> None:
        self.stdout, self.argv = stdout, []

    def run(self, argv, timeout=0, env=None, input=None):  # noqa: ANN001, A002 - Runner's signature
        self.argv = list(argv)
        return RunResult(argv=list(argv), returncode=0, stdout=self.stdout, stderr="")

    def which(self, name):  # noqa: ANN001
        return None


def proved(recording: Path, frameworks, gpu_expected: bool = False, python: str = "/home/u/jax-env/bin/python",
           cpu_gflops: float | None = None) -> SelfTestResult:
    runner = Replay(recording.read_text(encoding="utf-8"))
    ms, _ = framework.run(runner, python, frameworks, 2048, 60, gpu_expected)
    if cpu_gflops is not None:
        ms.append(Measurement(name="cpu_matmul_fp32", value=cpu_gflops, unit="GFLOP/s", tier="cpu",
                              params={"n": 1024}))
    return SelfTestResult(measurements=ms, framework_python=python, verdict="pass")


def no_english(text: str) -> None:
    assert CJK.search(text), text
    runs = english_runs(text, ["JAX", "PyTorch", "TensorFlow", "numpy", "NVIDIA", "GFLOP/s", "TFLOP/s"])
    assert not runs, (text, runs)


def gpu_entry(**kw) -> dict:
    """The check's fields for a framework that saw a GPU (built here: no GPU recording of the check exists)."""
    base = {"name": "torch", "installed": True, "version": "2.9.1+cu128", "build_cuda": "12.8", "gpu": True,
            "on": "gpu", "device": "NVIDIA GeForce RTX 4090", "n": 2048, "matmul_err_ratio": 0.02,
            "matmul_flops": 67.0e12, "conv_rel_err": 3e-7, "conv_backend": "cuDNN 91002", "dists": {"torch": "2.9.1"}}
    base.update(kw)
    return base


def test_jax_on_a_machine_without_an_nvidia_gpu_works_on_the_processor_in_one_sentence() -> None:
    r = proved(JAX_CPU, ["jax"], cpu_gflops=218.0)
    (m,) = r.measurements[:1]
    assert m.name == "framework_jax" and m.verdict == "pass" and m.unit == "GFLOP/s" and m.value == 273.6
    assert m.device is None and m.rated is None  # the processor: no rated peak, compared with numpy instead
    (a,) = answers(r)
    assert a.proven and a.kind == "pass" and a.offer == "" and a.python == "/home/u/jax-env/bin/python"
    assert render(a.sentence) == "JAX works. It ran on the processor (this computer has no NVIDIA GPU): 274 GFLOP/s."
    zh = render(a.sentence, "zh_CN")
    assert zh == "JAX 运行正常。它在 CPU 上运行（这台电脑没有 NVIDIA 显卡）：274 GFLOP/s。"
    no_english(zh)
    details = [render(d) for d in a.details]
    assert details[0].startswith("jax 0.10.2 computed correctly on the processor: an FP32 1024×1024 matrix multiply")
    assert "Checked with /home/u/jax-env/bin/python." in details
    assert "For comparison, numpy on the same processor: 218 GFLOP/s (1024×1024 matrix multiply)." in details
    for d in a.details:
        no_english(re.sub(r"/\S+", "", render(d, "zh_CN")))  # the path stays a path


def test_the_same_jax_on_a_gpu_machine_does_not_use_the_gpu_and_is_offered_a_repair(tmp_path: Path) -> None:
    env = tmp_path / "jax env"
    (env / "bin").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    r = proved(JAX_CPU, ["jax"], gpu_expected=True, python=str(env / "bin" / "python"))
    (a,) = answers(r)
    assert a.status == "no-gpu-use" and a.kind == "fail" and a.offer == "repair" and not a.proven
    assert render(a.sentence) == "JAX is installed but does not see the NVIDIA graphics card, so it cannot use it."
    assert offer_command(a) == f"gpusetup install --framework jax --target 'venv:{env}'"


def test_broken_jax_is_installed_but_does_not_start_and_torch_is_named_only_when_chosen() -> None:
    chosen = proved(JAX_BROKEN, ["jax", "torch"])
    jax, torch = answers(chosen)
    assert (jax.status, jax.kind, jax.offer) == ("broken", "fail", "repair")
    assert render(jax.sentence) == ("JAX is installed but does not start: ModuleNotFoundError: jax requires jaxlib to "
                                    "be installed. See https://github.com/jax-ml/jax#installation for installation "
                                    "instructions.")
    assert render(jax.sentence, "zh_CN").startswith("JAX 已安装，但无法启动：ModuleNotFoundError: jax requires jaxlib")
    assert (torch.status, torch.offer) == ("not-installed", "install")
    assert render(torch.sentence) == "PyTorch is not installed in /home/u/jax-env/bin/python."
    # nothing chosen: only what is installed there is answered — never "PyTorch is not installed"
    (only,) = answers(proved(JAX_BROKEN, None))
    assert only.framework == "jax" and only.status == "broken"
    # chosen afterwards on the Done page: the same frameworks, never another one
    assert [a.framework for a in answers(chosen, ["pytorch"])] == ["torch"]


def test_a_broken_tensorflow_as_the_issue_reported_it_is_not_called_not_installed() -> None:
    """Issue 21: after a resumed install `import tensorflow` failed with "No module named 'tensorflow.python'" and
    the proof said "没有安装 tensorflow". Recorded: tensorflow-cpu 2.21.0 with that subpackage gone."""
    r = proved(TF_BROKEN, ["tensorflow", "jax"], python="/home/u/tf/bin/python")
    tf, jax = answers(r)
    assert tf.status == "broken" and tf.offer == "repair" and jax.status == "not-installed"
    assert render(tf.sentence) == ("TensorFlow is installed but does not start: ModuleNotFoundError: No module named "
                                   "'tensorflow.python'.")
    assert "没有安装" not in render(tf.sentence, "zh_CN") and "已安装，但无法启动" in render(tf.sentence, "zh_CN")
    assert render(tf.details[0]).startswith("tensorflow 2.21.0 is installed but does not start")  # its dist's version


def test_tensorflow_on_the_processor() -> None:
    (a,) = answers(proved(TF_CPU, ["tensorflow"], python="/home/u/tf/bin/python"))
    assert render(a.sentence) == "TensorFlow works. It ran on the processor (this computer has no NVIDIA GPU): 111 GFLOP/s."
    assert "convolution (oneDNN/Eigen) matches" in render(a.details[0])


@pytest.mark.parametrize(("flops", "status", "words"), [
    (67.0e12, "gpu", "PyTorch works on your NVIDIA GeForce RTX 4090: 81% of its rated speed."),
    (20.0e12, "gpu-slow", "PyTorch works on your NVIDIA GeForce RTX 4090, but at only 24% of its rated speed."),
])
def test_on_the_gpu_the_speed_is_compared_with_the_rated_peak(flops: float, status: str, words: str) -> None:
    m = framework._measure(gpu_entry(matmul_flops=flops), "/e/bin/python", True)
    assert m.rated == 82.6 and m.rated_basis == "datasheet" and m.unit == "TFLOP/s" and m.device == 0
    r = SelfTestResult(measurements=[m], framework_python="/e/bin/python", gpu_tested=True)
    (a,) = answers(r)
    assert a.status == status and render(a.sentence) == words
    assert "datasheet of the GeForce RTX 4090" in render(a.details[0])
    no_english(render(a.sentence, "zh_CN"))


def test_gpu_answers_without_a_rated_peak_with_wrong_results_and_with_a_cpu_only_build() -> None:
    unknown = framework._measure(gpu_entry(device="NVIDIA Made-Up 9"), "/e/bin/python", True)
    wrong = framework._measure(gpu_entry(matmul_err_ratio=40.0), "/e/bin/python", True)
    cpu_build = framework._measure({"name": "torch", "installed": True, "version": "2.9.1+cpu", "build_cuda": None,
                                    "gpu": False, "on": "cpu", "device": "cpu", "n": 1024, "matmul_err_ratio": 0.01,
                                    "matmul_flops": 5e10, "conv_rel_err": 1e-7}, "/e/bin/python", True)
    a, b, c = (answers(SelfTestResult(measurements=[m], framework_python="/e/bin/python"))[0]
               for m in (unknown, wrong, cpu_build))
    assert render(a.sentence) == ("PyTorch works on your NVIDIA Made-Up 9: 67 TFLOP/s (no rated speed is known for "
                                  "this card).")
    assert b.status == "wrong" and b.kind == "fail" and "matmul differs" in render(b.details[0])
    assert c.status == "no-gpu-use" and c.offer == "repair"
    assert render(c.sentence) == ("PyTorch works only on the processor: this is a CPU-only build, which cannot use "
                                  "the NVIDIA graphics card.")


def test_stopped_or_not_run_frameworks_are_not_checked_and_none_installed_is_said_once() -> None:
    stopped = SelfTestResult(cancelled=True)
    (a,) = answers(stopped, ["jax"])
    assert a.status == "not-checked" and render(a.sentence) == "JAX was not checked: the self-test was stopped."
    assert answers(None, ["pytorch"])[0].status == "not-checked"
    assert answers(stopped) == [] and render(summary(stopped)) == "the self-test was stopped"
    none = framework.run(Replay('GPUSETUP-FWCHECK: {"python": "3.11.7", "executable": "/e/bin/python", "frameworks": '
                                '[{"name": "torch", "installed": false}, {"name": "tensorflow", "installed": false}, '
                                '{"name": "jax", "installed": false}]}\n'), "/e/bin/python", None, 64, 9, False)[0]
    r = SelfTestResult(measurements=none, framework_python="/e/bin/python")
    assert answers(r) == [] and [m.name for m in none] == ["framework_check"]
    assert render(summary(r)) == "none of torch, tensorflow, jax is installed in /e/bin/python, so no framework was checked"


def test_a_check_that_cannot_run_answers_each_chosen_framework() -> None:
    class Dead(Replay):
        def run(self, argv, timeout=0, env=None, input=None):  # noqa: ANN001, A002
            return RunResult(argv=list(argv), returncode=127, stdout="", stderr="", error="No such file or directory")

    ms, _ = framework.run(Dead(""), "/gone/bin/python", ["pytorch", "jax"], 64, 9, False)
    a, b = answers(SelfTestResult(measurements=ms, framework_python="/gone/bin/python"))
    assert (a.framework, b.framework) == ("torch", "jax") and a.status == b.status == "not-checked"
    assert render(a.sentence).startswith("PyTorch was not checked: the framework check could not run with /gone/bin/python")


def test_a_framework_failure_does_not_make_the_graphics_card_look_broken() -> None:
    gpu = Measurement(name="d2d", value=900.0, unit="GB/s", rated=1000.0, fraction=0.9, verdict="pass", tier="driver")
    bad = framework._measure({"name": "tensorflow", "installed": True, "stage": "import", "dists": {"tensorflow": "2.20.0"},
                              "error": "ImportError: x"}, "/e/bin/python", True)
    r = SelfTestResult(measurements=[gpu, bad], gpu_tested=True, verdict="fail", gpu_name="NVIDIA GeForce RTX 4090")
    assert render(headline(r)) == "Your NVIDIA GeForce RTX 4090 works: 90% of its rated memory speed."


def test_recorded_a100_memory_speed_is_judged_against_its_rated_peak() -> None:
    recorded = from_dict(SelfTestResult, load_demo("a100")["selftest"])
    rated = rate_recorded(recorded, demo_machine("a100"))
    d2d = next(m for m in rated.measurements if m.name == "d2d")
    assert d2d.value == 1157.5 and d2d.rated and d2d.fraction == d2d.value / d2d.rated
    assert d2d.verdict in ("pass", "warn") and "recorded by bandwidthTest" in d2d.reason
    said = {"code": d2d.code, "params": d2d.params}  # and as data, worded in Chinese for the Verify page
    assert render(said) == d2d.reason and "由 bandwidthTest 记录" in render(said, "zh_CN")
    assert next(m for m in recorded.measurements if m.name == "d2d").rated is None  # the input is not changed
    line = headline(rated)
    pct = round(d2d.fraction * 100)
    assert line is not None and line.params == {"gpu": "NVIDIA A100-SXM4-40GB", "percent": pct}
    en = render(line, "en")
    assert en.startswith("Your NVIDIA A100-SXM4-40GB works") and f"{pct}% of its rated memory speed" in en
    assert f"{pct}%" in render(line, "zh_CN") and "额定显存速度" in render(line, "zh_CN")


def test_no_headline_without_a_tested_gpu_and_a_failure_says_so() -> None:
    assert headline(SelfTestResult(gpu_tested=False)) is None
    bad = SelfTestResult(gpu_tested=True, verdict="fail", gpu_name="NVIDIA GeForce RTX 3060")
    assert render(headline(bad), "en").startswith("Your NVIDIA GeForce RTX 3060 has a problem")


def test_the_reports_carry_the_same_sentences() -> None:
    from gpusetup.model import Machine, Report
    from gpusetup.report import render as report

    r = proved(JAX_CPU, ["jax"], cpu_gflops=218.0)
    rep = Report(machine=Machine(), selftest=r)
    sentence = "JAX works. It ran on the processor (this computer has no NVIDIA GPU): 274 GFLOP/s."
    assert f"  ✓ {sentence}" in report(rep, "text").splitlines()
    assert f"- ✓ {sentence}" in report(rep, "markdown").splitlines()
    assert f'<li class="pass">{sentence}</li>' in report(rep, "html")
    from gpusetup.i18n import set_output_language

    set_output_language("zh_CN")  # as `gpusetup --lang zh_CN`; tests/conftest.py sets English back
    assert "  ✓ JAX 运行正常。它在 CPU 上运行（这台电脑没有 NVIDIA 显卡）：274 GFLOP/s。" in report(rep, "text").splitlines()


def test_with_the_fake_gpu_the_framework_is_rated_against_the_card_the_driver_tier_measured(build_fake, nvml_4080s):
    """The whole self-test through the fake libcuda (the RTX 4080 SUPER of the real NVML captures): the framework
    tier gets the driver tier's card (its spec row, compute capability and SM count) for the rated peak. The
    framework check's output is built here (no GPU recording of it exists), for the card the driver names."""
    from conftest import gpu_env

    from gpusetup.model import Machine
    from gpusetup.selftest import run_selftest

    entry = gpu_entry(device="NVIDIA GeForce RTX 4080 SUPER", matmul_flops=30.0e12, cc=None, sm_count=None)
    env = gpu_env(build_fake(), nvml_4080s, tiers=("driver", "framework"))
    env.frameworks, env.python = ("pytorch",), "/home/u/gpu-env/bin/python"
    env.runner = Replay("GPUSETUP-FWCHECK: " + __import__("json").dumps(
        {"python": "3.12.3", "executable": env.python, "frameworks": [entry]}) + "\n")
    r = run_selftest(Machine(), env=env)
    assert r.gpu_tested and r.gpu_name == "NVIDIA GeForce RTX 4080 SUPER"
    m = next(x for x in r.measurements if x.name == "framework_torch")
    assert m.rated == 52.2 and m.device == 0 and m.verdict == "pass", (m.rated, m.reason)
    (a,) = answers(r)
    assert render(a.sentence) == "PyTorch works on your NVIDIA GeForce RTX 4080 SUPER: 57% of its rated speed."
    assert env.runner.argv[-1] == "torch", "the chosen framework, by its import name"
    assert render(headline(r)).startswith("Your NVIDIA GeForce RTX 4080 SUPER works")
