"""The Install page's Cancel, Close and Repair, for real: the wizard (offscreen) over the real core installs from
a package index on 127.0.0.1 with real pip into a new environment, and each test asserts what the user sees
(the question, the status, the title, the steps) and what is on disk (the environment, the package, the journal).

Issue 21: the dialog said the install stops "after the current step" while pip was killed at once; answering
"是" left a spinner "当前步骤完成后停止..." forever; the install finished under the open question; two cancel
buttons; the header kept saying "Installing" after success or failure.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import zipfile
from http.server import ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWizard
from test_wizard_flow import click_next, texts

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.pages.install import DONE, FAILED, PENDING, RUNNING, UNDONE, InstallPage
from gpusetup.gui.services import Services
from gpusetup.install.journal import Journal
from gpusetup.model import Choice, FrameworkPlan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from install.stand_ins import HOST_PIP_ENV_DROP, Index, _handler, build_wheel, layered_wheel  # noqa: E402

pytestmark = pytest.mark.network
TIMEOUT = 120_000


@pytest.fixture(scope="module")
def slow_index(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("stop-index")
    slow = build_wheel(root, "slowpkg", "1.0", payload=3 * 1024 * 1024)  # served in small slow chunks (~10 s)
    fast = build_wheel(root, "fastpkg", "1.0")
    (root / "good").mkdir()
    good = layered_wheel(root / "good", "liar", "0.0.1", {"liar/__init__.py": b"__version__ = '0.0.1'\n"})
    bad = root / good.name  # the same wheel with a file unlike its RECORD (pip installs it without a word)
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"__version__ = 'not what RECORD says'\n" if item.filename == "liar/__init__.py"
                         else src.read(item.filename))
    idx = Index(root)
    idx.layouts = {"simple": [slow, fast], "liar": [bad]}
    idx.good_liar = good  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield idx
    server.shutdown()
    server.server_close()


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in HOST_PIP_ENV_DROP:
        monkeypatch.delenv(k, raising=False)
    for k, v in {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
                 "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "GPUSETUP_HOME": str(tmp_path / "gpusetup"),
                 "PIP_NO_CACHE_DIR": "1", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
                 "GPUSETUP_LIVE": "off"}.items():
        monkeypatch.setenv(k, v)


class LocalServices(Services):
    """The real core; the resolver's answer is a package of the local index (as tests/gui/test_real_journey)."""

    def __init__(self, state_dir: Path, url: str, package: str) -> None:
        super().__init__(state_dir)
        self.url, self.package = url, package

    def resolve(self, machine, frameworks=(), python_version=None):  # noqa: ANN001 - Services' signature
        real = super().resolve(machine, frameworks, python_version)
        mine = FrameworkPlan(framework="pytorch", ok=True, choice=Choice(
            version="1.0", variant="cpu", index_url=self.url, packages=[self.package]))
        return [mine] + [p for p in real if p.framework != "pytorch"]

    def build_plan(self, fplans, machine, target):  # noqa: ANN001 - Services' signature
        # an environment without its own pip, installed into by this test's pip: seconds, not a minute
        return self._install_module().build_plan(fplans, machine, target=target.spec(), with_pip=False,
                                                 host_pip=True)


def to_install(qtbot, make_wizard, services: LocalServices, env: Path, language: str = "en") -> tuple:
    w = make_wizard(services, language=language)
    for page in (PAGE_MACHINE, PAGE_CHOOSE):
        click_next(qtbot, w, page)
        qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    choose = w.currentPage()
    choose.venv_path.setText(str(env))
    for name, box in choose.checks.items():
        box.setChecked(name == "pytorch")
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_INSTALL)
    inst: InstallPage = w.currentPage()
    return w, inst


def row(inst: InstallPage, sid: str):
    return next(r for r in inst.rows if r.step.id == sid)


def answer(qtbot, inst: InstallPage, button: str) -> None:
    box = inst.question
    assert box is not None and box.isVisible()
    qtbot.mouseClick(next(b for b in box.buttons() if b.text() == button), Qt.MouseButton.LeftButton)


def downloading(inst: InstallPage) -> bool:
    return row(inst, "pip-install").state == RUNNING and "%" in inst.progress.text.text()


def pip_of(env: Path) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if str(env) in " ".join(p.info["cmdline"] or [])
            and "pip" in " ".join(p.info["cmdline"] or [])]


def imports(env: Path, module: str) -> bool:
    return subprocess.run([str(env / "bin/python"), "-I", "-c", f"import {module}"]).returncode == 0


def test_stop_now_and_undo_stops_pip_at_once_and_removes_what_ran(qtbot, make_wizard, slow_index, isolated,
                                                                  tmp_path: Path) -> None:
    env = tmp_path / "env"
    services = LocalServices(tmp_path / "state", f"{slow_index.url}/simple", "slowpkg==1.0")
    w, inst = to_install(qtbot, make_wizard, services, env)
    qtbot.waitUntil(lambda: downloading(inst), timeout=TIMEOUT)
    assert inst.title() == "Installing"
    assert inst.cancel_button.isVisible() and not w.button(QWizard.WizardButton.CancelButton).isVisible()
    assert row(inst, "check-files").state == PENDING and row(inst, "import").state == PENDING
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    assert sorted(b.text() for b in inst.question.buttons()) == ["Finish this step, then stop", "Keep installing",
                                                                 "Stop now and undo"]
    answer(qtbot, inst, "Stop now and undo")
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=30_000)
    # what the user sees
    assert inst.title() == "Installation undone"
    assert inst.status.text.text() == ("Installation cancelled. Every step that ran was undone; your computer is as "
                                       "before.")
    assert [r.state for r in inst.rows[:2]] == [UNDONE, UNDONE]
    assert all(r.state == PENDING for r in inst.rows[2:]), "steps that never ran are not said to be undone"
    assert not inst.undo_button.isVisible() and inst.retry_button.isVisible()
    assert "Stopping after the current step" not in texts(inst)
    # what is on disk: pip was stopped, the environment this install created is gone, the journal says so
    assert not pip_of(env)
    assert not env.exists()
    assert Journal(tmp_path / "state" / "install").status() == "rolled-back"


def test_finish_this_step_then_stop_and_continue_later(qtbot, make_wizard, slow_index, isolated,
                                                       tmp_path: Path) -> None:
    env = tmp_path / "env"
    services = LocalServices(tmp_path / "state", f"{slow_index.url}/simple", "slowpkg==1.0")
    w, inst = to_install(qtbot, make_wizard, services, env)
    qtbot.waitUntil(lambda: downloading(inst), timeout=TIMEOUT)
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    answer(qtbot, inst, "Finish this step, then stop")
    assert inst.status.text.text().startswith("Finishing “") and "nothing after it will start" in inst.status.text.text()
    assert not inst.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert inst.title() == "Installation stopped"
    assert inst.status.text.text().startswith("Stopped as you asked")
    assert [row(inst, s).state for s in ("create-venv", "pip-install")] == [DONE, DONE]
    assert row(inst, "verify").state == PENDING and row(inst, "import").state == PENDING
    # the step finished for real, and nothing after it ran
    assert imports(env, "slowpkg")
    journal = Journal(tmp_path / "state" / "install")
    assert [r["step"] for r in journal.read() if r["event"] == "start"] == ["create-venv", "pip-install"]
    assert inst.undo_button.isVisible() and inst.retry_button.text() == "&Continue installation"
    qtbot.mouseClick(inst.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert w.state.install.ok, w.state.install.message
    assert inst.title() == "Installed" and all(r.state == DONE for r in inst.rows)
    assert journal.status() == "finished"


def test_the_question_closes_itself_when_the_install_ends_under_it(qtbot, make_wizard, slow_index, isolated,
                                                                    tmp_path: Path) -> None:
    env = tmp_path / "env"
    services = LocalServices(tmp_path / "state", f"{slow_index.url}/simple", "fastpkg==1.0")
    w, inst = to_install(qtbot, make_wizard, services, env, language="zh_CN")
    qtbot.waitUntil(lambda: inst.phase == "running" and inst._job is not None, timeout=TIMEOUT)
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)  # and then the user does not answer
    box = inst.question
    assert box is not None and box.text() == "要怎样停止安装？"
    assert sorted(b.text() for b in box.buttons()) == sorted(["立即停止并撤销", "完成这一步后停止", "不停止，继续安装"])
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert inst.question is None and (not shiboken6.isValid(box) or not box.isVisible()), "it closed itself"
    assert not [m for m in w.findChildren(QMessageBox) if m.isVisible()]
    assert w.state.install.ok
    assert inst.status.text.text() == "在您回答之前安装已经完成，所以没有停止任何步骤。安装完成并已检查。点击“下一步”来验证它能正常工作。"
    assert inst.title() == "已安装" and inst.isComplete()
    assert imports(env, "fastpkg")


def test_closing_the_window_can_finish_the_step_then_quit(qtbot, make_wizard, slow_index, isolated,
                                                          tmp_path: Path) -> None:
    env = tmp_path / "env"
    services = LocalServices(tmp_path / "state", f"{slow_index.url}/simple", "slowpkg==1.0")
    w, inst = to_install(qtbot, make_wizard, services, env)
    qtbot.waitUntil(lambda: downloading(inst), timeout=TIMEOUT)
    w.close()
    assert w.isVisible(), "closing asks first"
    assert "Finish this step: the running step ends normally" in inst.question.informativeText()
    answer(qtbot, inst, "Finish this step, then quit")
    assert w.isVisible(), "…and waits for the step"
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=TIMEOUT)
    assert imports(env, "slowpkg"), "the step it finished is complete"
    journal = Journal(tmp_path / "state" / "install")
    assert journal.status() == "unfinished" and not journal.in_flight()
    assert [r.get("reason") for r in journal.read() if r["event"] == "stopped"] == ["stopped-by-user"]


def test_a_failed_file_check_offers_repair(qtbot, make_wizard, slow_index, isolated, tmp_path: Path) -> None:
    env = tmp_path / "env"
    services = LocalServices(tmp_path / "state", f"{slow_index.url}/whl/liar", "liar==0.0.1")
    w, inst = to_install(qtbot, make_wizard, services, env)
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    out = w.state.install
    assert not out.ok and out.failed_step == "check-files" and out.fix == "repair", out.message
    assert inst.title() == "The installation did not finish" and row(inst, "check-files").state == FAILED
    assert row(inst, "import").state == PENDING and not inst.isComplete(), "never ✓ over a broken install"
    assert inst.repair_button.isVisible() and not inst.retry_button.isVisible()
    assert "Repair reinstalls what is broken and checks again" in inst.status.text.text()
    # the wizard's own buttons, not the command line's (it said "gpusetup install --repair … --rollback")
    assert not re.search(r"gpusetup (?:install|bundle)|--re|--rollback", inst.status.text.text()), inst.status.text.text()
    served = slow_index.layouts["liar"][0]
    served.write_bytes(slow_index.good_liar.read_bytes())  # the mirror now serves the wheel as it should be
    qtbot.mouseClick(inst.repair_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)
    assert w.state.install.ok, w.state.install.message
    assert inst.title() == "Installed" and inst.isComplete()
    assert (next(env.glob("lib/python3*/site-packages")) / "liar/__init__.py").read_text() == "__version__ = '0.0.1'\n"
