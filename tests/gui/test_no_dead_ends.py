"""No dead ends: Back, Try again and "Change my choice" after a failure, a cancel and a success; Next never
leads from a failed install to the proof; a support log is written and its folder can always be found."""

from __future__ import annotations

import logging
from pathlib import Path

from fake_services import FakeServices
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QWizard
from test_wizard_flow import click_next, next_button, wait_idle, wait_ready

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN, PAGE_VERIFY
from gpusetup.gui.pages.install import RUNNING, InstallPage

TIMEOUT = 5000


def to_install(qtbot, w) -> InstallPage:
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    return w.currentPage()


def back(w) -> QWizard:
    return w.button(QWizard.WizardButton.BackButton)


def test_after_a_failure_next_is_off_and_change_my_choice_leads_to_a_new_plan(qtbot, make_wizard,
                                                                             services: FakeServices, tmp_path) -> None:
    services.fail_at = "pip-torch"
    w = make_wizard(services)
    inst = to_install(qtbot, w)
    wait_idle(qtbot, w)
    assert not inst.isComplete() and not next_button(w).isEnabled(), "a failed install does not lead to Verify"
    assert back(w).isEnabled() and inst.change_button.isVisible() and inst.retry_button.isVisible()
    qtbot.mouseClick(inst.change_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_CHOOSE, timeout=TIMEOUT)
    choose = w.currentPage()
    choose.venv_path.setText(str(tmp_path / "another env"))
    services.fail_at = None
    click_next(qtbot, w, PAGE_PLAN)
    wait_ready(qtbot, w)
    assert services.called("build_plan")[-1][1] == f"venv:{tmp_path / 'another env'}"
    click_next(qtbot, w, PAGE_INSTALL)
    wait_ready(qtbot, w)
    assert len(services.called("execute")) == 2 and w.state.install.ok
    click_next(qtbot, w, PAGE_VERIFY)


def test_after_a_cancel_back_and_try_again_start_the_plan_afresh(qtbot, make_wizard, services: FakeServices,
                                                                monkeypatch) -> None:
    services.block_install = True
    w = make_wizard(services)
    inst = to_install(qtbot, w)
    qtbot.waitUntil(lambda: any(r.state == RUNNING for r in inst.rows), timeout=TIMEOUT)
    inst.completeChanged.emit()  # QWizard recomputes its buttons: Back must stay off while installing
    assert not back(w).isEnabled()
    inst.request_cancel()
    inst.stop(InstallPage.STOP_NOW)  # "Stop now and undo"
    wait_idle(qtbot, w)
    assert "Installation cancelled." in inst.status.text.text()
    assert back(w).isEnabled() and not next_button(w).isEnabled()
    assert inst.retry_button.isVisible() and not inst.undo_button.isVisible()
    services.block_install = False
    qtbot.mouseClick(inst.retry_button, Qt.MouseButton.LeftButton)
    wait_ready(qtbot, w)
    assert len(services.called("execute")) == 2 and services.called("resume") == []
    qtbot.mouseClick(back(w), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_PLAN, timeout=TIMEOUT)


def test_after_success_back_and_next_do_not_install_twice(qtbot, make_wizard, services: FakeServices) -> None:
    w = make_wizard(services)
    to_install(qtbot, w)
    wait_ready(qtbot, w)
    assert back(w).isEnabled()
    qtbot.mouseClick(back(w), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_PLAN, timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_INSTALL)
    wait_ready(qtbot, w)
    assert len(services.called("execute")) == 1, "the same plan is not run a second time"
    click_next(qtbot, w, PAGE_VERIFY)
    wait_ready(qtbot, w)
    qtbot.mouseClick(back(w), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_INSTALL, timeout=TIMEOUT)
    inst = w.currentPage()
    qtbot.mouseClick(inst.change_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_CHOOSE, timeout=TIMEOUT)


def test_the_session_is_logged_and_the_log_folder_can_always_be_found(qtbot, make_wizard, services: FakeServices,
                                                                     monkeypatch) -> None:
    from gpusetup.gui.app import setup_file_log

    path = setup_file_log(services.log_dir)
    try:
        w = make_wizard(services)
        inst = to_install(qtbot, w)
        wait_ready(qtbot, w)
        for h in logging.getLogger("gpusetup").handlers:
            h.flush()
        text = Path(path).read_text(encoding="utf-8")
        assert "page: install" in text and "job install finished in" in text
        assert "$ python3 -m venv /x" in text and "install outcome: ok=True" in text
        # no file manager here: the path is shown with a Copy button instead of nothing happening
        monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: False))
        w.setCurrentId(PAGE_INSTALL)
        done = w.pages[6]
        done._open_logs()
        dialog = done.log_dialog
        assert dialog is not None and dialog.isVisible() and dialog.path.text() == str(services.log_dir)
        qtbot.mouseClick(dialog.copy, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == str(services.log_dir)
        dialog.close()
        assert inst is not None
    finally:
        root = logging.getLogger("gpusetup")
        for h in list(root.handlers):
            if getattr(h, "baseFilename", "") == str(path):
                root.removeHandler(h)
                h.close()


def test_demo_verify_shows_the_recorded_gpu_with_its_verdict_in_both_languages(qtbot, make_wizard, tmp_path) -> None:
    from gpusetup.gui import i18n
    from gpusetup.gui.demo import DemoServices

    for lang, words, recording in (("en", "Your NVIDIA A100-SXM4-40GB works", "A recording"),
                                   ("zh_CN", "您的 NVIDIA A100-SXM4-40GB 可以工作", "这是录制的结果")):
        services = DemoServices("a100", state_dir=tmp_path / lang, step_delay=0)
        w = make_wizard(services, language=lang)
        try:
            for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL, PAGE_VERIFY):
                click_next(qtbot, w, page)
            wait_ready(qtbot, w)
            verify = w.currentPage()
            assert words in verify.status.text.text() and "% " not in verify.status.text.text()[:5]
            assert any(recording in s.text.text() for s in verify.findChildren(type(verify.status)))
            d2d = [r for r in verify.rows if r.measurement.name == "d2d"]
            assert d2d and d2d[0].measurement.rated, "the memory speed is drawn against its rated peak"
        finally:
            w.close()
            i18n.install("en")


def test_a_restart_step_offers_to_continue_by_itself_at_the_next_login(qtbot, make_wizard, services: FakeServices) -> None:
    services.reboot_after = "create-venv"
    w = make_wizard(services)
    inst = to_install(qtbot, w)
    wait_ready(qtbot, w)
    assert inst.autostart_box.isVisible() and inst.autostart_box.isChecked()
    assert services.called("resume_at_login") == [True]
    assert "GPU Setup opens by itself and continues" in inst.status.text.text()
    inst.autostart_box.setChecked(False)
    assert services.called("resume_at_login") == [True, False]
    assert "open GPU Setup again" in inst.status.text.text()


def test_started_with_resume_it_continues_by_itself(qtbot, make_wizard, services: FakeServices) -> None:
    from gpusetup.gui.services import Target
    from gpusetup.model import Plan

    services.pending = (Plan(steps=list(services.steps)), Target("venv", "/x"), ["pytorch"])
    w = make_wizard(services)
    assert w.currentPage().auto_resume()
    qtbot.waitUntil(lambda: w.currentId() == PAGE_INSTALL, timeout=TIMEOUT)
    wait_ready(qtbot, w)
    assert services.called("resume") == [None] and services.called("execute") == []
