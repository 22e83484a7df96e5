"""Loader for the compatibility knowledge base (``resources/compat/*.json``), cached.

The data ships inside gpusetup (the *embedded* copy). ``gpusetup db update`` may install a newer, signed
bundle into the user data directory; it is used only when it is complete, readable and not older than the
embedded copy, so a broken or stale download can never make the resolver worse than the shipped data.
Any problem with the user copy falls back to the embedded one, and :attr:`CompatDB.fallback_reason` says why.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup.paths import data_dir
from gpusetup.resources import resource
from gpusetup.versions import ComputeCapability, Version

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
# Files a bundle may carry and the built-in data always has; a bundle without them keeps the built-in copy.
OPTIONAL_FILES: tuple[str, ...] = ("host_compilers", "images")
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

    # ------------------------------------------------------------------ driver minimums (one place)

    def toolkit_driver(self, cuda: str | Version | None, driver_os: str = "linux") -> str | None:
        """The driver a CUDA toolkit release runs on natively (needed to JIT its PTX): the lowest driver
        NVIDIA lists for that major.minor, normally its GA release's bundled driver ("580.65.06")."""
        want = Version(cuda)
        if not want:
            return None
        found: list[tuple[Version, str]] = []
        for row in self.rows("cuda_drivers", "toolkit_drivers"):
            value = row.get(driver_os)
            if value and want.same_series(str(row.get("cuda") or "")):
                found.append((Version(str(value)), str(value)))
        return min(found)[1] if found else None

    def family_minimum(self, major: int | None, driver_os: str = "linux") -> str | None:
        """Minor-version compatibility: the lowest driver that runs builds made with any CUDA ``major``.x."""
        for row in self.rows("cuda_drivers", "family_minimums"):
            if major is not None and row.get("major") == major:
                value = row.get(driver_os)
                return str(value) if value else None
        return None

    def min_driver_for_cuda(self, cuda: str | Version | None, driver_os: str = "linux") -> str | None:
        """The lowest driver that runs applications built with CUDA ``cuda``: the family minimum (minor-version
        compatibility) or the toolkit's own driver when that is lower (11.0 shipped with 450.36)."""
        v = Version(cuda)
        if not v:
            return None
        candidates = [c for c in (self.family_minimum(v.major, driver_os), self.toolkit_driver(v, driver_os)) if c]
        return min(candidates, key=Version) if candidates else None

    def kernel_modules(self, cc: ComputeCapability | None) -> str | None:
        """Which NVIDIA kernel modules drive a GPU of compute capability ``cc``: "open" (Turing and newer: they
        need the GPU's GSP) or "proprietary"; None when unknown (driver_branches/kernel_modules)."""
        if cc is None:
            return None
        for row in self.rows("driver_branches", "kernel_modules"):
            lo, hi = ComputeCapability.parse(row.get("cc_min")), ComputeCapability.parse(row.get("cc_max"))
            if lo is not None and lo <= cc and (hi is None or cc <= hi):
                return str(row["modules"])
        return None

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
    return data_dir() / "compat"


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


def _with_optional(files: dict[str, dict[str, Any]], directory: Path, fallback: dict[str, dict[str, Any]]) -> None:
    for name in OPTIONAL_FILES:
        if (directory / f"{name}.json").is_file():
            files.update(read_files(directory, (name,)))
        elif name in fallback:
            files[name] = fallback[name]


class UnverifiedData(DataError):
    """An updated copy whose signature or recorded checksums do not verify (tampered or not from gpusetup)."""


def _read_capped(path: Path, limit: int) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise DataError(f"{path} is larger than {limit} bytes")
    return data


def verified_files(user: Path) -> tuple[dict[str, dict[str, Any]], str]:
    """The files of an updated copy, each checked *now*, where it is loaded: the manifest against the pinned
    Ed25519 key, every file against the sha256 the signed manifest records. Raises :class:`UnverifiedData`
    (or :class:`DataError` for unreadable files) — a folder written later, or pointed to by
    ``GPUSETUP_COMPAT_DIR``, is never trusted on its word."""
    # lazy: a cycle (update imports db); the trust model lives there
    from gpusetup.compat import update as upd

    try:
        raw = _read_capped(user / MANIFEST, upd.MAX_MANIFEST_BYTES)
    except OSError as exc:
        raise DataError(f"{user / MANIFEST} cannot be read: {exc}") from exc
    try:
        sig = _read_capped(user / upd.SIGNATURE, 4096)
    except (OSError, DataError) as exc:
        raise UnverifiedData(f"it has no signature ({upd.SIGNATURE})") from exc
    try:
        upd.verify_signature(raw, sig, upd.pinned_keys())
        manifest = upd._parse_manifest(raw)
    except upd.UpdateError as exc:
        raise UnverifiedData(str(exc)) from exc
    listed = {f["name"]: f for f in manifest["files"]}
    files: dict[str, dict[str, Any]] = {}
    for name in (*REQUIRED_FILES, *(n for n in OPTIONAL_FILES if f"{n}.json" in listed)):
        entry = listed[f"{name}.json"]
        path = user / f"{name}.json"
        try:
            data = _read_capped(path, upd.MAX_FILE_BYTES)
        except FileNotFoundError as exc:
            raise DataError(f"{path} is missing") from exc
        except OSError as exc:
            raise DataError(f"{path} cannot be read: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise UnverifiedData(f"{path.name} was changed after the signed update was installed "
                                 "(its checksum does not match the signed manifest)")
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{path} cannot be read: {exc}") from exc
        check_shape(name, doc, path)
        files[name] = doc
    return files, str(manifest["bundle_version"])


def _load(user: Path | None) -> CompatDB:
    embedded = read_files(embedded_dir())
    _with_optional(embedded, embedded_dir(), {})
    emb_db = CompatDB(embedded, origin="embedded")
    if user is None or not (user / MANIFEST).is_file():
        return emb_db
    try:
        files, bundle_version = verified_files(user)
        for name in OPTIONAL_FILES:  # an optional file the signed manifest does not list: the built-in one
            if name not in files and name in embedded:
                files[name] = embedded[name]
    except UnverifiedData as exc:
        emb_db.fallback_reason = (f"the data in {user} was refused because it does not verify: {exc}. "
                                  "Using the built-in data; run `gpusetup db update` to install a signed copy")
        log.warning("%s", emb_db.fallback_reason)
        return emb_db
    except (OSError, ValueError, DataError) as exc:
        emb_db.fallback_reason = f"the updated data in {user} is unusable ({exc}); using the built-in data"
        log.warning("%s", emb_db.fallback_reason)
        return emb_db
    if Version(bundle_version) < Version(emb_db.version):
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
