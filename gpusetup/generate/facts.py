"""The version facts the container generator needs, read from the shipped data under ``resources/compat``.

Everything that is a fact about versions lives in JSON (``images.json`` is ours; ``cuda_drivers.json`` and
``cuda_arch.json`` belong to the compat data, read through ``gpusetup.compat.db``). This module is the one place that reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpusetup.compat.db import DataError as CompatDataError
from gpusetup.compat.db import get_db
from gpusetup.model import Gpu, Machine
from gpusetup.versions import ComputeCapability, Version, kernel_coverage


class DataError(RuntimeError):
    """A shipped data file is missing or unreadable: gpusetup itself is broken, not the user's machine."""


def vt(text: str | Version | None) -> Version | None:
    """The typed version of '580.65.06' (see :mod:`gpusetup.versions`); None when there is none."""
    return Version.parse(text)


def mm(text: str | Version | None) -> tuple[int, int] | None:
    """Major.minor of a version string ('12.8.1' → (12, 8))."""
    return Version(text).major_minor


def fmt(v: tuple[int, ...] | None) -> str:
    return ".".join(str(p) for p in v) if v else "unknown"


def _load(name: str) -> dict[str, Any]:
    try:
        return dict(get_db().files[name])
    except (CompatDataError, KeyError) as exc:
        raise DataError(f"gpusetup's data file {name}.json could not be read ({exc}); reinstall gpusetup") from exc


def table(name: str) -> dict[str, Any]:
    """One table of ``images.json`` (source, checked, verified, note, rows)."""
    return _load("images")["tables"][name]


def _compat_table(name: str, tbl: str) -> list[dict[str, Any]]:
    """Rows of a compat data table, through the one compat loader (which prefers a verified `db update` and
    falls back to the built-in data by itself)."""
    try:
        return list(get_db().rows(name, tbl))
    except CompatDataError as exc:
        raise DataError(f"gpusetup's compat data could not be read ({exc}); reinstall gpusetup") from exc


def data_checked() -> str:
    """Date the image list was last checked (shown in README and warnings)."""
    return str(table("nvidia_cuda")["checked"])


# ------------------------------------------------------------------------------------- driver facts


def _is_windows(machine: Machine) -> bool:
    return (machine.system.os or "").lower() == "windows"


def driver_cuda(machine: Machine) -> tuple[tuple[int, int] | None, str]:
    """Highest CUDA version the host driver runs natively, and where that came from.

    Prefer what the driver itself reports (NVML / the ``nvidia-smi`` header); otherwise derive it from the
    driver version with the toolkit → driver table (the newest CUDA whose bundled driver is not newer).
    """
    reported = mm(machine.driver.cuda_driver_version)
    if reported:
        src = machine.driver.cuda_driver_version_source or "driver"
        return reported, f"reported by the driver ({src})"
    dv = vt(machine.driver.version)
    if not dv:
        return None, "no driver version known"
    col = "windows" if _is_windows(machine) else "linux"
    best: tuple[int, int] | None = None
    for row in _compat_table("cuda_drivers", "toolkit_drivers"):
        need = vt(row.get(col)) or vt(row.get("linux"))
        cuda = mm(row.get("cuda"))
        if need and cuda and need <= dv and (best is None or cuda > best):
            best = cuda
    return best, f"derived from driver {machine.driver.version} (CUDA release-notes table)"


def toolkit_driver(cuda: tuple[int, int], windows: bool = False) -> str | None:
    """Lowest driver that runs CUDA ``cuda`` natively (its GA release's bundled driver)."""
    return get_db().toolkit_driver(f"{cuda[0]}.{cuda[1]}", "windows" if windows else "linux")


def family_minimum(cuda_major: int, windows: bool = False) -> str | None:
    """Minor-version compatibility: the lowest driver that runs any CUDA ``cuda_major``.x build."""
    db = get_db()
    return (db.family_minimum(cuda_major, "windows") if windows else None) or db.family_minimum(cuda_major, "linux")


def cuda_cc_range(cuda: tuple[int, int]) -> tuple[ComputeCapability, ComputeCapability] | None:
    """Lowest and highest GPU compute capability a CUDA release's libraries support."""
    for row in _compat_table("cuda_arch", "toolkit_targets"):
        lo, hi = mm(row.get("cuda_min")), mm(row.get("cuda_max"))
        if lo and hi and lo <= cuda <= hi:
            a, b = ComputeCapability.parse(row.get("lowest_cc")), ComputeCapability.parse(row.get("highest_cc"))
            if a and b:
                return a, b
    return None


def cuda_supports_cc(cuda: tuple[int, int], cc: tuple[int, int]) -> bool:
    """Can a CUDA ``cuda`` image's libraries run on a GPU of compute capability ``cc``?"""
    rng = cuda_cc_range(cuda)
    if rng is None:
        return True  # unknown CUDA release (newer than our data): do not refuse on a guess
    lo, hi = rng
    if cc < lo:
        return False
    return cc <= hi or kernel_coverage(cc, sass=[hi]) is not None  # hi's cubins run on a newer minor


# ---------------------------------------------------------------------------------------- GPU facts


@dataclass(frozen=True, eq=False)
class DeviceRef:
    """An NVIDIA GPU with the device number a container names it by (the driver's index, else its place among
    the NVIDIA GPUs). Every fact is read from ``gpu`` as detection and the enrich step left it: the generator
    derives no compute capability of its own."""

    index: int
    gpu: Gpu

    @property
    def name(self) -> str:
        return self.gpu.name or self.gpu.pci.device_name or f"NVIDIA GPU {self.index}"

    @property
    def cc(self) -> ComputeCapability | None:
        return self.gpu.compute_capability


def gpu_targets(machine: Machine) -> list[DeviceRef]:
    """The NVIDIA GPUs a container can be given."""
    return [DeviceRef(gpu.index if gpu.index is not None else pos, gpu) for pos, gpu in enumerate(machine.nvidia_gpus)]


def host_arch(machine: Machine) -> str:
    arch = (machine.system.arch or "x86_64").lower()
    return "aarch64" if arch in ("aarch64", "arm64") else "x86_64" if arch in ("x86_64", "amd64") else arch


def os_python(os_name: str) -> tuple[int, int] | None:
    for row in table("os_python")["rows"]:
        if row["os"] == os_name:
            return mm(row["python"])
    return None
