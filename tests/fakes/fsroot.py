"""Fake filesystem roots for probes that read /proc, /sys and /etc through ``ctx.path()``."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
AMD_DRM = FIXTURES / "sysfs" / "expanded__prometheus-procfs-amdgpu" / "sys" / "class" / "drm"


def make_root(root: Path, files: Mapping[str, str | bytes] = (), symlinks: Mapping[str, str] = ()) -> Path:
    """Write ``{"/proc/version": "..."}`` under ``root``; ``symlinks`` maps link path → target."""
    for rel, content in dict(files).items():
        p = root / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    for rel, target in dict(symlinks).items():
        p = root / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(target)
    return root


def fixture(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8", errors="replace")


def add_amd_sysfs(root: Path) -> Path:
    """The real procfs amdgpu fixture placed as a sysfs tree: PCI device dirs plus /sys/class/drm links.

    card0 (amdgpu, Vega 10, 0000:09:00.0) has every attribute file; card1 (i915, 0000:00:02.0) only a
    uevent — exactly as recorded. The fixture has no ``driver`` symlinks; the uevent's DRIVER= names it.
    """
    pci = root / "sys" / "bus" / "pci" / "devices"
    pci.mkdir(parents=True, exist_ok=True)
    drm = root / "sys" / "class" / "drm"
    drm.mkdir(parents=True, exist_ok=True)
    for card, slot in (("card0", "0000:09:00.0"), ("card1", "0000:00:02.0")):
        dst = pci / slot
        shutil.copytree(AMD_DRM / card / "device", dst)
        (drm / card).mkdir(exist_ok=True)
        (drm / card / "device").symlink_to(dst)
    return root
