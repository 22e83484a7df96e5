"""Real installs into real venvs with real pip, against the local index (see conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gpusetup.cancel import CancelToken
from gpusetup.install import build_plan, execute, resume, rollback
from gpusetup.install.journal import InstallLock, Journal
from gpusetup.install.net import check_index
from gpusetup.messages import render
from gpusetup.model import Plan, Step, to_dict

from .stand_ins import HOST_PIP, MIB, PLENTY, installed, machine, torch_plan

pytestmark = pytest.mark.network


def plan_for(tmp_path: Path, index_url: str, **kw):
    return build_plan(torch_plan(index_url, kw.pop("packages", None), kw.pop("variant", "cu126")), machine(),
                      f"venv:{tmp_path / 'env'}", with_pip=False, host_pip=True, **kw)


def events(jdir: Path) -> list[str]:
    return [r["event"] + (":" + r["step"] if "step" in r and r["step"] else "") for r in Journal(jdir).read()]


def test_install_verify_protect_then_rollback(index, tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126")
    assert [s.id for s in plan.steps] == ["create-venv", "pip-install", "verify", "check-files", "import", "protect"]
    assert plan.indexes == [f"{index.url}/whl/cu126"]
    seen: list[tuple[str, float | None]] = []
    res = execute(plan, journal_dir=jdir, progress=lambda said, f: seen.append((render(said), f)), free_space=PLENTY)
    assert res.ok, res.message
    venv = tmp_path / "env"
    assert installed(venv) == {"torch": "2.9.1+cu126", "tinydep": "1.0"}
    # progress: pip's phases parsed into labels, overall fraction rises to 1
    labels = " | ".join(label for label, _ in seen)
    assert "Step 2 of 6: Install torch==2.9.1+cu126 — Collecting torch==2.9.1+cu126" in labels
    assert "Successfully installed" in labels
    fracs = [f for _, f in seen if f is not None]
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    # journal written before and after every step, log has pip's output
    assert events(jdir) == ["plan", "start:create-venv", "end:create-venv", "start:pip-install", "end:pip-install",
                            "start:verify", "end:verify", "start:check-files", "end:check-files", "start:import",
                            "end:import", "start:protect", "end:protect", "finished"]
    pip_end = [r for r in Journal(jdir).read() if r["event"] == "end" and r["step"] == "pip-install"][0]
    assert pip_end["undo"][-3:] == ["-y", "tinydep", "torch"] and pip_end["rc"] == 0
    assert "Successfully installed tinydep-1.0 torch-2.9.1+cu126" in Path(res.log_path).read_text()
    # the constraints file protects the build: a later pip install of another torch build is refused
    assert (venv / "gpusetup-constraints.txt").read_text().splitlines()[1:] == ["torch==2.9.1+cu126"]
    assert f"constraint = {venv / 'gpusetup-constraints.txt'}" in (venv / "pip.conf").read_text()
    swap = subprocess.run([*HOST_PIP, "--python", str(venv / "bin/python"), "install", "--index-url",
                           f"{index.url}/whl/cpu", "torch==2.9.1+cpu"], capture_output=True, text=True)
    assert swap.returncode != 0 and installed(venv)["torch"] == "2.9.1+cu126"
    # rollback removes the venv this install created
    back = rollback(jdir)
    assert back.ok, back.message
    assert not venv.exists()
    assert Journal(jdir).status() == "rolled-back"


def test_wrong_build_from_a_bad_mirror_is_caught(index, tmp_path: Path) -> None:
    """`torch==2.9.1` from a cu126 index that really serves +cpu: pip is happy, verification is not."""
    plan = plan_for(tmp_path, f"{index.url}/whl/broken-cu126", packages=["torch==2.9.1"])
    verify = next(s for s in plan.steps if s.id == "verify")
    assert verify.argv[-1] == "torch==2.9.1+cu126"
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY)
    assert not res.ok and res.failed_step == "verify"
    assert "torch 2.9.1+cpu is installed, but the plan is torch 2.9.1+cu126" in res.message
    assert "CPU-only build" in res.message
    assert "gpusetup install --rollback" in res.message


def test_failing_package_stops_with_command_exit_code_and_output(index, tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126", packages=["torch==9.9.9+cu126"])
    res = execute(plan, journal_dir=jdir, free_space=PLENTY)
    assert not res.ok and res.failed_step == "pip-install"
    assert "failed (exit code 1)" in res.message
    assert "install --disable-pip-version-check" in res.message
    assert "No matching distribution found for torch==9.9.9+cu126" in res.message
    assert events(jdir)[-2:] == ["end:pip-install", "stopped:pip-install"]
    # a new install is refused until this one is resumed or rolled back
    again = execute(plan, journal_dir=jdir, free_space=PLENTY)
    assert not again.ok and "did not finish" in again.message and "--rollback" in again.message
    back = rollback(jdir)
    assert back.ok and not (tmp_path / "env").exists()


def test_unreachable_index_fails_early_and_changes_nothing(tmp_path: Path, closed_port: int) -> None:
    plan = plan_for(tmp_path, f"http://127.0.0.1:{closed_port}/whl/cu126")
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY)
    assert not res.ok and res.failed_step == "preflight"
    assert f"Cannot reach http://127.0.0.1:{closed_port}/whl/cu126" in res.message
    assert "Connection refused" in res.message and "Nothing was changed" in res.message
    assert not (tmp_path / "env").exists()


def test_full_disk_fails_before_download(index, tmp_path: Path) -> None:
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126")
    asked: list[str] = []

    def probe(path: str) -> int:
        asked.append(path)
        return 200 * MIB

    res = execute(plan, journal_dir=tmp_path / "state", free_space=probe)
    assert asked == [str(tmp_path / "env")]
    assert not res.ok and res.message.startswith(f"Not enough free disk space at {tmp_path / 'env'}: 0.2 GB free, "
                                                  "about 9.8 GB needed")
    assert not (tmp_path / "env").exists()
    assert Journal(tmp_path / "state").status() == "finished"  # nothing to resume or undo


def test_cancel_mid_download_stops_pip_and_rolls_back(index, tmp_path: Path) -> None:
    index.slow = True
    jdir = tmp_path / "state"
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126", packages=["slowpkg==1.0"], variant="cpu")
    token = CancelToken()
    seen: list[tuple[str, float | None]] = []

    def progress(said: object, frac: float | None) -> None:
        label = render(said)  # type: ignore[arg-type]
        seen.append((label, frac))
        if "Downloading slowpkg" in label and "%" in label and frac and frac > 0.26 and not token.cancelled:
            cancelled_at.append(time.monotonic())
            token.cancel()

    cancelled_at: list[float] = []
    res = execute(plan, journal_dir=jdir, progress=progress, cancel=token, free_space=PLENTY)
    assert res.cancelled and not res.ok and res.failed_step == "pip-install"
    assert time.monotonic() - cancelled_at[0] < 4  # stopped promptly; the download alone takes ~10 s
    assert any("Downloading slowpkg-1.0-py3-none-any.whl" in label and frac and 0.25 < frac < 0.5
               for label, frac in seen)
    assert "--rollback" in res.message
    assert "slowpkg" not in installed(tmp_path / "env")
    # this test's pip only (its command line names this test's venv): other suites may share the machine
    assert not [p for p in psutil.process_iter(["cmdline"])
                if "slowpkg==1.0" in (cmd := " ".join(p.info["cmdline"] or [])) and str(tmp_path) in cmd]
    assert rollback(jdir).ok and not (tmp_path / "env").exists()


def test_existing_venv_rollback_keeps_what_the_user_had(index, tmp_path: Path) -> None:
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([*HOST_PIP, "--python", str(venv / "bin/python"), "install", "-q", "--index-url",
                    f"{index.url}/simple", "userpkg==1.0", "tinydep==0.9"], check=True)
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126")
    assert [s.id for s in plan.steps] == ["pip-install", "verify", "check-files", "import", "protect"]
    jdir = tmp_path / "state"
    assert execute(plan, journal_dir=jdir, free_space=PLENTY).ok
    assert installed(venv) == {"userpkg": "1.0", "tinydep": "1.0", "torch": "2.9.1+cu126"}
    res = rollback(jdir)
    assert res.ok, res.message
    left = installed(venv)
    assert left == {"userpkg": "1.0", "tinydep": "1.0"}  # torch (new) removed; the user's packages stay
    assert "tinydep was 0.9 before (now 1.0); to go back: pip install 'tinydep==0.9'" in res.message
    assert not (venv / "gpusetup-constraints.txt").exists() and not (venv / "pip.conf").exists()


CRASH_DRIVER = """
import json, sys
from gpusetup.install import execute
from gpusetup.install.plan import InstallPlan
from gpusetup.model import from_dict
plan = from_dict(InstallPlan, json.load(open(sys.argv[1])))
execute(plan, journal_dir=sys.argv[2], free_space=lambda p: 1 << 50)
"""


def test_crash_between_journal_entries_then_resume_and_rollback(index, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Kill -9 gpusetup (and its pip) mid-download: the journal has a start without an end."""
    index.slow = True
    jdir = tmp_path / "state"
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126", packages=["slowpkg==1.0", "torch==2.9.1+cu126"])
    (tmp_path / "plan.json").write_text(json.dumps(to_dict(plan)))
    proc = subprocess.Popen([sys.executable, "-c", CRASH_DRIVER, str(tmp_path / "plan.json"), str(jdir)],
                            cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        log = jdir / "install.log"
        if log.exists() and "Progress " in log.read_text():
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the install never started downloading")
    victims = psutil.Process(proc.pid).children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    for v in victims:
        v.kill()
    proc.wait()
    assert events(jdir)[-1] == "start:pip-install"
    assert Journal(jdir).status() == "unfinished"
    monkeypatch.setattr(index, "slow", False)  # the index is shared by the session: restored after this test
    res = resume(jdir)
    assert res.ok, res.message
    assert res.done == ["pip-install", "verify", "check-files", "import", "protect"]
    assert installed(tmp_path / "env") == {"slowpkg": "1.0", "torch": "2.9.1+cu126", "tinydep": "1.0"}
    starts = [r for r in Journal(jdir).read() if r["event"] == "start" and r["step"] == "pip-install"]
    assert len(starts) == 2 and starts[1]["pre"] == starts[0]["pre"] == {"packages": {}}
    assert rollback(jdir).ok and not (tmp_path / "env").exists()


def test_crash_then_rollback_without_resume(index, tmp_path: Path) -> None:
    """A crash record (start, no end) is undone from what is there now."""
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([*HOST_PIP, "--python", str(venv / "bin/python"), "install", "-q", "--index-url",
                    f"{index.url}/simple", "userpkg==1.0"], check=True)
    plan = plan_for(tmp_path, f"{index.url}/whl/cu126")
    jdir = tmp_path / "state"
    j = Journal(jdir)
    jdir.mkdir()
    (jdir / "plan.json").write_text(json.dumps(to_dict(plan)))
    j.append("plan", target=plan.target, steps=[s.id for s in plan.steps])
    j.append("start", step="pip-install", argv=plan.steps[0].argv, undo=plan.steps[0].undo,
             pre={"packages": {"userpkg": "1.0"}})
    # pip got as far as installing before the power cut
    subprocess.run([*HOST_PIP, "--python", str(venv / "bin/python"), "install", "-q", "--index-url",
                    f"{index.url}/whl/cu126", "torch==2.9.1+cu126"], check=True)
    with open(j.path, "a") as fh:
        fh.write('{"event": "end", "step": "pip-in')  # torn last line
    res = rollback(jdir)
    assert res.ok, res.message
    assert installed(venv) == {"userpkg": "1.0"}


def test_one_install_at_a_time(tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    plan = Plan(steps=[Step(id="x", title="x", argv=[sys.executable, "-c", "pass"])])
    with InstallLock(jdir):
        res = execute(plan, journal_dir=jdir, check_network=False)
    assert not res.ok and res.message.startswith(f"Another gpusetup install is running (process {os.getpid()})")
    assert execute(plan, journal_dir=jdir, check_network=False).ok


def test_reboot_pause_and_resume_after_restart(tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    marker = tmp_path / "after-reboot"
    plan = Plan(steps=[
        Step(id="driver", title="driver", argv=[sys.executable, "-c", "print('gpusetup: reboot-needed')"]),
        Step(id="reboot", title="Restart", kind="reboot"),
        Step(id="check", title="check", argv=[sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]),
    ])
    boot = ["boot-1"]
    res = execute(plan, journal_dir=jdir, check_network=False, boot_id=lambda: boot[0])
    assert res.reboot_needed and not res.ok and "gpusetup install --resume" in res.message
    not_yet = resume(jdir, boot_id=lambda: boot[0])
    assert not not_yet.ok and "has not been restarted" in not_yet.message and not marker.exists()
    boot[0] = "boot-2"
    done = resume(jdir, boot_id=lambda: boot[0])
    assert done.ok and done.done == ["check"] and marker.exists()
    assert [r.get("reboot_needed") for r in Journal(jdir).read() if r["event"] == "end"][0] is True


def test_wheelhouse_download_then_offline_install(index, tmp_path: Path, closed_port: int) -> None:
    house = tmp_path / "wheels"
    fps = torch_plan(f"{index.url}/whl/cu126")
    dl = build_plan(fps, machine(), download_only=house)
    assert dl.target == f"download:{house}" and [s.id for s in dl.steps] == ["download"]
    res = execute(dl, journal_dir=tmp_path / "s1", free_space=PLENTY)
    assert res.ok, res.message
    assert sorted(p.name for p in house.iterdir()) == ["tinydep-1.0-py3-none-any.whl",
                                                       "torch-2.9.1+cu126-py3-none-any.whl"]
    offline = build_plan(fps, machine(), f"venv:{tmp_path / 'env'}", wheelhouse=house, with_pip=False,
                         host_pip=True, index_url=f"http://127.0.0.1:{closed_port}/never")
    pip = next(s for s in offline.steps if s.kind == "pip")
    assert "--no-index" in pip.argv and offline.indexes == []
    res = execute(offline, journal_dir=tmp_path / "s2", free_space=PLENTY)
    assert res.ok, res.message
    assert installed(tmp_path / "env")["torch"] == "2.9.1+cu126"


def test_index_check_goes_through_the_configured_proxy(index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", index.url)
    monkeypatch.setenv("http_proxy", index.url)
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.delenv("no_proxy")
    before = len(index.proxied)
    chk = check_index("http://download.example.invalid/whl/cu126", "torch")
    assert chk.ok, chk.message
    assert index.proxied[before:] == ["http://download.example.invalid/whl/cu126/torch/"]
    missing = check_index("http://download.example.invalid/whl/cu126", "nosuchproject")
    assert not missing.ok and "does not have 'nosuchproject'" in missing.message


def test_reboot_step_is_skipped_when_nothing_asked_for_a_restart(tmp_path: Path) -> None:
    """An idempotent driver script that found the driver installed prints no reboot marker: no pause."""
    plan = Plan(steps=[
        Step(id="driver", title="driver", argv=[sys.executable, "-c", "print('# already installed')"]),
        Step(id="reboot", title="Restart", kind="reboot"),
        Step(id="check", title="check", argv=[sys.executable, "-c", "pass"]),
    ])
    res = execute(plan, journal_dir=tmp_path / "state", check_network=False, boot_id=lambda: "b")
    assert res.ok and res.done == ["driver", "reboot", "check"]
