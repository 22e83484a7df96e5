"""GUI test fixtures: a wizard over FakeServices, settings in tmp_path, no real dialogs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from fake_services import FakeServices  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from gpusetup.gui import i18n, theme  # noqa: E402
from gpusetup.gui.wizard import SetupWizard  # noqa: E402


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def services(tmp_path: Path) -> FakeServices:
    return FakeServices("rtx3060", state_dir=tmp_path / "state")


@pytest.fixture(autouse=True)
def no_real_dialogs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that forgets to answer a dialog fails instead of hanging."""

    def refuse(*args: object, **kwargs: object) -> QMessageBox.StandardButton:
        raise AssertionError(f"an unexpected dialog was opened: {args[1:3]!r}")

    monkeypatch.setattr(QMessageBox, "question", refuse)


@pytest.fixture
def make_wizard(qtbot, settings: QSettings) -> Iterator[Callable[..., SetupWizard]]:
    made: list[SetupWizard] = []

    def make(services: FakeServices, language: str = "en", scheme: str = "light") -> SetupWizard:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        i18n.install(language)
        theme.apply(app, scheme)
        w = SetupWizard(services, settings, language, scheme)
        qtbot.addWidget(w)
        w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop_jobs(5000)
    i18n.install("en")
