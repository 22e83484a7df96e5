"""Verify and Done answer in one sentence per chosen framework, for real, in the environment the installer made —
after the wizard was closed and opened again (the installer's journal says where), never in the wizard's own
environment — and say the same thing from the same result; "Repair…" leads back to the install for that
framework in that environment; the environment picker lists what the installer made first and never the
wizard's own environment without a framework.

The environment is a real venv holding what an interrupted install leaves (tests/selftest/test_proof_cli.py
explains the stand-ins): tensorflow 2.20.0 whose `python` subpackage is missing — issue 21's
"No module named 'tensorflow.python'" — and no JAX. The framework check runs in it for real.
Set GPUSETUP_SHOTS=DIR to keep the pages' screenshots (en and zh_CN).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_wizard_flow import click_next, texts, wait_ready

from gpusetup.gui.demo import demo_machine
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_DONE, PAGE_INSTALL, PAGE_MACHINE, PAGE_VERIFY
from gpusetup.gui.services import InstallOutcome, Services
from gpusetup.install.journal import Journal
from gpusetup.model import Plan, Step

TIMEOUT = 240_000
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def made_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = tmp_path_factory.mktemp("home") / "gpu-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    site = next(env.glob("lib/python3*/site-packages"))
    (site / "tensorflow").mkdir()
    (site / "tensorflow" / "__init__.py").write_text("from tensorflow.python import pywrap_tensorflow  # noqa\n")
    info = site / "tensorflow-2.20.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.20.0\n")
    return env


class RestartServices(Services):
    """The real core (journal, pending file, environment listing, self-test) on a machine without an NVIDIA GPU;
    the install's resume is answered as finished (the installer's own resume is tested in tests/install)."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(state_dir)
        self.selftest_calls: list[tuple[str | None, tuple[str, ...] | None]] = []

    def detect(self, progress=None, cancel=None):  # noqa: ANN001
        return demo_machine("no-gpu")

    def resume(self, progress=None, cancel=None, log_line=None, stop_after=None, repair=False):  # noqa: ANN001
        Journal(self.journal_dir).append("finished", ok=True)
        return InstallOutcome(ok=True)

    def run_selftest(self, machine, mode="quick", progress=None, cancel=None, python=None, frameworks=None):  # noqa: ANN001
        self.selftest_calls.append((python, tuple(frameworks) if frameworks is not None else None))
        return super().run_selftest(machine, mode=mode, progress=progress, cancel=cancel, python=python,
                                    frameworks=frameworks)


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "gpusetup"))
    monkeypatch.setenv("GPUSETUP_LIBCUDA", str(tmp_path / "no-libcuda.so.1"))  # whatever this machine has
    (tmp_path / "home").mkdir()
    return tmp_path / "state"


def interrupted_install(state: Path, env: Path, frameworks: list[str]) -> None:
    """What the wizard and the installer leave when the window is closed during pip: the installer's journal
    and saved plan (with the target's interpreter), and the wizard's pending choice (a plain Plan, which names
    no interpreter — the case where Verify used to test the wizard's own environment)."""
    jdir = state / "install"
    jdir.mkdir(parents=True)
    (jdir / "plan.json").write_text(json.dumps({"target": f"venv:{env}", "python": [str(env / "bin" / "python")],
                                                "steps": [], "packages": ["tensorflow==2.20.*", "jax==0.10.2"]}))
    Journal(jdir).append("plan", target=f"venv:{env}", steps=["create-venv", "pip"])
    Journal(jdir).append("start", step="pip")
    plan = Plan(steps=[Step(id="create-venv", title="Create the environment"), Step(id="pip", title="Install")])
    (state / "wizard-pending.json").write_text(json.dumps({
        "saved_at": "2026-11-22T10:00:00+00:00", "target": {"kind": "venv", "value": str(env)},
        "frameworks": frameworks, "plan": {"steps": [{"id": s.id, "title": s.title} for s in plan.steps]}}))


def shot(w, name: str) -> None:
    if os.environ.get("GPUSETUP_SHOTS"):
        w.resize(900, 760)
        w.grab().save(str(Path(os.environ["GPUSETUP_SHOTS"]) / f"{name}.png"))


def _resume_to_verify(qtbot, w) -> None:
    welcome = w.currentPage()
    qtbot.waitUntil(welcome.resume_card.isVisible, timeout=TIMEOUT)
    qtbot.mouseClick(welcome.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_INSTALL, timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_VERIFY)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    wait_ready(qtbot, w)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_after_a_restart_the_proof_is_about_the_installed_environment(qtbot, make_wizard, made_env: Path,
                                                                       isolated: Path, language: str) -> None:
    interrupted_install(isolated, made_env, ["tensorflow", "jax"])
    services = RestartServices(isolated)
    w = make_wizard(services, language=language)  # a new wizard: nothing in memory from the install
    _resume_to_verify(qtbot, w)
    verify = w.currentPage()
    py = str(made_env / "bin" / "python")
    assert services.selftest_calls == [(py, ("tensorflow", "jax"))], "the journal's environment, the chosen ones"
    tf, jax = verify.answers
    if language == "en":
        assert tf.text == ("TensorFlow is installed but does not start: ModuleNotFoundError: No module named "
                           "'tensorflow.python'.")
        assert jax.text == f"JAX is not installed in {made_env}."
        assert tf.offer_button.text() == "&Repair…" and jax.offer_button.text() == "&Install it…"
        assert verify.status.text.text() == "Not everything works: see below."
    else:
        assert tf.text.startswith("TensorFlow 已安装，但无法启动：") and jax.text == f"{made_env} 中没有安装 JAX。"
        assert tf.offer_button.text() == "修复(&R)…"
    shown = texts(verify)
    assert "PyTorch" not in shown, "never a framework that was not chosen"
    assert sys.prefix not in shown, "never the wizard's own environment"
    assert verify.details is not None and not verify.details.expanded(), "the measurements are behind Details"
    shot(w, f"proof-verify-{language}")
    click_next(qtbot, w, PAGE_DONE)
    wait_ready(qtbot, w)
    done = w.currentPage()
    dt = texts(done)
    for row in verify.answers:  # the same sentences, from the same result
        assert row.text in dt
    if language == "en":
        assert "TensorFlow, JAX installed into" in dt and "but the proof below found a problem." in dt
    else:
        assert "但下面的验证发现了问题" in dt
        for line in dt.splitlines():  # every sentence on Done in Chinese (paths, names and error text aside)
            plain = re.sub(r"/\S+|ModuleNotFoundError.*|TensorFlow|JAX|NVIDIA|[(&A-Z)…]+$", "", line).strip()
            assert not plain or CJK.search(plain) or not re.search(r"[a-z]{3} [a-z]{3}", plain), line
    shot(w, f"proof-done-{language}")


def test_repair_goes_back_to_the_install_for_that_framework_there(qtbot, make_wizard, made_env: Path,
                                                                   isolated: Path) -> None:
    interrupted_install(isolated, made_env, ["tensorflow"])
    services = RestartServices(isolated)
    w = make_wizard(services)
    _resume_to_verify(qtbot, w)
    (tf,) = w.currentPage().answers
    assert tf.answer.status == "broken"
    qtbot.mouseClick(tf.offer_button, Qt.MouseButton.LeftButton)
    # the wizard started at Install (a resume): it goes through the machine check to Choose, filled in
    qtbot.waitUntil(lambda: w.currentId() == PAGE_MACHINE, timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_CHOOSE)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    choose = w.currentPage()
    assert choose.target().kind == "venv" and choose.target().value == str(made_env)
    assert w.state.frameworks == ["tensorflow"]


def test_repair_in_an_environment_picked_goes_back_to_choose_filled_in(qtbot, make_wizard, made_env: Path,
                                                                        isolated: Path) -> None:
    services = RestartServices(isolated)
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_CHOOSE)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    qtbot.mouseClick(w.currentPage().check_only_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_VERIFY, timeout=TIMEOUT)
    verify = w.currentPage()
    verify.picker.path_edit.setText(str(made_env))
    qtbot.mouseClick(verify.picker.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.running_jobs() and verify.picker.prove_button.isEnabled(), timeout=TIMEOUT)
    qtbot.mouseClick(verify.picker.prove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.isComplete() and not w.running_jobs() and bool(verify.answers), timeout=TIMEOUT)
    (tf,) = verify.answers  # only what is installed there: TensorFlow
    qtbot.mouseClick(tf.offer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_CHOOSE, timeout=TIMEOUT)
    choose = w.currentPage()
    assert {fw for fw, box in choose.checks.items() if box.isChecked()} == {"tensorflow"}
    assert choose.target().kind == "venv" and choose.target().value == str(made_env)


def test_the_picker_lists_the_installed_environment_first_and_not_the_wizards_own(qtbot, make_wizard,
                                                                                  made_env: Path,
                                                                                  isolated: Path) -> None:
    """After a restart, "Only check an environment I have…": the environment the installer made is the first
    one offered; gpusetup's own environment (no framework in it) is not offered at all."""
    interrupted_install(isolated, made_env, ["tensorflow"])
    Journal(isolated / "install").append("finished", ok=True)
    services = RestartServices(isolated)
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_CHOOSE)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    qtbot.mouseClick(w.currentPage().check_only_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_VERIFY, timeout=TIMEOUT)
    picker = w.currentPage().picker
    qtbot.waitUntil(lambda: not w.running_jobs() and picker.found.count() > 0, timeout=TIMEOUT)
    listed = [picker.found.item(i).data(Qt.ItemDataRole.UserRole) for i in range(picker.found.count())]
    assert listed[0].python == str(made_env / "bin" / "python") and listed[0].ok
    assert all(os.path.abspath(c.python) != os.path.abspath(sys.executable) for c in listed), \
        [c.python for c in listed]
    usable = sum(1 for c in listed if c.ok)
    words = picker.status.text.text()
    assert "(s)" not in words
    if usable == 1:
        assert words == "One environment with a framework to check was found; pick it, or choose another below."
    shot(w, "proof-picker-en")


def test_resuming_an_install_started_in_the_terminal_proves_what_its_plan_installed(qtbot, make_wizard,
                                                                                     made_env: Path,
                                                                                     isolated: Path) -> None:
    """`gpusetup install` was interrupted; the wizard continues it from the installer's own saved plan, which
    names no choice of the wizard's: the proof checks the frameworks that plan installs, and Done names them."""
    interrupted_install(isolated, made_env, [])
    (isolated / "wizard-pending.json").unlink()
    services = RestartServices(isolated)
    w = make_wizard(services)
    _resume_to_verify(qtbot, w)
    py = str(made_env / "bin" / "python")
    assert services.selftest_calls == [(py, ("tensorflow", "jax"))]
    assert [a.answer.framework for a in w.currentPage().answers] == ["tensorflow", "jax"]
    click_next(qtbot, w, PAGE_DONE)
    wait_ready(qtbot, w)
    assert f"TensorFlow, JAX installed into {made_env}, but the proof below found a problem." in texts(w.currentPage())
