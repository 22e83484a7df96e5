"""Installs that survive interruption and tell the truth (issue 21), against a local index with real pip.

The defect (reproduced by ../shared/repro/resume-over-broken-install.sh with the real jax/jaxlib wheels): an
install killed while pip unpacks a wheel whose ``.dist-info`` comes first leaves metadata that says "installed"
over a package whose files are not there; ``install --resume`` then saw "Requirement already satisfied", said
"All 5 steps finished" and exited 0 — and ``import jax`` failed. The stand-in wheels here have the same shape
(stand_ins.framework_pair): ``jax`` needs ``jaxlib`` and checks for it on import, ``jaxlib`` has its
``.dist-info`` first and thousands of files before the module its import loads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from http.server import ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from gpusetup.install import build_plan, execute, repair, resume, rollback
from gpusetup.install.journal import InstallLock, Journal
from gpusetup.install.plan import CONSTRAINTS_NAME
from gpusetup.messages import render
from gpusetup.model import Choice, FrameworkPlan, to_dict

from .stand_ins import PLENTY, Index, _handler, framework_pair, layered_wheel, machine, wheel_of_installed

pytestmark = pytest.mark.network
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fw_index(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("fw-index")
    jax, jaxlib = framework_pair(root)
    # a wheel whose files are not what its RECORD says (pip installs it without a word)
    liar = layered_wheel(root, "liar", "0.0.1", {"liar/__init__.py": b"__version__ = '0.0.1'\n"})
    tampered = root / "tampered.whl"
    with zipfile.ZipFile(liar) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, b"__version__ = 'changed after RECORD was written'\n"
                         if item.filename == "liar/__init__.py" else data)
    tampered.replace(liar)
    idx = Index(root)
    idx.layouts = {"simple": [jax, jaxlib, liar, wheel_of_installed(root, "pip")], "nopip": [jax, jaxlib]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield idx
    server.shutdown()
    server.server_close()


def jax_plan(index_url: str, env: Path, package: str = "jax==0.0.1", framework: str = "jax", **kw):
    fps = [FrameworkPlan(framework=framework, ok=True, choice=Choice(version="0.0.1", variant="cpu",
                                                                   packages=[package]))]
    return build_plan(fps, machine(), f"venv:{env}", index_url=index_url, **kw)


def imports(env: Path, module: str = "jax") -> tuple[bool, str]:
    r = subprocess.run([str(env / "bin/python"), "-I", "-c", f"import {module}"], capture_output=True, text=True)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def site(env: Path) -> Path:
    return next(env.glob("lib/python3*/site-packages"))


def cli(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpusetup", "install", *args, "--yes", "--state-dir", str(state)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600, stdin=subprocess.DEVNULL)


DRIVER = """
import json, sys
from gpusetup.install import execute
from gpusetup.install.plan import InstallPlan
from gpusetup.model import from_dict
plan = from_dict(InstallPlan, json.load(open(sys.argv[1])))
print(execute(plan, journal_dir=sys.argv[2], free_space=lambda p: 1 << 50).message)
"""


def kill_mid_unpack(tmp_path: Path, plan, jdir: Path, env: Path) -> None:
    """Run the install in a process of its own and kill its whole process group (as a power cut or a closed
    window does; pip dies with it) while pip unpacks jaxlib: its METADATA is there, its module is not."""
    (tmp_path / "plan.json").write_text(json.dumps(to_dict(plan)))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path / "plan.json"), str(jdir)], cwd=ROOT,
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            info = list(env.glob("lib/python3*/site-packages/jaxlib-0.0.1.dist-info"))
            if (info and (info[0] / "METADATA").exists() and not (info[0] / "INSTALLER").exists()
                    and not (info[0].parent / "jaxlib/xla_extension.py").exists()):
                tree = psutil.Process(proc.pid).children(recursive=True)
                os.killpg(proc.pid, signal.SIGKILL)
                for p in tree:
                    p.kill()
                return
            if proc.poll() is not None:
                pytest.fail(f"the install ended before jaxlib was being unpacked: {proc.stdout.read()[-2000:]}")
            time.sleep(0.005)
        pytest.fail("the install never got to unpacking jaxlib")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_install_killed_while_pip_unpacks_then_resume_imports_or_says_it_does_not(fw_index, tmp_path: Path) -> None:
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/simple", env)
    assert [s.id for s in plan.steps][-4:] == ["verify", "check-files", "import", "protect"]
    kill_mid_unpack(tmp_path, plan, jdir, env)
    meta = site(env) / "jaxlib-0.0.1.dist-info" / "METADATA"
    assert meta.exists(), "the metadata says jaxlib is installed"
    assert not imports(env)[0], "…and it is not: the kill came half-way through unpacking it"
    assert Journal(jdir).in_flight().keys() == {"pip-install"}

    res = cli("--resume", state=jdir)
    ok, why = imports(env)
    assert res.returncode != 0 or ok, f"exit 0 over a framework that does not import ({why}):\n{res.stdout}{res.stderr}"
    assert res.returncode == 0, res.stdout + res.stderr  # and here it is repaired, not only refused
    assert ok and imports(env, "jaxlib.xla_extension")[0]
    redo = [r for r in Journal(jdir).read() if r["event"] == "redo"]
    assert any("--force-reinstall" in r["argv"] and "--no-deps" in r["argv"] and "jaxlib==0.0.1" in r["argv"]
               for r in redo), redo
    ends = {r["step"]: r for r in Journal(jdir).read() if r["event"] == "end"}
    assert ends["check-files"]["ok"] and ends["import"]["ok"]
    assert "jax 0.0.1: imports" in "\n".join(ends["import"]["tail"])

    # the RECORD check catches what pip cannot: a file missing and a file changed after the install
    sp = site(env)
    (sp / "jaxlib/data/part00007.bin").unlink()
    (sp / "jaxlib/xla_extension.py").write_text("READY = True  # edited\n")
    check = next(s for s in plan.steps if s.id == "check-files")
    seen = subprocess.run(check.argv, capture_output=True, text=True)
    assert seen.returncode == 1, seen.stdout
    assert "missing: jaxlib/data/part00007.bin" in seen.stdout and "changed: jaxlib/xla_extension.py" in seen.stdout
    assert json.loads(seen.stdout.splitlines()[-1].removeprefix("gpusetup-check: "))["broken"] == {"jaxlib": "0.0.1"}
    assert imports(env)[0], "import alone does not notice: only the RECORD check does"
    fixed = cli("--repair", state=jdir)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (sp / "jaxlib/data/part00007.bin").exists()
    assert (sp / "jaxlib/xla_extension.py").read_text() == "READY = True\n"
    assert subprocess.run(check.argv, capture_output=True).returncode == 0


def test_a_missing_dependency_and_a_file_unlike_its_record_fail_the_install_with_a_repair_offer(
        fw_index, tmp_path: Path) -> None:
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/simple", env, package="liar==0.0.1", framework="liar", with_pip=False,
                    host_pip=True)
    res = execute(plan, journal_dir=jdir, free_space=PLENTY)
    assert not res.ok and res.failed_step == "check-files" and res.fix == "repair"
    assert "liar 0.0.1: 1 file(s) missing or different from its RECORD, e.g. changed: liar/__init__.py" in res.message
    assert "gpusetup install --repair" in res.message
    assert "import" not in res.done and "protect" not in res.done  # nothing after a failed check is ✓
    again = repair(jdir, check_network=False)
    assert not again.ok and again.failed_step == "check-files" and again.fix is None
    assert "still fails after the repair" in again.message  # the index serves that very wheel: said, not looped
    assert rollback(jdir).ok and not env.exists()


def test_resume_after_a_kill_before_the_dependency_was_unpacked_installs_it(fw_index, tmp_path: Path) -> None:
    """Killed after jax was installed and before jaxlib: the check finds the dependency missing; resume redoes
    the step and the framework imports."""
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/simple", env, with_pip=False, host_pip=True)
    assert execute(plan, journal_dir=jdir, free_space=PLENTY).ok
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin/python"), "uninstall", "-y", "-q",
                    "jaxlib"], check=True)
    check = next(s for s in plan.steps if s.id == "check-files")
    seen = subprocess.run(check.argv, capture_output=True, text=True)
    assert seen.returncode == 1 and "jaxlib is not installed (required by jax)" in seen.stdout
    fixed = repair(jdir, check_network=False)
    assert fixed.ok, fixed.message
    assert imports(env)[0]


def test_a_mirror_without_pip_skips_the_pip_update_with_a_note(fw_index, tmp_path: Path) -> None:
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/whl/nopip", env)
    if not any(s.id == "upgrade-pip" for s in plan.steps):
        pytest.skip("this Python's ensurepip already gives pip ≥ 24.1: no pip update is planned")
    assert "--progress-bar" in next(s for s in plan.steps if s.id == "pip-install").argv
    res = execute(plan, journal_dir=jdir, free_space=PLENTY)
    assert res.ok, res.message
    assert [render(n) for n in res.notes] == [
        f"{fw_index.url}/whl/nopip has no pip, so pip in the new environment is not updated (it keeps pip "
        f"{plan.base_pip}); the framework is installed all the same, only its download shows no byte counts."]
    assert render(res.notes[0], "zh_CN").startswith(f"{fw_index.url}/whl/nopip 上没有 pip")
    assert imports(env)[0]
    assert "upgrade-pip" not in res.done and "pip-install" in res.done


def test_interrupted_rollback_is_finished_by_resume_and_by_rollback(fw_index, tmp_path: Path) -> None:
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/simple", env, with_pip=False, host_pip=True)
    assert execute(plan, journal_dir=jdir, free_space=PLENTY).ok
    # a rollback killed half-way through deleting the environment, pyvenv.cfg among the first to go (older
    # versions deleted in directory order): the journal says it started
    j = Journal(jdir)
    create = next(s for s in plan.steps if s.id == "create-venv")
    j.append("rollback-start", steps=[s.id for s in reversed(plan.steps)])
    j.append("rollback-step", step="create-venv", argv=create.undo)
    (env / "pyvenv.cfg").unlink()
    for p in sorted((site(env)).glob("jax*"))[:2]:
        subprocess.run(["rm", "-rf", str(p)], check=True)
    again = cli("--resume", state=jdir)
    said = again.stdout + again.stderr
    assert again.returncode == 3, said  # nothing is installed: never exit 0, never "All 6 steps finished"
    assert "steps finished" not in said and "finished now instead of going on with the install" in said
    assert "Rolled back: everything this install created was removed" in said
    assert not env.exists()
    assert Journal(jdir).status() == "rolled-back"

    # and a later --rollback over the same kind of interruption is not stuck on "no pyvenv.cfg"
    env2, jdir2 = tmp_path / "env2", tmp_path / "state2"
    plan2 = jax_plan(f"{fw_index.url}/simple", env2, with_pip=False, host_pip=True)
    assert execute(plan2, journal_dir=jdir2, free_space=PLENTY).ok
    j2 = Journal(jdir2)
    j2.append("rollback-start", steps=[s.id for s in reversed(plan2.steps)])
    j2.append("rollback-step", step="create-venv", argv=plan2.steps[0].undo)
    (env2 / "pyvenv.cfg").unlink()
    back = cli("--rollback", state=jdir2)
    assert back.returncode == 0, back.stdout + back.stderr
    assert not env2.exists()


def test_two_installs_into_one_environment_with_different_state_folders_do_not_run_at_once(
        fw_index, tmp_path: Path) -> None:
    env = tmp_path / "env"
    plan = jax_plan(f"{fw_index.url}/simple", env, with_pip=False, host_pip=True)
    with InstallLock(target=plan.target):  # the first install, its journal in another state folder
        res = execute(plan, journal_dir=tmp_path / "other-state", free_space=PLENTY)
    assert not res.ok and f"Another gpusetup install into venv:{env} is running (process {os.getpid()})" in res.message
    assert not env.exists()
    # the same folder spelled another way is the same environment
    alias = tmp_path / "alias"
    alias.symlink_to(tmp_path)
    with InstallLock(target=f"venv:{alias / 'env'}"):
        assert "Another gpusetup install" in execute(plan, journal_dir=tmp_path / "s3", free_space=PLENTY).message


def test_constraints_file_the_user_had_is_left_alone_and_said(fw_index, tmp_path: Path) -> None:
    env, jdir = tmp_path / "env", tmp_path / "state"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    mine = "# my own pins\nnumpy==1.26.4\n"
    (env / CONSTRAINTS_NAME).write_text(mine)
    plan = jax_plan(f"{fw_index.url}/simple", env, with_pip=False, host_pip=True)
    res = execute(plan, journal_dir=jdir, free_space=PLENTY)
    assert res.ok, res.message
    assert (env / CONSTRAINTS_NAME).read_text() == mine and not (env / "pip.conf").exists()
    assert f"{env / CONSTRAINTS_NAME} was already there and gpusetup did not write it: left as it is." in [
        render(n) for n in res.notes]
    back = rollback(jdir)
    assert back.ok, back.message
    assert (env / CONSTRAINTS_NAME).read_text() == mine, "a file gpusetup did not write survives the rollback"
    assert "left as it is" in back.message

    # a file gpusetup wrote and the user edited afterwards is left too; one it wrote, unchanged, is removed
    (env / CONSTRAINTS_NAME).unlink()
    jdir2 = tmp_path / "state2"
    assert execute(plan, journal_dir=jdir2, free_space=PLENTY).ok
    assert (env / CONSTRAINTS_NAME).exists() and (env / "pip.conf").exists()
    with open(env / "pip.conf", "a") as fh:
        fh.write("timeout = 60\n")
    back = rollback(jdir2)
    assert back.ok and not (env / CONSTRAINTS_NAME).exists()
    assert (env / "pip.conf").exists() and f"{env / 'pip.conf'} was changed after gpusetup wrote it" in back.message


def test_script_is_not_written_over_an_existing_file_without_force(tmp_path: Path) -> None:
    out = tmp_path / "install.sh"
    out.write_text("#!/bin/sh\necho mine\n")
    args = ["--framework", "pytorch", "--offline", "--for", str(ROOT / "resources/demo/rtx3060.json"), "--script",
            str(out)]
    res = subprocess.run([sys.executable, "-m", "gpusetup", "install", *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "already exists" in res.stderr and "--force" in res.stderr
    assert out.read_text() == "#!/bin/sh\necho mine\n"
    res = subprocess.run([sys.executable, "-m", "gpusetup", "install", *args, "--force"], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert out.read_text().startswith("#!/usr/bin/env bash")


def test_dry_run_shows_the_checks_as_steps(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "gpusetup", "install", "--for", str(ROOT / "resources/demo/rtx3060.json"),
                          "--dry-run", "--offline", "-f", "jax", "--state-dir", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, env={**os.environ, "GPUSETUP_LIVE": "off"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    check = next(i for i, ln in enumerate(lines) if ln.endswith(". Check the installed files against their RECORD hashes"))
    assert "<gpusetup: check installed files against their RECORD hashes> 1500 'jax[cuda12]==" in lines[check + 1]
    imp = next(i for i, ln in enumerate(lines) if ln.endswith(". Import jax in the environment"))
    assert lines[imp + 1].endswith("<gpusetup: import each framework> 300 jax") and imp > check


def test_an_environment_whose_pip_was_broken_mid_update_is_rebuilt(fw_index, tmp_path: Path) -> None:
    """Killed while the new environment's pip updated itself (pip removed the old one and had not put the new
    one in place): that pip cannot redo anything, so the environment this install created is built again."""
    env, jdir = tmp_path / "env", tmp_path / "state"
    plan = jax_plan(f"{fw_index.url}/simple", env)
    if not any(s.id == "upgrade-pip" for s in plan.steps):
        pytest.skip("this Python's ensurepip already gives pip ≥ 24.1: no pip update is planned")
    assert execute(plan, journal_dir=jdir, free_space=PLENTY).ok
    # the journal as the kill left it: the environment made, the pip update started, nothing after it
    journal = Journal(jdir)
    recs = [line for line in journal.path.read_text().splitlines()]
    cut = next(i for i, line in enumerate(recs) if '"event": "start"' in line and '"step": "upgrade-pip"' in line)
    journal.path.write_text("\n".join(recs[:cut + 1]) + "\n")
    subprocess.run(["rm", "-rf", *map(str, site(env).glob("pip*"))], check=True)
    assert subprocess.run([str(env / "bin/python"), "-m", "pip", "--version"], capture_output=True).returncode != 0
    res = resume(jdir)
    assert res.ok, res.message
    assert any(n.code == "install.exec.rebuilding" for n in res.notes)
    assert [r["event"] for r in Journal(jdir).read() if r["event"] == "rebuild"] == ["rebuild"]
    assert imports(env)[0]
    assert subprocess.run([str(env / "bin/python"), "-m", "pip", "--version"], capture_output=True).returncode == 0
