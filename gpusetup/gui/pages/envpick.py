""""Check another Python environment…" on the Verify page: the environments found on this computer, a folder
or program chooser, the core's verdict on the one picked (``install.environments.check``) in this language,
and "Prove it there". The page decides nothing: what is usable, and why not, comes from the core."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from gpusetup.gui.i18n import current_language, tr
from gpusetup.gui.services import proof_python
from gpusetup.gui.widgets import Card, StatusLine, label
from gpusetup.messages import render

if TYPE_CHECKING:
    from gpusetup.gui.pages.verify import VerifyPage


def env_folder(python: str | None, path: str) -> str:
    """The environment's folder for a python inside one (…/env/bin/python → …/env), else the path itself."""
    if not python:
        return path
    p = Path(python)
    if p.parent.name in ("bin", "Scripts") and ((p.parent.parent / "pyvenv.cfg").is_file()
                                                 or (p.parent.parent / "conda-meta").is_dir()):
        return str(p.parent.parent)
    return python


def item_text(check: Any) -> str:
    """"~/env — Python 3.11.2: numpy 2.4.6" (or the core's few words on why not)."""
    where = env_folder(check.python, check.path)
    words = render(check.short, current_language())
    if check.version:
        return tr("{where} — Python {version}: {found}").format(where=where, version=check.version, found=words)
    return f"{where} — {words}"


class EnvPicker(Card):
    """The panel; ``on_prove(check)`` is called with the core's usable verdict when the user asks for it."""

    def __init__(self, page: VerifyPage, on_prove: Callable[[Any], None]) -> None:
        super().__init__(tr("Check another Python environment"))
        self.page = page
        self.on_prove = on_prove
        self.body.addWidget(label(tr("Prove a framework in an environment you already have: pick one found on this computer, or choose its folder (or its python program).")))
        self.status = StatusLine()
        self.body.addWidget(self.status)
        self.found = QListWidget()
        self.found.setAccessibleName(tr("Python environments found on this computer"))
        self.found.setMinimumHeight(120)
        self.found.currentItemChanged.connect(self._picked)
        self.found.itemDoubleClicked.connect(lambda item: self._prove())
        self.body.addWidget(self.found)
        row = QHBoxLayout()
        self.path_edit = QLineEdit()
        self.path_edit.setAccessibleName(tr("Folder or python program of the environment"))
        self.path_edit.setPlaceholderText(tr("Folder or python program of the environment"))
        self.path_edit.returnPressed.connect(self.check_path)
        self.path_edit.textEdited.connect(self._edited)
        self.folder_button = QPushButton(tr("Choose a &folder…"))
        self.folder_button.clicked.connect(self._choose_folder)
        self.program_button = QPushButton(tr("Choose a &program…"))
        self.program_button.clicked.connect(self._choose_program)
        self.check_button = QPushButton(tr("Chec&k"))
        self.check_button.clicked.connect(self.check_path)
        for w in (self.folder_button, self.program_button, self.check_button):
            w.setAccessibleName(w.text().replace("&", ""))
        row.addWidget(self.path_edit, 1)
        row.addWidget(self.folder_button)
        row.addWidget(self.program_button)
        row.addWidget(self.check_button)
        self.body.addLayout(row)
        self.verdict = StatusLine()
        self.body.addWidget(self.verdict)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        self.prove_button = QPushButton(tr("&Prove it there"))
        self.prove_button.setAccessibleName(tr("Prove it there"))
        self.prove_button.setEnabled(False)
        self.prove_button.clicked.connect(self._prove)
        bottom.addWidget(self.prove_button, 0, Qt.AlignmentFlag.AlignRight)
        self.body.addLayout(bottom)
        self.current: Any = None  # the core's verdict on what is picked
        self.listed: list[Any] = []
        self._loading = False
        self._checking = False

    # ----------------------------------------------------------------------------------- finding

    def load(self) -> None:
        """Look for environments (in the background; the detected machine and the one just installed first)."""
        if self._loading:
            return
        self._loading = True
        self.found.clear()
        self.status.set("busy", tr("Looking for Python environments on this computer…"))
        services = self.page.services
        machine = self.page.state.machine
        just = [p for p in [proof_python(self.page.state.plan, self.page.state.target, self.page.state.install)] if p]

        def body(ctx: object) -> list[Any]:
            # first the environment just installed, then those gpusetup's installer made earlier (its journal)
            made = [e.python for e in services.installed_environments() if e.python]
            return services.proof_environments(machine, [*just, *made])

        self.page.run_job(body, name="find-envs", on_result=self._listed, on_error=self._list_failed)

    def _listed(self, checks: list[Any]) -> None:
        self._loading = False
        self.listed = list(checks)
        self.found.clear()
        for c in self.listed:
            item = QListWidgetItem(item_text(c))
            item.setData(Qt.ItemDataRole.UserRole, c)
            item.setToolTip(render(c.message, current_language()))
            self.found.addItem(item)
        usable = sum(1 for c in self.listed if c.ok)
        if not self.listed:
            self.status.set("info", tr("No Python environment was found here; choose its folder below."))
        elif usable == 1:
            self.status.set("pass", tr("One environment with a framework to check was found; pick it, or choose another below."))
        elif usable:
            self.status.set("pass", tr("{n} environments with a framework to check were found; pick one, or choose another below.").format(n=usable))
        else:
            self.status.set("warn", tr("Python was found, but no environment with a framework to check; choose one below."))

    def _list_failed(self, message: str, exc: BaseException) -> None:
        self._loading = False
        self.status.set("warn", tr("Looking for environments did not work ({error}); choose one below.").format(error=message))

    # ----------------------------------------------------------------------------------- picking

    def _picked(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is None:
            return
        check = item.data(Qt.ItemDataRole.UserRole)
        self.path_edit.setText(env_folder(check.python, check.path))
        self._show(check)

    def _edited(self, _text: str) -> None:
        self.current = None
        self.prove_button.setEnabled(False)
        self.verdict.set("info", tr("Press Check to see whether the proof can run there."))

    @classmethod
    def choose_dir(cls, parent: QWidget, caption: str, start: str) -> str:
        """Folder chooser (a classmethod so tests can answer for the user)."""
        return QFileDialog.getExistingDirectory(parent, caption, start)

    @classmethod
    def choose_file(cls, parent: QWidget, caption: str, start: str) -> str:
        return QFileDialog.getOpenFileName(parent, caption, start)[0]

    def _start_dir(self) -> str:
        text = self.path_edit.text().strip()
        return str(Path(text).expanduser().parent) if text else str(Path.home())

    def _choose_folder(self) -> None:
        chosen = self.choose_dir(self, tr("The environment's folder"), self._start_dir())
        if chosen:
            self.path_edit.setText(chosen)
            self.check_path()

    def _choose_program(self) -> None:
        chosen = self.choose_file(self, tr("The environment's python program"), self._start_dir())
        if chosen:
            self.path_edit.setText(chosen)
            self.check_path()

    def check_path(self) -> None:
        path = self.path_edit.text().strip()
        if not path or self._checking:
            return
        self._checking = True
        self.prove_button.setEnabled(False)
        self.check_button.setEnabled(False)
        self.verdict.set("busy", tr("Checking {path}…").format(path=path))
        services = self.page.services
        self.page.run_job(lambda ctx: services.check_environment(path), name="check-env",
                          on_result=self._checked, on_error=self._check_failed)

    def _checked(self, check: Any) -> None:
        self._checking = False
        self.check_button.setEnabled(True)
        self._show(check)

    def _check_failed(self, message: str, exc: BaseException) -> None:
        self._checking = False
        self.check_button.setEnabled(True)
        self.verdict.set("fail", tr("The check could not run: {error}").format(error=message))

    def _show(self, check: Any) -> None:
        self.current = check
        self.verdict.set("pass" if check.ok else "warn", render(check.message, current_language()))
        self.prove_button.setEnabled(bool(check.ok) and not self.page.busy_testing())

    def _prove(self) -> None:
        if self.current is not None and self.current.ok and not self.page.busy_testing():
            self.on_prove(self.current)
