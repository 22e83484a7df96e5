"""The target Python environment (this interpreter, or ``--python PATH``) without importing anything from it.

Shared by the toolkit probe (pip ``nvidia-*`` wheels) and the frameworks probe. For another interpreter one
short subprocess prints its ``sys.path``/prefixes as JSON (no imports beyond ``sys``/``json``); everything
else is read from the files in its site-packages, which any Python can read.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpusetup.versions import INTERPRETER_VERSION_EXPR, interpreter_version

if TYPE_CHECKING:
    from gpusetup.probe import ProbeContext

_INFO_SCRIPT = (
    "import sys, json, platform; print(json.dumps({'executable': sys.executable, "
    f"'version': {INTERPRETER_VERSION_EXPR}, 'prefix': sys.prefix, "
    "'base_prefix': getattr(sys, 'base_prefix', sys.prefix), 'path': sys.path}))"
)


@dataclass
class PyInfo:
    executable: str
    version: str | None = None
    prefix: str | None = None
    base_prefix: str | None = None
    site_dirs: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def is_venv(self) -> bool | None:
        if self.prefix is None or self.base_prefix is None:
            return None
        return os.path.realpath(self.prefix) != os.path.realpath(self.base_prefix)

    @property
    def is_conda(self) -> bool | None:
        if self.prefix is None:
            return None
        return os.path.isdir(os.path.join(self.prefix, "conda-meta"))


@dataclass
class Dist:
    """One installed distribution, from its ``*.dist-info``/``*.egg-info`` folder name."""

    name: str  # normalised: lower-case, "-" separators
    version: str
    meta_dir: Path
    site_dir: Path

    @property
    def local_tag(self) -> str | None:
        """``2.6.0+cu126`` → ``cu126``."""
        return self.version.split("+", 1)[1] if "+" in self.version else None

    @property
    def installer(self) -> str | None:
        try:
            return (self.meta_dir / "INSTALLER").read_text(encoding="utf-8").strip() or None
        except OSError:
            return None


def frozen() -> bool:
    """True in the packaged app (PyInstaller): ``sys.executable`` is then the app itself, not a Python."""
    return bool(getattr(sys, "frozen", False))


def own_interpreter() -> str | None:
    """The running interpreter, when it is one: never the packaged app's own executable."""
    return None if frozen() or not sys.executable else sys.executable


def target_python(ctx: ProbeContext) -> str:
    """The interpreter to run for the target environment ("" in the packaged app when none was given)."""
    return ctx.python or own_interpreter() or ""


def is_current(ctx: ProbeContext) -> bool:
    """Whether ``ctx.python`` is this interpreter *in this environment*. A venv's python is a link to its
    base interpreter, so two venvs of one Python are the same file: only an interpreter outside any venv is
    compared by file, one inside a venv by its path."""
    if not ctx.python:
        return True
    if os.path.normcase(os.path.abspath(ctx.python)) == os.path.normcase(os.path.abspath(sys.executable)):
        return True
    if _in_venv(ctx.python) or sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return False
    try:
        return os.path.samefile(ctx.python, sys.executable)
    except OSError:
        return False


# where an environment folder keeps its interpreter (POSIX venv/conda, Windows venv, Windows conda)
ENV_INTERPRETERS = ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe")


def interpreter_in(path: Path) -> Path | None:
    """The python executable ``path`` is, or the one inside the environment folder ``path`` (None: neither)."""
    if path.is_file():
        return path
    if path.is_dir():
        return next((path / rel for rel in ENV_INTERPRETERS if (path / rel).is_file()), None)
    return None


def _in_venv(python: str) -> bool:
    """``python`` is inside a virtual environment (its folder's parent holds pyvenv.cfg)."""
    return os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(python))), "pyvenv.cfg"))


def python_info(ctx: ProbeContext) -> PyInfo:
    """Version, prefixes and site-packages of the target interpreter (cached per context)."""
    exe = target_python(ctx)
    cached = getattr(ctx, "_pyinfo", None)
    if isinstance(cached, PyInfo) and cached.executable in (exe, sys.executable):
        return cached
    if is_current(ctx):
        info = PyInfo(
            executable=sys.executable,
            version=interpreter_version(),
            prefix=sys.prefix,
            base_prefix=getattr(sys, "base_prefix", sys.prefix),
            site_dirs=_site_dirs(sys.path),
        )
    else:
        res = ctx.runner.run([exe, "-c", _INFO_SCRIPT], timeout=min(ctx.timeout, 5.0))
        info = _parse_info(exe, res.stdout)
        if info.error and not res.ok:
            info.error = res.error or (res.stderr.strip().splitlines() or ["no answer"])[-1]
        info.executable = exe if info.error else info.executable
    ctx._pyinfo = info  # type: ignore[attr-defined]  # one answer per detection run
    return info


def _parse_info(exe: str, text: str) -> PyInfo:
    try:
        data = json.loads(text.strip().splitlines()[-1]) if text.strip() else None
    except (ValueError, IndexError):
        data = None
    if not isinstance(data, dict):
        return PyInfo(executable=exe, error="the interpreter did not answer (is it a Python?)")
    raw_path = data.get("path")
    path: list[Any] = raw_path if isinstance(raw_path, list) else []
    return PyInfo(
        executable=str(data.get("executable") or exe),
        version=data.get("version") if isinstance(data.get("version"), str) else None,
        prefix=data.get("prefix") if isinstance(data.get("prefix"), str) else None,
        base_prefix=data.get("base_prefix") if isinstance(data.get("base_prefix"), str) else None,
        site_dirs=_site_dirs([p for p in path if isinstance(p, str)]),
    )


def _site_dirs(paths: list[str]) -> list[str]:
    """Existing import folders, in path order (dist-info folders live there); '' (cwd) is skipped."""
    out: list[str] = []
    for p in paths:
        if p and p not in out and not p.endswith(".zip") and os.path.isdir(p):
            out.append(p)
    return out


_META = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*?)-(?P<version>[^-]+?)(?:-py\d[\w.]*)?\.(dist|egg)-info$"
)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions(site_dirs: list[str]) -> dict[str, Dist]:
    """Installed distributions by normalised name (first on the path wins, as in Python)."""
    out: dict[str, Dist] = {}
    for d in site_dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            m = _META.match(n)
            if not m:
                continue
            name = normalize(m.group("name"))
            if name not in out:
                out[name] = Dist(name, m.group("version"), Path(d) / n, Path(d))
    return out
