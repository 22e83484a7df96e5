"""Project files from a plan: what uv, pixi, conda or pip need to reproduce the plan's choice.

``emit_project(plans, target, kind)`` turns the resolver's :class:`~gpusetup.model.FrameworkPlan` list into
the text of one file:

- ``uv``: a ``pyproject.toml`` with ``[[tool.uv.index]]`` entries marked ``explicit = true`` and
  ``[tool.uv.sources]`` pointing each framework package at its index — and, for ROCm and Intel XPU, the
  Triton packages torch depends on, as uv's PyTorch guide routes them — so ``uv lock`` / ``uv sync`` get the
  same build the plan chose (uv's ``--torch-backend`` does not reach ``lock``/``sync``);
- ``pixi``: a ``pixi.toml`` whose platform declares the CUDA the machine's *driver* provides (pixi's
  ``__cuda``; the per-platform form of pixi 0.71+), the conda-forge channel, the Python pin and
  ``[pypi-dependencies]`` with their index;
- ``conda``: an ``environment.yml`` whose ``pip:`` section carries the index lines (conda hands that section
  to ``pip install -r`` as a requirements file);
- ``requirements``: a ``requirements.txt`` whose builds cannot silently come from the wrong index: the
  framework index is the ``--index-url`` (the PyTorch index serves torch's own dependencies), and when PyPI is
  needed as well, the framework build is pinned with its local version (``torch==2.14.1+cu126``), which no
  PyPI wheel matches — pip fails instead of installing PyPI's build.

TOML is written by tomli-w and YAML by PyYAML's safe dumper (never by concatenation), comments by
:func:`gpusetup.escape.comment`, and every index URL is checked (:func:`gpusetup.escape.index_url`), so a
value can only ever be a value. No Qt, no network: plain text from the plan. Runtime environment variables the plan needs (for example
``HSA_OVERRIDE_GFX_VERSION``) go where the tool reads them on activation (pixi ``[activation.env]``, conda
``variables:``) or, for uv and pip, into a comment that says how to set them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import tomli_w
from packaging.requirements import InvalidRequirement, Requirement

from gpusetup import escape
from gpusetup.compat.db import get_db
from gpusetup.generate.render import yaml_dump
from gpusetup.messages import msg, render
from gpusetup.mirrors import through
from gpusetup.model import EMIT_KINDS, Choice, FrameworkPlan, Message

DEFAULT_FILES = {"uv": "pyproject.toml", "pixi": "pixi.toml", "conda": "environment.yml",
                 "requirements": "requirements.txt"}
PYPI_SIMPLE = "https://pypi.org/simple"
PYTORCH_INDEX_PREFIX = "https://download.pytorch.org/whl"
_TITLES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}
_ACTION_TITLES = {
    "install-driver": "install the NVIDIA driver",
    "upgrade-driver": "upgrade the NVIDIA driver",
    "use-wsl2": "use WSL2 instead of native Windows",
    "change-python": "use a different Python version",
}


ENV_WHY = {
    "HSA_OVERRIDE_GFX_VERSION": "ROCm runs the gfx1030 kernels on this RDNA2 card (not supported by AMD; remove it "
                                "if kernels crash)",
    "PYTORCH_ENABLE_MPS_FALLBACK": "operations the Apple GPU does not implement run on the CPU instead of failing",
}


class EmitError(ValueError):
    """The plan cannot be written as that kind of file (no build chosen, unknown kind); ``message`` is the
    same as data (a gpusetup.messages message), ``str()`` the English."""

    def __init__(self, message: Message) -> None:
        self.message = message
        super().__init__(render(message))


@dataclass
class Target:
    """The machine class the file is for (from the plan's machine)."""

    os: str | None  # linux / windows / macos
    arch: str | None  # x86_64 / aarch64 / arm64 / AMD64
    python: str | None  # "3.12"
    wsl: bool = False
    env: dict[str, str] = field(default_factory=dict)  # runtime variables to set on activation
    env_why: dict[str, str] = field(default_factory=dict)
    driver: str | None = None  # the NVIDIA driver version ("550.54.14"), when there is one
    driver_cuda: str | None = None  # the CUDA version that driver provides ("12.4"), pixi's __cuda
    driver_cuda_source: str | None = None  # where that came from, in words


@dataclass
class Emitted:
    kind: str
    filename: str
    text: str
    notes: list[str] = field(default_factory=list)  # what the user should know (also written as comments)


@dataclass
class _Pick:
    framework: str
    choice: Choice
    gpu: bool  # the GPU build (False: the CPU build, because no GPU build exists)
    before: list[str]  # actions needed before the build can use the GPU
    index: str | None  # the index after mirrors


def emit_project(plans: list[FrameworkPlan], target: Target, kind: str, *, name: str = "gpu-project",
                 index_url: str | None = None, pytorch_mirror: str | None = None,
                 header: list[str] | None = None) -> Emitted:
    """The text of one project file reproducing ``plans`` for ``target``.

    ``index_url`` replaces PyPI (a mirror), ``pytorch_mirror`` replaces ``https://download.pytorch.org/whl``
    (the same options as ``gpusetup install``). ``header`` lines are written first, as comments.
    """
    if kind not in EMIT_KINDS:
        raise EmitError(msg("emit.error.unknown-kind", kind=repr(kind), choices=", ".join(EMIT_KINDS)))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise EmitError(msg("emit.error.bad-name", name=escape.one_line(repr(name))))
    for option, url in (("--index-url", index_url), ("--pytorch-mirror", pytorch_mirror)):
        if url:
            try:
                escape.index_url(url)
            except escape.BadValue as exc:
                raise EmitError(msg("emit.error.bad-url", option=option, url=escape.one_line(repr(url)))) from exc
    index_url, login_a = _without_login(index_url)
    pytorch_mirror, login_b = _without_login(pytorch_mirror)
    picks = [pick for pick in (_pick(p, index_url, pytorch_mirror) for p in plans) if pick is not None]
    if not picks:
        raise EmitError(msg("emit.error.no-build"))
    notes = _notes(picks, target)
    if login_a or login_b:
        notes.append("A mirror here needs a login: gpusetup left the user name and password out of this file "
                     "(files get shared and committed). Give them to the tool the way it reads credentials "
                     "(for pip: ~/.netrc or keyring).")
    comments = [*(header or []), *notes]
    writer = {"uv": _uv, "pixi": _pixi, "conda": _conda, "requirements": _requirements}[kind]
    text = writer(picks, target, name, index_url, comments)
    return Emitted(kind=kind, filename=DEFAULT_FILES[kind], text=text, notes=notes)


# ------------------------------------------------------------------------------------------ choosing


def _mirror(url: str | None, index_url: str | None, pytorch_mirror: str | None) -> str | None:
    return through(url, None, pytorch_mirror)  # a PyPI requirement keeps None: the file names its index apart


def _pick(p: FrameworkPlan, index_url: str | None, pytorch_mirror: str | None) -> _Pick | None:
    before = [_action_text(a.kind, a.min_version) for a in p.actions]
    if p.ok and p.choice:
        ch, gpu = p.choice, p.choice.variant != "cpu"
    elif p.gpu_choice:
        ch, gpu = p.gpu_choice, True
    elif p.choice:
        ch, gpu = p.choice, False
    else:
        return None
    if not ch.packages:
        return None
    return _Pick(p.framework, ch, gpu, before, _mirror(ch.index_url, index_url, pytorch_mirror))


def _without_login(url: str | None) -> tuple[str | None, bool]:
    """The URL without ``user:password@`` (a secret never goes into a project file), and whether it had one."""
    if not url:
        return url, False
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, False
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), True


def _action_text(kind: str, min_version: str | None) -> str:
    text = _ACTION_TITLES.get(kind, kind.replace("-", " "))
    return f"{text} (at least {min_version})" if min_version else text


def _notes(picks: list[_Pick], target: Target) -> list[str]:
    out: list[str] = []
    where = "WSL2" if target.wsl else (target.os or "any OS")
    if target.arch:
        where += f" {target.arch}"
    out.append(f"Made for: {where}, Python {target.python or 'any'}.")
    for p in picks:
        title = _TITLES.get(p.framework, p.framework)
        build = f"{title} {p.choice.version}, {p.choice.variant} build"
        src = f" from {p.index}" if p.index else " from PyPI"
        if p.gpu and not p.before:
            out.append(f"{build}{src}: works on this machine now.")
        elif p.gpu:
            out.append(f"{build}{src}: uses the GPU once you {'; then '.join(p.before)}.")
        else:
            out.append(f"{build}{src}: no GPU build works on this machine, so this is the CPU build.")
    for k, v in target.env.items():
        why = target.env_why.get(k) or ENV_WHY.get(k, "")
        out.append(f"Runtime setting {k}={v}" + (f": {why}" if why else "."))
    return out


def _requirement(req: str) -> Requirement:
    try:
        return Requirement(req)
    except InvalidRequirement as exc:
        raise EmitError(msg("emit.error.bad-requirement", requirement=repr(req), error=str(exc))) from exc


def _cuda_version(ch: Choice) -> str | None:
    """The CUDA version a build was made for: cu126 → 12.6, cuda13 → 13, else None (no CUDA)."""
    m = re.fullmatch(r"cu(\d+)(\d)", ch.variant)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    m = re.fullmatch(r"cuda(\d+)(?:\.(\d+))?", ch.variant)
    if m:
        return m.group(1) + (f".{m.group(2)}" if m.group(2) else "")
    return None


def _index_name(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    base = "pytorch" if "/whl" in url else "index"
    slug = re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-") or "index"
    return f"{base}-{slug}"


def _python_pin(target: Target, picks: list[_Pick]) -> str | None:
    py = target.python or next((p.choice.python for p in picks if p.choice.python), None)
    m = re.match(r"^(\d+)\.(\d+)", py or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _header(lines: list[str]) -> str:
    return "".join(escape.comment(line) + "\n" for line in lines)


def _toml(doc: dict[str, Any]) -> str:
    return tomli_w.dumps(doc)


# ---------------------------------------------------------------------------------------------- uv

# The packages uv's PyTorch guide routes to the PyTorch index besides torch itself, per backend (astral-sh/uv
# docs/guides/integration/pytorch.md at 26a9dd4b, 2026-08-21: "ROCm support relies on both Triton packages,
# which should also be installed from the PyTorch index (and included in `project.dependencies`)"; "Intel GPU
# support relies on `triton-xpu`"). PyPI has old, unrelated uploads under these names (pytorch-triton-rocm
# 2.1.0, triton-rocm 3.0.0rc1, triton-xpu 3.3.0b1: https://pypi.org/pypi/<name>/json, read 2026-11-27), so
# without the routing uv finds no version that torch's pin accepts and the lock fails.
_TRITON = {"rocm": ("pytorch-triton-rocm", "triton-rocm"), "xpu": ("triton-xpu",)}
_TRITON_MARKER = {"rocm": "sys_platform == 'linux'", "xpu": "sys_platform == 'linux' or sys_platform == 'win32'"}


def _backend(variant: str) -> str | None:
    if variant.startswith("rocm"):
        return "rocm"
    if variant == "xpu":
        return "xpu"
    return None


def _uv_marker(target: Target) -> str | None:
    os_marker = {"linux": "linux", "windows": "win32", "macos": "darwin", "darwin": "darwin"}.get(
        "linux" if target.wsl else (target.os or ""))
    if not os_marker:
        return None
    marker = f"sys_platform == '{os_marker}'"
    arch = (target.arch or "").lower()
    machine = {("linux", "x86_64"): "x86_64", ("linux", "amd64"): "x86_64", ("linux", "aarch64"): "aarch64",
               ("linux", "arm64"): "aarch64", ("win32", "x86_64"): "AMD64", ("win32", "amd64"): "AMD64",
               ("win32", "arm64"): "ARM64", ("darwin", "arm64"): "arm64", ("darwin", "aarch64"): "arm64",
               ("darwin", "x86_64"): "x86_64"}.get((os_marker, arch))
    if machine:
        marker += f" and platform_machine == '{machine}'"
    return marker


def _uv(picks: list[_Pick], target: Target, name: str, index_url: str | None, comments: list[str]) -> str:
    py = _python_pin(target, picks)
    deps = [req for p in picks for req in p.choice.packages]
    indexes: dict[str, str] = {}  # url -> name
    sources: dict[str, Any] = {}  # package -> {index} or [{index, marker}]
    for p in picks:
        if not p.index:
            continue
        iname = indexes.setdefault(p.index, _index_name(p.index))
        for req in p.choice.packages:
            sources.setdefault(_requirement(req).name, {"index": iname})
        backend = _backend(p.choice.variant) if p.framework == "pytorch" else None
        for pkg in _TRITON.get(backend or "", ()):
            marker = _TRITON_MARKER[backend or ""]
            if pkg not in sources:
                deps.append(f"{pkg} ; {marker}")
                sources[pkg] = [{"index": iname, "marker": marker}]
    project: dict[str, Any] = {"name": name, "version": "0.1.0"}
    if py:
        project["requires-python"] = f"=={py}.*"
    project["dependencies"] = deps
    uv: dict[str, Any] = {}
    env_marker = _uv_marker(target)
    if env_marker:
        uv["environments"] = [env_marker]  # lock for the kind of machine the plan was made for only
    index_rows: list[dict[str, Any]] = []
    if index_url:
        index_rows.append({"name": "pypi-mirror", "url": index_url, "default": True})
    index_rows += [{"name": iname, "url": url, "explicit": True} for url, iname in indexes.items()]
    if index_rows:
        uv["index"] = index_rows
    if sources:
        uv["sources"] = sources
    doc: dict[str, Any] = {"project": project}
    if uv:
        doc["tool"] = {"uv": uv}
    routed = [pkg for pkgs in _TRITON.values() for pkg in pkgs if pkg in sources]
    text = [*comments, "",
            "uv: merge [project].dependencies and the [tool.uv] tables into your own pyproject.toml,",
            "then `uv lock` and `uv sync`. `explicit = true` means an index serves only the packages",
            "[tool.uv.sources] sends to it, so nothing else is taken from it by accident."]
    if env_marker:
        text.append(f"tool.uv.environments: lock for {env_marker} only (the kind of machine the plan was made for).")
    if routed:
        text += [f"{', '.join(routed)}: the Triton build torch needs for this GPU comes from the same index (as",
                 "uv's PyTorch guide routes it); PyPI's packages of that name are older, unrelated uploads."]
    return _header(text) + _toml(doc)


# -------------------------------------------------------------------------------------------- pixi


def _pixi_platform(target: Target) -> str | None:
    os_ = "linux" if target.wsl else (target.os or "")
    arch = (target.arch or "").lower()
    return {("linux", "x86_64"): "linux-64", ("linux", "amd64"): "linux-64", ("linux", "aarch64"): "linux-aarch64",
            ("linux", "arm64"): "linux-aarch64", ("windows", "x86_64"): "win-64", ("windows", "amd64"): "win-64",
            ("windows", "arm64"): "win-arm64", ("macos", "arm64"): "osx-arm64", ("macos", "x86_64"): "osx-64",
            ("darwin", "arm64"): "osx-arm64", ("darwin", "x86_64"): "osx-64"}.get((os_, arch))


def _pixi(picks: list[_Pick], target: Target, name: str, index_url: str | None, comments: list[str]) -> str:
    platform = _pixi_platform(target)
    if platform is None:
        raise EmitError(msg("emit.error.no-pixi-platform", os=target.os or msg("emit.error.unknown-os"),
                            arch=f" {target.arch}" if target.arch else ""))
    py = _python_pin(target, picks)
    cuda_picks = [p for p in picks if p.gpu and _cuda_version(p.choice)]
    text = [*comments, "", "pixi: `pixi install` solves and locks this workspace; `pixi shell` activates it."]
    platform_entry: str | dict[str, str] = platform
    if cuda_picks and target.driver_cuda:
        # pixi's __cuda is what the *driver* provides (pixi refuses run/shell on a machine whose driver provides
        # less): the driver's CUDA, not the wheels' — a cu126 wheel runs on a 12.4 driver (minor-version
        # compatibility), and declaring 12.6 would lock this very machine out.
        platform_entry = {"platform": platform, "cuda": target.driver_cuda}
        builds = ", ".join(f"{p.choice.variant} (CUDA {_cuda_version(p.choice)})" for p in cuda_picks)
        text += [f"cuda = {target.driver_cuda}: the CUDA version the NVIDIA driver {target.driver or ''} provides"
                 f"{' (' + target.driver_cuda_source + ')' if target.driver_cuda_source else ''}, pixi's __cuda;",
                 f"the build(s) {builds} run on it. pixi older than 0.71 does not read a platform table: there,",
                 f"write platforms = [\"{platform}\"] and a [system-requirements] table with cuda = "
                 f"\"{target.driver_cuda}\"."]
    elif cuda_picks:
        text += ["No NVIDIA driver was found, so no __cuda is declared: once a driver is installed, add its CUDA",
                 "version (`nvidia-smi` shows it) with `pixi workspace platform edit` or cuda = \"X.Y\" on the platform."]
    workspace: dict[str, Any] = {"name": name, "channels": ["conda-forge"], "platforms": [platform_entry]}
    doc: dict[str, Any] = {"workspace": workspace}
    if index_url:
        doc["pypi-options"] = {"index-url": index_url}
    if py:
        doc["dependencies"] = {"python": f"{py}.*"}
    pypi: dict[str, Any] = {}
    for p in picks:
        for req in p.choice.packages:
            r = _requirement(req)
            entry: dict[str, Any] = {"version": str(r.specifier) or "*"}
            if r.extras:
                entry["extras"] = sorted(r.extras)
            if p.index:
                entry["index"] = p.index
            pypi[r.name] = entry
    doc["pypi-dependencies"] = pypi
    if target.env:
        doc["activation"] = {"env": dict(target.env)}
    return _header(text) + _toml(doc)


# ------------------------------------------------------------------------------- pip and conda's pip


_LOCAL_LABEL = re.compile(r"cu\d+|rocm[\d.]+|xpu|cpu")


def _exact_pin(p: _Pick, req: str) -> str:
    """``req`` with the exact version and the build's local label (``torch==2.14.*`` → ``torch==2.14.1+cu126``)
    when the compatibility data knows the release's newest patch; else ``req`` unchanged."""
    r = _requirement(req)
    if r.name != "torch" or not _LOCAL_LABEL.fullmatch(p.choice.variant) or r.marker or r.url:
        return req
    latest = next((str(row.get("latest_known") or "") for row in get_db().rows("pytorch", "releases")
                   if str(row.get("version")) == p.choice.version), "")
    if not latest or not r.specifier.contains(latest, prereleases=True):
        return req
    extras = f"[{','.join(sorted(r.extras))}]" if r.extras else ""
    return f"{r.name}{extras}=={latest}+{p.choice.variant}"


def _pip_lines(picks: list[_Pick], index_url: str | None) -> tuple[list[str], list[str]]:
    """Requirements-file lines and what to say about them.

    pip takes the highest matching version from *all* its indexes and only warns when one is unreachable, so
    ``--extra-index-url <framework index>`` silently installs PyPI's build (CUDA 13 on Linux, CPU on Windows)
    whenever the framework index is slow or down. Here, when every build comes from one framework index, that
    index is the only one (``--index-url``; the PyTorch index serves torch's dependencies too); when PyPI is
    needed as well, the framework builds are pinned with their local version label, which no PyPI wheel has.
    """
    framework = list(dict.fromkeys(p.index for p in picks if p.index))
    from_pypi = [p for p in picks if not p.index]
    lines: list[str] = []
    notes: list[str] = []
    if len(framework) == 1 and not from_pypi:
        lines.append(f"--index-url {framework[0]}")
        lines += [req for p in picks for req in p.choice.packages]
        notes.append(f"The only index is {framework[0]}: it serves the build and its dependencies, and when it "
                     "cannot be reached pip stops instead of taking another build from PyPI.")
        if index_url:
            notes.append(f"The PyPI mirror {index_url} is not needed here: nothing in this file comes from PyPI.")
        return lines, notes
    if index_url:
        lines.append(f"--index-url {index_url}")
    lines += [f"--extra-index-url {url}" for url in framework]
    for p in picks:
        for req in p.choice.packages:
            pinned = _exact_pin(p, req) if p.index else req
            lines.append(pinned)
            if pinned != req:
                notes.append(f"{pinned}: the exact build, so pip fails when {p.index} cannot be reached instead "
                             "of installing the PyPI build of the same version.")
    return lines, notes


def _requirements(picks: list[_Pick], target: Target, name: str, index_url: str | None,
                  comments: list[str]) -> str:
    lines, notes = _pip_lines(picks, index_url)
    extra = [*notes, "", "pip: `python -m pip install -r requirements.txt`."]
    if target.env:
        extra.append("Set before running: " + " ".join(f"{k}={escape.sh(v)}" for k, v in target.env.items()))
    return _header([*comments, *extra]) + "".join(f"{line}\n" for line in lines)


def _conda(picks: list[_Pick], target: Target, name: str, index_url: str | None, comments: list[str]) -> str:
    py = _python_pin(target, picks)
    lines, notes = _pip_lines(picks, index_url)
    text = [*comments, *notes, "",
            "conda: `conda env create -f environment.yml` (or mamba / micromamba). conda installs the",
            "pip: list with `pip install -r` on a temporary requirements file, index lines included."]
    deps: list[Any] = [f"python={py}"] if py else []
    deps += ["pip", {"pip": lines}]
    doc: dict[str, Any] = {"name": name, "channels": ["conda-forge", "nodefaults"], "dependencies": deps}
    if target.env:
        doc["variables"] = dict(target.env)
    return _header(text) + yaml_dump(doc)
