"""Demo isolation, with real sessions: a real window saves its choices; a demonstration (--fake-machine)
afterwards neither reads nor writes them, nor the real state folder, nor looks at this computer's disk; the
next real window still has the real choices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SESSION = r"""
import json, os, sys
from gpusetup.gui.app import get_app, session
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_PLAN
from gpusetup.gui.screenshots import wait_until_idle
from gpusetup.gui.wizard import SetupWizard

mode, venv = sys.argv[1], sys.argv[2]
app = get_app()
services, settings = session(None if mode == "real" else "rtx3060")
w = SetupWizard(services, settings, "en", "light")
w.show()
while w.currentId() != PAGE_CHOOSE:
    wait_until_idle(w, 120)
    w.next()
wait_until_idle(w, 120)
page = w.currentPage()
shown = page.venv_path.text()
page.venv_path.setText(venv)
w.next()
wait_until_idle(w, 120)
assert w.currentId() == PAGE_PLAN, w.currentId()
w.save_geometry()
settings.sync()
print("RESULT " + json.dumps({"shown": shown, "notes": [str(n) for n in w.state.plan.notes],
                              "settings": settings.fileName(), "state": str(services.wizard_dir)}))
"""


def run(mode: str, venv: Path, env: dict[str, str]) -> dict:
    res = subprocess.run([sys.executable, "-c", SESSION, mode, str(venv)], capture_output=True, text=True,
                         env=env, timeout=600)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, res.stdout[-2000:] + res.stderr[-3000:]
    return json.loads(line[len("RESULT "):])


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_demo_never_reads_or_writes_the_real_settings_state_or_disk(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_STATE_HOME": str(home / ".local/state"), "XDG_DATA_HOME": str(home / ".local/share"),
           "GPUSETUP_QT_INSTALL": "0", "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path / "tmp")}
    env.pop("GPUSETUP_HOME", None)
    (tmp_path / "tmp").mkdir()
    real_env = tmp_path / "real-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(real_env)], check=True)

    first = run("real", real_env, env)
    assert first["shown"] == str(home / "gpu-env")  # a fresh user: the default
    assert any("existing virtual environment" in n for n in first["notes"])  # the real run looks at the disk
    settings = Path(first["settings"])
    assert settings.is_file() and str(real_env) in settings.read_text()
    assert settings.is_relative_to(home)
    real_files = tree(home)

    demo = run("demo", real_env, env)
    assert demo["shown"] != str(real_env), "the demonstration read the real choices"
    assert not Path(demo["settings"]).is_relative_to(home) and not Path(demo["state"]).is_relative_to(home)
    assert not any("existing virtual environment" in n for n in demo["notes"]), "the demo looked at this disk"
    assert tree(home) == real_files, "the demonstration wrote into the real settings or state"

    second = run("real", tmp_path / "next-env", env)
    assert second["shown"] == str(real_env), "the real run lost its choice (or got the demo's)"
