"""``gpusetup gui --screenshots DIR``: walk the wizard over a demonstration machine and save every page,
in each language and in light and dark, as PNG (``QWidget.grab()``, works offscreen)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QSettings, QSize
from PySide6.QtWidgets import QApplication

from gpusetup.gui import i18n, theme
from gpusetup.gui.app import get_app
from gpusetup.gui.demo import DemoServices
from gpusetup.gui.pages.base import PAGE_DONE
from gpusetup.gui.wizard import PAGE_NAMES, SetupWizard

SIZE = QSize(980, 780)


class ScreenshotError(RuntimeError):
    """A page did not finish its work in time."""


def wait_until_idle(wizard: SetupWizard, timeout: float = 60.0) -> None:
    """Let the page's background jobs finish (events keep flowing, so progress is shown meanwhile)."""
    app = QApplication.instance()
    assert app is not None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        app.processEvents()
        page = wizard.currentPage()
        if not wizard.running_jobs() and (page is None or page.isComplete() or wizard.currentId() == PAGE_DONE):
            for _ in range(5):
                app.processEvents()
            return
        time.sleep(0.01)
    raise ScreenshotError(f"page {wizard.page_name()} did not finish within {timeout:.0f} s")


def walk(wizard: SetupWizard, out_dir: Path, suffix: str, pages: Sequence[str] | None = None) -> list[Path]:
    """Show the wizard, save each page, press Next until the last page."""
    saved: list[Path] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    wizard.resize(SIZE)
    wizard.show()
    seen = set()
    while True:
        wait_until_idle(wizard)
        pid = wizard.currentId()
        name = PAGE_NAMES.get(pid, str(pid))
        if pid in seen:
            break
        seen.add(pid)
        if pages is None or name in pages:
            path = out_dir / f"{pid + 1}-{name}-{suffix}.png"
            if not wizard.grab().save(str(path)):
                raise ScreenshotError(f"could not write {path}")
            saved.append(path)
        if pid == PAGE_DONE or (pages is not None and all(p in {PAGE_NAMES[s] for s in seen} for p in pages)):
            break
        wizard.next()
    return saved


def render_all(
    out_dir: Path,
    kind: str = "rtx3060",
    languages: Sequence[str] = ("en", "zh_CN"),
    schemes: Sequence[str] = ("light", "dark"),
    extra_kinds: Sequence[str] = ("two-gpus", "no-driver", "no-gpu"),
    step_delay: float = 0.01,
    translated_extra_kinds: Sequence[str] = ("no-driver",),
    proven_kinds: Sequence[str] = ("a100",),
) -> list[Path]:
    """Every page for ``kind`` in each language and scheme, plus the machine page of ``extra_kinds`` (English,
    light) and of ``translated_extra_kinds`` in the other languages (a machine with findings, so the
    translated finding texts are shown)."""
    app = get_app()
    out_dir.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="gpusetup-shots-") as tmp:
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        for lang in languages:
            i18n.install(lang)
            for scheme in schemes:
                theme.apply(app, scheme)
                settings.clear()
                services = DemoServices(kind, step_delay=step_delay)  # real log folder path shown; demo writes nothing
                wizard = SetupWizard(services, settings, lang, scheme)
                try:
                    saved += walk(wizard, out_dir, f"{lang}-{scheme}")
                finally:
                    wizard.stop_jobs(2000)
                    wizard.hide()
                    wizard.deleteLater()
                    app.processEvents()
        theme.apply(app, "light")
        extras = [("en", k) for k in extra_kinds] + [
            (lang, k) for lang in languages if lang != "en" for k in translated_extra_kinds
        ]
        for lang, extra in extras:
            i18n.install(lang)
            settings.clear()
            services = DemoServices(extra, step_delay=step_delay)
            wizard = SetupWizard(services, settings, lang, "light")
            try:
                saved += walk(wizard, out_dir, f"{extra}-{lang}-light", pages=["machine", "choose"])
            finally:
                wizard.stop_jobs(2000)
                wizard.hide()
                wizard.deleteLater()
                app.processEvents()
        saved += render_verify(out_dir, proven_kinds, languages, step_delay, settings)
        i18n.install("en")
    return saved


def render_verify(out_dir: Path, kinds: Sequence[str], languages: Sequence[str], step_delay: float = 0.01,
                  settings: QSettings | None = None) -> list[Path]:
    """The Verify page of demonstration machines with a recorded, rated self-test (a proven GPU), light."""
    app = get_app()
    saved: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="gpusetup-shots-") as tmp:
        settings = settings or QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        theme.apply(app, "light")
        for lang in languages:
            for kind in kinds:
                i18n.install(lang)
                settings.clear()
                wizard = SetupWizard(DemoServices(kind, step_delay=step_delay), settings, lang, "light")
                try:
                    saved += walk(wizard, out_dir, f"{kind}-{lang}-light", pages=["verify"])
                finally:
                    wizard.stop_jobs(2000)
                    wizard.hide()
                    wizard.deleteLater()
                    app.processEvents()
        i18n.install("en")
    return saved
