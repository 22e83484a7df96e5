"""Issue 23: machine profiles the resolver failed on (facts from PyPI's wheels, TensorFlow's tested
configurations and JAX's install docs), each a regression test that failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.compat import download_size
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

RTX4090_PY315 = {"os": "linux", "arch": "x86_64", "python": "3.15", "driver": "580.95.05",
                 "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}
A100_PY310 = {"os": "linux", "arch": "x86_64", "python": "3.10", "driver": "580.95.05",
              "gpus": [{"vendor": "nvidia", "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]}


# ------------------------------------------------------------------------------ the range crash


@pytest.mark.parametrize(("text", "python", "abi"), [
    ("3.10–3.13", "3.10", "cp310"),  # a GPU build's range after "change Python": the lowest, as install provides
    ("≥ 3.12", "3.12", "cp312"),
    ("3.13t", "3.13t", "cp313t"),
    ("3.12", "3.12", "cp312"),
])
def test_download_target_reads_the_python_a_plan_writes(text: str, python: str, abi: str) -> None:
    """download_size.Target parsed "3.10–3.13" as a version (ValueError: invalid literal for int() … '10–3')."""
    t = download_size.Target(text)
    assert t.python == python
    tags = t.tags()
    assert tags and any(f"-{abi}-manylinux_2_28_x86_64" in tag for tag in tags)
    assert t.markers()["python_version"] == python.rstrip("t")


def test_free_threaded_target_takes_no_abi3_and_no_standard_wheels() -> None:
    tags = download_size.Target("3.13t").tags()
    assert "cp313-cp313t-manylinux_2_28_x86_64" in tags
    assert "cp313-cp313-manylinux_2_28_x86_64" not in tags and "cp39-abi3-manylinux_2_28_x86_64" not in tags
    assert "py3-none-any" in tags


def test_macos_target_allows_only_wheels_its_release_can_load() -> None:
    """torch 2.15 ships only macosx_14_0_arm64; a Mac on 13 cannot load it, one on 14.5 can."""
    assert "cp312-cp312-macosx_14_0_arm64" in download_size.Target("3.12", "macos", "arm64", macos="14.5").tags()
    assert "cp312-cp312-macosx_14_0_arm64" not in download_size.Target("3.12", "macos", "arm64", macos="13.6").tags()


def _index(tmp: Path) -> LocalIndex:
    idx = LocalIndex(tmp)
    for name in ("tensorflow-2.13.1-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                 "jax-0.6.2-py3-none-any.whl"):
        project, version = name.split("-")[:2]
        idx.add(project, build_wheel(tmp, name, metadata(project, version)))
    return idx


@pytest.mark.network
@pytest.mark.parametrize(("profile", "framework"), [(RTX4090_PY315, "tensorflow"), (A100_PY310, "jax")])
def test_plan_for_a_machine_whose_gpu_build_needs_another_python_does_not_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        profile: dict, framework: str) -> None:
    """`plan --for` a TensorFlow machine on Python 3.15 (and JAX on 3.10) stopped with an internal error: the GPU
    build's Python range went to the download-size walk as a version."""
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    f = tmp_path / "m.json"
    f.write_text(json.dumps(profile), encoding="utf-8")
    with serve(_index(tmp_path)) as idx:
        code = main(["plan", "--for", str(f), "-f", framework, "--live-index", idx.url, "--json"])
    out, err = capsys.readouterr()
    assert "internal error" not in err
    doc = json.loads(out)
    assert code in (0, 1) and doc["download"][framework]["source"] in ("index", "estimate")


# ------------------------------------------------------------------- what was missing from the model


def _plan(profile: dict, framework: str, python: str | None = None):
    return resolve(machine_from_data(profile), [framework], python_version=python)[0]


RTX4090 = {"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}


def test_jax_on_python_310_gets_the_last_release_for_it() -> None:
    """pytorch/wheels → jax/wheels: jax 0.6.2 Requires-Python >=3.10, jaxlib and jax-cuda12-plugin 0.6.2 have cp310
    wheels (PyPI). Before: "No JAX release supports Python 3.10" and a CPU build (0.12.0.1) that needs 3.12."""
    p = _plan(A100_PY310, "jax")
    assert p.ok and p.choice.version == "0.6.2" and p.choice.variant == "cuda12"
    assert p.choice.packages == ["jax[cuda12]==0.6.2"]
    cpu = _plan({**A100_PY310, "gpus": []}, "jax")
    assert cpu.choice.packages == ["jax==0.6.2"] and not any("No JAX release" in n for n in cpu.notes)


def test_tensorflow_on_python_38_gets_its_tested_cuda_beside_it() -> None:
    """TensorFlow's tested configurations list 2.13 with CUDA 11.8 and cuDNN 8.6 for Python 3.8-3.11; its pip guide
    then installed CUDA from conda-forge and cuDNN from PyPI (tensorflow/gpu_builds cuda11.8). Before: the CPU
    build of 2.13 and advice to change Python."""
    p = _plan({"os": "linux", "arch": "x86_64", "python": "3.8", "driver": "535.104.05",
               "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]},
              "tensorflow")
    assert p.ok and (p.choice.version, p.choice.variant) == ("2.13", "cuda11.8")
    assert p.choice.packages == ["tensorflow==2.13.*", "nvidia-cudnn-cu11==8.6.0.163"]
    assert p.choice.conda == ["conda install -c conda-forge cudatoolkit=11.8.0"]
    assert any(n.startswith("TensorFlow 2.13 predates the [and-cuda] extra: it needs CUDA 11.8 and cuDNN 8.6")
               for n in p.notes)
    # where [and-cuda] exists for the Python, it wins (newest release first)
    assert _plan({"os": "linux", "arch": "x86_64", "python": "3.11", "driver": "580.95.05", "gpus": [RTX4090]},
                 "tensorflow").choice.variant == "and-cuda"


def test_native_windows_tensorflow_gpu_path_is_the_same_kind_of_build() -> None:
    """Native Windows: TensorFlow's GPU wheels end with 2.10 (CUDA 11.2 + cuDNN 8.1 from conda-forge), the same
    shape of build as the Linux path before [and-cuda]; the range now follows the Windows tested configurations."""
    p = _plan({"os": "windows", "arch": "x86_64", "python": "3.9", "driver": "560.94", "gpus": [RTX4090]}, "tensorflow")
    assert p.ok and (p.choice.version, p.choice.variant) == ("2.10", "cuda11.2")
    assert p.choice.conda == ["conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0"]


def test_jax_on_an_amd_gpu_uses_the_rocm_plugin_pypi_has() -> None:
    """JAX's install page lists AMD GPUs on Linux x86_64 (jax[rocm7-local]); jax 0.12.0.1 asks for
    jax-rocm7-plugin==0.12.0.1.*, which PyPI does not have, so 0.12.0 is chosen and the reason named. Before:
    "gpusetup only plans NVIDIA CUDA builds of JAX"."""
    p = _plan({"os": "linux", "arch": "x86_64", "python": "3.12",
               "gpus": [{"vendor": "amd", "name": "AMD Instinct MI300X", "gfx": "gfx942"}]}, "jax")
    assert p.ok and (p.choice.version, p.choice.variant) == ("0.12.0", "rocm7-local")
    assert p.choice.packages == ["jax[rocm7-local]==0.12.0"]
    (rej,) = [r for r in p.rejected if r.option == "rocm7-local (jax 0.12.0.1)"]
    assert rej.code == "reason.jax-plugin-missing" and "jax-rocm7-plugin==0.12.0.1.*" in rej.reason
    assert any("install ROCm 7 first" in n for n in p.notes)
    windows = _plan({"os": "windows", "arch": "x86_64", "python": "3.12",
                     "gpus": [{"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100"}]}, "jax")
    assert not windows.ok and windows.gpu_choice is None


def test_free_threaded_python_gets_the_last_release_with_its_wheels() -> None:
    """pytorch/wheels: cp313t wheels stop at torch 2.12.0 (2.12.1 has cp314t but not cp313t), so the plan pins
    torch==2.12.0 exactly and the torchvision made for it. Before: "3.13t" was refused as input, and "3.13" got
    torch 2.14."""
    p = _plan({"os": "linux", "arch": "x86_64", "python": "3.13t", "driver": "580.95.05", "gpus": [RTX4090]}, "pytorch")
    assert p.ok and p.choice.version == "2.12" and p.choice.python == "3.13t"
    assert p.choice.packages[:2] == ["torch==2.12.0", "torchvision==0.27.0"]
    assert _plan({"os": "linux", "arch": "x86_64", "python": "3.13", "driver": "580.95.05", "gpus": [RTX4090]},
                 "pytorch").choice.version == "2.15"  # the standard build: cp313 wheels to 2.15
    # --python takes a free-threaded build too
    assert _plan({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.95.05", "gpus": [RTX4090]},
                 "pytorch", python="3.13t").choice.packages[0] == "torch==2.12.0"


def test_plan_cli_accepts_a_free_threaded_python(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.json"
    f.write_text(json.dumps(RTX4090_PY315), encoding="utf-8")
    assert main(["plan", "--for", str(f), "--offline", "--python", "3.13t", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["plans"][0]["choice"]["packages"][0] == "torch==2.12.0"


def test_a_mac_older_than_the_wheels_gets_the_last_release_it_can_load() -> None:
    """pytorch/wheels: torch 2.12-2.15 publish only macosx_14_0_arm64 wheels, 2.11 macosx_11_0: macOS 13.6 gets
    2.11 with the reason for the newer ones; 14.5 gets 2.15."""
    mac = {"os": "macos", "arch": "arm64", "python": "3.12", "gpus": [{"vendor": "apple", "name": "Apple M1"}]}
    old = _plan({**mac, "macos": "13.6"}, "pytorch")
    assert old.ok and old.choice.version == "2.11"
    assert any(r.code == "reason.needs-newer-macos" and r.params["need"] == "14.0" for r in old.rejected)
    assert _plan({**mac, "macos": "14.5"}, "pytorch").choice.version == "2.15"


def test_download_only_asks_pip_for_the_macs_own_release(tmp_path: Path) -> None:
    """install --download-only for another Mac asked pip for macosx_11_0_arm64, which finds nothing for torch 2.15
    (only macosx_14_0_arm64 exists); the platform now comes from the profile's macOS release."""
    from gpusetup.install import build_plan

    mac = machine_from_data({"os": "macos", "arch": "arm64", "python": "3.12", "macos": "14.5",
                             "gpus": [{"vendor": "apple", "name": "Apple M2"}]})
    plans = resolve(mac, ["pytorch"])
    plan = build_plan(plans, mac, download_only=str(tmp_path / "wheels"), portable=True, foreign=True)
    argv = next(s.argv for s in plan.steps if s.id == "download")
    assert argv[argv.index("--platform") + 1] == "macosx_14_0_arm64"
    assert download_size.pip_python("3.13t") == ["--python-version", "3.13", "--implementation", "cp", "--abi", "cp313t"]


def test_gb200_on_driver_570_gets_the_cuda_128_arm_build() -> None:
    """pytorch/arch_lists cu128 linux aarch64 (PyTorch's aarch64 build script: 8.0;9.0;10.0;12.0): the GB200
    (sm_100) runs torch 2.11+cu128 on driver 570 (CUDA 13 builds need 580). Before: "no verified list of the GPUs
    this build supports on Linux aarch64" and the CPU build."""
    p = _plan({"os": "linux", "arch": "aarch64", "python": "3.12", "driver": "570.148.08",
               "gpus": [{"vendor": "nvidia", "name": "NVIDIA GB200", "compute_capability": "10.0"}]}, "pytorch")
    assert p.ok and (p.choice.version, p.choice.variant) == ("2.11", "cu128")
    assert p.choice.index_url == "https://download.pytorch.org/whl/cu128"
