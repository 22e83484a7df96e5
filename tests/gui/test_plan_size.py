"""The plan page says how much Install will download before anything is fetched: the real core plans an
install from a package index on 127.0.0.1 (PEP 691 JSON with PEP 700 sizes), on the wizard's plan worker, and
the page shows the exact figure — or, when the index gives no sizes, the estimate labelled as one — in
English and in 简体中文."""

from __future__ import annotations

import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_services import FakeServices
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from gpusetup.compat.download_size import human
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.services import Services

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from install.stand_ins import Index, _handler, build_wheel, torch_plan, wheel_of_installed  # noqa: E402

pytestmark = pytest.mark.network




@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("gui-sized-index")
    wheels = [build_wheel(root, "torch", "2.9.1+cpu", payload=2_500_000, requires=("tinydep>=1.0",)),
              build_wheel(root, "tinydep", "1.0", payload=20_000)]
    pip = wheel_of_installed(root, "pip")  # the plan updates an old pip in the new environment: downloaded too
    idx = Index(root)
    idx.slow = False
    idx.json = True
    idx.layouts = {"cpu": wheels, "simple": [pip]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield idx, sum(w.stat().st_size for w in wheels), pip.stat().st_size
    server.shutdown()
    server.server_close()


class PlanningServices(FakeServices):
    """The demonstration machine's detection, the real planner (Services.build_plan) and the real size lookup."""

    def __init__(self, state_dir: Path, url: str) -> None:
        super().__init__("rtx3060", state_dir=state_dir)
        self.fplans = torch_plan(f"{url}/whl/cpu", ["torch==2.9.1+cpu"], "cpu")
        self.index_url = f"{url}/simple"  # the user's PyPI mirror

    def build_plan(self, fplans, machine, target):  # noqa: ANN001, ANN201 - Services' signature
        return Services.build_plan(self, fplans, machine, target)


def _plan_page(qtbot, make_wizard, services, language: str, tmp_path: Path):
    w = make_wizard(services, language=language)

    def step(expect: int) -> None:
        qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=30_000)
        qtbot.mouseClick(w.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.currentId() == expect, timeout=30_000)

    step(PAGE_MACHINE)
    step(PAGE_CHOOSE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=30_000)
    w.currentPage().venv_path.setText(str(tmp_path / f"env-{language}"))
    step(PAGE_PLAN)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=60_000)
    return w, w.currentPage()


@pytest.mark.parametrize(("language", "words"), [
    ("en", "Download: {size}, from the package index ({n} files)."),
    ("zh_CN", "下载大小：{size}，由软件包索引提供（{n} 个文件）。"),
])
def test_plan_page_shows_the_download_size_from_the_index(qtbot, make_wizard, index, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, language: str,
                                                          words: str) -> None:
    idx, total, pip = index
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    services = PlanningServices(tmp_path / "state", idx.url)
    w, page = _plan_page(qtbot, make_wizard, services, language, tmp_path)
    assert w.state.plan is not None and w.state.plan.download["source"] == "index", w.state.plan.download
    assert page.size_label is not None
    upgrades_pip = any(st.id == "upgrade-pip" for st in w.state.plan.steps)  # when the found Python's pip is old
    want = words.format(size=human(total + (pip if upgrades_pip else 0)), n=3 if upgrades_pip else 2)
    assert page.size_label.text().startswith(want), page.size_label.text()
    assert ("estimate" if language == "en" else "估计值") in page.size_label.text()  # the disk space still is one


@pytest.mark.parametrize(("language", "words"), [
    ("en", "(an estimate: the package index does not say its file sizes)"),
    ("zh_CN", "（估计值：软件包索引没有给出文件大小）"),
])
def test_plan_page_labels_the_estimate_when_the_index_has_no_sizes(qtbot, make_wizard, index, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch, language: str,
                                                                   words: str) -> None:
    idx, _, _ = index
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setattr(idx, "json", False)  # PEP 503 HTML: no sizes
    services = PlanningServices(tmp_path / "state", idx.url)
    w, page = _plan_page(qtbot, make_wizard, services, language, tmp_path)
    assert w.state.plan is not None and w.state.plan.download["reason"] == "no-sizes"
    assert page.size_label is not None and words in page.size_label.text(), page.size_label.text()
