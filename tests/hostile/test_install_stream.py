"""A step's output is bounded on its way to memory, install.log, the journal and the screen (issue 25: a 300 MB
line from pip/uv went whole into memory — 1.26 GB —, into journal.jsonl and onto the terminal)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpusetup.install import stream
from gpusetup.install.stream import run_streaming

pytestmark = pytest.mark.hostile
LINUX = Path("/proc/self/status").exists()
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not LINUX, reason="peak memory is read from /proc (Linux)")
def test_a_300_mb_line_stays_out_of_memory_log_journal_and_screen(tmp_path: Path) -> None:
    """Measured in its own process: the peak memory of gpusetup while the step prints one 300 MB line."""
    code = textwrap.dedent(f"""
        import io, json, re, sys
        from gpusetup.install.execute import execute
        from gpusetup.model import Plan, Step
        shown = []
        step = Step(id="huge", title="huge", kind="script", argv=[sys.executable, "-c",
            "import sys; w = sys.stdout.buffer.write; w(b'Collecting torch\\\\n');"
            "[w(b'y' * (1 << 20)) for _ in range(300)]; w(b'\\\\nSuccessfully installed torch\\\\n')"])
        res = execute(Plan(steps=[step]), journal_dir={str(tmp_path)!r}, check_network=False,
                      progress=lambda said, frac: shown.append(str(said)))
        # VmHWM, not ru_maxrss: getrusage keeps the peak of the process that forked us across execve (pytest's)
        hwm = int(re.search(r"VmHWM:\\s*(\\d+)", open("/proc/self/status").read()).group(1))
        print(json.dumps({{"ok": res.ok, "rss_mb": hwm / 1024, "shown_max": max(len(s) for s in shown)}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ok"]
    assert out["rss_mb"] < 200, out  # the line alone was 300 MB; held whole, 1.26 GB
    log = (tmp_path / "install.log").read_bytes()
    assert len(log) < 2 * stream.MAX_LINE, len(log)
    assert b"Successfully installed torch" in log
    assert f"…[{300 * (1 << 20) - stream.MAX_LINE} bytes of this line left out]".encode() in log
    journal = (tmp_path / "journal.jsonl").read_bytes()
    assert len(journal) < 4 * stream.MAX_LINE, len(journal)
    end = [json.loads(ln) for ln in journal.splitlines() if b'"event": "end"' in ln][-1]
    assert all(len(t) <= stream.MAX_LINE + 64 for t in end["tail"])
    assert out["shown_max"] < 2 * stream.MAX_LINE


def test_every_line_on_its_way_is_cut_to_max_line() -> None:
    seen: list[str] = []
    log = io.StringIO()
    code = "import sys; sys.stdout.write('a' * 5000 + '\\n' + 'short\\n' + 'b' * 3000)"
    res = run_streaming([sys.executable, "-c", code], timeout=60, on_line=seen.append, log=log, max_line=1000)
    assert res.ok
    assert seen == ["a" * 1000 + " …[4000 bytes of this line left out]\n", "short\n",
                    "b" * 1000 + " …[2000 bytes of this line left out]"]
    assert log.getvalue() == "".join(seen)
    assert res.tail == [s.rstrip("\n") for s in seen]
    assert res.cut_bytes == 6000


def test_the_log_of_a_very_chatty_step_keeps_its_start_and_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "LOG_TAIL", 10_000)
    log = io.StringIO()
    code = "import sys\nfor i in range(200_000): sys.stdout.write(f'compiling unit {i}\\n')"
    res = run_streaming([sys.executable, "-c", code], timeout=120, log=log, max_log=50_000)
    assert res.ok
    text = log.getvalue()
    assert text.startswith("compiling unit 0\n") and text.endswith("compiling unit 199999\n")
    assert len(text) < 50_000 + 10_000 + 300
    assert "lines (" in text and "of this step's output left out here" in text
    assert res.tail[-1] == "compiling unit 199999"


def test_a_pipe_split_crlf_and_progress_carriage_returns_are_lines_as_before() -> None:
    seen: list[str] = []
    code = "import sys; sys.stdout.write('one\\r\\ntwo\\rthree\\n'); sys.stdout.flush()"
    res = run_streaming([sys.executable, "-c", code], timeout=60, on_line=seen.append)
    assert res.ok and seen == ["one\n", "two\n", "three\n"]


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to this process")
def test_ctrl_c_during_a_step_stops_it() -> None:
    """A second Ctrl-C (KeyboardInterrupt) inside the streaming loop: the step's tree stops before it goes on."""
    import signal
    import threading
    import time

    import psutil

    threading.Timer(0.7, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        run_streaming([sys.executable, "-c", "import time; time.sleep(60)  # ctrl-c-stream"], timeout=120)
    time.sleep(0.3)
    left = [p for p in psutil.process_iter(["cmdline", "status"])
            if "ctrl-c-stream" in " ".join(p.info["cmdline"] or []) and p.info["status"] != "zombie"]
    for p in left:
        p.kill()
    assert not left
