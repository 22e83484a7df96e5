"""Credentials never leave memory: URL passwords and tokens are masked in everything shown, logged or saved.

A mirror given as ``http://user:PASS@host/simple`` (``--index-url``, ``--pytorch-mirror``, pip's
configuration, ``HTTPS_PROXY``) is *remembered* here, in this process only, and everything else — the plan,
its ``plan.json``, the journal, the log, the screen — carries the masked form ``http://user:****@host/simple``.
That masked URL is the reference: when a step runs, :func:`for_child` looks the secret up again and hands it
to pip or uv through their environment variables (``PIP_INDEX_URL`` …), never on a command line that every
local user can read in ``/proc``.

Decision for ``--resume`` (a new process, the secret is gone): the password is taken from where the user
configured it — the same ``--index-url`` / ``--pytorch-mirror`` given again, ``PIP_INDEX_URL`` /
``PIP_EXTRA_INDEX_URL`` or pip's configuration files — or asked for on a terminal; otherwise resume stops
with a message that says exactly that. gpusetup never writes the secret to disk.

:func:`scrub` masks any URL user-info and every secret this process knows (remembered passwords, values of
environment variables whose names say TOKEN/PASSWORD/SECRET/KEY, proxy passwords), for log lines and messages.
It is the one credential scrubber (issue 25): URLs with a scheme (``https://u:PW@h``) and pip's scheme-less proxy
form (``u:PW@proxy:3128``, in ``HTTP_PROXY``/``https_proxy`` or pip.conf ``proxy =``), secret query values
(``?token=``, ``&key=``, ``access_token``, ``sig``…), ``.netrc`` lines (``machine h login u password PW``) and
the passwords of the user's ``~/.netrc``; everything gpusetup prints, logs, caches or bundles goes through it.
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.parse
from collections.abc import Iterable, Mapping

MASK = "****"
# scheme://userinfo@ — userinfo ends at the last "@" before the path; no spaces, slashes, "?" or "#" in it
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]{0,15}://)(?P<info>[^\s/?#@'\"<>]+(?:@[^\s/?#@'\"<>]+)*)@"
                       r"(?=[^\s/?#@'\"<>]*(?:[/?#\s'\"<>]|$))")
# pip's proxy form without a scheme: user:password@host[:port] (a bare user@host is an e-mail or ssh address)
_BARE_USERINFO = re.compile(r"(?<![\w/:.@%+-])(?P<user>[A-Za-z0-9._~%!$&'*+=-]{1,128}):(?P<pw>[^\s/@:'\"<>]{1,256})@"
                            r"(?P<host>(?:[A-Za-z0-9-]+\.)*[A-Za-z0-9-]+)(?=(?::\d{1,5})?(?:[/\s'\",;)\]]|$))")
# secret values in a URL's query: ?token=…, &api_key=…, &sig=… (pre-signed URLs)
_QUERY_SECRET = re.compile(r"(?i)([?&;](?:token|access_token|auth_token|id_token|key|api_key|apikey|private_token|sig|"
                           r"signature|password|passwd|pwd|secret|client_secret|x-amz-signature|x-amz-credential|"
                           r"x-amz-security-token)=)([^&#\s'\"<>]+)")
# a .netrc entry: machine HOST login USER password PW (also "password PW" after login on later lines)
_NETRC = re.compile(r"(?i)(\b(?:password|passwd|account)\s+)(\S+)")
_NETRC_CONTEXT = re.compile(r"(?i)\b(?:machine|default|login)\b")
_MASKED_PREFIX = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]{0,15}://[^\s/?#@]*" + re.escape(MASK) + r"@[^\s/?#'\"<>]+)")
_SECRET_ENV = re.compile(r"(TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|ACCESS_KEY|PRIVATE_KEY|AUTH|CREDENTIAL)",
                         re.IGNORECASE)
_URL_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_PROXY", "UV_INDEX_URL",
            "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
            "http_proxy", "https_proxy", "all_proxy", "CONDA_CHANNEL_ALIAS")
MIN_SECRET = 4  # shorter values would mask ordinary words

_lock = threading.Lock()
_prefixes: dict[str, str] = {}  # masked "scheme://user:****@host[:port]" → the real prefix
_queries: dict[str, str] = {}  # a whole URL with masked query secrets ("…?token=****") → the real URL
_values: set[str] = set()  # secret strings to mask wherever they appear
_env_seen: dict[str, str] = {}


class MissingCredential(LookupError):
    """A masked URL whose secret this process does not know (e.g. ``--resume`` in a new process)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        super().__init__(missing_message(urls))


def missing_message(urls: Iterable[str]) -> str:
    urls = list(urls)
    first = urls[0] if urls else "the index"
    return (f"The install uses a password for {', '.join(urls)}, and gpusetup never saves passwords to disk. "
            f"Give it again: `gpusetup install --resume --index-url '{first.replace(MASK, 'PASSWORD')}'` "
            "(or --pytorch-mirror for a PyTorch mirror), or put it into PIP_INDEX_URL / pip's configuration "
            "(`pip config set global.index-url ...`), or run --resume on a terminal, which asks for it.")


def _split(url: str) -> tuple[str, str, str | None, str] | None:
    """(scheme://, user, password or None, rest starting at the host) for a URL with user-info, else None."""
    m = _USERINFO.match(url.strip())
    if not m:
        return None
    info = m.group("info")
    user, sep, password = info.partition(":")
    return m.group("scheme"), user, (password if sep else None), url.strip()[m.end():]


def mask_url(url: str) -> str:
    """``http://user:PASS@h/x`` → ``http://user:****@h/x``; ``https://TOKEN@h`` → ``https://****@h``."""
    parts = _split(url)
    if parts is None:
        return url
    scheme, user, password, rest = parts
    if password is None:  # a lone user-info is usually a token (https://ghp_…@github.com)
        return f"{scheme}{MASK}@{rest}"
    return f"{scheme}{user}:{MASK}@{rest}"


def _host_part(rest: str) -> str:
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


def _mask_query(url: str) -> str:
    return _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, url)


def remember(url: str | None) -> str | None:
    """Keep ``url``'s secret in memory and return the masked URL that stands for it everywhere else (its
    user-info and its secret query values, ``?token=****``)."""
    if not url:
        return url
    if _QUERY_SECRET.search(url):
        url = url.strip()
        real_tokens = [m.group(2) for m in _QUERY_SECRET.finditer(url) if m.group(2) != MASK]
        if real_tokens:
            masked = _mask_query(remember(_mask_query(url)) or url)  # (its user-info remembered too)
            with _lock:
                _queries[masked] = url
                for v in real_tokens:
                    for w in (v, urllib.parse.unquote(v)):
                        if len(w) >= MIN_SECRET:
                            _values.add(w)
            return masked
    parts = _split(url)
    if parts is None:
        return url
    scheme, user, password, rest = parts
    masked = mask_url(url)
    host = _host_part(rest)
    real_info = f"{user}:{password}" if password is not None else user
    masked_info = f"{user}:{MASK}" if password is not None else MASK
    with _lock:
        _prefixes[f"{scheme}{masked_info}@{host}"] = f"{scheme}{real_info}@{host}"
        for v in (password, real_info, urllib.parse.unquote(password or ""), user if password is None else None):
            if v and len(v) >= MIN_SECRET:
                _values.add(v)
    return masked


def supply(masked_prefix: str, secret: str | None) -> None:
    """The user typed the password (or token) for ``scheme://user:****@host``: remember it for this run."""
    if not secret:
        return
    quoted = urllib.parse.quote(secret, safe="")
    real = masked_prefix.replace(f":{MASK}@", f":{quoted}@", 1) if f":{MASK}@" in masked_prefix \
        else masked_prefix.replace(f"{MASK}@", f"{quoted}@", 1)
    remember(real)


def add_secret(value: str | None) -> None:
    """Mask this exact string wherever :func:`scrub` sees it (tokens read from the environment, etc.)."""
    if value and len(value) >= MIN_SECRET:
        with _lock:
            _values.add(value)


def _snapshot(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The environment's items, read safely while another thread may change it: iterating ``os.environ``
    reads each key again, so a variable removed meanwhile raised KeyError inside a log filter (seen in CI:
    a test removed QT_QPA_PLATFORM while a worker thread logged). A changed environment is read again."""
    for _ in range(5):
        try:
            return list(env.items())
        except (KeyError, RuntimeError):
            continue
    return []  # it kept changing: nothing new is learnt this time, the next scrub tries again


def _absorb_environment(env: Mapping[str, str] | None = None) -> None:
    """Secrets the user keeps in the environment: proxy/index URL passwords, *_TOKEN/*_PASSWORD values."""
    env = os.environ if env is None else env
    for name, value in _snapshot(env):
        if _env_seen.get(name) == value or not value:
            continue
        _env_seen[name] = value
        if name in _URL_ENV or name.upper().endswith(("_URL", "_PROXY")):
            for word in value.split():
                remember(word)
                for m in _BARE_USERINFO.finditer(word):  # pip's scheme-less proxy form: u:PW@proxy:3128
                    add_secret(m.group("pw"))
                    add_secret(urllib.parse.unquote(m.group("pw")))
        elif _SECRET_ENV.search(name) and len(value) >= 8 and "/" not in value[:1]:
            add_secret(value)
    _absorb_netrc(env)


_netrc_seen: list[tuple[str, float]] = []
_netrc_checked: list[tuple[str, float]] = []  # (path, monotonic time) of the last look: at most once a second


def _absorb_netrc(env: Mapping[str, str]) -> None:
    """The passwords of the user's ``.netrc`` (``$NETRC`` or ``~/.netrc``; pip and curl use it): masked wherever
    they appear, even where no ``password`` word precedes them. Read again only when the file changed."""
    path = env.get("NETRC") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".netrc")
    now = time.monotonic()
    if _netrc_checked and _netrc_checked[0][0] == path and now - _netrc_checked[0][1] < 1.0:
        return
    _netrc_checked[:] = [(path, now)]
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    key = (path, st.st_mtime)
    if key in _netrc_seen or st.st_size > 256 * 1024:
        return
    _netrc_seen.append(key)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            words = fh.read(256 * 1024).split()
    except OSError:
        return
    for i, word in enumerate(words[:-1]):
        if word in ("password", "account"):
            add_secret(words[i + 1])


def _reveal_queries(text: str) -> tuple[str, list[str]]:
    """Known masked query URLs put back; the masked query secrets left over (unknown here)."""
    if "=" + MASK not in text:
        return text, []
    with _lock:
        known = sorted(_queries.items(), key=lambda kv: len(kv[0]), reverse=True)
    for masked, real in known:
        if masked in text:
            text = text.replace(masked, real)
    left = []
    for m in _QUERY_SECRET.finditer(text):
        if m.group(2) == MASK:
            start = text.rfind(" ", 0, m.start()) + 1
            left.append(text[start:m.end()])
    return text, left


def reveal(text: str) -> str:
    """``text`` with every masked URL prefix replaced by the real one; :class:`MissingCredential` if unknown."""
    text, missing = _reveal_queries(text)

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        with _lock:
            real = _prefixes.get(key)
        if real is None:
            missing.append(key)
            return key
        return real

    out = _MASKED_PREFIX.sub(sub, text)
    if missing:
        raise MissingCredential(missing)
    return out


def unknown(texts: Iterable[str]) -> list[str]:
    """Masked URL prefixes among ``texts`` whose secret this process does not know."""
    out: list[str] = []
    for t in texts:
        for q in _reveal_queries(t or "")[1]:
            if q not in out:
                out.append(q)
        for m in _MASKED_PREFIX.finditer(t or ""):
            with _lock:
                known = m.group(1) in _prefixes
            if not known and m.group(1) not in out:
                out.append(m.group(1))
    return out


def scrub(text: str) -> str:
    """``text`` fit to print, log or save: URL user-info masked, every known secret value replaced."""
    _absorb_environment()
    if not text:
        return text
    out = _USERINFO.sub(lambda m: m.group("scheme") + _mask_info(m.group("info")) + "@", text)
    if "@" in out:
        out = _BARE_USERINFO.sub(_mask_bare, out)
    if "=" in out:
        out = _QUERY_SECRET.sub(lambda m: m.group(1) + (m.group(2) if m.group(2) == MASK else MASK), out)
    if _NETRC_CONTEXT.search(out):
        out = "\n".join(_NETRC.sub(lambda m: m.group(1) + MASK, line) if _NETRC_CONTEXT.search(line) else line
                         for line in out.split("\n"))
    with _lock:
        values = sorted(_values, key=len, reverse=True)
    for v in values:
        if v in out:
            out = out.replace(v, MASK)
    return out


def _mask_bare(m: re.Match[str]) -> str:
    if m.group("pw") == MASK:
        return m.group(0)
    host = m.group("host")
    if not ("." in host or host.lower() == "localhost" or m.string[m.end():m.end() + 1] == ":"):
        return m.group(0)  # "a:b@c" with neither a dotted host nor a port: not a credential's shape
    return f"{m.group('user')}:{MASK}@{host}"


def _mask_info(info: str) -> str:
    if info == MASK or info.endswith(":" + MASK):
        return info
    user, sep, _ = info.partition(":")
    return f"{user}:{MASK}" if sep else MASK


# pip/uv options whose URL value goes to the child through its environment instead of the command line
_OPTION_ENV = {
    "pip": {"--index-url": "PIP_INDEX_URL", "-i": "PIP_INDEX_URL", "--extra-index-url": "PIP_EXTRA_INDEX_URL",
            "--find-links": "PIP_FIND_LINKS", "-f": "PIP_FIND_LINKS", "--proxy": "PIP_PROXY"},
    "uv": {"--index-url": "UV_INDEX_URL", "-i": "UV_INDEX_URL", "--extra-index-url": "UV_EXTRA_INDEX_URL",
           "--find-links": "UV_FIND_LINKS", "-f": "UV_FIND_LINKS", "--default-index": "UV_DEFAULT_INDEX"},
}


def for_child(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and extra environment that really run: masked index URLs become pip/uv environment variables.

    A masked URL in any other place is put back into the argument itself (rare: nothing gpusetup plans does
    that). Raises :class:`MissingCredential` when a secret is not known in this process.
    """
    if not any(_has_mask(a) for a in argv):
        return list(argv), {}
    tool = "uv" if any(os.path.basename(a).split(".")[0] == "uv" for a in argv[:2]) else "pip"
    table = _OPTION_ENV[tool]
    out: list[str] = []
    env: dict[str, str] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        opt, eq, val = a.partition("=")
        if opt in table and eq and _has_mask(val):
            _put(env, table[opt], reveal(val))
        elif a in table and i + 1 < len(argv) and _has_mask(argv[i + 1]):
            _put(env, table[a], reveal(argv[i + 1]))
            i += 1
        else:
            out.append(reveal(a) if _has_mask(a) else a)
        i += 1
    return out, env


def _has_mask(text: str) -> bool:
    return MASK + "@" in text or "=" + MASK in text


def _put(env: dict[str, str], name: str, value: str) -> None:
    env[name] = f"{env[name]} {value}" if name in env and name.endswith(("EXTRA_INDEX_URL", "FIND_LINKS")) \
        else value


def forget_all() -> None:
    """Tests: start from an empty memory."""
    with _lock:
        _prefixes.clear()
        _queries.clear()
        _values.clear()
        _env_seen.clear()
        _netrc_seen.clear()
        _netrc_checked.clear()


class ScrubFilter:
    """A ``logging`` filter (add it to a handler) that masks secrets in every record before it is written."""

    def filter(self, record) -> bool:  # noqa: ANN001 - a logging.LogRecord
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logged as it is
            return True
        clean = scrub(text)
        if clean != text:
            record.msg, record.args = clean, ()
        return True
