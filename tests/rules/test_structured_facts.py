"""F13, F21 and F23 from live facts (not only from pasted error text).

Inputs are real where a recording exists: the CUDA 13.0.88 ``nvcc --version`` and ``gcc --version`` of the
project's build machine (tests/fixtures/recorded-local), the GPUs/driver/toolkit/GCC that ``analyze`` reads from
real ``collect_env`` reports (tests/fixtures/collect-env). Site-packages are laid out as pip writes them, with
Requires-Dist lines in the two formats real torch/TensorFlow wheels use.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes.fsroot import fixture, make_root
from fakes.runner import FakeRunner, Reply

from gpusetup.analyze import analyze_paths
from gpusetup.model import FrameworkInstall, Library, Machine, PipPackage, PythonEnv, Toolkit
from gpusetup.probe import ProbeContext
from gpusetup.probe import frameworks as fw_probe
from gpusetup.probe import toolkit as tk_probe
from gpusetup.rules import evaluate
from gpusetup.rules._util import cudnn_version, host_compiler_limit, requirement_parts, satisfies
from gpusetup.versions import Version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CE = FIXTURES / "collect-env"
NVCC_13 = "recorded-local/nvcc-version__cuda-13.0.88__debian-12-container.txt"
# `gcc --version` on the build machine (Debian 12), 2026-11-22, first two lines verbatim.
GCC_12_LOCAL = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n"
# The GCC a public Fedora 44 report names (GCC 16.1.1), in Fedora's `gcc --version` format.
GCC_16_FEDORA = "gcc (GCC) 16.1.1 20260521 (Red Hat 16.1.1-1)\n"
RTX3090 = CE / "ubuntu-22.04__3x-rtx-3090__driver-515.65.01__torch-1.12.1+cu116__pytorch-issue-86556.txt"
WIN_CPU = CE / "windows10-home__cpu-only__torch-1.4.0+cpu__pytorch-issue-33473.txt"


def _ids(machine: Machine) -> list[str]:
    return [f.id for f in evaluate(machine)]


def _finding(machine: Machine, fid: str):
    return next((f for f in evaluate(machine) if f.id == fid), None)


# ------------------------------------------------------------------------------------------- F13


def _toolkit_machine(tmp_path: Path, gcc_out: str, env: dict[str, str] | None = None,
                     compiler: str = "gcc") -> Machine:
    """The real toolkit probe over the recorded CUDA 13.0.88 nvcc and a recorded/quoted compiler answer."""
    runner = FakeRunner().add(["nvcc", "--version"], Reply(fixture(NVCC_13)))
    runner.add([compiler, "--version"], Reply(gcc_out))
    ctx = ProbeContext(runner=runner, root=tmp_path, env=env or {}, python=None)
    m = Machine()
    tk_probe.probe(ctx, m)
    return m


def test_f13_gcc_newer_than_nvcc_13_accepts(tmp_path: Path) -> None:
    m = _toolkit_machine(tmp_path, GCC_16_FEDORA)
    assert [t.version for t in m.cuda.toolkits] == ["13.0.88"] and m.cuda.host_compiler == "gcc 16.1.1"
    f = _finding(m, "host-compiler-unsupported")
    assert f is not None and f.catalogue == "F13"
    assert "GCC 16" in f.title and "13.0.88" in f.title and "15" in f.title
    assert "g++-15" in f.fix and "NVCC_CCBIN" in f.fix and "-ccbin" in f.fix
    # CUDA 13.4's nvcc accepts GCC 16 (host_compilers, read from NVIDIA's nvidia-cuda-crt 13.4.92 wheel on 2026-11-27)
    assert "CUDA 13.4 or newer, which accepts GCC 16" in f.fix
    assert any("accepts GCC up to 15" in e for e in f.evidence)
    assert "To be sure" not in f.detail  # the 13.0 row is verified (read from its host_config.h)


def test_f13_silent_for_the_build_machine_pair(tmp_path: Path) -> None:
    m = _toolkit_machine(tmp_path, GCC_12_LOCAL)
    assert m.cuda.host_compiler == "gcc 12.2.0"
    assert "host-compiler-unsupported" not in _ids(m)


def test_f13_ccbin_override_is_the_compiler_checked(tmp_path: Path) -> None:
    m = _toolkit_machine(tmp_path, "g++-15 (GCC) 15.1.1 20250521\n", env={"NVCC_CCBIN": "g++-15"},
                         compiler="g++-15")
    assert m.cuda.host_compiler == "gcc 15.1.1" and m.cuda.env["NVCC_CCBIN"] == "g++-15"
    assert "host-compiler-unsupported" not in _ids(m)
    assert tk_probe.host_compiler_command({"NVCC_PREPEND_FLAGS": "-ccbin /usr/bin/g++-13"}) == "/usr/bin/g++-13"
    assert tk_probe.host_compiler_command({}) == "gcc"


def test_f13_older_toolkit_suggests_the_first_that_accepts_and_the_other_installed_one() -> None:
    m = Machine()
    m.system.distro_id = "ubuntu"
    m.cuda.toolkits = [Toolkit("/usr/local/cuda-12.4", "12.4.1", "/usr/local/cuda*, nvcc on PATH"),
                       Toolkit("/usr/local/cuda-13.0", "13.0.88", "/usr/local/cuda*")]
    m.cuda.host_compiler = "gcc 14.2.0"
    f = _finding(m, "host-compiler-unsupported")
    assert f is not None and "CUDA 12.4.1" in f.title and "GCC 13 at most" in f.title
    assert "sudo apt install gcc-13 g++-13" in f.fix and "CUDA 12.8 or newer" in f.fix
    assert "CUDA_HOME=/usr/local/cuda-13.0" in f.fix
    assert "To be sure" not in f.detail  # the 12.4 row is read from NVIDIA's nvcc 12.4 wheel (verified, 2026-11-27)


@pytest.mark.parametrize("toolkits,compiler", [
    ([], "gcc 16.1.1"),                                     # no toolkit: nothing to build with
    ([Toolkit("/usr/local/cuda-13.0", "13.0.88")], None),    # compiler unknown
    ([Toolkit("/usr/local/cuda-14.0", "14.0")], "gcc 17.1.0"),  # toolkit newer than the table: no guess
    ([Toolkit("/usr/local/cuda-10.2", "10.2")], "gcc 12.2.0"),  # toolkit older than the table
    ([Toolkit("/usr/local/cuda", None)], "gcc 16.1.1"),      # toolkit version unknown
])
def test_f13_silent_without_facts(toolkits: list[Toolkit], compiler: str | None) -> None:
    m = Machine()
    m.cuda.toolkits, m.cuda.host_compiler = toolkits, compiler
    assert "host-compiler-unsupported" not in _ids(m)


@pytest.mark.parametrize("path", sorted(CE.glob("*.txt")), ids=lambda p: p.name[:40])
def test_f13_real_collect_env_pairs_are_accepted(path: Path) -> None:
    analysis = analyze_paths([str(path)])
    assert "host-compiler-unsupported" not in [f.id for f in analysis.findings]


def test_f13_collect_env_pairs_are_really_compared() -> None:
    """The negatives above are not vacuous: these real reports carry a toolkit and GCC the table knows."""
    m = analyze_paths([str(RTX3090)]).machine
    assert m.cuda.host_compiler == "gcc 11.2.0"
    assert [host_compiler_limit(t.version)["gcc_max"] for t in m.cuda.toolkits] == [11]
    m.cuda.host_compiler = "gcc 12.1.0"  # what Ubuntu 22.04's gcc-12 package would give: CUDA 11.6 refuses it
    assert "host-compiler-unsupported" in _ids(m)
    f = _finding(m, "host-compiler-unsupported")
    assert f is not None and "To be sure" in f.detail  # the 11.6 row still rests on secondary sources


def test_f13_pasted_text_still_works() -> None:
    analysis = analyze_paths([str(FIXTURES / "recorded-issues" / "F13__gcc-later-than-8-unsupported__tkdnn-134.txt")])
    assert analysis.findings[0].id == "host-compiler-unsupported" and "GCC up to 8" in analysis.findings[0].title


# ------------------------------------------------------------------------------------------- F21

TORCH_CPU_METADATA = "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0+cpu\nRequires-Dist: filelock\n"
TORCH_CU121_METADATA = (
    "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0+cu121\n"
    'Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"\n'
)


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    site = tmp_path / "site-packages"
    make_root(site, files)
    return site


def _env_from_site(site: Path) -> tuple[PythonEnv, list[PipPackage]]:
    """The real frameworks and toolkit (pip wheels) probes over a site-packages folder."""
    answer = (f'{{"executable": "/home/u/ComfyUI/venv/bin/python", "version": "3.11.9", "prefix": "/home/u/'
              f'ComfyUI/venv", "base_prefix": "/usr", "path": ["{site}"]}}')
    ctx = ProbeContext(runner=FakeRunner().add(["python", "-c"], Reply(answer)), env={},
                       python="/home/u/ComfyUI/venv/bin/python")
    m = Machine()
    fw_probe.probe(ctx, m)
    wheels, _ = tk_probe.pip_wheels(ctx)
    return m.python_envs[0], wheels


def _replaced_site(tmp_path: Path) -> Path:
    site = _site(tmp_path, {
        "torch-2.4.0+cpu.dist-info/METADATA": TORCH_CPU_METADATA,
        "torch-2.4.0+cpu.dist-info/INSTALLER": "pip\n",
        "torch-2.4.0+cpu.dist-info/RECORD": "torch/__init__.py,,\n",
        "torch/version.py": "__version__ = '2.4.0+cpu'\ncuda: Optional[str] = None\n",
        "torchvision-0.19.0+cu121.dist-info/RECORD": "",
        "torchvision-0.19.0+cu121.dist-info/INSTALLER": "pip\n",
        "nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD": "",
        "nvidia_cublas_cu12-12.1.3.1.dist-info/RECORD": "",
    })
    old = 1_767_225_600  # torchvision installed first; torch re-installed a day later
    os.utime(site / "torchvision-0.19.0+cu121.dist-info" / "RECORD", (old, old))
    os.utime(site / "torch-2.4.0+cpu.dist-info" / "RECORD", (old + 86400, old + 86400))
    return site


def test_frameworks_probe_reads_the_new_dist_info_facts(tmp_path: Path) -> None:
    site = _replaced_site(tmp_path)
    (site / "torch-2.4.0+cpu.dist-info" / "direct_url.json").write_text(
        '{"url": "file:///tmp/torch-2.4.0+cpu-cp311-cp311-linux_x86_64.whl", "archive_info": {}}')
    env, wheels = _env_from_site(site)
    (torch,) = env.frameworks
    assert torch.version == "2.4.0+cpu" and torch.installer == "pip"
    assert torch.installed_at == "2026-01-02T00:00:00Z"
    assert torch.direct_url == "file:///tmp/torch-2.4.0+cpu-cp311-cp311-linux_x86_64.whl"
    assert torch.cudnn_requirement is None
    assert [(c.name, c.version, c.installed_at) for c in env.companions] == [
        ("torchvision", "0.19.0+cu121", "2026-01-01T00:00:00Z")]
    assert {w.name for w in wheels} == {"nvidia-cudnn-cu12", "nvidia-cublas-cu12"}


def _gpu_machine_with(env: PythonEnv, wheels: list[PipPackage]) -> Machine:
    """GPUs and driver from a real collect_env report (3x RTX 3090, driver 515.65.01), this Python env."""
    m = analyze_paths([str(RTX3090)]).machine
    assert m.nvidia_gpus and m.driver.version == "515.65.01"
    m.python_envs = [env]
    m.cuda.nvidia_wheels = wheels
    m.messages, m.kernel_log = [], []
    return m


def test_f21_cpu_torch_replaced_the_cuda_build(tmp_path: Path) -> None:
    env, wheels = _env_from_site(_replaced_site(tmp_path))
    m = _gpu_machine_with(env, wheels)
    ids = _ids(m)
    assert "cuda-build-replaced" in ids and "torch-cpu-build" not in ids  # F21 explains it more precisely
    f = _finding(m, "cuda-build-replaced")
    assert f.catalogue == "F21" and "2.4.0+cpu" in f.title
    assert "gpusetup plan --framework pytorch --python 3.11" in f.fix
    assert "gpusetup install --framework pytorch --target venv:/home/u/ComfyUI/venv" in f.fix
    assert "gpusetup-constraints.txt" in f.fix and "pip.conf" in f.fix
    assert any("torchvision 0.19.0+cu121 is still the CUDA build" in e for e in f.evidence)
    assert any("nvidia-cudnn-cu12 9.1.0.70" in e for e in f.evidence)
    assert any("installed earlier" in e for e in f.evidence)


def test_f21_needs_a_usable_gpu(tmp_path: Path) -> None:
    env, wheels = _env_from_site(_replaced_site(tmp_path))
    m = _gpu_machine_with(env, wheels)
    m.gpus, m.driver.version, m.driver.versions = [], None, []
    assert "cuda-build-replaced" not in _ids(m)


def test_f21_cpu_torch_chosen_from_the_start_is_f19(tmp_path: Path) -> None:
    site = _site(tmp_path, {
        "torch-2.4.0+cpu.dist-info/METADATA": TORCH_CPU_METADATA,
        "torchvision-0.19.0+cpu.dist-info/RECORD": "",
    })
    env, wheels = _env_from_site(site)
    m = _gpu_machine_with(env, wheels)
    ids = _ids(m)
    assert "torch-cpu-build" in ids and "cuda-build-replaced" not in ids


def test_f21_real_cpu_only_machine_is_silent() -> None:
    """A real Windows report: torch 1.4.0+cpu with torchvision 0.5.0+cpu and no NVIDIA GPU."""
    ids = [f.id for f in analyze_paths([str(WIN_CPU)]).findings]
    assert "cuda-build-replaced" not in ids


def test_f21_pasted_text_still_works() -> None:
    p = FIXTURES / "recorded-issues" / "F21__comfyui-manager-uninstalled-cu121-torch__comfyui-manager-1136.txt"
    assert analyze_paths([str(p)]).findings[0].id == "cuda-build-replaced"


# ------------------------------------------------------------------------------------------- F23


def test_cudnn_requirement_is_read_from_both_metadata_formats(tmp_path: Path) -> None:
    site = _site(tmp_path, {
        "torch-2.4.0+cu121.dist-info/METADATA": TORCH_CU121_METADATA,
        # older wheels wrote the specifier in parentheses (the torch 2.1 format)
        "tensorflow-2.18.0.dist-info/METADATA": (
            "Name: tensorflow\nVersion: 2.18.0\n"
            'Requires-Dist: nvidia-cudnn-cu12 (==9.3.0.75) ; extra == "and-cuda"\n'),
        "jax_cuda12_plugin-0.6.0.dist-info/METADATA": (
            'Requires-Dist: nvidia-cudnn-cu12<10.0,>=9.8; extra == "with-cuda"\n'),
    })
    env, _ = _env_from_site(site)
    reqs = {f.name: f.cudnn_requirement for f in env.frameworks}
    assert reqs == {"torch": "nvidia-cudnn-cu12==9.1.0.70", "tensorflow": "nvidia-cudnn-cu12==9.3.0.75",
                    "jax-cuda12-plugin": "nvidia-cudnn-cu12<10.0,>=9.8"}
    name, specs = requirement_parts(reqs["jax-cuda12-plugin"])
    assert name == "nvidia-cudnn-cu12" and satisfies("9.10.2.21", specs) and not satisfies("9.7.1", specs)
    assert cudnn_version("90100") == "9.1.0" and cudnn_version("8906") == "8.9.6"


def _torch_cu121(cudnn_wheel: str | None, **kw: object) -> Machine:
    m = Machine()
    m.system.os = "linux"
    fw = FrameworkInstall("torch", "2.4.0+cu121", build_cuda="12.1", build="cu121", installer="pip",
                          cudnn_requirement="nvidia-cudnn-cu12==9.1.0.70")
    for k, v in kw.items():
        setattr(fw, k, v)
    m.python_envs = [PythonEnv("/env/bin/python", "3.11.9", frameworks=[fw])]
    if cudnn_wheel:
        m.cuda.nvidia_wheels = [PipPackage("nvidia-cudnn-cu12", cudnn_wheel)]
        m.cuda.libraries = [Library("libcudnn", cudnn_wheel, "/env/lib/python3.11/site-packages/nvidia/cudnn/lib",
                                    "pip wheel nvidia-cudnn-cu12")]
    return m


def test_f23_wheel_older_than_the_build_requires() -> None:
    f = _finding(_torch_cu121("9.0.0.312"), "cudnn-too-old")
    assert f is not None and f.catalogue == "F23" and "9.0.0.312" in f.title and "9.1.0.70" in f.title
    assert 'pip install "nvidia-cudnn-cu12==9.1.0.70"' in f.fix


@pytest.mark.parametrize("wheel", ["9.1.0.70", "9.5.1.17"])
def test_f23_matching_or_newer_wheel_is_silent(wheel: str) -> None:
    assert "cudnn-too-old" not in _ids(_torch_cu121(wheel))


def _ld_machine(tmp_path: Path, real_name: str) -> Machine:
    """The real toolkit probe over an LD_LIBRARY_PATH folder holding a system cuDNN."""
    lib = "/usr/local/cuda-12.1/lib64"
    make_root(tmp_path, {f"{lib}/{real_name}": ""}, {f"{lib}/libcudnn.so.{real_name.split('.')[2]}": real_name})
    ctx = ProbeContext(runner=FakeRunner(), root=tmp_path, env={"LD_LIBRARY_PATH": lib}, python=None)
    m = _torch_cu121("9.1.0.70")
    m.cuda.libraries += tk_probe.ld_library_path_libraries(ctx)
    return m


def test_f23_system_cudnn_on_ld_library_path_shadows_the_wheel(tmp_path: Path) -> None:
    m = _ld_machine(tmp_path, "libcudnn.so.9.0.0")
    assert any(lib.source == "LD_LIBRARY_PATH" and lib.version == "9.0.0" for lib in m.cuda.libraries)
    f = _finding(m, "cudnn-too-old")
    assert f is not None and "(9.0.0)" in f.title
    assert "/usr/local/cuda-12.1/lib64" in f.fix and "LD_LIBRARY_PATH" in f.fix


def test_f23_other_major_on_ld_library_path_is_not_shadowing(tmp_path: Path) -> None:
    m = _ld_machine(tmp_path, "libcudnn.so.8.9.7")  # a different soname (.so.8): torch never loads it
    assert "cudnn-too-old" not in _ids(m)


def test_f23_deep_probe_loaded_cudnn() -> None:
    assert "cudnn-too-old" in _ids(_torch_cu121(None, probed=True, cudnn="90000"))
    assert "cudnn-too-old" not in _ids(_torch_cu121(None, probed=True, cudnn="90100"))


def test_f23_tensorflow_tested_cudnn_vs_system_copy() -> None:
    m = Machine()
    m.system.os = "linux"
    m.python_envs = [PythonEnv("/env/bin/python", "3.10.12", frameworks=[
        FrameworkInstall("tensorflow", "2.12.0", build_cuda="11.8", cudnn="8")])]
    m.cuda.libraries = [Library("libcudnn", "8.2.1", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "ldconfig")]
    f = _finding(m, "cudnn-too-old")
    assert f is not None and "8.2.1" in f.title and "8.6" in f.title
    m.cuda.libraries[0].version = Version("8.9.7")
    assert "cudnn-too-old" not in _ids(m)


def test_f23_pasted_text_still_works() -> None:
    p = FIXTURES / "recorded-issues" / "F23__loaded-cudnn-8.0.4-compiled-8.1.0__deeplab2-66.txt"
    f = analyze_paths([str(p)]).findings[0]
    assert f.id == "cudnn-too-old" and "8.0.4" in f.title
