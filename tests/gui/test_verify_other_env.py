"""Proof in an environment the user already has, for real: "Only check an environment I have…" on the Choose
page leads to Verify, which lists the environments found on this computer (here: venvs made by the test in
the home folder), checks the one picked with the core (not a Python, too old, no framework: the core's words)
and runs the framework proof *in that environment*.

The environment's framework is numpy — the framework check's CPU-only path (gpusetup/selftest/fwcheck.py
``check_numpy``) — installed with real pip from a package index on 127.0.0.1 that serves a wheel rebuilt from
the numpy this test environment runs (its real files and metadata; no network).
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_wizard_flow import click_next, texts, wait_ready

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_DONE, PAGE_MACHINE, PAGE_VERIFY
from gpusetup.gui.services import Services

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from install.stand_ins import HOST_PIP_ENV_DROP, Index, _handler, wheel_of_installed  # noqa: E402

TIMEOUT = 240_000


@pytest.fixture(scope="module")
def numpy_env(tmp_path_factory: pytest.TempPathFactory):
    """(home, venv with numpy, venv without a framework, numpy version): real venvs, real pip, local index."""
    version = importlib.metadata.version("numpy")
    wheels = tmp_path_factory.mktemp("wheels")
    idx = Index(wheels)
    idx.layouts = {"simple": [wheel_of_installed(wheels, "numpy")]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tmp_path_factory.mktemp("home")
    with_np, empty = home / ".virtualenvs" / "cpu env", home / ".virtualenvs" / "empty"
    try:
        for venv in (with_np, empty):
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        env = {k: v for k, v in __import__("os").environ.items() if k not in HOST_PIP_ENV_DROP}
        env.update({"PIP_CONFIG_FILE": "/dev/null", "NO_PROXY": "127.0.0.1", "PIP_NO_CACHE_DIR": "1"})
        res = subprocess.run([sys.executable, "-m", "pip", "--python", str(with_np / "bin" / "python"), "install",
                              "--disable-pip-version-check", "--no-deps", "--index-url", f"{idx.url}/simple",
                              f"numpy=={version}"], capture_output=True, text=True, timeout=300, env=env)
        assert res.returncode == 0, res.stdout[-1500:] + res.stderr[-1500:]
    finally:
        server.shutdown()
        server.server_close()
    yield home, with_np, empty, version


@pytest.fixture
def at_home(numpy_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    home = numpy_env[0]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "gpusetup"))
    return numpy_env


class CheckServices(Services):
    """The real core; the proof checks numpy (the CPU-only path), as this machine has no GPU framework."""

    def __init__(self, state_dir: Path) -> None:
        super().__init__(state_dir)
        self.selftest_frameworks = ("numpy",)
        self.selftest_calls: list[tuple[str | None, tuple[str, ...] | None]] = []

    def run_selftest(self, machine, mode="quick", progress=None, cancel=None, python=None, frameworks=None):  # noqa: ANN001
        self.selftest_calls.append((python, tuple(frameworks) if frameworks else None))
        return super().run_selftest(machine, mode=mode, progress=progress, cancel=cancel, python=python,
                                    frameworks=frameworks)


def _to_verify(qtbot, w) -> None:
    click_next(qtbot, w, PAGE_MACHINE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_CHOOSE)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    choose = w.currentPage()
    assert choose.check_only_button.isVisible()
    qtbot.mouseClick(choose.check_only_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_VERIFY, timeout=TIMEOUT)


def test_pick_an_existing_environment_and_prove_the_framework_there(qtbot, make_wizard, at_home,
                                                                      tmp_path: Path) -> None:
    home, with_np, empty, version = at_home
    services = CheckServices(tmp_path / "state")
    w = make_wizard(services)
    _to_verify(qtbot, w)
    verify = w.currentPage()
    picker = verify.picker
    assert picker.isVisible() and services.selftest_calls == [], "nothing is measured before a pick"
    qtbot.waitUntil(lambda: not w.running_jobs() and picker.found.count() > 0, timeout=TIMEOUT)
    listed = {picker.found.item(i).data(Qt.ItemDataRole.UserRole).path: picker.found.item(i)
              for i in range(picker.found.count())}
    assert str(with_np) in listed and str(empty) in listed, list(listed)
    oks = [picker.found.item(i).data(Qt.ItemDataRole.UserRole).ok for i in range(picker.found.count())]
    assert oks == sorted(oks, reverse=True), "usable ones first"
    assert listed[str(with_np)].text() == f"{with_np} — Python {sys.version.split()[0]}: numpy {version}"
    # the empty one: the core's reason, and no way to start the proof there
    picker.found.setCurrentItem(listed[str(empty)])
    assert not picker.prove_button.isEnabled()
    assert f"No framework to check is installed in {empty / 'bin' / 'python'}" in picker.verdict.text.text()
    # typed paths are checked by the core too
    for typed, words in ((str(home / "nowhere"), "does not exist"),
                         (str(home), "is a folder without a Python environment in it")):
        picker.path_edit.setText(typed)
        qtbot.mouseClick(picker.check_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not w.running_jobs() and picker.check_button.isEnabled(), timeout=TIMEOUT)
        assert words in picker.verdict.text.text() and not picker.prove_button.isEnabled(), picker.verdict.text.text()
    # a folder chosen with the chooser (answered for the user)
    picker.choose_dir = lambda parent, caption, start: str(with_np)  # type: ignore[method-assign]
    qtbot.mouseClick(picker.folder_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.running_jobs() and picker.prove_button.isEnabled(), timeout=TIMEOUT)
    assert f"numpy {version}: the proof can run there" in picker.verdict.text.text()
    qtbot.mouseClick(picker.prove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.isComplete() and not w.running_jobs() and w.state.selftest is not None,
                    timeout=TIMEOUT)
    wait_ready(qtbot, w)
    py = str(with_np / "bin" / "python")
    assert services.selftest_calls == [(py, ("numpy",))]
    st = w.state.selftest
    assert st.framework_python == py
    fw = [m for m in st.measurements if m.tier == "framework"]
    assert [m.name for m in fw] == ["framework_numpy"] and fw[0].verdict == "pass", fw
    assert any(f"Python {sys.version.split()[0]}" in n for n in st.notes), st.notes  # measured by that Python
    shown = texts(verify)
    # the answer, one sentence (numpy: the processor is where it computes, GPU or not); measurements behind Details
    [row] = verify.answers
    assert re.fullmatch(r"numpy works\. It ran on the processor: [0-9.]+ GFLOP/s\.", row.text), row.text
    assert row.text in shown and f"The framework check runs in {py}." in shown
    assert "Measured" not in shown and "not measured" not in shown and "STREAM" not in shown
    assert row.details is not None and not row.details.expanded()
    row.details.set_expanded(True)
    assert "an FP32 1024×1024 matrix multiply matches a float64 reference" in texts(row)
    assert "For comparison, numpy on the same processor" in texts(row)
    verify.details.set_expanded(True)  # every measurement: none says "Measured" beside "not measured"
    assert verify.rows and all(r.measurement.value is not None or r.measurement.verdict != "info" for r in verify.rows)
    assert "not measured" not in texts(verify.details)
    import os

    if os.environ.get("GPUSETUP_SHOTS"):  # to look at the page: GPUSETUP_SHOTS=DIR
        w.resize(900, 760)
        qtbot.wait(50)
        w.grab().save(str(Path(os.environ["GPUSETUP_SHOTS"]) / "verify-other-env-en.png"))
    # run again: the announcement is the time measured here a moment ago, not a fixed phrase
    took = round(st.duration_s)
    qtbot.mouseClick(verify.again_button, Qt.MouseButton.LeftButton)
    assert verify.status.text.text() == f"Testing… this took about {max(1, took)} s on this computer last time."
    qtbot.waitUntil(lambda: verify.isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    assert services.selftest_calls == [(py, ("numpy",))] * 2, "run again: in the picked environment"
    click_next(qtbot, w, PAGE_DONE)
    wait_ready(qtbot, w)
    done = texts(w.currentPage())
    # the same answer from the same result (the second run's), rendered by the same row
    again = [a.text for a in w.page(PAGE_VERIFY).answers]
    assert "Nothing was installed." in done and again[0] in done, (again, done)


def test_the_picker_in_chinese(qtbot, make_wizard, at_home, tmp_path: Path) -> None:
    home, with_np, empty, version = at_home
    services = CheckServices(tmp_path / "state")
    w = make_wizard(services, language="zh_CN")
    _to_verify(qtbot, w)
    picker = w.currentPage().picker
    qtbot.waitUntil(lambda: not w.running_jobs() and picker.found.count() > 0, timeout=TIMEOUT)
    picker.path_edit.setText(str(empty))
    qtbot.mouseClick(picker.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not w.running_jobs() and picker.check_button.isEnabled(), timeout=TIMEOUT)
    assert "里没有安装可以检查的框架" in picker.verdict.text.text(), picker.verdict.text.text()
    assert picker.prove_button.text() == "在该环境中验证(&P)"
    import os

    if os.environ.get("GPUSETUP_SHOTS"):  # to look at the page: GPUSETUP_SHOTS=DIR
        w.resize(900, 760)
        qtbot.wait(50)
        w.grab().save(str(Path(os.environ["GPUSETUP_SHOTS"]) / "verify-other-env-zh_CN.png"))
