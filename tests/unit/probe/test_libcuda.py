"""libcuda probe against a real shared library: a tiny fake libcuda compiled from C in a temp dir.

The fake's cuInit/cuDriverGetVersion return what the FAKE_* environment variables say, so every CUresult
path is exercised through real ctypes loading and calling.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpusetup.model import Machine
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.libcuda import CU_RESULTS, DEFAULT_CANDIDATES, SOURCE, cu_result
from gpusetup.probe.libcuda import probe as libcuda_probe

FAKE_C = r"""
#include <stdlib.h>
#include <unistd.h>
int cuInit(unsigned int flags) {
    const char *r = getenv("FAKE_CUINIT_RESULT");
    const char *hang = getenv("FAKE_CUINIT_SLEEP");
    if (hang) sleep((unsigned) atoi(hang));
    return (flags == 0 && r) ? atoi(r) : (flags == 0 ? 0 : 1);
}
#ifndef NO_VERSION
int cuDriverGetVersion(int *version) {
    const char *r = getenv("FAKE_CUVERSION_RESULT");
    const char *v = getenv("FAKE_CUDA_VERSION");
    if (r && atoi(r) != 0) return atoi(r);
    *version = v ? atoi(v) : 0;
    return 0;
}
#endif
"""


def _compile(out: Path, *defines: str) -> Path:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (gcc/cc) on PATH to build the fake libcuda")
    src = out.with_suffix(".c")
    src.write_text(FAKE_C)
    subprocess.run(
        [cc, "-shared", "-fPIC", *defines, "-o", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


@pytest.fixture(scope="module")
def fake_libcuda(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("cuda") / "libcuda.so.1")


@pytest.fixture(scope="module")
def fake_libcuda_no_version(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("cuda-nover") / "libcuda.so.1", "-DNO_VERSION")


def _ctx(*candidates: str, loader=None) -> ProbeContext:
    ctx = ProbeContext(library_loader=loader, only=("libcuda",))
    ctx._platform = SimpleNamespace(libcuda_candidates=lambda c: list(candidates))
    return ctx


def test_success_reports_version_and_no_error(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "12080")
    monkeypatch.delenv("FAKE_CUINIT_RESULT", raising=False)
    m = Machine()
    libcuda_probe(_ctx(str(fake_libcuda)), m)
    assert [(r.value, r.source) for r in m.driver.versions] == [("12.8", SOURCE)]
    assert SOURCE == "libcuda (cuDriverGetVersion)"
    assert m.driver.cuda_driver_version == "12.8" and m.driver.cuda_driver_version_source == SOURCE
    assert m.driver.cuinit_error is None
    (ev,) = m.driver.evidence
    assert ev.ok and "CUDA_SUCCESS" in (ev.detail or "")


@pytest.mark.parametrize("code", [100, 34, 3, 46, 802, 803, 804, 999])
def test_cuinit_failure_names(code: int, fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "13020")
    monkeypatch.setenv("FAKE_CUINIT_RESULT", str(code))
    m = Machine()
    libcuda_probe(_ctx(str(fake_libcuda)), m)
    name, meaning = CU_RESULTS[code]
    assert m.driver.cuinit_error == name
    assert m.driver.versions[0].value == "13.2"  # the version is known even when CUDA cannot start
    (ev,) = m.driver.evidence
    assert not ev.ok and ev.error == meaning and f"= {code} ({name})" in (ev.detail or "")


def test_cuda_h_names() -> None:
    """Codes and names as in cuda.h (CUDA 13.0 header); runtime-API-only codes (35) are not CUresults."""
    expected = {
        3: "CUDA_ERROR_NOT_INITIALIZED",
        34: "CUDA_ERROR_STUB_LIBRARY",
        46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
        100: "CUDA_ERROR_NO_DEVICE",
        802: "CUDA_ERROR_SYSTEM_NOT_READY",
        803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        999: "CUDA_ERROR_UNKNOWN",
    }
    assert {c: CU_RESULTS[c][0] for c in expected} == expected
    assert cu_result(35) == ("CUresult 35", "CUDA failed with error code 35.")


def test_version_call_failing(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUVERSION_RESULT", "999")
    monkeypatch.setenv("FAKE_CUINIT_RESULT", "999")
    m = Machine()
    libcuda_probe(_ctx(str(fake_libcuda)), m)
    assert m.driver.versions[0].value is None and "CUDA_ERROR_UNKNOWN" in (m.driver.versions[0].error or "")
    assert m.driver.cuda_driver_version is None and m.driver.cuinit_error == "CUDA_ERROR_UNKNOWN"


def test_nvml_answer_is_kept_first(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "12020")
    monkeypatch.delenv("FAKE_CUINIT_RESULT", raising=False)
    m = Machine()
    m.driver.cuda_driver_version, m.driver.cuda_driver_version_source = "12.4", "nvml"
    libcuda_probe(_ctx(str(fake_libcuda)), m)
    assert m.driver.cuda_driver_version == "12.4" and m.driver.versions[0].value == "12.2"  # both visible


def test_library_without_the_symbol(fake_libcuda_no_version: Path) -> None:
    m = Machine()
    libcuda_probe(_ctx(str(fake_libcuda_no_version)), m)
    (ev,) = m.driver.evidence
    assert not ev.ok and "has no cuDriverGetVersion" in (ev.error or "")
    assert m.driver.cuinit_error is None and m.driver.versions[0].value is None


def test_first_loadable_candidate_wins(
    fake_libcuda: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "11040")
    monkeypatch.delenv("FAKE_CUINIT_RESULT", raising=False)
    m = Machine()
    libcuda_probe(_ctx(str(tmp_path / "missing.so"), str(fake_libcuda)), m)
    assert m.driver.versions[0].value == "11.4"
    assert str(fake_libcuda) in (m.driver.evidence[0].detail or "")


def test_not_found_lists_what_was_tried() -> None:
    tried: list[str] = []

    def loader(name: str) -> ctypes.CDLL:
        tried.append(name)
        raise OSError(f"{name}: cannot open shared object file")

    ctx = ProbeContext(library_loader=loader)
    ctx._platform = SimpleNamespace()  # a platform object without libcuda_candidates → default list
    m = Machine()
    libcuda_probe(ctx, m)
    assert tried == DEFAULT_CANDIDATES
    (ev,) = m.driver.evidence
    assert not ev.ok and "not found" in (ev.error or "") and "nvcuda.dll" in (ev.detail or "")


def test_platform_without_cuda_reports_nothing() -> None:
    m = Machine()
    libcuda_probe(_ctx(), m)  # macOS: the platform lists no candidates at all
    assert m.driver.evidence == [] and m.driver.versions == []


def test_runs_inside_detect(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "12090")
    monkeypatch.setenv("FAKE_CUINIT_RESULT", "100")
    machine = detect(_ctx(str(fake_libcuda), loader=ctypes.CDLL))
    assert machine.probes[0].ok and machine.driver.cuinit_error == "CUDA_ERROR_NO_DEVICE"
    assert machine.driver.cuda_driver_version == "12.9"


def test_hung_cuinit_times_out(fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CUDA_VERSION", "12080")
    monkeypatch.setenv("FAKE_CUINIT_SLEEP", "2")
    ctx = _ctx(str(fake_libcuda))
    ctx.timeout = 0.1
    m = Machine()
    libcuda_probe(ctx, m)
    assert m.driver.cuinit_error == "TIMED_OUT"
    assert m.driver.versions[0].value == "12.8"  # the version call answered before the hang
    assert not m.driver.evidence[-1].ok and m.driver.evidence[-1].error.startswith("timed out")
