"""Self-test test kit: fake libcuda/libcublas built from C with the system compiler, real NVML captures.

The fakes are compiled once per set of -D flags per test session (``build_fake``). Telemetry comes from
the real ``nvidia-smi -q`` captures of an RTX 4080 SUPER at idle and under load (tests/fixtures), served
through the NVML facade fake; :class:`PhasedTelemetry` answers with the *load* capture only while the fake
libcuda has work queued since the last event record, so a test can tell whether the link was read during
the copy or before it.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fakes.nvml import FakeNvml

from gpusetup.probe.smi import parse_smi_q
from gpusetup.selftest import SelfTestEnv
from gpusetup.selftest.base import MIB, Sizes
from gpusetup.selftest.telemetry import NvmlTelemetry

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
CAPTURE_4080S = (FIXTURES / "nvidia-smi-text/full-captures/"
                 "linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05__nvidia_gpu_exporter.txt")


def compiler() -> str | None:
    return shutil.which("gcc") or shutil.which("cc")


@pytest.fixture(scope="session")
def build_fake(tmp_path_factory):
    """build_fake(*defines) -> path of a fake libcuda.so built with those -D flags (cached)."""
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler (gcc/cc) on PATH: the fake libcuda.so cannot be built")
    out = tmp_path_factory.mktemp("fakecuda")
    cache: dict[tuple[str, ...], Path] = {}

    def build(*defines: str) -> Path:
        key = tuple(defines)
        if key not in cache:
            name = "libcuda_" + (re.sub(r"[^A-Za-z0-9]+", "_", "_".join(defines)) or "default") + ".so"
            path = out / name
            subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", *[f"-D{d}" for d in defines],
                            "-o", str(path), str(HERE / "fake_libcuda.c"), "-lm"], check=True)
            cache[key] = path
        return cache[key]

    return build


@pytest.fixture(scope="session")
def build_cublas(tmp_path_factory, build_fake):
    """build_cublas(libcuda_path, *defines) -> path of a fake libcublas.so linked against that libcuda."""
    cc = compiler()
    out = tmp_path_factory.mktemp("fakecublas")
    cache: dict[tuple[str, ...], Path] = {}

    def build(libcuda: Path, *defines: str) -> Path:
        key = (str(libcuda), *defines)
        if key not in cache:
            path = out / f"libcublas_{len(cache)}.so"
            subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", *[f"-D{d}" for d in defines],
                            "-o", str(path), str(HERE / "fake_libcublas.c"), str(libcuda), "-lm"], check=True)
            cache[key] = path
        return cache[key]

    return build


def tiny_sizes(**kw) -> Sizes:
    base = dict(copy_bytes=8 * MIB, copy_warmup=2, copy_loops=3, samples=3, gemm_n=64, gemm_repeats=4,
                check_points=64, cublas_n=128, cublas_loops=2, cpu_gemm_n=128, cpu_stream_bytes=8 * MIB,
                cpu_stream_cap=8 * MIB, framework_n=64, framework_timeout=120.0, gemm_loops=3)
    base.update(kw)
    return Sizes(**base)


def capture_section(title: str) -> str:
    text = CAPTURE_4080S.read_text(encoding="utf-8")
    start = text.index(f"# {title}\n")
    body = text[start:].split("\n", 3)[3]  # skip title, command and rule lines
    return body.split("\n####", 1)[0]


@pytest.fixture(scope="session")
def nvml_4080s() -> dict[str, FakeNvml]:
    """Real RTX 4080 SUPER NVML state: idle (link Gen1, SM 210 MHz) and under load (Gen4, 2805 MHz)."""
    return {state: FakeNvml.from_snapshot(parse_smi_q(capture_section(f"{state} :: query (-q)")))
            for state in ("idle", "load")}


class PhasedTelemetry:
    """Load capture while the fake GPU has queued work, idle capture otherwise."""

    def __init__(self, lib_path: Path, nvml: dict[str, FakeNvml], bus: str | None) -> None:
        self.lib = ctypes.CDLL(str(lib_path))
        self.idle = NvmlTelemetry(nvml["idle"], bus, 0)
        self.load = NvmlTelemetry(nvml["load"], bus, 0)
        self.busy: list[bool] = []

    def sample(self):
        busy = self.lib.fake_ops_since_event_record() > 0
        self.busy.append(busy)
        return (self.load if busy else self.idle).sample()

    def close(self) -> None:
        pass


def gpu_env(lib: Path, nvml: dict[str, FakeNvml] | None = None, cublas: Path | None = None, *,
            tiers=("driver", "cublas"), telemetries: list | None = None, **sizes) -> SelfTestEnv:
    def factory(bus, index):
        if nvml is None:
            from gpusetup.selftest.telemetry import NullTelemetry

            return NullTelemetry()
        t = PhasedTelemetry(lib, nvml, bus)
        if telemetries is not None:
            telemetries.append(t)
        return t

    return SelfTestEnv(cuda_candidates=[str(lib)], cublas_candidates=[str(cublas)] if cublas else [],
                       telemetry_factory=factory, sizes=tiny_sizes(**sizes), tiers=tiers, frameworks=())


def live_objects(lib: Path) -> int:
    return ctypes.CDLL(str(lib)).fake_live_objects()
