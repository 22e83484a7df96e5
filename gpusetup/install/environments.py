"""Python environments the framework proof can run in ("Check another Python environment…").

:func:`known` lists what is on this computer: the environment gpusetup installed, the interpreters the
Python finder knows (``gpusetup.install.python``), conda environments, virtual environments in the usual
folders and the one detection saw — each with its version and the frameworks installed in it (read from the
package metadata; nothing is imported). :func:`check` validates what the user picked (a python executable or
an environment's folder) and says, as a message, whether the proof can run there and, if not, why: not a
Python, too old for the check, or no framework installed.

:func:`from_journal` reads the environments gpusetup's installer itself made from its journal folder (the
saved plan of the current install and of earlier ones in ``history/``): where the proof runs after a resume, a
reopened wizard or an app restart, with the frameworks that were installed there — never gpusetup's own
environment. gpusetup's own environment is listed only when it holds a framework, after the others; the
packaged app is not a Python and is never listed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.install.journal import JOURNAL, PLAN, Journal, default_state_dir
from gpusetup.install.python import candidates as interpreters
from gpusetup.messages import msg
from gpusetup.model import Machine, Message
from gpusetup.probe import ProbeContext, pyenv
from gpusetup.probe.pyenv import frozen, interpreter_in
from gpusetup.runner import Runner, SubprocessRunner
from gpusetup.versions import Version

# the framework check (gpusetup/selftest/fwcheck.py) runs in the chosen environment and supports Python 3.8+
MIN_PYTHON = (3, 8)
DEFAULT_FRAMEWORKS = ("torch", "tensorflow", "jax")
# import name → installed distribution names (normalised) that provide it
DISTRIBUTIONS = {
    "torch": re.compile(r"torch"),
    "tensorflow": re.compile(r"tensorflow|tensorflow-(cpu|gpu|intel|macos|metal)|tf-nightly"),
    "jax": re.compile(r"jax"),
    "numpy": re.compile(r"numpy"),
}
# folders that usually hold virtual environments, under the home folder (one level deep)
VENV_HOMES = (".virtualenvs", "venvs", ".venvs", "envs", ".local/share/virtualenvs")
CONDA_ROOTS = ("miniconda3", "anaconda3", "miniforge3", "mambaforge", ".conda", "micromamba")
MAX_LISTED = 40
# a requirement's project name (normalised) → the framework it installs, in the install plan's naming
PLAN_FRAMEWORKS = {"torch": "pytorch", "tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow", "tf-nightly": "tensorflow",
                   "jax": "jax"}


@dataclass
class EnvCheck:
    """One environment: where it is, its interpreter, and whether the proof can run there (``message``)."""

    path: str  # what the user picked, or where it was found
    python: str | None = None  # the interpreter the proof runs
    version: str | None = None  # "3.11.2"
    kind: str = ""  # venv / conda / system
    runs: str | None = None  # the interpreter that really runs (sys.executable there; a shim or link resolves to it)
    found: dict[str, str] = field(default_factory=dict)  # framework (import name) → installed version
    message: Message = field(default_factory=lambda: msg("envcheck.not-checked"))

    @property
    def ok(self) -> bool:
        return self.python is not None and bool(self.found) and self.message.code == "envcheck.ready"

    @property
    def short(self) -> Message:
        """A few words for a list row (its version and folder are shown beside them)."""
        if self.message.code == "envcheck.no-framework":
            return msg("envcheck.short.no-framework")
        if self.message.code == "envcheck.too-old":
            return msg("envcheck.short.too-old", need=self.message.params.get("need"))
        if self.message.code == "envcheck.ready":
            return msg("envcheck.short.ready", found=self.message.params.get("found"))
        return self.message

    @property
    def frameworks(self) -> list[str]:
        """The frameworks the proof checks there (those installed, of the ones asked for)."""
        return list(self.found)


def check(path: str, frameworks: Sequence[str] = DEFAULT_FRAMEWORKS, runner: Runner | None = None) -> EnvCheck:
    """Can the proof run in the environment at ``path``? Runs its interpreter once (no imports beyond sys)."""
    given = Path(os.path.expanduser(path.strip()))
    out = EnvCheck(path=str(given))
    if not path.strip() or not given.exists():
        out.message = msg("envcheck.not-found", path=str(given))
        return out
    exe = interpreter_in(given)
    if exe is None:
        out.message = msg("envcheck.no-python-inside", path=str(given))
        return out
    if _is_app(exe):  # the packaged app runs its own embedded Python: it is not an environment to prove
        out.message = msg("envcheck.not-a-python", path=str(exe))
        return out
    if not os.access(exe, os.X_OK):
        out.message = msg("envcheck.not-a-python", path=str(exe))
        return out
    ctx = ProbeContext(runner=runner or SubprocessRunner(), python=str(exe), timeout=15.0)
    info = pyenv.python_info(ctx)
    if info.error or info.version is None:
        out.message = msg("envcheck.not-a-python", path=str(exe))
        return out
    out.python, out.version, out.runs = str(exe), info.version, info.executable
    out.kind = "conda" if info.is_conda else "venv" if info.is_venv else "system"
    got = Version.parse(info.version)
    if got is None or got < MIN_PYTHON:
        out.message = msg("envcheck.too-old", python=str(exe), version=info.version,
                          need="{}.{}".format(*MIN_PYTHON))
        return out
    dists = pyenv.distributions(info.site_dirs)
    for name in frameworks:
        pattern = DISTRIBUTIONS.get(name)
        hit = next((d for n, d in sorted(dists.items()) if pattern and pattern.fullmatch(n)), None)
        if hit is not None:
            out.found[name] = hit.version
    if not out.found:
        out.message = msg("envcheck.no-framework", python=str(exe), version=info.version,
                          wanted=", ".join(frameworks))
        return out
    out.message = msg("envcheck.ready", version=info.version,
                      found=", ".join(f"{k} {v}" for k, v in out.found.items()))
    return out


def candidates(machine: Machine | None = None, installed: Iterable[str] = (), env: dict[str, str] | None = None,
               runner: Runner | None = None) -> list[str]:
    """Interpreters (or environment folders) worth offering, most relevant first, without duplicates."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or str(Path.home()))
    out: list[str] = [str(p) for p in installed if p]
    for pe in (machine.python_envs if machine is not None else []):
        if pe.executable:
            out.append(pe.executable)
    out += _conda_envs(runner or SubprocessRunner(), env)
    for root in CONDA_ROOTS:
        with contextlib.suppress(OSError):
            out += [str(p) for p in sorted((home / root / "envs").glob("*")) if p.is_dir()]
    for folder in VENV_HOMES:
        with contextlib.suppress(OSError):
            out += [str(p.parent) for p in sorted((home / folder).glob("*/pyvenv.cfg"))]
    with contextlib.suppress(OSError):  # ~/project/.venv, ~/gpu-env: one level under home
        out += [str(p.parent) for p in sorted(home.glob("*/pyvenv.cfg"))]
        out += [str(p.parent) for p in sorted(home.glob("*/.venv/pyvenv.cfg"))]
    with contextlib.suppress(OSError):
        out += [argv[0] for argv, _ in interpreters(None, env) if len(argv) == 1]
    seen: set[str] = set()
    uniq: list[str] = []
    for p in out:
        exe = interpreter_in(Path(p))
        key = os.path.abspath(str(exe or p))
        if key not in seen and not (exe is not None and _is_app(exe)):
            seen.add(key)
            uniq.append(p)
    return uniq[:MAX_LISTED]


def _is_app(exe: Path | str) -> bool:
    """``exe`` is the packaged app itself (which runs an embedded Python but is no environment)."""
    if not frozen():
        return False
    try:
        return os.path.samefile(exe, sys.executable)
    except OSError:
        return os.path.abspath(exe) == os.path.abspath(sys.executable)


def own_environment() -> str | None:
    """gpusetup's own environment (``sys.prefix``) when it runs from one (None in the packaged app)."""
    return None if frozen() else os.path.abspath(sys.prefix)


def _is_own(c: EnvCheck) -> bool:
    own = own_environment()
    if own is None or c.python is None:
        return False
    if c.kind == "system":  # the base interpreter of gpusetup's venv is another Python, not gpusetup's own
        return os.path.abspath(c.python) == os.path.abspath(sys.executable) and sys.prefix == sys.base_prefix
    return os.path.abspath(str(Path(c.python).parent.parent)) == own


def known(machine: Machine | None = None, installed: Iterable[str] = (), frameworks: Sequence[str] = DEFAULT_FRAMEWORKS,
          env: dict[str, str] | None = None, runner: Runner | None = None) -> list[EnvCheck]:
    """Every candidate, checked (those that are not a Python at all are left out); usable ones first."""
    runner = runner or SubprocessRunner()
    checked = [check(p, frameworks, runner) for p in candidates(machine, installed, env, runner)]
    usable = [c for c in checked if c.python is not None]
    seen: set[str] = set()
    out = []
    for c in usable:  # two names for one interpreter (python3 and python3.11 on PATH): listed once
        key = os.path.realpath(c.runs or c.python or c.path) if c.kind == "system" \
            else os.path.abspath(c.python or c.path)
        if key not in seen:
            seen.add(key)
            out.append(c)
    # gpusetup's own environment holds gpusetup, not a framework: listed only when it has one, and never first
    out = [c for c in out if c.ok or not _is_own(c)]
    return sorted(out, key=lambda c: (not c.ok, _is_own(c)))


@dataclass
class Installed:
    """An environment gpusetup's installer made or installed into, from its journal folder."""

    target: str  # venv:PATH / conda:NAME, as the plan says
    python: str | None  # its interpreter (a conda environment named in the plan: found through conda)
    frameworks: list[str]  # what was installed there, in the install plan's naming (pytorch / tensorflow / jax)
    status: str  # finished / unfinished (crashed, failed, cancelled, waiting for a restart)

    @property
    def folder(self) -> str:
        return self.target.split(":", 1)[1] if ":" in self.target else self.target


def from_journal(journal_dir: Path | None = None, runner: Runner | None = None,
                 env: dict[str, str] | None = None) -> list[Installed]:
    """The environments gpusetup's installer made, newest first: the current install, then the earlier ones
    (``history/``); rolled-back ones and those whose folder is gone are left out. Reads the journal and the
    saved plan; a conda environment the plan names only by its name (``conda:NAME``) is found by asking conda
    where its environments are (``conda env list --json``, once, only then) — after a restart the proof runs in
    it too. Without conda, or with the environment removed, it is left out."""
    root = Path(journal_dir) if journal_dir else default_state_dir()
    folders = [root]
    with contextlib.suppress(OSError):
        folders += sorted((d for d in (root / "history").iterdir() if d.is_dir()), key=lambda d: d.name, reverse=True)
    out: list[Installed] = []
    seen: set[str] = set()
    conda: list[list[str]] = []  # conda's environment folders, asked for at most once
    env = dict(os.environ) if env is None else env

    def conda_prefix(name: str) -> str | None:
        # where conda installations keep their environments first (no process: the wizard asks this when Verify
        # starts), then conda itself, for one kept elsewhere
        home = Path(env.get("HOME") or str(Path.home()))
        roots = [Path(env["CONDA_EXE"]).parent.parent] if env.get("CONDA_EXE") else []
        for root in [*roots, *(home / r for r in CONDA_ROOTS)]:
            folder = root if name == "base" else root / "envs" / name
            if interpreter_in(folder) is not None:
                return str(folder)
        if not conda:
            conda.append(_conda_envs(runner or SubprocessRunner(), env))
        return conda_env_folder(name, conda[0])

    for d in folders:
        found = _installed_in(d, conda_prefix)
        if found is not None and found.target not in seen:
            seen.add(found.target)
            out.append(found)
    return out


def conda_env_folder(name: str, folders: Sequence[str]) -> str | None:
    """The folder of the conda environment called ``name`` among ``folders`` (``conda env list``'s paths, the
    base environment first): ``base`` is the first, any other the one whose folder is ``…/envs/NAME``."""
    if not folders:
        return None
    if name == "base":
        return folders[0]
    return next((f for f in folders if Path(f).name == name and Path(f).parent.name == "envs"), None)


def _installed_in(folder: Path, conda_prefix: Callable[[str], str | None] | None = None) -> Installed | None:
    if not (folder / JOURNAL).is_file() or not (folder / PLAN).is_file():
        return None
    try:
        status = Journal(folder).status()
        data = json.loads((folder / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if status in ("none", "rolled-back") or not isinstance(data, dict):
        return None
    target = str(data.get("target") or "")
    kind, _, where = target.partition(":")
    if kind not in ("venv", "conda") or not where:
        return None
    python = None
    argv = data.get("python") or []
    if isinstance(argv, list) and len(argv) == 1 and isinstance(argv[0], str):
        python = argv[0]
    elif kind == "venv" or os.path.isabs(where):
        exe = interpreter_in(Path(where))
        python = str(exe) if exe is not None else None
    elif kind == "conda" and conda_prefix is not None:  # by name: where conda keeps it now
        prefix = conda_prefix(where)
        exe = interpreter_in(Path(prefix)) if prefix else None
        python = str(exe) if exe is not None else None
    if python is None or not Path(python).exists():
        return None
    return Installed(target=target, python=python, frameworks=plan_frameworks(data.get("packages") or []),
                     status=status)


def plan_frameworks(packages: Iterable[str]) -> list[str]:
    """The frameworks a plan's requirement strings install ("jax[cuda12]==0.7.2" → "jax"), each once."""
    out: list[str] = []
    for req in packages:
        name = re.split(r"[\[=<>!~;@ ]", str(req).strip(), maxsplit=1)[0].lower().replace("_", "-")
        fw = PLAN_FRAMEWORKS.get(name)
        if fw and fw not in out:
            out.append(fw)
    return out


def _conda_envs(runner: Runner, env: dict[str, str]) -> list[str]:
    conda = env.get("CONDA_EXE") or runner.which("conda")
    if not conda:
        return []
    res = runner.run([conda, "env", "list", "--json"], timeout=30)
    if not res.ok:
        return []
    try:
        return [str(p) for p in json.loads(res.stdout).get("envs", []) if isinstance(p, str)]
    except (ValueError, AttributeError):
        return []
