"""Children die with us (issue 16, defect 5): kill -9 gpusetup in the middle of a pip download → pip is gone too;
the lock it left is taken over with a note."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from gpusetup.install import rollback
from gpusetup.install.journal import Journal
from gpusetup.messages import render

pytestmark = [pytest.mark.network, pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                                      reason="PR_SET_PDEATHSIG is Linux's (Windows: Job object)")]


def _wait_for_child(parent: subprocess.Popen[str], needle: str, timeout: float = 60) -> psutil.Process:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if parent.poll() is not None:
            raise AssertionError(f"the gpusetup stand-in ended early: {parent.communicate()}")
        for child in psutil.Process(parent.pid).children(recursive=True):
            try:
                if needle in " ".join(child.cmdline()):
                    return child
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no child running {needle!r}")


def _gone(proc: psutil.Process, timeout: float = 5) -> bool:
    try:
        proc.wait(timeout=timeout)
        return True
    except psutil.TimeoutExpired:
        return False
    except psutil.NoSuchProcess:
        return True


def test_kill_9_during_pip_download_takes_pip_down_too(index, tmp_path: Path) -> None:
    index.slow = True
    jdir = tmp_path / "state"
    script = textwrap.dedent(f"""
        import sys
        from gpusetup.install import execute
        from gpusetup.model import Plan, Step
        step = Step(id="pip-download", title="download", kind="pip", argv=[
            sys.executable, "-m", "pip", "download", "-q", "--progress-bar", "off", "--no-deps", "--dest", {str(tmp_path / "dl")!r},
            "--index-url", {index.url + "/simple"!r}, "slowpkg==1.0"])
        res = execute(Plan(steps=[step]), journal_dir={str(jdir)!r}, check_network=False)
        print(res.message)
    """)
    gs = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pip = _wait_for_child(gs, "slowpkg==1.0")
        time.sleep(0.5)  # downloading now (the stand-in index serves slowpkg in ~10 s)
        gs.send_signal(signal.SIGKILL)
        gs.wait(timeout=10)
        assert _gone(pip), f"pip (pid {pip.pid}) outlived the killed gpusetup"
    finally:
        gs.kill()
        for p in psutil.process_iter(["cmdline"]):
            cmd = " ".join(p.info["cmdline"] or [])
            if "slowpkg==1.0" in cmd and str(tmp_path) in cmd:
                p.kill()
    # the lock still names the dead process; the next run takes it over and says so
    dead = (jdir / "install.lock").read_text().strip()
    assert dead == str(gs.pid)
    seen: list[str] = []
    back = rollback(jdir, progress=lambda said, f: seen.append(render(said)))
    assert back.ok, back.message
    note = f"An earlier gpusetup install (process {dead}) ended without releasing its lock"
    assert any(note in s for s in seen)
    assert any(r["event"] == "note" and note in r["message"] for r in Journal(jdir).read())
    assert (jdir / "install.lock").read_text().strip() == ""  # released cleanly this time


def test_kill_9_during_a_probe_takes_the_probe_down_too(tmp_path: Path) -> None:
    """The runner (nvidia-smi and every other probe) as well: a hung tool does not outlive gpusetup."""
    script = ("from gpusetup.runner import SubprocessRunner\n"
              "SubprocessRunner().run(['sleep', '37.5'], timeout=120)\n")
    gs = subprocess.Popen([sys.executable, "-c", script], text=True)
    try:
        child = _wait_for_child(gs, "sleep 37.5")
        os.kill(gs.pid, signal.SIGKILL)
        gs.wait(timeout=10)
        assert _gone(child), "the probe outlived the killed gpusetup"
    finally:
        gs.kill()
        for p in psutil.process_iter(["cmdline", "ppid"]):
            if (p.info["cmdline"] or [])[:2] == ["sleep", "37.5"] and p.info["ppid"] in (gs.pid, 1):
                p.kill()
