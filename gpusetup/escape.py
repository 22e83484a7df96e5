"""One escaping layer per output format, between user data and every generator or renderer.

User data — a GPU name from a stranger's report or ``--for`` profile, a file name, ``--image-name``, a mirror
URL — must never become an instruction in what gpusetup writes. Each format has one function here, and
generators and renderers call it for every value they did not write themselves:

- **terminal** (:func:`terminal`): control characters (C0 but tab and newline, DEL, C1, bidirectional
  overrides) shown as visible escapes (``\\x1b``, ``\\u009b``), so a report cannot move the cursor, clear the
  screen or retitle the window. :mod:`gpusetup.term` applies it to everything a command prints;
- **comments** of every line-oriented format (shell, Dockerfile, YAML, TOML, requirements files):
  :func:`comment` keeps a value on its comment line (newlines and control characters shown visibly);
- **shell** (:func:`sh`, :func:`sh_join`): one bash word per value, on one line (``$'…'`` when the value has
  control characters), so ``$()``, backticks and newlines stay text;
- **Markdown** (:func:`md_text`, :func:`md_code`, :func:`md_fence`): inline text with Markdown and HTML
  characters escaped; code spans and fences longer than any backtick run inside them;
- **HTML** (:func:`html`);
- **Prometheus** label values (:func:`prom_label`).

Names that a format gives rules for are *validated*, not quoted: Kubernetes object names
(:func:`k8s_name`), image references (:func:`image_ref`) and registries (:func:`registry`) raise
:class:`BadValue` naming the rule. YAML and TOML themselves are written by maintained writers (PyYAML's safe
dumper, tomli-w), never by concatenation: see :mod:`gpusetup.generate.render` and
:mod:`gpusetup.generate.project`.

No gpusetup imports: every layer may use this module.
"""

from __future__ import annotations

import html as _html
import re
import shlex
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

# ------------------------------------------------------------------------------------------- terminal

# C0 controls but tab and newline, DEL, C1 controls (U+0080–U+009F: U+009B is a one-character CSI), the
# bidirectional embedding/override/isolate controls (text that reads differently from what it is), and the
# Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_CONTROL_NO_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _visible(ch: str) -> str:
    """One control character as text: ``\\x1b`` for C0, ``\\u009b`` for the rest (also a valid escape inside
    JSON, TOML and YAML strings, so a shown value still reads back as the same character)."""
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def terminal(text: str, *, newlines: bool = True) -> str:
    """``text`` fit for a terminal: control characters shown as visible escapes.

    With ``newlines`` (the default) line breaks stay line breaks (a ``\\r`` just before ``\\n`` too: Windows
    line ends); without, they are shown as ``\\n`` as well.
    """
    if newlines:
        text = text.replace("\r\n", "\n")
        return _CONTROL.sub(lambda m: _visible(m.group()), text)
    return _CONTROL_NO_NEWLINE.sub(lambda m: _visible(m.group()), text)


def one_line(text: object) -> str:
    """``text`` on one line, every control character (newlines too) shown visibly."""
    return terminal(str(text), newlines=False)


# ------------------------------------------------------------------------------ comments, every format


def comment(text: object, mark: str = "#") -> str:
    """One comment line for shell, Dockerfile, YAML, TOML and requirements files: ``# text``.

    Nothing in ``text`` can end the comment: newlines and other control characters are shown visibly, and a
    trailing backslash gets a space after it (no line continuation can join the next line).
    """
    body = one_line(text)
    if body.endswith("\\"):
        body += " "
    return f"{mark} {body}".rstrip() if body.strip() else mark


def comments(lines: Iterable[object], mark: str = "#") -> list[str]:
    """Several comment lines (an empty entry gives a bare ``#``)."""
    return [comment(line, mark) for line in lines]


# ----------------------------------------------------------------------------------------------- shell

_SH_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_SH_ANSI = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\E"}


def sh(word: object) -> str:
    """One bash word that stands for exactly ``word``, on one line.

    Printable text is single-quoted (:func:`shlex.quote`: no expansion of ``$()``, backticks or ``!`` inside);
    text with control characters (a newline in a file name) becomes an ANSI-C ``$'…'`` word, which bash, zsh
    and ksh read back as the same bytes and which never spans lines.
    """
    text = str(word)
    if "\x00" in text:
        raise BadValue("shell-nul", text, "a shell word cannot contain a NUL character")
    if not _CONTROL.search(text) and "\n" not in text and "\t" not in text:
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in _SH_ANSI:
            out.append(_SH_ANSI[ch])
        elif _CONTROL.match(ch) or ch in "\n\t":
            # the character's UTF-8 bytes: \xHH is read the same in every locale (\u is not)
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def sh_join(words: Iterable[object]) -> str:
    """A command line of :func:`sh` words."""
    return " ".join(sh(w) for w in words)


# -------------------------------------------------------------------------------------------- Markdown

# inline syntax, anywhere in a line; "_" only where it can open or close emphasis (not inside a word: matmul_fp32)
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|=+\s*$|\d{1,9}[.)](?=\s|$))")  # block syntax, where the text starts a line (a list item)


def md_text(text: object) -> str:
    """Inline Markdown for ``text``: one line, Markdown punctuation backslash-escaped, HTML characters as
    entities (``<script>`` stays text), control characters visible."""
    s = one_line(text)
    s = _MD_SPECIAL.sub(r"\\\1", s).replace("&", "&amp;").replace("<", "&lt;")
    return _MD_START.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


def _longest_run(text: str, ch: str) -> int:
    return max((len(m.group()) for m in re.finditer(re.escape(ch) + "+", text)), default=0)


def md_code(text: object) -> str:
    """An inline code span holding exactly ``text`` (on one line): the backtick fence is longer than any
    backtick run inside, with a space of padding where the text starts or ends with a backtick."""
    s = one_line(text)
    fence = "`" * (_longest_run(s, "`") + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ") and s.strip()) \
        else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def md_fence(lines: Iterable[object], info: str = "", indent: str = "") -> list[str]:
    """A fenced code block of ``lines``, whose fence no line inside can close (it is longer than every
    backtick run in them); control characters visible, newlines inside an entry split it into lines."""
    body: list[str] = []
    for line in lines:
        body += terminal(str(line)).split("\n")
    fence = "`" * max(3, max((_longest_run(b, "`") for b in body), default=0) + 1)
    return [f"{indent}{fence}{info}", *[f"{indent}{b}" for b in body], f"{indent}{fence}"]


# ------------------------------------------------------------------------------------------------ HTML


def html(text: object) -> str:
    """``text`` for HTML element content or a quoted attribute: ``& < > " '`` as entities, control characters
    visible (a NUL or an escape sequence in a report is shown, not passed to the browser)."""
    return _html.escape(terminal(str(text)), quote=True)


# ------------------------------------------------------------------------------------------ Prometheus


def prom_label(value: object) -> str:
    """A Prometheus text-format label value (between its double quotes): backslash, quote and newline escaped
    as the format defines; other control characters shown as text (``\\\\x1b``: the format has no escape for
    them)."""
    s = terminal(str(value), newlines=True)
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# -------------------------------------------------------------------------------------- validated names


class BadValue(ValueError):
    """A value the format has rules for, and that breaks them: ``rule`` names the rule (a message key part),
    ``value`` is the value, ``str()`` says what the rule is in English."""

    def __init__(self, rule: str, value: str, why: str) -> None:
        self.rule = rule
        self.value = value
        self.why = why
        super().__init__(f"{one_line(value)!r}: {why}")


_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")


def k8s_name(value: str, what: str = "name") -> str:
    """A Kubernetes object name of the DNS-subdomain kind (RFC 1123: lower-case letters, digits, ``-`` and
    ``.``, starting and ending alphanumeric, at most 253 characters) — RuntimeClass, Job and most objects."""
    if not isinstance(value, str) or len(value) > 253 or not _DNS_SUBDOMAIN.fullmatch(value):
        raise BadValue("k8s-name", str(value),
                       f"a Kubernetes {what} must be lower-case letters, digits, '-' and '.', start and end with a "
                       "letter or digit, and have at most 253 characters")
    return value


# The distribution reference grammar (github.com/distribution/reference, reference.go):
#   reference := name [ ":" tag ] [ "@" digest ];  name := [domain "/"] path-component ["/" path-component]*
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_NAME = re.compile(rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)")
_REFERENCE = re.compile(rf"(?P<name>{_NAME.pattern})(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?")
_REGISTRY = re.compile(rf"{_DOMAIN}(?:/{_PATH_COMPONENT})*")


def image_ref(value: str) -> str:
    """A container image reference (``[registry/]path[:tag][@digest]``, lower-case path) as Docker, Podman,
    Kubernetes and enroot read it; at most 255 characters of name."""
    m = _REFERENCE.fullmatch(value) if isinstance(value, str) else None
    if m is None or len(m.group("name")) > 255:
        raise BadValue("image-ref", str(value),
                       "an image name is [REGISTRY/]PATH[:TAG]: a lower-case path of letters, digits and . _ - "
                       "separated by '/', a tag of letters, digits, '_', '.' and '-' (at most 128)")
    return value


def registry(value: str) -> str:
    """A registry with an optional path (``harbor.lab.example/ml``, ``localhost:5000``), as it is written in
    front of an image path."""
    v = value.rstrip("/") if isinstance(value, str) else value
    if not isinstance(v, str) or not _REGISTRY.fullmatch(v) or len(v) > 255:
        raise BadValue("registry", str(value),
                       "a registry is HOST[:PORT][/PATH]: a host name or address, an optional port and a "
                       "lower-case path of letters, digits and . _ -")
    return v


def names_registry(image: str) -> bool:
    """Whether an image reference starts with a registry host (``host.example/…``, ``host:5000/…``,
    ``localhost/…``) rather than a Docker Hub path."""
    first, sep, _ = image.partition("/")
    return bool(sep) and ("." in first or ":" in first or first == "localhost" or first.startswith("["))


# ------------------------------------------------------------------------------------------------- URLs


def index_url(value: str) -> str:
    """A package index or mirror URL fit to be written into a project file or a command line: ``http``,
    ``https`` or ``file``, a host for the first two, and no whitespace or control character (a requirements
    file has no quoting: a newline in a URL would start a line of its own)."""
    text = value if isinstance(value, str) else ""
    parts = urlsplit(text) if text else None
    ok = (parts is not None and parts.scheme.lower() in ("http", "https", "file")
          and (parts.netloc or parts.scheme.lower() == "file")
          and not any(ch.isspace() or _CONTROL_NO_NEWLINE.match(ch) for ch in text)
          and not any(ch in text for ch in "\"'<>\\`{}|^"))
    if not ok:
        raise BadValue("url", str(value), "an index URL is http://, https:// or file:// followed by a host and "
                       "path, with no spaces, quotes or control characters")
    return text


def join_url(base: str, suffix: str) -> str:
    """``base`` with ``suffix`` appended to its path, its query and fragment kept at the end:
    ``https://m.example/whl?token=T`` + ``/cu126`` → ``https://m.example/whl/cu126?token=T`` (not
    ``…?token=T/cu126``)."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/") + ("/" + suffix.lstrip("/") if suffix.strip("/") else "")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))
