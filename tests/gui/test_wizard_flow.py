"""Drive the whole wizard as a user would, offscreen, against FakeServices."""

from __future__ import annotations

import json
from pathlib import Path

from fake_services import FakeServices, driver_finding, torch_plan
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWizard

from gpusetup.gui.pages.base import (
    PAGE_CHOOSE,
    PAGE_DONE,
    PAGE_INSTALL,
    PAGE_MACHINE,
    PAGE_PLAN,
    PAGE_VERIFY,
    PAGE_WELCOME,
)
from gpusetup.gui.pages.choose import ChoosePage
from gpusetup.gui.pages.done import DonePage
from gpusetup.gui.pages.install import DONE, FAILED, RUNNING, UNDONE, InstallPage
from gpusetup.gui.pages.machine import MachinePage
from gpusetup.gui.pages.plan import PlanPage
from gpusetup.model import Finding, Severity

TIMEOUT = 5000


def next_button(w: QWizard):
    if w.button(QWizard.WizardButton.CommitButton).isVisible():
        return w.button(QWizard.WizardButton.CommitButton)
    return w.button(QWizard.WizardButton.NextButton)


def wait_idle(qtbot, w: QWizard) -> None:
    """Until background work is done (the page may rightly keep Next off, e.g. after a failed install)."""
    qtbot.waitUntil(lambda: not w.running_jobs() and getattr(w.currentPage(), "phase", "finished") == "finished",
                    timeout=TIMEOUT)
    qtbot.wait(5)


def wait_ready(qtbot, w: QWizard) -> None:
    """Until the current page's background work is done and Next/Finish is enabled."""
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    qtbot.wait(5)  # widgets added to a shown page are shown by a queued event


def click_next(qtbot, w: QWizard, expect: int) -> None:
    wait_ready(qtbot, w)
    btn = next_button(w)
    assert btn.isEnabled()
    qtbot.mouseClick(btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == expect, timeout=TIMEOUT)


def texts(widget) -> str:
    from PySide6.QtWidgets import QAbstractButton, QLabel, QPlainTextEdit

    out = []
    for child in widget.findChildren(QLabel):
        if child.isVisibleTo(widget):
            out.append(child.text())
    for child in widget.findChildren(QAbstractButton):
        if child.isVisibleTo(widget):
            out.append(child.text())
    for child in widget.findChildren(QPlainTextEdit):
        out.append(child.toPlainText())
    return "\n".join(out)


def test_whole_wizard_single_gpu(qtbot, make_wizard, services: FakeServices, tmp_path: Path, monkeypatch) -> None:
    services.findings = [
        Finding(id="cuda-path-note", severity=Severity.INFO, title="CUDA_HOME is not set", detail="Only needed to compile CUDA code.", fix="export CUDA_HOME=/usr/local/cuda"),
        Finding(id="old-kernel", severity=Severity.WARNING, title="The kernel is old", detail="Newer drivers may not build.", fix="sudo apt upgrade"),
    ]
    services.findings.sort(key=lambda f: -f.severity.rank)  # rules.evaluate returns most severe first
    w = make_wizard(services)
    assert w.currentId() == PAGE_WELCOME
    assert not w.button(QWizard.WizardButton.BackButton).isVisible()

    click_next(qtbot, w, PAGE_MACHINE)
    page: MachinePage = w.currentPage()
    wait_ready(qtbot, w)
    shown = texts(page)
    assert "NVIDIA GeForce RTX 3060" in shown
    assert "570.124.04" in shown and "8.6" in shown and "12 GB" in shown
    assert "Found 1 graphics card." in shown
    # findings are listed most severe first, each with its fix and a copy button
    assert [fw.finding.id for fw in page.finding_widgets] == ["old-kernel", "cuda-path-note"]
    first = page.finding_widgets[0]
    assert first.fix_box is not None and first.fix_button is None  # not fixable automatically
    qtbot.mouseClick(first.fix_box.copy, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "sudo apt upgrade"

    click_next(qtbot, w, PAGE_CHOOSE)
    choose: ChoosePage = w.currentPage()
    wait_ready(qtbot, w)
    assert choose.checks["pytorch"].isChecked(), "the resolver's recommendation is preselected"
    assert not choose.checks["tensorflow"].isChecked()
    assert not choose.checks["jax"].isEnabled(), "an impossible framework is disabled"
    assert "no builds for this Python" in choose.checks["jax"].toolTip()
    assert "2.9.1" in choose.notes["pytorch"].text()
    assert choose.r_venv.isChecked()
    venv = tmp_path / "my env"
    choose.venv_path.setText(str(venv))
    choose.checks["tensorflow"].setFocus()
    qtbot.keyClick(choose.checks["tensorflow"], Qt.Key.Key_Space)  # by keyboard
    assert choose.selected() == ["pytorch", "tensorflow"]

    click_next(qtbot, w, PAGE_PLAN)
    plan: PlanPage = w.currentPage()
    wait_ready(qtbot, w)
    assert services.called("build_plan")[-1] == (("pytorch", "tensorflow"), f"venv:{venv}")
    assert next_button(w).text().replace("&", "") == "Install"
    assert plan.script_box is not None and "pip install torch==2.9.1" in plan.script_box.text()
    assert plan.rejected_sections and not plan.rejected_sections[0].expanded()
    plan.rejected_sections[0].button.click()
    assert plan.rejected_sections[0].content.isVisible()
    assert "needs driver 580" in texts(plan.rejected_sections[0])
    script = tmp_path / "install.sh"
    monkeypatch.setattr(PlanPage, "choose_save_path", classmethod(lambda cls, parent, start: str(script)))
    [b for b in plan.findChildren(type(next_button(w))) if b.text() == "Save as script…"][0].click()
    assert script.read_text().startswith("#!/usr/bin/env bash")

    click_next(qtbot, w, PAGE_INSTALL)
    inst: InstallPage = w.currentPage()
    wait_ready(qtbot, w)
    assert [r.state for r in inst.rows] == [DONE, DONE, DONE]
    assert services.called("execute") == [["create-venv", "pip-torch", "verify"]]
    assert services.called("clear_pending"), "a finished install leaves nothing to resume"
    assert "$ python3 -m venv /x" in inst.log.toPlainText()
    assert w.button(QWizard.WizardButton.BackButton).isEnabled(), "no dead end: Back works after the install"

    click_next(qtbot, w, PAGE_VERIFY)
    verify = w.currentPage()
    wait_ready(qtbot, w)
    assert len(verify.rows) == 3
    assert "Your NVIDIA GeForce RTX 3060 works: 87% of its rated matrix-multiply speed." in texts(verify)
    assert "12.3 GB/s" not in texts(verify), "the measurements are behind Details"
    verify.details.set_expanded(True)
    vt = texts(verify)
    assert "12.3 GB/s of 15.8 GB/s rated peak (78%)" in vt or "12.3 GB/s of 15.75" in vt or "(78%)" in vt
    assert "✔ Pass" in vt
    assert "55× faster" in vt  # 11 TFLOP/s over 200 GFLOP/s

    click_next(qtbot, w, PAGE_DONE)
    done: DonePage = w.currentPage()
    dt = texts(done)
    # the fake plan names no interpreter and the fake journal is empty: nothing proved the framework there
    assert "installed into" in dt and "but not proven: the proof did not check it." in dt
    assert "Your NVIDIA GeForce RTX 3060 works: 87% of its rated matrix-multiply speed." in dt
    out = tmp_path / "report.json"
    monkeypatch.setattr(DonePage, "choose_save_path", classmethod(lambda cls, parent, caption, start, f: str(out)))
    done.save_json.click()
    qtbot.waitUntil(lambda: "Report saved to" in done.action_status.text.text(), timeout=TIMEOUT)
    data = json.loads(out.read_text())
    assert data["machine"]["gpus"][0]["name"] == "NVIDIA GeForce RTX 3060"
    assert [p["framework"] for p in data["plans"]] == ["pytorch", "tensorflow"]
    bundle = tmp_path / "b.zip"
    monkeypatch.setattr(DonePage, "choose_save_path", classmethod(lambda cls, parent, caption, start, f: str(bundle)))
    done.bundle.click()
    qtbot.waitUntil(lambda: not w.running_jobs() and bundle.exists(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "Support bundle saved" in done.action_status.text.text(), timeout=TIMEOUT)
    assert w.button(QWizard.WizardButton.FinishButton).isEnabled()


def test_back_and_next_keep_choices_and_settings(qtbot, make_wizard, services: FakeServices, settings, tmp_path: Path) -> None:
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    choose: ChoosePage = w.currentPage()
    wait_ready(qtbot, w)
    choose.checks["tensorflow"].setChecked(True)
    choose.checks["pytorch"].setChecked(False)
    choose.venv_path.setText(str(tmp_path / "tf"))
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.mouseClick(w.button(QWizard.WizardButton.BackButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_CHOOSE)
    wait_ready(qtbot, w)
    assert choose.selected() == ["tensorflow"]
    assert len(services.called("detect")) == 1, "going back does not detect again"
    # nothing selected: Next is disabled
    choose.checks["tensorflow"].setChecked(False)
    assert not next_button(w).isEnabled()
    choose.checks["tensorflow"].setChecked(True)
    click_next(qtbot, w, PAGE_PLAN)
    assert settings.value("choose/frameworks") == "tensorflow"
    assert settings.value("choose/venv") == str(tmp_path / "tf")
    w.resize(900, 700)
    w.save_geometry()
    assert settings.value("ui/geometry") is not None


def answer(qtbot, inst: InstallPage, button: str) -> None:
    """Click ``button`` in the page's open "how to stop" question, as the user would."""
    box = inst.question
    assert box is not None and box.isVisible(), "the question is shown"
    chosen = next(b for b in box.buttons() if b.text() == button)
    qtbot.mouseClick(chosen, Qt.MouseButton.LeftButton)


def test_cancel_in_the_middle_of_an_install_rolls_back(qtbot, make_wizard, services: FakeServices) -> None:
    services.block_install = True
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    inst: InstallPage = w.currentPage()
    qtbot.waitUntil(services.install_started.is_set, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: any(r.state == RUNNING for r in inst.rows), timeout=TIMEOUT)
    assert inst.cancel_button.isVisible()
    assert not w.button(QWizard.WizardButton.CancelButton).isVisible(), "one cancel button, not two"
    assert not next_button(w).isEnabled(), "cannot go on while installing"
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    assert "stopped at once, then every step that ran is undone" in inst.question.informativeText()
    answer(qtbot, inst, "Stop now and undo")
    wait_idle(qtbot, w)
    assert services.called("rollback") == [None]
    assert "Installation cancelled." in inst.status.text.text()
    assert "undone" in inst.status.text.text()
    assert inst.rows[0].state == UNDONE and inst.rows[2].state == "pending", "a step that never ran is not undone"
    assert "undo: removed /x" in inst.log.toPlainText()
    assert services.called("clear_pending")
    assert inst.title() == "Installation undone"
    assert w.button(QWizard.WizardButton.CancelButton).isVisible()


def test_cancel_can_be_refused(qtbot, make_wizard, services: FakeServices) -> None:
    services.block_install = True
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    inst: InstallPage = w.currentPage()
    qtbot.waitUntil(lambda: any(r.state == RUNNING for r in inst.rows), timeout=TIMEOUT)
    inst.request_cancel()
    answer(qtbot, inst, "Keep installing")
    assert w.running_jobs(), "still installing after 'Keep installing'"
    assert services.called("rollback") == [] and inst.phase == "running"
    inst.request_cancel()
    answer(qtbot, inst, "Stop now and undo")
    wait_idle(qtbot, w)


def test_a_failing_step_offers_undo_and_retry(qtbot, make_wizard, services: FakeServices) -> None:
    services.fail_at = "pip-torch"
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    inst: InstallPage = w.currentPage()
    wait_idle(qtbot, w)
    assert [r.state for r in inst.rows][:2] == [DONE, FAILED]
    status = inst.status.text.text()
    assert "Step 2 “Install torch” failed." in status and "pip could not find torch" in status
    assert inst.undo_button.isVisible() and inst.retry_button.isVisible()
    assert inst.log_section.expanded()
    assert "No matching distribution" in inst.log.toPlainText()
    qtbot.mouseClick(inst.retry_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, w)
    assert services.called("resume") == [None]
    assert "Installation finished" in inst.status.text.text()
    assert not inst.retry_button.isVisible()


def test_failing_step_then_undo(qtbot, make_wizard, services: FakeServices) -> None:
    services.fail_at = "pip-torch"
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    inst: InstallPage = w.currentPage()
    wait_idle(qtbot, w)
    qtbot.mouseClick(inst.undo_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, w)
    assert services.called("rollback") == [None]
    assert "your computer is as before" in inst.status.text.text()


def test_machine_with_no_gpu(qtbot, make_wizard, tmp_path: Path) -> None:
    services = FakeServices("no-gpu", state_dir=tmp_path / "s")
    cpu = torch_plan(ok=True)
    cpu.choice.variant = "cpu"
    services.fplans = [cpu]
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    wait_ready(qtbot, w)
    shown = texts(w.currentPage())
    assert "No graphics card was found." in shown
    assert "CPU versions" in shown
    assert "CentOS Stream 8" in shown
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    choose: ChoosePage = w.currentPage()
    assert "CPU version" in choose.notes["pytorch"].text()
    assert choose.checks["pytorch"].isChecked()
    assert not choose.checks["tensorflow"].isEnabled(), "no answer from the resolver: not offered"


def test_no_gpu_resolver_answer_cpu_only(qtbot, make_wizard, tmp_path: Path) -> None:
    from gpusetup.model import Choice, FrameworkPlan

    services = FakeServices("no-gpu", state_dir=tmp_path / "s")
    services.fplans = [FrameworkPlan(framework=fw, ok=False, choice=Choice(version="1.0", variant="cpu")) for fw in ("pytorch", "tensorflow", "jax")]
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    choose: ChoosePage = w.currentPage()
    assert "Only the CPU versions can be installed" in choose.status.text.text()
    assert choose.selected() == ["pytorch"]
    assert "Only the CPU version 1.0" in choose.notes["jax"].text()


def test_machine_with_no_driver_and_do_it_for_me(qtbot, make_wizard, tmp_path: Path, monkeypatch) -> None:
    services = FakeServices("no-driver", state_dir=tmp_path / "s")
    services.findings = [driver_finding()]
    services.fixable = {"driver-missing"}
    services.fplans = [torch_plan(ok=False)]
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    page: MachinePage = w.currentPage()
    wait_ready(qtbot, w)
    shown = texts(page)
    assert "AD107GLM [RTX 2000 Ada Generation Laptop GPU]" in shown
    assert "not working (no NVIDIA driver answered)" in shown
    assert "Some problems need fixing" in shown
    fw = page.finding_widgets[0]
    assert fw.fix_button is not None
    monkeypatch.setattr(MachinePage, "confirm_fix", classmethod(lambda cls, parent, finding, plan: True))
    qtbot.mouseClick(fw.fix_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(services.called("detect")) == 2, timeout=TIMEOUT)
    wait_ready(qtbot, w)
    assert services.called("execute") == [["driver"]]
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    choose: ChoosePage = w.currentPage()
    assert "after a step first" in choose.notes["pytorch"].text()
    click_next(qtbot, w, PAGE_PLAN)
    wait_ready(qtbot, w)
    assert "Install the NVIDIA driver" in texts(w.currentPage())
    assert "sudo ubuntu-drivers install" in texts(w.currentPage())


def test_machine_with_two_gpus(qtbot, make_wizard, tmp_path: Path) -> None:
    services = FakeServices("two-gpus", state_dir=tmp_path / "s")
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    wait_ready(qtbot, w)
    page = w.currentPage()
    from gpusetup.gui.widgets import Card

    cards = [c.accessibleName() for c in page.findChildren(Card) if c.accessibleName().startswith("Graphics card")]
    assert cards == ["Graphics card: NVIDIA GeForce RTX 3060 Mobile / Max-Q", "Graphics card: AMD Cezanne [Radeon Vega Series / Radeon Vega Mobile Series]"]
    shown = texts(page)
    assert "Found 2 graphics cards." in shown
    assert "NVIDIA GeForce RTX 3060 Mobile / Max-Q" in shown
    assert "AMD Cezanne" in shown and "amdgpu" in shown
    assert "Fedora Linux 40" in shown


def test_docker_target_writes_files_and_shows_next_commands(qtbot, make_wizard, services: FakeServices, tmp_path: Path) -> None:
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    choose: ChoosePage = w.currentPage()
    choose.r_docker.setChecked(True)
    choose.docker_path.setText(str(tmp_path / "dock"))
    click_next(qtbot, w, PAGE_PLAN)
    wait_ready(qtbot, w)
    assert next_button(w).text() == "Write the files"
    click_next(qtbot, w, PAGE_INSTALL)
    wait_ready(qtbot, w)
    assert services.called("generate_setup") == [("pytorch", str(tmp_path / "dock"))]
    shown = texts(w.currentPage())
    assert "docker compose up --build" in shown and "Dockerfile" in shown
    assert services.called("execute") == []


def test_missing_core_part_is_said_plainly(qtbot, make_wizard, services: FakeServices) -> None:
    services.unavailable = {"selftest", "docker"}
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE):
        click_next(qtbot, w, page)
    wait_ready(qtbot, w)
    choose: ChoosePage = w.currentPage()
    assert not choose.r_docker.isEnabled()
    assert "not available in this version" in choose.r_docker.toolTip()
    for page in (PAGE_PLAN, PAGE_INSTALL, PAGE_VERIFY):
        click_next(qtbot, w, page)
    wait_ready(qtbot, w)
    assert "not available in this version (selftest)" in w.currentPage().status.text.text()
    click_next(qtbot, w, PAGE_DONE)


def test_resume_after_reboot(qtbot, make_wizard, services: FakeServices) -> None:
    from gpusetup.gui.services import Target
    from gpusetup.model import Plan

    services.pending = (Plan(steps=list(services.steps)), Target("venv", "/x"), ["pytorch"])
    w = make_wizard(services)
    welcome = w.currentPage()
    qtbot.waitUntil(welcome.resume_card.isVisible, timeout=TIMEOUT)  # checked just after the first paint
    qtbot.mouseClick(welcome.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_INSTALL, timeout=TIMEOUT)
    wait_ready(qtbot, w)
    assert services.called("resume") == [None]
    assert services.called("execute") == []
    assert "Installation finished" in w.currentPage().status.text.text()
    click_next(qtbot, w, PAGE_VERIFY)
    wait_ready(qtbot, w)
    assert services.called("detect"), "verify detects the machine it did not see yet"


def test_reboot_needed_keeps_the_resume_file(qtbot, make_wizard, services: FakeServices) -> None:
    services.reboot_after = "create-venv"
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    wait_ready(qtbot, w)
    inst = w.currentPage()
    assert "restart your computer" in inst.status.text.text()
    assert [r.state for r in inst.rows] == [DONE, "pending", "pending"], "steps after the restart have not run"
    assert services.called("save_pending") and not services.called("clear_pending")


def test_quitting_while_installing_asks_how_to_stop(qtbot, make_wizard, services: FakeServices) -> None:
    services.block_install = True
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    qtbot.waitUntil(services.install_started.is_set, timeout=TIMEOUT)
    inst: InstallPage = w.currentPage()
    w.reject()
    assert w.isVisible() and inst.question is not None
    assert "the running step is stopped at once and GPU Setup quits" in inst.question.informativeText()
    answer(qtbot, inst, "Keep installing")
    assert w.isVisible() and w.running_jobs()
    w.reject()
    answer(qtbot, inst, "Stop now and quit")
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=TIMEOUT)
    assert not w.running_jobs() or w.pool.waitForDone(5000)
    assert services.called("rollback") == [], "quitting stops; it does not undo (that is offered next time)"


def test_geometry_is_restored(qtbot, make_wizard, services: FakeServices, settings) -> None:
    from gpusetup.gui.wizard import SetupWizard

    w = make_wizard(services)
    w.resize(751, 571)  # inside the small offscreen screen (restoreGeometry keeps windows on screen)
    w.save_geometry()
    again = SetupWizard(services, settings)
    qtbot.addWidget(again)
    assert (again.width(), again.height()) == (751, 571)
    again.stop_jobs()


def test_rescan_detects_again(qtbot, make_wizard, services: FakeServices) -> None:
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    page: MachinePage = w.currentPage()
    wait_ready(qtbot, w)
    services.machine = FakeServices("two-gpus").machine
    qtbot.mouseClick(page.rescan, Qt.MouseButton.LeftButton)
    assert not next_button(w).isEnabled(), "Next waits for the new scan"
    wait_ready(qtbot, w)
    assert len(services.called("detect")) == 2
    assert "Found 2 graphics cards." in texts(page)


def test_stop_the_self_test(qtbot, make_wizard, services: FakeServices) -> None:
    services.step_delay = 0.2
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    wait_ready(qtbot, w)
    qtbot.mouseClick(next_button(w), Qt.MouseButton.LeftButton)  # into Verify; the test starts at once
    qtbot.waitUntil(lambda: w.currentId() == PAGE_VERIFY, timeout=TIMEOUT)
    verify = w.currentPage()
    qtbot.waitUntil(lambda: bool(w.running_jobs()) and verify.cancel_button.isVisible(), timeout=TIMEOUT)
    qtbot.mouseClick(verify.cancel_button, Qt.MouseButton.LeftButton)
    wait_ready(qtbot, w)
    assert "The test was stopped" in verify.status.text.text()
    assert verify.again_button.isVisible()


def test_undo_an_interrupted_install_and_start_over(qtbot, make_wizard, services: FakeServices) -> None:
    from gpusetup.gui.services import Target
    from gpusetup.model import Plan

    services.pending = (Plan(steps=list(services.steps)), Target("venv", "/x"), ["pytorch"])
    w = make_wizard(services)
    welcome = w.currentPage()
    qtbot.waitUntil(welcome.resume_card.isVisible, timeout=TIMEOUT)  # checked just after the first paint
    qtbot.mouseClick(welcome.discard_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not welcome.resume_card.isVisible(), timeout=TIMEOUT)
    assert services.called("rollback") == [None]
    click_next(qtbot, w, PAGE_MACHINE)


def test_copy_the_report(qtbot, make_wizard, services: FakeServices) -> None:
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    page: MachinePage = w.currentPage()
    wait_ready(qtbot, w)
    assert page.copy_report.isEnabled()
    qtbot.mouseClick(page.copy_report, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: services.called("render_report") == ["text"], timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "RTX 3060" in QGuiApplication.clipboard().text(), timeout=TIMEOUT)


def test_detection_failure_then_rescan(qtbot, make_wizard, services: FakeServices) -> None:
    real_detect = services.detect
    calls = []

    def flaky(progress=None, cancel=None):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("lspci crashed")
        return real_detect(progress, cancel)

    services.detect = flaky
    w = make_wizard(services)
    w.next()
    page: MachinePage = w.currentPage()
    qtbot.waitUntil(lambda: not w.running_jobs() and page.rescan.isEnabled(), timeout=TIMEOUT)
    assert "Looking at your computer failed: lspci crashed" in page.status.text.text()
    assert not next_button(w).isEnabled()
    qtbot.mouseClick(page.rescan, Qt.MouseButton.LeftButton)
    wait_ready(qtbot, w)
    assert "Found 1 graphics card." in page.status.text.text()


def test_plan_that_cannot_be_made_says_why(qtbot, make_wizard, services: FakeServices) -> None:
    def refuse(fplans, machine, target):
        raise ValueError(f"{target.value} exists but is not a virtual environment. Choose a new folder.")

    services.build_plan = refuse
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    qtbot.mouseClick(next_button(w), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_PLAN and not w.running_jobs(), timeout=TIMEOUT)
    plan: PlanPage = w.currentPage()
    assert "exists but is not a virtual environment" in plan.status.text.text()
    assert not next_button(w).isEnabled(), "no plan, no Install"
    assert w.button(QWizard.WizardButton.BackButton).isEnabled(), "the user can go back and choose again"


def test_plan_refusal_is_worded_in_chinese_without_cli_flags(qtbot, make_wizard, services: FakeServices) -> None:
    from gpusetup.install.plan import PlanError
    from gpusetup.messages import msg

    def refuse(fplans, machine, target):
        raise PlanError(msg("plan-error.not-a-venv", path=target.value))

    services.build_plan = refuse
    w = make_wizard(services, language="zh_CN")
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    qtbot.mouseClick(next_button(w), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_PLAN and not w.running_jobs(), timeout=TIMEOUT)
    shown = w.currentPage().status.text.text()
    assert "已经存在，但不是虚拟环境" in shown and "--target" not in shown
    # the CLI keeps the exact English with the flag
    assert "--target venv:PATH" in str(PlanError(msg("plan-error.not-a-venv", path="/x")))
