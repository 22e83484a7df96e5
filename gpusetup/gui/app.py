"""Starting the wizard: the QApplication, settings, theme, language, log file, and rebuilding the window
when the language changes (every page is rebuilt in the new language; nothing has happened yet then)."""

from __future__ import annotations

import logging
import platform
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from gpusetup import __version__
from gpusetup.cli import main as cli_main
from gpusetup.credentials import ScrubFilter
from gpusetup.gui import i18n, theme
from gpusetup.gui.demo import DemoServices
from gpusetup.gui.pages.base import PAGE_WELCOME
from gpusetup.gui.services import Services
from gpusetup.gui.wizard import SetupWizard, app_icon
from gpusetup.paths import PrivateRotatingLog, private_dir

log = logging.getLogger("gpusetup.gui")


def get_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    QCoreApplication.setOrganizationName("gpusetup")
    QCoreApplication.setApplicationName("gpusetup")
    app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setApplicationDisplayName("GPU Setup")
    app.setDesktopFileName("gpusetup")
    app.setWindowIcon(app_icon())
    return app


def setup_file_log(log_dir: Path) -> Path | None:
    """Log to a file: a windowed build has no console (sys.stdout may be None)."""
    try:
        private_dir(log_dir)
        path = log_dir / "wizard.log"
        handler: logging.FileHandler = PrivateRotatingLog(path)  # 0600, never through a link, 5 MB × 3 at most
    except OSError:
        return None
    handler.addFilter(ScrubFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("gpusetup")
    if not any(isinstance(h, logging.FileHandler) and getattr(h, "baseFilename", "") == str(path) for h in root.handlers):
        root.addHandler(handler)
    root.setLevel(min(root.level or logging.INFO, logging.INFO))
    return path


def log_session_start(services: Services, path: Path | None) -> None:
    """What support needs first: version, system, Python, display platform, demo or real; Qt's own
    warnings (a missing plugin, a font problem) go to the same log."""
    app = QApplication.instance()
    log.info("wizard session: gpusetup %s, %s %s, Python %s%s, Qt platform %s, %s, log %s", __version__,
             platform.system(), platform.release(), platform.python_version(),
             " (packaged)" if getattr(sys, "frozen", False) else "",
             app.platformName() if isinstance(app, QApplication) else "?",
             "demonstration " + str(services.demo_title()) if services.demo else "this computer", path)
    levels = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}
    qt_log = logging.getLogger("gpusetup.gui.qt")

    def handler(kind: QtMsgType, context: object, message: str) -> None:
        qt_log.log(levels.get(kind, logging.INFO), "%s", message)

    qInstallMessageHandler(handler)


class WizardApp:
    """Owns the window; replaces it when the user picks another language on the Welcome page."""

    def __init__(self, services: Services, settings: QSettings, language: str | None = None, scheme: str | None = None) -> None:
        self.app = get_app()
        self.services = services
        self.settings = settings
        self.language = language or str(settings.value("ui/language", i18n.system_language()))
        self.scheme = scheme or str(settings.value("ui/scheme", "auto"))
        theme.apply(self.app, self.scheme)
        theme.follow_system(self.app, lambda: self.wizard.scheme)
        i18n.install(self.language)
        self.wizard = self._build()

    def _build(self) -> SetupWizard:
        return SetupWizard(self.services, self.settings, self.language, self.scheme, on_language=self.set_language,
                           lazy_pages=True)

    def set_language(self, lang: str) -> None:
        old = self.wizard
        self.language = lang
        i18n.install(lang)
        self.scheme = old.scheme
        old.save_geometry()
        self.wizard = self._build()
        if old.secret is not None:  # the Secure Boot password is on no disk: the new window must show it again
            self.wizard.remember_secret(old.secret)
        self.wizard.setGeometry(old.geometry())
        if old.isVisible():
            self.wizard.show()
        old.hide()
        old.stop_jobs(2000)
        old.deleteLater()

    def run(self) -> int:
        self.wizard.show()
        code = self.app.exec()
        self.wizard.stop_jobs(5000)
        return int(code)


def run(
    services: Services | None = None,
    *,
    fake_machine: str | None = None,
    language: str | None = None,
    scheme: str | None = None,
    resume: bool = False,
) -> int:
    """Open the wizard and return when it is closed (exit code 0)."""
    app = get_app()
    services, settings = session(fake_machine, services)
    path = setup_file_log(services.log_dir)
    log_session_start(services, path)
    wiz = WizardApp(services, settings, language, scheme)
    _ = app
    if resume:
        QTimer.singleShot(0, lambda: wiz.wizard.pages[PAGE_WELCOME].auto_resume())  # type: ignore[attr-defined]
    return wiz.run()


def session(fake_machine: str | None, services: Services | None = None) -> tuple[Services, QSettings]:
    """The services and the settings for one window. A demonstration keeps its settings, state and log in a
    temporary folder of its own: it never reads or writes the real ones (choices, geometry, resume file)."""
    if services is None:
        services = DemoServices(fake_machine) if fake_machine else Services()
    if services.demo:
        return services, QSettings(str(services.wizard_dir / "demo-settings.ini"), QSettings.Format.IniFormat)
    return services, QSettings()


def main(argv: list[str] | None = None) -> int:
    """``python -m gpusetup.gui.app``: same as ``gpusetup gui``."""
    return cli_main(["gui", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    raise SystemExit(main())
