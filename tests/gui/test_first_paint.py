"""Issue 12: what the wizard's first paint waits for. The installer, the resolver, the container generator, the
rules and numpy are imported, and the pages after Welcome built, only after the window is drawn
(benchmarks/gui_first_paint.py measures the time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import os, sys
from PySide6.QtCore import QEvent, QObject, QTimer
import gpusetup.gui.app as app_mod

class First(QObject):
    seen = False

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and obj.isWindow() and not self.seen:
            self.seen = True
            print("LOADED " + " ".join(sorted(m for m in sys.modules if m.startswith(("gpusetup", "numpy")))),
                  flush=True)
            print("PAGES %d" % len(obj.pageIds()), flush=True)
            def later(w=obj):
                print("LATER %d" % len(w.pageIds()), flush=True)
                os._exit(0)
            QTimer.singleShot(1500, later)
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


def loaded_at_first_paint(tmp_path: Path, *args: str) -> tuple[set[str], int, int]:
    """(modules imported at the first paint, pages built then, pages built 1.5 s later)."""
    env = {**os.environ, "GPUSETUP_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "GPUSETUP_QT_INSTALL": "0",
           "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120)
    out = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in res.stdout.splitlines() if " " in ln}
    assert {"LOADED", "PAGES", "LATER"} <= set(out), res.stdout[-500:] + res.stderr[-1500:]
    return set(out["LOADED"].split()), int(out["PAGES"]), int(out["LATER"])


def test_the_welcome_page_is_drawn_before_the_core_is_imported(tmp_path: Path) -> None:
    for args in ((), ("--fake-machine", "rtx3060")):  # this computer's services, and a demonstration's
        loaded, at_paint, later = loaded_at_first_paint(tmp_path, *args)
        assert "gpusetup.gui.pages.welcome" in loaded  # the probe really saw the wizard's first paint
        early = sorted(m for m in loaded if m.startswith(DEFERRED))
        assert early == [], f"imported before the first paint ({args}): {early}"
        # only the Welcome page is built before the window is drawn; the other six right after, unasked
        assert (at_paint, later) == (1, 7), (args, at_paint, later)



def test_pages_built_after_the_first_paint_are_there_when_asked_for(qtbot, services, settings) -> None:
    """The app's window builds the later pages after it is drawn; asking for them before (``pages``, as the
    resume path does) builds them at once, Next right after the paint finds its page, and every page is built
    exactly once."""
    from PySide6.QtWidgets import QWizard

    from gpusetup.gui.app import WizardApp
    from gpusetup.gui.pages.base import PAGE_MACHINE, PAGE_WELCOME

    wa = WizardApp(services, settings, language="en", scheme="light")
    w = wa.wizard  # not given to qtbot: the app deletes it when it replaces the window below
    assert w.pageIds() == [PAGE_WELCOME]
    assert sorted(w.pages) == list(range(7)) and w.pageIds() == list(range(7))  # built when asked for
    wa.set_language("en_US")  # a new window, lazy again
    w = wa.wizard
    qtbot.addWidget(w)
    assert w.pageIds() == [PAGE_WELCOME]
    w.show()
    qtbot.waitUntil(lambda: w.painted, timeout=5000)
    w.button(QWizard.WizardButton.NextButton).click()
    assert w.currentId() == PAGE_MACHINE
    qtbot.waitUntil(lambda: len(w.pageIds()) == 7, timeout=5000)
    assert len({id(p) for p in w.pages.values()}) == 7
    w.stop_jobs()


def test_looking_for_an_unfinished_install_does_not_load_the_installer(tmp_path: Path) -> None:
    """Right after the first paint the Welcome page asks whether an install is unfinished; with no journal
    folder the answer must not import the installer on the UI thread (0.4 s on a loaded machine)."""
    code = ("import sys; from pathlib import Path; from gpusetup.gui.services import Services; "
            "s = Services(Path(sys.argv[1])); print(s.unfinished_install(), 'gpusetup.install' in sys.modules)")
    env = {**os.environ, "GPUSETUP_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "state")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.stdout.split() == ["False", "False"], res.stdout + res.stderr[-1500:]
    journal = tmp_path / "state" / "install"  # an install that started and did not finish: it is found
    journal.mkdir(parents=True)
    (journal / "journal.jsonl").write_text('{"event": "start", "step": "create-venv"}\n', encoding="utf-8")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "state")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.stdout.split()[1] == "True", res.stdout + res.stderr[-1500:]
