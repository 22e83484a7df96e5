"""The Secure Boot one-time password on screen, never in a file (issue 26): the driver installer prints it for
the user (``gpusetup: mok-password NNNNNNNN``, installers/gpusetup-common.sh ``enrol_key``); the executor keeps it
out of the install log, the journal (output tails), the plan and everything else in the state folder, and says
it to the progress callback as a message; ``gpusetup install`` prints it framed, with what to do at the restart,
and again under the outcome. The wizard's side: tests/gui/test_mok_password.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gpusetup.install import execute
from gpusetup.install.execute import MOK_PASSWORD
from gpusetup.messages import msg, render
from gpusetup.model import Message, Plan, Step

from .mok_standin import PASSWORD_LINE, files_under, mok_driver_step

ROOT = Path(__file__).resolve().parents[2]


def driver_plan(tmp_path: Path, *before: Step) -> Plan:
    return Plan(steps=[
        *before,
        Step(id="driver", title="Install the NVIDIA driver", argv=mok_driver_step(tmp_path / "standin")),
        Step(id="reboot", title="Restart", kind="reboot"),
        Step(id="check", title="check", argv=[sys.executable, "-c", "pass"]),
    ])


def test_the_enrolment_password_reaches_the_screen_and_no_file(tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    said: list[Message | str] = []
    res = execute(driver_plan(tmp_path), journal_dir=jdir, check_network=False,
                  progress=lambda m, f: said.append(m))
    assert res.reboot_needed and res.failed_step == "reboot", res.message
    told = [m for m in said if isinstance(m, Message) and m.code == MOK_PASSWORD]
    assert len(told) == 1
    password = str(told[0].params["password"])
    assert len(password) == 8 and password.isdigit()
    for lang in ("en", "zh_CN"):  # what to do with it at the restart, in words
        words = render(told[0], lang)
        assert password in words and "Enroll MOK" in words and "Continue" in words and "Yes" in words
    assert "write down" in render(told[0]) and "一次性密码" in render(told[0], "zh_CN")
    # the installer did say it (else this test proves nothing), and the log shows the rest of what it said
    log = (jdir / "install.log").read_text()
    assert "mokutil --import" in log and "type this one-time password: ********" in log
    files = files_under(jdir)
    assert files and any("journal" in p.name for p in files)
    leaked = [str(p) for p, text in files.items() if password in text or "mok-password" in text]
    assert not leaked, leaked
    assert password not in res.message and all(password not in render(n) for n in res.notes)


@pytest.mark.parametrize(("lang", "words"), [("en", "Enroll MOK"), ("zh_CN", "请现在记下这个一次性密码")])
def test_gpusetup_install_prints_it_framed_and_again_under_the_outcome(tmp_path: Path, lang: str, words: str) -> None:
    """The command line's run, for real: a plan stopped before the driver step, then ``gpusetup install
    --resume`` runs the driver step, which requests the enrolment."""
    home = tmp_path / "home"
    jdir = home / "state" / "install"  # the default state folder (GPUSETUP_HOME), where a bundle looks
    gate = tmp_path / "gate"
    first = Step(id="gate", title="wait for the gate", argv=[
        sys.executable, "-c", f"import os, sys; sys.exit(0 if os.path.exists({str(gate)!r}) else 1)"])
    res = execute(driver_plan(tmp_path, first), journal_dir=jdir, check_network=False)
    assert not res.ok and res.failed_step == "gate"
    gate.touch()
    env = {**os.environ, "GPUSETUP_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    env.pop("GPUSETUP_STATE_DIR", None)
    out = subprocess.run([sys.executable, "-m", "gpusetup", "install", "--lang", lang, "--resume", "--yes"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    shown = out.stdout + out.stderr
    assert out.returncode == 1, shown  # paused for the restart
    assert not PASSWORD_LINE.search(shown), "the installer's raw line is not shown; its words are"
    passwords = set(re.findall(r"^    (\d{8})$", shown, re.M))  # on a line of its own
    assert len(passwords) == 1, shown
    password = passwords.pop()
    assert shown.count(password) == 2 and shown.count(words) == 2, shown  # framed while it runs, again at the end
    assert shown.count("=" * 72) == 4
    restart = render(msg("install.exec.restart-now"), lang)
    assert shown.index(restart) < shown.rindex(password), "the password again where the restart is explained"
    leaked = [str(p) for p, text in files_under(home).items() if password in text]
    assert not leaked, leaked
    if lang == "en":  # and in the support bundle made afterwards: the journal and the log, without it
        zip_path = tmp_path / "bundle.zip"
        made = subprocess.run([sys.executable, "-m", "gpusetup", "bundle", "--no-plan", "-o", str(zip_path)],
                              capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
        assert zip_path.is_file(), made.stdout + made.stderr
        with zipfile.ZipFile(zip_path) as zf:
            names = zf.namelist()
            assert any(n.endswith("install/journal.jsonl") for n in names) and any(n.endswith("install.log") for n in names), names
            inside = [n for n in names if password.encode() in zf.read(n)]
        assert not inside, inside
