"""The version facts the container generator needs, read from the shipped data under ``resources/compat``.

Everything that is a fact about versions lives in JSON (``images.json`` is ours; ``cuda_drivers.json`` and
``cuda_arch.json`` belong to the compat data, read through ``gpusetup.compat.db``). This module is the one place that reads them.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from gpusetup.model import Gpu, Machine
from gpusetup.resources import resource

Version = tuple[int, ...]


class DataError(RuntimeError):
    """A shipped data file is missing or unreadable: gpusetup itself is broken, not the user's machine."""


def vt(text: str | None) -> Version | None:
    """'580.65.06' → (580, 65, 6); None for anything that is not a dotted number."""
    if not text:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    if not m:
        return None
    return tuple(int(p) for p in m.group(1).split("."))


def mm(text: str | None) -> tuple[int, int] | None:
    """Major.minor of a version string ('12.8.1' → (12, 8))."""
    v = vt(text)
    if not v:
        return None
    return (v[0], v[1] if len(v) > 1 else 0)


def fmt(v: tuple[int, ...] | None) -> str:
    return ".".join(str(p) for p in v) if v else "unknown"


@functools.cache
def _load(name: str) -> dict[str, Any]:
    path = resource("compat", f"{name}.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"gpusetup's data file {path} could not be read ({exc}); reinstall gpusetup") from exc


def table(name: str) -> dict[str, Any]:
    """One table of ``images.json`` (source, checked, verified, note, rows)."""
    return _load("images")["tables"][name]


def _compat_table(name: str, tbl: str) -> list[dict[str, Any]]:
    """Rows of a compat data table, through the compat loader (which prefers a verified `db update`)."""
    try:
        from gpusetup.compat.db import get_db
    except ImportError:  # pragma: no cover - compat ships with gpusetup
        return list(_load(name)["tables"][tbl]["rows"])
    try:
        return list(get_db().rows(name, tbl))
    except Exception:  # noqa: BLE001 - a broken user bundle must not stop the generator: use shipped data
        return list(_load(name)["tables"][tbl]["rows"])


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
    col = "windows" if windows else "linux"
    found: list[tuple[Version, str]] = []
    for row in _compat_table("cuda_drivers", "toolkit_drivers"):
        if mm(row.get("cuda")) == cuda and vt(row.get(col)):
            found.append((vt(row[col]), row[col]))  # type: ignore[arg-type]
    return min(found)[1] if found else None  # as NVIDIA writes it: 580.65.06, not 580.65.6


def family_minimum(cuda_major: int, windows: bool = False) -> str | None:
    """Minor-version compatibility: the lowest driver that runs any CUDA ``cuda_major``.x build."""
    for row in _compat_table("cuda_drivers", "family_minimums"):
        if row.get("major") == cuda_major:
            return row.get("windows" if windows else "linux") or row.get("linux")
    return None


def cuda_cc_range(cuda: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Lowest and highest GPU compute capability a CUDA release's libraries support."""
    for row in _compat_table("cuda_arch", "toolkit_targets"):
        lo, hi = mm(row.get("cuda_min")), mm(row.get("cuda_max"))
        if lo and hi and lo <= cuda <= hi:
            a, b = mm(row.get("lowest_cc")), mm(row.get("highest_cc"))
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
    return cc <= hi or cc[0] == hi[0]  # same-major SASS runs on a newer minor


# ---------------------------------------------------------------------------------------- GPU facts


@dataclass
class GpuTarget:
    """One NVIDIA GPU as the generator sees it."""

    index: int
    name: str
    cc: tuple[int, int] | None
    cc_source: str


def gpu_targets(machine: Machine) -> list[GpuTarget]:
    """NVIDIA GPUs with their compute capability (from the driver, else from the chip rule)."""
    out: list[GpuTarget] = []
    for pos, gpu in enumerate(machine.nvidia_gpus):
        cc = mm(gpu.compute_capability)
        source = gpu.compute_capability_source or "driver"
        if cc is None:
            cc, source = _cc_from_chip(gpu)
        name = gpu.name or gpu.pci.device_name or f"NVIDIA GPU {pos}"
        out.append(GpuTarget(gpu.index if gpu.index is not None else pos, name, cc, source))
    return out


def _cc_from_chip(gpu: Gpu) -> tuple[tuple[int, int] | None, str]:
    try:
        from gpusetup import pcidb
    except ImportError:  # pragma: no cover - pcidb ships with gpusetup
        return None, "unknown"
    for key in (gpu.chip, gpu.pci.device_name, gpu.name):
        if not key:
            continue
        chip = pcidb.classify_nvidia(key)
        if chip and chip.compute_capability:
            return mm(chip.compute_capability), "chip rule (pci.ids)"
    if gpu.pci.vendor_id and gpu.pci.device_id:
        chip = pcidb.classify_pci(gpu.pci.vendor_id, gpu.pci.device_id)
        if chip and chip.compute_capability:
            return mm(chip.compute_capability), "chip rule (pci.ids)"
    return None, "unknown"


def host_arch(machine: Machine) -> str:
    arch = (machine.system.arch or "x86_64").lower()
    return "aarch64" if arch in ("aarch64", "arm64") else "x86_64" if arch in ("x86_64", "amd64") else arch


def os_python(os_name: str) -> tuple[int, int] | None:
    for row in table("os_python")["rows"]:
        if row["os"] == os_name:
            return mm(row["python"])
    return None
