"""Page 1: what will happen, that nothing changes without consent, where the logs go, the language."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QPushButton

from gpusetup.gui import i18n
from gpusetup.gui.i18n import tr
from gpusetup.gui.pages.base import PAGE_INSTALL, PAGE_MACHINE, BasePage
from gpusetup.gui.widgets import Card, SecretCard, StatusLine, label, open_folder

if TYPE_CHECKING:
    from gpusetup.gui.services import Target
    from gpusetup.gui.wizard import SetupWizard
    from gpusetup.model import Plan


class WelcomePage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Welcome to GPU Setup"))
        self.setSubTitle(tr("From “I have a computer with a graphics card” to “my deep-learning framework runs on it, and here is the proof”."))

        # the Secure Boot password an install in this window was told (a language switch lands here): still shown
        self.secret_card = SecretCard()
        self.content.addWidget(self.secret_card)
        if wizard.secret is not None:
            self.secret_card.show_message(wizard.secret)

        steps = Card(tr("What will happen"))
        for i, text in enumerate(
            [
                tr("We look at your computer: graphics cards, driver, CUDA and Python."),
                tr("You choose what you want to run: PyTorch, TensorFlow or JAX, and where."),
                tr("We show you the plan: what will be installed, why, and the exact commands."),
                tr("Only when you press Install do we change anything. You can cancel; finished steps are undone."),
                tr("We test the graphics card and show you the measured speed as proof."),
            ],
            start=1,
        ):
            row = QHBoxLayout()
            num = label(f"{i}.", bold=True, wrap=False)
            num.setFixedWidth(22)
            row.addWidget(num, 0, Qt.AlignmentFlag.AlignTop)
            row.addWidget(label(text), 1)
            steps.body.addLayout(row)
        self.content.addWidget(steps)

        safety = Card(tr("Nothing changes without your consent"))
        safety.body.addWidget(
            label(tr("Looking at your computer only reads information. Every change is listed on the plan page first, and a record of everything we run is kept in the log folder:"))
        )
        logrow = QHBoxLayout()
        self.log_path = label(str(self.services.log_dir))
        self.log_path.setFont(self.log_path.font())
        logrow.addWidget(self.log_path, 1)
        open_logs = QPushButton(tr("Open log folder"))
        open_logs.setAccessibleName(tr("Open log folder"))
        open_logs.clicked.connect(self._open_logs)
        logrow.addWidget(open_logs)
        safety.body.addLayout(logrow)
        self.content.addWidget(safety)

        prefs = Card(tr("Language and appearance"))
        form = QFormLayout()
        self.language = QComboBox()
        for code, name in i18n.LANGUAGES.items():
            self.language.addItem(name, code)
        self.language.setCurrentIndex(max(0, self.language.findData(wizard.language)))
        self.language.setAccessibleName(tr("Language"))
        lang_label = QLabel(tr("&Language:"))
        lang_label.setBuddy(self.language)
        form.addRow(lang_label, self.language)
        self.appearance = QComboBox()
        for code, name in (("auto", tr("Follow the system")), ("light", tr("Light")), ("dark", tr("Dark"))):
            self.appearance.addItem(name, code)
        self.appearance.setCurrentIndex(max(0, self.appearance.findData(wizard.scheme)))
        self.appearance.setAccessibleName(tr("Appearance"))
        look_label = QLabel(tr("&Appearance:"))
        look_label.setBuddy(self.appearance)
        form.addRow(look_label, self.appearance)
        prefs.body.addLayout(form)
        self.content.addWidget(prefs)
        self.language.currentIndexChanged.connect(self._language_changed)
        self.appearance.currentIndexChanged.connect(self._appearance_changed)

        # an installation interrupted by a reboot can be continued
        self.resume_card = Card(tr("Continue the interrupted installation"))
        self.resume_status = StatusLine()
        self.resume_card.body.addWidget(self.resume_status)
        row = QHBoxLayout()
        row.addStretch(1)
        self.resume_button = QPushButton(tr("Continue installation"))
        self.resume_button.setAccessibleName(tr("Continue the interrupted installation"))
        self.resume_button.clicked.connect(self._resume)
        self.discard_button = QPushButton(tr("Undo it and start over"))
        self.discard_button.setAccessibleName(tr("Undo the interrupted installation and start over"))
        self.discard_button.clicked.connect(self._discard)
        row.addWidget(self.discard_button)
        row.addWidget(self.resume_button)
        self.resume_card.body.addLayout(row)
        self.content.addWidget(self.resume_card)
        self.resume_card.setVisible(False)
        self.content.addStretch(1)
        self._pending: tuple[Plan, Target, list[str]] | None = None
        self._pending_checked = False

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        # Looking for an unfinished installation imports the installer (55 ms, python -X importtime): on the
        # first start it waits for the window's first paint (issue 12).
        self._pending_checked = False
        if self.wiz.painted:
            self._check_pending()
        else:
            self.wiz.first_painted.connect(self._check_pending, Qt.ConnectionType.SingleShotConnection)

    def _check_pending(self) -> None:
        if self._pending_checked:
            return
        self._pending_checked = True
        self._pending = self.services.load_pending()
        if self._pending is not None:
            plan, target, _ = self._pending
            self.resume_status.set(
                "info",
                tr("An installation into {target} stopped before it finished (for example for a restart). {n} steps are in its plan; steps already done are skipped.").format(
                    target=target.value, n=len(plan.steps)
                ),
            )
        self.resume_card.setVisible(self._pending is not None)

    def nextId(self) -> int:  # noqa: N802 - Qt API
        return PAGE_INSTALL if self.state.resuming else PAGE_MACHINE

    def _open_logs(self) -> None:
        self.log_dialog = open_folder(self, self.services.log_dir)

    def _language_changed(self) -> None:
        self.wiz.change_language(self.language.currentData())

    def _appearance_changed(self) -> None:
        self.wiz.change_scheme(self.appearance.currentData())

    def auto_resume(self) -> bool:
        """``gpusetup gui --resume`` (the entry at login after a restart): continue at once when there is
        an unfinished installation; False (the Welcome page stays) when there is none."""
        self._check_pending()
        if self._pending is None:
            return False
        self._resume()
        return True

    def _resume(self) -> None:
        if self._pending is None:
            return
        plan, target, frameworks = self._pending
        self.state.plan = plan
        self.state.target = target
        self.state.frameworks = frameworks
        self.state.resuming = True
        self.wiz.next()

    def _discard(self) -> None:
        """Roll the unfinished install back (the installer refuses a new one while it is unfinished)."""
        self.resume_button.setEnabled(False)
        self.discard_button.setEnabled(False)
        self.resume_status.set("busy", tr("Undoing the steps that were done…"))
        services = self.services
        self.run_job(lambda ctx: services.rollback(progress=ctx.progress, log_line=ctx.log), name="rollback",
                     on_result=self._discarded, on_error=lambda msg, exc: self._discard_failed(msg))

    def _discarded(self, out: object) -> None:
        if getattr(out, "ok", False) or not self.services.unfinished_install():
            self.services.clear_pending()
            self._pending = None
            self.resume_card.setVisible(False)
        else:
            self._discard_failed(str(getattr(out, "message", "")))

    def _discard_failed(self, message: str) -> None:
        self.resume_button.setEnabled(True)
        self.discard_button.setEnabled(True)
        self.resume_status.set("fail", tr("Undoing did not fully work: {error}. The log lists what is left; a support bundle (last page) helps us help you.").format(error=message))
