"""Loader for the compatibility knowledge base (``resources/compat/*.json``), cached.

The data ships inside gpusetup (the *embedded* copy). ``gpusetup db update`` may install a newer, signed
bundle into the user data directory; it is used only when it is complete, readable and not older than the
embedded copy, so a broken or stale download can never make the resolver worse than the shipped data.
Any problem with the user copy falls back to the embedded one, and :attr:`CompatDB.fallback_reason` says why.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup.resources import resource

log = logging.getLogger("gpusetup.compat")

# The files the resolver reads (owned by the compat helper). Other files in resources/compat/ (gpu_chips,
# images) belong to other modules and are loaded by them.
REQUIRED_FILES: tuple[str, ...] = (
    "cuda_drivers",
    "cuda_arch",
    "driver_branches",
    "pytorch",
    "tensorflow",
    "jax",
    "cudnn",
    "rocm",
)
MANIFEST = "manifest.json"


class DataError(Exception):
    """The compat data is missing or malformed."""


@dataclass(frozen=True)
class Table:
    name: str
    source: list[str]
    checked: str
    verified: bool
    note: str
    rows: list[dict[str, Any]]


@dataclass
class CompatDB:
    """All compat files, with where they came from."""

    files: Mapping[str, dict[str, Any]]
    origin: str  # "embedded" or the user directory path
    bundle_version: str | None = None  # from the signed manifest of an updated bundle
    fallback_reason: str | None = None  # why an updated bundle was not used
    _tables: dict[tuple[str, str], Table] = field(default_factory=dict, repr=False)

    def table(self, file: str, name: str) -> Table:
        key = (file, name)
        cached = self._tables.get(key)
        if cached is None:
            try:
                raw = self.files[file]["tables"][name]
            except KeyError as exc:
                raise DataError(f"compat data has no table {file}/{name}") from exc
            cached = Table(
                name=f"{file}/{name}",
                source=list(raw.get("source", [])),
                checked=str(raw.get("checked", "")),
                verified=bool(raw.get("verified", False)),
                note=str(raw.get("note", "")),
                rows=list(raw.get("rows", [])),
            )
            self._tables[key] = cached
        return cached

    def rows(self, file: str, name: str) -> list[dict[str, Any]]:
        return self.table(file, name).rows

    @property
    def version(self) -> str:
        """The data version: the bundle's, else the newest file version."""
        if self.bundle_version:
            return self.bundle_version
        return max((str(f.get("version", "")) for f in self.files.values()), default="")

    @property
    def checked(self) -> str:
        """The newest 'checked' date over all tables."""
        dates = [t.get("checked", "") for f in self.files.values() for t in f.get("tables", {}).values()]
        return max(dates, default="")

    def info(self) -> dict[str, Any]:
        """Version, date, origin and per-table provenance, for ``gpusetup db info`` and reports."""
        tables = []
        total = verified_rows = 0
        for fname, doc in sorted(self.files.items()):
            for tname, t in doc.get("tables", {}).items():
                unverified = sum(1 for r in t.get("rows", []) if r.get("verified") is False)
                # A row is verified when it says so, or when it says nothing and its table is verified.
                ok = sum(1 for r in t.get("rows", []) if r.get("verified", bool(t.get("verified"))) is True)
                total += len(t.get("rows", []))
                verified_rows += ok
                tables.append(
                    {
                        "table": f"{fname}/{tname}",
                        "checked": t.get("checked"),
                        "verified": t.get("verified"),
                        "rows": len(t.get("rows", [])),
                        "unverified_rows": unverified,
                        "source": t.get("source", []),
                    }
                )
        return {
            "version": self.version,
            "checked": self.checked,
            "age_days": _age_days(self.checked),
            "rows": total,
            "verified_rows": verified_rows,
            "origin": self.origin,
            "fallback_reason": self.fallback_reason,
            "tables": tables,
        }


def _age_days(checked: str, today: Any = None) -> int | None:
    """Whole days since the data was last checked (None when the date is unreadable)."""
    import datetime as dt

    try:
        day = dt.date.fromisoformat(checked)
    except (TypeError, ValueError):
        return None
    return ((today or dt.date.today()) - day).days


def embedded_dir() -> Path:
    return resource("compat")


def user_dir() -> Path:
    """Where ``gpusetup db update`` installs bundles: ``GPUSETUP_COMPAT_DIR``, else <data dir>/compat."""
    override = os.environ.get("GPUSETUP_COMPAT_DIR")
    if override:
        return Path(override)
    try:
        from gpusetup.paths import data_dir  # the shared per-user directory logic

        return data_dir() / "compat"
    except ImportError:  # pragma: no cover - paths.py ships with the install helper
        return Path.home() / ".local" / "share" / "gpusetup" / "compat"


def read_files(directory: Path, names: tuple[str, ...] = REQUIRED_FILES) -> dict[str, dict[str, Any]]:
    """Read and shape-check the named files; raises DataError with the first problem."""
    files: dict[str, dict[str, Any]] = {}
    for name in names:
        path = directory / f"{name}.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise DataError(f"{path} is missing") from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{path} cannot be read: {exc}") from exc
        check_shape(name, doc, path)
        files[name] = doc
    return files


def check_shape(name: str, doc: Any, where: object = "") -> None:
    """The minimal structure every compat file must have (full schema checks happen at update time)."""
    if not isinstance(doc, dict) or doc.get("name") != name or not isinstance(doc.get("tables"), dict):
        raise DataError(f"{where}: not a compat data file named {name!r}")
    for tname, t in doc["tables"].items():
        if not isinstance(t, dict) or not isinstance(t.get("rows"), list) or not t.get("checked"):
            raise DataError(f"{where}: table {tname!r} has no rows or no 'checked' date")


def _version_key(v: str) -> tuple[int, ...]:
    out = []
    for part in str(v).split("."):
        out.append(int(part) if part.isdigit() else 0)
    return tuple(out)


def _load(user: Path | None) -> CompatDB:
    embedded = read_files(embedded_dir())
    emb_db = CompatDB(embedded, origin="embedded")
    if user is None or not (user / MANIFEST).is_file():
        return emb_db
    try:
        manifest = json.loads((user / MANIFEST).read_text(encoding="utf-8"))
        files = read_files(user)
        bundle_version = str(manifest.get("bundle_version", ""))
    except (OSError, ValueError, DataError) as exc:
        emb_db.fallback_reason = f"the updated data in {user} is unusable ({exc}); using the built-in data"
        log.warning("%s", emb_db.fallback_reason)
        return emb_db
    if _version_key(bundle_version) < _version_key(emb_db.version):
        emb_db.fallback_reason = (
            f"the updated data in {user} (version {bundle_version}) is older than the built-in data "
            f"({emb_db.version}); using the built-in data"
        )
        return emb_db
    return CompatDB(files, origin=str(user), bundle_version=bundle_version)


@functools.lru_cache(maxsize=4)
def _cached(user: str | None) -> CompatDB:
    return _load(Path(user) if user else None)


def get_db(*, use_user_data: bool = True) -> CompatDB:
    """The compat database (cached). Uses an updated bundle when it is valid, else the embedded data."""
    return _cached(str(user_dir()) if use_user_data else None)


def clear_cache() -> None:
    """Forget loaded data (after ``db update``, and in tests)."""
    _cached.cache_clear()
