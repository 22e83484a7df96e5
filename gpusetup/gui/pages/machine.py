"""Page 2: detection in the background with live progress, a card per GPU, the environment, findings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QMessageBox, QPushButton, QVBoxLayout, QWidget

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import BasePage
from gpusetup.gui.services import Unavailable
from gpusetup.gui.widgets import Busy, Card, FindingWidget, StatusLine, clear_layout, finding_title, label
from gpusetup.gui.workers import JobContext
from gpusetup.messages import msg, render
from gpusetup.model import Finding, Gpu, Machine, Plan, Report, Severity

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard

def probe_words(name: str) -> str:
    # literal tr() calls so the translation extractor sees each one
    table = {
        "system": tr("Operating system and processor"),
        "pci": tr("Graphics cards on the PCI bus"),
        "nvml": tr("NVIDIA driver library (NVML)"),
        "smi": tr("nvidia-smi"),
        "libcuda": tr("CUDA driver library"),
        "driver": tr("Driver versions"),
        "toolkit": tr("CUDA toolkits"),
        "frameworks": tr("Python frameworks"),
        "containers": tr("Docker and the NVIDIA container toolkit"),
        "rocm": tr("AMD ROCm"),
        "kernel_log": tr("Kernel messages about the GPU"),
        "packages": tr("Installed driver packages"),
        "done": tr("Finished"),
    }
    return table.get(name, name)


def _mib(v: int | None) -> str:
    if v is None:
        return tr("unknown")
    return f"{v / 1024:.0f} GB" if v >= 1024 else f"{v} MB"


def gpu_card(gpu: Gpu, machine: Machine) -> Card:
    name = gpu.name or gpu.pci.device_name or tr("Unknown graphics card")
    card = Card(name)
    card.setAccessibleName(tr("Graphics card: {name}").format(name=name))
    grid = QGridLayout()
    grid.setHorizontalSpacing(14)
    vendor = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}.get(gpu.vendor, gpu.vendor)
    driver = gpu.pci.kernel_driver
    driver_text = driver_words(machine, gpu) if gpu.vendor == "nvidia" else (driver or tr("unknown"))
    rows = [
        (tr("Maker"), vendor),
        (tr("Architecture"), gpu.architecture or tr("unknown")),
        (tr("Compute capability"), str(gpu.compute_capability or tr("unknown"))),
        (tr("Memory"), _mib(gpu.memory_total_mib)),
        (tr("Driver"), driver_text),
    ]
    if gpu.pci.address:
        rows.append((tr("Slot"), gpu.pci.address))
    for r, (k, v) in enumerate(rows):
        grid.addWidget(label(k + ":", wrap=False), r, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(label(str(v)), r, 1)
    grid.setColumnStretch(1, 1)
    card.body.addLayout(grid)
    return card


def _nvidia_module_loaded(machine: Machine, gpu: Gpu | None = None) -> bool:
    if gpu is not None and gpu.pci.kernel_driver == "nvidia":
        return True
    return any(mod.name == "nvidia" and mod.loaded for mod in machine.driver.modules)


def driver_words(machine: Machine, gpu: Gpu | None = None) -> str:
    """The NVIDIA driver in words, the same wherever the wizard names it: its version (and the CUDA it supports);
    when the version was not read, whether it works (it reported the CUDA it supports), is loaded, or does not
    answer at all. Never "not working" for a driver that answered (issue 21: the recorded A100), nor for one that is
    simply not needed (no NVIDIA graphics card: the Done page said "driver not working" there)."""
    d = machine.driver
    if not (d.version or d.cuda_driver_version or machine.nvidia_gpus):  # nothing is wrong: none is needed
        return tr("not installed (no NVIDIA graphics card)")
    if d.version:
        if d.cuda_driver_version:
            return tr("{version} (supports CUDA up to {cuda})").format(version=d.version, cuda=d.cuda_driver_version)
        return str(d.version)
    if d.cuda_driver_version:  # the driver answered (deviceQuery, NVML): it works, its number was not read
        return render(msg("wizard.driver.working-cuda", cuda=str(d.cuda_driver_version)), current_language())
    return _no_version_text(machine, gpu)


def _no_version_text(machine: Machine, gpu: Gpu | None = None) -> str:
    """No driver version was read: say whether the kernel module is there at all."""
    if _nvidia_module_loaded(machine, gpu):
        return tr("the nvidia kernel module is loaded, but its version could not be read")
    return tr("not working (no NVIDIA driver answered)")


def environment_rows(m: Machine) -> list[tuple[str, str]]:
    s = m.system
    os_word = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}.get(s.os or "", s.os)
    os_text = s.distro_name or " ".join(x for x in (os_word, s.os_version) if x) or tr("unknown")
    if s.wsl:
        os_text += " " + tr("(inside WSL {n})").format(n=s.wsl_version or "")
    rows = [(tr("System"), os_text)]
    if s.kernel:
        rows.append((tr("Kernel"), s.kernel))
    if s.cpu.model:
        rows.append((tr("Processor"), s.cpu.model))
    if s.ram_total_mib:
        rows.append((tr("Memory (RAM)"), _mib(s.ram_total_mib)))
    rows.append((tr("NVIDIA driver"), driver_words(m)))
    tk = ", ".join(f"{t.version or '?'} ({t.path})" for t in m.cuda.toolkits)
    rows.append((tr("CUDA toolkit"), tk or tr("none found (not needed for PyTorch, TensorFlow or JAX wheels)")))
    py = []
    for env in m.python_envs:
        fw = ", ".join(f"{f.name} {f.version or ''}".strip() for f in env.frameworks)
        py.append(f"Python {env.version or '?'} — {env.executable}" + (f" ({fw})" if fw else ""))
    rows.append((tr("Python"), "\n".join(py) or (s.python and f"Python {s.python}") or tr("unknown")))
    if m.containers.docker:
        gpu_ok = m.containers.nvidia_runtime_registered or bool(m.containers.cdi_specs)
        rows.append(
            (
                tr("Docker"),
                m.containers.docker + " — " + (tr("GPU containers set up") if gpu_ok else tr("GPU containers not set up yet")),
            )
        )
    else:
        rows.append((tr("Docker"), tr("not installed")))
    return rows


class MachinePage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Your machine"))
        self.setSubTitle(tr("What we found on this computer. Nothing has been changed."))
        top = QHBoxLayout()
        self.status = StatusLine()
        top.addWidget(self.status, 1)
        self.rescan = QPushButton(tr("&Re-scan"))
        self.rescan.setAccessibleName(tr("Re-scan this computer"))
        self.rescan.clicked.connect(self.start_detection)
        top.addWidget(self.rescan, 0, Qt.AlignmentFlag.AlignTop)
        self.copy_report = QPushButton(tr("Copy the re&port"))
        self.copy_report.setAccessibleName(tr("Copy the diagnose report to the clipboard"))
        self.copy_report.setToolTip(tr("The same text as `gpusetup diagnose`, to paste into a forum post or a support request (serial numbers and host name are masked)."))
        self.copy_report.clicked.connect(self._copy_report)
        self.copy_report.setEnabled(False)
        top.addWidget(self.copy_report, 0, Qt.AlignmentFlag.AlignTop)
        self.content.addLayout(top)
        self.progress = Busy()
        self.content.addWidget(self.progress)
        self.results = QWidget()
        self.results_layout = QVBoxLayout(self.results)
        self.results_layout.setContentsMargins(0, 0, 0, 0)
        self.results_layout.setSpacing(10)
        self.content.addWidget(self.results)
        self.content.addStretch(1)
        self.finding_widgets: list[FindingWidget] = []
        self._detect_job: Any = None
        self._fixes: dict[int, Plan] = {}
        self._to_show: list[tuple[int, Finding]] = []

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        if self.state.machine is None and self._detect_job is None:
            self.start_detection()
        elif self.state.machine is not None:
            self.show_machine()

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        return self.state.machine is not None and self._detect_job is None and not self._to_show

    # ------------------------------------------------------------------------------ detection

    def start_detection(self) -> None:
        if self._detect_job is not None:
            return
        self.rescan.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Starting…"), 0.0)
        self.status.set("busy", tr("Looking at your computer… this usually takes a few seconds."))
        services = self.services

        def body(ctx: JobContext) -> tuple[Machine, list[Finding], str | None, dict[int, Plan]]:
            machine = services.detect(progress=ctx.progress, cancel=ctx.cancel)
            ctx.cancel.raise_if_cancelled()
            try:
                findings = services.evaluate(machine)
                note = None
            except Unavailable as exc:
                findings, note = [], str(exc)
            fixes = {}
            for i, f in enumerate(findings):  # which ones the installer can fix, worked out off the UI thread
                if f.severity != Severity.OK:
                    plan = services.fix_plan(f, machine)
                    if plan is not None:
                        fixes[i] = plan
            return machine, findings, note, fixes

        self._detect_job = self.run_job(
            body,
            name="detect",
            on_result=self._detected,
            on_error=self._failed,
            on_progress=lambda text, frac: self.progress.update_progress(
                tr("Checking: {what}").format(what=probe_words(text)), frac
            ),
            on_cancelled=self._job_ended,
        )
        self.completeChanged.emit()

    def _job_ended(self) -> None:
        self._detect_job = None
        self.rescan.setEnabled(True)
        self.copy_report.setEnabled(self.state.machine is not None)
        self.progress.setVisible(False)
        self.completeChanged.emit()

    def _detected(self, result: tuple[Machine, list[Finding], str | None, dict[int, Plan]]) -> None:
        machine, findings, note, fixes = result
        self.state.machine = machine
        self.state.findings = findings
        self._fixes = fixes
        self.state.fplans = []  # a new machine needs a new answer from the resolver
        self._rules_note = note
        self._job_ended()
        self.show_machine()

    def _failed(self, message: str, exc: BaseException) -> None:
        self._job_ended()
        if isinstance(exc, Unavailable):
            self.status.set("fail", self.unavailable_text(exc))
        else:
            self.status.set("fail", tr("Looking at your computer failed: {error}. Press Re-scan to try again; the log folder has the details.").format(error=message))

    # -------------------------------------------------------------------------------- display

    def show_machine(self) -> None:
        m = self.state.machine
        if m is None:
            return
        clear_layout(self.results_layout)
        self.finding_widgets = []
        self._to_show = []
        n = len(m.gpus)
        worst = max((f.severity for f in self.state.findings), key=lambda s: s.rank, default=Severity.OK)
        if n == 0:
            head = tr("No graphics card was found.")
        elif n == 1:
            head = tr("Found 1 graphics card.")
        else:
            head = tr("Found {n} graphics cards.").format(n=n)
        if worst == Severity.ERROR:
            self.status.set("fail", head + " " + tr("Some problems need fixing; see below."))
        elif worst == Severity.WARNING:
            self.status.set("warn", head + " " + tr("There are warnings worth reading below."))
        else:
            self.status.set("pass", head + " " + tr("No problems found."))

        if n:
            grid = QGridLayout()
            grid.setSpacing(10)
            for i, gpu in enumerate(m.gpus):
                grid.addWidget(gpu_card(gpu, m), i // 2, i % 2)
            if n == 1:
                grid.setColumnStretch(0, 1)
            self.results_layout.addLayout(grid)
        else:
            card = Card(tr("No graphics card"))
            card.body.addWidget(
                label(tr("We did not find a graphics card this computer could use for deep learning. You can still install the CPU versions of the frameworks; they work, only more slowly."))
            )
            self.results_layout.addWidget(card)

        env = Card(tr("Software on this computer"))
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        for r, (k, v) in enumerate(environment_rows(m)):
            grid.addWidget(label(k + ":", wrap=False), r, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(label(v), r, 1)
        grid.setColumnStretch(1, 1)
        env.body.addLayout(grid)
        self.results_layout.addWidget(env)

        if self.state.findings:
            title = tr("What we noticed ({n})").format(n=len(self.state.findings))
            self.results_layout.addWidget(label(title, bold=True, size=1.15))
            # already most severe first (rules.evaluate); added a few per event-loop turn so a long list
            # never freezes the window
            self._to_show = list(enumerate(self.state.findings))
            self._add_findings()
        elif getattr(self, "_rules_note", None):
            self.results_layout.addWidget(label(tr("The checks for known problems are not available in this version.")))

    def _copy_report(self) -> None:
        m = self.state.machine
        if m is None:
            return
        services, report = self.services, Report(machine=m, findings=list(self.state.findings))
        self.run_job(
            lambda ctx: services.render_report(report, "text"),
            name="report",
            on_result=self._report_copied,
            on_error=lambda msg, exc: self.status.set("fail", self.unavailable_text(exc) if isinstance(exc, Unavailable) else msg),
        )

    def _report_copied(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.copy_report.setText(tr("Copied"))
        QTimer.singleShot(1500, self, lambda: self.copy_report.setText(tr("Copy the re&port")))

    def _add_findings(self) -> None:
        batch, self._to_show = self._to_show[:2], self._to_show[2:]
        for i, f in batch:
            w = FindingWidget(f, can_fix=i in self._fixes)
            w.fix_requested.connect(lambda finding, i=i: self._do_fix(finding, self._fixes.get(i)))
            self.finding_widgets.append(w)
            self.results_layout.addWidget(w)
        if self._to_show:
            QTimer.singleShot(0, self, self._add_findings)
        else:
            self.completeChanged.emit()

    # ------------------------------------------------------------------------- do it for me

    @classmethod
    def confirm_fix(cls, parent: QWidget, finding: Finding, plan: Plan) -> bool:
        """Ask before running a fix (a classmethod so tests can answer for the user)."""
        cmds = "\n".join(" ".join(s.argv) for s in plan.steps if s.argv)
        text = tr("gpusetup will run these steps to fix “{title}”:").format(title=finding_title(finding)) + "\n\n" + cmds
        answer = QMessageBox.question(parent, tr("Fix this for me?"), text)
        return answer == QMessageBox.StandardButton.Yes

    def _do_fix(self, finding: Finding, plan: Plan | None) -> None:
        m = self.state.machine
        if m is None:
            return
        if plan is None or not self.confirm_fix(self, finding, plan):
            return
        self.status.set("busy", tr("Fixing: {title}…").format(title=finding_title(finding)))
        self.rescan.setEnabled(False)
        services = self.services
        self.run_job(
            lambda ctx: services.execute(plan, progress=ctx.progress, cancel=ctx.cancel, log_line=ctx.log),
            name="fix",
            on_result=lambda outcome: self._fixed(finding, outcome),
            on_error=lambda msg, exc: self.status.set("fail", tr("The fix did not work: {error}").format(error=msg)),
        )

    def _fixed(self, finding: Finding, outcome: Any) -> None:
        self.rescan.setEnabled(True)
        if outcome.ok:
            if outcome.needs_reboot:
                self.status.set("info", tr("Done. Restart your computer, then open GPU Setup again."))
            self.start_detection()
        else:
            self.status.set("fail", tr("The fix did not work: {error}").format(error=outcome.message or outcome.failed_step or ""))
