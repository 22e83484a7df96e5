"""Only gpusetup/gui imports Qt: the CLI (and its gui/desktop-entry commands) load without PySide6."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_building_the_cli_does_not_import_qt() -> None:
    code = (
        "import sys\n"
        "from gpusetup.cli import build_parser\n"
        "build_parser().parse_args(['desktop-entry', '--print'])\n"
        "import gpusetup.commands.gui, gpusetup.commands.desktop_entry, gpusetup.gui.services, gpusetup.gui.tstools\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6')))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr


def test_no_qt_import_outside_the_gui_package() -> None:
    offenders = []
    for path in (ROOT / "gpusetup").rglob("*.py"):
        if "gui" in path.relative_to(ROOT / "gpusetup").parts[:1]:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("PySide6", "PyQt5", "PyQt6", "PySide2") for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders
