"""`gpusetup gui`: open the double-click wizard (PySide6), or render its pages to PNG for docs/review."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gpusetup.errors import EXIT_TOOL, ToolError
from gpusetup.probe.platform.host import display_available


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gui",
        help="open the step-by-step wizard for beginners",
        description="Open the wizard: it looks at this computer, lets you choose a framework, shows the plan, "
        "installs it after you agree and proves it works with a self-test.",
    )
    p.add_argument("--screenshots", metavar="DIR", help="save every page (English and Chinese, light and dark) as PNG into DIR and exit")
    p.add_argument(
        "--fake-machine",
        metavar="KIND",
        help="demonstration: use a recorded machine instead of this one; nothing is changed "
        "(rtx3060, two-gpus, no-driver, no-gpu, a100)",
    )
    p.add_argument("--language", choices=["en", "zh_CN"], help="language (default: the system's, then the last one used)")
    p.add_argument("--theme", choices=["auto", "light", "dark"], help="appearance (default: follow the system)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("PySide6") is None:  # only gpusetup/gui imports Qt itself
        raise ToolError("the wizard needs PySide6, which is not installed. Install it with: pip install PySide6-Essentials")
    if args.fake_machine:
        from gpusetup.gui.demo import demo_kinds

        if args.fake_machine not in demo_kinds():
            raise ToolError(f"--fake-machine {args.fake_machine}: unknown; choose one of {', '.join(demo_kinds())}")
    if args.screenshots:
        out = Path(args.screenshots).expanduser()
        if out.exists() and not out.is_dir():
            raise ToolError(f"--screenshots {out}: that is a file; give a folder for the pictures")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"--screenshots {out}: cannot create the folder ({exc.strerror})") from exc
        if not display_available():
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from gpusetup.gui.screenshots import ScreenshotError, render_all

        try:
            saved = render_all(out, kind=args.fake_machine or "rtx3060")
        except ScreenshotError as exc:
            print(f"gpusetup: {exc}", file=sys.stderr)
            return EXIT_TOOL
        for path in saved:
            print(path)
        return 0
    if not display_available() and not os.environ.get("QT_QPA_PLATFORM"):
        raise ToolError(
            "no display found (DISPLAY and WAYLAND_DISPLAY are not set), so the wizard cannot open a window. "
            "Run `gpusetup diagnose` for the text report, or log in to the desktop and start it there."
        )
    from gpusetup.gui.app import run as run_app

    return run_app(fake_machine=args.fake_machine, language=args.language, scheme=args.theme)
