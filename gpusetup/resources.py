"""The one reader of the shipped data (``resources/`` beside the package in a checkout or an editable install,
bundled by PyInstaller, or ``GPUSETUP_RESOURCES``).

Every read is bounded (:data:`MAX_BYTES` unless the caller asks for less), so a damaged or replaced file
cannot make gpusetup read without limit. ``resources/compat`` has its own loader on top of this module
(``gpusetup.compat.db.get_db()``), which also honours a verified data update.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

# The largest shipped file is well under 1 MB (resources/pci.ids, ~170 kB); 8 MB leaves room to grow.
MAX_BYTES = 8 * 1024 * 1024


class ResourceTooLarge(OSError):
    """A shipped file is larger than its reader allows (damaged or replaced)."""


def resources_dir() -> Path:
    """The ``resources/`` folder: beside the package, or bundled by PyInstaller, or ``GPUSETUP_RESOURCES``."""
    override = os.environ.get("GPUSETUP_RESOURCES")
    if override:
        return Path(override)
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return _beside("resources")


def _beside(name: str) -> Path:
    """``name`` beside the package (a checkout, an editable install), else inside it (a wheel install:
    gpusetup/_shipped/NAME, see pyproject.toml)."""
    here = Path(__file__).resolve().parent
    checkout = here.parent / name
    shipped = here / "_shipped" / name
    return shipped if not checkout.is_dir() and shipped.is_dir() else checkout


def installers_dir() -> Path:
    """The ``installers/`` scripts shipped beside the package (or bundled by PyInstaller)."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "installers"
    return _beside("installers")


def resource(*parts: str) -> Path:
    """The path of a shipped file (for callers that hand the path on: icons, installers, schemas)."""
    return resources_dir().joinpath(*parts)


def read_bytes(*parts: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a shipped file; :class:`ResourceTooLarge` past ``limit``, OSError when unreadable."""
    path = resource(*parts)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ResourceTooLarge(f"{path} is larger than {limit} bytes")
    return data


def read_text(*parts: str, limit: int = MAX_BYTES, errors: str = "strict") -> str:
    """A shipped text file (UTF-8), read within ``limit`` bytes."""
    return read_bytes(*parts, limit=limit).decode("utf-8", errors=errors)


def read_json(*parts: str, limit: int = MAX_BYTES) -> Any:
    """A shipped JSON file, read within ``limit`` bytes; ValueError when it is not JSON."""
    return json.loads(read_bytes(*parts, limit=limit))
