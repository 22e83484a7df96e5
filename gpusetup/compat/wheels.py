"""Which release of a project has a wheel for this Python, OS, architecture and OS release — from the ``wheels``
tables that ``scripts/refresh_compat.py --history`` derives from the package index (:mod:`gpusetup.compat.history`).

A row is one release of one project: its files grouped as ``{"platform", "min_os", "pythons"}``. A release
*fits* a target when one group is for the target's platform, lists its Python (``3.12``; free-threaded
``3.13t`` only for a free-threaded interpreter; ``py3`` and ``abi3>=3.9`` by their rules, with the release's
Requires-Python) and needs no newer OS than the target has (macOS 14 for a ``macosx_14_0`` wheel, glibc 2.28
for ``manylinux_2_28``) when the target's OS release is known. :func:`why_not` says, as a message, the first
fact that stops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from gpusetup.messages import msg
from gpusetup.model import Message
from gpusetup.versions import PythonVersion, Version, version_key


@dataclass(frozen=True)
class Target:
    """Where a wheel must install: the platform key ("linux-x86_64"), the Python (None: not known), and the OS
    release when known (macOS "14.5"; glibc "2.35")."""

    platform: str
    python: PythonVersion | None
    os_release: Version | None = None

    @property
    def os(self) -> str:
        return self.platform.split("-", 1)[0]


def _std_pythons(pythons: Iterable[str], free_threaded: bool = False) -> list[PythonVersion]:
    out = []
    for p in pythons:
        if re.fullmatch(r"\d+\.\d+t?", p):
            v = PythonVersion.parse(p)
            if v is not None and v.free_threaded == free_threaded:
                out.append(v)
    return sorted(out)


def python_ok(pythons: Iterable[str], py: PythonVersion, requires_python: str | None) -> bool:
    """Does a group of Python tags serve this interpreter?"""
    pys = list(pythons)
    if str(py) in pys:
        return True
    rp_ok = True
    if requires_python:
        try:
            rp_ok = SpecifierSet(requires_python).contains(f"{py.release}.0", prereleases=True)
        except InvalidSpecifier:
            rp_ok = True
    if "py3" in pys and py.major == 3 and rp_ok:
        return True
    for p in pys:
        m = re.fullmatch(r"abi3>=(\d+)\.(\d+)", p)
        if m and not py.free_threaded and py.major == 3 and py.mm >= (int(m.group(1)), int(m.group(2))) and rp_ok:
            return True
    return False


def _os_ok(group: dict[str, Any], target: Target) -> bool:
    need = Version.parse(group.get("min_os"))
    return need is None or target.os_release is None or target.os_release >= need


def fits(row: dict[str, Any], target: Target) -> bool:
    """Has this release a wheel the target can install?"""
    for g in row.get("files", []):
        if g["platform"] not in (target.platform, "any") or not _os_ok(g, target):
            continue
        if target.python is None or python_ok(g["pythons"], target.python, row.get("requires_python")):
            return True
    return False


def platform_groups(row: dict[str, Any], target: Target) -> list[dict[str, Any]]:
    return [g for g in row.get("files", []) if g["platform"] in (target.platform, "any")]


def python_span(rows: Iterable[dict[str, Any]], target: Target) -> tuple[str | None, str | None]:
    """The lowest and highest Python (of the target's kind: free-threaded or not) with a wheel for the target's
    platform among these releases — the range to switch to when the target's Python has none."""
    ft = bool(target.python and target.python.free_threaded)
    found: list[PythonVersion] = []
    for row in rows:
        for g in platform_groups(row, target):
            if not _os_ok(g, target):
                continue
            found += _std_pythons(g["pythons"], ft)
            if "py3" in g["pythons"] and row.get("requires_python"):
                m = re.search(r">=\s*(\d+)\.(\d+)", row["requires_python"])
                if m:
                    found.append(PythonVersion(int(m.group(1)), int(m.group(2)), ft))
    if not found:
        return None, None
    lo, hi = min(found), max(found)
    return str(lo), str(hi)


def why_not(project: str, label: str, rows: list[dict[str, Any]], target: Target, where: str) -> Message | None:
    """Why none of ``rows`` (the releases of one series, newest first) installs on the target; None if one does.

    The facts named are the wheels': no wheel for this OS/architecture at all, none for this Python (with the
    Pythons there are), or only ones needing a newer macOS / glibc than the target has.
    """
    if any(fits(r, target) for r in rows):
        return None
    groups = [g for r in rows for g in platform_groups(r, target)]
    if not groups:
        return msg("reason.no-wheel-platform", package=project, version=label, where=where)
    if target.python is not None:
        with_py = [g for r in rows for g in platform_groups(r, target)
                   if python_ok(g["pythons"], target.python, r.get("requires_python"))]
        if not with_py:
            lo, hi = python_span(rows, target)
            if lo is None:
                others = sorted({p for g in groups for p in g["pythons"]}, key=_pkey)
                return msg("reason.no-wheel-python-kind", package=project, version=label, python=str(target.python),
                           where=where, pythons=", ".join(others))
            if target.python.mm < PythonVersion.parse(lo).mm:  # type: ignore[union-attr]
                return msg("reason.python-too-old", min=lo, have=str(target.python))
            if target.python.mm > PythonVersion.parse(hi).mm:  # type: ignore[union-attr]
                return msg("reason.python-too-new", max=hi, have=str(target.python))
            return msg("reason.no-wheel-python", package=project, version=label, python=str(target.python),
                       where=where, pythons=f"{lo}–{hi}" if lo != hi else lo)
        groups = with_py
    need = min((Version(g["min_os"]) for g in groups if g.get("min_os")), default=None)
    if need is not None and target.os_release is not None:
        if target.os == "macos":
            return msg("reason.needs-newer-macos", package=project, version=label, need=str(need),
                       have=str(target.os_release))
        return msg("reason.needs-newer-glibc", package=project, version=label, need=str(need),
                   have=str(target.os_release))
    return msg("reason.no-wheel-platform", package=project, version=label, where=where)


def _pkey(p: str) -> tuple[Any, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", p)) or (0,), p


class Wheels:
    """The ``wheels`` rows of one database, indexed by project (newest release first)."""

    def __init__(self, db: Any) -> None:
        self._by_project: dict[str, list[dict[str, Any]]] = {}
        for name in ("pytorch", "tensorflow", "jax"):
            try:
                rows = db.rows(name, "wheels")
            except Exception:  # noqa: BLE001 - an older data bundle without the table: no rows
                rows = []
            for row in rows:
                self._by_project.setdefault(row["project"], []).append(row)
        self._series: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._versions: dict[tuple[str, Version], dict[str, Any]] = {}
        for project, rows in self._by_project.items():
            rows.sort(key=lambda r: version_key(r["version"]), reverse=True)
            for r in rows:
                self._series.setdefault((project, _series(r["version"])), []).append(r)
                self._versions.setdefault((project, version_key(r["version"])), r)

    def releases(self, project: str) -> list[dict[str, Any]]:
        return self._by_project.get(project, [])

    def has(self, project: str) -> bool:
        return project in self._by_project

    def series(self, project: str, series: str) -> list[dict[str, Any]]:
        """Releases of ``series`` ("2.12": 2.12.1, 2.12.0), newest first."""
        return self._series.get((project, series), [])

    def release(self, project: str, version: str) -> dict[str, Any] | None:
        return self._versions.get((project, version_key(version)))

    def newest_fitting(self, project: str, rows: Iterable[dict[str, Any]] | None, target: Target) -> dict[str, Any] | None:
        for r in self.releases(project) if rows is None else rows:
            if fits(r, target):
                return r
        return None


def _series(version: str) -> str:
    return ".".join(version.split(".")[:2])


def series_of(version: str) -> str:
    return _series(version)


def get(db: Any) -> Wheels:
    """The index of ``db``'s wheels tables (built once per database)."""
    got = db.__dict__.get("_wheels_index")
    if got is None:
        got = db.__dict__["_wheels_index"] = Wheels(db)
    return got
