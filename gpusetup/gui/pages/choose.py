"""Page 3: which frameworks, and where. The resolver's answer preselects what works and disables what
cannot work (the reason is the tooltip); the page itself decides nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.pages.base import PAGE_PLAN, PAGE_VERIFY, BasePage
from gpusetup.gui.services import FRAMEWORKS, Target, Unavailable, python_version_of
from gpusetup.gui.widgets import Busy, Card, StatusLine, label
from gpusetup.gui.workers import JobContext
from gpusetup.messages import render_notes, variant_label
from gpusetup.model import FrameworkPlan, PythonEnv
from gpusetup.report.plans import action_why, rejected_reason

if TYPE_CHECKING:
    from gpusetup.gui.wizard import SetupWizard

FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


def describe(fp: FrameworkPlan | None) -> tuple[bool, str, str]:
    """(selectable, one line for the page, tooltip) from the resolver's answer for one framework."""
    if fp is None:
        return True, tr("No recommendation (the version checker is not available in this version)."), ""
    lang = current_language()
    reasons = "\n".join(f"• {r.option}: {rejected_reason(r, lang)}" for r in fp.rejected[:6])
    if fp.ok and fp.choice is not None:
        c = fp.choice
        if c.variant == "cpu":
            line = tr("Recommended: {version}, CPU version (it works, without the graphics card).").format(version=c.version)
        else:
            line = tr("Recommended: {version} ({variant}); works with your graphics card now.").format(
                version=c.version, variant=variant_label(c.variant, lang))
        return True, line, reasons
    if fp.gpu_choice is not None:
        first = action_why(fp.actions[0], lang) if fp.actions else ""
        line = tr("Possible: {version} ({variant}) after a step first: {why}").format(
            version=fp.gpu_choice.version, variant=variant_label(fp.gpu_choice.variant, lang), why=first
        )
        return True, line, reasons
    if fp.choice is not None:
        line = tr("Only the CPU version {version} can be installed here.").format(version=fp.choice.version)
        if fp.rejected:
            line += " " + rejected_reason(fp.rejected[0], lang)
        return True, line, reasons
    notes = render_notes(fp.notes, fp.note_codes, lang)  # the core's notes, in the wizard's words (code@wizard)
    why = rejected_reason(fp.rejected[0], lang) if fp.rejected else ("; ".join(notes) or tr("no build fits this computer"))
    return False, tr("Not possible on this computer: {why}").format(why=why), reasons or why


def buddy(text: str, widget: QWidget) -> QWidget:
    """A field label tied to its input (screen readers announce it with the field)."""
    w = label(text, wrap=False, selectable=False)
    w.setBuddy(widget)
    return w


def venv_roots(envs: list[PythonEnv]) -> list[str]:
    """The folders of detected virtual environments (``<root>/bin/python`` or ``<root>\\Scripts\\python.exe``)."""
    roots = []
    for env in envs:
        if env.is_venv:
            root = str(Path(env.executable).parent.parent)
            if root not in roots:
                roots.append(root)
    return roots


class ChoosePage(BasePage):
    def __init__(self, wizard: SetupWizard) -> None:
        super().__init__(wizard)
        self.setTitle(tr("What do you want to run?"))
        self.setSubTitle(tr("Pick one or more frameworks and where to install them. What works best on your computer is already ticked."))
        self.status = StatusLine()
        self.content.addWidget(self.status)
        self.progress = Busy()
        self.content.addWidget(self.progress)
        self.progress.setVisible(False)

        fw_card = Card(tr("Frameworks"))
        self.checks: dict[str, QCheckBox] = {}
        self.notes: dict[str, QLabel] = {}
        for fw in FRAMEWORKS:
            box = QCheckBox(FRAMEWORK_NAMES[fw])
            f = box.font()
            f.setBold(True)
            box.setFont(f)
            box.setAccessibleName(FRAMEWORK_NAMES[fw])
            box.toggled.connect(self.completeChanged)
            note = label("")
            note.setContentsMargins(26, 0, 0, 6)
            self.checks[fw] = box
            self.notes[fw] = note
            fw_card.body.addWidget(box)
            fw_card.body.addWidget(note)
        self.content.addWidget(fw_card)

        where = Card(tr("Where"))
        self.where_group = QButtonGroup(self)
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        self.r_venv = QRadioButton(tr("A new virtual environment (recommended)"))
        self.r_python = QRadioButton(tr("An existing virtual environment"))
        self.r_conda = QRadioButton(tr("A conda environment"))
        self.r_docker = QRadioButton(tr("A Docker setup (files to build a container)"))
        for i, r in enumerate((self.r_venv, self.r_python, self.r_conda, self.r_docker)):
            self.where_group.addButton(r, i)
            r.setAccessibleName(r.text())
        self.venv_path = QLineEdit()
        self.venv_path.setAccessibleName(tr("Folder for the new virtual environment"))
        self.venv_browse = QPushButton(tr("Choose…"))
        self.venv_browse.setAccessibleName(tr("Choose the folder for the new virtual environment"))
        self.python_combo = QComboBox()
        self.python_combo.setEditable(True)
        self.python_combo.setAccessibleName(tr("Existing virtual environment to use"))
        combo_edit = self.python_combo.lineEdit()
        if combo_edit is not None:  # editable, so Qt made one
            combo_edit.setAccessibleName(tr("Existing virtual environment to use"))
        self.conda_name = QLineEdit()
        self.conda_name.setAccessibleName(tr("Name of the conda environment"))
        self.docker_path = QLineEdit()
        self.docker_path.setAccessibleName(tr("Folder for the Docker files"))
        self.docker_browse = QPushButton(tr("Choose…"))
        self.docker_browse.setAccessibleName(tr("Choose the folder for the Docker files"))

        grid.addWidget(self.r_venv, 0, 0, 1, 3)
        grid.addWidget(buddy(tr("Folder:"), self.venv_path), 1, 0, Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.venv_path, 1, 1)
        grid.addWidget(self.venv_browse, 1, 2)
        grid.addWidget(self.r_python, 2, 0, 1, 3)
        grid.addWidget(buddy(tr("Folder:"), self.python_combo), 3, 0, Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.python_combo, 3, 1, 1, 2)
        grid.addWidget(self.r_conda, 4, 0, 1, 3)
        grid.addWidget(buddy(tr("Name:"), self.conda_name), 5, 0, Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.conda_name, 5, 1, 1, 2)
        grid.addWidget(self.r_docker, 6, 0, 1, 3)
        grid.addWidget(buddy(tr("Folder:"), self.docker_path), 7, 0, Qt.AlignmentFlag.AlignRight)
        grid.addWidget(self.docker_path, 7, 1)
        grid.addWidget(self.docker_browse, 7, 2)
        where.body.addLayout(grid)
        self.where_note = label("")
        where.body.addWidget(self.where_note)
        self.content.addWidget(where)
        have = QHBoxLayout()
        self.check_only_hint = label(tr("Already have a framework installed? The test can prove it where it is, "
                                        "without installing anything."))
        have.addWidget(self.check_only_hint, 1)
        self.check_only_button = QPushButton(tr("Only &check an environment I have…"))
        self.check_only_button.setAccessibleName(tr("Only check an environment I have"))
        self.check_only_button.clicked.connect(self.check_only)
        # a demonstration never reads this disk: neither the button nor the sentence that invites to press it
        self.check_only_button.setVisible(not wizard.services.demo)
        self.check_only_hint.setVisible(not wizard.services.demo)
        have.addWidget(self.check_only_button, 0, Qt.AlignmentFlag.AlignTop)
        self.content.addLayout(have)
        self.content.addStretch(1)

        self.venv_browse.clicked.connect(lambda: self._browse(self.venv_path, tr("Folder for the new virtual environment")))
        self.docker_browse.clicked.connect(lambda: self._browse(self.docker_path, tr("Folder for the Docker files")))
        self.where_group.idToggled.connect(self._where_changed)
        for w in (self.venv_path, self.conda_name, self.docker_path):
            w.textChanged.connect(self.completeChanged)
        self.python_combo.currentTextChanged.connect(self.completeChanged)
        self._resolved_for: object = None

    # ---------------------------------------------------------------------------------- setup

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        m = self.state.machine
        settings = self.wiz.settings
        home = Path.home()
        self.venv_path.setText(str(settings.value("choose/venv", str(home / "gpu-env"))))
        self.docker_path.setText(str(settings.value("choose/docker", str(home / "gpu-docker"))))
        self.conda_name.setText(str(settings.value("choose/conda", "gpu")))
        self.python_combo.clear()
        envs = m.python_envs if m else []
        for root in venv_roots(envs):
            self.python_combo.addItem(root, root)
        has_venv = self.python_combo.count() > 0
        self.r_python.setEnabled(has_venv)
        self.r_python.setToolTip(
            "" if has_venv else tr("No virtual environment was found. gpusetup installs only into a virtual or conda environment, never into the system's own Python.")
        )
        has_conda = any(e.is_conda for e in envs) or shutil.which("conda") is not None
        self.r_conda.setEnabled(has_conda)
        self.r_conda.setToolTip("" if has_conda else tr("conda was not found on this computer. Choose a new virtual environment instead."))
        docker_ok = self.wiz.feature_available("docker")
        self.r_docker.setEnabled(docker_ok)
        self.r_docker.setToolTip("" if docker_ok else tr("Docker setups are not available in this version of gpusetup."))
        last = str(settings.value("choose/where", "venv"))
        button = {"venv": self.r_venv, "python": self.r_python, "conda": self.r_conda, "docker": self.r_docker}.get(last, self.r_venv)
        (button if button.isEnabled() else self.r_venv).setChecked(True)
        self._where_changed()
        if m is not None and (self._resolved_for is not m or not self.state.fplans):
            self._resolve(m)
        else:
            self._show_plans()

    def _resolve(self, machine: object) -> None:
        self._resolved_for = machine
        self.progress.setVisible(True)
        self.progress.update_progress(tr("Working out which versions fit your computer…"), -1)
        self.status.set("busy", tr("Checking which versions work with your graphics card and driver…"))
        for box in self.checks.values():
            box.setEnabled(False)
        services = self.services
        m = self.state.machine
        assert m is not None

        def body(ctx: JobContext) -> list[FrameworkPlan]:
            return services.resolve(m, FRAMEWORKS, python_version=python_version_of(m))

        self.run_job(body, name="resolve", on_result=self._resolved, on_error=self._resolve_failed)
        self.completeChanged.emit()

    def _resolved(self, fplans: list[FrameworkPlan]) -> None:
        self.progress.setVisible(False)
        self.state.fplans = fplans
        self._show_plans()

    def _resolve_failed(self, message: str, exc: BaseException) -> None:
        self.progress.setVisible(False)
        self.state.fplans = []
        for box in self.checks.values():
            box.setEnabled(True)
        if isinstance(exc, Unavailable):
            self.status.set("warn", self.unavailable_text(exc) + " " + tr("You can still choose, but we cannot recommend versions."))
        else:
            self.status.set("fail", tr("Working out the versions failed: {error}").format(error=message))
        self._show_plans()

    def _show_plans(self) -> None:
        by_fw = {p.framework: p for p in self.state.fplans}
        chosen_before = self.state.frameworks or [
            x for x in str(self.wiz.settings.value("choose/frameworks", "")).split(",") if x
        ]
        recommended: list[str] = []
        any_selectable = False
        for fw in FRAMEWORKS:
            fp = by_fw.get(fw)
            ok, line, tip = describe(fp) if (fp or not self.state.fplans) else (False, tr("The version checker gave no answer for this framework."), "")
            box = self.checks[fw]
            box.setEnabled(ok)
            box.setToolTip(tip if not ok else (tip and tr("Options we did not pick:") + "\n" + tip))
            box.setAccessibleDescription(line)
            self.notes[fw].setText(line)
            if not ok:
                box.setChecked(False)
            any_selectable |= ok
            if fp is not None and fp.ok and ok:
                recommended.append(fw)
        pre = [fw for fw in chosen_before if self.checks[fw].isEnabled()] if chosen_before else []
        if not pre and recommended:
            pre = [recommended[0]]
        if not pre and self.state.fplans:
            pre = [fw for fw in FRAMEWORKS if self.checks[fw].isEnabled()][:1]
        for fw in FRAMEWORKS:
            self.checks[fw].setChecked(fw in pre)
        if self.state.fplans:
            if recommended:
                self.status.set("pass", tr("We ticked what works best with your graphics card. Hover over a framework to see the options we left out."))
            elif any_selectable and not any(p.gpu_choice is not None for p in self.state.fplans):
                self.status.set("info", tr("Only the CPU versions can be installed on this computer; they work, only more slowly. We ticked the first one."))
            elif any_selectable:
                self.status.set("warn", tr("Nothing works with your graphics card right away; the plan will show what to do first."))
            else:
                self.status.set("fail", tr("None of the frameworks can be installed on this computer; hover over each to see why."))
        self.completeChanged.emit()

    # ------------------------------------------------------------------------------ where

    def _where_changed(self, *args: object) -> None:
        which = self.where()
        self.venv_path.setEnabled(which == "venv")
        self.venv_browse.setEnabled(which == "venv")
        self.python_combo.setEnabled(which == "python")
        self.conda_name.setEnabled(which == "conda")
        self.docker_path.setEnabled(which == "docker")
        self.docker_browse.setEnabled(which == "docker")
        m = self.state.machine
        note = ""
        if which == "venv":
            note = tr("A separate folder with its own Python packages: nothing else on your computer is touched, and deleting the folder removes it all.")
        elif which == "python":
            note = tr("Packages are added to this virtual environment; packages you already had are kept, and undo removes only what was added.")
        elif which == "conda":
            note = tr("Packages are installed into this conda environment (created if it does not exist).")
        elif which == "docker":
            note = tr("We write a Dockerfile and a compose file into the folder; nothing is installed on this computer.")
            if m is not None and not m.containers.docker:
                note += " " + tr("Docker is not installed yet; the plan shows how to install it.")
        self.where_note.setText(note)
        self.completeChanged.emit()

    def where(self) -> str:
        return {0: "venv", 1: "python", 2: "conda", 3: "docker"}.get(self.where_group.checkedId(), "venv")

    @classmethod
    def choose_dir(cls, parent: QWidget, caption: str, start: str) -> str:
        """Folder chooser (a classmethod so tests can answer for the user)."""
        return QFileDialog.getExistingDirectory(parent, caption, start)

    def _browse(self, edit: QLineEdit, caption: str) -> None:
        start = edit.text() or str(Path.home())
        chosen = self.choose_dir(self, caption, str(Path(start).parent))
        if chosen:
            edit.setText(chosen)

    def target(self) -> Target:
        which = self.where()
        value = {
            "venv": self.venv_path.text().strip(),
            "python": self.python_combo.currentText().strip(),
            "conda": self.conda_name.text().strip(),
            "docker": self.docker_path.text().strip(),
        }[which]
        if which in ("venv", "docker", "python") and value:
            value = str(Path(value).expanduser())
        return Target("venv" if which == "python" else which, value)

    def selected(self) -> list[str]:
        return [fw for fw in FRAMEWORKS if self.checks[fw].isChecked() and self.checks[fw].isEnabled()]

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        return not self.busy() and bool(self.selected()) and bool(self.target().value)

    def prefill(self, frameworks: list[str], venv: str) -> None:
        """Tick exactly ``frameworks`` and install into the environment ``venv`` (Verify's "Repair…" / "Install
        it…", issue 21): the user sees the choice and goes on to the plan."""
        for fw, box in self.checks.items():
            box.setChecked(fw in frameworks)
        self.venv_path.setText(venv)
        self.r_venv.setChecked(True)
        self._where_changed()
        self.completeChanged.emit()

    def check_only(self) -> None:
        """Skip the installation: straight to Verify, where the user picks the environment to prove."""
        self.state.check_only = True
        self.wiz.next()

    def nextId(self) -> int:  # noqa: N802 - Qt API
        return PAGE_VERIFY if self.state.check_only else PAGE_PLAN

    def validatePage(self) -> bool:  # noqa: N802 - Qt API; fast: stores the choice only
        if self.state.check_only:
            return True
        target = self.target()
        self.state.frameworks = self.selected()
        if self.state.target != target:
            self.state.plan = None
        self.state.target = target
        s = self.wiz.settings
        s.setValue("choose/frameworks", ",".join(self.state.frameworks))
        s.setValue("choose/where", self.where())
        if target.kind == "venv":
            s.setValue("choose/venv", target.value)
        elif target.kind == "docker":
            s.setValue("choose/docker", target.value)
        elif target.kind == "conda":
            s.setValue("choose/conda", target.value)
        return True
