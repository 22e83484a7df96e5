"""Page 4: the plan. What will be installed and why, what was not picked and why (expandable), what
must happen first (driver, reboot), and the exact commands, copyable and savable as a script."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget, QWizard

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import BasePage
from gpusetup.gui.pages.choose import FRAMEWORK_NAMES
from gpusetup.gui.services import Unavailable
from gpusetup.gui.widgets import (
    Busy,
    Card,
    Collapsible,
    CommandBox,
    StatusLine,
    clear_layout,
    details_section,
    label,
    step_heading,
)
from gpusetup.gui.workers import JobContext
from gpusetup.messages import render, render_notes, step_explain, variant_label
from gpusetup.model import Action, Message, Plan
from gpusetup.report.plans import action_title as core_action_title
from gpusetup.report.plans import action_why, rejected_reason

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard


def action_title(a: Action) -> str:
    """The action's name in the interface's language (from the core's catalogue, as every surface words it)."""
    return core_action_title(a, current_language())


def _size(mib: int) -> str:
    return f"{mib / 1024:.1f} GB" if mib >= 1024 else f"{mib} MB"


class PlanPage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("The plan"))
        self.setSubTitle(tr("Read what will happen. Nothing has been changed yet: only the Install button starts it."))
        self.status = StatusLine()
        self.content.addWidget(self.status)
        self.progress = Busy()
        self.content.addWidget(self.progress)
        self.progress.setVisible(False)
        self.body_widget = QWidget()
        self.body = QVBoxLayout(self.body_widget)
        self.body.setContentsMargins(0, 0, 0, 0)
        self.body.setSpacing(10)
        self.content.addWidget(self.body_widget)
        self.content.addStretch(1)
        self.script_box: CommandBox | None = None
        self.rejected_sections: list[Collapsible] = []
        self.step_labels: list[QLabel] = []  # the numbered step lines, in plan order
        self.plan_details: Collapsible | None = None  # the core's English (translated interface only)
        self.step_details: Collapsible | None = None
        self._built_for: tuple[object, ...] | None = None
        self.size_label: QLabel | None = None

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        docker = self.state.target is not None and self.state.target.kind == "docker"
        self.setButtonText(QWizard.WizardButton.NextButton, tr("Write the files") if docker else tr("&Install"))
        key = (id(self.state.machine), tuple(self.state.frameworks), self.state.target)
        if self.state.plan is not None and self._built_for == key:
            self.show_plan()
            return
        self._built_for = key
        self.state.plan = None
        self.state.script = ""
        if docker:
            self.show_plan()
            return
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Preparing the plan…"), -1)
        self.status.set("busy", tr("Preparing the plan…"))
        services, fplans, machine, target = self.services, self.state.chosen_plans(), self.state.machine, self.state.target
        assert machine is not None and target is not None

        def body(ctx: JobContext) -> tuple[Plan, str]:
            plan = services.build_plan(fplans, machine, target)
            try:
                script = services.render_script(plan, "bash")
            except Unavailable:
                script = "\n".join(" ".join(s.argv) for s in plan.steps if s.argv)
            return plan, script

        self.run_job(body, name="plan", on_result=self._built, on_error=self._failed)
        self.completeChanged.emit()

    def _built(self, result: tuple[Plan, str]) -> None:
        self.progress.setVisible(False)
        self.state.plan, self.state.script = result
        self.show_plan()

    def _failed(self, message: str, exc: BaseException) -> None:
        self.progress.setVisible(False)
        self._built_for = None
        if isinstance(exc, Unavailable):
            self.status.set("fail", self.unavailable_text(exc))
        else:
            # the planner's refusal as data (PlanError.message), worded in the interface's language
            coded = getattr(exc, "message", None)
            error = render(coded, current_language()) if isinstance(coded, Message) else message
            self.status.set("fail", tr("The plan could not be made: {error}").format(error=error))
        self.show_plan()

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        if self.busy():
            return False
        if self.state.target is not None and self.state.target.kind == "docker":
            return bool(self.state.chosen_plans()) or bool(self.state.frameworks)
        return self.state.plan is not None

    # -------------------------------------------------------------------------------- display

    def show_plan(self) -> None:
        clear_layout(self.body)
        self.rejected_sections = []
        self.step_labels = []
        self.plan_details = self.step_details = None
        self.script_box = None
        self.size_label = None
        fplans = self.state.chosen_plans()
        target = self.state.target
        plan = self.state.plan
        docker = target is not None and target.kind == "docker"
        lang = current_language()
        english: list[str] = []  # the core's full English text, under "Details" in a translated interface

        # 1. what must happen first
        actions: list[Action] = []
        seen = set()
        for fp in fplans:
            for a in fp.actions:
                if (a.kind, a.why) not in seen:
                    seen.add((a.kind, a.why))
                    actions.append(a)
        if actions:
            first = Card(tr("First, these steps are needed"))
            for a in actions:
                first.body.addWidget(label("• " + action_title(a), bold=True))
                first.body.addWidget(label(action_why(a, lang)))
                english.append(a.why)
                if a.commands:
                    first.body.addWidget(CommandBox("\n".join(a.commands), accessible=action_title(a), max_lines=4))
            self.body.addWidget(first)

        # 2. what will be installed and why
        what = Card(tr("What will be installed") if not docker else tr("What the container will have"))
        if not fplans and self.state.frameworks:
            what.body.addWidget(label(", ".join(FRAMEWORK_NAMES.get(f, f) for f in self.state.frameworks)))
        for fp in fplans:
            name = FRAMEWORK_NAMES.get(fp.framework, fp.framework)
            c = fp.choice if fp.ok or fp.gpu_choice is None else fp.gpu_choice
            if c is None:
                what.body.addWidget(label(tr("{name}: nothing can be installed.").format(name=name), bold=True))
                continue
            kind = tr("CPU version") if c.variant == "cpu" else \
                tr("GPU version, {variant}").format(variant=variant_label(c.variant, lang))
            what.body.addWidget(label(f"{name} {c.version} — {kind}", bold=True))
            if c.packages:
                what.body.addWidget(label(tr("Packages: {list}").format(list=", ".join(c.packages))))
            for note in render_notes(fp.notes, fp.note_codes, lang):
                what.body.addWidget(label("• " + note))
            english += fp.notes
            if fp.gpus_left_out and self.state.machine is not None:
                names = [self._gpu_name(i) for i in fp.gpus_left_out]
                what.body.addWidget(label(tr("Not used by this build: {gpus}").format(gpus=", ".join(names))))
        if target is not None:
            where = {
                "venv": tr("Into a new virtual environment: {v}"),
                "python": tr("Into this Python: {v}"),
                "conda": tr("Into the conda environment: {v}"),
                "docker": tr("Files written to: {v}"),
            }[target.kind].format(v=target.value)
            what.body.addWidget(label(where))
        down, room = getattr(plan, "download_mib", 0) or 0, getattr(plan, "installed_mib", 0) or 0
        sizes = getattr(plan, "size_messages", None)
        if plan is not None and sizes is not None:  # the core's words: exact from the index, or a labelled estimate
            words = [render(m, lang) for m in sizes()]
            if words:
                self.size_label = label(" ".join(words), bold=True)
                what.body.addWidget(self.size_label)
        elif plan is not None and (down or room):  # a plan without them (an older saved one): the table's estimate
            self.size_label = label(tr("Download: about {down}. Space needed on the disk: about {room}.").format(
                down=_size(down), room=_size(down + room)), bold=True)
            what.body.addWidget(self.size_label)
        if lang != "en":
            sec = details_section([f"• {n}" for n in english])
            if sec is not None:
                self.plan_details = sec
                what.body.addWidget(sec)
        self.body.addWidget(what)

        # 3. the steps, in order
        if plan is not None and plan.steps:
            steps = Card(tr("Steps ({n})").format(n=len(plan.steps)))
            step_english: list[str] = []
            for i, step in enumerate(plan.steps, start=1):
                row = QHBoxLayout()
                row.addWidget(label(f"{i}.", bold=True, wrap=False), 0, Qt.AlignmentFlag.AlignTop)
                # In a translated interface: the step's gist in that language with what it acts on (a path,
                # the packages); the core's English title and explanation go under "Details".
                text, translated = step_heading(step, lang)
                if translated:
                    step_english.append(f"{i}. {step.title}: {step.explain}" if step.explain else f"{i}. {step.title}")
                if step.needs_root:
                    text += "  " + tr("(asks for the administrator password)")
                head = label(text)
                self.step_labels.append(head)
                row.addWidget(head, 1)
                steps.body.addLayout(row)
                line = step_explain(step, lang)
                if line:
                    ex = label(line)
                    ex.setContentsMargins(22, 0, 0, 0)
                    if translated and step.explain:
                        ex.setToolTip(step.explain)
                    steps.body.addWidget(ex)
            for note in render_notes(plan.notes, plan.note_codes, lang):
                steps.body.addWidget(label("• " + note))
            if lang != "en":
                sec = details_section(step_english + [f"• {n}" for n in plan.notes])
                if sec is not None:
                    self.step_details = sec
                    steps.body.addWidget(sec)
            self.body.addWidget(steps)

        # 4. what was not picked and why
        for fp in fplans:
            if not fp.rejected:
                continue
            inner = QWidget()
            lay = QVBoxLayout(inner)
            lay.setContentsMargins(22, 0, 0, 0)
            for r in fp.rejected:
                lay.addWidget(label(f"• {r.option}: {rejected_reason(r, lang)}"))
            sec = Collapsible(
                tr("Options not picked for {name} ({n})").format(name=FRAMEWORK_NAMES.get(fp.framework, fp.framework), n=len(fp.rejected)),
                inner,
            )
            self.rejected_sections.append(sec)
            self.body.addWidget(sec)

        # 5. the exact commands
        if self.state.script:
            cmds = Card(tr("The exact commands"))
            cmds.body.addWidget(label(tr("This is exactly what Install will run. You can also copy it or save it and run it yourself.")))
            self.script_box = CommandBox(self.state.script, accessible=tr("The exact commands"), max_lines=14)
            cmds.body.addWidget(self.script_box)
            row = QHBoxLayout()
            row.addStretch(1)
            save = QPushButton(tr("Save as script…"))
            save.setAccessibleName(tr("Save the commands as a script"))
            save.clicked.connect(self._save_script)
            row.addWidget(save)
            cmds.body.addLayout(row)
            self.body.addWidget(cmds)

        if plan is not None or docker:
            if docker:
                self.status.set("info", tr("Press “Write the files” to create the Docker setup. Nothing is installed on this computer."))
            elif actions:
                self.status.set("warn", tr("Some steps are needed first (see below). Press Install when you are ready."))
            else:
                self.status.set("pass", tr("Everything is ready. Press Install when you are ready."))
        self.completeChanged.emit()

    def _gpu_name(self, i: int) -> str:
        m = self.state.machine
        if m is None or i >= len(m.gpus):
            return f"GPU {i}"
        g = m.gpus[i]
        return g.name or g.pci.device_name or f"GPU {i}"

    @classmethod
    def choose_save_path(cls, parent: QWidget, start: str) -> str:
        """Save-file dialog (a classmethod so tests can answer for the user)."""
        path, _ = QFileDialog.getSaveFileName(parent, tr("Save the commands as a script"), start, tr("Shell script (*.sh);;All files (*)"))
        return path

    def _save_script(self) -> None:
        path = self.choose_save_path(self, str(Path.home() / "gpusetup-install.sh"))
        if not path:
            return
        try:
            Path(path).write_text(self.state.script if self.state.script.endswith("\n") else self.state.script + "\n", encoding="utf-8")
            Path(path).chmod(0o755)
        except OSError as exc:
            self.status.set("fail", tr("Could not save the script: {error}").format(error=exc))
            return
        self.status.set("pass", tr("Saved to {path}").format(path=path))
