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


# ---------------------------------------------------------------------------------------- bounds (issue 25)
# Output is read in pieces and kept within MAX_OUTPUT per stream (head and tail, with a line saying what was
# left out) and MAX_LINE per line; communicate() kept everything (100 MB of output → 337 MB of memory).

import os  # noqa: E402

import pytest  # noqa: E402

from gpusetup import runner as runner_mod  # noqa: E402
from gpusetup.runner import Capture, LineSplitter  # noqa: E402


def test_capture_keeps_head_and_tail_and_says_what_was_cut():
    cap = Capture(max_bytes=8192, max_line=1024)
    for i in range(10_000):
        cap.feed(f"line {i}\n".encode())
    cap.finish()
    text = cap.text()
    assert text.startswith("line 0\nline 1\n")
    assert text.endswith("line 9999\n")
    assert len(text.encode()) < 8192 + 200
    assert cap.total == sum(len(f"line {i}\n") for i in range(10_000))
    import re

    m = re.search(r"…\[gpusetup: (\d+) bytes of output left out here; the first (\d+) and the last (\d+) bytes", text)
    assert m and sum(int(g) for g in m.groups()) == cap.total
    assert cap.text() == text  # asking twice gives the same text
    lines = text.splitlines()
    cut_at = next(i for i, ln in enumerate(lines) if ln.startswith("…[gpusetup"))
    # whole lines on both sides of the cut, consecutive numbers before it and after it
    before, after = lines[cut_at - 1], lines[cut_at + 1]
    assert before.startswith("line ") and after.startswith("line ")
    assert int(after.split()[1]) - int(before.split()[1]) > 1


def test_capture_cuts_an_over_long_line_across_pieces():
    cap = Capture(max_bytes=1 << 20, max_line=1000)
    cap.feed(b"start\n" + b"x" * 600)
    cap.feed(b"y" * 5000)
    cap.feed(b"z" * 10 + b"\nend\n")
    cap.finish()
    text = cap.text()
    first, long, last = text.splitlines()[:3]
    assert first == "start" and last == "end"
    assert long.startswith("x" * 600 + "y" * 400) and long.endswith("…[4610 bytes of this line left out]")
    assert cap.line_cut == 4610


def test_line_splitter_bounds_every_line_and_splits_like_text_mode():
    sp = LineSplitter(max_line=256)
    out = sp.feed(b"a\r\nb\rc\n" + b"q" * 1000)
    out += sp.feed(b"q" * 300_000 + b"\nlast")
    out += sp.close()
    assert out[:3] == [b"a\n", b"b\n", b"c\n"]
    assert out[3] == b"q" * 256 + " …[300744 bytes of this line left out]\n".encode()
    assert out[4] == b"last"
    assert sp.cut == 301_000 - 256 == 300_744


def test_line_splitter_crlf_split_between_pieces_is_one_line_break():
    sp = LineSplitter()
    assert sp.feed(b"one\r") == [b"one\n"]
    assert sp.feed(b"\ntwo\n") == [b"two\n"]


@pytest.mark.hostile
def test_a_100_mb_line_is_not_kept_whole():
    r = SubprocessRunner()
    res = r.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'x' * (100 * 1024 * 1024))"],
                timeout=120)
    assert res.returncode == 0
    assert len(res.stdout) < runner_mod.MAX_LINE + 100
    assert res.stdout.endswith(f"…[{100 * 1024 * 1024 - runner_mod.MAX_LINE} bytes of this line left out]")
    assert res.cut_bytes == 100 * 1024 * 1024 - runner_mod.MAX_LINE


@pytest.mark.hostile
def test_endless_output_stops_at_the_deadline_within_the_byte_cap():
    """A GPU off the bus can make nvidia-smi print without end: the command's deadline holds (communicate()
    took 49 s against an 8 s timeout) and only MAX_OUTPUT bytes of each stream are kept."""
    code = ("import sys\nline = b'Unable to determine the device handle for GPU0000:01:00.0: Unknown Error\\n'\n"
            "while True:\n    sys.stdout.buffer.write(line * 100); sys.stderr.buffer.write(line)\n")
    start = time.perf_counter()
    res = SubprocessRunner(max_output=1 << 20).run([sys.executable, "-c", code], timeout=1.5)
    assert time.perf_counter() - start < 15  # the deadline plus the time to stop it, on a loaded machine
    assert res.timed_out and res.returncode is None
    assert len(res.stdout.encode()) < (1 << 20) + 300 and len(res.stderr.encode()) < (1 << 20) + 300
    assert "bytes of output left out here" in res.stdout
    assert res.cut_bytes > 0


def test_a_grandchild_holding_the_pipe_does_not_hold_the_command():
    """The child ended; something it started keeps stdout open (a daemon): the result comes when the child
    ends (plus a moment), with the child's exit code, and the straggler is stopped."""
    code = ("import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)  # straggler-holds-pipe'])\n"
            "print('done'); sys.exit(4)\n")
    start = time.perf_counter()
    res = SubprocessRunner().run([sys.executable, "-c", code], timeout=60)
    assert time.perf_counter() - start < 30
    assert res.returncode == 4 and not res.timed_out
    assert res.stdout.strip() == "done"
    time.sleep(0.3)
    import psutil

    left = [p for p in psutil.process_iter(["cmdline", "status"])
            if "straggler-holds-pipe" in " ".join(p.info["cmdline"] or []) and p.info["status"] != "zombie"]
    for p in left:
        p.kill()
    assert not left


def test_input_reaches_the_child_and_the_record_is_scrubbed():
    secret = "http://alice:s3cr3t-PW@proxy.example:3128"
    r = SubprocessRunner()
    res = r.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], input=secret)
    assert res.stdout.strip() == secret.upper()
    rec = r.records[-1]
    assert "S3CR3T-PW" not in rec.stdout_tail and "****" in rec.stdout_tail


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_ctrl_c_while_waiting_stops_the_child(monkeypatch):
    """KeyboardInterrupt while the runner waits: the child's tree is stopped before the exception goes on."""
    import signal
    import threading

    r = SubprocessRunner()
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        r.run([sys.executable, "-c", "import time; time.sleep(30)  # ctrl-c-runner"], timeout=60)
    time.sleep(0.3)
    import psutil

    left = [p for p in psutil.process_iter(["cmdline", "status"])
            if "ctrl-c-runner" in " ".join(p.info["cmdline"] or []) and p.info["status"] != "zombie"]
    for p in left:
        p.kill()
    assert not left
