"""Typed version values: the one place that knows how to read and compare versions and compute capabilities.

- :class:`Version` — a software or driver version ("2.9.0rc1", "535.104.05", "12.8", "2.4.0+cu121"), ordered
  as ``packaging.version`` orders them (so ``2.9.0rc1 < 2.9.0`` and ``12.8 == 12.8.0``), lenient on the
  suffixes people and tools add ("550.120-0ubuntu1", "v12.4"), and printed exactly as it was written.
- :class:`ComputeCapability` — an NVIDIA GPU's compute capability, a ``(major, minor)`` tuple that reads
  "8.6", "sm_86", "compute_90", "120" and prints as "8.6".
- :func:`kernel_coverage` — the one rule for "does a build carrying these sm_XY cubins / compute_XY PTX run on
  a GPU of this compute capability", resting on :func:`cubin_runs` and :func:`ptx_runs`.
- :func:`as_version` — how the model stores a version fact (None stays None; the text is kept).
- :class:`PythonVersion` — a CPython feature release as wheels see it: "3.13" or the free-threaded "3.13t"
  (wheel ABI ``cp313t``), read from "3.13.1", "3.13t", "cp313t" or "3.14.0 experimental free-threading build";
  :func:`planned_python` reads the Python a plan's text names, ranges included ("3.10–3.13" → 3.10).

Everything that compares versions or compute capabilities (rules, resolver, generators, installer) uses these.
"""

from __future__ import annotations

import functools
import platform
import re
import sysconfig
from collections.abc import Iterable
from typing import Literal, NamedTuple

from packaging.version import InvalidVersion
from packaging.version import Version as _PkgVersion

__all__ = [
    "ComputeCapability",
    "Coverage",
    "Version",
    "cubin_runs",
    "kernel_coverage",
    "ptx_runs",
    "arch_list_coverage",
    "as_version",
    "version_key",
    "PythonVersion",
    "planned_python",
    "interpreter_version",
]

# A leading dotted number with an optional pre-release tag, for texts packaging does not accept as a whole
# ("550.120-0ubuntu1", "12.4.r12.4/compiler.34097967_0", "V12.4.131").
_LENIENT = re.compile(r"\s*[vV]?(\d+(?:\.\d+)*)((?:a|b|rc|alpha|beta|c|pre|preview|dev)\.?\d*)?", re.ASCII)


@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> _PkgVersion | None:
    s = text.strip()
    if not s:
        return None
    try:
        return _PkgVersion(s)
    except InvalidVersion:
        pass
    m = _LENIENT.match(s)
    if not m:
        return None
    try:
        return _PkgVersion(m.group(1) + (m.group(2) or ""))
    except InvalidVersion:  # pragma: no cover - the pattern only yields valid versions
        return _PkgVersion(m.group(1))


@functools.total_ordering
class Version:
    """A version, compared as ``packaging`` compares them; an unreadable or empty text is the *unknown* version.

    The unknown version is falsy and sorts before every known one (so ``max()`` over a list with gaps works
    and a missing minimum never blocks). ``str()`` gives the text as it was written ("580.65.06", not
    "580.65.6").
    """

    __slots__ = ("_pv", "text")

    def __init__(self, text: str | Version | None = None) -> None:
        if isinstance(text, Version):
            self.text: str = text.text
            self._pv: _PkgVersion | None = text._pv
            return
        self.text = "" if text is None else str(text).strip()
        self._pv = _parse(self.text) if self.text else None

    @classmethod
    def parse(cls, text: str | Version | None) -> Version | None:
        """The version, or None when ``text`` holds no version at all."""
        v = cls(text)
        return v if v else None

    @classmethod
    def of(cls, parts: Iterable[int]) -> Version:
        """A version from its numeric parts: ``Version.of((3, 12))`` is 3.12."""
        return cls(".".join(str(int(p)) for p in parts))

    # -------------------------------------------------------------------------------------------- parts

    @property
    def release(self) -> tuple[int, ...]:
        """The numeric parts: "535.104.05" → (535, 104, 5); () when unknown."""
        return tuple(self._pv.release) if self._pv is not None else ()

    @property
    def major(self) -> int | None:
        r = self.release
        return r[0] if r else None

    @property
    def minor(self) -> int:
        r = self.release
        return r[1] if len(r) > 1 else 0

    @property
    def major_minor(self) -> tuple[int, int] | None:
        """(major, minor), a missing minor counting as 0 ("13" → (13, 0)); None when unknown."""
        r = self.release
        return (r[0], r[1] if len(r) > 1 else 0) if r else None

    @property
    def packaging(self) -> _PkgVersion | None:
        """The ``packaging.version.Version`` it compares as (for ``SpecifierSet.contains``); None when unknown."""
        return self._pv

    @property
    def is_prerelease(self) -> bool:
        return bool(self._pv is not None and self._pv.is_prerelease)

    @property
    def local(self) -> str | None:
        """The local label: "2.4.0+cu121" → "cu121"."""
        return self._pv.local if self._pv is not None else None

    def same_series(self, other: Version | str | None, parts: int = 2) -> bool:
        """Do both versions share their first ``parts`` numeric parts (missing parts count as 0)?"""
        o = other if isinstance(other, Version) else Version(other)
        if not self or not o:
            return False
        return _pad(self.release, parts)[:parts] == _pad(o.release, parts)[:parts]

    # ---------------------------------------------------------------------------------------- compare

    def _key(self) -> tuple[int] | tuple[int, _PkgVersion]:
        return (1, self._pv) if self._pv is not None else (0,)

    @staticmethod
    def _coerce(other: object) -> Version | None:
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, tuple) and all(isinstance(p, int) for p in other):
            return Version.of(other) if other else Version()
        return None

    def __eq__(self, other: object) -> bool:
        o = self._coerce(other)
        if o is None:
            return NotImplemented
        return self._key() == o._key()

    def __lt__(self, other: object) -> bool:
        o = self._coerce(other)
        if o is None:
            return NotImplemented
        return self._key() < o._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __bool__(self) -> bool:
        return self._pv is not None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Version({self.text!r})"


def _pad(parts: tuple[int, ...], n: int) -> tuple[int, ...]:
    return parts + (0,) * (n - len(parts)) if len(parts) < n else parts


@functools.lru_cache(maxsize=8192)
def version_key(text: str | None) -> Version:
    """A sort key for version texts (cached): ``sorted(rows, key=lambda r: version_key(r["version"]))``."""
    return Version(text)


def as_version(text: str | Version | None) -> Version | None:
    """A version fact as the model stores it: None stays None (not known); any text becomes a :class:`Version`
    that keeps it, so it is written back unchanged (a text that holds no version is a falsy Version)."""
    if text is None or type(text) is Version:
        return text
    return version_key(str(text))


# ---------------------------------------------------------------------------------- compute capability

_CC_TEXT = re.compile(r"(\d+)\.(\d+)")


class ComputeCapability(NamedTuple):
    """An NVIDIA compute capability: a ``(major, minor)`` tuple that prints as "8.6".

    Being a tuple it compares with other capabilities and with plain ``(8, 6)`` tuples; like :class:`Version` it
    is also equal to its text ("8.6"), so a recorded report's value and a typed one agree.
    """

    major: int
    minor: int

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return _parse_cc(other) == tuple(self)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    @classmethod
    def parse(cls, text: str | ComputeCapability | tuple[int, int] | None) -> ComputeCapability | None:
        """"8.6" / "sm_86" / "compute_90" / "sm_90a" / "86" / "120" → the capability; None for anything else."""
        if text is None:
            return None
        if isinstance(text, tuple):
            return cls(int(text[0]), int(text[1])) if len(text) == 2 else None
        return _parse_cc(str(text))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def sm(self) -> str:
        """The compiler's name for it: 8.6 → "sm_86"."""
        return f"sm_{self.major}{self.minor}"


@functools.lru_cache(maxsize=1024)
def _parse_cc(text: str) -> ComputeCapability | None:
    s = text.strip().lower()
    s = re.sub(r"^(sm|compute)_", "", s)
    s = s.rstrip("af")  # arch-specific (sm_90a) and family-specific (sm_100f) targets
    m = _CC_TEXT.fullmatch(s)
    if m:
        return ComputeCapability(int(m.group(1)), int(m.group(2)))
    if s.isdigit() and len(s) >= 2:
        return ComputeCapability(int(s[:-1]), int(s[-1]))
    return None


Coverage = Literal["sass", "ptx"]


def kernel_coverage(
    cc: ComputeCapability | tuple[int, int] | str | None,
    sass: Iterable[str | ComputeCapability] = (),
    ptx: Iterable[str | ComputeCapability] | str | None = (),
) -> Coverage | None:
    """How a build runs on a GPU of compute capability ``cc``: "sass", "ptx" or None (it has no kernel for it).

    A cubin for sm_XY runs on a GPU of the same major X with minor ≥ Y; PTX for compute_XY is JIT-compiled by
    the driver for any GPU with CC ≥ X.Y. Native code wins over PTX. None also when ``cc`` is unknown.
    """
    c = ComputeCapability.parse(cc)
    if c is None:
        return None
    for s in sass:
        k = ComputeCapability.parse(s)
        if k is not None and cubin_runs(k, c):
            return "sass"
    for p in [ptx] if isinstance(ptx, str) else (ptx or ()):
        k = ComputeCapability.parse(p)
        if k is not None and ptx_runs(k, c):
            return "ptx"
    return None


def cubin_runs(cubin: ComputeCapability, gpu: ComputeCapability) -> bool:
    """Does a cubin (SASS) built for sm_XY run on a GPU of this compute capability? Same major, minor ≥ Y."""
    return cubin.major == gpu.major and gpu.minor >= cubin.minor


def ptx_runs(ptx: ComputeCapability, gpu: ComputeCapability) -> bool:
    """Can the driver JIT-compile PTX for compute_XY on a GPU of this compute capability? Any CC ≥ X.Y."""
    return gpu >= ptx


def arch_list_coverage(
    cc: ComputeCapability | tuple[int, int] | str | None, arch_list: Iterable[str]
) -> Coverage | None:
    """:func:`kernel_coverage` for a compiler-style list ("sm_80", "sm_86", "compute_90"): compute_XY is PTX,
    everything else a cubin."""
    arches = [a.strip().lower() for a in arch_list if a and a.strip()]
    return kernel_coverage(
        cc,
        sass=[a for a in arches if not a.startswith("compute_")],
        ptx=[a for a in arches if a.startswith("compute_")],
    )


# ---------------------------------------------------------------------------------------------- Python

_PY_TEXT = re.compile(
    r"^\s*(?:python\s*|cp|py)?(\d)\.?(\d{1,2})(?:\.\d+)?(?:(?:a|b|rc)\d+)?(t|\s.*free-?threading.*|\+?\s.*)?\s*$", re.IGNORECASE)


class PythonVersion(NamedTuple):
    """A CPython feature release as wheel tags see it: 3.13 (ABI cp313) or free-threaded 3.13t (ABI cp313t).

    Ordered by (major, minor) first; a free-threaded build sorts right after the standard one of its release.
    """

    major: int
    minor: int
    free_threaded: bool = False

    @classmethod
    def parse(cls, text: str | Version | PythonVersion | tuple[int, int] | None) -> PythonVersion | None:
        """"3.13", "3.13.1", "3.13t", "3.13.0t", "cp313t", "py3.12", "3.14.0 experimental free-threading build";
        None for anything else (a range such as "3.10–3.13" is not one Python: see :func:`planned_python`)."""
        if text is None:
            return None
        if isinstance(text, PythonVersion):
            return text
        if isinstance(text, tuple):
            return cls(int(text[0]), int(text[1])) if len(text) >= 2 else None
        s = str(text)
        m = _PY_TEXT.match(s)
        if m is None:
            return None
        tail = (m.group(3) or "").lower()
        return cls(int(m.group(1)), int(m.group(2)), tail == "t" or "free" in tail)

    @property
    def mm(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def abi(self) -> str:
        """The wheel ABI tag: "cp313" / "cp313t" ("cp37m" before 3.8, when pymalloc builds were tagged m)."""
        if self.mm < (3, 8):
            return f"cp{self.major}{self.minor}m"
        return f"cp{self.major}{self.minor}{'t' if self.free_threaded else ''}"

    @property
    def release(self) -> str:
        """"3.13" (without the free-threading mark: what ``python_version`` markers and Requires-Python see)."""
        return f"{self.major}.{self.minor}"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}{'t' if self.free_threaded else ''}"


def interpreter_version() -> str:
    """This interpreter's version as the model stores it: "3.13.1", or "3.13.1t" for a free-threaded build
    (``Py_GIL_DISABLED``), whose wheels are others (cp313t)."""

    return platform.python_version() + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")


# Run by another interpreter (gpusetup.probe.pyenv): the same, printed.
INTERPRETER_VERSION_EXPR = (
    "__import__('platform').python_version() + ('t' if __import__('sysconfig').get_config_var('Py_GIL_DISABLED') "
    "else '')"
)


_FIRST_PY = re.compile(r"(\d+\.\d+t?)")


def planned_python(text: str | Version | None) -> PythonVersion | None:
    """The Python a plan's text names: the version itself ("3.12", "3.13t"), else the lowest of a range
    ("3.10–3.13" → 3.10, "≥ 3.12" → 3.12, as the installer provides it); None when it names none."""
    if text is None:
        return None
    exact = PythonVersion.parse(str(text))
    if exact is not None:
        return exact
    m = _FIRST_PY.search(str(text))
    return PythonVersion.parse(m.group(1)) if m else None
