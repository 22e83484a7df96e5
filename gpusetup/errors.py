"""Errors and exit codes shared by every command (and by the CLI that turns them into an exit status).

Exit codes follow the monitoring convention: 0 healthy, 1 warnings, 2 errors, 3 gpusetup itself could not
run (bad arguments, unreadable input, an internal error); 130 after Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Callable

from gpusetup.model import Message

EXIT_OK, EXIT_WARN, EXIT_ERROR, EXIT_TOOL = 0, 1, 2, 3
EXIT_CANCELLED = 130

# How a Message becomes English words. gpusetup.messages (a layer above this module) installs its render()
# here when it is imported — every module that raises a ToolError imports it for msg() — so ``str(error)``
# is the English text without this bottom-layer module importing the catalogue machinery.
_english: list[Callable[[Message], str]] = [lambda m: m.code]


def set_english_renderer(render: Callable[[Message], str]) -> None:
    _english[0] = render


def english(message: Message) -> str:
    """``message`` in English (its code until gpusetup.messages is imported)."""
    return _english[0](message)


class ToolError(Exception):
    """A problem the user can fix (bad input, unreadable file). Printed without a traceback, exit 3.

    It carries the problem as data (``message``: a gpusetup.messages code and its parameters), so the CLI
    prints it in the language it speaks (``gpusetup --lang zh_CN``); ``str()`` is the English.
    """

    def __init__(self, message: Message) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return _english[0](self.message)
