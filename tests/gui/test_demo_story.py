"""Every demonstration machine tells one story (issue 21), in English and 简体中文: its findings, the driver as the
machine page words it, the plan (what must happen first, what is installed, the steps), the install's rows and
the Done page agree — with the real core behind the wizard, on the recorded machines of resources/demo.

What the demos said before: the A100 "No problems found" beside "Driver: not working" and a plan whose first
step installed driver 580 on a machine with a working driver; two-gpus "the kernel module is loaded" on the
machine page and "no NVIDIA driver is installed" on Choose; no-driver two conflicting errors (rebuild the module
with DKMS / no driver installed); "GPU 1: GPU 1: AMD Cezanne"; "PyTorch 2.15 — GPU version, cu132" beside "so the
CPU build is shown here"; "Restart the computer — done" before any restart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel

from gpusetup.compat.download_size import install_choice
from gpusetup.gui import i18n
from gpusetup.gui.demo import DemoServices, demo_kinds
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_DONE, PAGE_INSTALL, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.pages.install import DONE
from gpusetup.gui.pages.machine import driver_words, environment_rows
from gpusetup.gui.screenshots import SIZE, wait_until_idle
from gpusetup.gui.wizard import SetupWizard
from gpusetup.i18n import set_surface
from gpusetup.messages import msg, render, variant_label
from gpusetup.model import Machine, Severity

LANGUAGES = ("en", "zh_CN")
DRIVER_INSTALL_CODES = {"reason.driver-missing", "action.driver-install", "action.driver-install-wsl"}


@dataclass
class Walk:
    wizard: SetupWizard
    services: DemoServices
    texts: dict[int, list[str]] = field(default_factory=dict)  # page id → visible label texts
    install_rows: list[tuple[str, str, str]] = field(default_factory=list)  # (step id, kind, state)


def _visible(w: SetupWizard) -> list[str]:
    page = w.currentPage()
    return [lb.text() for lb in page.findChildren(QLabel) if lb.isVisibleTo(page) and lb.text().strip()]


def walk(tmp_path: Path, kind: str, language: str) -> Walk:
    i18n.install(language)
    services = DemoServices(kind, state_dir=tmp_path / "state", step_delay=0)
    w = SetupWizard(services, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), language, "light")
    w.resize(SIZE)
    w.show()
    out = Walk(w, services)
    while True:
        wait_until_idle(w)
        QApplication.processEvents()
        pid = w.currentId()
        if pid in out.texts:
            break
        out.texts[pid] = _visible(w)
        if pid == PAGE_INSTALL:
            out.install_rows = [(r.step.id, r.step.kind, r.state) for r in w.currentPage().rows]
        if pid == PAGE_DONE:
            break
        w.next()
    return out


def _words(machine: Machine) -> str:
    gpu = next(g for g in machine.gpus if g.vendor == "nvidia")
    return driver_words(machine, gpu)


def _driver_answers(machine: Machine, language: str) -> bool:
    """The machine page says the driver works or is loaded (not "not working / not installed")."""
    return _words(machine) != i18n.tr("not working (no NVIDIA driver answered)")


@pytest.fixture(params=LANGUAGES)
def language(request: pytest.FixtureRequest):
    yield request.param
    i18n.install("en")


@pytest.mark.parametrize("kind", demo_kinds())
def test_every_demo_tells_one_story(qtbot, tmp_path: Path, kind: str, language: str) -> None:
    run = walk(tmp_path, kind, language)
    w, st = run.wizard, run.wizard.state
    m = st.machine
    assert m is not None and len(run.texts) == 7, run.texts.keys()
    every = [t for texts in run.texts.values() for t in texts]

    # findings against the machine page: no contradictions between them
    ids = {f.id for f in st.findings}
    assert not {"no-module-for-running-kernel", "nvidia-driver-missing"} <= ids, ids
    if m.nvidia_gpus:
        answers = _driver_answers(m, language)
        shown = run.texts[PAGE_MACHINE]
        assert _words(m) in shown  # the GPU card and the software rows name the driver one way
        problems = [f for f in st.findings if f.severity in (Severity.ERROR, Severity.WARNING)]
        if not problems:
            assert answers, f"'No problems found' beside a driver that does not answer: {_words(m)}"
        if "nvidia-driver-missing" in ids:
            assert not answers

        # the plan never installs a driver over one that answers, and never says none is installed
        chosen = st.chosen_plans()
        if answers:
            codes = {a.code for fp in chosen for a in fp.actions} | {r.code for fp in chosen for r in fp.rejected}
            assert not codes & DRIVER_INSTALL_CODES, codes
            assert st.plan is not None and not [s for s in st.plan.steps if s.id in ("driver", "reboot")]
            not_installed = render(msg("reason.driver-missing", need="X"), language).split("X")[-1].strip("；;，, ")
            assert not [t for t in run.texts[PAGE_CHOOSE] + run.texts[PAGE_PLAN] if not_installed in t]

    # what the plan page says is installed is what the install plan installs
    plan_page = w.page(PAGE_PLAN)
    assert st.plan is not None
    indexes = getattr(st.plan, "indexes", [])  # the indexes the install reaches
    assert indexes
    for fp, head in zip(st.chosen_plans(), plan_page.what_labels, strict=True):
        c = install_choice(fp, wsl=bool(m.system.wsl))
        assert c is not None and c.version in head.text()
        if c.variant == "cpu":
            assert i18n.tr("CPU version") in head.text()
        else:
            assert i18n.tr("GPU version, {variant}").format(variant=variant_label(c.variant, language)) in head.text()
        assert (c.index_url or "https://pypi.org/simple") in indexes, (c, indexes)
    # no sentence saying a CPU build "is shown" beside a GPU build shown
    if any(i18n.tr("GPU version, {variant}").split("{")[0].strip("，, ") in lb.text() for lb in plan_page.what_labels):
        assert not [t for t in run.texts[PAGE_PLAN] if "CPU build is shown" in t or "显示的是 CPU 版本" in t]

    # one name per GPU: never "GPU 1: GPU 1: AMD Cezanne"
    assert not [t for t in every if re.search(r"(GPU \d+)[:：] ?\1[:：]", t)]

    # the install's rows: "done" only for the steps the demonstration walked
    walked = set(run.services._done_steps)
    for sid, _kind, state in run.install_rows:
        if state == DONE and _kind != "reboot":
            assert sid in walked, (sid, run.install_rows)

    # the proof and the Done page: the recorded self-test is the one shown and counted
    if run.services.data.get("selftest") is not None:
        assert st.selftest is not None and [x.name for x in st.selftest.measurements]
        n = str(len(st.selftest.measurements))
        assert [t for t in run.texts[PAGE_DONE] if n in t], run.texts[PAGE_DONE]
    w.stop_jobs()


def test_restart_is_not_done_before_any_restart(qtbot, tmp_path: Path) -> None:
    """no-driver installs the driver and pauses for the restart: "Restart the computer — done" was shown before
    the computer restarted."""
    run = walk(tmp_path, "no-driver", "en")
    rows = {sid: state for sid, _k, state in run.install_rows}
    assert "reboot" in rows and rows["reboot"] != DONE and rows["check-driver"] != DONE
    run.wizard.stop_jobs()


@pytest.mark.parametrize("kind", ["a100", "two-gpus"])
def test_done_page_names_the_driver_as_the_machine_page_does(qtbot, tmp_path: Path, kind: str) -> None:
    run = walk(tmp_path, kind, "en")
    m = run.wizard.state.machine
    assert m is not None
    summary = " ".join(run.texts[PAGE_DONE])
    assert "driver not installed" not in summary and _words(m) in summary
    run.wizard.stop_jobs()


def test_the_demo_pauses_at_the_restart_and_continues_after_it(tmp_path: Path) -> None:
    """The demonstration walks the plan as the installer does: a restart step pauses it (not "done"); resuming
    after the restart continues with the step after it."""
    from gpusetup.compat.resolver import resolve

    s = DemoServices("no-driver", state_dir=tmp_path / "state", step_delay=0)
    plans = resolve(s.machine, ["pytorch"])
    from gpusetup.gui.services import Target

    plan = s.build_plan(plans, s.machine, Target("venv", str(tmp_path / "env")))
    ids = [x.id for x in plan.steps]
    assert "reboot" in ids
    out = s.execute(plan)
    assert out.ok and out.needs_reboot and out.failed_step == "reboot"
    assert s._done_steps == ids[: ids.index("reboot")]
    assert "gpusetup install --resume" in render(out.said)  # the command line's words for the same decision…
    set_surface("wizard")  # …and the wizard's, as every wizard window reads it (gpusetup.gui.wizard)
    assert "gpusetup install --resume" not in render(out.said) and "--resume" not in render(out.said, "zh_CN")
    again = s.resume()
    assert again.ok and not again.needs_reboot and s._done_steps == ids


def test_a_demonstration_plans_through_the_mirrors_without_the_network(tmp_path: Path) -> None:
    """The plan page's mirrors reach the demonstration's plan too; checking them asks no network (a mirror on a
    closed port is not refused), a typo still is."""
    from gpusetup.compat.resolver import resolve
    from gpusetup.gui.services import Target

    s = DemoServices("rtx3060", state_dir=tmp_path / "state", step_delay=0)
    plans = resolve(s.machine, ["pytorch"])
    assert s.check_mirrors("", "http://127.0.0.1:9/pytorch/whl", plans) == []
    assert [p.code for p in s.check_mirrors("not a url", "", plans)] == ["wizard.mirror.pypi-failed"]
    s.set_mirrors("", "https://mirror.example/pytorch/whl")
    plan = s.build_plan(plans, s.machine, Target("venv", str(tmp_path / "env")))
    assert any(i.startswith("https://mirror.example/pytorch/whl/cu") for i in plan.indexes)


@pytest.mark.parametrize(("kind", "language"), [(k, "en") for k in demo_kinds()] + [("no-gpu", "zh_CN")])
def test_done_page_says_of_the_driver_what_the_machine_page_says(qtbot, tmp_path: Path, kind: str,
                                                                 language: str) -> None:
    """The machine page's "NVIDIA driver" row and the Done page's summary tell one story: on a computer with no
    NVIDIA graphics card Done said "driver not working (no NVIDIA driver answered)" where the machine page says
    it is not installed because there is no NVIDIA card (nothing is wrong)."""
    run = walk(tmp_path, kind, language)
    m = run.wizard.state.machine
    assert m is not None
    shown = dict(environment_rows(m))[i18n.tr("NVIDIA driver")]
    assert shown in run.texts[PAGE_MACHINE] or any(shown in t for t in run.texts[PAGE_MACHINE]), run.texts[PAGE_MACHINE]
    summary = " ".join(run.texts[PAGE_DONE])
    assert shown in summary, (shown, summary)
    run.wizard.stop_jobs()
