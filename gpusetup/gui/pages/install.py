"""Page 5 (a commit page): runs the plan through the installer engine with per-step progress, each step's
estimate before it starts and the time left while it runs, and a live log. Cancel (and closing the window)
asks how to stop — at once (and undo what ran; or quit, to continue next time), or after the running step —
and does exactly that; the question closes itself if the install ends while it is open. A failed step offers
undo or retry; a failed check (files against their RECORD, the import) offers Repair; a reboot is survived
through the resume file. For Docker it writes the files and shows the next commands."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from gpusetup.cancel import CancelToken
from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import PAGE_CHOOSE, BasePage
from gpusetup.gui.pages.choose import FRAMEWORK_NAMES
from gpusetup.gui.services import DockerOutcome, InstallOutcome, Unavailable
from gpusetup.gui.widgets import (
    Busy,
    Card,
    Collapsible,
    CommandBox,
    SecretCard,
    StatusLine,
    clear_layout,
    details_section,
    label,
    mono_font,
    step_heading,
)
from gpusetup.gui.workers import JobContext
from gpusetup.messages import finding_words, outcome_text, render
from gpusetup.model import Message, Severity, Step

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard

ilog = logging.getLogger("gpusetup.gui.install")

PENDING, RUNNING, DONE, FAILED, UNDONE = "pending", "running", "done", "failed", "undone"


def _telling(ctx: JobContext) -> Any:
    """The installer's progress callback for ``ctx``: a message for the screen only (the Secure Boot password)
    is handed to the page as data (``JobContext.tell``); everything else is progress."""
    from gpusetup.install.execute import MOK_PASSWORD  # lazy: the install page is not on the first paint

    def progress(label: str | Message, fraction: float | None = None) -> None:
        if isinstance(label, Message) and label.code == MOK_PASSWORD:
            ctx.tell(label)
            return
        ctx.progress(label, fraction)

    return progress


def sentences(*parts: str) -> str:
    """Sentences one after another as the interface's language writes them (no space between Chinese ones)."""
    gap = "" if current_language().startswith("zh") else " "
    return gap.join(p.strip() for p in parts if p and p.strip())


class StepRow(QWidget):
    """One plan step with its state as icon + word, its estimate while it waits ("about 2 min", measured here
    before) and, while it runs, what it is doing and the time left."""

    def __init__(self, index: int, step: Step, parent: QWidget | None = None, estimate: str = "") -> None:
        super().__init__(parent)
        self.step = step
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        self.icon = QLabel()
        self.icon.setFixedSize(QSize(20, 20))
        lay.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        # translated interface: the step's gist in that language and what it acts on; the core's English
        # title is the tooltip
        self.display_title, translated = step_heading(step, current_language())
        self.title_label = label(f"{index}. {self.display_title}")
        if translated:
            self.title_label.setToolTip(step.title)
        lay.addWidget(self.title_label, 1)
        self.estimate = estimate
        self.detail = label("", wrap=False)
        self.detail.setVisible(False)
        lay.addWidget(self.detail, 0, Qt.AlignmentFlag.AlignTop)
        self.word = label("", wrap=False)
        lay.addWidget(self.word, 0, Qt.AlignmentFlag.AlignTop)
        self.state = ""
        self.set_state(PENDING)

    def set_state(self, state: str) -> None:
        if state == self.state:
            return
        self.state = state
        pix = {
            PENDING: QStyle.StandardPixmap.SP_MediaPause,
            RUNNING: QStyle.StandardPixmap.SP_MediaPlay,
            DONE: QStyle.StandardPixmap.SP_DialogApplyButton,
            FAILED: QStyle.StandardPixmap.SP_MessageBoxCritical,
            UNDONE: QStyle.StandardPixmap.SP_ArrowBack,
        }[state]
        words = {PENDING: tr("waiting"), RUNNING: tr("running…"), DONE: tr("done"), FAILED: tr("failed"), UNDONE: tr("undone")}
        self.icon.setPixmap(self.style().standardIcon(pix).pixmap(QSize(18, 18)))
        self.word.setText(words[state])
        self.setAccessibleName(f"{self.display_title}: {words[state]}")
        self._show_detail(self.estimate if state == PENDING else "")

    def set_detail(self, text: str) -> None:
        """While the step runs: the installer's line for it after its title ("about 2 min left", the download)."""
        if self.state == RUNNING:
            rest = text.split(" — ", 1)[1] if " — " in text else ""
            self._show_detail(rest)
        elif not text and self.state != PENDING:
            self._show_detail("")

    def _show_detail(self, text: str) -> None:
        self.detail.setText(text if len(text) <= 90 else text[:87] + "…")
        self.detail.setVisible(bool(text))


class InstallPage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Installing"))
        self.setSubTitle(tr("You can keep using your computer meanwhile. Cancel asks whether to stop at once and undo, or to finish the current step first."))
        self.status = StatusLine()
        self.content.addWidget(self.status)
        # the Secure Boot key's one-time password (the driver installer's, said for the screen only): shown here
        # as soon as it is said and until the window closes; nothing on this page hides it again (the wizard
        # keeps it in memory, so a window rebuilt in another language shows it too)
        self.secret_card = SecretCard()
        self.secret_value = self.secret_card.value
        self.secret_text = self.secret_card.text
        self.content.addWidget(self.secret_card)
        if wizard.secret is not None:
            self.secret_card.show_message(wizard.secret)
        self.notes_box = QVBoxLayout()  # what the installer said beside its outcome (a skipped pip update…)
        self.content.addLayout(self.notes_box)
        self.progress = Busy()
        self.content.addWidget(self.progress)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton(tr("&Cancel installation"))
        self.cancel_button.setAccessibleName(tr("Cancel the installation: asks whether to stop at once and undo, or after the current step"))
        self.cancel_button.clicked.connect(self.request_cancel)
        self.undo_button = QPushButton(tr("&Undo what was done"))
        self.undo_button.clicked.connect(self.start_rollback)
        self.repair_button = QPushButton(tr("&Repair"))
        self.repair_button.setAccessibleName(tr("Repair: reinstall what the check found broken, then check again"))
        self.repair_button.clicked.connect(self.start_repair)
        self.retry_button = QPushButton(tr("&Try again"))
        self.retry_button.clicked.connect(self.retry)
        self.change_button = QPushButton(tr("C&hange my choice"))
        self.change_button.setAccessibleName(tr("Go back and change the frameworks or the folder"))
        self.change_button.clicked.connect(self.change_choice)
        for b in (self.change_button, self.undo_button, self.retry_button, self.repair_button, self.cancel_button):
            buttons.addWidget(b)
        self.content.addLayout(buttons)
        self.autostart_box = QCheckBox(tr("&Continue by itself after the restart (GPU Setup opens when you log in)"))
        self.autostart_box.setChecked(True)
        self.autostart_box.setVisible(False)
        self.autostart_box.toggled.connect(self._autostart_changed)
        self.content.addWidget(self.autostart_box)
        # after a failure the core can name a fix for: the fields and the button to apply it, here
        self.fix_card = Card(tr("What you can change"))
        self.fix_text = label("")
        self.fix_card.body.addWidget(self.fix_text)
        self.mirror_edit = QLineEdit()
        self.mirror_edit.setPlaceholderText("https://mirror.example.org/pypi/simple")
        self.mirror_edit.setAccessibleName(tr("Package mirror (index URL)"))
        self.proxy_edit = QLineEdit()
        self.proxy_edit.setPlaceholderText("http://proxy.example.org:3128")
        self.proxy_edit.setAccessibleName(tr("Proxy"))
        self.fix_form = QFormLayout()
        self.mirror_label = QLabel(tr("Package &mirror:"))
        self.mirror_label.setBuddy(self.mirror_edit)
        self.fix_form.addRow(self.mirror_label, self.mirror_edit)
        proxy_label = QLabel(tr("&Proxy:"))
        proxy_label.setBuddy(self.proxy_edit)
        self.fix_form.addRow(proxy_label, self.proxy_edit)
        self.fix_card.body.addLayout(self.fix_form)
        fix_row = QHBoxLayout()
        fix_row.addStretch(1)
        self.fix_button = QPushButton(tr("Use these and &try again"))
        self.fix_button.clicked.connect(self.apply_fix)
        self.folder_button = QPushButton(tr("Choose another &folder"))
        self.folder_button.clicked.connect(self.change_choice)
        fix_row.addWidget(self.folder_button)
        fix_row.addWidget(self.fix_button)
        self.fix_card.body.addLayout(fix_row)
        self.fix_card.setVisible(False)
        self.content.addWidget(self.fix_card)
        self.steps_card = Card(tr("Steps"))
        self.steps_layout = QVBoxLayout()
        self.steps_card.body.addLayout(self.steps_layout)
        self.content.addWidget(self.steps_card)
        self.next_card = Card(tr("Next steps"))
        self.next_layout = QVBoxLayout()
        self.next_card.body.addLayout(self.next_layout)
        self.content.addWidget(self.next_card)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setFont(mono_font())
        self.log.setMaximumBlockCount(5000)
        self.log.setMinimumHeight(160)
        self.log.setAccessibleName(tr("Installation log"))
        self.log_section = Collapsible(tr("Show the log"), self.log)
        self.content.addWidget(self.log_section)
        self.content.addStretch(1)
        self.rows: list[StepRow] = []
        self.phase = "idle"  # idle / running / rolling-back / finished
        self._job: Any = None
        self._installed_plan: Any = None  # the plan that finished here (Back and Next again do not rerun it)
        self._stop_after: CancelToken | None = None  # set: the running step finishes, no other starts
        self._stop_choice = ""  # what the user chose when asked how to stop: "undo" / "after-step" / ""
        self._close_when_done = False  # the window was closed with "finish this step, then quit"
        self.question: QMessageBox | None = None  # the open "how to stop" question, closed when the install ends

    # ---------------------------------------------------------------------------- lifecycle

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        done = self.state.install
        if done is not None and done.ok and self._installed_plan is not None and self._installed_plan is self.state.plan:
            self._buttons()  # this very plan is installed: show it again rather than run it twice
            return
        self.state.install = None
        self.state.docker = None
        if self.state.target is not None and self.state.target.kind == "docker":
            self.steps_card.setVisible(False)
            self.start_docker()
        else:
            self.start_install()

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        """Next (to the proof) only after a finished install; after a failure or a cancel the way on is
        Try again, Change my choice or Back."""
        out = self.state.install
        docker = self.state.target is not None and self.state.target.kind == "docker"  # written or refused: an answer
        return self.phase == "finished" and out is not None and (out.ok or docker)

    def _docker(self) -> bool:
        return self.state.target is not None and self.state.target.kind == "docker"

    def _ran_any(self) -> bool:
        """Did any step of this install run (so there is something to undo)? A Docker setup and an install
        that stopped at its checks before the first step changed nothing here."""
        if self._docker():
            return False
        return any(r.state in (DONE, FAILED, RUNNING) for r in self.rows)

    def _buttons(self) -> None:
        running = self.phase in ("running", "rolling-back", "cancelling")
        out = self.state.install
        self.cancel_button.setVisible(self.phase in ("running", "cancelling"))
        self.cancel_button.setEnabled(self.phase == "running")
        finished = self.phase == "finished"
        failed = finished and out is not None and not out.ok and not out.cancelled
        stopped = finished and out is not None and not out.ok and out.cancelled and not self._undone
        self.undo_button.setVisible((failed or stopped) and not self._undone and self._ran_any())
        self.repair_button.setVisible(failed and out is not None and out.fix == "repair")
        self.retry_button.setVisible(finished and out is not None and not out.ok and out.fix != "repair"
                                     and not self._docker())
        self.retry_button.setText(tr("&Continue installation") if stopped else tr("&Try again"))
        self.change_button.setVisible(finished)
        self._show_fix(out if failed else None)
        self.progress.setVisible(running)
        self.wiz.set_busy(running)
        # one way to cancel while installing: this page's button (the wizard's own Cancel would only ask to quit)
        self.wiz.setOption(QWizard.WizardOption.NoCancelButton, running)
        self._header()
        self.completeChanged.emit()

    def _header(self) -> None:
        """The page's title says where the install stands, never "Installing" after it ended."""
        out = self.state.install
        if self.phase in ("running", "cancelling"):
            title = tr("Installing")
        elif self.phase == "rolling-back":
            title = tr("Undoing the installation")
        elif self.phase != "finished" or out is None:
            title = tr("Installing")
        elif self._docker():
            title = tr("Docker setup") if out.ok else tr("Docker setup not written")
        elif out.ok and out.needs_reboot:
            title = tr("Restart needed")
        elif out.ok:
            title = tr("Installed")
        elif self._undone:
            title = tr("Installation undone")
        elif out.cancelled:
            title = tr("Installation stopped")
        else:
            title = tr("The installation did not finish")
        self.setTitle(title)
        if self.phase == "finished":
            self.setSubTitle(tr("Every step was run and checked: the installed files match their records, and each framework imports.")
                             if out is not None and out.ok and not out.needs_reboot and not self._docker() else "")
        else:
            self.setSubTitle(tr("You can keep using your computer meanwhile. Cancel asks whether to stop at once and undo, or to finish the current step first."))

    # ------------------------------------------------------------------------------ install

    _undone = False  # the last attempt was undone (Try again starts the plan afresh)

    def retry(self) -> None:
        """After a failure or a stop between steps: continue where it stopped; after an undo: start again."""
        out = self.state.install
        checks_failed = out is not None and out.failed_step == "preflight"  # nothing was changed: start again
        continue_it = out is not None and (out.stopped or not out.cancelled) and not self._undone and not checks_failed
        self.start_install(resume=bool(continue_it and self._ran_any()))

    def change_choice(self) -> None:
        self.wiz.go_to(PAGE_CHOOSE)

    def _show_fix(self, out: InstallOutcome | None) -> None:
        fix = out.fix if out is not None else None
        self.fix_card.setVisible(fix in ("disk-space", "network", "python-mirror"))
        if fix == "disk-space":
            self.fix_text.setText(tr("Free some space on that disk, or choose a folder on another disk."))
        elif fix == "network":
            self.fix_text.setText(tr("The package index could not be reached. Where the internet is filtered, enter a mirror of PyPI or your proxy, then try again."))
            self.mirror_label.setText(tr("Package &mirror:"))
        elif fix == "python-mirror":
            self.fix_text.setText(tr("Python could not be downloaded. Enter a mirror of the Python builds (python-build-standalone) or your proxy, then try again."))
            self.mirror_label.setText(tr("Python &mirror:"))
        for w in (self.mirror_edit, self.proxy_edit, self.fix_button, self.mirror_label):
            w.setVisible(fix in ("network", "python-mirror"))
        self.folder_button.setVisible(fix == "disk-space")
        self._fix = fix

    _fix: str | None = None

    def apply_fix(self) -> None:
        """Give the planner the mirror/proxy, make the plan again, and run it from the start."""
        mirror, proxy = self.mirror_edit.text().strip(), self.proxy_edit.text().strip()
        if self._fix == "python-mirror":
            self.services.use_network(python_mirror=mirror or None, proxy=proxy or None)
        else:
            self.services.use_network(index_url=mirror or None, proxy=proxy or None)
        machine, target, fplans = self.state.machine, self.state.target, self.state.chosen_plans()
        if machine is None or target is None:
            return
        services = self.services
        self.fix_card.setVisible(False)
        self.status.set("busy", tr("Making the plan again…"))
        self.run_job(lambda ctx: services.build_plan(fplans, machine, target), name="plan",
                     on_result=self._replanned,
                     on_error=lambda msg, exc: self.status.set("fail", msg))

    def _replanned(self, plan: Any) -> None:
        self.state.plan = plan
        self.start_install(resume=False)

    def _show_rows(self, plan: Any) -> None:
        clear_layout(self.steps_layout)
        estimates = self.services.install_estimates(plan)
        lang = current_language()
        self.rows = [StepRow(i, s, estimate=render(estimates[s.id], lang) if s.id in estimates else "")
                     for i, s in enumerate(plan.steps, start=1)]
        for r in self.rows:
            self.steps_layout.addWidget(r)

    def start_install(self, resume: bool = False, repair: bool = False) -> None:
        """Run the plan; ``resume`` continues the unfinished one instead (after a reboot, a failure or a stop
        between steps); ``repair`` reinstalls what the checks found broken, then checks again."""
        resume = resume or self.state.resuming
        self.state.resuming = False
        self._undone = False
        self._stop_choice = ""
        plan, target = self.state.plan, self.state.target
        if plan is None or target is None:
            self.status.set("fail", tr("There is no plan to install. Go back and choose again."))
            self.phase = "finished"
            self._buttons()
            return
        previous = {r.step.id: r.state for r in self.rows}
        self._show_rows(plan)
        if resume or repair:  # what finished before stays done; the rest runs now
            for r in self.rows:
                if previous.get(r.step.id) == DONE:
                    r.set_state(DONE)
        clear_layout(self.notes_box)
        self.state.install = None
        self.autostart_box.setVisible(False)
        self.next_card.setVisible(False)
        self.steps_card.setVisible(True)
        try:
            self.services.save_pending(plan, target, self.state.frameworks)
        except OSError as exc:
            self._append_log(tr("Could not save the resume file: {error}").format(error=exc))
        self.phase = "running"
        self.status.set("busy", (tr("Repairing…") if repair else tr("Installing… ({n} steps)").format(n=len(plan.steps))))
        self.progress.update_progress(tr("Starting…"), 0.0)
        services = self.services
        stop_after = self._stop_after = CancelToken()

        def body(ctx: JobContext) -> InstallOutcome:
            progress = _telling(ctx)
            if repair:
                return services.repair(progress=progress, cancel=ctx.cancel, log_line=ctx.log)
            if resume:
                return services.resume(progress=progress, cancel=ctx.cancel, log_line=ctx.log, stop_after=stop_after)
            if services.unfinished_install():  # an earlier attempt stopped half-way: undo it, then this plan
                ctx.log("An earlier installation did not finish; undoing it before this one starts.")
                back = services.rollback(progress=progress, log_line=ctx.log)
                if not back.ok:
                    return back
            return services.execute(plan, progress=progress, cancel=ctx.cancel, log_line=ctx.log,
                                    stop_after=stop_after)

        self._job = self.run_job(
            body,
            name="install",
            on_result=self._installed,
            on_error=self._install_error,
            on_progress=self._on_progress,
            on_log=self._append_log,
            on_cancelled=lambda: self._installed(InstallOutcome(ok=False, cancelled=True, message=tr("cancelled"))),
            on_told=self._told,
        )
        self._buttons()

    def _told(self, message: Message) -> None:
        """What the installer said for the screen only: the Secure Boot key's one-time password, in a box that
        stays until the window closes (it is in no log or file: the user must write it down now)."""
        self.wiz.remember_secret(message)

    def start_repair(self) -> None:
        """The Repair button: reinstall what the check found broken, then check again (``install --repair``)."""
        self.start_install(repair=True)

    def _on_progress(self, text: str, fraction: float) -> None:
        # the installer says its progress as data; the job worded it in this interface's language
        # (gui/workers.JobContext.progress), with each step's title as its row shows it
        self.progress.update_progress(text, fraction)
        hit = None
        for i, row in enumerate(self.rows):
            if text and (text == row.step.id or row.display_title in text or row.step.title in text
                         or row.step.id in text.split()):
                hit = i
        if hit is None and fraction >= 0 and self.rows:
            hit = min(len(self.rows) - 1, int(fraction * len(self.rows)))
        if hit is not None:
            for i, row in enumerate(self.rows):
                if i < hit:
                    row.set_state(DONE)
                elif i == hit:
                    row.set_state(RUNNING)
            self.rows[hit].set_detail(text)

    def _append_log(self, lines: str) -> None:
        self.log.appendPlainText(lines)
        ilog.info("%s", lines)

    def _install_error(self, message: str, exc: BaseException) -> None:
        text = self.unavailable_text(exc) if isinstance(exc, Unavailable) else message
        self._installed(InstallOutcome(ok=False, message=text))

    def _show_notes(self, outcome: InstallOutcome) -> None:
        clear_layout(self.notes_box)
        lang = current_language()
        for note in outcome.notes:
            line = StatusLine()
            line.set("info", render(note, lang))
            self.notes_box.addWidget(line)

    def _installed(self, outcome: InstallOutcome) -> None:
        self._job = None
        self._stop_after = None
        answered_late = self._close_question()
        self.state.install = outcome
        ilog.info("install outcome: ok=%s cancelled=%s stopped=%s failed_step=%s reboot=%s %s", outcome.ok,
                  outcome.cancelled, outcome.stopped, outcome.failed_step, outcome.needs_reboot, outcome.message)
        self._show_notes(outcome)
        for r in self.rows:
            r.set_detail("")
        if outcome.cancelled and self._stop_choice == "undo":
            self._mark_stopped(outcome)
            if self._ran_any():
                self.status.set("busy", tr("Stopped. Undoing the steps that ran…"))
                self.start_rollback(after_cancel=True)
                return
            self.phase = "finished"
            self._undone = True
            self.services.clear_pending()
            self.status.set("info", tr("Installation cancelled before any step ran: nothing was changed."))
            self._buttons()
            self._maybe_close()
            return
        self.phase = "finished"
        if outcome.ok:
            upto = len(self.rows) - 1
            if outcome.needs_reboot:  # steps after the restart have not run yet
                # the restart has not happened: its row (and everything after it) stays pending
                running = [i for i, r in enumerate(self.rows) if r.state == RUNNING]
                reboots = [i for i, r in enumerate(self.rows) if r.step.kind == "reboot" and r.state != DONE]
                upto = reboots[0] - 1 if reboots else (running[-1] if running else upto)
            for i, r in enumerate(self.rows):
                r.set_state(DONE if i <= upto else PENDING)
            if outcome.needs_reboot:
                self.autostart_box.setVisible(True)
                self._autostart_changed()
            else:
                self.services.clear_pending()
                self._installed_plan = self.state.plan
                first = tr("The installation finished before you answered, so nothing was stopped.") if answered_late else ""
                self.status.set("pass", sentences(first, tr("Installation finished and checked. Press Next to prove it works.")))
        elif outcome.cancelled:
            self._mark_stopped(outcome)
            if outcome.failed_step is None and not self._ran_any():
                self.status.set("info", tr("Installation cancelled before any step ran: nothing was changed."))
            elif outcome.stopped:
                self.status.set("info", tr("Stopped as you asked: the steps marked done are done, nothing after them ran. You can continue the installation or undo what was done."))
            else:
                self.status.set("info", tr("Installation stopped. You can continue it (the interrupted step is redone from the start) or undo what was done."))
        else:
            failed_i = self._mark_failed(outcome.failed_step)
            where = ""
            if failed_i is not None:
                where = tr("Step {n} “{title}” failed.").format(n=failed_i + 1, title=self.rows[failed_i].display_title)
            if outcome.fix == "repair":
                after = tr("The installation is not working as it is. Repair reinstalls what is broken and checks again; or undo what was done.")
            elif self._ran_any():
                after = tr("You can undo what was done, try again, or read the log below.")
            else:
                after = tr("Nothing was changed. You can try again, or read the log below.")
            self.status.set("fail", sentences(where, outcome_text(outcome, current_language()) or tr("The installation did not finish."), after))
            self.log_section.set_expanded(True)
        self._buttons()
        self._maybe_close()

    def _mark_stopped(self, outcome: InstallOutcome) -> None:
        """After a stop: the steps that finished are done, the one that was stopped half-way is marked failed
        (it is redone from the start when the install continues), the rest did not run."""
        stopped_at = None
        for i, r in enumerate(self.rows):
            if r.state == RUNNING:
                stopped_at = i
        for i, r in enumerate(self.rows):
            if outcome.stopped and r.state == RUNNING:
                r.set_state(DONE)  # it finished: the stop came after it
            elif i == stopped_at and outcome.failed_step is not None:
                r.set_state(FAILED)
        if outcome.stopped and outcome.failed_step is not None:
            for r in self.rows:
                if r.step.id == outcome.failed_step:
                    r.set_state(PENDING)

    def _autostart_changed(self, *_: object) -> None:
        """After a step that needs a restart: an entry that opens GPU Setup at the next login to continue."""
        where = self.services.resume_at_login(self.autostart_box.isChecked())
        if where is not None:
            self.status.set("warn", tr("Almost done: restart your computer now. After you log in again, GPU Setup opens by itself and continues; finished steps are not repeated."))
        else:
            self.status.set("warn", tr("Almost done: restart your computer now. Then open GPU Setup again and press “Continue installation”; finished steps are not repeated."))

    def _mark_running(self, state: str) -> None:
        for r in self.rows:
            if r.state == RUNNING:
                r.set_state(state)

    def _mark_failed(self, failed_step: str | None) -> int | None:
        idx = None
        for i, r in enumerate(self.rows):
            if failed_step and failed_step in (r.step.id, r.step.title):
                idx = i
        if idx is None:
            for i, r in enumerate(self.rows):
                if r.state == RUNNING:
                    idx = i
        if idx is not None:
            for i, r in enumerate(self.rows):
                if i < idx:
                    r.set_state(DONE)
                elif i > idx and r.state == RUNNING:
                    r.set_state(PENDING)
            self.rows[idx].set_state(FAILED)
        return idx

    # ------------------------------------------------------------------------------- cancel

    STOP_NOW, AFTER_STEP, KEEP = "stop-now", "after-step", "keep"

    def ask_how_to_stop(self, closing: bool = False) -> QMessageBox | None:
        """Ask how to stop: at once (Cancel: and undo what the install did; closing: and quit, to continue or
        undo next time), or after the running step, or not at all. The question is not modal to the
        installer: if the install ends while it is open, it closes itself and the page says so."""
        if self._job is None or self.phase != "running":
            return None
        if self.question is not None:
            self.question.raise_()
            return self.question
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        if closing:
            box.setWindowTitle(tr("Quit GPU Setup?"))
            box.setText(tr("An installation is running. How should it stop?"))
            box.setInformativeText(tr("Stop now: the running step is stopped at once and GPU Setup quits; the next time you open it you can continue (that step is redone from the start) or undo.\nFinish this step: the running step ends normally, nothing after it starts, then GPU Setup quits."))
            now = box.addButton(tr("Stop now and quit"), QMessageBox.ButtonRole.DestructiveRole)
            after = box.addButton(tr("Finish this step, then quit"), QMessageBox.ButtonRole.AcceptRole)
        else:
            box.setWindowTitle(tr("Stop the installation?"))
            box.setText(tr("How should the installation stop?"))
            box.setInformativeText(tr("Stop now and undo: the running step is stopped at once, then every step that ran is undone; your computer is as before.\nFinish this step: the running step ends normally and nothing after it starts; you can continue later or undo then."))
            now = box.addButton(tr("Stop now and undo"), QMessageBox.ButtonRole.DestructiveRole)
            after = box.addButton(tr("Finish this step, then stop"), QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton(tr("Keep installing"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        self._answers: dict[object, str] = {now: self.STOP_NOW, after: self.AFTER_STEP, keep: self.KEEP}
        self._closing_question = closing
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.finished.connect(lambda _code, box=box: self._answered(box))
        self.question = box
        box.open()
        return box

    def request_cancel(self) -> None:
        self.ask_how_to_stop(closing=False)

    def _answered(self, box: QMessageBox) -> None:
        if self.question is not box:  # closed by the page itself (the install ended meanwhile)
            return
        self.question = None
        choice = self._answers.get(box.clickedButton(), self.KEEP)
        self.stop(choice, closing=self._closing_question)

    def stop(self, choice: str, closing: bool = False) -> None:
        """Do exactly what was chosen: stop at once (the running step's whole process group), or let the
        running step finish and start no other; or nothing."""
        if choice == self.KEEP or self._job is None or self.phase != "running":
            return
        self._close_when_done = closing and choice == self.AFTER_STEP
        if choice == self.STOP_NOW:
            self._stop_choice = "quit" if closing else "undo"
            self.phase = "cancelling"
            self.status.set("busy", tr("Stopping the running step now…"))
            self._job.cancel()
            if closing:
                self.wiz.close_now()
                return
        else:
            self._stop_choice = "after-step"
            self.phase = "cancelling"
            running = next((r.display_title for r in self.rows if r.state == RUNNING), "")
            self.status.set("busy", tr("Finishing “{step}”; nothing after it will start…").format(step=running)
                            if running else tr("Finishing the running step; nothing after it will start…"))
            if self._stop_after is not None:
                self._stop_after.cancel()
        self._buttons()

    def _close_question(self) -> bool:
        """Close the open "how to stop" question (the install ended under it); True when one was open."""
        box, self.question = self.question, None
        if box is None:
            return False
        box.done(0)
        box.deleteLater()
        return True

    def _maybe_close(self) -> None:
        if self._close_when_done:
            self._close_when_done = False
            self.wiz.close_now()

    def start_rollback(self, after_cancel: bool = False) -> None:
        self.phase = "rolling-back"
        self.status.set("busy", tr("Undoing the steps that ran…"))
        self.progress.update_progress(tr("Undoing…"), -1)
        services = self.services
        self.run_job(
            lambda ctx: services.rollback(progress=ctx.progress, log_line=ctx.log),
            name="rollback",
            on_result=lambda out: self._rolled_back(out, after_cancel),
            on_error=lambda msg, exc: self._rolled_back(InstallOutcome(ok=False, message=msg), after_cancel),
            on_log=self._append_log,
            on_progress=lambda t, f: self.progress.update_progress(t, f),
        )
        self._buttons()

    def _rolled_back(self, out: InstallOutcome, after_cancel: bool) -> None:
        self.phase = "finished"
        if out.ok:
            for r in self.rows:
                if r.state in (DONE, FAILED, RUNNING):
                    r.set_state(UNDONE)
            self.services.clear_pending()
            self._undone = True
            first = tr("Installation cancelled.") if after_cancel else tr("The installation did not finish.")
            self.status.set("info", sentences(first, tr("Every step that ran was undone; your computer is as before.")))
        else:
            self.status.set(
                "fail",
                tr("Undoing did not fully work: {error}. The log lists what is left; a support bundle (last page) helps us help you.").format(error=out.message),
            )
            self.log_section.set_expanded(True)
        if self.state.install is not None:
            self.state.install.cancelled = self.state.install.cancelled or after_cancel
        self._buttons()
        self._maybe_close()

    # ------------------------------------------------------------------------------- docker

    def start_docker(self) -> None:
        target, machine = self.state.target, self.state.machine
        assert target is not None
        self.phase = "running"
        self.status.set("busy", tr("Writing the Docker files…"))
        self.progress.update_progress(tr("Writing the Docker files…"), -1)
        frameworks = self.state.frameworks or ["pytorch"]
        services = self.services
        out_root = Path(target.value)

        def body(ctx: JobContext) -> list[tuple[str, DockerOutcome]]:
            results = []
            for fw in frameworks:
                ctx.cancel.raise_if_cancelled()
                out_dir = out_root if len(frameworks) == 1 else out_root / fw
                m = machine
                if m is None:
                    m = services.detect(progress=None, cancel=ctx.cancel)
                results.append((fw, services.generate_setup(m, fw, out_dir)))
            return results

        self.run_job(body, name="docker", on_result=self._docker_done, on_error=self._docker_failed)
        self._buttons()

    def _docker_done(self, results: list[tuple[str, DockerOutcome]]) -> None:
        self.phase = "finished"
        clear_layout(self.next_layout)
        self.next_card.setVisible(True)
        all_ok = True
        lang = current_language()
        translated = lang != "en"
        for fw, out in results:
            self.state.docker = out
            name = FRAMEWORK_NAMES.get(fw, fw)
            # the generator says its choices as messages: in a translated interface they are shown in its
            # language, and the exact English (flags, tags, versions) goes under Details
            english: list[str] = []
            if out.refused:
                all_ok = False
                if translated and out.refused_code is not None:
                    self.next_layout.addWidget(label(tr("{name}: not written. {reason}").format(name=name, reason=render(out.refused_code, lang)), bold=True))
                    if out.alternative_code is not None:
                        self.next_layout.addWidget(label(tr("Instead: {alt}").format(alt=render(out.alternative_code, lang))))
                    english += [out.refused, out.alternative or ""]
                elif translated:
                    self.next_layout.addWidget(label(tr("{name}: no files were written (the reason is under Details).").format(name=name), bold=True))
                    english += [out.refused, out.alternative or ""]
                else:
                    self.next_layout.addWidget(label(tr("{name}: not written. {reason}").format(name=name, reason=out.refused), bold=True))
                    if out.alternative:
                        self.next_layout.addWidget(label(tr("Instead: {alt}").format(alt=out.alternative)))
                self._host_checks(out, lang)
                self._english_details(english)
                continue
            self.next_layout.addWidget(label(tr("{name}: files written to {dir}").format(name=name, dir=out.out_dir), bold=True))
            if out.image:
                why = f" — {out.why}" if out.why and not translated else ""
                self.next_layout.addWidget(label(tr("Image: {image}").format(image=out.image) + why))
                if translated and out.why_codes:
                    for m in out.why_codes:
                        self.next_layout.addWidget(label("• " + render(m, lang)))
                if translated and out.why:
                    english.append(out.why)
            for f in out.files:
                self.next_layout.addWidget(label("• " + f))
            warn_words = [render(m, lang) for m in out.warning_codes] if translated and out.warning_codes else None
            for w in out.warnings if not translated else (warn_words or []):
                s = StatusLine()
                s.set("warn", w)
                self.next_layout.addWidget(s)
            if translated:
                english += ["• " + w for w in out.warnings]
            if translated and out.warnings and not warn_words:
                s = StatusLine()
                s.set("warn", tr("The generator left {n} warning(s); they are under Details.").format(n=len(out.warnings)))
                self.next_layout.addWidget(s)
            self._host_checks(out, lang)
            self._english_details(english)
            if out.next_commands:
                self.next_layout.addWidget(label(tr("Then run:"), bold=True))
                self.next_layout.addWidget(CommandBox("\n".join(out.next_commands), accessible=tr("Commands to run next")))
        self.state.install = InstallOutcome(ok=all_ok, message="" if all_ok else tr("some setups were refused"))
        if all_ok:
            self.status.set("pass", tr("The Docker files are written. Run the commands below to build and start the container."))
        else:
            self.status.set("warn", tr("Some setups could not be written; the reasons are below."))
        self._buttons()

    def _host_checks(self, out: DockerOutcome, lang: str) -> None:
        """Can this host run GPU containers: each host-check finding's title, in the interface's language."""
        kinds = {Severity.ERROR: "fail", Severity.WARNING: "warn", Severity.INFO: "info", Severity.OK: "pass"}
        for f in out.host_findings:
            words = finding_words(f, lang)
            s = StatusLine()
            s.set(kinds.get(f.severity, "info"), words.title)
            if words.translated:
                s.setToolTip(f.title)
            self.next_layout.addWidget(s)

    def _english_details(self, lines: list[str]) -> None:
        sec = details_section(lines)
        if sec is not None:
            self.next_layout.addWidget(sec)

    def _docker_failed(self, message: str, exc: BaseException) -> None:
        self.phase = "finished"
        text = self.unavailable_text(exc) if isinstance(exc, Unavailable) else message
        said = getattr(exc, "message", None)  # a generator refusal said as data: in the interface's language
        if isinstance(said, Message):
            text = render(said, current_language())
        self.state.install = InstallOutcome(ok=False, message=text)
        self.status.set("fail", tr("Writing the Docker files failed: {error}").format(error=text))
        self._buttons()
