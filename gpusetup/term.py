"""The terminal, in one place: whether to colour, and nothing from user data reaching it as a control sequence.

**Colour** (:func:`use_color`) is decided here for every command: ``--color always|never`` wins; else
``NO_COLOR`` (non-empty, https://no-color.org) turns it off; else ``FORCE_COLOR`` (https://force-color.org)
or ``CLICOLOR_FORCE`` (https://bixense.com/clicolors/), non-empty and not ``0``, turn it on; else
``TERM=dumb`` turns it off; else colour when the stream is a terminal. Renderers mark what to colour with
:func:`paint` (and :data:`STYLES`); :class:`SafeStream`, which :func:`installed` puts in front of stdout and
stderr for the length of a command, keeps those marks when colour is on and drops them when it is off.

**Control characters** from user data — a GPU name in a report sent by a stranger with ``\\x1b]0;…\\x07\\x1b[2J``
in it — never reach the terminal: :class:`SafeStream` shows every control character visibly
(:func:`gpusetup.escape.terminal`), whatever the colour setting. Only gpusetup's own colour codes (the exact
sequences of :data:`STYLES`) and its progress line (:func:`rewrite_line`) get through. Everything written is
also passed through :func:`gpusetup.credentials.scrub`: no password reaches the screen.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from gpusetup import credentials, escape

CHOICES = ("auto", "always", "never")
_mode = "auto"

# gpusetup's own styles: the only escape sequences that reach a terminal.
STYLES: dict[str, str] = {
    "error": "\x1b[31;1m", "warning": "\x1b[33;1m", "info": "\x1b[36m", "ok": "\x1b[32m",
    "bold": "\x1b[1m", "dim": "\x1b[2m", "reset": "\x1b[0m",
}
_OWN = re.compile("|".join(re.escape(code) for code in sorted(set(STYLES.values()), key=len, reverse=True)))


def set_mode(mode: str | None) -> None:
    """The user's choice from the command line (None keeps auto)."""
    global _mode
    if mode is not None and mode not in CHOICES:
        raise ValueError(f"colour must be one of {', '.join(CHOICES)}, got {mode!r}")
    _mode = mode or "auto"


def mode() -> str:
    return _mode


def _forced(name: str) -> bool:
    value = os.environ.get(name, "")
    return bool(value) and value.lower() not in ("0", "false", "no")


def use_color(stream: TextIO | SafeStream, requested: str | None = None) -> bool:
    """Whether to colour output written to ``stream`` (see the module's words for the order)."""
    choice = requested or _mode
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if _forced("FORCE_COLOR") or _forced("CLICOLOR_FORCE"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    target = stream.inner if isinstance(stream, SafeStream) else stream
    isatty = getattr(target, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def paint(style: str, text: str) -> str:
    """``text`` marked with one of gpusetup's :data:`STYLES` (kept or dropped where it is written)."""
    return f"{STYLES[style]}{text}{STYLES['reset']}" if text else text


def strip_styles(text: str) -> str:
    """``text`` without gpusetup's colour codes (what a file or pipe gets)."""
    return _OWN.sub("", text)


def for_file(text: str) -> str:
    """Text output saved to a file (``-o``): no colour codes, control characters from data shown visibly (the
    file is read on a terminal later)."""
    return escape.terminal(strip_styles(text))


class SafeStream(io.TextIOBase):
    """A text stream in front of stdout or stderr: secrets scrubbed, control characters from data shown
    visibly, gpusetup's own colour codes kept only when :func:`use_color` says so."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    # what print() and callers look at
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8") or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)

    @property
    def buffer(self) -> Any:
        return getattr(self.inner, "buffer", None)

    def isatty(self) -> bool:
        try:
            return bool(self.inner.isatty())
        except (AttributeError, OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.inner.flush()

    def clean(self, text: str) -> str:
        """What ``text`` becomes on this stream."""
        text = credentials.scrub(text)
        color = use_color(self)
        out: list[str] = []
        last = 0
        for m in _OWN.finditer(text):
            out.append(escape.terminal(text[last:m.start()]))
            if color:
                out.append(m.group())
            last = m.end()
        out.append(escape.terminal(text[last:]))
        return "".join(out)

    def write(self, text: str) -> int:
        self.inner.write(self.clean(text))
        return len(text)

    def control(self, sequence: str) -> None:
        """gpusetup's own cursor control (the progress line), written as it is."""
        self.inner.write(sequence)


def rewrite_line(stream: TextIO, text: str) -> None:
    """Replace the current terminal line with ``text`` (a progress line): carriage return, clear to the end
    of the line, then ``text`` — cleaned like everything else, so data in it cannot move the cursor."""
    if isinstance(stream, SafeStream):
        stream.control("\r\x1b[K")
        stream.write(text)
    else:
        stream.write("\r\x1b[K" + escape.terminal(text, newlines=False))
    stream.flush()


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """stdout and stderr behind :class:`SafeStream` for the length of a command (``gpusetup.cli.main``)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = saved
