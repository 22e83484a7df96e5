"""The core's decisions in the wizard's words.

The core says what it decided as a message code (gpusetup.messages); the catalogue's words for a few codes are
advice for the command line — a flag to pass (``--index-url``, ``--download-only``, ``--gpu 1``), a command to
run (``gpusetup install --resume``, ``gpusetup plan``). Inside the wizard those are dead ends: it has buttons and
fields for the same things. :func:`for_wizard` keeps the decision (the same parameters) and swaps the words for
the wizard's own, also inside the parameters (a reason nested in a note). Codes without CLI advice pass
through unchanged. Nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpusetup.messages import as_message, msg, render
from gpusetup.model import Message

# core code → the wizard's words for the same decision, with the same parameters
_WIZARD: dict[str, Callable[[dict[str, Any]], Message]] = {
    "docker.alt.no-driver": lambda p: msg("wizard.docker.alt.no-driver", **p),
    "docker.alt.nothing-fits": lambda p: msg("wizard.docker.alt.nothing-fits", **p),
    "install.net.missing-credential": lambda p: msg("wizard.net.missing-credential", **p),
    "install.net.no-proxy": lambda p: msg("wizard.net.no-proxy", **p),
    "install.exec.hint-venv-path": lambda p: msg("wizard.exec.hint-venv-path", **p),
    "install.exec.restart-now": lambda p: msg("wizard.restart-now", **p),
    "install.exec.step-failed": lambda p: msg("wizard.exec.step-failed", **p),
    "install.net.unreachable": lambda p: msg("wizard.net.unreachable", **p),
    "install.note.newer-python": lambda p: msg("wizard.newer-python", **p),
    "left.other-vendor": lambda p: msg("wizard.left.other-vendor", **p),
    "step.explain.reboot": lambda p: msg("wizard.step.reboot", **p),
}


def for_wizard(message: Any) -> Any:
    """``message`` with the wizard's words where the catalogue's are command-line advice (recursively, through
    message parameters and lists); anything that is not a message is returned as it is."""
    m = as_message(message)
    if m is None:
        if isinstance(message, (list, tuple)):
            return [for_wizard(v) for v in message]
        return message
    params = {k: _param(v) for k, v in m.params.items()}
    swap = _WIZARD.get(m.code)
    return swap(params) if swap is not None else Message(code=m.code, params=params)


def _param(value: Any) -> Any:
    if as_message(value) is not None or isinstance(value, (list, tuple)):
        return for_wizard(value)
    return value


def words(message: Any, language: str | None = None) -> str:
    """The wizard's words for a core message, in ``language``."""
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    return render(for_wizard(message), language)


def notes(texts: Sequence[str], codes: Sequence[Message | Mapping[str, Any]], language: str | None = None) -> list[str]:
    """A plan's notes in the wizard's words: from their codes when there is one per note (in English too, so
    no command-line advice shows), else the English texts (a plan saved by an older version)."""
    if len(codes) != len(texts):
        return list(texts)
    return [words(c, language) for c in codes]
