"""One configuration file for the CLI and the wizard: mirrors, proxy and defaults.

Where (first that applies):

1. ``GPUSETUP_CONFIG`` — the file itself;
2. ``GPUSETUP_HOME`` — ``$GPUSETUP_HOME/config/config.toml`` (portable installs, tests);
3. the user's config folder from platformdirs — ``~/.config/gpusetup/config.toml`` on Linux,
   ``%LOCALAPPDATA%\\gpusetup\\config.toml`` on Windows, ``~/Library/Application Support/gpusetup/config.toml``
   on macOS.

Example (``gpusetup config init`` writes a commented one)::

    [mirrors]
    pypi = "https://mirrors.example.org/pypi/simple"     # instead of PyPI (like --index-url)
    pytorch = "https://mirrors.example.org/pytorch-whl"  # instead of https://download.pytorch.org/whl

    [network]
    proxy = "http://user:secret@proxy.example.org:3128"  # for pip, uv and downloads; never printed

    [defaults]
    frameworks = ["pytorch"]
    target = "venv:~/gpu-env"
    language = "zh_CN"                                   # what the command line prints in (like --lang)

Command-line options win over the file; the file wins over built-in defaults. A missing file is an empty
configuration; a broken one is an error that names the file and the line (never silently ignored).
Nothing here prints or logs the proxy: callers that show the configuration redact it first.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from gpusetup import credentials
from gpusetup.messages import msg, render
from gpusetup.mirrors import url_problem
from gpusetup.model import Message

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]

MAX_BYTES = 64 * 1024
FRAMEWORKS = ("pytorch", "tensorflow", "jax")
_KNOWN = {"mirrors": {"pypi", "pytorch"}, "network": {"proxy"}, "defaults": {"frameworks", "target", "language"}}
LANGUAGES = ("en", "zh_CN")


class ConfigError(ValueError):
    """The configuration file exists but cannot be used; the message names the file and the problem.
    ``message`` is the same as data (a gpusetup.messages code), worded in the CLI's language."""

    def __init__(self, message: Message) -> None:
        self.message = message
        super().__init__(render(message))


@dataclass
class Config:
    path: Path
    exists: bool = False
    pypi_mirror: str | None = None
    pytorch_mirror: str | None = None
    proxy: str | None = None
    frameworks: list[str] = field(default_factory=list)
    target: str | None = None
    language: str | None = None  # the command line's language (--lang and GPUSETUP_LANG win over it)

    def proxy_env(self) -> dict[str, str]:
        """Environment for child processes (pip, uv) when a proxy is configured."""
        if not self.proxy:
            return {}
        return {k: self.proxy for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}


def config_path() -> Path:
    explicit = os.environ.get("GPUSETUP_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("GPUSETUP_HOME")
    if home:
        return Path(home).expanduser() / "config" / "config.toml"
    return Path(platformdirs.user_config_dir("gpusetup", appauthor=False)) / "config.toml"


def load_config(path: Path | None = None) -> Config:
    """Read and check the configuration file; a missing file gives the empty configuration."""
    path = path or config_path()
    cfg = Config(path=path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return cfg
    except OSError as exc:
        raise ConfigError(msg("config.error.unreadable", path=str(path), reason=exc.strerror or str(exc))) from exc
    if len(raw) > MAX_BYTES:
        raise ConfigError(msg("config.error.too-large", path=str(path), kib=MAX_BYTES // 1024))
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(msg("config.error.not-toml", path=str(path), reason=str(exc))) from exc
    cfg.exists = True
    _check_keys(path, data)
    mirrors, network, defaults = data.get("mirrors", {}), data.get("network", {}), data.get("defaults", {})
    cfg.pypi_mirror = _url(path, "mirrors.pypi", mirrors.get("pypi"))
    cfg.pytorch_mirror = _url(path, "mirrors.pytorch", mirrors.get("pytorch"))
    cfg.proxy = _url(path, "network.proxy", network.get("proxy"), secret=True)
    fws = defaults.get("frameworks", [])
    if not isinstance(fws, list) or any(f not in FRAMEWORKS for f in fws):
        raise ConfigError(msg("config.error.frameworks", path=str(path), choices=", ".join(FRAMEWORKS)))
    cfg.frameworks = list(fws)
    target = defaults.get("target")
    if target is not None and not (isinstance(target, str) and target.split(":", 1)[0] in ("venv", "conda")):
        raise ConfigError(msg("config.error.target", path=str(path)))
    cfg.target = target
    language = defaults.get("language")
    if language is not None and language not in LANGUAGES:
        raise ConfigError(msg("config.error.language", path=str(path), choices=", ".join(LANGUAGES)))
    cfg.language = language
    return cfg


def _check_keys(path: Path, data: dict[str, Any]) -> None:
    for section, value in data.items():
        if section not in _KNOWN or not isinstance(value, dict):
            raise ConfigError(msg("config.error.section", path=str(path), section=section, known=", ".join(sorted(_KNOWN))))
        unknown = set(value) - _KNOWN[section]
        if unknown:
            raise ConfigError(msg("config.error.keys", path=str(path), section=section, keys=", ".join(sorted(unknown)),
                                  known=", ".join(sorted(_KNOWN[section]))))


def _url(path: Path, key: str, value: Any, secret: bool = False) -> str | None:
    """The URL at ``key``, checked as the command line and the wizard check one (gpusetup.mirrors.url_problem)."""
    if value is None:
        return None
    if url_problem(value, "proxy" if secret else "index") is not None:
        raise ConfigError(msg("config.error.url", path=str(path), key=key, value=msg("config.error.hidden") if secret else repr(value)))
    return value


def save_mirrors(pypi: str | None, pytorch: str | None, path: Path | None = None) -> Path:
    """Keep the mirrors in the configuration file (``[mirrors] pypi`` / ``pytorch``; None or "" removes the key),
    changing only those lines: comments and every other setting stay as they are. A new file starts from
    :data:`TEMPLATE` and is private (0600). The result is read back before it replaces the file, and a mirror
    with a password is refused (gpusetup keeps passwords in memory only). ConfigError when it cannot be done."""
    path = path or config_path()
    values = {"pypi": (pypi or "").strip(), "pytorch": (pytorch or "").strip()}
    for key, value in values.items():
        if value and url_problem(value) is not None:
            raise ConfigError(msg("config.error.url", path=str(path), key=f"mirrors.{key}", value=repr(value)))
        if value and credentials.mask_url(value) != value:
            raise ConfigError(msg("config.error.password", path=str(path), key=f"mirrors.{key}"))
    load_config(path)  # a broken file is not edited: the error names it
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else TEMPLATE
    except OSError as exc:
        raise ConfigError(msg("config.error.unreadable", path=str(path), reason=exc.strerror or str(exc))) from exc
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "[mirrors]"), None)
    if start is None:
        lines += ["", "[mirrors]"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    for key, value in values.items():
        at = next((i for i in range(start + 1, end) if lines[i].split("=", 1)[0].strip() == key), None)
        new = f"{key} = {json.dumps(value)}" if value else None
        if at is not None and new is None:
            del lines[at]
            end -= 1
        elif at is not None and new is not None:
            lines[at] = new
        elif new is not None:
            at = end
            while at - 1 > start and not lines[at - 1].strip():  # after the section's last line, not its blank ones
                at -= 1
            lines.insert(at, new)
            end += 1
    out = "\n".join(lines) + "\n"
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(out, encoding="utf-8")
        tmp.chmod(0o600)
        back = load_config(tmp)
        if (back.pypi_mirror or "", back.pytorch_mirror or "") != (values["pypi"], values["pytorch"]):
            raise ConfigError(msg("config.error.not-toml", path=str(path), reason="the mirrors did not read back"))
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(msg("config.error.unreadable", path=str(path), reason=exc.strerror or str(exc))) from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path


TEMPLATE = """\
# gpusetup configuration, read by the command line and the wizard. Command-line options win over it.
# Remove the '#' in front of a line to use it.

[mirrors]
# A PyPI mirror, used instead of https://pypi.org/simple (like --index-url):
# pypi = "https://mirrors.example.org/pypi/simple"
# A mirror of the PyTorch wheel indexes, used instead of https://download.pytorch.org/whl (like --pytorch-mirror):
# pytorch = "https://mirrors.example.org/pytorch-whl"

[network]
# A proxy for pip, uv and gpusetup's own downloads. It may hold a password: gpusetup never prints it.
# proxy = "http://user:password@proxy.example.org:3128"

[defaults]
# frameworks = ["pytorch"]
# target = "venv:~/gpu-env"
# The language the command line prints in: "en" or "zh_CN" (default: from the locale, like the wizard):
# language = "zh_CN"
"""
