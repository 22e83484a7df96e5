"""Where the shipped data lives (``resources/`` beside the package in a checkout or an editable install)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    """The ``resources/`` folder: beside the package, or bundled by PyInstaller, or ``GPUSETUP_RESOURCES``."""
    override = os.environ.get("GPUSETUP_RESOURCES")
    if override:
        return Path(override)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)
