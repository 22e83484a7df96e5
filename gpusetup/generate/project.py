"""Project files from a plan: what uv, pixi, conda or pip need to reproduce the plan's choice.

``emit_project(plans, target, kind)`` turns the resolver's :class:`~gpusetup.model.FrameworkPlan` list into
the text of one file:

- ``uv``: a ``pyproject.toml`` with ``[[tool.uv.index]]`` entries marked ``explicit = true`` and
  ``[tool.uv.sources]`` pointing each framework package at its index, so ``uv lock`` / ``uv sync`` get the
  same build the plan chose (uv's ``--torch-backend`` does not reach ``lock``/``sync``);
- ``pixi``: a ``pixi.toml`` with the ``[system-requirements]`` CUDA entry, the conda-forge channel, the
  Python pin and ``[pypi-dependencies]`` with their index;
- ``conda``: an ``environment.yml`` whose ``pip:`` section carries the index lines (conda hands that section
  to ``pip install -r`` as a requirements file);
- ``requirements``: a ``requirements.txt`` with ``--index-url`` / ``--extra-index-url`` lines.

No Qt, no network: plain text from the plan. Runtime environment variables the plan needs (for example
``HSA_OVERRIDE_GFX_VERSION``) go where the tool reads them on activation (pixi ``[activation.env]``, conda
``variables:``) or, for uv and pip, into a comment that says how to set them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from packaging.requirements import InvalidRequirement, Requirement

from gpusetup.generate.yamlout import scalar
from gpusetup.messages import msg, render
from gpusetup.mirrors import through
from gpusetup.model import EMIT_KINDS, Choice, FrameworkPlan, Message
from gpusetup.versions import version_key

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
        raise EmitError(msg("emit.error.bad-name", name=repr(name)))
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


def _comment(lines: list[str]) -> str:
    return "".join(f"# {line}\n" if line else "#\n" for line in lines)


def _q(s: str) -> str:
    """A TOML basic string (JSON's escapes are valid TOML)."""
    return json.dumps(s, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- uv


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
    sources: dict[str, str] = {}  # package -> index name
    for p in picks:
        if not p.index:
            continue
        iname = indexes.setdefault(p.index, _index_name(p.index))
        for req in p.choice.packages:
            sources.setdefault(_requirement(req).name, iname)
    out = [_comment([*comments, "",
                     "uv: merge [project].dependencies and the [tool.uv] tables into your own pyproject.toml,",
                     "then `uv lock` and `uv sync`. `explicit = true` means an index serves only the packages",
                     "[tool.uv.sources] sends to it, so nothing else is taken from it by accident."])]
    out.append("[project]\n")
    out.append(f"name = {_q(name)}\nversion = \"0.1.0\"\n")
    if py:
        out.append(f"requires-python = {_q(f'=={py}.*')}\n")
    out.append("dependencies = [\n" + "".join(f"    {_q(d)},\n" for d in deps) + "]\n")
    marker = _uv_marker(target)
    if marker:
        out.append("\n[tool.uv]\n# Lock for the kind of machine the plan was made for only.\n")
        out.append(f"environments = [{_q(marker)}]\n")
    if index_url:
        out.append(f"\n[[tool.uv.index]]\nname = \"pypi-mirror\"\nurl = {_q(index_url)}\ndefault = true\n")
    for url, iname in indexes.items():
        out.append(f"\n[[tool.uv.index]]\nname = {_q(iname)}\nurl = {_q(url)}\nexplicit = true\n")
    if sources:
        out.append("\n[tool.uv.sources]\n")
        out += [f"{pkg} = {{ index = {_q(iname)} }}\n" for pkg, iname in sources.items()]
    return "".join(out)


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
    cudas = [c for c in (_cuda_version(p.choice) for p in picks if p.gpu) if c]
    cuda = max(cudas, key=version_key) if cudas else None
    out = [_comment([*comments, "",
                     "pixi: `pixi install` solves and locks this workspace; `pixi shell` activates it."])]
    out.append("[workspace]\n")
    out.append(f"name = {_q(name)}\nchannels = [\"conda-forge\"]\nplatforms = [{_q(platform)}]\n")
    if index_url:
        out.append(f"\n[pypi-options]\nindex-url = {_q(index_url)}\n")
    if cuda:
        out.append("\n[system-requirements]\n")
        out.append(f"# The chosen build needs a driver for CUDA {cuda} or newer (pixi's __cuda virtual package).\n")
        out.append(f"# Newer pixi also accepts: platforms = [{{ platform = {_q(platform)}, cuda = {_q(cuda)} }}]\n")
        out.append(f"cuda = {_q(cuda)}\n")
    out.append("\n[dependencies]\n")
    if py:
        out.append(f"python = {_q(f'{py}.*')}\n")
    out.append("\n[pypi-dependencies]\n")
    for p in picks:
        for req in p.choice.packages:
            r = _requirement(req)
            parts = [f"version = {_q(str(r.specifier) or '*')}"]
            if r.extras:
                parts.append("extras = [" + ", ".join(_q(e) for e in sorted(r.extras)) + "]")
            if p.index:
                parts.append(f"index = {_q(p.index)}")
            out.append(f"{r.name} = {{ {', '.join(parts)} }}\n")
    if target.env:
        out.append("\n[activation.env]\n")
        out += [f"{k} = {_q(v)}\n" for k, v in target.env.items()]
    return "".join(out)


# ------------------------------------------------------------------------------- pip and conda's pip


def _pip_lines(picks: list[_Pick], index_url: str | None) -> list[str]:
    """Requirements-file lines: the primary index (PyPI or its mirror), each framework index, the pins.

    pip merges the candidates of all indexes and takes the highest matching version; a framework index's
    ``2.9.1+cu126`` sorts above PyPI's plain ``2.9.1``, so the pinned GPU build wins.
    """
    lines: list[str] = []
    if index_url:
        lines.append(f"--index-url {index_url}")
    for url in dict.fromkeys(p.index for p in picks if p.index):
        lines.append(f"--extra-index-url {url}")
    lines += [req for p in picks for req in p.choice.packages]
    return lines


def _requirements(picks: list[_Pick], target: Target, name: str, index_url: str | None,
                  comments: list[str]) -> str:
    extra = ["", "pip: `python -m pip install -r requirements.txt`."]
    if target.env:
        extra.append("Set before running: " + " ".join(f"{k}={v}" for k, v in target.env.items()))
    return _comment([*comments, *extra]) + "".join(f"{line}\n" for line in _pip_lines(picks, index_url))


def _conda(picks: list[_Pick], target: Target, name: str, index_url: str | None, comments: list[str]) -> str:
    py = _python_pin(target, picks)
    out = [_comment([*comments, "",
                     "conda: `conda env create -f environment.yml` (or mamba / micromamba). conda installs the",
                     "pip: list with `pip install -r` on a temporary requirements file, index lines included."])]
    out.append(f"name: {scalar(name)}\nchannels:\n  - conda-forge\n  - nodefaults\ndependencies:\n")
    if py:
        out.append(f"  - {scalar(f'python={py}')}\n")
    out.append("  - pip\n  - pip:\n")
    out += [f"      - {scalar(line)}\n" for line in _pip_lines(picks, index_url)]
    if target.env:
        out.append("variables:\n")
        out += [f"  {k}: {scalar(v)}\n" for k, v in target.env.items()]
    return "".join(out)
