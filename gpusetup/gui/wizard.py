"""The wizard window: seven pages over one :class:`WizardState`, a thread pool for the core's long jobs,
remembered geometry and choices, and a Cancel that stops jobs before closing."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QIcon, QPaintEvent, QPixmap
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget, QWizard

from gpusetup import i18n as core_i18n
from gpusetup.gui import theme
from gpusetup.gui.i18n import tr
from gpusetup.gui.pages.base import (
    PAGE_CHOOSE,
    PAGE_DONE,
    PAGE_INSTALL,
    PAGE_MACHINE,
    PAGE_PLAN,
    PAGE_VERIFY,
    PAGE_WELCOME,
    BasePage,
    WizardState,
)
from gpusetup.gui.pages.choose import ChoosePage
from gpusetup.gui.pages.done import DonePage
from gpusetup.gui.pages.install import InstallPage
from gpusetup.gui.pages.machine import MachinePage
from gpusetup.gui.pages.plan import PlanPage
from gpusetup.gui.pages.verify import VerifyPage
from gpusetup.gui.pages.welcome import WelcomePage
from gpusetup.gui.services import FEATURES, Services
from gpusetup.gui.workers import Job, make_pool
from gpusetup.model import Message
from gpusetup.resources import resource

log = logging.getLogger("gpusetup.gui")

INSTALLING = ("install", "rollback", "fix")  # jobs that change the computer
FEATURE_RETRY_MS = 250
FEATURE_IDLE_S = 1.0  # after another job ended, before importing the next core part

PAGE_FACTORIES: dict[int, Callable[[SetupWizard], BasePage]] = {
    PAGE_WELCOME: WelcomePage,
    PAGE_MACHINE: MachinePage,
    PAGE_CHOOSE: ChoosePage,
    PAGE_PLAN: PlanPage,
    PAGE_INSTALL: InstallPage,
    PAGE_VERIFY: VerifyPage,
    PAGE_DONE: DonePage,
}

PAGE_NAMES = {
    PAGE_WELCOME: "welcome",
    PAGE_MACHINE: "machine",
    PAGE_CHOOSE: "choose",
    PAGE_PLAN: "plan",
    PAGE_INSTALL: "install",
    PAGE_VERIFY: "verify",
    PAGE_DONE: "done",
}


def app_icon() -> QIcon:
    icon = QIcon()
    svg = resource("icons", "gpusetup.svg")
    if svg.exists():
        icon.addFile(str(svg))
    for size in (256, 64, 32):
        png = resource("icons", f"gpusetup-{size}.png")
        if png.exists():
            icon.addFile(str(png), QSize(size, size))
    return icon


class SetupWizard(QWizard):
    """GPU Setup's window. ``on_language``/``on_scheme`` let the app rebuild it in another language."""

    # Once, just after the window's first paint: work the Welcome page does not need to be drawn (checking
    # which core parts exist, looking for an unfinished installation) waits for it, so the window appears
    # first (issue 12: those imports cost about 0.1 s before the first paint).
    first_painted = Signal()

    def __init__(
        self,
        services: Services,
        settings: QSettings,
        language: str = "en",
        scheme: str = "auto",
        on_language: Callable[[str], None] | None = None,
        parent: QWidget | None = None,
        lazy_pages: bool = False,
    ) -> None:
        super().__init__(parent)
        core_i18n.set_surface("wizard")  # every word on its pages is read here: the catalogue's code@wizard wordings
        self.services = services
        self.settings = settings
        self.language = language
        self.scheme = scheme
        self._on_language = on_language
        self.state = WizardState()
        # the Secure Boot key's one-time password, said by the installer for the screen only: kept here, in memory
        # only, until the window closes; WizardApp hands it to a window rebuilt in another language
        self.secret: Message | None = None
        self.pool = make_pool()
        self._jobs: list[Job] = []
        self._busy = False
        self.setWindowTitle(tr("GPU Setup") + (" — " + tr("demonstration, nothing is changed") if services.demo else ""))
        self.setWindowIcon(app_icon())
        logo = resource("icons", "gpusetup-64.png")
        if logo.exists():
            pix = QPixmap(str(logo))
            self.setPixmap(QWizard.WizardPixmap.LogoPixmap, pix.scaledToHeight(44, Qt.TransformationMode.SmoothTransformation))
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setOption(QWizard.WizardOption.HaveHelpButton, False)
        self.setButtonText(QWizard.WizardButton.NextButton, tr("&Next >"))
        self.setButtonText(QWizard.WizardButton.BackButton, tr("< &Back"))
        self.setButtonText(QWizard.WizardButton.CancelButton, tr("Cancel"))
        self.setButtonText(QWizard.WizardButton.FinishButton, tr("&Finish"))
        self.setButtonText(QWizard.WizardButton.CommitButton, tr("&Next >"))
        self._pages: dict[int, BasePage] = {}
        # The pages after Welcome are built after the first paint when ``lazy_pages`` (the app does that; ~40 ms
        # less before the window appears, benchmarks/gui_first_paint.py): one per turn of the event loop, or all
        # at once as soon as anything asks for them (``pages``, Next).
        self._pending = [pid for pid in PAGE_FACTORIES if pid != PAGE_WELCOME]
        self._add_page(PAGE_WELCOME)
        if not lazy_pages:
            self.build_pages()
        self.currentIdChanged.connect(self._page_changed)
        self.setMinimumSize(QSize(720, 560))
        self.restore_geometry()
        self._features: dict[str, bool] = {}
        self._feature_queue: list[str] = []
        self._last_job_end = 0.0
        self.painted = False
        self.first_painted.connect(self._check_features)
        if self._pending:
            self.first_painted.connect(self._build_next_page)

    # ---------------------------------------------------------------------------------- pages

    def _add_page(self, pid: int) -> None:
        page = PAGE_FACTORIES[pid](self)
        page.setObjectName(PAGE_NAMES[pid])
        self._pages[pid] = page
        self.setPage(pid, page)
        page.completeChanged.connect(self._apply_busy)  # after QWizard's own update of the buttons

    def build_pages(self) -> None:
        """Build every page not built yet (at once; cheap when they all exist)."""
        while self._pending:
            self._add_page(self._pending.pop(0))

    def _build_next_page(self) -> None:
        if self._pending and shiboken6.isValid(self):
            self._add_page(self._pending.pop(0))
            if self._pending:
                QTimer.singleShot(0, self._build_next_page)  # the next one after pending events (input, paint)

    @property
    def pages(self) -> dict[int, BasePage]:
        """Every page by id (builds those not built yet)."""
        self.build_pages()
        return self._pages

    def nextId(self) -> int:  # noqa: N802 - Qt API; QWizard asks this on Next: the next page must exist then
        if self._pending and self.painted:
            self.build_pages()
        return super().nextId()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        super().paintEvent(event)
        if not self.painted:
            self.painted = True
            QTimer.singleShot(0, self._after_first_paint)  # after this frame reaches the screen

    def _after_first_paint(self) -> None:
        if shiboken6.isValid(self):
            self.first_painted.emit()

    # --------------------------------------------------------------------------- features

    def _check_features(self) -> None:
        """Import the core parts in the background while the Welcome page is read (imports take time;
        started after the first paint, so these imports do not hold the interpreter while it is drawn).
        One part at a time, and only while no other job runs: an import beside a running job (detection
        right after a quick Next) made the window stall 0.3-0.6 s on a loaded 2-core machine, against
        0.1-0.2 s once the imports were done (benchmarks/gui_responsiveness.py)."""
        self._feature_queue = [f for f in FEATURES if f not in self._features]
        QTimer.singleShot(FEATURE_RETRY_MS, self._import_next_feature)

    def _import_next_feature(self) -> None:
        if not shiboken6.isValid(self) or not self._feature_queue:
            return
        if any(j.name != "features" for j in self._jobs) or time.monotonic() - self._last_job_end < FEATURE_IDLE_S:
            # another job runs, or its results are being shown: import when the window is idle again
            QTimer.singleShot(FEATURE_RETRY_MS, self._import_next_feature)
            return
        feature = self._feature_queue.pop(0)
        services = self.services
        job = Job(lambda ctx: {feature: services.available(feature)}, name="features")
        features = self._features  # a plain dict: safe to fill even after the window is gone
        job.signals.finished.connect(features.update)
        job.signals.done.connect(lambda j=job: self._feature_done(j) if shiboken6.isValid(self) else None)
        self.track(job)
        job.start(self.pool, defer=False)

    def _feature_done(self, job: Job) -> None:
        self.untrack(job)
        QTimer.singleShot(0, self._import_next_feature)

    def feature_available(self, feature: str) -> bool:
        """Whether a core part exists in this version (cached; asked directly if not checked yet)."""
        if feature not in self._features:
            self._features[feature] = self.services.available(feature)
        return self._features[feature]

    # ------------------------------------------------------------------------------- jobs

    def track(self, job: Job) -> None:
        self._jobs.append(job)

    def untrack(self, job: Job) -> None:
        if job in self._jobs:
            self._jobs.remove(job)
        if job.name != "features":
            self._last_job_end = time.monotonic()

    def remember_secret(self, message: Message) -> None:
        """Keep what the installer said for the screen only and show it on the pages that have its box (the
        install page, and the Welcome page a language switch lands on)."""
        self.secret = message
        for pid in (PAGE_WELCOME, PAGE_INSTALL):
            page = self._pages.get(pid)
            card = getattr(page, "secret_card", None)
            if card is not None:
                card.show_message(message)

    def running_jobs(self) -> list[Job]:
        return list(self._jobs)

    def set_busy(self, busy: bool) -> None:
        """While an install or test runs, Back stays off (QWizard re-enables it on page changes)."""
        self._busy = busy
        self._apply_busy()

    def _apply_busy(self, *_: object) -> None:
        back = self.button(QWizard.WizardButton.BackButton)
        if back is not None and self._busy:
            back.setEnabled(False)

    def _page_changed(self, page_id: int) -> None:
        log.info("page: %s", PAGE_NAMES.get(page_id, page_id))
        self._apply_busy()

    def go_to(self, page_id: int) -> None:
        """Back to an earlier page ("Change my choice"); what was chosen there is still filled in."""
        while self.currentId() != page_id and self.currentId() > page_id and not self._busy:
            before = self.currentId()
            self.back()
            if self.currentId() == before:  # QWizard refused (no history): jump
                self.setCurrentId(page_id)
                break

    def stop_jobs(self, wait_ms: int = 5000) -> bool:
        for job in self._jobs:
            job.cancel()
        done = self.pool.waitForDone(wait_ms)
        if done:
            self._jobs.clear()
        return done

    # ------------------------------------------------------------------------- language/theme

    def change_language(self, lang: str) -> None:
        if lang == self.language:
            return
        self.settings.setValue("ui/language", lang)
        if self._on_language is not None:
            self._on_language(lang)

    def change_scheme(self, scheme: str) -> None:
        self.scheme = scheme
        self.settings.setValue("ui/scheme", scheme)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply(app, scheme)

    # ---------------------------------------------------------------------------- geometry

    def restore_geometry(self) -> None:
        geo = self.settings.value("ui/geometry")
        if isinstance(geo, (QByteArray, bytes)) and self.restoreGeometry(QByteArray(geo)):
            return
        self.resize(QSize(960, 760))

    def save_geometry(self) -> None:
        self.settings.setValue("ui/geometry", self.saveGeometry())
        self.settings.sync()

    # ------------------------------------------------------------------------------ closing

    @classmethod
    def confirm_quit(cls, parent: QWidget, installing: bool) -> bool:
        """Ask before quitting while work that changes the computer runs (an undo, a fix); a classmethod so
        tests can answer for the user. An install asks on its own page how to stop (InstallPage.ask_how_to_stop)."""
        text = tr("Changes to this computer are being made. If you quit now, the running step is stopped at once; the next time you open GPU Setup you can continue or undo. Quit?")
        return QMessageBox.question(parent, tr("Quit GPU Setup?"), text) == QMessageBox.StandardButton.Yes

    def close_now(self) -> None:
        """Close without asking again: the user already chose how the install stops."""
        self._closing = True
        self.close()

    _closing = False

    def _may_close(self) -> bool:
        """Only an install, undo or fix in progress is worth a question; anything else just stops. While an
        install runs, its page asks how to stop (at once, or after the running step) and closes the window
        itself once that is done."""
        if self._closing:
            self.stop_jobs()
            return True
        page = self.currentPage()
        ask = getattr(page, "ask_how_to_stop", None)
        if ask is not None and any(j.name == "install" for j in self._jobs) and ask(closing=True) is not None:
            return False
        if any(j.name in INSTALLING for j in self._jobs) and not self.confirm_quit(self, True):
            return False
        self.stop_jobs()
        return True

    def reject(self) -> None:
        if not self._may_close():
            return
        self.save_geometry()
        super().reject()

    def accept(self) -> None:
        self.save_geometry()
        super().accept()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        if not self._may_close():
            event.ignore()
            return
        self.save_geometry()
        super().closeEvent(event)

    def page_name(self) -> str:
        return PAGE_NAMES.get(self.currentId(), "?")
