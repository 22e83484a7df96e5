"""State folders shared with others, and outputs that are not files (issue 25 "State folders", issue 26 last item).

* a symbolic link planted at install.lock, journal.jsonl or install.log got its target truncated, appended to
  and chmod 0600; a file of another user, a hard link or a FIFO there is refused the same way;
* `--state-dir /tmp` turned /tmp from 1777 into 0700 (`--state-dir ~` locked down the home folder): an existing
  folder is never chmod-ed, a private subfolder inside it is used instead;
* `diagnose -o /dev/null` as root replaced the character device with a regular file (the atomic write renamed a
  temporary file over it); the same for /dev/stdout, a FIFO, /proc/self/fd/1, and for analyze, selftest and
  --textfile; and `diagnose -o` replaced an existing report without being asked.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gpusetup import paths
from gpusetup.cli import main
from gpusetup.commands import write_atomic
from gpusetup.install.journal import JOURNAL, LOCK, LOG, InstallLock, Journal
from gpusetup.messages import render
from gpusetup.paths import UnsafePath, open_private, private_dir, state_folder

pytestmark = [pytest.mark.hostile,
              pytest.mark.skipif(os.name != "posix", reason="POSIX ownership, links and FIFOs (Windows: ACLs)")]
ROOT = Path(__file__).resolve().parents[2]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.chmod(victim, 0o644)
    return victim


@pytest.mark.parametrize("name", [LOCK, JOURNAL, LOG])
def test_a_symlink_in_the_state_folder_is_refused_and_its_target_untouched(tmp_path: Path, name: str) -> None:
    jdir = tmp_path / "state"
    jdir.mkdir(mode=0o700)
    victim = _victim(tmp_path)
    (jdir / name).symlink_to(victim)
    with pytest.raises(UnsafePath) as err:
        if name == LOCK:
            with InstallLock(jdir):
                pass
        elif name == JOURNAL:
            Journal(jdir).append("plan", target="x", steps=[])
        else:
            open_private(jdir / name, "a").close()
    assert err.value.message.code == "paths.error.symlink"
    assert "is a symbolic link" in render(err.value.message)
    assert victim.read_text() == "precious\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


def test_the_cli_says_what_is_wrong_and_touches_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jdir = tmp_path / "state"
    jdir.mkdir(mode=0o700)
    victim = _victim(tmp_path)
    (jdir / LOCK).symlink_to(victim)
    rc = main(["install", "--rollback", "--yes", "--state-dir", str(jdir)])
    err = capsys.readouterr().err
    assert rc == 3, err
    assert f"{jdir / LOCK} is a symbolic link" in err and "Traceback" not in err
    assert victim.read_text() == "precious\n"


def test_a_file_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / JOURNAL
    f.write_text("")
    if os.geteuid() == 0:
        os.chown(f, 65534, 65534)
    else:  # not root: gpusetup sees the file as another user's by running as "another user"
        real = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: real + 1)
    with pytest.raises(UnsafePath) as err:
        open_private(f, "a")
    assert err.value.message.code == "paths.error.foreign-file"


def test_a_hard_link_and_a_fifo_are_refused_without_blocking(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    os.link(victim, tmp_path / LOG)
    with pytest.raises(UnsafePath) as err:
        open_private(tmp_path / LOG, "a")
    assert err.value.message.code == "paths.error.hard-link"
    assert victim.read_text() == "precious\n"
    os.mkfifo(tmp_path / JOURNAL)
    with pytest.raises(UnsafePath) as err:
        open_private(tmp_path / JOURNAL, "a")  # O_NONBLOCK: no reader is needed to be told no
    assert err.value.message.code == "paths.error.not-regular"


def test_open_private_still_makes_and_tightens_its_own_files(tmp_path: Path) -> None:
    f = tmp_path / "x.log"
    with open_private(f, "a") as fh:
        fh.write("one\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    os.chmod(f, 0o644)
    with open_private(f, "w") as fh:
        fh.write("two\n")
    assert f.read_text() == "two\n" and stat.S_IMODE(f.stat().st_mode) == 0o600


def test_an_existing_shared_folder_is_never_chmod_ed(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o755)
    for folder, mode in ((shared, 0o1777), (home, 0o755)):
        use = state_folder(folder)
        assert use == folder / f"gpusetup-state-{os.geteuid()}"
        Journal(use).append("plan", target="x", steps=[])
        with InstallLock(use):
            pass
        assert stat.S_IMODE(folder.stat().st_mode) == mode  # untouched
        assert stat.S_IMODE(use.stat().st_mode) == 0o700
        assert state_folder(folder) == use  # the next run finds it again
    new = tmp_path / "new-state"
    assert state_folder(new) == new
    private_dir(new)
    assert stat.S_IMODE(new.stat().st_mode) == 0o700
    assert state_folder(new) == new  # a private folder of ours is used as it is


def test_state_dir_on_a_shared_folder_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    rc = main(["install", "--rollback", "--yes", "--state-dir", str(shared)])
    err = capsys.readouterr().err
    sub = shared / f"gpusetup-state-{os.geteuid()}"
    assert f"keeps its install record, log and lock in {sub}" in err, err
    assert rc in (0, 2, 3)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_a_planted_subfolder_or_link_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    elsewhere = tmp_path / "attacker-owned"
    elsewhere.mkdir()
    sub = state_folder(shared)
    sub.symlink_to(elsewhere)
    if os.geteuid() == 0:
        os.lchown(sub, 65534, 65534)
        os.chown(elsewhere, 65534, 65534)
    else:
        real = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: real + 1)
        sub = shared / f"gpusetup-state-{real}"
    with pytest.raises(UnsafePath) as err:
        Journal(sub).append("plan", target="x", steps=[])
    assert err.value.message.code in ("paths.error.foreign-link", "paths.error.foreign-folder")
    assert list(elsewhere.iterdir()) == []


# ------------------------------------------------------------------------------------------ outputs


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def run() -> None:
        with open(path, "rb") as fh:
            into.append(fh.read())

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_output_to_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    t = _read_fifo(fifo, got)
    write_atomic(fifo, "the report\n")
    t.join(timeout=10)
    assert got == [b"the report\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]  # no temporary file left


def test_output_to_a_character_device_is_written_through(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # a null device of our own, so a failure cannot break this machine's /dev/null
        dev = tmp_path / "null"
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        dev = Path("/dev/null")  # replacing it needs root: without the fix this fails with "permission denied"
    write_atomic(dev, "a report nobody keeps\n")
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


@pytest.mark.parametrize("target", ["/dev/stdout", "/proc/self/fd/1"])
@pytest.mark.parametrize("command", [["diagnose", "--json"], ["analyze"], ["diagnose", "--textfile"]])
def test_dev_stdout_style_outputs_write_through(tmp_path: Path, target: str, command: list[str]) -> None:
    """In a child whose stdout is a pipe: the text arrives on the pipe, nothing is renamed."""
    if not Path(target).exists():
        pytest.skip(f"{target} does not exist on this system")  # /proc/self/fd is Linux's
    log = tmp_path / "nvidia-smi.txt"
    log.write_text("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")
    if command[0] == "analyze":
        argv = ["analyze", str(log), "-o", target]
    elif command[-1] == "--textfile":
        argv = ["diagnose", "--format", "text", "-o", str(tmp_path / "r.txt"), "--textfile", target]
    else:
        argv = [*command, "-o", target]
    proc = subprocess.run([sys.executable, "-m", "gpusetup", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode in (0, 1, 2), proc.stderr
    want = {"analyze": "NVIDIA-SMI has failed", "--json": '"schema_version"', "--textfile": "gpusetup_"}[command[-1]]
    assert want in proc.stdout, proc.stdout[:500] + proc.stderr


def test_diagnose_does_not_replace_an_existing_report_without_force(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    out.write_text("yesterday's report\n")
    rc = main(["diagnose", "--json", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3
    assert f"{out} already exists; nothing was written. Pass --force to replace it" in err
    assert out.read_text() == "yesterday's report\n"
    rc = main(["diagnose", "--json", "-o", str(out), "--force"])
    assert rc in (0, 1, 2)
    assert '"schema_version"' in out.read_text()


@pytest.mark.parametrize("command", ["analyze", "selftest"])
def test_analyze_and_selftest_do_not_replace_an_existing_file_without_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Like diagnose: -o on an existing file is refused before any work (no inputs read, nothing measured)."""
    out = tmp_path / "result.txt"
    out.write_text("yesterday's result\n")
    log = tmp_path / "nvidia-smi.txt"
    log.write_text("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")
    argv = ["analyze", str(log)] if command == "analyze" else ["selftest", "--framework", "numpy"]
    rc = main([*argv, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3
    assert f"{out} already exists; nothing was written. Pass --force to replace it" in err
    assert out.read_text() == "yesterday's result\n"
    if command == "analyze":  # (selftest --force would measure this machine: its write path is tested elsewhere)
        rc = main([*argv, "-o", str(out), "--force"])
        assert rc in (0, 1, 2)
        assert out.read_text() != "yesterday's result\n" and "driver" in out.read_text()


def test_a_link_to_a_report_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "today.txt"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.txt"
    link.symlink_to(real)
    write_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_a_temporary_file_planted_by_name_is_not_followed(tmp_path: Path) -> None:
    """The temporary file had a predictable name (.report.txt.tmp): a link planted there made gpusetup write
    its report into the link's target."""
    victim = _victim(tmp_path)
    (tmp_path / ".report.txt.tmp").symlink_to(victim)
    write_atomic(tmp_path / "report.txt", "report\n")
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "report.txt").read_text() == "report\n"


def test_paths_write_output_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("old")
    os.chmod(f, 0o750)
    paths.write_output(f, "new")
    assert stat.S_IMODE(f.stat().st_mode) == 0o750


def test_plan_emit_to_a_device_writes_through_and_a_file_needs_force(tmp_path: Path) -> None:
    """`plan --emit … -o` follows the same rules (issue 26: a rename over /dev/null, as root, broke the system)."""
    prof = tmp_path / "m.json"
    prof.write_text('{"os": "linux", "python": "3.12", "driver": "580.95.05", '
                    '"gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}')
    if os.geteuid() == 0:
        dev = tmp_path / "null"
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        dev = Path("/dev/null")
    argv = [sys.executable, "-m", "gpusetup", "plan", "--offline", "--for", str(prof), "--emit", "requirements", "-o"]
    res = subprocess.run([*argv, str(dev)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    kept = tmp_path / "requirements.txt"
    kept.write_text("mine\n")
    res = subprocess.run([*argv, str(kept)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 3 and kept.read_text() == "mine\n"
