"""frameworks probe: metadata without import, and the deep subprocess probe (broken/hung frameworks)."""

from __future__ import annotations

import os
import stat
import sys
import time

from fakes.fsroot import make_root
from fakes.runner import FakeRunner, Reply

from gpusetup.model import Machine
from gpusetup.probe import ProbeContext
from gpusetup.probe.frameworks import MARK, parse_deep_output, probe
from gpusetup.runner import SubprocessRunner

# torch's generated version.py (the layout of torch 2.x wheels)
TORCH_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '2.6.0+cu126'
debug = False
cuda: Optional[str] = '12.6'
git_version = '1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340'
hip: Optional[str] = None
xpu: Optional[str] = None
"""
TF_BUILD_INFO = """build_info = {'cpu_compiler': '/usr/lib/llvm-18/bin/clang', 'cuda_compute_capabilities': ['sm_60', 'sm_70'], 'cuda_version': '12.5.1', 'cudnn_version': '9', 'is_cuda_build': True, 'is_rocm_build': False, 'is_tensorrt_build': False}
"""


def _site(tmp_path):
    site = tmp_path / "site-packages"
    make_root(
        site,
        {
            "torch-2.6.0+cu126.dist-info/INSTALLER": "uv\n",
            "torch/version.py": TORCH_VERSION_PY,
            "tensorflow-2.18.0.dist-info/METADATA": "",
            "tensorflow/python/platform/build_info.py": TF_BUILD_INFO,
            "jax-0.4.35.dist-info/METADATA": "",
            "jaxlib-0.4.35.dist-info/METADATA": "",
            "jax_cuda12_plugin-0.4.35.dist-info/METADATA": "",
            "cupy_cuda12x-13.3.0.dist-info/METADATA": "",
            "onnxruntime_gpu-1.20.1.dist-info/METADATA": "",
            "onnxruntime/capi/version_info.py": 'use_cuda = True\ncuda_version = "12.2"\ncudnn_version = "9"\n',
            "numpy-2.1.0.dist-info/METADATA": "",
        },
    )
    return site


def _interp_answer(site) -> str:
    return f'{{"executable": "/env/bin/python", "version": "3.12.7", "prefix": "/env", "base_prefix": "/usr", "path": ["{site}"]}}'


def test_metadata_only_no_import(tmp_path):
    site = _site(tmp_path)
    runner = FakeRunner().add(["python", "-c"], Reply(_interp_answer(site)))
    m = Machine()
    probe(ProbeContext(runner=runner, env={}, python="/env/bin/python"), m)
    assert len(runner.calls) == 1  # only the sys.path question, never an import
    (env,) = m.python_envs
    assert (env.executable, env.version, env.is_venv) == ("/env/bin/python", "3.12.7", True)
    fw = {f.name: f for f in env.frameworks}
    assert list(fw) == [
        "torch",
        "tensorflow",
        "jax",
        "jaxlib",
        "jax-cuda12-plugin",
        "cupy-cuda12x",
        "onnxruntime-gpu",
    ]
    t = fw["torch"]
    assert (t.version, t.build, t.build_cuda, t.build_rocm, t.installer, t.probed) == (
        "2.6.0+cu126",
        "cu126",
        "12.6",
        None,
        "uv",
        False,
    )
    assert (fw["tensorflow"].build_cuda, fw["tensorflow"].cudnn) == ("12.5.1", "9")
    assert fw["jax-cuda12-plugin"].build_cuda == "12"
    assert fw["cupy-cuda12x"].build_cuda == "12"
    assert (fw["onnxruntime-gpu"].build_cuda, fw["onnxruntime-gpu"].cudnn) == ("12.2", "9")
    assert fw["jaxlib"].build_cuda is None


def test_cpu_and_rocm_builds_from_local_tags(tmp_path):
    site = tmp_path / "s"
    make_root(
        site, {"torch-2.5.1+rocm6.2.dist-info/METADATA": "", "jaxlib-0.4.13+cuda11.cudnn86.dist-info/M": ""}
    )
    runner = FakeRunner().add(["python", "-c"], Reply(_interp_answer(site)))
    m = Machine()
    probe(ProbeContext(runner=runner, env={}, python="/env/bin/python"), m)
    fw = {f.name: f for f in m.python_envs[0].frameworks}
    assert (fw["torch"].build_cuda, fw["torch"].build_rocm) == (None, "6.2")
    assert (fw["jaxlib"].build_cuda, fw["jaxlib"].cudnn) == ("11", "8.6")


def test_interpreter_that_does_not_answer(tmp_path):
    runner = FakeRunner().add(["python", "-c"], Reply("", "Traceback ...\nSyntaxError: bad\n", 1))
    m = Machine()
    probe(ProbeContext(runner=runner, env={}, python="/env/bin/python"), m)
    (env,) = m.python_envs
    assert env.frameworks == [] and env.evidence[0].ok is False


def test_deep_output_parsing():
    assert parse_deep_output(f'noise\n{MARK}{{"gpu_available": false}}\n') == {"gpu_available": False}
    assert parse_deep_output("Segmentation fault") is None
    assert parse_deep_output(f"{MARK}{{broken") is None


def _wrapper_python(tmp_path, site) -> str:
    """A different interpreter: this Python with the fake site-packages on its path."""
    exe = tmp_path / "python"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{site}" exec "{sys.executable}" -S "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_deep_probe_real_subprocesses_broken_and_hung(tmp_path):
    site = tmp_path / "site"
    make_root(
        site,
        {
            # A torch stand-in answering the calls the deep probe makes, reporting no usable GPU.
            "torch-2.6.0+cpu.dist-info/METADATA": "",
            "torch/__init__.py": (
                "__version__ = '2.6.0+cpu'\n"
                "class version:\n    cuda = None\n    hip = None\n"
                "class cuda:\n    is_available = staticmethod(lambda: False)\n"
                "    device_count = staticmethod(lambda: 0)\n    get_arch_list = staticmethod(lambda: [])\n"
                "class backends:\n    class cudnn:\n        is_available = staticmethod(lambda: False)\n"
                "print('warning: noise on stdout')\n"
            ),
            "tensorflow-2.18.0.dist-info/METADATA": "",
            "tensorflow/__init__.py": "raise ImportError('libcudart.so.12: cannot open shared object file')\n",
            "cupy_cuda12x-13.3.0.dist-info/METADATA": "",
            "cupy/__init__.py": "import time\ntime.sleep(30)\n",
        },
    )
    ctx = ProbeContext(
        runner=SubprocessRunner(),
        env=dict(os.environ),
        python=_wrapper_python(tmp_path, site),
        deep=True,
        timeout=0.75,
    )
    m = Machine()
    start = time.perf_counter()
    probe(ctx, m)
    assert time.perf_counter() - start < 8
    fw = {f.name: f for f in m.python_envs[0].frameworks}
    assert fw["torch"].probed and fw["torch"].gpu_available is False and fw["torch"].device_count == 0
    assert fw["torch"].error is None and fw["torch"].build_cuda is None
    assert "libcudart.so.12" in fw["tensorflow"].error
    assert fw["cupy-cuda12x"].probed and "timed out" in fw["cupy-cuda12x"].error


def test_conda_build_string(tmp_path):
    prefix = tmp_path / "conda"
    site = prefix / "lib/python3.11/site-packages"
    make_root(
        prefix,
        {
            "conda-meta/pytorch-2.1.0-py3.11_cuda12.1_cudnn8.9.2_0.json": "{}",
            "conda-meta/python-3.11.5-h955ad1f_0.json": "{}",
            "lib/python3.11/site-packages/torch-2.1.0.dist-info/INSTALLER": "conda\n",
        },
    )
    answer = f'{{"executable": "{prefix}/bin/python", "version": "3.11.5", "prefix": "{prefix}", "base_prefix": "{prefix}", "path": ["{site}"]}}'
    runner = FakeRunner().add(["python", "-c"], Reply(answer))
    m = Machine()
    probe(ProbeContext(runner=runner, env={}, python=f"{prefix}/bin/python"), m)
    (env,) = m.python_envs
    (t,) = env.frameworks
    assert env.is_conda is True and env.is_venv is False
    assert (t.build, t.build_cuda, t.installer) == ("py3.11_cuda12.1_cudnn8.9.2_0", "12.1", "conda")
