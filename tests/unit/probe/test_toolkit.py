"""toolkit probe: CUDA toolkits, loader libraries, nvidia-* wheels and CUDA env vars (fake roots + recordings)."""

from __future__ import annotations

import sys

from fakes.fsroot import fixture, make_root
from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.model import Machine
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.toolkit import parse_ldconfig, parse_nvcc_version, probe, toolkit_version

NVCC = "recorded-local/nvcc-version__cuda-13.0.88__debian-12-container.txt"
LDCONFIG = "recorded-local/ldconfig-p__cuda-13.0-toolkit-no-driver__debian-12.txt"


def _ctx(root, runner=None, env=None, python=None) -> ProbeContext:
    return ProbeContext(
        runner=runner or FakeRunner(), root=root, env=env or {}, os_name="linux", python=python
    )


def test_nvcc_version_recorded_here():
    assert parse_nvcc_version(fixture(NVCC)) == "13.0.88"
    assert parse_nvcc_version("Cuda compilation tools, release 11.8") == "11.8"
    assert parse_nvcc_version("bash: nvcc: command not found") is None


def test_toolkit_version_sources(tmp_path):
    make_root(
        tmp_path,
        {
            "/a/version.json": '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}',
            "/b/version.txt": "CUDA Version 11.8.89\n",
            "/c/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/METADATA": "",
            "/cuda-12.1/bin/x": "",
        },
    )
    assert toolkit_version(tmp_path / "a") == ("12.4.1", "version.json")
    assert toolkit_version(tmp_path / "b") == ("11.8.89", "version.txt")
    assert toolkit_version(tmp_path / "c") == ("13.0.88", "dist-info (nvidia_cuda_nvcc)")
    assert toolkit_version(tmp_path / "cuda-12.1") == ("12.1", "folder name")


def test_toolkits_symlink_env_and_nvcc(tmp_path):
    make_root(
        tmp_path,
        {
            "/usr/local/cuda-13.0/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/METADATA": "",
            "/usr/local/cuda-13.0/bin/nvcc": "",
            "/usr/local/cuda-12.4/version.json": '{"cuda": {"version": "12.4.1"}}',
            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127": "",
        },
        {"/usr/local/cuda": str(tmp_path / "usr/local/cuda-13.0")},
    )
    runner = FakeRunner().add(["nvcc", "--version"], Reply(fixture(NVCC)))
    env = {
        "CUDA_HOME": "/usr/local/cuda-12.4",
        "CUDA_PATH": "/nowhere",
        "CUDA_VISIBLE_DEVICES": "",
        "HOME": "/x",
    }
    m = Machine()
    probe(_ctx(tmp_path, runner, env), m)
    tks = {t.path: t for t in m.cuda.toolkits}
    assert set(tks) == {"/usr/local/cuda-12.4", "/usr/local/cuda-13.0"}
    t13 = tks["/usr/local/cuda-13.0"]
    assert t13.version == "13.0.88" and "nvcc on PATH" in t13.source and "/usr/local/cuda →" in t13.source
    assert (
        "CUDA_HOME" in tks["/usr/local/cuda-12.4"].source and tks["/usr/local/cuda-12.4"].version == "12.4.1"
    )
    assert any(not e.ok and "CUDA_PATH=/nowhere" in e.error for e in m.cuda.evidence)
    # empty CUDA_VISIBLE_DEVICES hides every GPU: it must be reported, empty value and all
    assert m.cuda.env == {
        "CUDA_HOME": "/usr/local/cuda-12.4",
        "CUDA_PATH": "/nowhere",
        "CUDA_VISIBLE_DEVICES": "",
    }


def test_nvcc_elsewhere_is_its_own_toolkit(tmp_path):
    runner = FakeRunner().add(["nvcc", "--version"], Reply(fixture(NVCC)))
    tks = detect(
        _ctx(tmp_path, runner).__class__(runner=runner, root=tmp_path, env={}, only=("toolkit",))
    ).cuda.toolkits
    assert [(t.version, t.source, t.nvcc) for t in tks] == [("13.0.88", "nvcc on PATH", "/usr/bin/nvcc")]


def test_libraries_from_recorded_ldconfig(tmp_path):
    runner = FakeRunner().add(["ldconfig", "-p"], Reply(fixture(LDCONFIG)))
    m = Machine()
    probe(_ctx(tmp_path, runner), m)
    libs = {(lib.name, lib.source) for lib in m.cuda.libraries}
    assert ("libcudart", "ldconfig") in libs and ("libcupti", "ldconfig") in libs
    assert not any(lib.name in ("libcuda", "libnvidia-ml") for lib in m.cuda.libraries)  # no driver here
    cudart = next(lib for lib in m.cuda.libraries if lib.name == "libcudart")
    assert cudart.path == "/usr/local/cuda-13.0/lib/libcudart.so.13" and cudart.version == "13"


def test_ld_library_path_and_real_versions(tmp_path):
    make_root(
        tmp_path,
        {"/opt/nv/libcudnn.so.9.1.0": "", "/opt/nv/libnccl.so.2.21.5": "", "/opt/nv/libfoo.so": ""},
        {"/opt/nv/libcudnn.so.9": "libcudnn.so.9.1.0"},
    )
    m = Machine()
    probe(_ctx(tmp_path, env={"LD_LIBRARY_PATH": "/opt/nv::/missing"}), m)
    got = {(lib.name, str(lib.version)) for lib in m.cuda.libraries if lib.source == "LD_LIBRARY_PATH"}
    assert got == {("libcudnn", "9.1.0"), ("libnccl", "2.21.5")}


def test_nvidia_wheels_of_another_interpreter(tmp_path):
    site = tmp_path / "venv/lib/python3.12/site-packages"
    make_root(
        site,
        {
            "nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA": "",
            "nvidia/cudnn/lib/libcudnn.so.9": "",
            "nvidia_nccl_cu12-2.21.5.dist-info/METADATA": "",
            "requests-2.32.3.dist-info/METADATA": "",
        },
    )
    answer = (
        '{"executable": "/v/bin/python", "version": "3.12.7", "prefix": "/v", "base_prefix": "/usr", '
        f'"path": ["", "{site}"]}}'
    )
    runner = FakeRunner().add(["python3.12", "-c"], Reply(answer))
    m = Machine()
    probe(_ctx(tmp_path, runner, python="/v/bin/python3.12"), m)
    assert [(w.name, w.version) for w in m.cuda.nvidia_wheels] == [
        ("nvidia-cudnn-cu12", "9.1.0.70"),
        ("nvidia-nccl-cu12", "2.21.5"),
    ]
    cudnn = next(lib for lib in m.cuda.libraries if lib.name == "libcudnn")
    assert cudnn.source == "pip wheel nvidia-cudnn-cu12" and cudnn.path.endswith("nvidia/cudnn/lib")


def test_this_interpreter_is_read_in_process(tmp_path):
    runner = FakeRunner()
    m = Machine()
    probe(_ctx(tmp_path, runner, python=sys.executable), m)
    assert not any(c[0] == sys.executable for c in runner.calls)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_garbled_ldconfig_and_nvcc(text):
    base = fixture(LDCONFIG)[:2000]
    parse_ldconfig(base[: len(text)] + text)
    parse_nvcc_version(fixture(NVCC)[: len(text)] + text)


def test_windows_toolkit_folder_name(tmp_path):
    make_root(tmp_path, {"/v12.4/bin/x": ""})
    assert toolkit_version(tmp_path / "v12.4") == ("12.4", "folder name")
