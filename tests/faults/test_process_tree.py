"""The whole process tree of a step dies with gpusetup (issue 25): SIGTERM, SIGHUP or Ctrl-C of gpusetup stop
pip *and what pip started* (a build backend compiling for an hour kept writing into the venv that --resume or
--rollback then worked on); after a kill -9 what is left is found and stopped at the next start."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from other_pythons import other_pythons

pytestmark = [pytest.mark.faults,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="PR_SET_PDEATHSIG is Linux's (/proc)")]

ROOT = Path(__file__).resolve().parents[2]

# The step: a child that starts a grandchild in its session (a build backend under pip) and one that leaves
# the session (setsid, as a daemon does), then says it is ready and waits.
STEP = ("import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)  # {tag}-in-session'])\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(120)  # {tag}-escaped'])\n"
        "time.sleep(0.3); print('ready', flush=True); time.sleep(120)\n")


def _left(tag: str) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if tag in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            continue
    return out


def _cleanup(tag: str) -> None:
    for p in _left(tag):
        with contextlib.suppress(psutil.Error):
            p.kill()


def _gpusetup_running_a_step(tag: str, home: Path, how: str, python: str = sys.executable) -> subprocess.Popen[str]:
    if how == "install":  # through the installer's executor, as `gpusetup install` runs a step
        body = f"""
            import sys
            from gpusetup.install import execute
            from gpusetup.model import Plan, Step
            step = Step(id="build", title="build", kind="script", argv=[sys.executable, "-c", {STEP.format(tag=tag)!r}])
            execute(Plan(steps=[step]), journal_dir={str(home / "journal")!r}, check_network=False,
                    progress=lambda said, frac: None,
                    log=type("L", (), {{"write": lambda self, s: print(s, end="", flush=True),
                                        "flush": lambda self: None, "close": lambda self: None}})())
        """
    elif how == "worker":  # the wizard: the install runs in a worker thread, the signal reaches the main thread
        body = f"""
            import sys, threading
            from gpusetup import children
            from gpusetup.install.stream import run_streaming
            children.install_signal_handlers()  # what the CLI (and so `gpusetup gui`) does at its start
            t = threading.Thread(target=run_streaming, args=([sys.executable, "-c", {STEP.format(tag=tag)!r}],),
                                 kwargs={{"timeout": 300, "on_line": lambda ln: print(ln, end="", flush=True)}})
            t.start()
            t.join()
        """
    else:  # a probe through the runner
        body = f"""
            import sys
            from gpusetup.runner import SubprocessRunner
            print("ready", flush=True)
            SubprocessRunner().run([sys.executable, "-c", {STEP.format(tag=tag).replace("print('ready', flush=True); ", "")!r}], timeout=300)
        """
    env = {**os.environ, "GPUSETUP_HOME": str(home)}
    if python != sys.executable:  # another Python: gpusetup from this checkout, its dependencies from this venv
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])
    proc = subprocess.Popen([python, "-c", textwrap.dedent(body)], stdout=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    assert proc.stdout is not None
    end = time.monotonic() + 60
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if "ready" in line:
            break
        if not line and proc.poll() is not None:
            raise AssertionError(f"the gpusetup stand-in ended early (rc {proc.returncode})")
    deadline = time.monotonic() + 30
    while len(_left(tag)) < 3 and time.monotonic() < deadline:  # child + in-session + escaped
        time.sleep(0.05)
    assert len(_left(tag)) >= 3, [p.info["cmdline"] for p in _left(tag)]
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("how", ["install", "probe", "worker"])
def test_a_signal_to_gpusetup_stops_the_whole_tree(sig: signal.Signals, how: str, tmp_path: Path) -> None:
    tag = f"tree-{how}-{sig.name}-{os.getpid()}"
    proc = _gpusetup_running_a_step(tag, tmp_path, how)
    try:
        time.sleep(0.3)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _left(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _left(tag), f"left running after {sig.name}: {[p.info['cmdline'] for p in _left(tag)]}"
    finally:
        proc.kill()
        _cleanup(tag)


# Pythons 3.13+ that import gpusetup with this venv's packages: from 3.13 an uncaught Ctrl-C makes the interpreter
# wait for its worker threads before atexit runs
NEWER = other_pythons((3, 13), "import gpusetup.children, gpusetup.install.stream",
                      env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])},
                      cwd=ROOT)


@pytest.mark.parametrize("python", [sys.executable, *(exe for _, exe in NEWER)],
                         ids=["this-python", *(f"python{version}" for version, _ in NEWER)])
def test_ctrl_c_with_the_step_in_a_worker_thread_ends_gpusetup_on_any_python(python: str, tmp_path: Path) -> None:
    """Found in a fresh Debian 13 root (Python 3.13): after Ctrl-C the interpreter waited for the wizard's worker
    thread, which waited on the step's child for minutes; the trees are now stopped before that wait."""
    tag = f"tree-py-{Path(python).parent.parent.name}-{os.getpid()}"
    proc = _gpusetup_running_a_step(tag, tmp_path, "worker", python)
    try:
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _left(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _left(tag), [p.info["cmdline"] for p in _left(tag)]
    finally:
        proc.kill()
        _cleanup(tag)


@pytest.mark.parametrize("how", ["install", "probe"])
def test_after_kill_9_the_next_start_stops_what_was_left(how: str, tmp_path: Path) -> None:
    tag = f"tree-k9-{how}-{os.getpid()}"
    proc = _gpusetup_running_a_step(tag, tmp_path, how)
    try:
        time.sleep(2.5)  # long enough to be written down (a step of a second or less is not)
        records = list((tmp_path / "state" / "children").glob("*.json"))
        assert len(records) == 1, records
        rec = json.loads(records[0].read_text())
        assert {"pid", "start", "boot", "owner", "known"} <= set(rec)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(0.5)
        survivors = _left(tag)
        # the direct child dies with gpusetup (PR_SET_PDEATHSIG); what it started does not, on its own
        assert len(survivors) == 2, [p.info["cmdline"] for p in survivors]
        env = {**os.environ, "GPUSETUP_HOME": str(tmp_path)}
        nxt = subprocess.run([sys.executable, "-m", "gpusetup", "completion", "bash"], capture_output=True,
                             text=True, env=env, cwd=ROOT, timeout=120)
        assert nxt.returncode == 0, nxt.stderr
        assert "stopped 2 process(es) that an earlier gpusetup" in nxt.stderr, nxt.stderr
        deadline = time.monotonic() + 10
        while _left(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _left(tag)
        assert not list((tmp_path / "state" / "children").glob("*.json"))  # the record is gone with them
    finally:
        proc.kill()
        _cleanup(tag)


def test_a_running_gpusetups_tree_is_left_alone(tmp_path: Path) -> None:
    """Two gpusetups at once (the wizard and a CLI): the second start does not stop the first one's steps."""
    tag = f"tree-alive-{os.getpid()}"
    proc = _gpusetup_running_a_step(tag, tmp_path, "probe")
    try:
        time.sleep(2.5)
        from gpusetup import children

        before = {p.pid for p in _left(tag)}
        assert children.reap_leftovers(tmp_path / "state" / "children") == []
        assert {p.pid for p in _left(tag)} == before
        assert len(list((tmp_path / "state" / "children").glob("*.json"))) == 1  # kept for its own gpusetup
    finally:
        proc.kill()
        _cleanup(tag)


def test_a_short_command_writes_nothing_and_a_finished_one_leaves_no_record(tmp_path: Path) -> None:
    from gpusetup import children
    from gpusetup.runner import SubprocessRunner

    children.set_record_dir(tmp_path)
    try:
        SubprocessRunner().run([sys.executable, "-c", "pass"])
        assert list(tmp_path.iterdir()) == []
        SubprocessRunner().run([sys.executable, "-c", "import time; time.sleep(1.6)"], timeout=30)
        assert [p for p in tmp_path.iterdir() if p.suffix == ".json"] == []
    finally:
        children.set_record_dir(None)


def test_a_record_from_an_earlier_boot_or_a_reused_session_number_stops_nothing(tmp_path: Path) -> None:
    """A pid number comes back after a reboot or once its session is empty: such a record must not make
    gpusetup kill an unrelated process."""
    from gpusetup import children

    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        st = children._stat(victim.pid)
        assert st is not None
        dead_owner = 2 ** 22 - 3  # no such process
        (tmp_path / "a.json").write_text(json.dumps({"pid": victim.pid, "start": st[3] - 1, "boot": children._boot_id(),
                                                     "owner": dead_owner, "known": []}))
        (tmp_path / "b.json").write_text(json.dumps({"pid": victim.pid, "start": st[3], "boot": "another-boot",
                                                     "owner": dead_owner, "known": []}))
        (tmp_path / "c.json").write_text("{not json")
        assert children.reap_leftovers(tmp_path) == []
        assert victim.poll() is None
        assert list(tmp_path.iterdir()) == []  # all three were consumed
    finally:
        victim.kill()
        victim.wait()


def test_a_session_number_that_came_back_stops_nothing(tmp_path: Path) -> None:
    """pid numbers wrap (32,768 on many systems): a record's session number may by now be the session of an
    unrelated program whose leader has exited (a daemon, a terminal's jobs). Only processes carrying the
    recorded tree's mark are stopped."""
    from gpusetup import children

    code = ("import os, subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # unrelated-session-member'],\n"
            "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(os.getsid(0), flush=True)\n")  # the leader exits at once; its session lives on in the member
    leader = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, start_new_session=True,
                            timeout=60)
    sid = int(leader.stdout.strip())
    try:
        assert list(children.pids_in_session(sid)), "the member should still be in the leader's session"
        (tmp_path / "r.json").write_text(json.dumps({
            "pid": sid, "start": 1, "boot": children._boot_id(), "owner": 2 ** 22 - 3, "known": [],
            "token": children.new_token()}))
        assert children.reap_leftovers(tmp_path) == []
        assert _left("unrelated-session-member"), "an unrelated process was stopped"
    finally:
        _cleanup("unrelated-session-member")
