"""A Python interpreter for the plan: one found on this machine, or one ``uv`` provides into a per-user folder.

The packaged (frozen) app is not a Python: ``sys.executable`` there is the app itself, so it is never used
as an interpreter. The search, in order: the running interpreter (when it is a real Python of the wanted
version), ``pythonX.Y``/``python3`` on PATH, and the platform's usual places (the ``py`` launcher on
Windows, /usr/bin, pyenv, uv's managed Pythons…). Every candidate is *run* once to learn its version and
whether it can create a virtual environment (``venv`` and ``ensurepip``: Debian ships them apart).

When none fits, the plan gets a step that runs ``uv python install`` into :func:`managed_dir` (a mirror
from ``GPUSETUP_PYTHON_MIRROR`` or ``UV_PYTHON_INSTALL_MIRROR`` replaces the default download host), then
creates the environment with that Python. uv itself is fetched first from the package index when it is not
here (the packaged app does not carry it: :mod:`gpusetup.install.uvfetch`). Without an index (a wheelhouse
install) and without uv, :class:`NoPython` says what to do.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from gpusetup import paths
from gpusetup.compat.db import get_db
from gpusetup.compat.resolver import resolve
from gpusetup.install import snippets, uvfetch
from gpusetup.messages import msg, worded_step
from gpusetup.model import Message, Step
from gpusetup.probe import ProbeContext
from gpusetup.probe.pyenv import frozen, own_interpreter
from gpusetup.runner import Runner, SubprocessRunner
from gpusetup.versions import Version

PROBE_TIMEOUT = 10.0
# What a candidate reports about itself: only the standard library, nothing imported beyond it.
_PROBE = (
    "import sys, json, importlib.util as u\n"
    "pip = None\n"
    "try:\n"
    "    import ensurepip; pip = ensurepip.version()\n"
    "except Exception:\n"
    "    pass\n"
    "print('GPUSETUP-PY: ' + json.dumps({'executable': sys.executable, 'version': '.'.join(map(str, "
    "sys.version_info[:3])), 'venv': u.find_spec('venv') is not None and u.find_spec('ensurepip') is not None, "
    "'pip': pip}))"
)
_MARK = "GPUSETUP-PY: "
__all__ = ["Interpreter", "NoPython", "fetch_uv_step", "find_interpreter", "find_uv", "frozen", "own_interpreter",
           "provide_steps"]
MIRROR_VARS = ("GPUSETUP_PYTHON_MIRROR", "UV_PYTHON_INSTALL_MIRROR")
# With no version asked for, uv provides the Python this gpusetup itself runs on (built and tested with it).
DEFAULT_MANAGED = f"{sys.version_info[0]}.{sys.version_info[1]}"


class NoPython(ValueError):
    """No interpreter of the needed version here and none can be provided; the message says what to do."""


@dataclass
class Interpreter:
    """A Python that was run and answered."""

    executable: str
    version: str  # "3.12.1"
    venv: bool  # can create a virtual environment with pip (venv + ensurepip present)
    pip: str | None = None  # the pip version its ensurepip bundles (what a new venv gets)
    source: str = ""  # "running", "PATH", or the candidate command

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def find_uv(env: dict[str, str] | None = None) -> str | None:
    """The ``uv`` program: $GPUSETUP_UV, the ``uv`` package, PATH, or the one fetched earlier into the data
    folder. None: the plan fetches it first (:func:`fetch_uv_step`; the packaged app does not carry uv)."""
    env = dict(os.environ) if env is None else env
    given = env.get("GPUSETUP_UV")
    if given:
        return given if Path(given).is_file() else None
    try:
        # lazy: asked only when no bundled copy exists; the packaged app has no uv module (it bundles the binary)
        from uv import find_uv_bin  # the PyPI package ships the binary beside its scripts

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv", path=env.get("PATH"))
    if found:
        return found
    fetched = uvfetch.default_dest()
    return str(fetched) if fetched.is_file() else None


def fetch_uv_step(index_url: str | None) -> Step:
    """A step that fetches uv from the package index (sha256-checked) into the data folder; ``subject`` is
    where the program will be, for the steps after it."""
    dest = uvfetch.default_dest()
    where = index_url or "PyPI"  # or the index in pip's configuration, which the program reads itself
    argv = [*uvfetch.command(), "--dest", str(dest)] + (["--index-url", index_url] if index_url else [])
    return worded_step("get-uv", msg("step.title.get-uv", index=where), msg("step.explain.get-uv"), kind="download",
                       argv=argv, subject=str(dest), undo=[*uvfetch.command(), "--remove", "--dest", str(dest)])


def managed_dir() -> Path:
    """Per-user folder for the Pythons gpusetup provides (``<data dir>/python``)."""
    return paths.data_dir() / "python"


def mirror(env: dict[str, str] | None = None) -> str | None:
    """Where Python builds are downloaded from instead of the default host (None: uv's default)."""
    env = dict(os.environ) if env is None else env
    return next((env[v] for v in MIRROR_VARS if env.get(v)), None)


def _minor(want: str | None) -> str | None:
    m = re.match(r"(\d+)\.(\d+)", want or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def probe(argv: list[str], runner: Runner | None = None, source: str = "") -> Interpreter | None:
    """Run ``argv`` as a Python once; its own report, or None when it is not a working Python."""
    runner = runner or SubprocessRunner()
    res = runner.run([*argv, "-I", "-c", _PROBE], timeout=PROBE_TIMEOUT)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(_MARK)), None)
    if not res.ok or line is None:
        return None
    try:
        data = json.loads(line[len(_MARK):])
        return Interpreter(executable=str(data["executable"]), version=str(data["version"]),
                           venv=bool(data.get("venv")), pip=data.get("pip") or None,
                           source=source or " ".join(argv))
    except (ValueError, KeyError, TypeError):
        return None


def candidates(want: str | None, env: dict[str, str] | None = None) -> list[tuple[list[str], str]]:
    """(argv, where it came from) of interpreters to try for Python ``want`` (X.Y) or any Python 3."""
    env = dict(os.environ) if env is None else env
    out: list[tuple[list[str], str]] = []
    own = own_interpreter()
    if own:
        out.append(([own], "running"))
    for name in ([f"python{want}"] if want else []) + ["python3", "python"]:
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            out.append(([found], "PATH"))
    ctx = ProbeContext(env=env)
    with contextlib.suppress(OSError):
        out += [(c, "platform") for c in ctx.platform.python_candidates(ctx, want)]
    seen: set[str] = set()
    uniq = []
    for argv, src in out:
        key = os.path.realpath(argv[0]) if len(argv) == 1 else " ".join(argv)
        if key not in seen:
            seen.add(key)
            uniq.append((argv, src))
    return uniq


def find_interpreter(want: str | None, runner: Runner | None = None,
                     env: dict[str, str] | None = None, need_venv: bool = True) -> Interpreter | None:
    """The first working interpreter of version ``want`` (any Python ≥ 3.9 when None) that can make a venv."""
    minor = _minor(want)
    for argv, src in candidates(minor, env):
        info = probe(argv, runner, src)
        if info is None or (need_venv and not info.venv):
            continue
        if minor and info.minor != minor:
            continue
        if not minor and Version(info.version) < Version("3.9"):
            continue
        return info
    return None


def unsuitable(want: str | None, runner: Runner | None = None, env: dict[str, str] | None = None) -> list[Message]:
    """Plain descriptions of interpreters that were found but cannot be used (for the 'no Python' message)."""
    minor = _minor(want)
    out = []
    for argv, src in candidates(minor, env):
        info = probe(argv, runner, src)
        if info is None:
            continue
        if not info.venv and (not minor or info.minor == minor):
            out.append(msg("plan-error.python-without-venv", python=info.executable, version=info.version,
                           minor=info.minor))
    return out


def provide_steps(want: str, venv: str, uv: str, *, install_dir: Path | None = None,
                  mirror_url: str | None = None) -> list[Step]:
    """Steps that download Python ``want`` with uv into the per-user folder and create ``venv`` with it.

    The environment gets pip from the new Python's own ensurepip, so no index is needed for that.
    """
    minor = _minor(want) or want
    idir = str(install_dir or managed_dir())
    env = {"UV_PYTHON_INSTALL_DIR": idir}
    get = [uv, "python", "install", minor, "--install-dir", idir, "--no-bin"]
    if mirror_url:
        get += ["--mirror", mirror_url]
    py = str(Path(venv) / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    return [
        worded_step("get-python", msg("step.title.get-python", version=minor, dir=idir),
                    msg("step.explain.get-python", version=minor), kind="python",
                    argv=get, env=env, subject=f"Python {minor} → {idir}",
                    undo=[uv, "python", "uninstall", "--install-dir", idir, minor]),
        worded_step("create-venv", msg("step.title.create-venv-python", venv=venv, version=minor),
                    msg("step.explain.create-venv-uv"), kind="venv", subject=f"{venv} (Python {minor})",
                    argv=[uv, "venv", "--no-config", "--managed-python", "--no-python-downloads", "--python", minor,
                          venv],
                    env=env, undo=[py, "-I", "-c", snippets.RMTREE_VENV, venv]),
        worded_step("seed-pip", msg("step.title.seed-pip"), msg("step.explain.seed-pip"), kind="command",
                    subject=venv, argv=[py, "-I", "-m", "ensurepip", "--default-pip"]),
    ]


def no_python_message(want: str | None, found_unusable: list[Message]) -> Message:
    """What the user can do when there is no interpreter for the plan and no uv to provide one."""
    minor = _minor(want) or "3"
    found: Message | str = ""
    for u in reversed(found_unusable):  # " Found but not usable: A. Found but not usable: B."
        found = msg("plan-error.found-unusable", what=u, more=found)
    return msg("plan-error.no-python", want=minor, found=found)


def _python_versions() -> list[str]:
    """Every Python minor the compat data names as a bound (python_min/python_max), oldest first."""
    found: set[tuple[int, int]] = set()
    files = get_db().files
    for name in ("pytorch", "tensorflow", "jax"):
        tables = (files.get(name) or {}).get("tables") or {}
        for table in tables.values():
            for row in table.get("rows", []) if isinstance(table, dict) else []:
                for key in ("python_min", "python_max"):
                    m = re.match(r"(\d+)\.(\d+)$", str(row.get(key) or ""))
                    if m:
                        found.add((int(m.group(1)), int(m.group(2))))
    return [f"{a}.{b}" for a, b in sorted(found)]


def newer_python_offer(machine: object, fplans: list, here: str | Version | None) -> Message | None:
    """When this Python holds a framework back (Python 3.9 gets PyTorch 2.8), the nearest newer Python that
    gets every chosen framework at least as new and one of them newer — as a note the plan shows, instead of
    settling silently. gpusetup finds that Python on the machine or provides it with uv."""
    cur = _minor(str(here) if here else None)
    chosen = [fp for fp in fplans if fp.choice is not None]
    if not cur or not chosen:
        return None
    ver = Version.parse

    names = [fp.framework for fp in chosen]
    for cand in (v for v in _python_versions() if Version(v) > Version(cur)):
        try:
            other = {fp.framework: fp for fp in resolve(machine, names, python_version=cand)}  # type: ignore[arg-type]
        except ValueError:
            continue
        better, worse = [], False
        for fp in chosen:
            new = other.get(fp.framework)
            a, b = ver(fp.choice.version), ver(new.choice.version) if new is not None and new.choice else None
            if new is None or new.choice is None or (fp.ok and not new.ok) or a is None or b is None or b < a:
                worse = True
                break
            if b > a:
                better.append((fp.framework, fp.choice.version, new.choice.version))
        if better and not worse:
            fw, have, newer = better[0]
            return msg("install.note.newer-python", framework=fw, have=have, here=cur, python=cand, newer=newer)
    return None
