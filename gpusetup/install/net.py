"""Network pre-flight: reach every package index *before* anything changes, through the same proxy pip uses.

Failing early with "cannot reach X because Y; try Z" beats a pip that retries for minutes and leaves a
half-installed environment (installers.md (c) 12: proxies, TLS interception).
"""

from __future__ import annotations

import base64
import configparser
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gpusetup import credentials
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.probe.platform.host import is_windows


def _pip_config_files() -> list[Path]:
    """pip's config files, lowest priority first (global, user, then PIP_CONFIG_FILE)."""
    if os.environ.get("PIP_CONFIG_FILE") == os.devnull:
        return []
    files: list[Path] = []
    if is_windows():
        files.append(Path(os.environ.get("PROGRAMDATA", "C:/ProgramData")) / "pip" / "pip.ini")
        appdata = os.environ.get("APPDATA")
        if appdata:
            files.append(Path(appdata) / "pip" / "pip.ini")
    else:
        for d in os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":"):
            files.append(Path(d) / "pip" / "pip.conf")
        files.append(Path("/etc/pip.conf"))
        home = Path(os.environ.get("HOME", str(Path.home())))
        files.append(home / ".pip" / "pip.conf")
        files.append(Path(os.environ.get("XDG_CONFIG_HOME", str(home / ".config"))) / "pip" / "pip.conf")
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    return files


def pip_config_value(key: str) -> str | None:
    """``PIP_<KEY>`` or ``[global] key`` / ``[install] key`` from pip's config files; None when unset."""
    env = os.environ.get("PIP_" + key.upper().replace("-", "_"))
    if env:
        return env
    value = None
    for f in _pip_config_files():
        cp = configparser.ConfigParser()
        try:
            cp.read(f, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install", "download"):
            if cp.has_option(section, key):
                value = cp.get(section, key)
    return value


def proxy_for(url: str) -> str | None:
    """The proxy pip would use for ``url``: pip's own ``proxy`` setting, else the environment's."""
    pip_proxy = pip_config_value("proxy")
    if pip_proxy:
        return pip_proxy
    proxies = urllib.request.getproxies()
    host = urllib.parse.urlparse(url).hostname or ""
    if urllib.request.proxy_bypass(host):
        return None
    scheme = urllib.parse.urlparse(url).scheme
    return proxies.get(scheme)


@dataclass
class IndexCheck:
    url: str
    ok: bool
    message: str = ""  # English; ``said`` is the same as data (a gpusetup.messages code and its parameters)
    said: Message | None = None

    def __post_init__(self) -> None:
        if self.said is not None and not self.message:
            self.message = render(self.said)


def _failed(url: str, said: Message) -> IndexCheck:
    return IndexCheck(url, False, said=said)


def opener_for(url: str) -> tuple[urllib.request.OpenerDirector, str, dict[str, str]]:
    """(opener, URL without its login, headers) to GET ``url`` as pip would: through pip's proxy, trusting pip's
    CA file, with a ``user:password@`` login as an Authorization header (a masked URL is revealed from this
    process's memory; :class:`credentials.MissingCredential` when it is not known here)."""
    real = credentials.reveal(url)
    # user:password@host is not a host name: urllib needs it as an Authorization header
    parsed = urllib.parse.urlsplit(real)
    headers = {"User-Agent": "gpusetup"}
    if parsed.username is not None or parsed.password is not None:
        netloc = parsed.netloc.rpartition("@")[2]
        real = urllib.parse.urlunsplit(parsed._replace(netloc=netloc))
        pair = f"{urllib.parse.unquote(parsed.username or '')}:{urllib.parse.unquote(parsed.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    proxy = proxy_for(real)
    handlers: list[urllib.request.BaseHandler] = [
        urllib.request.ProxyHandler({"http": proxy, "https": proxy} if proxy else {})
    ]
    cert = pip_config_value("cert")
    if real.startswith("https") and cert and Path(cert).exists():
        handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cert)))
    if proxy:
        credentials.remember(proxy)
    return urllib.request.build_opener(*handlers), real, headers


def check_index(url: str, project: str, timeout: float = 10.0) -> IndexCheck:
    """Fetch ``<index>/<project>/`` (PEP 503) and say in plain words why it failed, if it did."""
    if url.startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
        ok = path.is_dir()
        return IndexCheck(url, ok, said=None if ok else msg("install.net.no-folder", path=str(path)))
    try:
        opener, real, headers = opener_for(url)
    except credentials.MissingCredential as exc:
        first = exc.urls[0] if exc.urls else "the index"
        return _failed(url, msg("install.net.missing-credential", urls=", ".join(exc.urls),
                                first=first.replace(credentials.MASK, "PASSWORD")))
    url = credentials.mask_url(url)
    page = real.rstrip("/") + "/" + project + "/"
    proxy = proxy_for(real)
    via = msg("install.net.via-proxy", proxy=credentials.mask_url(proxy)) if proxy else msg("install.net.no-proxy")
    headers["Accept"] = "text/html"
    req = urllib.request.Request(page, headers=headers)
    try:
        with opener.open(req, timeout=timeout) as resp:
            status = resp.status
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return _failed(url, msg("install.net.login-refused", url=url, code=exc.code))
        if exc.code == 404:
            return _failed(url, msg("install.net.no-project", url=url, project=project))
        if exc.code == 407:
            return _failed(url, msg("install.net.proxy-login", proxy=credentials.mask_url(proxy or "")))
        return _failed(url, msg("install.net.http", url=url, code=exc.code, via=via))
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            return _failed(url, msg("install.net.tls", url=url, error=credentials.scrub(str(reason.verify_message)),
                                    via=via))
        return _failed(url, msg("install.net.unreachable", url=url, via=via, error=credentials.scrub(str(reason))))
    except (TimeoutError, OSError) as exc:
        return _failed(url, msg("install.net.unreachable-os", url=url, via=via, error=credentials.scrub(str(exc))))
    if status != 200:
        return _failed(url, msg("install.net.http", url=url, code=status, via=via))
    return IndexCheck(url, True)
