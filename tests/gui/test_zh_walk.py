"""A 简体中文 walk of every page, with every section a beginner can open opened (issue 21).

The demo walk (test_demo_walk.py) reads what a page shows at first. Here every Collapsible that is not marked
as the English original ("详细信息（英文）…") is opened too — the options not picked, the finding details — so
the fix of each finding, now worded in Chinese, is read with the rest. Machines: every demonstration machine
and two "real" machines detected by gpusetup's own probes from recorded outputs (an A100 through the NVML
fake, and a Linux computer with no GPU at all: the issue's beginner).

"English sentence" is beginner_text.english_runs: ≥ 3 ASCII prose words left once commands (`…`), paths,
versions, URLs, product names and this machine's GPU names are taken out; jargon (--flags, ENV_VARS outside
backticks, +cu126, [I]) counts too. What the wizard quotes on purpose stays allowed: English error messages
in “…” (glossary rule 8), and the command lines of a fix (a line of a fix box without Chinese).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from beginner_text import english_runs, jargon, visible_texts
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel

from gpusetup.gui import i18n
from gpusetup.gui.demo import DemoServices, demo_kinds
from gpusetup.gui.pages.base import PAGE_DONE, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.screenshots import SIZE, wait_until_idle
from gpusetup.gui.widgets import Collapsible, FindingWidget, FixBox
from gpusetup.gui.wizard import PAGE_NAMES, SetupWizard
from gpusetup.model import Machine

CJK = re.compile(r"[\u4e00-\u9fff]")
QUOTED = re.compile(r"“[^”]*”")
CLI_ADVICE = re.compile(r"`gpusetup (?:plan|install|selftest|diagnose|bundle|docker|analyze)\b")


class ProbedServices(DemoServices):
    """The demonstration's services (nothing on this computer changes) over a machine that gpusetup's real
    probes detected from recorded outputs, instead of a demo file."""

    def __init__(self, machine: Machine, state_dir: Path) -> None:
        super().__init__("rtx3060", state_dir=state_dir, step_delay=0)
        self.machine = machine
        self.data = {**self.data, "title": "recorded probes", "title_zh_CN": "录制的探测结果"}


def _probed_a100(tmp_path: Path) -> Machine:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from report.sample import sample_report  # the A100's nvidia-smi XML through the NVML fake

    (tmp_path / "a100").mkdir(parents=True, exist_ok=True)
    report, _ = sample_report(tmp_path / "a100")
    return copy.deepcopy(report.machine)


def _probed_no_gpu(tmp_path: Path) -> Machine:
    """A Linux computer without any GPU, as the probes see it: an empty /sys and /proc, no nvidia-smi."""
    from fakes.runner import FakeRunner

    from gpusetup.probe import ProbeContext, detect

    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "sys/bus/pci/devices").mkdir(parents=True)
    machine = detect(ProbeContext(runner=FakeRunner(), root=root, env={}, os_name="linux", nvml_factory=None))
    return machine


def _prose(where: str, text: str, in_fix: bool) -> str:
    text = QUOTED.sub(" ", text)
    if in_fix:  # command lines (no Chinese on the line) and shell comments' commands are commands
        lines = []
        for ln in text.splitlines():
            command, hash_, comment = ln.partition("# ")
            if hash_ and not CJK.search(command):
                ln = comment
            if CJK.search(ln):
                lines.append(ln)
        text = "\n".join(lines)
    return text


def _open_sections(page) -> None:  # noqa: ANN001 - a QWizardPage
    """Open every section a beginner may open, except those that hold the English original on purpose."""
    for sec in page.findChildren(Collapsible):
        if "英文" not in sec.button.text() and not sec.button.isChecked() and sec.isVisibleTo(page):
            sec.button.click()
    QApplication.processEvents()


def _problems(w: SetupWizard, allowed: list[str]) -> list[str]:
    page = w.currentPage()
    fix_labels = {fb.label for fb in page.findChildren(FixBox)}
    out = []
    for where, text in visible_texts(w):
        in_fix = any(lb.text() == text for lb in fix_labels)
        prose = _prose(where, text, in_fix)
        for run in english_runs(prose, allowed):
            out.append(f"{where}: English {run!r} in {text!r}")
        for j in jargon(prose):
            out.append(f"{where}: {j} in {text!r}")
        if CLI_ADVICE.search(text):  # the wizard has its own page or button for it
            out.append(f"{where}: command-line advice in {text!r}")
    return out


def _walk(qtbot, services: DemoServices, tmp_path: Path) -> tuple[list[str], list[str], SetupWizard]:  # noqa: ANN001
    i18n.install("zh_CN")
    w = SetupWizard(services, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), "zh_CN", "light")
    qtbot.addWidget(w)
    w.resize(SIZE)
    w.show()
    found: list[str] = []
    seen: list[str] = []
    found_scripts: list[str] = []
    while True:
        wait_until_idle(w)
        QApplication.processEvents()
        pid = w.currentId()
        name = PAGE_NAMES.get(pid, str(pid))
        if name in seen:
            break
        seen.append(name)
        _open_sections(w.currentPage())
        m = w.state.machine
        allowed = [n for g in (m.gpus if m else []) for n in (g.name, g.pci.device_name) if n]
        found += [f"{name}: {p}" for p in _problems(w, allowed)]
        if pid == PAGE_MACHINE:
            # the machine page's findings: the fix is shown in Chinese, not folded away in English
            for fw in w.currentPage().findChildren(FindingWidget):
                if fw.fix_box is not None:
                    assert fw.fix_section is None and fw.fix_box.isVisibleTo(fw), fw.finding.id
                    assert CJK.search(fw.fix_box.text()), (fw.finding.id, fw.fix_box.text())
        if pid == PAGE_PLAN:  # issue 21: "GPU 版本，cu132" beside "所以这里显示的是 CPU 版本"
            shown = " ".join(t for _, t in visible_texts(w))
            assert not ("GPU 版本，" in shown and "这里显示的是 CPU 版本" in shown), shown
        box = getattr(w.currentPage(), "script_box", None)
        if pid == PAGE_PLAN and box is not None and box.isVisibleTo(w.currentPage()):
            # the exact-commands box: its comments and echoed lines in Chinese, the commands as they are
            script = box.text()
            assert "# 第 1 步，共 " in script and "Step 1 of" not in script, script[:400]
            found_scripts.append(script)
        if pid == PAGE_DONE:
            break
        w.next()
    if w.state.plan is not None and w.state.plan.steps:
        assert found_scripts, "the plan page showed no commands box"
    return found, seen, w


@pytest.mark.parametrize("kind", demo_kinds())
def test_every_demo_page_in_chinese_with_its_sections_open(qtbot, tmp_path: Path, kind: str) -> None:
    try:
        found, seen, w = _walk(qtbot, DemoServices(kind, state_dir=tmp_path / "state", step_delay=0), tmp_path)
        w.stop_jobs()
        assert len(seen) == 7, seen
        assert not found, "\n".join(found)
    finally:
        i18n.install("en")


@pytest.mark.parametrize("probe", ["a100-nvml", "no-gpu"])
def test_a_probed_machine_in_chinese_with_its_sections_open(qtbot, tmp_path: Path, probe: str) -> None:
    machine = _probed_a100(tmp_path) if probe == "a100-nvml" else _probed_no_gpu(tmp_path)
    try:
        found, seen, w = _walk(qtbot, ProbedServices(machine, tmp_path / "state"), tmp_path)
        w.stop_jobs()
        assert len(seen) == 7, seen
        assert not found, "\n".join(found)
    finally:
        i18n.install("en")


def test_the_check_itself_catches_an_english_fix(qtbot, tmp_path: Path) -> None:
    """Guards the guard: a finding whose fix has no message (an older report) shows English, and this walk's
    reading of a page would report it once that section is opened."""
    from gpusetup.model import Finding, Severity

    i18n.install("zh_CN")
    try:
        old = Finding(id="nvidia-driver-missing", severity=Severity.ERROR, title="t", detail="d",
                      fix="Run the plan to see which NVIDIA driver branch fits this GPU, then install it.")
        fw = FindingWidget(old)
        qtbot.addWidget(fw)
        fw.show()
        assert fw.fix_section is not None  # folded away, labelled as English
        assert "英文" in fw.fix_section.button.text()
        texts = [lb.text() for lb in fw.findChildren(QLabel)]
        assert any(english_runs(_prose("fix", t, True) if CJK.search(t) else t) for t in texts)
    finally:
        i18n.install("en")
