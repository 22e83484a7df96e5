"""The Secure Boot one-time password in the wizard (issue 26): the driver step requests a key enrolment (the
installers' own ``enrol_key`` against a stand-in mokutil, tests/install/mok_standin.py); the install page shows
the password in a box, with what to do at the restart in the page's language, and the box stays until the
window closes. The password is in no file of the state folder: not the journal, not the wizard's log."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest
from test_wizard_flow import click_next, texts

from gpusetup.gui.app import setup_file_log
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.pages.install import DONE, PENDING, InstallPage
from gpusetup.gui.services import Services
from gpusetup.model import Plan, Step

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from install.mok_standin import files_under, mok_driver_step  # noqa: E402

TIMEOUT = 120_000


class DriverServices(Services):
    """The real core; the plan is the driver's part of a plan for a GPU without its driver."""

    def __init__(self, state_dir: Path, standin: Path) -> None:
        super().__init__(state_dir)
        self.standin = standin

    def build_plan(self, fplans, machine, target):  # noqa: ANN001 - Services' signature
        return Plan(steps=[
            Step(id="driver", title="Install the NVIDIA driver", argv=mok_driver_step(self.standin)),
            Step(id="reboot", title="Restart the computer", kind="reboot"),
            Step(id="check", title="Check the driver", argv=[sys.executable, "-c", "pass"]),
        ])


@pytest.fixture
def wizard_log(tmp_path: Path):
    path = setup_file_log(tmp_path / "state" / "logs")
    yield path
    root = logging.getLogger("gpusetup")
    for h in [h for h in root.handlers if isinstance(h, logging.FileHandler)]:
        root.removeHandler(h)
        h.close()


@pytest.mark.parametrize(("language", "words"), [("en", "Enroll MOK"), ("zh_CN", "请现在记下这个一次性密码")])
def test_the_install_page_keeps_the_password_on_screen_and_out_of_every_file(
        qtbot, make_wizard, tmp_path: Path, wizard_log, monkeypatch, language: str, words: str) -> None:
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "home"))
    services = DriverServices(tmp_path / "state", tmp_path / "standin")
    w = make_wizard(services, language=language)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN):
        click_next(qtbot, w, page)
        qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_INSTALL)
    inst: InstallPage = w.currentPage()
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert w.state.install.needs_reboot, w.state.install.message
    assert [r.state for r in inst.rows] == [DONE, PENDING, PENDING], (inst.title(), inst.status.text.text())
    # what the user sees: the password, big, and what to do with it, in the page's language
    assert inst.secret_card.isVisible()
    password = inst.secret_value.text()
    assert re.fullmatch(r"\d{8}", password), password
    shown = texts(inst)
    assert password in inst.secret_text.text() and words in inst.secret_text.text() and "“Enroll MOK”" in shown
    assert inst.secret_card.title.text() == ("Secure Boot: your one-time password" if language == "en"
                                             else "安全启动：您的一次性密码")
    # what is on disk: nowhere (journal, plan, wizard log), nor in the page's own log view
    assert wizard_log is not None and wizard_log.is_file() and "install outcome" in wizard_log.read_text()
    leaked = [str(p) for folder in (tmp_path / "state", tmp_path / "home") if folder.exists()
              for p, text in files_under(folder).items() if password in text]
    assert not leaked, leaked
    assert password not in inst.log.toPlainText() and "mokutil --import" in inst.log.toPlainText()
    # it stays until the window closes: the page reworded for what happens next, and the box is still there
    inst._autostart_changed()
    inst._buttons()
    assert inst.secret_card.isVisible() and inst.secret_value.text() == password
    w.back()
    qtbot.waitUntil(lambda: w.currentId() == PAGE_PLAN, timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_INSTALL)
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert inst.secret_card.isVisible() and inst.secret_value.text() == password


def test_a_language_switch_after_the_install_keeps_the_password_on_screen(
        qtbot, settings, tmp_path: Path, wizard_log, monkeypatch) -> None:
    """The password is on no disk, and picking another language rebuilds the window: the new window shows the
    password again, worded in the new language, on the Welcome page the switch lands on and on the install page."""
    from gpusetup.gui import i18n
    from gpusetup.gui.app import WizardApp
    from gpusetup.gui.pages.base import PAGE_WELCOME

    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "home"))
    services = DriverServices(tmp_path / "state", tmp_path / "standin")
    wa = WizardApp(services, settings, language="en", scheme="light")
    try:
        w = wa.wizard
        qtbot.addWidget(w)
        w.show()
        for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN):
            click_next(qtbot, w, page)
            qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
        click_next(qtbot, w, PAGE_INSTALL)
        inst: InstallPage = w.currentPage()
        qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
        password = inst.secret_value.text()
        assert re.fullmatch(r"\d{8}", password), password
        # back to Welcome, as a user does, and pick 简体中文 there
        w.go_to(PAGE_WELCOME)
        assert w.currentId() == PAGE_WELCOME
        welcome = w.currentPage()
        assert welcome.secret_card.isVisible() and welcome.secret_card.value.text() == password
        welcome.language.setCurrentIndex(welcome.language.findData("zh_CN"))
        new = wa.wizard
        assert new is not w
        qtbot.addWidget(new)
        card = new.currentPage().secret_card
        assert new.currentId() == PAGE_WELCOME and card.isVisible()
        assert card.value.text() == password
        assert card.title.text() == "安全启动：您的一次性密码"
        assert password in card.text.text() and "请现在记下这个一次性密码" in card.text.text()
        new_inst = new.pages[PAGE_INSTALL]
        assert new_inst.secret_card.isVisibleTo(new_inst) and new_inst.secret_value.text() == password  # (page not shown yet)
        assert "请现在记下这个一次性密码" in new_inst.secret_text.text()
        # still on no disk after the switch (the settings file holds the language, not the password)
        leaked = [str(p) for folder in (tmp_path / "state", tmp_path / "home") if folder.exists()
                  for p, text in files_under(folder).items() if password in text]
        assert not leaked, leaked
        assert password not in str({k: settings.value(k) for k in settings.allKeys()})
    finally:
        wa.wizard.stop_jobs(5000)
        i18n.install("en")
