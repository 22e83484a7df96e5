"""Resolver answers → an ordered, reviewable :class:`InstallPlan` of exact commands (nothing runs here).

The same plan is shown by ``--dry-run``, written by ``--script``, executed step by step and journalled, so
what the user approved is exactly what runs. Steps that need root are marked and elevated only at run time.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PureWindowsPath
from typing import Any

from gpusetup import credentials
from gpusetup.compat import branches, download_size
from gpusetup.compat.db import get_db
from gpusetup.compat.live import _override as live_override
from gpusetup.compat.live import _platform as live_platform
from gpusetup.config import ConfigError, load_config
from gpusetup.install import python as pyfind
from gpusetup.install import snippets
from gpusetup.install.net import pip_config_value
from gpusetup.messages import add_note, message_of, msg, render, worded_step
from gpusetup.mirrors import PYPI_SIMPLE, PYTORCH_INDEX, through
from gpusetup.model import Choice, FrameworkPlan, Machine, Message, Plan
from gpusetup.probe import current_os
from gpusetup.resources import installers_dir
from gpusetup.runner import SubprocessRunner
from gpusetup.versions import Version

PYTORCH_INDEX_PREFIX = PYTORCH_INDEX  # the names other modules use (gpusetup.mirrors owns the values)
CONSTRAINTS_NAME = "gpusetup-constraints.txt"
# the checks after every install (steps of the plan, so --dry-run, the CLI and the wizard show them): the files
# against their RECORD hashes, the versions, an import of each framework in the target environment
CHECK_STEPS = ("check-files", "verify", "import")
CHECK_FILES_SECONDS = 1500  # the file check stops itself after this (a few GB of CUDA libraries on a slow disk)
IMPORT_SECONDS = 300  # each framework's import (a cold `import tensorflow` from a slow disk)


class PlanError(ValueError):
    """The request cannot be planned (bad target, nothing to install); the message says how to fix it.

    ``message`` is the same as data (a gpusetup.messages code), so the wizard can word it in its language.
    """

    def __init__(self, message: Message) -> None:
        super().__init__(render(message))
        self.message = message


@dataclass
class InstallPlan(Plan):
    """A :class:`Plan` plus what the executor checks before it starts (indexes, disk) and needs to undo."""

    target: str = ""  # venv:PATH / conda:NAME / download:DIR
    python: list[str] = field(default_factory=list)  # argv prefix that runs the target interpreter
    pip: list[str] = field(default_factory=list)  # argv prefix that runs pip for the target
    indexes: list[str] = field(default_factory=list)  # package indexes to reach before starting
    probe_package: str = ""  # fallback project an index must list (its PEP 503 page is fetched)
    probes: dict[str, str] = field(default_factory=dict)  # index URL → a project it must list
    download_mib: int = 0  # the table estimate (resources/install/sizes.json)
    installed_mib: int = 0
    # what pip will download (gpusetup.compat.download_size): the question (index URL → requirements, target
    # python/os/arch) and the answer — exact from the index, or the estimate labelled as one, with why
    download_query: dict[str, Any] = field(default_factory=dict)
    download: dict[str, Any] = field(default_factory=dict)  # DownloadSize.to_dict()
    download_note: Message | None = None  # the size in words: msg("size.download-index"/-estimate-…)
    space_path: str = ""  # where the bytes land (checked for free space)
    base_pip: str = ""  # the target's pip: a new venv's from its Python's ensurepip, an existing venv's installed one ("" unknown)
    packages: list[str] = field(default_factory=list)  # exact requirement strings that are installed
    os: str = "linux"
    offline: bool = False

    def size_messages(self) -> list[Message]:
        """What the plan downloads and needs on the disk, as words (none for a plan that installs nothing).
        The disk figure adds the table's unpacked size to the download (exact when the index said it)."""
        if not (self.download_mib or self.installed_mib):
            return []
        exact = self.download.get("source") == "index"
        down = int(self.download.get("bytes") or 0) if exact else self.download_mib << 20
        out: list[Message] = [self.download_note] if self.download_note is not None and not self.offline else []
        if self.installed_mib:
            out.append(msg("size.disk", size=download_size.human(down + (self.installed_mib << 20))))
        return out


def build_plan(
    fplans: list[FrameworkPlan],
    machine: Machine,
    target: str = "venv:.venv-gpu",
    *,
    index_url: str | None = None,
    pytorch_mirror: str | None = None,
    wheelhouse: str | Path | None = None,
    download_only: str | Path | None = None,
    with_pip: bool = True,
    host_pip: bool | None = None,
    portable: bool = False,
    foreign: bool = False,
    driver: bool | None = None,
    container_toolkit: bool = False,
    cuda_toolkit: str | None = None,
    cudnn: bool = False,
    base_python: str | None = None,
    conda_envs: list[str] | None = None,
    uv: str | None = None,
    python_mirror: str | None = None,
) -> InstallPlan:
    """Turn the resolver's per-framework answers into the exact steps that install them into ``target``.

    ``driver=None`` adds driver steps only when a plan's actions need them; ``container_toolkit`` and
    ``cuda_toolkit`` only when asked. ``portable`` (for ``--script``/``--for``) uses only the target's own
    pip. ``conda_envs`` lists existing conda env names (``conda env list``), so an absent one is created.
    """
    if index_url is None or pytorch_mirror is None:  # the shared configuration file's mirrors (CLI and wizard)
        try:
            cfg = load_config()
        except ConfigError as exc:
            raise PlanError(msg("plan-error.config", detail=str(exc))) from exc
        # None: not given, the file's applies; "": given as none (a mirror the user cleared), the upstream index
        index_url = cfg.pypi_mirror if index_url is None else index_url
        pytorch_mirror = cfg.pytorch_mirror if pytorch_mirror is None else pytorch_mirror
    index_url, pytorch_mirror = index_url or None, pytorch_mirror or None
    # a password in a mirror URL stays in this process; the plan (shown, saved, journalled) has the masked URL
    index_url = credentials.remember(index_url)
    pytorch_mirror = credentials.remember(pytorch_mirror)
    os_name = (machine.system.os or current_os()).lower()
    plan = InstallPlan(target=target, os=os_name)
    choices: list[tuple[FrameworkPlan, Choice]] = []
    driver_actions = []
    for fp in fplans:
        needs_driver = [a for a in fp.actions if a.kind in download_size.DRIVER_ACTIONS]
        if needs_driver:
            driver_actions.extend(needs_driver)
        build = download_size.install_choice(fp, wsl=bool(machine.system.wsl), driver=driver)  # the one rule
        if fp.ok and fp.choice:
            choices.append((fp, fp.choice))
        elif build is not None and build is fp.gpu_choice:
            choices.append((fp, fp.gpu_choice))
            add_note(plan, msg("install.note.gpu-build-download-needs-driver" if download_only is not None
                               else "install.note.gpu-build-after-driver",
                               framework=fp.framework, version=fp.gpu_choice.version, variant=fp.gpu_choice.variant))
        elif fp.choice:
            choices.append((fp, fp.choice))
            if not fp.ok:
                why: Any
                if not any(g.vendor in ("nvidia", "amd", "intel", "apple") for g in machine.gpus):
                    why = msg("install.why.no-usable-gpu")
                elif fp.actions:
                    why = [message_of(a) for a in fp.actions]
                elif fp.rejected:
                    why = msg("install.why.no-gpu-build-because", reason=message_of(fp.rejected[0]))
                else:
                    why = msg("install.why.no-gpu-build")
                add_note(plan, msg("install.note.cpu-for-now", framework=fp.framework, version=fp.choice.version,
                                   variant=fp.choice.variant, why=why))
        else:
            reasons = [message_of(r) for r in fp.rejected[:3]] or msg("install.why.no-build-fits")
            add_note(plan, msg("install.note.nothing-to-install", framework=fp.framework, reasons=reasons))
        for a in fp.actions:
            if a.kind not in ("install-driver", "upgrade-driver"):
                cmds = ("\n  " + "\n  ".join(a.commands)) if a.commands else ""
                add_note(plan, msg("install.note.do-first", kind=a.kind, why=message_of(a), commands=cmds))

    if wheelhouse is not None and not portable and not Path(wheelhouse).expanduser().is_dir():
        raise PlanError(msg("plan-error.no-wheelhouse", path=str(wheelhouse)))
    if cuda_toolkit is not None and not re.fullmatch(r"\d{1,2}\.\d{1,2}", cuda_toolkit):
        raise PlanError(msg("plan-error.bad-cuda-toolkit", value=repr(cuda_toolkit)))
    if download_only is not None:
        _plan_download(plan, choices, Path(download_only), machine, index_url, pytorch_mirror, foreign, portable)
        own = None if foreign else f"{sys.version_info.major}.{sys.version_info.minor}"  # pip download's Python
        _plan_download_query(plan, machine, own)
        return plan
    if not choices and driver is not True and not container_toolkit and not cuda_toolkit:
        raise PlanError(msg("plan-error.nothing-to-install", why=list(plan.note_codes) or msg("plan-error.no-framework")))

    if choices:
        want_py = next((ch.python for _, ch in choices if ch.python), None)
        _plan_env(plan, target, os_name, with_pip, host_pip, portable, base_python, conda_envs, machine, want_py,
                  python_mirror, index_url=None if wheelhouse is not None else (index_url or ""))
        _plan_pip(plan, choices, index_url, pytorch_mirror, wheelhouse, uv)
        _plan_download_query(plan, machine, want_py)
        _plan_verify_protect(plan, choices)
        _plan_runtime_env(plan, choices)

    want_driver = driver is True or (driver is None and bool(driver_actions))
    if want_driver and driver is not False:
        _plan_driver(plan, machine, driver_actions, foreign)
    if container_toolkit:
        _plan_script(plan, "container-toolkit", "nvidia-container-toolkit.sh", _container_runtime(machine),
                     msg("step.title.container-toolkit"), msg("step.explain.container-toolkit"), machine)
    if cuda_toolkit:
        args = ["--version", cuda_toolkit] + (["--cudnn"] if cudnn else [])
        _plan_script(plan, "cuda-toolkit", "cuda-toolkit.sh", args, msg("step.title.cuda-toolkit", version=cuda_toolkit),
                     msg("step.explain.cuda-toolkit"), machine)
    return plan


# ------------------------------------------------------------------------------------------ pieces


def _host_pip_version() -> Version | None:
    try:
        return Version.parse(metadata.version("pip"))
    except metadata.PackageNotFoundError:
        return None


def _plan_env(plan: InstallPlan, target: str, os_name: str, with_pip: bool, host_pip: bool | None,
              portable: bool, base_python: str | None, conda_envs: list[str] | None, machine: Machine,
              want_py: str | None = None, python_mirror: str | None = None, index_url: str | None = "") -> None:
    kind, _, where = target.partition(":")
    if not portable and not pyfind.own_interpreter():
        with_pip, host_pip = True, False  # the packaged app has no pip of its own to lend the environment
    if kind == "venv" and where:
        windows = os_name == "windows"
        # A portable plan (--script, --for) runs in someone else's home: keep "~" for the script to expand.
        venv = PureWindowsPath(where) if windows else (Path(where) if portable else Path(where).expanduser())
        if not windows and not portable:
            venv = Path(venv).absolute()
        py = str(venv / ("Scripts/python.exe" if windows else "bin/python"))
        plan.python = [py]
        plan.space_path = str(venv)
        exists = not portable and (Path(str(venv)) / "pyvenv.cfg").is_file()
        if not portable and Path(str(venv)).exists() and not exists:
            raise PlanError(msg("plan-error.not-a-venv", path=str(venv)))
        if exists:
            add_note(plan, msg("install.note.existing-venv", venv=str(venv)))
            plan.base_pip = _installed_pip(Path(str(venv)))  # --progress-bar raw when it is new enough
            _env_python(plan, _venv_python(Path(str(venv))))
        elif portable:
            base = base_python or ("python" if windows else (f"python{want_py}" if want_py else "python3"))
            _venv_step(plan, base, venv, with_pip or portable)
        elif base_python:
            _venv_step(plan, base_python, venv, with_pip)
        else:
            _provide_python(plan, want_py, str(venv), with_pip, python_mirror, index_url)
        hp = _host_pip_version()
        use_host = host_pip if host_pip is not None else (not with_pip)
        if use_host and not portable and hp and hp >= (22, 3) and pyfind.own_interpreter():
            plan.pip = [sys.executable, "-m", "pip", "--python", py]
        else:
            plan.pip = [py, "-m", "pip"]
    elif kind == "conda" and where:
        name = where
        plan.python = ["conda", "run", "--no-capture-output", "-n", name, "python"]
        plan.pip = [*plan.python, "-m", "pip"]
        plan.space_path = str(Path.home())
        if conda_envs is not None and name not in conda_envs:
            pyver = _target_python_version(machine) or f"{sys.version_info.major}.{sys.version_info.minor}"
            plan.steps.append(worded_step(
                "create-conda-env", msg("step.title.create-conda-env", name=name), msg("step.explain.create-conda-env"),
                kind="venv", subject=name, argv=["conda", "create", "-y", "-n", name, f"python={pyver}", "pip"],
                undo=["conda", "env", "remove", "-y", "-n", name],
            ))
    else:
        raise PlanError(msg("plan-error.bad-target", target=repr(target)))


def _env_python(plan: InstallPlan, version: str) -> None:
    """Remember the X.Y of the environment's Python: the download size is for its wheels."""
    m = re.match(r"(\d+\.\d+)", version)
    if m:
        plan.download_query["python"] = m.group(1)


def _venv_python(venv: Path) -> str:
    """An existing venv's Python version, from its pyvenv.cfg ("" unknown)."""
    try:
        text = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return ""
    m = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+\.\d+)", text, re.MULTILINE)
    return m.group(1) if m else ""


def _venv_step(plan: InstallPlan, base: str, venv: Any, with_pip: bool) -> None:
    argv = [base, "-m", "venv", str(venv)] + ([] if with_pip else ["--without-pip"])
    plan.steps.append(worded_step(
        "create-venv", msg("step.title.create-venv", venv=str(venv)), msg("step.explain.create-venv"),
        argv=argv, kind="venv", subject=str(venv), undo=[base, "-c", snippets.RMTREE_VENV, str(venv)],
    ))


def _provide_python(plan: InstallPlan, want: str | None, venv: str, with_pip: bool,
                    python_mirror: str | None, index_url: str | None = "") -> None:
    """Create the venv with a Python of the wanted version found here, else one uv downloads (uv itself
    fetched first from the package index when it is not here); else say why. ``index_url`` None: no index
    (a wheelhouse install), "" the default one."""
    m = re.match(r"(\d+\.\d+)", want or "")
    minor = m.group(1) if m else None
    found = pyfind.find_interpreter(minor)
    if found is not None:
        _env_python(plan, str(found.version))
        if found.source != "running":
            add_note(plan, msg("install.note.python-found", version=found.version, path=found.executable))
        plan.base_pip = found.pip or ""
        _venv_step(plan, found.executable, venv, with_pip)
        return
    uv = pyfind.find_uv()
    if uv is None and index_url is not None:
        fetch = pyfind.fetch_uv_step(index_url or None)
        plan.steps.append(fetch)
        uv = fetch.subject
    if uv is None:
        raise PlanError(pyfind.no_python_message(minor, pyfind.unsuitable(minor)))
    version = minor or pyfind.DEFAULT_MANAGED
    _env_python(plan, version)
    add_note(plan, msg("install.note.python-provided", version=version, folder=str(pyfind.managed_dir())))
    plan.steps.extend(pyfind.provide_steps(version, venv, uv,
                                           mirror_url=python_mirror or pyfind.mirror()))
    plan.base_pip = ""  # its ensurepip's pip is not known before it is downloaded: no --progress-bar raw


def _installed_pip(venv: Path) -> str:
    """The version of the pip installed in an existing environment, from its dist-info folder ("" if none)."""
    try:
        found = sorted(venv.glob("lib/python3*/site-packages/pip-*.dist-info")) + \
            sorted(venv.glob("Lib/site-packages/pip-*.dist-info"))
    except OSError:
        return ""
    m = re.match(r"pip-(.+)\.dist-info$", found[0].name) if found else None
    return m.group(1) if m else ""


def _target_python_version(machine: Machine) -> str | None:
    v = machine.system.python or (machine.python_envs[0].version if machine.python_envs else None)
    mm = v.major_minor if v and len(v.release) >= 2 else None
    return f"{mm[0]}.{mm[1]}" if mm else None


def mirror_url(url: str | None, index_url: str | None, pytorch_mirror: str | None) -> str | None:
    """The index a requirement really comes from, after applying the user's mirrors (gpusetup.mirrors.through)."""
    return through(url, index_url, pytorch_mirror)


def _groups(choices: list[tuple[FrameworkPlan, Choice]], index_url: str | None,
            pytorch_mirror: str | None) -> dict[str | None, list[str]]:
    groups: dict[str | None, list[str]] = {}
    for fp, ch in choices:
        if not ch.packages:
            raise PlanError(msg("plan-error.no-packages", framework=fp.framework))
        groups.setdefault(mirror_url(ch.index_url, index_url, pytorch_mirror), []).extend(ch.packages)
    return groups


def _req_name(req: str) -> str:
    return re.split(r"[\[=<>!~; ]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _sizes(choices: list[tuple[FrameworkPlan, Choice]]) -> tuple[int, int]:
    return download_size.table_estimate((fp.framework, ch.variant) for fp, ch in choices)


PIP_RAW = (24, 1)  # the first pip with ``--progress-bar raw`` (bytes done and total per download)


def _plan_pip_upgrade(plan: InstallPlan, index_url: str | None, wheelhouse: str | Path | None,
                      uv: str | None) -> None:
    """Update pip in the environment this plan creates when its pip cannot report bytes (older than 24.1,
    as Debian 12's ensurepip gives: pip 23.0.1) or is not known before it exists (a Python uv provides), so
    the framework's download shows bytes, speed and time left. pip comes from the user's PyPI mirror, else
    pip's configured index; that index is checked before anything starts, and one that answers but has no pip
    (a mirror of the framework's wheels only) skips the update with a note (install.execute._preflight). Not
    for an existing environment (its pip is the user's), offline installs, uv, or conda."""
    new_env = any(s.id == "create-venv" for s in plan.steps)
    if not new_env or wheelhouse is not None or uv or not plan.python or plan.pip[:1] != plan.python[:1]:
        return
    got = Version.parse(plan.base_pip)
    if got and got >= PIP_RAW:
        return
    source = ["--index-url", index_url] if index_url else []
    want = "pip>={}.{}".format(*PIP_RAW)
    # the new pip is part of what Install downloads: sized with the framework (add_download_size)
    plan.download_query.setdefault("groups", {}).setdefault(
        index_url or credentials.remember(_pip_config("index-url")) or PYPI_SIMPLE, []).append(want)
    plan.steps.append(worded_step(
        "upgrade-pip", msg("step.title.upgrade-pip"),
        msg("step.explain.upgrade-pip", pip=plan.base_pip or msg("step.explain.pip-version-unknown")),
        kind="pip", subject=f"pip {plan.base_pip or '?'} → {want.removeprefix('pip')}",
        argv=[*plan.pip, "install", "--disable-pip-version-check", *source, want],
    ))


def _set_download(plan: InstallPlan, size: download_size.DownloadSize) -> None:
    size.detail = credentials.scrub(size.detail)  # an error names the index URL: never its password
    plan.download = size.to_dict()
    plan.download_note = size.message()


def _plan_pip(plan: InstallPlan, choices: list[tuple[FrameworkPlan, Choice]], index_url: str | None,
              pytorch_mirror: str | None, wheelhouse: str | Path | None, uv: str | None) -> None:
    plan.download_mib, plan.installed_mib = _sizes(choices)
    _set_download(plan, download_size.offline(plan.download_mib))  # until add_download_size asks the index
    _plan_pip_upgrade(plan, index_url, wheelhouse, uv)
    groups = _groups(choices, index_url, pytorch_mirror)
    for i, (url, reqs) in enumerate(groups.items()):
        plan.packages.extend(reqs)
        names = ", ".join(reqs)
        if wheelhouse is not None:
            source = ["--no-index", "--find-links", str(wheelhouse)]
            where: Message = msg("step.where.wheelhouse", path=str(wheelhouse))
            plan.offline = True
            plan.download_mib = 0
        else:
            source = ["--index-url", url] if url else []
            where = msg("step.where.index", url=url) if url else msg("step.where.pypi")
            _add_index(plan, url, reqs)
            plan.download_query.setdefault("groups", {}).setdefault(url or credentials.remember(_pip_config("index-url")) or PYPI_SIMPLE, []).extend(reqs)
        if uv and plan.python and plan.python[0] != "conda":
            argv = [uv, "pip", "install", "--python", plan.python[0], *source, *reqs]
        else:
            progress = ["--progress-bar", "raw"] if _pip_supports_raw(plan) else []
            argv = [*plan.pip, "install", "--disable-pip-version-check", *progress, *source, *reqs]
        plan.steps.append(worded_step(
            f"pip-install-{i + 1}" if i else "pip-install", msg("step.title.pip-install", names=names),
            msg("step.explain.pip-install", names=names, where=where), argv=argv, kind="pip", subject=names,
            undo=[*plan.pip, "uninstall", "-y", *[_req_name(r) for r in reqs]],
        ))
    if any(s.id == "upgrade-pip" for s in plan.steps):  # pip's index, when no framework comes from it
        fallback = plan.probe_package
        _add_index(plan, index_url, ["pip"])
        plan.probe_package = fallback  # the framework's project stays the fallback (the PyTorch index has no pip)


def _plan_download_query(plan: InstallPlan, machine: Machine, want_py: str | None) -> None:
    """What add_download_size asks the index: the pip steps' requirements per index, for the target's Python,
    OS and architecture (the plan's own interpreter may not exist yet)."""
    groups = plan.download_query.pop("groups", None)
    python = plan.download_query.pop("python", None) or want_py or _target_python_version(machine)
    platform = live_platform(machine)
    if not groups or not python or not platform:
        plan.download_query = {}
        return
    os_name, _, arch = platform.partition("-")
    plan.download_query = {"groups": groups, "python": python, "os": os_name, "arch": arch}


def add_download_size(plan: InstallPlan, *, index: str | None = None, timeout: float = download_size.TIMEOUT,
                      deadline: float = download_size.DEADLINE) -> None:
    """Ask the package index what the plan's pip steps will download (bounded reads, never fatal); the plan
    then carries the exact size and its file count, or keeps the table estimate labelled as an estimate.

    Runs at plan time where the live index check runs (the wizard's plan worker, ``gpusetup install``), not
    with ``--offline``/``GPUSETUP_LIVE=off``. ``index`` (``--live-index``/``GPUSETUP_LIVE_INDEX``) replaces
    every index host, as for the live check. An existing environment's installed packages are not counted.
    """
    q = plan.download_query
    if not q or plan.offline:
        return
    base = index or os.environ.get("GPUSETUP_LIVE_INDEX") or None
    try:
        groups = [(credentials.reveal(live_override(url, base)), list(reqs)) for url, reqs in q["groups"].items()]
    except credentials.MissingCredential:
        _set_download(plan, download_size.offline(plan.download_mib, "unreachable"))
        return
    new_env = any(s.id in ("create-venv", "create-conda-env") for s in plan.steps)
    installed = {} if new_env else _installed(plan)
    target = download_size.Target(python=q["python"], os=q["os"], arch=q["arch"])
    size = download_size.measure(groups, target, estimate_mib=plan.download_mib, installed=installed,
                                 timeout=timeout, deadline=deadline, **_pip_network())
    _set_download(plan, size)
    if size.source == "index":  # the disk check before Install counts what is really downloaded
        plan.download_mib = max(1, -(-size.bytes // (1 << 20)))


def framework_download_sizes(fplans: list[FrameworkPlan], machine: Machine, python: str | None = None, *,
                             ask_index: bool, index: str | None = None, index_url: str | None = None,
                             pytorch_mirror: str | None = None) -> dict[str, download_size.DownloadSize]:
    """Per framework (``gpusetup plan``): what installing its chosen build into a new environment downloads —
    from the index the install would use (the mirrors applied: a PyTorch index already worded through its
    mirror stays as it is) when ``ask_index``, else the table estimate labelled as one. ``index`` replaces every
    index host, as for the live check."""
    platform = live_platform(machine)
    base = index or os.environ.get("GPUSETUP_LIVE_INDEX") or None
    out: dict[str, download_size.DownloadSize] = {}
    jobs: dict[str, Any] = {}
    for fp in fplans:
        ch = download_size.install_choice(fp, wsl=bool(machine.system.wsl))
        if ch is None:
            continue
        estimate = _sizes([(fp, ch)])[0]
        py = python or ch.python or _target_python_version(machine)
        if not ask_index or not py or not platform:
            out[fp.framework] = download_size.offline(estimate)
            continue
        url = mirror_url(ch.index_url, index_url, pytorch_mirror) or _pip_config("index-url") or PYPI_SIMPLE
        try:
            real = credentials.reveal(live_override(credentials.remember(url) or url, base))
        except credentials.MissingCredential:
            out[fp.framework] = download_size.offline(estimate, "unreachable")
            continue
        os_name, _, arch = platform.partition("-")
        mac = machine.system.os_version if os_name == "macos" else None
        jobs[fp.framework] = ([(real, list(ch.packages))], download_size.Target(py, os_name, arch, macos=mac), estimate)
    network = _pip_network() if jobs else {}
    # the frameworks' indexes are asked side by side: a cold plan waits for the slowest walk, not for their sum
    for framework, size in download_size.measure_all(jobs, **network).items():
        size.detail = credentials.scrub(size.detail)
        out[framework] = size
    return out


def _pip_network() -> dict[str, Any]:
    """pip's extra indexes and proxy from its configuration, so the size is of what pip will fetch, as pip."""
    try:
        extra = credentials.reveal(_pip_config("extra-index-url") or "").split()
    except credentials.MissingCredential:
        extra = []
    return {"extra_indexes": extra, "proxy": _pip_config("proxy")}


def _installed(plan: InstallPlan) -> dict[str, str]:
    """name → version of what the target environment has (so pip will not download it again); {} unknown."""
    if not plan.python or (plan.python[0] != "conda" and not Path(plan.python[0]).is_file()):
        return {}
    res = SubprocessRunner().run([*plan.python, "-I", "-c", snippets.LIST], timeout=60)  # conda run: a few s
    try:
        got = json.loads(res.stdout) if res.ok else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}


def _add_index(plan: InstallPlan, url: str | None, reqs: list[str]) -> None:
    """Remember which index each group comes from (None: pip's configured index, else PyPI) for the check."""
    real = url or credentials.remember(_pip_config("index-url")) or PYPI_SIMPLE
    if real not in plan.indexes:
        plan.indexes.append(real)
        plan.probes[real] = _req_name(reqs[0])
    plan.probe_package = plan.probe_package or _req_name(reqs[0])


def _pip_supports_raw(plan: InstallPlan) -> bool:
    """``--progress-bar raw`` (pip ≥ 24.1) only when we know the pip that runs: the host's, or the one a new
    venv gets from the interpreter that was found (its ensurepip's version), or the one the plan updated."""
    if plan.pip[:1] == [sys.executable] and pyfind.own_interpreter():
        hp = _host_pip_version()
        return bool(hp and hp >= PIP_RAW)
    if any(s.id == "upgrade-pip" for s in plan.steps):
        return True
    got = Version.parse(plan.base_pip)
    return bool(got and got >= PIP_RAW)


_PYTORCH_FAMILY = {"torch", "torchvision", "torchaudio"}
_LOCAL_VARIANT = re.compile(r"^(cu\d+|rocm[\d.]+|cpu|xpu)$")


def expected_pins(choice: Choice) -> list[str]:
    """What verification must find: the exact pins, with the build tag made explicit for PyTorch indexes.

    ``torch==2.9.1`` from ``.../whl/cu126`` must end up as ``2.9.1+cu126``: pip would also accept a
    ``+cpu`` build for that pin (a local version matches the public one), which is exactly the silent
    CPU-build failure this check exists to catch.
    """
    out = []
    tagged = bool(choice.index_url and "/whl/" in choice.index_url and _LOCAL_VARIANT.match(choice.variant))
    for p in choice.packages:
        spec = re.sub(r"\[.*?\]", "", p).replace(" ", "")
        name, op, ver = spec.partition("==")
        if tagged and op and "+" not in ver and name.lower() in _PYTORCH_FAMILY and ";" not in ver:
            spec = f"{name}=={ver}+{choice.variant}"
        out.append(spec)
    return out


def _plan_runtime_env(plan: InstallPlan, choices: list[tuple[FrameworkPlan, Choice]]) -> None:
    """Runtime variables a build needs (HSA_OVERRIDE_GFX_VERSION, PYTORCH_ENABLE_MPS_FALLBACK) go into the
    environment's activation scripts, so they are set whenever the environment is used."""
    env: dict[str, str] = {}
    for _, ch in choices:
        env.update(ch.env)
    if not env:
        return
    pairs = [f"{k}={v}" for k, v in sorted(env.items())]
    plan.steps.append(worded_step(
        "runtime-env", msg("step.title.runtime-env"), msg("step.explain.runtime-env", pairs=", ".join(pairs)),
        kind="command", argv=[*plan.python, "-I", "-c", snippets.ACTIVATE_ENV, *pairs], subject=", ".join(pairs),
        undo=[*plan.python, "-I", "-c", snippets.ACTIVATE_ENV],
    ))


def _plan_verify_protect(plan: InstallPlan, choices: list[tuple[FrameworkPlan, Choice]]) -> None:
    pins = [pin for _, ch in choices for pin in expected_pins(ch)]
    plan.steps.append(worded_step(
        "verify", msg("step.title.verify"), msg("step.explain.verify"), kind="verify",
        argv=[*plan.python, "-I", "-c", snippets.VERIFY, *pins],
    ))
    reqs = [r for _, ch in choices for r in ch.packages]
    plan.steps.append(worded_step(
        "check-files", msg("step.title.check-files"), msg("step.explain.check-files"), kind="verify",
        subject=", ".join(_req_name(r) for r in reqs),
        argv=[*plan.python, "-I", "-c", snippets.CHECK_FILES, str(CHECK_FILES_SECONDS), *reqs],
    ))
    # each framework's own distribution (the first of its packages: torch, tensorflow, jax), imported as its module
    modules = list(dict.fromkeys(_req_name(ch.packages[0]) for _, ch in choices if ch.packages))
    plan.steps.append(worded_step(
        "import", msg("step.title.import", modules=", ".join(modules)), msg("step.explain.import"), kind="verify",
        subject=", ".join(modules), argv=[*plan.python, "-I", "-c", snippets.IMPORT, str(IMPORT_SECONDS), *modules],
    ))
    names = sorted({_req_name(p) for p in pins})
    plan.steps.append(worded_step(
        "protect", msg("step.title.protect"), msg("step.explain.protect", file=CONSTRAINTS_NAME, names=", ".join(names)),
        kind="constraints", argv=[*plan.python, "-I", "-c", snippets.PROTECT, CONSTRAINTS_NAME, *names],
        undo=[*plan.python, "-I", "-c", snippets.REMOVE_OURS, CONSTRAINTS_NAME,
              "pip.ini" if plan.os == "windows" else "pip.conf"],
    ))


def _plan_download(plan: InstallPlan, choices: list[tuple[FrameworkPlan, Choice]], dest: Path,
                   machine: Machine, index_url: str | None, pytorch_mirror: str | None, foreign: bool,
                   portable: bool) -> None:
    if not choices:
        raise PlanError(msg("plan-error.nothing-to-download", why=list(plan.note_codes) or msg("plan-error.no-framework")))
    plan.target = f"download:{dest}"
    plan.space_path = str(dest)
    plan.download_mib, _ = _sizes(choices)
    if portable:
        pip = ["python", "-m", "pip"]
    else:
        host = pyfind.own_interpreter() or getattr(pyfind.find_interpreter(None, need_venv=False), "executable", None)
        if host is None:
            raise PlanError(pyfind.no_python_message(None, []))
        pip = [host, "-m", "pip"]
    plan.pip = pip
    extra: list[str] = []
    if foreign:
        extra = ["--only-binary=:all:", *download_size.pip_python(_target_python(machine))]
        for tag in _platform_tags(machine):
            extra += ["--platform", tag]
    _set_download(plan, download_size.offline(plan.download_mib))  # until add_download_size asks the index
    for i, (url, reqs) in enumerate(_groups(choices, index_url, pytorch_mirror).items()):
        plan.packages.extend(reqs)
        _add_index(plan, url, reqs)
        plan.download_query.setdefault("groups", {}).setdefault(
            url or credentials.remember(_pip_config("index-url")) or PYPI_SIMPLE, []).extend(reqs)
        plan.steps.append(worded_step(
            f"download-{i + 1}" if i else "download", msg("step.title.download", names=", ".join(reqs), dest=str(dest)),
            msg("step.explain.download", dest=str(dest)), subject=f"{', '.join(reqs)} → {dest}",
            kind="pip", argv=[*pip, "download", "--disable-pip-version-check", "--dest", str(dest),
                              *(["--index-url", url] if url else []), *extra, *reqs],
        ))


def _platform_tags(machine: Machine) -> list[str]:
    s = machine.system
    return download_size.pip_platforms((s.os or "linux").lower(), s.arch or "x86_64",
                                       s.os_version if (s.os or "").lower() == "macos" else None)


def _target_python(machine: Machine) -> str | None:
    """The target's Python as text, a free-threaded build's "t" kept ("3.13t")."""
    v = machine.system.python or (machine.python_envs[0].version if machine.python_envs else None)
    return str(v) if v else None


def _pip_config(key: str) -> str | None:
    """A value from the user's pip configuration (env var or pip.conf), so checks match what pip will do."""
    return pip_config_value(key)


def _all_data_centre(machine: Machine) -> bool:
    """Every NVIDIA GPU is a data-centre model (gpu_specs.json segment), so the -server driver branch fits."""
    gpus = machine.nvidia_gpus
    if not gpus:
        return False
    # lazy: the self-test package (for its spec table) costs 41 ms (python -X importtime, load average 3.5) of
    # everything that imports gpusetup.install, `gpusetup plan` included
    from gpusetup.selftest.peaks import load_specs

    specs = load_specs()
    found = [specs.find(g.name, g.pci.device_id) for g in gpus]
    return all(s is not None and s.segment == "datacenter" for s in found)


def _plan_driver(plan: InstallPlan, machine: Machine, actions: list[Any], foreign: bool = False) -> None:
    sysinfo = machine.system
    need = next((a.min_version for a in actions if a.min_version), None)
    if sysinfo.wsl:
        add_note(plan, msg("install.note.wsl-driver-from-windows"))
        return
    gpus = machine.nvidia_gpus
    if not gpus:
        # nothing for an NVIDIA driver to drive: refused here, as the script itself refuses (issue 26)
        raise PlanError(msg("plan-error.driver-no-nvidia-gpu"))
    server = _all_data_centre(machine) or bool(sysinfo.nvswitches)
    choice = branches.driver_branch(get_db(), [g.compute_capability for g in gpus], need, server=server)
    branch = str(choice.branch) if choice.branch else None
    if (sysinfo.os or "").lower() == "windows":
        args = (["-Branch", branch] if branch else []) + (["-MinVersion", need] if need else [])
        plan.steps.append(worded_step(
            "driver", msg("step.title.driver-windows"), msg("step.explain.driver-windows"), needs_root=True,
            kind="script", argv=["powershell", "-NoProfile", "-ExecutionPolicy", "Bypass", "-File",
                                 str(installers_dir() / "nvidia-driver.ps1"), *args],
        ))
        plan.steps.append(worded_step("reboot", msg("step.title.reboot-windows"), msg("step.explain.reboot-windows"),
                                kind="reboot"))
        return
    flavour = choice.modules or "auto"
    if choice.modules is None:
        hint = " ".join((a.branch or "") for a in actions).lower()
        flavour = "proprietary" if "proprietary" in hint else "open" if "open" in hint else "auto"
    args = ["--flavour", flavour] + (["--branch", branch] if branch else [])
    if server:
        args.append("--server")
    if sysinfo.secure_boot is not None:
        args += ["--secure-boot", "on" if sysinfo.secure_boot else "off"]
    # what the report knows, so the script (and its preview for another machine) acts on that machine's facts
    # rather than on whatever the local sysfs says
    args += ["--nvidia-gpus", str(len(gpus))]
    if sysinfo.nvswitches is not None:
        args += ["--nvswitch", "yes" if sysinfo.nvswitches else "no"]
    if foreign and sysinfo.kernel:
        args += ["--kernel", sysinfo.kernel]
    why = {"open": msg("step.why.open-modules"), "proprietary": msg("step.why.proprietary-modules"),
           "auto": msg("step.why.distribution-modules")}[flavour]
    _plan_script(plan, "driver", "nvidia-driver.sh", args,
                 msg("step.title.driver-branch", branch=branch) if branch else msg("step.title.driver"),
                 msg("step.explain.driver", why=why, server=msg("step.explain.driver-server") if server else ""),
                 machine)
    if branch:
        plan.steps[-1].subject = branch
    plan.steps.append(worded_step("reboot", msg("step.title.reboot"), msg("step.explain.reboot"), kind="reboot"))
    plan.steps.append(worded_step(
        "check-driver", msg("step.title.check-driver"), msg("step.explain.check-driver"), kind="command",
        argv=["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
    ))


def _container_runtime(machine: Machine) -> list[str]:
    """--runtime for nvidia-container-toolkit.sh: the one the report found; nothing (the script looks) when the
    report does not say."""
    c = machine.containers
    if c.docker:
        return ["--runtime", "docker"]
    if c.podman:
        return ["--runtime", "podman"]
    return []


def _plan_script(plan: InstallPlan, sid: str, script: str, args: list[str], title: Message, explain: Message,
                 machine: Machine) -> None:
    path = str(installers_dir() / script)
    plan.steps.append(worded_step(sid, title, explain, argv=["bash", path, *args], needs_root=True, kind="script",
                            undo=["bash", path, "--undo"]))

