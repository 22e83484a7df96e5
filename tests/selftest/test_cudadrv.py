"""The ctypes driver layer against the fake libcuda built from C, and the shipped PTX against ptxas."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess

import pytest
from conftest import live_objects

from gpusetup.resources import resource
from gpusetup.selftest import cudadrv
from gpusetup.selftest.matmul import load_ptx


def test_every_curesult_has_a_name_and_plain_words():
    for code, (name, words) in cudadrv.CU_RESULTS.items():
        assert words, name
        assert name.startswith("CUDA_"), code
        assert cudadrv.result_message(code), name
    assert cudadrv.result_name(100) == "CUDA_ERROR_NO_DEVICE"
    assert "--gpus all" in cudadrv.result_message(100)
    assert cudadrv.result_name(12345) == "CUresult 12345"
    assert cudadrv.result_message(12345)


def test_session_round_trip_and_cleanup(build_fake):
    lib = build_fake()
    drv = cudadrv.CudaDriver.load(candidates=[str(lib)])
    assert drv.version() == 13000
    assert drv.fallbacks_used == {}
    drv.init()
    info = drv.device_info(0)
    assert (info.name, info.compute_capability, info.sm_count) == ("NVIDIA GeForce RTX 4080 SUPER", "8.9", 80)
    assert info.pci_bus_id == "0000:01:00.0"
    s = drv.open(0)
    free, total = s.mem_info()
    assert 0 < free <= total
    dev = s.alloc(1 << 20)
    host = s.host_alloc(1 << 20)
    ctypes.memset(host, 0x5A, 1 << 20)
    s.htod(dev, host, 1 << 20)
    back = ctypes.create_string_buffer(1 << 20)
    s.dtoh(ctypes.addressof(back), dev, 1 << 20)
    assert back.raw == b"\x5a" * (1 << 20)
    s.load_ptx(load_ptx())
    s.event()
    s.stream()
    assert live_objects(lib) >= 5
    assert s.close() == []
    assert live_objects(lib) == 0


def test_old_driver_uses_the_unversioned_fallbacks_and_jits_isa_6_0(build_fake):
    """An R384-era driver (CUDA 9.0) lacks cuEventElapsedTime_v2 and cuDevicePrimaryCtxRelease_v2."""
    lib = build_fake("FAKE_OLD_DRIVER")
    drv = cudadrv.CudaDriver.load(candidates=[str(lib)])
    assert drv.version() == 9000
    assert drv.fallbacks_used == {"cuEventElapsedTime_v2": "cuEventElapsedTime",
                                  "cuDevicePrimaryCtxRelease_v2": "cuDevicePrimaryCtxRelease"}
    with drv.open(0) as s:
        module = s.load_ptx(load_ptx())  # the shipped PTX is ISA 6.0: an R384 driver accepts it
        s.function(module, "sgemm_tiled")
        a, b = s.event(), s.event()
        s.record(a)
        s.record(b)
        assert s.elapsed_ms(a, b) >= 0.0
    assert live_objects(lib) == 0


def test_ptx_newer_than_the_driver_is_reported_with_the_jit_log(build_fake):
    lib = build_fake("FAKE_OLD_DRIVER")
    drv = cudadrv.CudaDriver.load(candidates=[str(lib)])
    new_ptx = re.sub(r"(?m)^\.version .*$", ".version 9.0", load_ptx())
    with drv.open(0) as s, pytest.raises(cudadrv.CudaError) as err:
        s.load_ptx(new_ptx)
    assert err.value.name == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
    assert "Update the NVIDIA driver" in str(err.value)
    assert "Unsupported .version 9.0" in err.value.detail


def test_unknown_kernel_name_is_not_found(build_fake):
    drv = cudadrv.CudaDriver.load(candidates=[str(build_fake())])
    with drv.open(0) as s, pytest.raises(cudadrv.CudaError) as err:
        s.function(s.load_ptx(load_ptx()), "no_such_kernel")
    assert err.value.name == "CUDA_ERROR_NOT_FOUND"


def test_pre_3_2_driver_without_v2_memory_entry_points_is_too_old(build_fake):
    lib = build_fake("FAKE_NO_MEM_V2")
    with pytest.raises(cudadrv.DriverTooOld, match="cuMemAlloc_v2"):
        cudadrv.CudaDriver.load(candidates=[str(lib)])


def test_missing_library_is_driver_not_found(tmp_path):
    with pytest.raises(cudadrv.DriverNotFound, match="not installed"):
        cudadrv.CudaDriver.load(candidates=[str(tmp_path / "libcuda.so.1")])


def test_injected_loader_is_used(build_fake):
    seen = []

    def loader(name):
        seen.append(name)
        return ctypes.CDLL(str(build_fake()))

    drv = cudadrv.CudaDriver.load(loader, ["libcuda.so.1"])
    assert seen == ["libcuda.so.1"] and drv.path == "libcuda.so.1"


def test_default_candidates_never_pick_the_unversioned_stub():
    assert "libcuda.so" not in cudadrv.default_candidates("linux")
    assert cudadrv.default_candidates("linux")[:2] == ["libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"]
    assert cudadrv.default_candidates("win32") == ["nvcuda.dll"]


# ------------------------------------------------------------------------------------------- PTX


def _ptxas_archs(ptxas: str) -> list[str]:
    text = subprocess.run([ptxas, "--help"], capture_output=True, text=True, check=True).stdout
    start = text.index("--gpu-name")
    allowed = text[text.index("Allowed values", start):text.index("Default value", start)]
    return sorted(set(re.findall(r"'(sm_\d+)'", allowed)), key=lambda a: int(a[3:]))


@pytest.mark.parametrize("ptx", sorted(resource("kernels").glob("*.ptx")), ids=lambda p: p.name)
def test_shipped_ptx_has_an_old_header_and_assembles(ptx, tmp_path):
    text = ptx.read_text()
    assert re.search(r"(?m)^\.version 6\.0$", text) and re.search(r"(?m)^\.target sm_50$", text)
    assert (ptx.with_suffix(".cu")).exists(), "the .cu source must sit beside the PTX"
    ptxas = shutil.which("ptxas") or (shutil.which("/usr/local/cuda/bin/ptxas"))
    if ptxas is None:
        pytest.skip("ptxas not installed (CUDA toolkit): cannot assemble the PTX")
    archs = _ptxas_archs(ptxas)
    # sm_50 itself when this ptxas still supports it (CUDA <= 12); CUDA 13's lowest is sm_75.
    targets = ["sm_50" if "sm_50" in archs else archs[0], "sm_90" if "sm_90" in archs else archs[-1]]
    for arch in targets:
        res = subprocess.run([ptxas, f"-arch={arch}", "-o", str(tmp_path / f"{arch}.cubin"), str(ptx)],
                             capture_output=True, text=True)
        assert res.returncode == 0, f"{ptx.name} for {arch}: {res.stderr}"
        assert (tmp_path / f"{arch}.cubin").stat().st_size > 0


def _entry_params(ptx: str, name: str) -> list[str]:
    m = re.search(rf"\.entry {name}\((.*?)\)", ptx, re.S)
    assert m, name
    return re.findall(r"\.param \.(\w+)", m.group(1))


def test_kernel_parameters_match_what_the_launches_pass():
    """The ctypes argument lists in matmul.py must have the PTX parameter sizes, in order."""
    ptx = load_ptx()
    # sgemm_tiled(A, B, C: CUdeviceptr; M, N, K: c_int)
    assert _entry_params(ptx, "sgemm_tiled") == ["u64", "u64", "u64", "u32", "u32", "u32"]
    # compare_f32(ref, x: CUdeviceptr; n: c_uint64; counts: CUdeviceptr)
    assert _entry_params(ptx, "compare_f32") == ["u64", "u64", "u64", "u64"]
    assert ctypes.sizeof(cudadrv.CUdeviceptr) == 8 and ctypes.sizeof(ctypes.c_int) == 4
