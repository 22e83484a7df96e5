"""Package-index mirrors, in one place for the command line, the configuration file and the wizard.

- :func:`url_problem` is the one check of a URL a person typed (``--index-url``, ``--pytorch-mirror``,
  ``[mirrors]`` and ``[network] proxy`` in the configuration file, the wizard's mirror fields): the same
  answer everywhere, as data (a gpusetup.messages code).
- :func:`through` is how a mirror replaces an index: a PyTorch mirror stands for
  ``https://download.pytorch.org/whl`` (so ``…/whl/cu126`` becomes ``<mirror>/cu126``), a PyPI mirror for
  every requirement that comes from PyPI.
- :func:`known` lists the well-known public mirrors the wizard offers as choices (never as defaults), from
  ``resources/network/mirrors.json``, where each row keeps its source and the date it was looked up.
- :func:`pytorch_probe` says which page of a PyTorch mirror the install will ask for, so it is checked with a
  request before it is used (the request itself: ``gpusetup.install.net.check_index``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from gpusetup.escape import join_url
from gpusetup.messages import msg
from gpusetup.model import Message
from gpusetup.resources import read_text

log = logging.getLogger("gpusetup.mirrors")

PYTORCH_INDEX = "https://download.pytorch.org/whl"
PYPI_SIMPLE = "https://pypi.org/simple"

# What each kind of URL may start with: an index pip and uv read (a local folder too), or a proxy.
SCHEMES: dict[str, tuple[str, ...]] = {
    "index": ("https", "http", "file"),
    "proxy": ("http", "https", "socks5", "socks5h", "socks4", "socks4a"),
}

def url_problem(value: object, kind: str = "index") -> Message | None:
    """None when ``value`` is a URL of this kind (``index`` or ``proxy``), else why not (a message without the
    value itself, which may hold a password). An empty value is a problem: callers treat "empty" as "none"
    before they ask."""
    if not isinstance(value, str) or not value.strip():
        return msg("url.why.empty")
    if any(c.isspace() or ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        return msg("url.why.space")
    schemes = SCHEMES[kind]
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return msg("url.why.port")
    if parts.scheme.lower() not in schemes or "://" not in value:
        return msg("url.why.scheme", schemes=", ".join(f"{s}://" for s in schemes))
    if parts.scheme.lower() == "file":
        return None if parts.path not in ("", "/") else msg("url.why.path")
    if not parts.hostname:
        return msg("url.why.host")
    if port == 0:
        return msg("url.why.port")
    return None


def through(url: str | None, index_url: str | None, pytorch_mirror: str | None) -> str | None:
    """The index a requirement really comes from, after applying the user's mirrors: ``url`` is the index the
    resolver named (None: PyPI); the answer None means "pip's own default index"."""
    if url and pytorch_mirror and url.startswith(PYTORCH_INDEX):
        return join_url(pytorch_mirror, url[len(PYTORCH_INDEX):])  # a ?token= query stays at the end
    if url is None:
        return index_url
    return url


def apply(plans: Iterable[Any], index_url: str | None, pytorch_mirror: str | None) -> None:
    """Word each plan's builds through the mirrors, for a plan that is shown (``gpusetup plan``): a PyTorch
    index becomes the mirror's in ``index_url`` and in the ready-to-paste commands; a command that installs
    from PyPI gets ``--index-url`` of the PyPI mirror. The resolver's answer itself names the upstream indexes;
    installers and project files apply the mirrors with :func:`through`, which leaves an applied URL as it is."""
    for fp in plans:
        for ch in (getattr(fp, "choice", None), getattr(fp, "gpu_choice", None)):
            if ch is None:
                continue
            new = through(ch.index_url, None, pytorch_mirror) if ch.index_url else None
            if new and new != ch.index_url:
                ch.commands = [c.replace(f"--index-url {ch.index_url}", f"--index-url {new}") for c in ch.commands]
                ch.index_url = new
            elif ch.index_url is None and index_url:
                ch.commands = [c if "--index-url" in c or "pip install" not in c else f"{c} --index-url {index_url}"
                               for c in ch.commands]


def pytorch_probe(pytorch_mirror: str, index_urls: Iterable[str | None] = ()) -> str:
    """The page of a PyTorch mirror to ask before it is used: the variant index the plan will install from
    (``<mirror>/cu126``), else its CPU index (every PyTorch release has one)."""
    for url in index_urls:
        if url and url.startswith(PYTORCH_INDEX):
            return through(url, None, pytorch_mirror) or pytorch_mirror
    return pytorch_mirror.rstrip("/") + "/cpu"


@dataclass(frozen=True)
class KnownMirror:
    """A public mirror offered as a choice: its id, its name (English and 简体中文), its URL and whether the
    source states the layout gpusetup needs (``verified``)."""

    id: str
    name: str
    name_zh_CN: str
    url: str
    verified: bool = True

    def label(self, language: str | None = None) -> str:
        return self.name_zh_CN if (language or "").startswith("zh") else self.name


@cache
def _table() -> dict[str, Any]:
    try:
        doc = json.loads(read_text("network", "mirrors.json", limit=256 * 1024))
        return dict(doc["tables"])
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a broken file offers no choices, never a crash
        log.warning("resources/network/mirrors.json unusable: %s", exc)
        return {}


def known(kind: str) -> list[KnownMirror]:
    """The public mirrors of ``kind`` ("pypi" or "pytorch") to offer, in the file's order; only rows whose URL
    passes :func:`url_problem`."""
    rows = (_table().get(kind) or {}).get("rows") or []
    out = []
    for r in rows:
        try:
            m = KnownMirror(str(r["id"]), str(r["name"]), str(r.get("name_zh_CN") or r["name"]), str(r["url"]),
                            bool(r.get("verified", True)))
        except (KeyError, TypeError):
            continue
        if url_problem(m.url) is None:
            out.append(m)
    return out
