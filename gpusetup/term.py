"""Colour on the terminal: ``--color auto|always|never`` on every command, and the NO_COLOR convention.

``auto`` (the default) colours only a terminal, and never when ``NO_COLOR`` is set to a non-empty value
(https://no-color.org) or ``TERM=dumb``. ``always`` and ``never`` win over the environment.
"""

from __future__ import annotations

import os
from typing import TextIO

CHOICES = ("auto", "always", "never")
_mode = "auto"


def set_mode(mode: str | None) -> None:
    """The user's choice from the command line (None keeps auto)."""
    global _mode
    if mode is not None and mode not in CHOICES:
        raise ValueError(f"colour must be one of {', '.join(CHOICES)}, got {mode!r}")
    _mode = mode or "auto"


def mode() -> str:
    return _mode


def use_color(stream: TextIO, requested: str | None = None) -> bool:
    """Whether to colour output written to ``stream``."""
    choice = requested or _mode
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
