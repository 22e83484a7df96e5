"""Command line: argparse only, no logic. Each sub-command lives in ``gpusetup/commands/<name>.py``.

Exit codes follow the monitoring convention: 0 healthy, 1 warnings, 2 errors, 3 gpusetup itself could not
run (bad arguments, unreadable input, an internal error).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from gpusetup import __version__
from gpusetup.commands import (
    analyze,
    bundle,
    db,
    desktop_entry,
    diagnose,
    docker,
    gui,
    install,
    plan,
    selftest,
)
from gpusetup.errors import EXIT_CANCELLED, EXIT_ERROR, EXIT_OK, EXIT_TOOL, EXIT_WARN, ToolError
from gpusetup.probe.platform.host import display_available

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_TOOL", "EXIT_WARN", "ToolError", "build_parser", "display_available", "main"]

# Sub-command modules, in the order `gpusetup --help` lists them.
COMMAND_MODULES: tuple[ModuleType, ...] = (diagnose, plan, selftest, install, docker, analyze, bundle, db, gui, desktop_entry)
COMMANDS: tuple[str, ...] = tuple(m.__name__.rsplit(".", 1)[-1] for m in COMMAND_MODULES)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2, which we reserve for "errors found"
        self.print_usage(sys.stderr)
        self.exit(EXIT_TOOL, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpusetup",
        description="Detect your GPU setup, choose working CUDA/framework versions, install and verify them.",
        epilog="With no command: opens the wizard when a display is available, otherwise prints the diagnose report.",
    )
    parser.add_argument("--version", action="version", version=f"gpusetup {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what is run to stderr")
    parser.add_argument("--diagnose", action="store_true", help="same as the 'diagnose' command")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show "—" or 中文 gets "?", not a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    if "--diagnose" in argv:
        argv = ["diagnose", *[a for a in argv if a != "--diagnose"]]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help/--version (0) or a bad argument (3, see _Parser): an exit code, like handlers
        return int(exc.code or 0) if isinstance(exc.code, (int, type(None))) else EXIT_TOOL
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    from gpusetup.credentials import ScrubFilter

    for handler in logging.getLogger().handlers:  # -v logs commands and their output: never with a password
        handler.addFilter(ScrubFilter())
    if args.command is None:
        args = parser.parse_args(["gui" if display_available() else "diagnose"])
    try:
        return int(args.handler(args))
    except ToolError as exc:
        from gpusetup.credentials import scrub

        print(f"gpusetup: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_TOOL
    except KeyboardInterrupt:
        print("gpusetup: cancelled.", file=sys.stderr)
        return EXIT_CANCELLED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a file or folder the command needed: say which and why, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"gpusetup: {where}{exc.strerror or exc}. Check the path and its permissions (a read-only disk, "
              "a folder where a file was expected, or a full disk), then try again.", file=sys.stderr)
        if args.verbose:
            logging.exception("details")
        return EXIT_TOOL
    except Exception as exc:  # noqa: BLE001 - last resort: a bug in gpusetup must still end with plain words
        print(f"gpusetup: an internal error stopped this command ({type(exc).__name__}: {exc}). This is a bug in "
              "gpusetup, not something you did; please report it with the output of the same command run "
              "with -v (gpusetup -v ...).", file=sys.stderr)
        if args.verbose:
            logging.exception("details")
        return EXIT_TOOL


def gui_main() -> int:
    """Entry point for the double-clickable launcher (no console window on Windows)."""
    return main(["gui"])


if __name__ == "__main__":
    raise SystemExit(main())
