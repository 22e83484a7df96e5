"""What every page shares: a scrollable body, the wizard's state and services, background jobs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtWidgets import QVBoxLayout, QWidget, QWizardPage

from gpusetup.gui.i18n import tr
from gpusetup.gui.services import DockerOutcome, InstallOutcome, Services, Target, Unavailable
from gpusetup.gui.widgets import StatusLine, scroll
from gpusetup.gui.workers import Job, JobContext
from gpusetup.model import Finding, FrameworkPlan, Machine, Plan, SelfTestResult

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard

PAGE_WELCOME, PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL, PAGE_VERIFY, PAGE_DONE = range(7)


@dataclass
class WizardState:
    """The wizard's model: core objects passed from page to page (fields hold only simple UI state)."""

    machine: Machine | None = None
    findings: list[Finding] = field(default_factory=list)
    fplans: list[FrameworkPlan] = field(default_factory=list)  # resolver answer for every framework
    frameworks: list[str] = field(default_factory=list)  # what the user picked
    target: Target | None = None
    plan: Plan | None = None
    script: str = ""
    install: InstallOutcome | None = None
    docker: DockerOutcome | None = None
    selftest: SelfTestResult | None = None
    resuming: bool = False
    check_only: bool = False  # "only check an environment I already have": Choose goes straight to Verify

    def chosen_plans(self) -> list[FrameworkPlan]:
        return [p for p in self.fplans if p.framework in self.frameworks]


class BasePage(QWizardPage):
    """A wizard page whose content scrolls; long work goes through :meth:`run_job`."""

    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__()
        self._wizard = wizard
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        inner = QWidget()
        self.content = QVBoxLayout(inner)
        self.content.setContentsMargins(4, 4, 12, 4)
        self.content.setSpacing(10)
        if wizard.services.demo:  # say it on every page, screenshots included
            banner = StatusLine()
            banner.set("info", tr("Demonstration on a recorded machine ({what}): nothing on this computer is changed.").format(what=wizard.services.demo_title(wizard.language)))
            banner.setContentsMargins(4, 0, 12, 4)
            outer.addWidget(banner)
        outer.addWidget(scroll(inner))
        self.jobs: list[Job] = []  # references kept until each job is done

    @property
    def wiz(self) -> SetupWizard:
        return self._wizard

    @property
    def state(self) -> WizardState:
        return self._wizard.state

    @property
    def services(self) -> Services:
        return self._wizard.services

    def run_job(
        self,
        fn: Callable[[JobContext], Any],
        *,
        name: str,
        on_result: Callable[[Any], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
        on_progress: Callable[[str, float], None] | None = None,
        on_log: Callable[[str], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
        on_told: Callable[[Any], None] | None = None,
    ) -> Job:
        job = Job(fn, name=name)
        guard = self._guard
        if on_result:
            job.signals.finished.connect(guard(on_result))
        if on_error:
            job.signals.failed.connect(guard(on_error))
        if on_progress:
            job.signals.progress.connect(guard(on_progress))
        if on_log:
            job.signals.log.connect(guard(on_log))
        if on_cancelled:
            job.signals.cancelled.connect(guard(on_cancelled))
        if on_told:
            job.signals.told.connect(guard(on_told))
        job.signals.done.connect(guard(lambda j=job: self._forget(j)))
        self.jobs.append(job)
        self.wiz.track(job)
        return job.start(self.wiz.pool)

    def _guard(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """A slot that does nothing once this page is gone: a job's last signals can arrive after the
        window was closed (they are queued from the worker thread)."""

        def call(*args: Any) -> Any:
            if shiboken6.isValid(self):
                return fn(*args)
            return None

        return call

    def _forget(self, job: Job) -> None:
        if job in self.jobs:
            self.jobs.remove(job)
        self.wiz.untrack(job)
        self.completeChanged.emit()

    def busy(self) -> bool:
        return bool(self.jobs)

    def cancel_jobs(self) -> None:
        for job in list(self.jobs):
            job.cancel()

    def cleanupPage(self) -> None:  # noqa: N802 - Qt API; Back pressed: stop this page's work
        self.cancel_jobs()

    @staticmethod
    def unavailable_text(exc: BaseException) -> str:
        if isinstance(exc, Unavailable):
            return tr("This part of gpusetup is not available in this version ({feature}).").format(feature=exc.feature)
        return str(exc)

    def status_line(self) -> StatusLine:
        return StatusLine()
