"""The beginner's journey for real: the wizard (offscreen) detects this machine, installs a CPU compute
package from a package index on 127.0.0.1 into a *new* environment with real pip, and Verify measures the
framework tier in *that* environment (not the wizard's own Python).

The package is numpy — the framework check's CPU-only path (gpusetup/selftest/fwcheck.py ``check_numpy``):
it computes the same matmul and convolution and compares them with a float64 reference. Its wheel is the
one matching the numpy this test environment runs, fetched once with pip from the configured index.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from test_wizard_flow import click_next, texts, wait_ready

from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_DONE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN, PAGE_VERIFY
from gpusetup.gui.services import Services
from gpusetup.model import Choice, FrameworkPlan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from install.stand_ins import HOST_PIP_ENV_DROP, Index, _handler, wheel_of_installed  # noqa: E402

pytestmark = pytest.mark.network
TIMEOUT = 240_000


@pytest.fixture(scope="module")
def numpy_index(tmp_path_factory: pytest.TempPathFactory):
    version = importlib.metadata.version("numpy")
    dest = tmp_path_factory.mktemp("wheels")
    got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                          "-d", str(dest), f"numpy=={version}"], capture_output=True, text=True, timeout=600)
    wheels = list(dest.glob("numpy-*.whl"))
    if got.returncode != 0 or not wheels:
        pytest.skip(f"could not fetch the numpy {version} wheel for the local index: {got.stderr[-300:]}")
    idx = Index(dest)
    # and this test environment's own pip, which the plan updates an old pip in the new environment to
    idx.layouts = {"simple": [*wheels, wheel_of_installed(dest, "pip")]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield idx, version
    server.shutdown()
    server.server_close()


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in HOST_PIP_ENV_DROP:
        monkeypatch.delenv(k, raising=False)
    for k, v in {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
                 "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "GPUSETUP_HOME": str(tmp_path / "gpusetup"),
                 "PIP_NO_CACHE_DIR": "1", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}.items():
        monkeypatch.setenv(k, v)


class JourneyServices(Services):
    """The real core, except that the resolver's answer is the local index's package (the machine has no GPU,
    and the real framework wheels are far too big for a test)."""

    def __init__(self, state_dir: Path, index_url: str, version: str) -> None:
        super().__init__(state_dir)
        self.local_url, self.version = index_url, version
        self.selftest_frameworks = ("numpy",)
        self.selftest_pythons: list[str | None] = []
        self.pypi = False  # True: the package comes from pip's configured index (PyPI), not a named one

    def resolve(self, machine, frameworks=(), python_version=None):  # noqa: ANN001 - Services' signature
        real = super().resolve(machine, frameworks, python_version)
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        mine = FrameworkPlan(framework="pytorch", ok=True, choice=Choice(
            version=self.version, variant="cpu", index_url=None if self.pypi else f"{self.local_url}/simple",
            packages=[f"numpy=={self.version}"], python=here))
        return [mine] + [p for p in real if p.framework != "pytorch"]

    def run_selftest(self, machine, mode="quick", progress=None, cancel=None, python=None, frameworks=None):  # noqa: ANN001
        self.selftest_pythons.append(python)
        return super().run_selftest(machine, mode=mode, progress=progress, cancel=cancel, python=python,
                                    frameworks=frameworks)


def test_wizard_installs_into_a_new_env_and_proves_it_there(qtbot, make_wizard, numpy_index, isolated,
                                                             tmp_path: Path, monkeypatch) -> None:
    idx, version = numpy_index
    monkeypatch.setenv("PIP_INDEX_URL", f"{idx.url}/simple")  # pip's configured index (PyPI, or a mirror)
    services = JourneyServices(tmp_path / "state", idx.url, version)
    w = make_wizard(services)
    click_next(qtbot, w, PAGE_MACHINE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_CHOOSE)
    choose = w.currentPage()
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    env = tmp_path / "new env"
    choose.venv_path.setText(str(env))
    for name, box in choose.checks.items():
        box.setChecked(name == "pytorch")
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    assert w.state.plan is not None and w.state.plan.steps[0].id == "create-venv"
    size = w.currentPage().size_label
    assert size is not None and size.text().startswith("Download: about "), "the size before Install"
    click_next(qtbot, w, PAGE_INSTALL)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    assert w.state.install is not None and w.state.install.ok, w.state.install.message
    new_python = env / "bin" / "python"
    assert new_python.is_file() and (env / "pyvenv.cfg").is_file()
    click_next(qtbot, w, PAGE_VERIFY)
    verify = w.currentPage()
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=TIMEOUT)
    wait_ready(qtbot, w)
    assert services.selftest_pythons == [str(new_python)], "Verify must check the environment just installed"
    st = w.state.selftest
    assert st is not None and st.framework_python == str(new_python)
    fw = [m for m in st.measurements if m.tier == "framework"]
    assert [m.name for m in fw] == ["framework_numpy"] and fw[0].verdict == "pass", fw
    assert any(f"with {env}" in n or str(env) in n for n in st.notes), st.notes
    [answer] = verify.answers  # the installed package's answer, one sentence
    assert answer.text.startswith("numpy works. It ran on the processor: "), answer.text
    click_next(qtbot, w, PAGE_DONE)
    wait_ready(qtbot, w)
    done = texts(w.currentPage())
    assert answer.text in done and f"PyTorch installed into {env}." in done, done


def test_an_unreachable_index_offers_a_mirror_inside_the_wizard(qtbot, make_wizard, numpy_index, isolated,
                                                                tmp_path: Path, monkeypatch) -> None:
    """pip's configured index cannot be reached: the check fails before anything changes, the page asks for
    a mirror, and with the local index as the mirror the same wizard installs."""
    import socket

    idx, version = numpy_index
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed = s.getsockname()[1]
    s.close()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed}/simple")
    services = JourneyServices(tmp_path / "state", idx.url, version)
    services.pypi = True  # the package comes from the configured index (PyPI or its mirror)
    w = make_wizard(services)
    for page in (PAGE_MACHINE, PAGE_CHOOSE):
        click_next(qtbot, w, page)
        qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    env = tmp_path / "env"
    w.currentPage().venv_path.setText(str(env))
    for name, box in w.currentPage().checks.items():
        box.setChecked(name == "pytorch")
    click_next(qtbot, w, PAGE_PLAN)
    qtbot.waitUntil(lambda: not w.running_jobs(), timeout=TIMEOUT)
    click_next(qtbot, w, PAGE_INSTALL)
    inst = w.currentPage()
    qtbot.waitUntil(lambda: not w.running_jobs() and inst.phase == "finished", timeout=TIMEOUT)
    assert not w.state.install.ok and w.state.install.fix == "network", w.state.install
    assert inst.fix_card.isVisible() and inst.mirror_edit.isVisible() and not inst.isComplete()
    assert not env.exists(), "nothing was changed"
    inst.mirror_edit.setText(f"{idx.url}/simple")
    inst.fix_button.click()
    qtbot.waitUntil(lambda: w.state.install is not None and w.currentPage().isComplete() and not w.running_jobs(),
                    timeout=TIMEOUT)
    assert w.state.install.ok and (env / "bin" / "python").is_file()
    assert f"--index-url {idx.url}/simple" in " ".join(w.state.plan.steps[1].argv)
