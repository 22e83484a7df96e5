"""Issue 12: what the wizard's first paint waits for. The installer, the resolver, the container generator, the
rules and numpy are imported only after the window is drawn (benchmarks/gui_first_paint.py measures the time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import os, sys
from PySide6.QtCore import QEvent, QObject
import gpusetup.gui.app as app_mod

class First(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and obj.isWindow():
            print("LOADED " + " ".join(sorted(m for m in sys.modules if m.startswith(("gpusetup", "numpy")))),
                  flush=True)
            os._exit(0)
        return False

orig = app_mod.WizardApp.run
def run(self):
    self.wizard.installEventFilter(F)
    return orig(self)
F = First()
app_mod.WizardApp.run = run
from gpusetup.cli import main
sys.exit(main(["gui", *sys.argv[1:]]))
"""

DEFERRED = ("gpusetup.install", "gpusetup.compat.resolver", "gpusetup.generate", "gpusetup.rules", "numpy")


def loaded_at_first_paint(tmp_path: Path, *args: str) -> set[str]:
    env = {**os.environ, "GPUSETUP_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "GPUSETUP_QT_INSTALL": "0",
           "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("LOADED ")), None)
    assert line is not None, res.stdout[-500:] + res.stderr[-1500:]
    return set(line.split()[1:])


def test_the_welcome_page_is_drawn_before_the_core_is_imported(tmp_path: Path) -> None:
    for args in ((), ("--fake-machine", "rtx3060")):  # this computer's services, and a demonstration's
        loaded = loaded_at_first_paint(tmp_path, *args)
        assert "gpusetup.gui.pages.welcome" in loaded  # the probe really saw the wizard's first paint
        early = sorted(m for m in loaded if m.startswith(DEFERRED))
        assert early == [], f"imported before the first paint ({args}): {early}"

