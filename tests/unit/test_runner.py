import sys
import time

from gpusetup.runner import SubprocessRunner


def test_runs_argv_and_captures_output():
    r = SubprocessRunner()
    res = r.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert res.returncode == 3
    assert res.stdout.strip() == "out"
    assert res.stderr.strip() == "err"
    assert not res.ok
    assert r.records[-1].returncode == 3


def test_hung_command_is_killed_after_timeout():
    r = SubprocessRunner()
    start = time.perf_counter()
    # a child that spawns a grandchild: the whole process group must die
    code = "import subprocess,sys,time; subprocess.Popen([sys.executable,'-c','import time; time.sleep(60)']); time.sleep(60)"
    res = r.run([sys.executable, "-c", code], timeout=0.5)
    assert time.perf_counter() - start < 5
    assert res.timed_out
    assert res.returncode is None
    assert "timed out" in res.error


def test_missing_command_is_a_value_not_an_exception():
    r = SubprocessRunner()
    res = r.run(["definitely-not-a-command-gpusetup"])
    assert res.returncode is None
    assert "not found" in res.error
    assert r.records[-1].error


def test_no_shell_interpretation():
    r = SubprocessRunner()
    res = r.run([sys.executable, "-c", "import sys; print(sys.argv[1])", "$(echo hacked); rm -rf /"])
    assert res.stdout.strip() == "$(echo hacked); rm -rf /"
