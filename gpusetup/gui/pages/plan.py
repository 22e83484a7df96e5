"""Page 4: the plan. What will be installed and why, what was not picked and why (expandable), what
must happen first (driver, reboot), and the exact commands, copyable and savable as a script."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from gpusetup import mirrors
from gpusetup.compat import live
from gpusetup.compat.download_size import install_choice
from gpusetup.config import ConfigError, config_path
from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import BasePage
from gpusetup.gui.pages.choose import FRAMEWORK_NAMES
from gpusetup.gui.services import FRAMEWORKS, DockerOutcome, Services, Target, Unavailable
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
from gpusetup.messages import message_of, msg, render, render_notes, variant_label
from gpusetup.model import Action, Choice, FrameworkPlan, Machine, Message, Plan, Step
from gpusetup.report.plans import action_title as core_action_title
from gpusetup.report.plans import action_why, rejected_reason

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard


def action_title(a: Action) -> str:
    """The action's name in the interface's language (from the core's catalogue, as every surface words it)."""
    return core_action_title(a, current_language())


def say(message: Message) -> str:
    """Words of the wizard's own (message codes ``wizard.*``) in the interface's language."""
    return render(message, current_language())


def _step_explain(step: Step, language: str) -> str:
    """What a step does, in the wizard's words (its ``code@wizard`` wording where the catalogue has one)."""
    return render(step.explain_code, language) if step.explain_code is not None else step.explain


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
        self.mirrors_section = self._mirrors_card()
        self.content.addWidget(self.mirrors_section)
        self.content.addStretch(1)
        self.script_box: CommandBox | None = None
        self.rejected_sections: list[Collapsible] = []
        self.step_labels: list[QLabel] = []  # the numbered step lines, in plan order
        self.plan_details: Collapsible | None = None  # the core's English (translated interface only)
        self.step_details: Collapsible | None = None
        self._built_for: tuple[object, ...] | None = None
        self.size_label: QLabel | None = None
        self.python_button: QPushButton | None = None  # "Use Python 3.12": the core's offer of a newer Python
        self.what_labels: list[QLabel] = []  # "PyTorch 2.15 — GPU version, cu132": what the install puts in place
        self.unreachable: list[str] = []  # indexes of the chosen builds that could not be reached
        self.refusals: dict[str, DockerOutcome] | None = None  # Docker: frameworks no image can serve (None: not asked)
        self.python_version: str | None = None  # the Python the plan is for, when the user took the offer of another

    # --------------------------------------------------------------------------------- mirrors

    def _mirrors_card(self) -> Collapsible:
        """PyPI and PyTorch wheel mirrors: a field each (empty: the official index), the well-known public ones
        to pick from, and "Check and use", which asks each mirror before the plan is made again with it."""
        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(22, 0, 0, 0)
        lay.addWidget(label(say(msg("wizard.mirrors.intro"))))
        form = QFormLayout()
        self.pypi_edit, self.pypi_pick = self._mirror_row(form, "pypi", say(msg("wizard.mirrors.pypi")),
                                                          mirrors.PYPI_SIMPLE)
        self.pytorch_edit, self.pytorch_pick = self._mirror_row(form, "pytorch", say(msg("wizard.mirrors.pytorch")),
                                                                mirrors.PYTORCH_INDEX)
        lay.addLayout(form)
        self.mirrors_status = StatusLine()
        self.mirrors_status.setVisible(False)
        lay.addWidget(self.mirrors_status)
        self.mirrors_remember = QCheckBox(say(msg("wizard.mirrors.remember")))
        self.mirrors_remember.setToolTip(str(config_path()))
        lay.addWidget(self.mirrors_remember)
        row = QHBoxLayout()
        self.mirrors_keep = label(say(msg("wizard.mirrors.keep", path=str(config_path()))))
        row.addWidget(self.mirrors_keep, 1)
        self.mirrors_button = QPushButton(say(msg("wizard.mirrors.apply")))
        self.mirrors_button.setAccessibleName(say(msg("wizard.mirrors.apply")))
        self.mirrors_button.clicked.connect(self.apply_mirrors)
        row.addWidget(self.mirrors_button, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(row)
        return Collapsible(say(msg("wizard.mirrors.title")), inner)

    def _mirror_row(self, form: QFormLayout, kind: str, text: str, official: str) -> tuple[QLineEdit, QComboBox]:
        edit = QLineEdit()
        edit.setPlaceholderText(official)
        edit.setAccessibleName(text.rstrip(":："))
        edit.setClearButtonEnabled(True)
        pick = QComboBox()
        pick.setAccessibleName(text.rstrip(":：") + " — " + say(msg("wizard.mirrors.choose")))
        pick.addItem(say(msg("wizard.mirrors.choose")), "")
        for m in mirrors.known(kind):  # choices, never a default: the field stays as it is until one is picked
            pick.addItem(f"{m.label(current_language())} — {m.url}", m.url)
        pick.activated.connect(lambda i, e=edit, p=pick: i > 0 and e.setText(str(p.itemData(i))))
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(pick)
        caption = QLabel(text)
        caption.setBuddy(edit)
        form.addRow(caption, row)
        return edit, pick

    def _show_mirrors(self) -> None:
        """The fields show the mirrors in use (the ones set here, else the configuration file's)."""
        pypi, pytorch = self.services.mirrors()
        self.pypi_edit.setText(pypi)
        self.pytorch_edit.setText(pytorch)

    def apply_mirrors(self) -> None:
        """Check each mirror with a request, then make the plan again through them; a mirror that does not answer
        is not used, and the page says why. An empty field is "no mirror", also over the configuration file's."""
        pypi, pytorch = self.pypi_edit.text().strip(), self.pytorch_edit.text().strip()
        machine, target = self.state.machine, self.state.target
        if machine is None or target is None or self.busy():
            return
        services, frameworks, python = self.services, list(self.state.frameworks), self.python_version
        chosen, remember = self.state.chosen_plans(), self.mirrors_remember.isChecked()
        self.mirrors_status.setVisible(True)
        self.mirrors_status.set("busy", say(msg("wizard.mirrors.checking")))
        self.mirrors_button.setEnabled(False)

        def body(ctx: JobContext) -> tuple[list[Message], tuple[list[FrameworkPlan], Plan, str] | None, Message | None]:
            problems = services.check_mirrors(pypi, pytorch, chosen, machine)
            if problems:
                return problems, None, None
            services.set_mirrors(pypi, pytorch)
            saved: Message | None = None
            if remember:
                try:
                    saved = msg("wizard.mirrors.saved", path=str(services.remember_mirrors(pypi, pytorch)))
                except ConfigError as exc:
                    saved = exc.message
            return [], self._replan(services, machine, target, frameworks, python), saved

        self.run_job(body, name="plan", on_result=self._mirrors_checked, on_error=self._failed)
        self.completeChanged.emit()

    def _mirrors_checked(self, result: tuple[list[Message], tuple[list[FrameworkPlan], Plan, str] | None,
                                             Message | None]) -> None:
        problems, made, saved = result
        self.mirrors_button.setEnabled(True)
        if problems:
            self.mirrors_status.set("fail", " ".join(render(p, current_language()) for p in problems))
            self.completeChanged.emit()
            return
        pypi, pytorch = self.services.mirrors()
        said = say(msg("wizard.mirrors.in-use" if (pypi or pytorch) else "wizard.mirrors.cleared"))
        failed_to_save = saved is not None and saved.code != "wizard.mirrors.saved"
        self.mirrors_status.set("warn" if failed_to_save else "pass",
                                said + (" " + render(saved, current_language()) if saved is not None else ""))
        self._replanned(made)

    @staticmethod
    def _replan(services: Services, machine: Machine, target: Target, frameworks: list[str],
                python: str | None) -> tuple[list[FrameworkPlan], Plan, str]:
        """(every framework's answer, the install plan of the chosen ones, its script) — on a worker thread."""
        fplans = services.resolve(machine, FRAMEWORKS, python_version=python)
        chosen = [p for p in fplans if p.framework in frameworks]
        plan = services.build_plan(chosen, machine, target)
        try:
            script = services.render_script(plan, "bash")
        except Unavailable:
            script = "\n".join(" ".join(s.argv) for s in plan.steps if s.argv)
        return fplans, plan, script

    def _replanned(self, made: tuple[list[FrameworkPlan], Plan, str] | None) -> None:
        self.progress.setVisible(False)
        if made is not None:
            self.state.fplans, self.state.plan, self.state.script = made
            self._built_for = self._key()
        self.show_plan()

    def use_python(self, python: str) -> None:
        """The core offered a newer Python (install.note.newer-python): plan again for it."""
        machine, target = self.state.machine, self.state.target
        if machine is None or target is None or self.busy():
            return
        self.python_version = python
        services, frameworks = self.services, list(self.state.frameworks)
        self.progress.setVisible(True)
        self.progress.update_progress(say(msg("wizard.plan.replanning")), -1)
        self.status.set("busy", say(msg("wizard.plan.replanning")))
        self.run_job(lambda ctx: self._replan(services, machine, target, frameworks, python), name="plan",
                     on_result=self._replanned, on_error=self._failed)
        self.completeChanged.emit()

    # ------------------------------------------------------------------------------- lifecycle

    def _key(self) -> tuple[object, ...]:
        """What the plan was made from: the machine, the choice, and the mirrors (a mirror set, changed or cleared
        anywhere in the wizard makes it again: the page never keeps a plan through a mirror no longer in use)."""
        s = self.services
        return (id(self.state.machine), tuple(self.state.frameworks), self.state.target, s.index_url,
                s.pytorch_mirror, self.python_version)

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        docker = self.state.target is not None and self.state.target.kind == "docker"
        self.setButtonText(QWizard.WizardButton.NextButton, tr("Write the files") if docker else tr("&Install"))
        self._show_mirrors()
        self.mirrors_section.setVisible(not docker)
        key = self._key()
        if (self.state.plan is not None or (docker and self.refusals is not None)) and self._built_for == key:
            self.show_plan()
            return
        self._built_for = key
        self.state.plan = None
        self.state.script = ""
        self.refusals = None
        services, fplans, machine, target = self.services, self.state.chosen_plans(), self.state.machine, self.state.target
        assert machine is not None and target is not None
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Preparing the plan…"), -1)
        self.status.set("busy", tr("Preparing the plan…"))
        if docker:  # which frameworks no image can serve here, asked before "Write the files" is offered
            frameworks = list(self.state.frameworks)
            self.run_job(lambda ctx: services.docker_refusals(machine, frameworks), name="plan",
                         on_result=self._docker_checked, on_error=self._failed)
            self.completeChanged.emit()
            return

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

    def _docker_checked(self, refusals: dict[str, DockerOutcome]) -> None:
        self.progress.setVisible(False)
        self.refusals = refusals
        self.show_plan()

    def _failed(self, message: str, exc: BaseException) -> None:
        self.progress.setVisible(False)
        self.mirrors_button.setEnabled(True)
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
            if self.refusals is None:
                return False
            return any(f not in self.refusals for f in self.state.frameworks)  # something can be written
        return self.state.plan is not None

    # -------------------------------------------------------------------------------- display

    def _installed_choice(self, fp: FrameworkPlan) -> Choice | None:
        """The build the install puts in place, by the installer's own rule (compat.download_size.install_choice)."""
        m = self.state.machine
        built: Choice | None = install_choice(fp, wsl=bool(m is not None and m.system.wsl))
        return built

    def show_plan(self) -> None:
        clear_layout(self.body)
        self.rejected_sections = []
        self.step_labels = []
        self.what_labels = []
        self.plan_details = self.step_details = None
        self.script_box = None
        self.size_label = None
        self.python_button = None
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
                first.body.addWidget(label(render(message_of(a), lang) if a.code else action_why(a, lang)))
                english.append(render(message_of(a), "en") if a.code else a.why)
                if a.commands:
                    first.body.addWidget(CommandBox("\n".join(a.commands), accessible=action_title(a), max_lines=4))
            self.body.addWidget(first)

        # 1b. Docker: the frameworks no container image can serve here, before anything is offered
        refused = self.refusals or {}
        if docker and refused:
            card = Card(tr("What the container will have"))
            for fw, out in refused.items():
                name = FRAMEWORK_NAMES.get(fw, fw)
                reason = render(out.refused_code, lang) if out.refused_code is not None else (out.refused or "")
                card.body.addWidget(label(say(msg("wizard.docker.refused", name=name, reason=reason)), bold=True))
                if out.alternative_code is not None or out.alternative:
                    alt = render(out.alternative_code, lang) if out.alternative_code is not None else out.alternative
                    card.body.addWidget(label(tr("Instead: {alt}").format(alt=alt)))
            self.body.addWidget(card)

        # 2. what will be installed and why
        what = Card(tr("What will be installed") if not docker else tr("What the container will have"))
        if not fplans and self.state.frameworks:
            what.body.addWidget(label(", ".join(FRAMEWORK_NAMES.get(f, f) for f in self.state.frameworks)))
        for fp in fplans:
            if docker and fp.framework in refused:
                continue
            name = FRAMEWORK_NAMES.get(fp.framework, fp.framework)
            c = self._installed_choice(fp)
            if c is None:
                what.body.addWidget(label(tr("{name}: nothing can be installed.").format(name=name), bold=True))
                continue
            kind = tr("CPU version") if c.variant == "cpu" else \
                tr("GPU version, {variant}").format(variant=variant_label(c.variant, lang))
            head = label(f"{name} {c.version} — {kind}", bold=True)
            self.what_labels.append(head)
            what.body.addWidget(head)
            if c.packages:
                what.body.addWidget(label(tr("Packages: {list}").format(list=", ".join(c.packages))))
            for note in render_notes(fp.notes, fp.note_codes, lang):
                what.body.addWidget(label("• " + note))
            english += render_notes(fp.notes, fp.note_codes, "en")
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
        offer = next((m for m in (plan.note_codes if plan is not None else []) if m.code == "install.note.newer-python"),
                     None)
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
                    explain_en = _step_explain(step, "en")
                    step_english.append(f"{i}. {step.title}: {explain_en}" if explain_en else f"{i}. {step.title}")
                if step.needs_root:
                    text += "  " + tr("(asks for the administrator password)")
                head = label(text)
                self.step_labels.append(head)
                row.addWidget(head, 1)
                steps.body.addLayout(row)
                line = _step_explain(step, lang)
                if line:
                    ex = label(line)
                    ex.setContentsMargins(22, 0, 0, 0)
                    if translated and step.explain:
                        ex.setToolTip(_step_explain(step, "en"))
                    steps.body.addWidget(ex)
            for note in render_notes(plan.notes, plan.note_codes, lang):
                steps.body.addWidget(label("• " + note))
            if offer is not None and offer.params.get("python"):  # the wizard's own button for the core's offer
                python = str(offer.params["python"])
                self.python_button = QPushButton(say(msg("wizard.plan.use-python", python=python)))
                self.python_button.clicked.connect(lambda: self.use_python(python))
                prow = QHBoxLayout()
                prow.addStretch(1)
                prow.addWidget(self.python_button)
                steps.body.addLayout(prow)
            if lang != "en":
                sec = details_section(step_english + [f"• {n}" for n in render_notes(plan.notes, plan.note_codes, "en")])
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

        # the verdict: never "ready" while an index of the chosen builds could not be reached
        self.unreachable = [] if docker else [i for fp in fplans for i in live.unreachable(fp)]
        if self.unreachable:
            self.mirrors_section.set_expanded(True)
        if docker and self.refusals is not None:
            if all(f in refused for f in self.state.frameworks):
                self.status.set("fail", say(msg("wizard.docker.none")))
            elif refused:
                self.status.set("warn", say(msg("wizard.docker.some-refused")))
            else:
                self.status.set("info", tr("Press “Write the files” to create the Docker setup. Nothing is installed on this computer."))
        elif plan is not None:
            if self.unreachable:
                self.status.set("warn", say(msg("wizard.plan.index-unreachable", index=", ".join(dict.fromkeys(self.unreachable)))))
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
