"""One wizard-wording mechanism: the catalogue's ``code@wizard`` wordings, chosen by the one renderer when the
words are read in the wizard (gpusetup.i18n surface). Every wizard window sets that surface (demonstrations too),
and English stored beside a code for the command line (a plan made by `gpusetup plan`, read from the journal) is
worded again there, so no command-line advice reaches a wizard page in either language."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QSettings

from gpusetup.gui.demo import DemoServices
from gpusetup.gui.wizard import SetupWizard
from gpusetup.i18n import set_surface, surface
from gpusetup.messages import add_note, msg, render, render_notes, render_parts, step_explain, worded_step
from gpusetup.model import Plan

CLI_ADVICE = re.compile(r"(?<![\w-])--[a-z][a-z-]+|gpusetup (?:install|plan|diagnose)\b")


def test_every_wizard_window_reads_the_wizard_s_words(qtbot, tmp_path: Path) -> None:
    """A window made without the app's language set-up (a demonstration, a screenshot run) words the core's
    decisions for its own buttons, not for the command line."""
    set_surface(None)
    restart = msg("install.exec.restart-now")
    assert "gpusetup install --resume" in render(restart)
    w = SetupWizard(DemoServices("no-driver", state_dir=tmp_path / "state", step_delay=0),
                    QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), "en", "light")
    qtbot.addWidget(w)
    assert surface() == "wizard"
    for lang in ("en", "zh_CN"):
        assert not CLI_ADVICE.search(render(restart, lang)), render(restart, lang)


def test_english_stored_for_the_command_line_is_worded_again_in_the_wizard() -> None:
    """A plan's notes and steps carry their English beside their codes; that English was written for the surface
    that made the plan. In the wizard the codes are worded again (in English too)."""
    set_surface(None)  # the plan is made by the command line (or read from its journal)
    plan = Plan()
    add_note(plan, msg("install.note.newer-python", framework="jax", have="0.4", here="3.9", python="3.12",
                       newer="0.7"))
    step = worded_step("reboot", msg("step.title.reboot"), msg("step.explain.reboot"), kind="reboot")
    assert "gpusetup install --python 3.12" in plan.notes[0] and "--resume" in step.explain
    set_surface("wizard")
    for lang in ("en", "zh_CN"):
        [note] = render_notes(plan.notes, plan.note_codes, lang)
        assert not CLI_ADVICE.search(note) and "3.12" in note, note
        assert not CLI_ADVICE.search(step_explain(step, lang)), step_explain(step, lang)
    why = render_parts("left.other-vendor", {"vendor": "AMD", "index": 1}, render(msg("left.other-vendor", vendor="AMD",
                                                                                       index=1)), "en")
    assert "--gpu" not in why and "AMD" in why
    set_surface(None)
    assert render_notes(plan.notes, plan.note_codes, "en") == plan.notes  # the command line shows its own text
