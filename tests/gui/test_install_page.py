"""The Install page's words for where an install stands, over FakeServices: each step's estimate before it runs
and its time left while it runs, the header after success or failure, and no offer to undo what never ran
(issue 21: "the Docker path refuses … then offers to undo steps that never ran"; "the Install header keeps
saying 'Installing' after success or failure")."""

from __future__ import annotations

from pathlib import Path

from fake_services import FakeServices
from PySide6.QtWidgets import QWizard
from test_wizard_flow import click_next, wait_idle, wait_ready

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.pages.install import PENDING, RUNNING, InstallPage
from gpusetup.gui.services import DockerOutcome, InstallOutcome
from gpusetup.messages import msg

TIMEOUT = 5000


def to_install(qtbot, w) -> InstallPage:
    for page in (PAGE_MACHINE, PAGE_CHOOSE, PAGE_PLAN, PAGE_INSTALL):
        click_next(qtbot, w, page)
    return w.currentPage()


def test_each_step_shows_its_estimate_then_its_time_left(qtbot, make_wizard, services: FakeServices) -> None:
    services.block_install = True
    services.estimates = {"pip-torch": 4, "verify": 1}
    w = make_wizard(services)
    inst = to_install(qtbot, w)
    qtbot.waitUntil(lambda: inst.rows[1].state == RUNNING, timeout=TIMEOUT)
    assert inst.rows[2].state == PENDING and inst.rows[2].detail.text() == "about 1 min"
    assert not inst.rows[0].detail.isVisible(), "no estimate where nothing was measured"
    inst._on_progress("Install torch — Downloading torch 40% (120 of 300 MB, 12.3 MB/s); this step: about 2 min left", 0.4)
    assert inst.rows[1].detail.text() == "Downloading torch 40% (120 of 300 MB, 12.3 MB/s); this step: about 2 min left"
    services.release_install.set()
    wait_ready(qtbot, w)
    assert inst.title() == "Installed" and not any(r.detail.isVisible() for r in inst.rows)


def test_estimates_in_chinese(qtbot, make_wizard, services: FakeServices) -> None:
    services.block_install = True
    services.estimates = {"verify": 3}
    w = make_wizard(services, language="zh_CN")
    inst = to_install(qtbot, w)
    qtbot.waitUntil(lambda: inst.rows[1].state == RUNNING, timeout=TIMEOUT)
    assert inst.rows[2].detail.text() == "约 3 分钟" and inst.title() == "正在安装"
    services.release_install.set()
    wait_ready(qtbot, w)
    assert inst.title() == "已安装"


def test_header_after_a_failure_and_no_undo_when_nothing_ran(qtbot, make_wizard, services: FakeServices,
                                                             monkeypatch) -> None:
    w = make_wizard(services)
    # the checks before anything changes failed (a mirror that cannot be reached): nothing ran, nothing to undo
    monkeypatch.setattr(services, "execute", lambda plan, **kw: InstallOutcome(
        ok=False, failed_step="preflight", fix="network", said=msg("install.exec.network", error="Cannot reach x.")))
    inst = to_install(qtbot, w)
    wait_idle(qtbot, w)
    assert inst.title() == "The installation did not finish"
    assert not inst.undo_button.isVisible() and inst.retry_button.isVisible()
    assert "Nothing was changed." in inst.status.text.text()
    assert w.button(QWizard.WizardButton.CancelButton).isVisible()


def test_a_refused_docker_setup_offers_no_undo(qtbot, make_wizard, services: FakeServices, tmp_path: Path,
                                              monkeypatch) -> None:
    monkeypatch.setattr(services, "generate_setup", lambda machine, fw, out_dir: DockerOutcome(
        ok=False, out_dir=str(out_dir), refused="no working NVIDIA driver", alternative="install the driver first"))
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    wait_ready(qtbot, w)
    choose = w.currentPage()
    choose.r_docker.setChecked(True)
    choose.docker_path.setText(str(tmp_path / "dock"))
    click_next(qtbot, w, PAGE_PLAN)
    click_next(qtbot, w, PAGE_INSTALL)
    inst = w.currentPage()
    wait_idle(qtbot, w)
    assert inst.title() == "Docker setup not written"
    assert not inst.undo_button.isVisible(), "nothing ran: nothing to undo"
    assert not inst.retry_button.isVisible()
