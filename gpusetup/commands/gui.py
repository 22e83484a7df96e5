"""`gpusetup gui`: open the double-click wizard (PySide6), or render its pages to PNG for docs/review."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

from gpusetup import paths, qtcheck
from gpusetup.errors import EXIT_TOOL, ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.probe.platform.host import display_available
from gpusetup.qtcheck import PROBE_FLAG


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Open the wizard: it looks at this computer, lets you choose a framework, shows the plan, "
        "installs it after you agree and proves it works with a self-test."
    )
    p.add_argument("--screenshots", metavar="DIR", help="save every page (English and Chinese, light and dark) as PNG into DIR and exit")
    p.add_argument(
        "--fake-machine",
        metavar="KIND",
        help="demonstration: use a recorded machine instead of this one; nothing is changed "
        "(rtx3060, two-gpus, no-driver, no-gpu, a100)",
    )
    p.add_argument("--language", choices=["en", "zh_CN"], help="language (default: the system's, then the last one used)")
    p.add_argument(PROBE_FLAG, dest="qt_probe", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--resume", action="store_true",
                   help="continue an installation that stopped for a restart (what the login entry runs)")
    p.add_argument("--theme", choices=["auto", "light", "dark"], help="appearance (default: follow the system)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.qt_probe:  # the child of the start-up check inside the packaged program (gpusetup.qtcheck)
        # lazy: gui/ is Qt, loaded only when the wizard runs (DESIGN: the CLI core never imports Qt)
        from gpusetup.gui.probe import probe_main

        return probe_main()

    if importlib.util.find_spec("PySide6") is None:  # only gpusetup/gui imports Qt itself
        raise ToolError(msg("cli.error.no-pyside"))
    if args.fake_machine:
        from gpusetup.gui.demo import demo_kinds  # lazy: gui/ is Qt, loaded only when the wizard runs

        if args.fake_machine not in demo_kinds():
            raise ToolError(msg("cli.error.fake-machine", name=args.fake_machine, choices=", ".join(demo_kinds())))
    if args.screenshots:
        out = Path(args.screenshots).expanduser()
        if out.exists() and not out.is_dir():
            raise ToolError(msg("cli.error.screenshots-file", path=str(out)))
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(msg("cli.error.screenshots-folder", path=str(out), reason=exc.strerror or str(exc))) from exc
        if not display_available():
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from gpusetup.gui.screenshots import ScreenshotError, render_all  # lazy: gui/ is Qt

        try:
            saved = render_all(out, kind=args.fake_machine or "rtx3060")
        except ScreenshotError as exc:
            print(f"gpusetup: {exc}", file=sys.stderr)
            return EXIT_TOOL
        for path in saved:
            print(path)
        return 0
    if not display_available() and not os.environ.get("QT_QPA_PLATFORM"):
        raise ToolError(msg("cli.error.no-display"))
    problem = window_problem()
    if problem is not None:
        lang = output_language()
        print("gpusetup: " + render(msg("gui.out.cannot-open", problem=problem), lang), file=sys.stderr)
        note = _write_problem(problem)  # a double-clicked program has no terminal: the reason is kept on disk
        print("gpusetup: " + render(msg("gui.out.text-instead-note", path=str(note)) if note else msg("gui.out.text-instead"), lang),
              file=sys.stderr)
        return _text_report()
    from gpusetup.gui.app import run as run_app  # lazy: gui/ is Qt, loaded only when the wizard runs

    language = args.language or getattr(args, "lang", None) or getattr(args, "lang_top", None)  # `gpusetup --lang zh_CN gui`
    return run_app(fake_machine=args.fake_machine, language=language, scheme=args.theme, resume=args.resume)


def _text_report() -> int:
    """The diagnose report, as `gpusetup diagnose` prints it (what `gpusetup gui` shows when no window opens)."""
    # lazy: the report's stack (rules, renderers) loads only when the window cannot open, not before every
    # wizard's first paint: rules alone cost ~80 ms at start-up (python -X importtime, 2 cores, load ~2.3)
    from gpusetup.commands import diagnose

    parser = argparse.ArgumentParser(prog="gpusetup")
    diagnose.register(parser.add_subparsers().add_parser("diagnose"))
    report = parser.parse_args(["diagnose"])
    return int(report.handler(report))


def window_problem() -> str | None:
    """None when Qt's platform plugin loads here (checked in a child process, remembered once it worked);
    else the reason, after installing the missing system packages when we are root and apt-get exists."""
    platform = os.environ.get("QT_QPA_PLATFORM") or None
    key = json.dumps([platform, bool(os.environ.get("WAYLAND_DISPLAY")), _pyside_version()])
    marker = _marker()
    try:
        if marker is not None and marker.read_text(encoding="utf-8") == key:
            return None
    except OSError:
        pass
    res = qtcheck.ensure(platform, notify=lambda packages: print(  # as root with apt-get: installs what is missing
        "gpusetup: " + render(msg("gui.out.installing-libraries", packages=" ".join(packages)), output_language()),
        file=sys.stderr))
    if not res.ok:
        return res.reason()
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(key, encoding="utf-8")
        except OSError:
            pass
    return None


def _write_problem(problem: str) -> Path | None:
    try:
        path = paths.log_dir() / "window-problem.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"The GPU Setup window could not open: {problem}\n", encoding="utf-8")
        return path
    except OSError:
        return None


def _pyside_version() -> str:
    """What identifies the installed PySide6 for the remembered check: its package file's path, size and
    time, which change when it is installed again or upgraded. (A stat, not importlib.metadata.version():
    importing importlib.metadata and reading the metadata cost 25 ms of every start of the wizard, issue 12.)"""
    try:
        spec = importlib.util.find_spec("PySide6")
        if spec is None or not spec.origin:
            return "?"
        st = os.stat(spec.origin)
    except (ImportError, ValueError, OSError):
        return "?"
    return f"{spec.origin}:{st.st_size}:{st.st_mtime_ns}"


def _marker() -> Path | None:
    try:
        return paths.state_dir() / "qt-platform-ok"
    except OSError:  # no home folder to keep the remembered check in: check every time
        return None
