"""Translations are complete and load; inputs have accessible names; the wizard works by keyboard."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from fake_services import FakeServices
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QLineEdit, QWizard

from gpusetup.gui import i18n, tstools
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_MACHINE
from gpusetup.resources import resource


def test_every_string_has_a_chinese_translation() -> None:
    ts = resource("translations", "gpusetup_zh_CN.ts")
    done = tstools.read_ts(ts)
    missing = [s for s in tstools.extract() if s not in done]
    assert not missing, f"untranslated (run python -m gpusetup.gui.tstools): {missing[:5]}"
    for src, zh in done.items():
        assert set(re.findall(r"\{\w*\}", src)) == set(re.findall(r"\{\w*\}", zh)), src
        assert ("&" in src) == ("&" in zh), f"mnemonic lost in {src!r}"
    root = ET.parse(ts).getroot()
    assert root.get("language") == "zh_CN"


def test_compiled_translation_is_current() -> None:
    ts = resource("translations", "gpusetup_zh_CN.ts")
    qm = resource("translations", "gpusetup_zh_CN.qm")
    assert qm.exists() and qm.stat().st_size > 1000
    assert qm.stat().st_mtime >= ts.stat().st_mtime - 2, "recompile: python -m gpusetup.gui.tstools"


def test_chinese_wizard(qtbot, make_wizard, services: FakeServices) -> None:
    w = make_wizard(services, language="zh_CN")
    assert w.currentPage().title() == "欢迎使用 GPU Setup"
    assert w.button(QWizard.WizardButton.NextButton).text() == "下一步(&N) >"
    i18n.install("en")
    assert i18n.tr("Welcome to GPU Setup") == "Welcome to GPU Setup"


def test_language_switch_rebuilds_the_window(qtbot, services: FakeServices, settings) -> None:
    from gpusetup.gui.app import WizardApp

    wa = WizardApp(services, settings, language="en", scheme="light")
    qtbot.addWidget(wa.wizard)
    wa.wizard.show()
    first = wa.wizard
    combo = first.currentPage().language
    combo.setCurrentIndex(combo.findData("zh_CN"))
    assert wa.wizard is not first
    qtbot.addWidget(wa.wizard)
    assert wa.wizard.currentPage().title() == "欢迎使用 GPU Setup"
    assert settings.value("ui/language") == "zh_CN"
    assert wa.wizard.currentPage().language.currentData() == "zh_CN"
    wa.set_language("en")
    qtbot.addWidget(wa.wizard)
    assert wa.wizard.currentPage().title() == "Welcome to GPU Setup"
    wa.wizard.stop_jobs()


def _name(widget) -> str:
    iface = QAccessible.queryAccessibleInterface(widget)
    return iface.text(QAccessible.Text.Name) if iface else ""


def test_inputs_have_accessible_names_and_keyboard_reaches_them(qtbot, make_wizard, services: FakeServices) -> None:
    w = make_wizard(services)
    w.next()
    qtbot.waitUntil(lambda: w.currentId() == PAGE_MACHINE and w.currentPage().isComplete(), timeout=5000)
    w.next()
    qtbot.waitUntil(lambda: w.currentId() == PAGE_CHOOSE and w.currentPage().isComplete(), timeout=5000)
    page = w.currentPage()
    inputs = [x for x in page.findChildren(QLineEdit) + page.findChildren(QComboBox) + page.findChildren(QAbstractButton) if x.isVisibleTo(page)]
    assert inputs
    for x in inputs:
        assert _name(x), f"{type(x).__name__} {x.objectName()} has no accessible name"
    assert _name(page.venv_path) == "Folder for the new virtual environment"
    # Tab from the first framework box reaches the folder field, its Choose button and the wizard's Next
    from PySide6.QtCore import Qt

    chain, cur = [], page.checks["pytorch"]
    for _ in range(2000):
        if cur.focusPolicy() & Qt.FocusPolicy.TabFocus:
            chain.append(cur)
        cur = cur.nextInFocusChain()
        if cur is page.checks["pytorch"]:
            break
    for target in (page.checks["tensorflow"], page.venv_path, page.venv_browse, w.button(QWizard.WizardButton.NextButton)):
        assert target in chain


def test_high_dpi_scale_factor_two(tmp_path) -> None:
    """At 200 % the window renders at twice the pixels with the same logical layout."""
    import os
    import subprocess
    import sys

    code = (
        "from PySide6.QtWidgets import QApplication\n"
        "import sys; sys.path.insert(0, 'tests/gui')\n"
        "from fake_services import FakeServices\n"
        "from PySide6.QtCore import QSettings\n"
        "from gpusetup.gui.wizard import SetupWizard\n"
        "app = QApplication([])\n"
        f"w = SetupWizard(FakeServices(state_dir={str(tmp_path)!r}), QSettings({str(tmp_path / 's.ini')!r}, QSettings.Format.IniFormat))\n"
        "w.resize(800, 600); w.show(); app.processEvents()\n"
        "p = w.grab(); print(p.devicePixelRatio(), p.width(), p.height(), w.width())\n"
    )
    env = dict(os.environ, QT_SCALE_FACTOR="2", QT_QPA_PLATFORM="offscreen")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    dpr, pw, ph, lw = res.stdout.split()
    assert float(dpr) == 2.0
    assert int(pw) == 2 * int(lw)


def _machine_page_findings(qtbot, make_wizard, tmp_path, language: str):
    """The machine page of the recorded laptop without a driver, with the real rules' findings."""
    from gpusetup.gui.pages.machine import MachinePage
    from gpusetup.rules import evaluate

    services = FakeServices("no-driver", state_dir=tmp_path / f"s-{language}")
    services.findings = evaluate(services.machine)
    assert services.findings, "the no-driver demo machine should give real findings"
    w = make_wizard(services, language=language)
    qtbot.mouseClick(w.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.currentId() == PAGE_MACHINE and w.currentPage().isComplete() and not w.running_jobs(), timeout=5000)
    page = w.currentPage()
    assert isinstance(page, MachinePage)
    qtbot.waitUntil(lambda: len(page.finding_widgets) == len(services.findings), timeout=5000)
    return services.findings, page.finding_widgets


def test_chinese_machine_page_shows_chinese_findings(qtbot, make_wizard, tmp_path) -> None:
    from gpusetup.i18n import finding_text
    from gpusetup.messages import finding_words

    findings, widgets = _machine_page_findings(qtbot, make_wizard, tmp_path, "zh_CN")
    by_id = {fw.finding.id: fw for fw in widgets}
    fw = by_id["nvidia-driver-missing"]
    assert fw.title_label.text() == "电脑装有 NVIDIA 显卡，但没有安装 NVIDIA 驱动程序"
    for f in findings:
        w = by_id[f.id]
        zh_title, zh_meaning = finding_text(f, "zh_CN") or ("", "")
        assert w.title_label.text() == zh_title and w.meaning_label is not None
        assert w.meaning_label.text().startswith(zh_meaning)  # (+ what would confirm it, in Chinese)
        assert w.english is not None and not w.english.expanded()  # English, with this machine's values, on request
        english = [lb.text() for lb in w.english.content.findChildren(QLabel)]
        assert f.title in english and f.detail in english
        assert w.english.button.text() == "详细信息（英文，含本机的具体数值）"
        # the fix in Chinese, shown (not folded away as English): the same commands, this machine's values
        assert w.fix_box is not None and w.fix_section is None and w.fix_box.isVisibleTo(w)
        assert w.fix_box.text() == finding_words(f, "zh_CN").fix != f.fix and re.search(r"[\u4e00-\u9fff]", w.fix_box.text())
        english_fix = finding_words(f, "en").fix  # the wizard's English words (its pages, not `gpusetup plan`)
        assert all(cmd in w.fix_box.text() for cmd in re.findall(r"`([^`]*)`", english_fix) if "<" not in cmd)
        assert "`gpusetup " not in w.fix_box.text()  # no command-line advice inside the wizard
        assert zh_title in w.accessibleName()


def test_english_machine_page_keeps_the_rules_text(qtbot, make_wizard, tmp_path) -> None:
    findings, widgets = _machine_page_findings(qtbot, make_wizard, tmp_path, "en")
    for f, w in zip(findings, widgets, strict=True):
        assert w.title_label.text() == f.title
        assert w.meaning_label is not None and w.meaning_label.text() == f.detail
        assert w.english is None


def _plan_page(qtbot, make_wizard, services: FakeServices, language: str, tmp_path):
    from gpusetup.gui.pages.base import PAGE_PLAN

    w = make_wizard(services, language=language)

    def step(expect: int) -> None:
        qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=5000)
        qtbot.mouseClick(w.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.currentId() == expect, timeout=5000)

    step(PAGE_MACHINE)
    step(PAGE_CHOOSE)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=5000)
    w.currentPage().venv_path.setText(str(tmp_path / f"env-{language}"))
    step(PAGE_PLAN)
    qtbot.waitUntil(lambda: w.currentPage().isComplete() and not w.running_jobs(), timeout=5000)
    return w.currentPage()


def test_chinese_plan_page_names_the_steps_in_chinese(qtbot, make_wizard, services: FakeServices, tmp_path) -> None:
    page = _plan_page(qtbot, make_wizard, services, "zh_CN", tmp_path)
    steps = services.steps
    assert [s.id for s in steps] == ["create-venv", "pip-torch", "verify"]
    heads = [lb.text() for lb in page.step_labels]
    # the steps' own title codes, worded from the one catalogue (gpusetup.messages) every surface uses
    assert heads[0] == "创建虚拟环境 /x" and heads[2] == "检查安装的版本是否与计划一致"
    assert heads[1] == "Install torch", "a step without a code (an older saved plan) keeps the core's English title"
    shown = [lb.text() for lb in page.findChildren(QLabel) if lb.isVisibleTo(page)]
    assert not any(steps[0].title in t for t in shown), "no English step title a beginner must read"
    # the core's English titles and explanations are one click away, under 详细信息
    assert page.step_details is not None and not page.step_details.expanded()
    english = " ".join(lb.text() for lb in page.step_details.content.findChildren(QLabel))
    assert steps[0].title in english and steps[2].title in english
    assert page.step_details.button.text() == "详细信息（英文）"


def test_english_plan_page_keeps_the_core_step_titles(qtbot, make_wizard, services: FakeServices, tmp_path) -> None:
    page = _plan_page(qtbot, make_wizard, services, "en", tmp_path)
    assert [lb.text() for lb in page.step_labels] == [s.title for s in services.steps]


def test_install_step_rows_follow_the_language(qtbot) -> None:
    from gpusetup.gui.pages.install import StepRow
    from gpusetup.messages import msg, worded_step

    step = worded_step("pip-install-2", msg("step.title.pip-install", names="jax[cuda12]==0.7.2"),
                       msg("step.explain.pip-install", names="jax[cuda12]==0.7.2", where="into /x"), subject="jax[cuda12]==0.7.2")
    try:
        i18n.install("zh_CN")
        row = StepRow(2, step)
        qtbot.addWidget(row)
        # the step's title code in Chinese (it names what the step acts on); the core's English title is the tooltip
        assert row.title_label.text() == "2. 安装 jax[cuda12]==0.7.2"
        assert row.title_label.toolTip() == step.title
        assert row.accessibleName().startswith("安装 jax")
    finally:
        i18n.install("en")
    row = StepRow(2, step)
    qtbot.addWidget(row)
    assert row.title_label.text() == "2. Install jax[cuda12]==0.7.2"
