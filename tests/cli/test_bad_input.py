"""Bad input gets a clear error and loses nothing: every command, driven as a careless user would.

Each test names the input, checks the exit code (3 when gpusetup could not run as asked), that the message
says what is wrong in words (never a Python traceback), and that nothing was written or changed on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.resources import resource

DEMO = resource("demo", "rtx3060.json")


@pytest.fixture(autouse=True)
def _sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty folder with gpusetup's own files kept inside it and no display."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GPUSETUP_STATE_DIR", raising=False)
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("sys.stdin", open(os.devnull))  # noqa: SIM115 - no terminal: nothing can be confirmed


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as exc:  # argparse errors exit through parser.exit()
        rc = int(exc.code or 0)
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    return rc, cap.out, cap.err


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if "home" not in p.relative_to(root).parts}


# --------------------------------------------------------------------------------------- --for FILE

BAD_MACHINE_FILES = {
    "empty": (b"", "the file is empty"),
    "not-json": (b"{not json", "not valid JSON"),
    "a-list": (b"[1, 2, 3]", "expected a JSON object"),
    "not-utf8": (b"\x80\x81\xfe garbage", "not a text file"),
    "huge-number": (b'{"os": ' + b"1" * 5000 + b"}", "not a JSON file gpusetup can read"),
    "nested-too-deep": (b"[" * 100_000 + b"]" * 100_000, "not a JSON file gpusetup can read"),
    "wrong-shape": (b'{"machine": {"gpus": "x", "system": {}}}', "does not match its format"),
}

FOR_COMMANDS = {
    "plan": ["plan"],
    "install": ["install", "--dry-run"],
    "docker": ["docker", "--framework", "pytorch", "--out", "out"],
}


@pytest.mark.parametrize("kind", sorted(BAD_MACHINE_FILES))
@pytest.mark.parametrize("command", sorted(FOR_COMMANDS))
def test_for_a_bad_machine_file(kind: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data, words = BAD_MACHINE_FILES[kind]
    (tmp_path / "m.json").write_bytes(data)
    before = _files(tmp_path)
    rc, out, err = _run(capsys, *FOR_COMMANDS[command], "--for", "m.json")
    assert rc == 3 and err.startswith("gpusetup: --for m.json:") and words in err
    assert _files(tmp_path) == before


@pytest.mark.parametrize("command", sorted(FOR_COMMANDS))
@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_for_a_missing_file_or_a_folder(kind: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    if kind == "folder":
        (tmp_path / "m.json").mkdir()
    rc, _, err = _run(capsys, *FOR_COMMANDS[command], "--for", "m.json")
    assert rc == 3
    assert ("no such file" if kind == "missing" else "is a folder, not a file") in err
    assert "gpusetup diagnose --json" in err  # says what to give instead
    assert not (tmp_path / "out").exists()


def test_for_another_machine_is_never_installed_here(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, out, err = _run(capsys, "install", "--for", str(DEMO), "--yes", "--target", f"venv:{tmp_path / 'env'}")
    assert rc == 3 and "--for plans for another machine" in err and "Install plan" in out
    assert not (tmp_path / "env").exists()


def test_script_for_another_machine_uses_that_machines_home(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    windows = tmp_path / "win.json"
    windows.write_text(json.dumps({"os": "windows", "driver": "572.16", "python": "3.12",
                                   "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3060"}]}))
    assert _run(capsys, "install", "--for", str(DEMO), "--script", "linux.sh")[0] == 0
    assert _run(capsys, "install", "--for", str(windows), "--script", "win.ps1")[0] == 0
    sh, ps1 = (tmp_path / "linux.sh").read_text(), (tmp_path / "win.ps1").read_text()
    assert '"$HOME"/gpu-env/bin/python -m pip install' in sh and str(Path.home()) + "/gpu-env" not in sh
    assert "(Join-Path $HOME 'gpu-env\\Scripts\\python.exe')" in ps1 and "'~\\gpu-env" not in ps1
    assert subprocess.run(["bash", "-n", str(tmp_path / "linux.sh")]).returncode == 0


# ------------------------------------------------------------------------------------------ numbers


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["diagnose", "--timeout", "0"], "must be a number above 0"),
        (["diagnose", "--timeout", "nan"], "must be a number above 0"),
        (["diagnose", "--timeout", "inf"], "must be a number above 0"),
        (["diagnose", "--timeout", "soon"], "is not a number"),
        (["bundle", "--size-cap", "-5"], "must be a number above 0"),
        (["bundle", "--size-cap", "nan"], "must be a number above 0"),
        (["db", "update", "--timeout", "0"], "must be a number above 0"),
        (["plan", "--gpu", "-1"], "GPU numbers start at 0"),
        (["install", "--dry-run", "--gpu", "-1"], "GPU numbers start at 0"),
        (["selftest", "--device", "-1"], "GPU numbers start at 0"),
        (["selftest", "--device", "first"], "is not a GPU number"),
        (["docker", "--framework", "pytorch", "--gpus", "0"], "--gpus must be 1 or more"),
        (["plan", "--for", str(DEMO), "--gpu", "4"], "this machine has GPU 0"),
        (["plan", "--for", str(resource("demo", "no-gpu.json")), "--gpu", "1"], "no GPU was found"),
        (["plan", "-f", "caffe"], "invalid choice: 'caffe'"),
        (["install", "--for", str(DEMO), "--dry-run", "--cuda-toolkit", "abc"], "must be a CUDA version like 12.6"),
    ],
)
def test_bad_numbers_and_names(argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, _, err = _run(capsys, *argv)
    assert rc == 3 and words in err
    assert _files(tmp_path) == set()


@pytest.mark.parametrize("command", ["diagnose", "selftest", "bundle"])
@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_python_that_is_not_there(command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "venv").mkdir()
    path = "no/such/python" if kind == "missing" else "venv"
    rc, _, err = _run(capsys, command, "--python", path)
    assert rc == 3 and ("no such file" if kind == "missing" else "is a folder") in err
    assert _files(tmp_path) == {"venv"}  # no bundle, no report


# --------------------------------------------------------------------------------------- -o FILE

OUTPUT_COMMANDS = {
    "diagnose": ["diagnose", "-o"],
    "analyze": ["analyze", "in.txt", "-o"],
    "install-script": ["install", "--for", str(DEMO), "--script"],
    "bundle": ["bundle", "--no-plan", "-o"],
}


@pytest.fixture
def analyze_input(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")


@pytest.mark.usefixtures("analyze_input")
@pytest.mark.parametrize("command", sorted(OUTPUT_COMMANDS))
@pytest.mark.parametrize("where", ["a-folder", "under-a-file"])
def test_output_where_no_file_can_be_written(command: str, where: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep me")
    (tmp_path / "plain-file").write_text("keep me too")
    target = "taken" if where == "a-folder" else "plain-file/out.txt"
    before = _files(tmp_path)
    rc, _, err = _run(capsys, *OUTPUT_COMMANDS[command], target)
    assert rc == 3 and "cannot write" in err
    assert ("it is a folder" if where == "a-folder" else "plain-file is a file, not a folder") in err
    assert _files(tmp_path) == before  # no .tmp or .partial file left behind
    assert (tmp_path / "taken" / "mine.txt").read_text() == "keep me"
    assert (tmp_path / "plain-file").read_text() == "keep me too"


def test_selftest_output_into_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.model import SelfTestResult

    monkeypatch.setattr("gpusetup.commands.selftest.run_selftest", lambda *a, **k: SelfTestResult(mode="quick"))
    (tmp_path / "taken").mkdir()
    rc, _, err = _run(capsys, "selftest", "-o", "taken")
    assert rc == 3 and "cannot write" in err and "it is a folder" in err
    assert _files(tmp_path) == {"taken"}


def test_write_atomic_keeps_the_old_file_when_the_write_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.cli import ToolError
    from gpusetup.commands import write_atomic

    target = tmp_path / "report.txt"
    target.write_text("old report")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", full_disk)
    with pytest.raises(ToolError, match="No space left on device"):
        write_atomic(target, "new report")
    assert target.read_text() == "old report" and sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]


def test_a_cancelled_bundle_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.bundle.collect import build_bundle
    from gpusetup.model import Machine, Report

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("gpusetup.bundle.collect._collect", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_bundle(tmp_path / "b.zip", Report(Machine()))
    assert list(tmp_path.glob("*b.zip*")) == []


# ------------------------------------------------------------------------------------------ analyze


@pytest.mark.parametrize(("content", "words"), [(b"", "is empty"), (b"  \n\n", "is empty"),
                                                (b"\x00\x01\x02ELF" * 50, "binary file")])
def test_analyze_input_with_nothing_to_read(content: bytes, words: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "sent.txt").write_bytes(content)
    rc, out, err = _run(capsys, "analyze", "sent.txt")
    assert rc == 3 and words in err and "No known problem" not in out


# ------------------------------------------------------------------------------------ last resort


def test_an_unexpected_error_is_reported_in_words(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr("gpusetup.commands.db.run_info", broken)
    rc, _, err = _run(capsys, "db", "info")
    assert rc == 3 and "internal error" in err and "boom" in err and "-v" in err


def test_an_unreadable_place_is_reported_in_words(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "state").write_text("a file where the install journal folder should be")
    rc, _, err = _run(capsys, "install", "--yes", "--no-network-check", "--target", f"venv:{tmp_path / 'env'}",
                      "--state-dir", str(tmp_path / "state" / "journal"))
    assert rc == 3 and "state/journal" in err and "Not a directory" in err
    assert not (tmp_path / "env").exists()


# ------------------------------------------------------------------------------------------ install


def test_install_without_a_terminal_asks_for_yes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, out, err = _run(capsys, "install", "--no-network-check", "--target", f"venv:{tmp_path / 'env'}")
    assert rc == 3 and "Install plan" in out and "add --yes" in err
    assert not (tmp_path / "env").exists() and not (tmp_path / "home").exists()


def test_install_into_a_read_only_place_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    real_access = os.access
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == ro else real_access(p, mode, **kw))
    rc, _, err = _run(capsys, "install", "--yes", "--no-network-check", "--target", f"venv:{ro / 'env'}",
                      "--state-dir", str(tmp_path / "state"))
    assert rc == 2 and f"Cannot write to {ro}" in err and "--target venv:PATH" in err and "Nothing was changed" in err
    assert list(ro.iterdir()) == []


def test_install_journal_follows_gpusetup_home(tmp_path: Path) -> None:
    from gpusetup.install import default_state_dir
    from gpusetup.paths import state_dir

    assert default_state_dir() == state_dir() / "install" and str(default_state_dir()).startswith(str(tmp_path))


# ------------------------------------------------------------------------------------ docker, db, gui


def test_docker_never_overwrites_a_different_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "Dockerfile").write_text("FROM my-own-image\n")
    rc, _, err = _run(capsys, "docker", "--framework", "pytorch", "--for", str(DEMO), "--out", "proj")
    assert rc == 3 and "Dockerfile" in err and "--force" in err
    assert (tmp_path / "proj" / "Dockerfile").read_text() == "FROM my-own-image\n"
    assert _files(tmp_path) == {"proj", "proj/Dockerfile"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.network
def test_db_update_from_a_closed_port_keeps_the_data(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, out, err = _run(capsys, "db", "update", "--url", f"http://127.0.0.1:{_closed_port()}/", "--timeout", "2")
    assert rc == 2 and "could not download" in out and "keeps using its built-in data" in out
    assert _files(tmp_path) == set()
    assert _run(capsys, "db", "info")[0] == 0


def test_gui_without_a_display(capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("PySide6")
    rc, _, err = _run(capsys, "gui")
    assert rc == 3 and "no display found" in err and "gpusetup diagnose" in err


# -------------------------------------------------------------------------------------------- Ctrl-C


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and ") Z " not in Path(f"/proc/{pid}/stat").read_text()


def _interrupt(argv: list[str], tmp_path: Path, wait_for: str,
               wait_for_smi: bool = True) -> tuple[int, str, str, list[int]]:
    """Start gpusetup with a hung nvidia-smi on PATH, press Ctrl-C once it hangs there (or after 1.5 s when
    ``wait_for_smi`` is false), check ``wait_for`` is on
    stderr, and return (exit code, stdout, stderr, the hung nvidia-smi processes still running after it)."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    (fake / "nvidia-smi").write_text(f"#!/bin/sh\necho $$ >> {tmp_path / 'home' / 'pids'}\nexec sleep 10\n")
    (fake / "nvidia-smi").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "GPUSETUP_HOME": str(tmp_path / "home"),
           "PYTHONUNBUFFERED": "1"}
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(var, None)
    proc = subprocess.Popen([sys.executable, "-m", "gpusetup", *argv], cwd=tmp_path, env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids_file = tmp_path / "home" / "pids"
    # Press Ctrl-C once detection is really under way (the hung nvidia-smi has started), not after a fixed
    # pause: on a loaded CI machine Python's start-up alone took longer than 1.5 s, so the signal arrived
    # before gpusetup ran at all (rc -2). Commands that never call nvidia-smi get Ctrl-C after 1.5 s.
    started = time.monotonic()
    while time.monotonic() - started < 30 and proc.poll() is None:
        if pids_file.exists() and pids_file.read_text().strip():
            time.sleep(0.2)
            break
        if not wait_for_smi and time.monotonic() - started >= 1.5:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
        pids = [int(p) for p in pids_file.read_text().split()] if pids_file.exists() else []
        deadline = time.monotonic() + 2
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in pids if _alive(p)]
    finally:
        proc.kill()
        for pid in pids_file.read_text().split() if pids_file.exists() else []:
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
    assert wait_for in err
    return proc.returncode, out, err, left


@pytest.mark.parametrize(
    "argv",
    [["diagnose", "-o", "report.txt"], ["install", "--dry-run", "--no-network-check"], ["plan"],
     ["bundle", "--no-plan", "-o", "b.zip"]],
    ids=["diagnose", "install-dry-run", "plan", "bundle"],
)
def test_ctrl_c_during_detection(argv: list[str], tmp_path: Path) -> None:
    rc, out, err, left = _interrupt(argv, tmp_path, "")
    assert rc == 130 and "cancelled" in err and "Traceback" not in err
    assert left == [], "the hung nvidia-smi was left running after Ctrl-C"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in ("bin", "home")) == []


def test_ctrl_c_during_selftest(tmp_path: Path) -> None:
    """Ctrl-C while a step runs: here the framework check, in a target Python that takes 3 s to answer. (A fixed
    pause raced the whole self-test, which takes about 1.5 s on a CPU-only machine: on Ubuntu 24.04 it had
    finished before the Ctrl-C.)"""
    slow = tmp_path / "slowpy"
    slow.mkdir()
    (tmp_path / "home").mkdir(exist_ok=True)
    (slow / "python3").write_text(f"#!/bin/sh\necho $$ >> {tmp_path / 'home' / 'pids'}\nexec sleep 3\n")
    (slow / "python3").chmod(0o755)
    rc, out, err, _ = _interrupt(["selftest", "--full", "--python", str(slow / "python3"), "-o", "st.txt"], tmp_path,
                                "Stopping after the current step")
    assert rc == 130 and "Traceback" not in err
    assert not list(tmp_path.glob(".st.txt*"))  # either the partial result or nothing, never half a file


def test_for_a_file_without_read_permission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture) -> None:
    """chmod 000 does not stop root, so the refusal is simulated where the file is read."""
    (tmp_path / "m.json").write_text("{}")

    def refuse(self: Path, *args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", refuse)
    rc, _, err = _run(capsys, "plan", "--for", "m.json")
    assert rc == 3 and "m.json: permission denied" in err


def test_a_terminal_that_cannot_show_every_character(tmp_path: Path) -> None:
    """A console without UTF-8 (PYTHONIOENCODING=ascii, old Windows code pages) gets '?', not a crash."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "GPUSETUP_HOME": str(tmp_path / "home")}
    res = subprocess.run([sys.executable, "-m", "gpusetup", "diagnose"], cwd=tmp_path, env=env,
                         capture_output=True, timeout=60)
    assert res.returncode in (0, 1, 2), res.stderr
    assert b"diagnose report" in res.stdout and b"internal error" not in res.stderr


def test_gui_screenshots_into_a_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("PySide6")
    (tmp_path / "shots").write_text("not a folder")
    rc, _, err = _run(capsys, "gui", "--screenshots", "shots")
    assert rc == 3 and "that is a file; give a folder" in err
    assert (tmp_path / "shots").read_text() == "not a folder"


def test_install_from_a_wheelhouse_that_is_not_there(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, _, err = _run(capsys, "install", "--yes", "--target", f"venv:{tmp_path / 'env'}", "--wheelhouse", "wheels")
    assert rc == 3 and "--wheelhouse wheels: no such folder" in err
    assert not (tmp_path / "env").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the Linux launcher")
def test_desktop_entry_into_a_place_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "share").write_text("a file where the data folder should be")
    rc, _, err = _run(capsys, "desktop-entry", "--install", "--data-home", "share")
    assert rc == 3 and "could not write the launcher" in err and "--data-home DIR" in err and "Errno" not in err
    assert (tmp_path / "share").read_text() == "a file where the data folder should be"


@pytest.mark.parametrize(("cuda", "words"), [
    ("13.0", "upgrade the driver to 580.65.06 or later"),  # as NVIDIA writes it, not 580.65.6
    ("99.9", "gpusetup knows no driver for that CUDA version"),
])
def test_docker_cuda_newer_than_the_driver(cuda: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc, _, err = _run(capsys, "docker", "--framework", "pytorch", "--for", str(DEMO), "--out", "out", "--cuda", cuda)
    assert rc == 2 and words in err and "--cuda 12.8" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------- 简体中文
# The same mistakes with `--lang zh_CN`: the error is data (a message code), so it is printed in Chinese,
# with the same exit code and nothing written. Paths, file names and quoted commands stay as they are.

ZH_CASES = [
    (["plan", "--for", "missing.json"], "找不到这个文件"),
    (["install", "--dry-run", "--for", "m.json"], "不是有效的 JSON"),
    (["docker", "--framework", "pytorch", "--out", "out", "--for", "empty.json"], "文件是空的"),
    (["plan", "--for", str(DEMO), "--gpu", "4"], "没有第 4 号显卡"),
    (["plan", "--python", "three"], "Python 版本应写成 3.12"),
    (["docker", "--framework", "pytorch", "--gpus", "0"], "至少是 1"),
    (["docker"], "请说明要配置哪个框架"),
    (["diagnose", "-o", "taken"], "这是一个文件夹"),
    (["plan", "--json", "--emit", "uv"], "只能选一个"),
    (["install", "--resume", "--rollback"], "只能选一个"),
    (["install", "--for", str(DEMO), "--yes", "--target", "venv:env"], "是为另一台电脑做计划"),
    (["analyze", "empty.json"], "文件是空的，没有可分析的内容"),
    (["analyze", "missing.txt"], "找不到这个文件"),
    (["db", "update", "--url", "http://example.com/compat/"], "拒绝用不加密的 http 连接"),
]


@pytest.mark.parametrize(("argv", "words"), ZH_CASES, ids=[" ".join(a[:2]) for a, _ in ZH_CASES])
def test_errors_in_chinese(argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from gui.beginner_text import english_runs

    (tmp_path / "m.json").write_text("{not json")
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "taken").mkdir()
    before = _files(tmp_path)
    rc_en, _, err_en = _run(capsys, *argv)
    rc, _, err = _run(capsys, "--lang", "zh_CN", *argv)
    assert rc == rc_en == 3 and words in err and err.startswith(("gpusetup: ", "gpusetup analyze: "))
    # the error (install prints its plan's lines before it on stdout), after the program's name
    line = err.strip().splitlines()[-1].split(": ", 1)[1]
    assert not english_runs(line, [str(DEMO), "gpusetup diagnose --json -o report.json"]), line
    assert err_en != err and not any("\u4e00" <= ch <= "\u9fff" for ch in err_en)  # English without --lang
    assert _files(tmp_path) == before


def test_every_tool_error_carries_a_code() -> None:
    """Every ``raise ToolError(...)`` in gpusetup/ is given a message as data: ``msg("literal.code", …)`` (the
    catalogue test then checks both languages have it) or the ``.message`` of an error from a lower layer
    that carries one (PlanError, GenerateError, EmitError) — never a sentence, which could not be translated."""
    import ast

    import gpusetup

    root = Path(gpusetup.__file__).parent
    sites, bad = 0, []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("ToolError", "tool_error")):
                continue
            sites += 1
            arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
            coded = (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "msg"
                     and isinstance(arg.args[0], (ast.Constant, ast.IfExp))) or \
                    (isinstance(arg, ast.Attribute) and arg.attr == "message")
            if not coded:
                bad.append(f"{path.relative_to(root)}:{node.lineno}")
    assert sites >= 30, "the scan found too few ToolError raise sites"
    assert not bad, f"ToolError given words instead of a message code: {bad}"


def test_a_broken_configuration_file_in_chinese(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture) -> None:
    cfg = tmp_path / "config.toml"
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfg))
    cfg.write_text("[mirrors\npypi = 1\n")
    rc, _, err = _run(capsys, "--lang", "zh_CN", "config", "show")
    assert rc == 3 and "不是有效的 TOML 格式" in err and str(cfg) in err
    cfg.write_text('[defaults]\ntarget = "docker:x"\n')
    rc, _, err = _run(capsys, "--lang", "zh_CN", "plan", "--offline")
    assert rc == 3 and "defaults.target 应当写成" in err
    rc, _, err = _run(capsys, "plan", "--offline")
    assert rc == 3 and "defaults.target must look like venv:PATH or conda:NAME" in err
