"""One module per CLI sub-command (each has ``register(parser)`` and a handler), and what they share: argparse
types, ``--for FILE`` and writing an output file. The CLI imports only the
module of the command that runs (gpusetup/cli.py), so ``gpusetup diagnose`` starts fast and never imports Qt
or numpy, while each command module imports what it uses at the top."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING

from gpusetup import credentials
from gpusetup.errors import ToolError
from gpusetup.i18n import choose_language
from gpusetup.messages import msg, render
from gpusetup.mirrors import url_problem
from gpusetup.model import Message
from gpusetup.paths import is_regular_target, write_output

if TYPE_CHECKING:
    from gpusetup.model import Machine


def carried(exc: Exception) -> Message | str:
    """What an error from a lower layer says: its ``message`` as data when it carries one (then the CLI words
    it in its language), else its English text."""
    message = getattr(exc, "message", None)
    return message if isinstance(message, Message) else str(exc)


def positive_number(text: str) -> float:
    """argparse type for seconds and sizes: a finite number above 0 (``nan``, ``inf``, ``0``, ``-5`` refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def gpu_number(text: str) -> int:
    """argparse type for a GPU index: 0, 1, 2… (the numbers `gpusetup diagnose` shows)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a GPU number; use 0, 1, 2… as `gpusetup diagnose` shows") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"GPU numbers start at 0, got {value}; `gpusetup diagnose` lists them")
    return value


def index_url(text: str) -> str:
    """argparse type for ``--index-url`` / ``--pytorch-mirror`` / ``--live-index``: the same URL check as the
    configuration file and the wizard (gpusetup.mirrors.url_problem), so "not a url" never reaches a plan or a
    written file. A password in the URL is not repeated in the error."""
    problem = url_problem(text)
    if problem is not None:
        shown = credentials.mask_url(text) if "://" in text else text
        raise argparse.ArgumentTypeError(render(msg("url.not-a-url", value=repr(shown), why=problem),
                                                choose_language()))
    return text


def python_executable(text: str) -> str:
    """argparse type for ``--python PATH``: the interpreter must exist, or every probe of it would fail silently."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(
            f"{text}: no such file. Give the path of a python executable, e.g. ~/venv/bin/python")
    if path.is_dir():  # an environment's folder: its interpreter
        from gpusetup.probe.pyenv import interpreter_in  # lazy: only when a folder is given

        inside = interpreter_in(path)
        if inside is None:
            raise argparse.ArgumentTypeError(
                f"{text} is a folder without a Python environment in it (no bin/python or Scripts\\python.exe). "
                f"Give the environment's folder or its python executable, e.g. {path / 'bin' / 'python'}")
        return str(inside)
    return text


def load_for_file(path: str) -> Machine:
    """The Machine described by ``--for FILE`` (a diagnose report or a machine profile); a file that cannot
    be used becomes a :class:`gpusetup.errors.ToolError` saying what is wrong with it (exit 3, no traceback)."""
    # lazy: compat.profile brings enrich, pcidb and compat.db, which every command's start-up would pay for
    # (this package is imported by all of them) while only --for FILE needs them; diagnose must not load it
    # (tests/unit/test_diagnose_cli.py::test_diagnose_imports_only_what_it_uses).
    from gpusetup.compat.profile import ProfileError, load_machine_file

    try:
        return load_machine_file(path)
    except ProfileError as exc:
        raise ToolError(msg("cli.error.for-file", detail=carried(exc))) from exc


def prepare_output(path: Path | str, example: str = "report.txt") -> Path:
    """Check that ``path`` can be a new file and create its missing folders. A folder given as the file, or a
    file where a folder should be, becomes a :class:`gpusetup.errors.ToolError` in plain words, before any work."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise ToolError(msg("cli.error.output-is-folder", path=str(path), example=str(path / example)))
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ToolError(msg("cli.error.output-under-file", path=str(path), file=str(existing)))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(msg("cli.error.cannot-write", path=str(path), reason=exc.strerror or str(exc))) from exc
    return path


def write_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write an output file the user named: a regular file is replaced atomically (an interrupted or failed
    write never leaves half a file, a stray temporary file, or a damaged earlier copy); a device, FIFO,
    ``/dev/stdout`` or ``/proc/self/fd/1`` is written through, never replaced (:func:`gpusetup.paths.write_output`).
    ``mode`` sets the permissions (e.g. 0o755 for scripts). Raises :class:`gpusetup.errors.ToolError` with the
    reason in plain words."""
    path = prepare_output(path)
    try:
        write_output(path, text, mode=mode)
    except OSError as exc:
        raise ToolError(msg("cli.error.cannot-write", path=str(path), reason=exc.strerror or str(exc))) from exc


def refuse_overwrite(path: Path | str, force: bool, option: str = "--force") -> None:
    """An existing regular file is not replaced unless the user said so (``option``); devices, FIFOs and
    ``/dev/stdout`` are outputs, not files to keep, so they are always fine."""
    p = Path(path).expanduser()
    if not force and p.is_file() and is_regular_target(p):
        raise ToolError(msg("cli.error.output-exists", path=str(p), option=option))
