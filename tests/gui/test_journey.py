"""The journey as tests (issue 21): a beginner on a computer without an NVIDIA GPU installs JAX with the wizard,
and is interrupted the ways people are — the window closed while pip runs, Cancel with each of its answers, the
app killed with SIGKILL — then opens it again, continues, and gets the proof; in English and in Chinese.

Everything is real except the network and the framework's size: the wizard's pages, the core's resolver, planner,
installer (journal, resume, file and import checks) and self-test; pip, from a package index on 127.0.0.1 with real
small wheels (tests/gui/journey.py: a stand-in JAX that computes with numpy, the numpy installed here, a slow
package that keeps pip busy for ~10 s); the app killed is its own process in a real X server (Xvfb).

Every case asserts what the user sees (the page's title and verdict sentence, each step's ✓/✗, the language) and
what is on disk (``import jax`` in the environment the install made, or the step is not ✓). tests/gui/README.md
maps every cell of the journey matrix to its test.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest
from journey import (
    JourneyServices,
    imports,
    isolate,
    kill_hard,
    pip_into,
    sentence,
    serve_index,
    start_app,
    xcb_check,
    xvfb,
)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard
from test_wizard_flow import click_next, texts, wait_ready
from test_zh_walk import _open_sections, _problems

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_DONE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN, PAGE_VERIFY
from gpusetup.gui.pages.install import DONE, PENDING, RUNNING, InstallPage
from gpusetup.install.journal import Journal
from gpusetup.messages import msg, render

pytestmark = pytest.mark.network
TIMEOUT = 180_000
CJK = re.compile(r"[\u4e00-\u9fff]")
TITLES = {"en": {"installed": "Installed", "installing": "Installing"},
          "zh_CN": {"installed": "已安装", "installing": "正在安装"}}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    with serve_index(tmp_path_factory.mktemp("journey-index")) as idx:
        yield idx


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    return isolate(monkeypatch, tmp_path)


# ------------------------------------------------------------------------------------------ the user's moves

def walk_to_install(qtbot, make_wizard, services: JourneyServices, env: Path, language: str = "en"):
    """Welcome → This computer → Choose (JAX, a new environment in ``env``) → Plan → Install (it starts)."""
    w = make_wizard(services, language=language)
    for page in (PAGE_MACHINE, PAGE_CHOOSE):
        click_next(qtbot, w, page)
        qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    choose = w.currentPage()
    choose.venv_path.setText(str(env))
    for name, box in choose.checks.items():
        box.setChecked(name == "jax")
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    assert [s.id for s in w.state.plan.steps] == ["create-venv", "pip-install", "verify", "check-files", "import",
                                                  "protect"]
    click_next(qtbot, w, PAGE_INSTALL)
    return w, w.currentPage()


def row(inst: InstallPage, sid: str):
    return next(r for r in inst.rows if r.step.id == sid)


def pip_running(inst: InstallPage, env: Path) -> bool:
    return row(inst, "pip-install").state == RUNNING and bool(pip_into(env))


def answer(qtbot, inst: InstallPage, choice: str) -> None:
    """Press the button of the "how should it stop" question that means ``choice`` (any language)."""
    box = inst.question
    assert box is not None and box.isVisible()
    button = next(b for b, c in inst._answers.items() if c == choice)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def finished(qtbot, w, inst: InstallPage) -> None:
    qtbot.waitUntil(lambda: inst.phase == "finished" and not w.running_jobs(), timeout=TIMEOUT)


def reopen_and_continue(qtbot, make_wizard, services: JourneyServices, language: str):
    """A new window on the same state folder: the Welcome page offers to continue; press it."""
    w = make_wizard(services, language=language)
    welcome = w.currentPage()
    qtbot.waitUntil(welcome.resume_card.isVisible, timeout=TIMEOUT)
    assert welcome.resume_button.isEnabled()
    qtbot.mouseClick(welcome.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_INSTALL, timeout=TIMEOUT)
    inst = w.currentPage()
    finished(qtbot, w, inst)
    return w, inst


def assert_installed(w, inst: InstallPage, env: Path, language: str) -> None:
    """What the user sees after a good install, and that it is true on disk."""
    assert w.state.install.ok, w.state.install.message
    assert inst.title() == TITLES[language]["installed"]
    assert [r.state for r in inst.rows] == [DONE] * len(inst.rows), [(r.step.id, r.state) for r in inst.rows]
    ok, error = imports(env, "jax")
    assert ok, f"✓ over a framework that does not import: {error}"


def no_english(w, language: str) -> None:
    """In Chinese, the page (with its sections open, as a beginner may open them) has no English sentence and no
    command-line advice (commands, package names and paths aside): tests/gui/test_zh_walk.py's reading."""
    if language != "zh_CN":
        return
    _open_sections(w.currentPage())
    found = _problems(w, [])
    assert not found, "\n".join(found)


def prove(qtbot, w, env: Path, language: str) -> str:
    """Verify and Done: one sentence for JAX, worded in the page's language, the same on both pages."""
    no_english(w, language)  # the install page, finished
    click_next(qtbot, w, PAGE_VERIFY)
    verify = w.currentPage()
    wait_ready(qtbot, w)
    st = w.state.selftest
    assert st is not None and st.framework_python == str(env / "bin" / "python"), "the proof runs in the new environment"
    [said] = verify.answers
    works = sentence(render(msg("proof.works-cpu-no-gpu", name="JAX", speed="{speed}"), language))
    assert works.fullmatch(said.text), said.text
    assert verify.status.kind == "pass"
    if language == "zh_CN":
        assert CJK.search(said.text) and CJK.search(verify.status.text.text())
    no_english(w, language)
    click_next(qtbot, w, PAGE_DONE)
    wait_ready(qtbot, w)
    assert said.text in texts(w.currentPage()), "Done says what the proof said"
    no_english(w, language)
    return said.text


# ------------------------------------------------------------------------------------------------ the cells

@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_close_during_pip_reopen_continue_and_prove(qtbot, make_wizard, index, home, tmp_path: Path,
                                                    language: str) -> None:
    """Install → close the window while pip runs ("Stop now and quit") → open it again → Continue installation
    → every step ✓ → the proof says JAX works on the processor."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env,
                              language)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    assert inst.title() == TITLES[language]["installing"]
    w.close()
    assert w.isVisible(), "closing asks how to stop first"
    answer(qtbot, inst, inst.STOP_NOW)
    qtbot.waitUntil(lambda: not w.isVisible() and not w.running_jobs(), timeout=TIMEOUT)
    # on disk: pip was stopped at once, JAX is not there, the journal knows the step was in flight
    qtbot.waitUntil(lambda: not pip_into(env), timeout=30_000)
    assert not imports(env, "jax")[0]
    journal = Journal(state / "install")
    assert journal.status() == "unfinished" and list(journal.in_flight()) == ["pip-install"]
    w2, inst2 = reopen_and_continue(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True),
                                    language)
    assert_installed(w2, inst2, env, language)
    assert journal.status() == "finished"
    prove(qtbot, w2, env, language)


def test_close_during_pip_finish_the_step_then_continue_and_prove(qtbot, make_wizard, index, home,
                                                                  tmp_path: Path) -> None:
    """The other answer when closing: pip finishes its step, nothing after it starts, the window closes; opened
    again, the install continues after that step (it is not redone) and is proven."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    w.close()
    answer(qtbot, inst, inst.AFTER_STEP)
    assert w.isVisible(), "it waits for the step"
    qtbot.waitUntil(lambda: not w.isVisible() and not w.running_jobs(), timeout=TIMEOUT)
    assert imports(env, "jax")[0], "the step it let finish is complete"
    journal = Journal(state / "install")
    started = [r["step"] for r in journal.read() if r["event"] == "start"]
    assert started == ["create-venv", "pip-install"] and not journal.in_flight()
    w2, inst2 = reopen_and_continue(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple"), "en")
    assert_installed(w2, inst2, env, "en")
    again = [r["step"] for r in journal.read() if r["event"] == "start"]
    assert again[2:] == ["verify", "check-files", "import", "protect"], "the finished step is not redone"
    prove(qtbot, w2, env, "en")


def test_cancel_during_pip_keep_installing_then_prove(qtbot, make_wizard, index, home, tmp_path: Path) -> None:
    """Cancel, then "Keep installing": nothing stops, the install finishes and is proven."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    answer(qtbot, inst, inst.KEEP)
    assert inst.phase == "running" and inst.cancel_button.isEnabled() and pip_into(env)
    finished(qtbot, w, inst)
    assert_installed(w, inst, env, "en")
    # after the finish there is nothing to cancel: one way on, Next
    assert not inst.cancel_button.isVisible() and inst.isComplete()
    assert Journal(state / "install").status() == "finished"
    prove(qtbot, w, env, "en")


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_cancel_during_pip_stop_now_and_undo(qtbot, make_wizard, index, home, tmp_path: Path, language: str) -> None:
    """Cancel, then "Stop now and undo": pip stops at once, the environment it made is removed, nothing is ✓."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env,
                              language)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    answer(qtbot, inst, inst.STOP_NOW)
    finished(qtbot, w, inst)
    assert not w.state.install.ok and not inst.isComplete()
    assert all(r.state != DONE for r in inst.rows), [(r.step.id, r.state) for r in inst.rows]
    said = inst.status.text.text()
    if language == "zh_CN":
        assert CJK.search(said) and CJK.search(inst.title()), (inst.title(), said)
    else:
        assert inst.title() == "Installation undone" and "Every step that ran was undone" in said
    assert not pip_into(env) and not env.exists()
    assert Journal(state / "install").status() == "rolled-back"


def test_cancel_during_pip_finish_this_step_then_stop_then_continue(qtbot, make_wizard, index, home,
                                                                   tmp_path: Path) -> None:
    """Cancel, then "Finish this step, then stop": pip's step completes, nothing after it; Continue
    installation runs the rest and the proof follows."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    qtbot.mouseClick(inst.cancel_button, Qt.MouseButton.LeftButton)
    answer(qtbot, inst, inst.AFTER_STEP)
    finished(qtbot, w, inst)
    assert inst.title() == "Installation stopped" and not inst.isComplete()
    assert [row(inst, s).state for s in ("create-venv", "pip-install")] == [DONE, DONE]
    assert all(r.state == PENDING for r in inst.rows[2:]), "the checks did not run: not ✓"
    assert imports(env, "jax")[0]
    qtbot.mouseClick(inst.retry_button, Qt.MouseButton.LeftButton)
    finished(qtbot, w, inst)
    assert_installed(w, inst, env, "en")
    prove(qtbot, w, env, "en")


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_killed_during_pip_restart_continue_and_prove(qtbot, make_wizard, index, home, tmp_path: Path,
                                                      language: str) -> None:
    """The app, a process of its own in a real X server, is killed with SIGKILL while pip runs; started again, the
    Welcome page offers to continue; the interrupted step is redone and the proof follows."""
    env, state = tmp_path / "env", tmp_path / "state"
    with xvfb() as display:
        if display is None:
            pytest.skip("Xvfb is not installed (apt-get install xvfb; .ci/run installs it)")
        qt = xcb_check(display)
        if not qt.ok:
            pytest.skip(f"Qt's xcb plugin cannot load here: {qt.reason()} (.ci/run installs what it needs)")
        app = start_app(home, display, state, f"{index.url}/simple", env, language)
        status = state / "app.json"
        deadline = time.monotonic() + TIMEOUT / 1000
        while not pip_into(env) and app.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert app.poll() is None and pip_into(env), app.stdout.read() if app.poll() is not None else "no pip yet"
        seen = json.loads(status.read_text())
        assert seen["platform"] == "xcb" and seen["visible"] and seen["page"] == PAGE_INSTALL, seen
        pips = pip_into(env)
        kill_hard(app)
    # on disk: pip died with the app, nothing is installed, the journal shows the step in flight
    deadline = time.monotonic() + 30
    while any(p.is_running() and p.status() != "zombie" for p in pips) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pip_into(env)
    assert not imports(env, "jax")[0]
    journal = Journal(state / "install")
    assert journal.status() == "unfinished" and list(journal.in_flight()) == ["pip-install"]
    w, inst = reopen_and_continue(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple"), language)
    assert_installed(w, inst, env, language)
    prove(qtbot, w, env, language)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pip_step(w) -> str:
    return " ".join(next(s for s in w.state.plan.steps if s.id == "pip-install").argv)


def use_mirror(qtbot, w, page, url: str) -> None:
    page.pypi_edit.setText(url)
    page.mirrors_button.click()
    qtbot.waitUntil(lambda: page.mirrors_button.isEnabled() and not w.running_jobs(), timeout=TIMEOUT)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_mirror_set_wrong_cleared_and_set(qtbot, make_wizard, index, home, tmp_path: Path, monkeypatch,
                                          language: str) -> None:
    """Where PyPI does not answer (pip's configured index is a closed port): a mistyped mirror is refused on the
    plan page and not used; a mirror that answers is used by the plan; cleared, the plan uses none again, and the
    install stops before changing anything, offering a mirror; set again, the install goes through it and the
    proof follows."""
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed_port()}/simple")
    env, state = tmp_path / "env", tmp_path / "state"
    services = JourneyServices(state, None)  # the plan names no index: pip's own, or the PyPI mirror
    w = make_wizard(services, language=language)
    for page_id in (PAGE_MACHINE, PAGE_CHOOSE):
        click_next(qtbot, w, page_id)
        qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    w.currentPage().venv_path.setText(str(env))
    for name, box in w.currentPage().checks.items():
        box.setChecked(name == "jax")
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    plan_page = w.currentPage()
    assert "--index-url" not in pip_step(w)
    # set wrong: refused, said in the page's language, not used
    wrong = f"http://127.0.0.1:{closed_port()}/pypi/simple"
    use_mirror(qtbot, w, plan_page, wrong)
    status = plan_page.mirrors_status.text.text()
    assert plan_page.mirrors_status.kind == "fail" and "127.0.0.1" in status, status
    assert (CJK.search(status) is not None) == (language == "zh_CN"), status
    assert services.index_url is None and wrong not in pip_step(w)
    # set: checked, used
    good = f"{index.url}/simple"
    use_mirror(qtbot, w, plan_page, good)
    assert plan_page.mirrors_status.kind == "pass", plan_page.mirrors_status.text.text()
    assert f"--index-url {good}" in pip_step(w)
    # cleared: no mirror; the install checks the index before changing anything and offers a mirror
    use_mirror(qtbot, w, plan_page, "")
    assert plan_page.mirrors_status.kind == "pass" and services.index_url == ""
    assert "--index-url" not in pip_step(w)
    click_next(qtbot, w, PAGE_INSTALL)
    inst = w.currentPage()
    finished(qtbot, w, inst)
    out = w.state.install
    assert not out.ok and out.fix == "network" and out.failed_step == "preflight", out.message
    assert inst.fix_card.isVisible() and inst.mirror_edit.isVisible() and not inst.isComplete()
    assert all(r.state != DONE for r in inst.rows)
    assert not env.exists(), "nothing was changed"
    no_english(w, language)

    def try_again(url: str) -> None:
        w.state.install = None
        inst.mirror_edit.setText(url)
        inst.fix_button.click()
        qtbot.waitUntil(lambda: w.state.install is not None and inst.phase == "finished" and not w.running_jobs(),
                        timeout=TIMEOUT)

    # where the install page offers it: set wrong (refused by the check before anything changes), cleared (no
    # mirror again, not the mistyped one), set (the plan is made again through it and installed)
    try_again(wrong)
    assert w.state.install.fix == "network" and f"--index-url {wrong}" in pip_step(w)
    assert "127.0.0.1" in inst.status.text.text() and not env.exists()
    try_again("")
    assert w.state.install.fix == "network" and "--index-url" not in pip_step(w), pip_step(w)
    assert services.index_url is None and not env.exists()
    try_again(good)
    assert f"--index-url {good}" in pip_step(w)
    assert_installed(w, inst, env, language)
    assert any(name.startswith("jax-0.0.1") for name, _ in index.served)
    prove(qtbot, w, env, language)


def test_cancel_after_the_install_finished_changes_nothing(qtbot, make_wizard, index, home, tmp_path: Path) -> None:
    """After the finish there is no install to cancel: the page's Cancel is gone, the window's Cancel closes it
    without a question and undoes nothing; opened again, nothing is offered to continue and JAX still works."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple"), env)
    finished(qtbot, w, inst)
    assert_installed(w, inst, env, "en")
    assert not inst.cancel_button.isVisible()
    cancel = w.button(QWizard.WizardButton.CancelButton)
    assert cancel.isVisible() and cancel.isEnabled()
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert inst.question is None and not w.isVisible(), "nothing running: closed without a question"
    assert Journal(state / "install").status() == "finished" and imports(env, "jax")[0]
    again = make_wizard(JourneyServices(state, f"{index.url}/simple"))
    qtbot.wait(200)
    assert not again.currentPage().resume_card.isVisible()


def test_close_during_pip_reopen_and_undo(qtbot, make_wizard, index, home, tmp_path: Path) -> None:
    """Closed while pip runs, opened again, and the user chooses to undo instead of continuing: the environment
    the install made is removed, nothing is offered to continue any more, and a new install can start."""
    env, state = tmp_path / "env", tmp_path / "state"
    w, inst = walk_to_install(qtbot, make_wizard, JourneyServices(state, f"{index.url}/simple", slow=True), env)
    qtbot.waitUntil(lambda: pip_running(inst, env), timeout=TIMEOUT)
    w.close()
    answer(qtbot, inst, inst.STOP_NOW)
    qtbot.waitUntil(lambda: not w.isVisible() and not w.running_jobs(), timeout=TIMEOUT)
    assert env.exists() and not imports(env, "jax")[0]
    w2 = make_wizard(JourneyServices(state, f"{index.url}/simple"))
    welcome = w2.currentPage()
    qtbot.waitUntil(welcome.resume_card.isVisible, timeout=TIMEOUT)
    qtbot.mouseClick(welcome.discard_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not welcome.resume_card.isVisible() and not w2.running_jobs(), timeout=TIMEOUT)
    assert not env.exists() and Journal(state / "install").status() == "rolled-back"
    assert not JourneyServices(state, None).unfinished_install()
