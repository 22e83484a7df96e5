"""Cancellation and progress, shared by every long job (detection, install, self-test) and Qt-free.

The GUI's workers and the CLI's Ctrl-C handler both just call ``token.cancel()``; the job checks
``token.cancelled`` (or calls ``raise_if_cancelled()``) between steps and cleans up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from gpusetup.model import Message

# progress(label, fraction): fraction in 0..1, or None when the job cannot tell how far it is.
Progress = Callable[[str, "float | None"], None]
# The installer's progress (gpusetup.install.execute): the label is a Message — a code and its values — that
# each interface words in its own language (gpusetup.messages.render), or plain words; nothing parses it back.
SaidProgress = Callable[["str | Message", "float | None"], None]


class Cancelled(Exception):
    """Raised inside a job when its token was cancelled; the job frees what it holds and returns."""


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when cancelled meanwhile."""
        return self._event.wait(seconds)


def no_progress(label: str, fraction: float | None) -> None:
    """Default progress callback."""
