"""Command line: argparse only, no logic. Each sub-command lives in ``gpusetup/commands/<name>.py``.

Exit codes follow the monitoring convention: 0 healthy, 1 warnings, 2 errors, 3 gpusetup itself could not
run (bad arguments, unreadable input, an internal error).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from gpusetup import __version__, children, i18n, term
from gpusetup.config import ConfigError, load_config
from gpusetup.credentials import ScrubFilter, scrub
from gpusetup.errors import EXIT_CANCELLED, EXIT_ERROR, EXIT_OK, EXIT_TOOL, EXIT_WARN, ToolError
from gpusetup.messages import msg, render
from gpusetup.model import Message
from gpusetup.probe.platform.host import display_available

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_TOOL", "EXIT_WARN", "ToolError", "build_parser", "display_available", "main"]

# Sub-commands, in the order `gpusetup --help` lists them, with the line it shows for each. The rest of a
# command (its options, description and handler) is in its module: gpusetup.commands.diagnose, ….desktop_entry.
COMMANDS: dict[str, str] = {
    "diagnose": "detect GPUs, driver, CUDA, frameworks and problems (text or JSON)",
    "plan": "choose the PyTorch/TensorFlow/JAX builds that work on this machine",
    "selftest": "measure the GPU: copy bandwidth, matrix multiply, cuBLAS, frameworks, CPU baseline",
    "install": "install the framework build that works here (venv + pip; driver/toolkit when needed), with undo",
    "docker": "generate a GPU container set-up (Dockerfile, compose, devcontainer, Kubernetes, Slurm)",
    "analyze": "diagnose from text a user sent: collect_env, nvidia-smi, dmesg, tracebacks, docker errors, reports",
    "bundle": "write a support bundle (.zip) with the report and raw outputs, private data removed",
    "db": "show or update the compatibility data (versions of CUDA, drivers, frameworks)",
    "gui": "open the step-by-step wizard for beginners",
    "desktop-entry": "add (or remove) a GPU Setup launcher in the application menu",
    "config": "where the configuration file is, what it says (secrets hidden), or write a commented one",
    "completion": "print a shell completion script (bash, zsh, fish, PowerShell)",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2, which we reserve for "errors found"
        self.print_usage(sys.stderr)
        self.exit(EXIT_TOOL, f"{self.prog}: error: {message}\n")


def _command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, found as argparse finds it: past the top-level options and their values
    (``--color never diagnose``, ``--color=never diagnose``, ``-v diagnose``); with no command, the one that runs
    instead (the wizard, or the report without a display); ``""`` for ``--help`` (the list of commands needs no
    command's module); None for ``completion`` and anything this cannot read (all are loaded; argparse then
    says what is wrong).

    lazy: ``main`` imports only that command's module (:func:`_command_module`), because each
    imports what it uses at the top. Loading all twelve made `gpusetup --color never diagnose --json` 422 ms
    slower and 8 MB larger (1.29 s → 1.79 s, 27.5 → 35.7 MB; benchmarks/diagnose_bench.py --against a copy that
    loads them all, 15 A/B pairs, 2 cores, load average 5.6-6.2) and `gpusetup --help` 309 ms slower.
    """
    top = _Parser(prog="gpusetup")
    _add_top_options(top)
    args = iter(argv)
    for arg in args:
        if arg == "--":
            arg = next(args, "")
        elif arg.startswith("-"):
            option, has_value, _ = arg.partition("=")
            matches = [a for o, a in top._option_string_actions.items()  # argparse accepts a unique prefix
                       if o == option or (option.startswith("--") and o.startswith(option))]
            if len({id(a) for a in matches}) != 1:
                return None
            if isinstance(matches[0], argparse._HelpAction):
                return ""  # `gpusetup --help` lists the commands from COMMANDS: no module needed
            if matches[0].nargs != 0 and not has_value:
                value = next(args, "")  # argparse takes the next word as the value unless it is an option
                if value.startswith("-"):
                    return None
            continue
        return arg if arg in COMMANDS and arg != "completion" else None
    return _default_command()


def _default_command() -> str:
    """What ``gpusetup`` with no command runs: the wizard when a window can open, else the diagnose report."""
    return "gui" if display_available() else "diagnose"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` a command's name, the options of just that command (what ``main``
    uses to run it); with ``only=""`` just the list of commands (``gpusetup --help``)."""
    parser = _Parser(
        prog="gpusetup",
        description="Detect your GPU setup, choose working CUDA/framework versions, install and verify them.",
        epilog="With no command: opens the wizard when a display is available, otherwise prints the diagnose report.",
    )
    _add_top_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, summary in COMMANDS.items():
        subparser = sub.add_parser(name, help=summary)
        if only is None or only == name:
            _command_module(name).register(subparser)
        for option, add in (("--color", _add_color), ("--lang", _add_lang)):  # every command takes --color and
            if not any(option in a.option_strings for a in subparser._actions):  # --lang, before or after its name
                add(subparser, option[2:])
    parser.set_defaults(root_parser=parser)  # `gpusetup completion` describes the whole command line
    sub.choices["completion"].set_defaults(root_parser=parser)  # the completion script is made from this tree
    return parser


def _command_module(name: str) -> ModuleType:
    """The module of the command ``name`` (a key of :data:`COMMANDS`), imported when it is first asked for."""
    if name == "diagnose":
        from gpusetup.commands import diagnose  # lazy: see _command_in

        return diagnose
    if name == "plan":
        from gpusetup.commands import plan  # lazy: see _command_in

        return plan
    if name == "selftest":
        from gpusetup.commands import selftest  # lazy: see _command_in

        return selftest
    if name == "install":
        from gpusetup.commands import install  # lazy: see _command_in

        return install
    if name == "docker":
        from gpusetup.commands import docker  # lazy: see _command_in

        return docker
    if name == "analyze":
        from gpusetup.commands import analyze  # lazy: see _command_in

        return analyze
    if name == "bundle":
        from gpusetup.commands import bundle  # lazy: see _command_in

        return bundle
    if name == "db":
        from gpusetup.commands import db  # lazy: see _command_in

        return db
    if name == "gui":
        from gpusetup.commands import gui  # lazy: see _command_in

        return gui
    if name == "desktop-entry":
        from gpusetup.commands import desktop_entry  # lazy: see _command_in

        return desktop_entry
    if name == "config":
        from gpusetup.commands import config  # lazy: see _command_in

        return config
    if name == "completion":
        from gpusetup.commands import completion  # lazy: see _command_in

        return completion
    raise KeyError(name)


def _add_top_options(parser: argparse.ArgumentParser) -> None:
    """The options before the command name (:func:`_command_in` reads past them to find the command)."""
    parser.add_argument("--version", action="version", version=f"gpusetup {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what is run to stderr")
    parser.add_argument("--diagnose", action="store_true", help="same as the 'diagnose' command")
    _add_color(parser, "color_top")
    _add_lang(parser, "lang_top")


def _add_color(parser: argparse.ArgumentParser, dest: str) -> None:
    parser.add_argument("--color", dest=dest, nargs="?", const="always", choices=term.CHOICES, metavar="WHEN",
                        help="colour the output: auto (a terminal, unless NO_COLOR is set), always or never")
    parser.add_argument("--no-color", dest=dest, action="store_const", const="never", help=argparse.SUPPRESS)


def _add_lang(parser: argparse.ArgumentParser, dest: str) -> None:
    parser.add_argument("--lang", dest=dest, type=i18n.language_option, choices=i18n.OUTPUT_LANGUAGES, metavar="LANG",
                        help="print reports, plans and results in LANG: en or zh_CN (default: GPUSETUP_LANG, "
                        "then defaults.language in the configuration file, then the locale)")


def _apply_config(language_option: str | None = None, stops: bool = False) -> tuple[list[str], str | None]:
    """The shared configuration file: its proxy reaches pip, uv and downloads (the wizard starts here too).

    Returns the environment variables it set, so ``main`` removes them again when the command ends, and the
    language it names (``defaults.language``). A broken file is left out and said once: here as a warning, or,
    when the command stops on it (``stops``: it reads the file for its mirrors and defaults, see
    ``config_stops`` in each command's defaults), by that command's error alone.
    """
    try:
        cfg = load_config()
    except ConfigError as exc:
        if not stops:
            warning = render(msg("cli.warning", text=exc.message), i18n.choose_language(language_option))  # --lang or the environment
            print(f"gpusetup: {warning}", file=sys.stderr)
        return [], None
    added = [k for k in cfg.proxy_env() if k not in os.environ]
    for key in added:
        os.environ[key] = cfg.proxy_env()[key]
    return added, cfg.language


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show "—" or 中文 gets "?", not a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    if "--diagnose" in argv:
        argv = ["diagnose", *[a for a in argv if a != "--diagnose"]]
    parser = build_parser(_command_in(argv))
    try:
        args = parser.parse_args(argv)
        if args.command and not hasattr(args, "handler"):  # _command_in read argv otherwise than argparse
            parser = build_parser()
            args = parser.parse_args(argv)
    except SystemExit as exc:  # --help/--version (0) or a bad argument (3, see _Parser): an exit code, like handlers
        return int(exc.code or 0) if isinstance(exc.code, (int, type(None))) else EXIT_TOOL
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:  # -v logs commands and their output: never with a password
        if not any(isinstance(f, ScrubFilter) for f in handler.filters):  # once (main() may run many times)
            handler.addFilter(ScrubFilter())
    term.set_mode(getattr(args, "color", None) or getattr(args, "color_top", None))
    lang_option = getattr(args, "lang", None) or getattr(args, "lang_top", None)
    stops = getattr(args, "config_stops", False)
    added_env, configured_language = _apply_config(lang_option, bool(stops(args) if callable(stops) else stops))
    i18n.set_output_language(i18n.choose_language(lang_option, configured_language))
    try:
        with term.installed():  # colour and control characters decided in one place for every command
            return _run(parser, args)
    finally:
        for key in added_env:
            os.environ.pop(key, None)
        i18n.set_output_language(None)  # in-process callers (tests, the wizard's fallback) start from English


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command is None:
        args = parser.parse_args([_default_command()])
    children.install_signal_handlers()  # SIGTERM/SIGHUP stop every child tree first (the wizard's installs too)
    stopped = children.reap_once()  # what a gpusetup killed with kill -9 left running (a build, a download)
    if stopped:
        _say(msg("cli.stopped-leftovers", count=len(stopped), which=", ".join(stopped[:5])
                 + (", …" if len(stopped) > 5 else "")))
    try:
        return int(args.handler(args))
    except ToolError as exc:
        _say(exc.message)
        return EXIT_TOOL
    except KeyboardInterrupt:
        _say(msg("cli.cancelled"))
        return EXIT_CANCELLED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a file or folder the command needed: say which and why, no traceback
        said = getattr(exc, "message", None)  # gpusetup.paths.UnsafePath: a link, another user's file…
        where = f"{exc.filename}: " if exc.filename else ""
        _say(said if isinstance(said, Message) else msg("cli.error.os", where=where, reason=exc.strerror or str(exc)))
        if args.verbose:
            logging.exception("details")
        return EXIT_TOOL
    except Exception as exc:  # noqa: BLE001 - last resort: a bug in gpusetup must still end with plain words
        _say(msg("cli.error.internal", error=f"{type(exc).__name__}: {exc}"))
        if args.verbose:
            logging.exception("details")
        return EXIT_TOOL


def _say(message: Message) -> None:
    """An error on stderr, in the language the command prints in (``--lang``), never with a password."""
    print(f"gpusetup: {scrub(render(message, i18n.output_language()))}", file=sys.stderr)


def gui_main() -> int:
    """Entry point for the double-clickable launcher (no console window on Windows)."""
    return main(["gui", *sys.argv[1:]])  # --gpusetup-qt-probe: the start-up check's child (commands/gui.py)


if __name__ == "__main__":
    raise SystemExit(main())
