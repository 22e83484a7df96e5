"""Page 6: the proof. Runs the self-test with progress in the environment that was installed (or picked) and
answers in a sentence per framework (the core's :func:`gpusetup.selftest.proof.answers`) and one for the
graphics card, with "Repair…" where a framework does not start; every measurement (bars against the rated
peak, the GPU-over-CPU speed-up, notes) is behind "Details"."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import PAGE_CHOOSE, BasePage
from gpusetup.gui.pages.envpick import EnvPicker
from gpusetup.gui.services import Unavailable, proof_python
from gpusetup.gui.widgets import (
    Busy,
    Card,
    Collapsible,
    MeasurementRow,
    StatusLine,
    clear_layout,
    details_section,
    label,
)
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


class AnswerRow(QWidget):
    """One framework's answer (:func:`gpusetup.selftest.proof.answers`): its mark and sentence in this language, a
    "Repair…" or "Install…" button where the core offers one, and the measurements behind it in a closed
    "Details" section. Verify and Done both show these rows, from the same result."""

    def __init__(self, answer: Any, on_offer: Callable[[Any], None] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.answer = answer
        lang = current_language()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        top = QHBoxLayout()
        self.line = StatusLine()
        self.line.set(answer.kind, render(answer.sentence, lang))
        top.addWidget(self.line, 1)
        self.offer_button: QPushButton | None = None
        if answer.offer and on_offer is not None:
            text = tr("&Repair…") if answer.offer == "repair" else tr("&Install it…")
            self.offer_button = QPushButton(text)
            self.offer_button.setAccessibleName(text.replace("&", "").rstrip("…"))
            self.offer_button.clicked.connect(lambda: on_offer(answer))
            top.addWidget(self.offer_button, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(top)
        inner = QWidget()
        il = QVBoxLayout(inner)
        il.setContentsMargins(22, 0, 0, 0)
        for d in answer.details:
            il.addWidget(label(render(d, lang)))
        self.details = Collapsible(tr("Details"), inner) if answer.details else None
        if self.details is not None:
            lay.addWidget(self.details)

    @property
    def text(self) -> str:
        return self.line.text.text()


def answer_rows(result: SelfTestResult | None, chosen: Sequence[str] | None = None,
                on_offer: Callable[[Any], None] | None = None) -> list[QWidget]:
    """The proof's answer for each framework (only those chosen, when ``chosen`` is given), or one line saying
    why there is none; the same words on Verify and on Done."""
    # lazy: selftest.proof brings the self-test package: 25 ms before the first paint (python -X importtime over
    # gpusetup.gui.app; tests/gui/test_first_paint.py)
    from gpusetup.selftest.proof import answers, summary

    said = answers(result, chosen)
    if said:
        return [AnswerRow(a, on_offer) for a in said]
    why = summary(result)
    line = StatusLine()
    line.set("warn", tr("No framework was proven: {why}").format(why=render(why, current_language()) if why else "?"))
    return [line]


def speedup(result: SelfTestResult) -> Measurement | None:
    """The self-test's own GPU-over-CPU comparison (it measures both), when it made one."""
    return next((m for m in result.measurements if m.name == SPEEDUP and m.value), None)


class VerifyPage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("Prove it works"))
        self.setSubTitle(tr("A short test checks that each framework starts and computes correctly — on the graphics card if there is one — and how fast, against what the card is rated for."))
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
        self.rows: list[MeasurementRow] = []  # the measurements, under "Details"
        self.answers: list[AnswerRow] = []  # one per framework: the answer
        self.details: Collapsible | None = None
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

    def proof_target(self) -> tuple[str | None, list[str] | None]:
        """(interpreter, frameworks) the proof checks: the environment picked, with the frameworks found there;
        else the one installed, with the frameworks chosen — its interpreter from the plan, or after a resume,
        a reopened wizard or a restart of the app from the installer's journal. (None, None) when there is no
        such environment: the proof then checks no framework (never gpusetup's own environment)."""
        if self.picked is not None:
            return self.picked.python, list(self.picked.frameworks)
        target, chosen = self.state.target, (list(self.state.frameworks) or None)
        if self.services.demo or (target is not None and target.kind == "docker"):
            return None, None
        python = proof_python(self.state.plan, target, self.state.install)
        if self.state.check_only or target is None or (python and chosen):
            return python, chosen
        want = os.path.abspath(os.path.expanduser(target.value))
        for env in self.services.installed_environments():  # newest first
            if os.path.abspath(env.folder) == want or env.target == target.spec():
                # a resume of an install started with `gpusetup install` names no frameworks: the plan's
                return python or env.python, chosen or env.frameworks or None
        return python, chosen

    def _where_text(self, python: str | None) -> str:
        if python is None:
            return tr("No Python environment was checked for a framework.")
        return tr("The framework check runs in {python}.").format(python=python)

    def start(self) -> None:
        if self._job is not None:
            return
        clear_layout(self.results_layout)
        self.rows = []
        self.answers = []
        python, frameworks = self.proof_target()
        self.status.set("busy", render(self.services.selftest_estimate(frameworks if python else ()), current_language()))
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Starting…"), 0.0)
        self.cancel_button.setVisible(True)
        self.again_button.setVisible(False)
        services = self.services
        machine = self.state.machine
        self.where_line.setText(self._where_text(python))
        self.other_button.setEnabled(False)
        self.picker.prove_button.setEnabled(False)
        # no environment: the GPU and processor tiers only (never this program's own Python in its place)
        checked: list[str] | None = frameworks if python else []

        def body(ctx: JobContext) -> SelfTestResult:
            m = machine if machine is not None else services.detect(progress=None, cancel=ctx.cancel)
            return services.run_selftest(m, mode="quick", progress=ctx.progress, cancel=ctx.cancel, python=python,
                                         frameworks=checked)

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
        from gpusetup.selftest.proof import answers  # lazy: see answer_rows

        said = answers(result)
        logging.getLogger("gpusetup.gui.verify").info(
            "self-test: verdict %s, %d measurements, gpu tested %s, in %s: %s", result.verdict,
            len(result.measurements), result.gpu_tested, result.framework_python,
            "; ".join(f"{a.framework} {a.status}" for a in said) or "no framework")
        self._ended()
        self.state.selftest = result
        self.show_result(result)

    def show_result(self, result: SelfTestResult) -> None:
        """The answer first — one sentence for the graphics card, one per framework — and every measurement
        behind one "Details" section."""
        from gpusetup.selftest.proof import answers, headline  # lazy: see answer_rows

        clear_layout(self.results_layout)
        self.rows = []
        self.answers = []
        self.where_line.setText(self._where_text(result.framework_python))
        self.cancel_button.setVisible(False)
        self.progress.setVisible(False)
        lang = current_language()
        said = answers(result)
        line = headline(result, self.state.machine.gpus[0].name if self.state.machine and self.state.machine.gpus else None)
        if result.cancelled:
            self.status.set("info", tr("The test was stopped. Press “Run the test again” to start it again."))
        elif line is not None:  # the core's one-line verdict on the card, in this language
            gpu_verdict = {m.verdict for m in result.measurements if m.tier in ("driver", "cublas")}
            self.status.set("fail" if "fail" in gpu_verdict else "warn" if "warn" in gpu_verdict else "pass",
                            render(line, lang))
        elif said and not self.services.demo:  # no graphics card tested: the frameworks' answers are the answer
            worst = max((a.kind for a in said), key=lambda k: {"pass": 0, "warn": 1, "fail": 2}.get(k, 1))
            self.status.set(worst, tr("It works.") if worst == "pass" else tr("Not everything works: see below."))
        elif result.headline is not None:
            self.status.set("info", render(result.headline, lang))
        else:
            self.status.set("info", tr("The graphics card could not be tested; the results below show what was measured."))
        if self.services.demo and result.gpu_tested:
            rec = StatusLine()
            rec.set("info", tr("A recording: these numbers were measured on the real {what}, not on this computer.").format(what=self.services.demo_title(lang)))
            self.results_layout.addWidget(rec)
        if not self.services.demo and any(m.tier == "framework" for m in result.measurements):
            card = Card(tr("Your frameworks"))
            for w in answer_rows(result, on_offer=self.repair):
                card.body.addWidget(w)
                if isinstance(w, AnswerRow):
                    self.answers.append(w)
            self.results_layout.addWidget(card)
        elif not self.services.demo and result.framework_python is None and not result.cancelled:
            none = StatusLine()
            none.set("info", tr("No framework was checked: there is no installed environment to check. Press “Check another Python environment…” to pick one."))
            self.results_layout.addWidget(none)
        self.results_layout.addWidget(self._details(result))

    def _details(self, result: SelfTestResult) -> QWidget:
        """Every measurement, note and comparison, in one closed section."""
        lang = current_language()
        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(10)
        sp = speedup(result)
        if sp is not None and sp.value:
            card = Card(tr("Graphics card versus processor"))
            x = f"{sp.value:.0f}" if sp.value >= 10 else f"{sp.value:.1f}"
            card.body.addWidget(label(tr("The graphics card multiplied matrices {x}× faster than the processor.").format(x=x), size=1.1))
            if sp.reason and lang == "en":
                card.body.addWidget(label(sp.reason))
            elif sp.reason and (more := details_section([render_parts(sp.code, sp.params, sp.reason, lang)])) is not None:
                card.body.addWidget(more)
            lay.addWidget(card)
        if result.notes:  # they say what was (not) tested
            notes = Card(tr("Notes"))
            if lang == "en" or len(result.note_codes) == len(result.notes):  # worded as data: in this language
                for n in render_notes(result.notes, result.note_codes, lang):
                    notes.body.addWidget(label("• " + n))
            else:  # an older result with English notes only
                more_notes = details_section(["• " + n for n in result.notes])
                if more_notes is not None:
                    notes.body.addWidget(more_notes)
            lay.addWidget(notes)
        rest = [m for m in result.measurements if m.name != SPEEDUP and m.tier != "framework"]
        for title, ms in ((tr("Graphics card"), [m for m in rest if m.tier != "cpu"]),
                          (tr("Processor"), [m for m in rest if m.tier == "cpu"])):
            if not ms:
                continue
            card = Card(title)
            for m in ms:
                row = MeasurementRow(m, measurement_title(m))
                self.rows.append(row)
                card.body.addWidget(row)
            lay.addWidget(card)
        found = self._frameworks_found()
        if found is not None:
            lay.addWidget(found)
        self.details = Collapsible(tr("Details: every measurement"), inner)
        return self.details

    def _frameworks_found(self) -> QWidget | None:
        """What detection saw of frameworks in this computer's Python environments (beside the measured proof)."""
        m = self.state.machine
        if m is None:
            return None
        lines = []
        for env in m.python_envs:
            for f in env.frameworks:
                if f.gpu_available is True:
                    lines.append(("pass", tr("{name} {version} sees {n} graphics card(s).").format(name=f.name, version=f.version or "", n=f.device_count or 1)))
                elif f.gpu_available is False and m.nvidia_gpus:  # without an NVIDIA GPU that is no news
                    lines.append(("warn", tr("{name} {version} is installed but does not see the graphics card.").format(name=f.name, version=f.version or "")))
        if not lines:
            return None
        card = Card(tr("Frameworks found"))
        for kind, text in lines:
            s = StatusLine()
            s.set(kind, text)
            card.body.addWidget(s)
        return card

    def repair(self, answer: Any) -> None:
        """"Repair…" / "Install it…" beside a framework that does not start (or is not there): back to Choose with
        that framework ticked and that environment as the place, so the plan shows what will be done first.

        REPAIR HOOK (issue 21): the install core has no repair entry point in this branch; when it has one
        (`install --repair`, an integrity check of the environment's files), the coordinator calls it here."""
        from gpusetup.selftest.proof import PLAN_NAMES, env_folder  # lazy: see answer_rows

        fw = PLAN_NAMES.get(answer.framework)
        folder = env_folder(answer.python)
        choose = self.wiz.pages.get(PAGE_CHOOSE)
        if fw is None or folder is None or choose is None or self.busy_testing():
            return
        log = logging.getLogger("gpusetup.gui.verify")
        log.info("%s %s in %s: back to Choose", answer.offer, answer.framework, folder)
        self.state.check_only = False
        self.state.selftest = None
        self.state.frameworks = [fw]
        self.picked = None
        settings = self.wiz.settings  # what Choose shows when it opens afresh
        settings.setValue("choose/where", "venv")
        settings.setValue("choose/venv", folder)
        if PAGE_CHOOSE in self.wiz.visitedIds():  # back to it, filled in
            self.wiz.go_to(PAGE_CHOOSE)
            choose.prefill([fw], folder)  # type: ignore[attr-defined]
        else:  # after a resume the wizard started at Install: from the machine check on, as a new install
            self.wiz.restart()
            self.wiz.next()
