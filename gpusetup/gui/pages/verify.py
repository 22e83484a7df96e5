"""Page 6: the proof. Runs the self-test with progress; shows each measurement as a bar against the
rated peak with pass/warn/fail, the GPU-over-CPU speed-up, and the framework check."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import BasePage
from gpusetup.gui.pages.envpick import EnvPicker
from gpusetup.gui.services import Unavailable, proof_python
from gpusetup.gui.widgets import Busy, Card, MeasurementRow, StatusLine, clear_layout, details_section, label
from gpusetup.gui.workers import JobContext
from gpusetup.messages import render, render_notes, render_parts
from gpusetup.model import Measurement, SelfTestResult

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard

def measurement_title(m: Measurement) -> str:
    table = {
        "h2d_pinned": tr("Copy to the graphics card (host → device)"),
        "d2h_pinned": tr("Copy from the graphics card (device → host)"),
        "h2d_pageable": tr("Copy to the graphics card, pageable memory"),
        "d2h_pageable": tr("Copy from the graphics card, pageable memory"),
        "d2d": tr("Memory speed on the graphics card"),
        "matmul_fp32_ptx": tr("Matrix multiply, FP32 (our own kernel)"),
        "matmul_fp32_correct": tr("Matrix multiply gives correct results"),
        "matmul_repeat_bitexact": tr("Repeated runs give identical results"),
        "cublas_fp32": tr("Matrix multiply, FP32 (cuBLAS)"),
        "cublas_tf32": tr("Matrix multiply, TF32 (cuBLAS)"),
        "cublas_fp16": tr("Matrix multiply, FP16 (cuBLAS)"),
        "cublas_bf16": tr("Matrix multiply, BF16 (cuBLAS)"),
        "cpu_matmul_fp32": tr("Processor: matrix multiply, FP32"),
        "cpu_copy": tr("Processor: memory copy"),
        "cpu_triad_2pass": tr("Processor: memory speed (triad)"),
        "framework_check": tr("Framework check"),
    }
    if m.name in table:
        title = table[m.name]
    elif m.name.startswith("framework_"):
        name = m.name.removeprefix("framework_")
        title = (tr("{name}: matrix multiply on the graphics card").format(name=name) if m.device is not None
                 else tr("{name}: matrix multiply and convolution").format(name=name))
    else:
        title = m.name.replace("_", " ")
    if m.device is not None:
        title += f" · GPU {m.device}"
    return title


SPEEDUP = "gpu_cpu_speedup"


def proof_words(result: SelfTestResult | None) -> tuple[str, str, str]:
    """(status kind, sentence, the self-test's own English reason) for the core's verdict on the framework
    in the checked environment. The reason is shown as is in English, behind "Details" otherwise."""
    # lazy: selftest.proof brings the self-test package: 25 ms before the first paint (python -X importtime over
    # gpusetup.gui.app; tests/gui/test_first_paint.py)
    from gpusetup.selftest.proof import framework_proof

    p = framework_proof(result)
    if p.why and current_language() != "en":  # the self-test's reason, in this language (shown behind "Details")
        p.reason = render(p.why, current_language())
    names = ", ".join(p.frameworks)
    where = p.python or tr("this program's own Python")
    if p.status == "gpu":
        return "pass", tr("Proven: {names} in {where} sees your graphics card and computes correctly on it.").format(names=names, where=where), p.reason
    if p.status == "cpu":
        return "pass", tr("Proven on the processor: {names} in {where} computes correctly (there is no graphics card for it to use).").format(names=names, where=where), p.reason
    if p.status == "failed":
        return "fail", tr("The framework check failed: {names} in {where}.").format(names=names, where=where), p.reason
    return "warn", tr("Not proven: no framework was checked in this environment."), p.reason


def proof_widgets(result: SelfTestResult | None) -> list[QWidget]:
    """The verdict line, and the reason (in English: plainly; otherwise in a closed Details section)."""
    kind, text, reason = proof_words(result)
    line = StatusLine()
    if reason and current_language() == "en" and kind != "pass":
        text = f"{text} {reason}"
    line.set(kind, text)
    out: list[QWidget] = [line]
    if reason and current_language() != "en":
        more = details_section([reason])
        if more is not None:
            out.append(more)
    return out


def speedup(result: SelfTestResult) -> Measurement | None:
    """The self-test's own GPU-over-CPU comparison (it measures both), when it made one."""
    return next((m for m in result.measurements if m.name == SPEEDUP and m.value), None)


class VerifyPage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Prove it works"))
        self.setSubTitle(tr("A short test measures your graphics card and compares it with what it is rated for."))
        top = QHBoxLayout()
        self.status = StatusLine()
        top.addWidget(self.status, 1)
        self.cancel_button = QPushButton(tr("&Stop the test"))
        self.cancel_button.clicked.connect(self.cancel_jobs)
        self.again_button = QPushButton(tr("Run the test &again"))
        self.again_button.clicked.connect(self.start)
        top.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.again_button, 0, Qt.AlignmentFlag.AlignTop)
        self.content.addLayout(top)
        # prove the framework in an environment the user already has (not in a demonstration: it would look
        # at this computer's disk)
        other = QHBoxLayout()
        self.where_line = label("")
        other.addWidget(self.where_line, 1)
        self.other_button = QPushButton(tr("Check &another Python environment…"))
        self.other_button.setAccessibleName(tr("Check another Python environment"))
        self.other_button.clicked.connect(self.show_picker)
        self.other_button.setVisible(not wizard.services.demo)
        other.addWidget(self.other_button, 0, Qt.AlignmentFlag.AlignTop)
        self.content.addLayout(other)
        self.picker = EnvPicker(self, self.prove_in)
        self.picker.setVisible(False)
        self.content.addWidget(self.picker)
        self.progress = Busy()
        self.content.addWidget(self.progress)
        self.results = QWidget()
        self.results_layout = QVBoxLayout(self.results)
        self.results_layout.setContentsMargins(0, 0, 0, 0)
        self.results_layout.setSpacing(10)
        self.content.addWidget(self.results)
        self.content.addStretch(1)
        self.rows: list[MeasurementRow] = []
        self.proof_line: StatusLine | None = None
        self._job: Any = None
        self.picked: Any = None  # the environment the user picked (install.environments.EnvCheck), else None

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        if self.state.check_only and self.picked is None and self.state.selftest is None:
            clear_layout(self.results_layout)
            self.progress.setVisible(False)
            self.cancel_button.setVisible(False)
            self.again_button.setVisible(False)
            self.status.set("info", tr("Pick the Python environment to prove, then press “Prove it there”."))
            self.show_picker()
        elif self.state.selftest is None:
            self.start()
        else:
            self.show_result(self.state.selftest)

    def cleanupPage(self) -> None:  # noqa: N802 - Qt API; Back: Choose leads to the plan again
        super().cleanupPage()
        self.state.check_only = False
        self.picked = None
        self.picker.setVisible(False)

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        return self._job is None

    def busy_testing(self) -> bool:
        return self._job is not None

    def show_picker(self) -> None:
        """Open "Check another Python environment" and look for environments (once per opening)."""
        self.picker.setVisible(True)
        self.picker.load()
        self.picker.found.setFocus()

    def prove_in(self, check: Any) -> None:
        """Run the proof in the environment the user picked (the core said it can run there)."""
        self.picked = check
        self.picker.setVisible(False)
        self.state.selftest = None
        self.start()

    def _where_text(self, python: str | None) -> str:
        if python is None:
            return tr("The framework check runs in this program's own Python.")
        return tr("The framework check runs in {python}.").format(python=python)

    def start(self) -> None:
        if self._job is not None:
            return
        clear_layout(self.results_layout)
        self.rows = []
        picked_fws = self.picked.frameworks if self.picked is not None else None
        self.status.set("busy", render(self.services.selftest_estimate(picked_fws), current_language()))
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Starting…"), 0.0)
        self.cancel_button.setVisible(True)
        self.again_button.setVisible(False)
        services = self.services
        machine = self.state.machine
        picked = self.picked
        python = picked.python if picked is not None else proof_python(self.state.plan, self.state.target, self.state.install)
        self.where_line.setText(self._where_text(python))
        self.other_button.setEnabled(False)
        self.picker.prove_button.setEnabled(False)

        def body(ctx: JobContext) -> SelfTestResult:
            m = machine if machine is not None else services.detect(progress=None, cancel=ctx.cancel)
            if picked is not None:  # only the frameworks installed there
                return services.run_selftest(m, mode="quick", progress=ctx.progress, cancel=ctx.cancel, python=python,
                                             frameworks=picked.frameworks)
            return services.run_selftest(m, mode="quick", progress=ctx.progress, cancel=ctx.cancel, python=python)

        self._job = self.run_job(
            body,
            name="selftest",
            on_result=self._done,
            on_error=self._failed,
            on_progress=lambda t, f: self.progress.update_progress(t, f),
            on_cancelled=lambda: self._done(SelfTestResult(cancelled=True)),
        )
        self.wiz.set_busy(True)
        self.completeChanged.emit()

    def _ended(self) -> None:
        self._job = None
        self.other_button.setEnabled(True)
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.again_button.setVisible(True)
        self.wiz.set_busy(False)
        self.completeChanged.emit()

    def _failed(self, message: str, exc: BaseException) -> None:
        self._ended()
        if isinstance(exc, Unavailable):
            self.status.set("warn", self.unavailable_text(exc))
        else:
            self.status.set("fail", tr("The test could not run: {error}").format(error=message))

    def _done(self, result: SelfTestResult) -> None:
        from gpusetup.selftest.proof import framework_proof  # lazy: see proof_words

        p = framework_proof(result)
        logging.getLogger("gpusetup.gui.verify").info(
            "self-test: verdict %s, %d measurements, gpu tested %s, framework %s %s in %s (%s)", result.verdict,
            len(result.measurements), result.gpu_tested, p.status, ",".join(p.frameworks), p.python, p.reason)
        self._ended()
        self.state.selftest = result
        self.show_result(result)

    def show_result(self, result: SelfTestResult) -> None:
        clear_layout(self.results_layout)
        self.rows = []
        if result.framework_python:
            self.where_line.setText(self._where_text(result.framework_python))
        self.cancel_button.setVisible(False)
        self.progress.setVisible(False)
        if result.cancelled:
            self.status.set("info", tr("The test was stopped. Press “Run the test again” to start it again."))
        elif result.verdict == "fail":
            self.status.set("fail", tr("Something is wrong: at least one test failed. See the red lines below."))
        elif result.verdict == "warn":
            self.status.set("warn", tr("It works, but some numbers are lower than expected (see below)."))
        elif result.gpu_tested and result.verdict == "pass":
            self.status.set("pass", tr("It works: your graphics card was tested and performs as expected."))
        elif result.gpu_tested:
            self.status.set("pass", tr("It works: your graphics card was tested. There is no rated peak to compare these numbers with, so they are shown without a verdict."))
        else:
            self.status.set("info", tr("The graphics card could not be tested; the results below show what was measured."))
        from gpusetup.selftest.proof import headline  # lazy: see proof_words

        line = headline(result, self.state.machine.gpus[0].name if self.state.machine and self.state.machine.gpus else None)
        if line is not None:  # the core's one-line verdict on the card, in this language
            kind = {"fail": "fail", "warn": "warn"}.get(result.verdict, "pass")
            self.status.set(kind, render(line, current_language()))
        if self.services.demo and result.gpu_tested:
            rec = StatusLine()
            rec.set("info", tr("A recording: these numbers were measured on the real {what}, not on this computer.").format(what=self.services.demo_title(current_language())))
            self.results_layout.addWidget(rec)
        sp = speedup(result)
        if sp is not None and sp.value:
            card = Card(tr("Graphics card versus processor"))
            x = f"{sp.value:.0f}" if sp.value >= 10 else f"{sp.value:.1f}"
            card.body.addWidget(label(tr("The graphics card multiplied matrices {x}× faster than the processor.").format(x=x), size=1.1))
            if sp.reason and current_language() == "en":
                card.body.addWidget(label(sp.reason))
            elif sp.reason and (more := details_section([render_parts(sp.code, sp.params, sp.reason, current_language())])) is not None:
                card.body.addWidget(more)
            self.results_layout.addWidget(card)
        if any(m.tier == "framework" for m in result.measurements):
            card = Card(tr("Your framework"))
            widgets = proof_widgets(result)
            for wdg in widgets:
                card.body.addWidget(wdg)
            self.proof_line = widgets[0]  # type: ignore[assignment]
            self.results_layout.addWidget(card)
        if result.notes:  # first: they say what was (not) tested
            notes = Card(tr("Notes"))
            if current_language() == "en":
                for n in result.notes:
                    notes.body.addWidget(label("• " + n))
            elif len(result.note_codes) == len(result.notes):  # worded as data: every note in this language
                for n in render_notes(result.notes, result.note_codes, current_language()):
                    notes.body.addWidget(label("• " + n))
                if (more_notes := details_section(["• " + n for n in result.notes])) is not None:
                    notes.body.addWidget(more_notes)
            else:  # an older result with English notes only: the headline in this language, the rest one click away
                if result.headline is not None:
                    notes.body.addWidget(label(render(result.headline, current_language())))
                else:
                    notes.body.addWidget(label(tr("The test left notes on what it could and could not measure.")))
                more_notes = details_section(["• " + n for n in render_notes(result.notes, result.note_codes, current_language())])
                if more_notes is not None:
                    notes.body.addWidget(more_notes)
            self.results_layout.addWidget(notes)
        rest = [m for m in result.measurements if m.name != SPEEDUP]
        groups = [
            (tr("Graphics card"), [m for m in rest if m.tier not in ("cpu", "framework")]),
            (tr("Framework check"), [m for m in rest if m.tier == "framework"]),
            (tr("Processor"), [m for m in rest if m.tier == "cpu"]),
        ]
        for title, ms in groups:
            if not ms:
                continue
            card = Card(title)
            for m in ms:
                row = MeasurementRow(m, measurement_title(m))
                self.rows.append(row)
                card.body.addWidget(row)
            self.results_layout.addWidget(card)
        self._framework_check()

    def _framework_check(self) -> None:
        """What the frameworks themselves reported (from detection), beside the measured numbers."""
        m = self.state.machine
        if m is None:
            return
        lines = []
        for env in m.python_envs:
            for f in env.frameworks:
                if f.gpu_available is True:
                    lines.append(("pass", tr("{name} {version} sees {n} graphics card(s).").format(name=f.name, version=f.version or "", n=f.device_count or 1)))
                elif f.gpu_available is False:
                    lines.append(("warn", tr("{name} {version} is installed but does not see the graphics card.").format(name=f.name, version=f.version or "")))
        if not lines:
            return
        card = Card(tr("Frameworks found"))
        for kind, text in lines:
            s = StatusLine()
            s.set(kind, text)
            card.body.addWidget(s)
        self.results_layout.addWidget(card)
