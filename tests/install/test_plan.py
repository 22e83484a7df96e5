"""Plan building (exact argv), script rendering (and running the rendered script for real), the CLI."""

from __future__ import annotations

import ensurepip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup.install import PlanError, build_plan, execute, render_script
from gpusetup.install.plan import expected_pins, installers_dir
from gpusetup.install.progress import PipProgress
from gpusetup.model import Action, Choice, FrameworkPlan, Gpu, Machine, System, to_dict
from gpusetup.versions import Version

from .stand_ins import PLENTY, build_wheel, installed, machine, torch_plan

INSTALLERS = installers_dir()
# A new venv made by this Python gets its ensurepip's pip (Debian 12: 23.0.1, too old to report bytes), and
# then the plan updates it first
OLD_ENSUREPIP = Version.parse(ensurepip.version()) < (24, 1)
UPGRADE = ["upgrade-pip"] if OLD_ENSUREPIP else []


def step(plan, sid: str):
    return next(s for s in plan.steps if s.id == sid)


def no_driver_plan(cc: str = "6.1") -> tuple[list[FrameworkPlan], Machine]:
    m = Machine(system=System(os="linux", distro_id="ubuntu", distro_version="24.04", arch="x86_64", python="3.12.3"),
                gpus=[Gpu(vendor="nvidia", name="NVIDIA GeForce GTX 1080", compute_capability=cc)])
    fp = FrameworkPlan(
        framework="pytorch", ok=False,
        choice=Choice(version="2.15", variant="cpu", index_url="https://download.pytorch.org/whl/cpu",
                      packages=["torch==2.15.*"]),
        gpu_choice=Choice(version="2.14", variant="cu126", index_url="https://download.pytorch.org/whl/cu126",
                          packages=["torch==2.14.*", "torchvision==0.29.*"]),
        actions=[Action(kind="install-driver", why="no NVIDIA driver is installed", min_version="525.60.13",
                        branch="580 (the last driver branch for Maxwell, Pascal, Volta GPUs; proprietary kernel modules)")],
    )
    return [fp], m


def test_plan_steps_and_exact_argv(tmp_path: Path) -> None:
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{tmp_path / 'v'}")
    venv = tmp_path / "v"
    py = str(venv / "bin" / "python")
    assert [s.id for s in plan.steps] == ["create-venv", *UPGRADE, "pip-install", "verify", "check-files", "import",
                                          "protect"]
    assert plan.steps[0].argv == [sys.executable, "-m", "venv", str(venv)]
    assert step(plan, "pip-install").argv == [py, "-m", "pip", "install", "--disable-pip-version-check",
                                              "--progress-bar", "raw", "--index-url",
                                              "https://download.pytorch.org/whl/cu126", "torch==2.9.1+cu126"]
    assert step(plan, "pip-install").undo == [py, "-m", "pip", "uninstall", "-y", "torch"]
    assert step(plan, "verify").argv[:3] == [py, "-I", "-c"] and step(plan, "verify").argv[4:] == ["torch==2.9.1+cu126"]
    assert not any(s.needs_root for s in plan.steps)
    assert (plan.download_mib, plan.installed_mib) == (3500, 6500)


def test_an_old_pip_in_the_new_environment_is_updated_first(tmp_path: Path) -> None:
    """pip < 24.1 cannot report bytes (--progress-bar raw): the plan updates it from the user's PyPI mirror
    (else pip's configured index, which is then checked before starting), as a step of its own."""
    mirror = "https://pypi.mirror.example/simple"
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{tmp_path / 'v'}",
                      index_url=mirror, base_python=sys.executable)
    py = str(tmp_path / "v" / "bin" / "python")
    assert plan.base_pip == ""  # a named base Python: its ensurepip's pip is not known, so it is updated
    up = step(plan, "upgrade-pip")
    assert [s.id for s in plan.steps][:3] == ["create-venv", "upgrade-pip", "pip-install"]
    assert up.kind == "pip" and up.argv == [py, "-m", "pip", "install", "--disable-pip-version-check",
                                            "--index-url", mirror, "pip>=24.1"]
    assert plan.probes[mirror] == "pip" and mirror in plan.indexes
    assert "--progress-bar" in step(plan, "pip-install").argv
    default = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{tmp_path / 'v'}",
                         base_python=sys.executable)
    assert step(default, "upgrade-pip").argv[-2:] == ["--disable-pip-version-check", "pip>=24.1"]
    assert default.probes["https://pypi.org/simple"] == "pip"
    # not where the pip that runs is known to be new enough, or is the user's, or nothing is downloaded
    host = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{tmp_path / 'v'}",
                      with_pip=False, host_pip=True)
    assert "upgrade-pip" not in [s.id for s in host.steps] and host.pip[0] == sys.executable
    existing = tmp_path / "mine"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(existing)], check=True)
    assert "upgrade-pip" not in [s.id for s in build_plan(
        torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{existing}").steps]
    house = tmp_path / "house"
    house.mkdir()
    assert "upgrade-pip" not in [s.id for s in build_plan(
        torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{tmp_path / 'v'}",
        wheelhouse=house).steps]
    assert "upgrade-pip" not in [s.id for s in build_plan(
        torch_plan("https://download.pytorch.org/whl/cu126"), machine(), "conda:gpu", conda_envs=["base"]).steps]


def test_mirrors_replace_the_index(tmp_path: Path) -> None:
    target = f"venv:{tmp_path / 'x'}"
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), target,
                      pytorch_mirror="https://mirror.example.cn/pytorch/whl/")
    pip = step(plan, "pip-install").argv
    assert pip[pip.index("--index-url") + 1] == "https://mirror.example.cn/pytorch/whl/cu126"
    assert plan.indexes == ["https://mirror.example.cn/pytorch/whl/cu126"] + (["https://pypi.org/simple"] if OLD_ENSUREPIP else [])
    jax = [FrameworkPlan(framework="jax", ok=True, choice=Choice(version="0.10.2", variant="cuda12",
                                                                 packages=["jax[cuda12]==0.10.2"]))]
    p2 = build_plan(jax, machine(), target, index_url="https://pypi.mirror.example/simple")
    assert step(p2, "pip-install").argv[-3:] == ["--index-url", "https://pypi.mirror.example/simple", "jax[cuda12]==0.10.2"]
    assert step(p2, "verify").argv[-1] == "jax==0.10.2"
    both = build_plan(torch_plan("https://download.pytorch.org/whl/cu126") + jax, machine(), target)
    # the index both pip's update and JAX come from is probed for JAX: pip is optional there (an index without it
    # skips the update, install.execute._preflight)
    assert both.probes == {"https://download.pytorch.org/whl/cu126": "torch", "https://pypi.org/simple": "jax"}
    assert [s.id for s in both.steps] == ["create-venv", *UPGRADE, "pip-install", "pip-install-2", "verify", "check-files",
                                          "import", "protect"]


def test_expected_pins_make_the_build_tag_explicit() -> None:
    ch = Choice(version="2.14", variant="cu126", index_url="https://download.pytorch.org/whl/cu126",
                packages=["torch==2.14.*", "torchvision==0.29.*", "numpy<2"])
    assert expected_pins(ch) == ["torch==2.14.*+cu126", "torchvision==0.29.*+cu126", "numpy<2"]
    pypi = Choice(version="2.21", variant="and-cuda", packages=["tensorflow[and-cuda]==2.21.*"])
    assert expected_pins(pypi) == ["tensorflow==2.21.*"]


def test_no_driver_plan_adds_driver_reboot_and_check_steps() -> None:
    fps, m = no_driver_plan()
    plan = build_plan(fps, m, "venv:/tmp/gpu")
    assert [s.id for s in plan.steps] == ["create-venv", *UPGRADE, "pip-install", "verify", "check-files", "import",
                                          "protect", "driver", "reboot",
                                          "check-driver"]
    drv = step(plan, "driver")
    assert drv.needs_root and drv.argv == ["bash", str(INSTALLERS / "nvidia-driver.sh"), "--flavour", "proprietary",
                                           "--branch", "580", "--nvidia-gpus", "1"]
    assert drv.undo == ["bash", str(INSTALLERS / "nvidia-driver.sh"), "--undo"]
    assert "torch==2.14.*" in step(plan, "pip-install").argv  # the GPU build, usable after the driver
    assert any("the GPU build 2.14 (cu126); it works once the driver below is installed" in n for n in plan.notes)
    # the user declines the driver: the build that works now, no root steps
    now = build_plan(fps, m, "venv:/tmp/gpu", driver=False)
    assert "torch==2.15.*" in step(now, "pip-install").argv and not any(s.needs_root for s in now.steps)
    # Turing and newer get the open modules
    fps2, m2 = no_driver_plan(cc="8.6")
    assert step(build_plan(fps2, m2, "venv:/tmp/gpu"), "driver").argv[2:4] == ["--flavour", "open"]


def test_wsl_never_gets_a_linux_driver_step() -> None:
    fps, m = no_driver_plan()
    m.system.wsl = True
    plan = build_plan(fps, m, "venv:/tmp/gpu")
    assert not any(s.kind in ("script", "reboot") for s in plan.steps)
    assert any("update the driver on the Windows side" in n for n in plan.notes)


def test_windows_driver_step_uses_the_powershell_script() -> None:
    fps, m = no_driver_plan()
    m.system = System(os="windows", arch="x86_64")
    plan = build_plan(fps, m, "venv:C:\\gpu", portable=True)
    assert plan.steps[0].argv == ["python", "-m", "venv", "C:\\gpu"]
    assert plan.python == ["C:\\gpu\\Scripts\\python.exe"]
    drv = next(s for s in plan.steps if s.id == "driver")
    assert drv.argv[-4:] == ["-Branch", "580", "-MinVersion", "525.60.13"] and drv.argv[0] == "powershell"
    ps = render_script(plan, "powershell")
    assert "$ErrorActionPreference = 'Stop'" in ps and "& 'C:\\gpu\\Scripts\\python.exe' '-m' 'pip'" in ps
    assert "if ($LASTEXITCODE -ne 0)" in ps


def test_conda_target_creates_the_env_only_when_missing() -> None:
    fps = torch_plan("https://download.pytorch.org/whl/cu126")
    plan = build_plan(fps, machine(), "conda:gpu", conda_envs=["base"])
    pyver = f"python={sys.version_info.major}.{sys.version_info.minor}"
    assert plan.steps[0].argv == ["conda", "create", "-y", "-n", "gpu", pyver, "pip"]
    assert plan.steps[0].undo == ["conda", "env", "remove", "-y", "-n", "gpu"]
    assert plan.steps[1].argv[:8] == ["conda", "run", "--no-capture-output", "-n", "gpu", "python", "-m", "pip"]
    existing = build_plan(fps, machine(), "conda:gpu", conda_envs=["base", "gpu"])
    assert existing.steps[0].id == "pip-install"


def test_bad_targets_and_empty_plans_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="use venv:PATH"):
        build_plan(torch_plan("x"), machine(), "docker:foo")
    (tmp_path / "notavenv").mkdir()
    with pytest.raises(PlanError, match="exists but is not a virtual environment"):
        build_plan(torch_plan("x"), machine(), f"venv:{tmp_path / 'notavenv'}")
    nothing = [FrameworkPlan(framework="tensorflow", ok=False, choice=None)]
    with pytest.raises(PlanError, match="Nothing to install"):
        build_plan(nothing, machine(), "venv:/tmp/x")


def test_pip_progress_parser() -> None:
    now = [100.0]
    p = PipProgress(clock=lambda: now[0])
    assert p.feed("Collecting torch==2.9.1+cu126\n") and p.label == "Collecting torch==2.9.1+cu126"
    assert p.feed("  Downloading https://download.pytorch.org/whl/cu126/torch-2.9.1%2Bcu126-cp312-cp312-"
                  "manylinux_2_28_x86_64.whl (900.1 MB)")
    assert p.label.startswith("Downloading torch-2.9.1%2Bcu126-cp312") and p.label.endswith("(900.1 MB)")
    assert p.feed("Progress 100000000 of 900100000")
    assert p.label.endswith(" 11% (100 of 900 MB)")  # no speed before a second has passed
    now[0] += 10
    assert p.feed("Progress 450050000 of 900100000") and p.fraction == pytest.approx(0.45)
    # 350 MB in 10 s: 35 MB/s, 450 MB left: about 13 s
    assert p.label.endswith(" 50% (450 of 900 MB, 35.0 MB/s, about 13 s left)"), p.label
    assert not p.feed("Progress 0 of 0")
    assert p.feed("Installing collected packages: tinydep, torch") and p.fraction == 0.92
    assert p.feed("Successfully installed tinydep-1.0 torch-2.9.1+cu126") and p.fraction == 1.0
    assert not p.feed("random noise")


def test_rendered_bash_script_is_clean_and_really_installs(index, tmp_path: Path) -> None:
    plan = build_plan(torch_plan(f"{index.url}/whl/cu126"), machine(), f"venv:{tmp_path / 'env'}",
                      with_pip=False, host_pip=True)
    text = render_script(plan, "bash")
    script = tmp_path / "install.sh"
    script.write_text(text)
    sc = Path(sys.executable).parent / "shellcheck"
    res = subprocess.run([str(sc), str(script)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "==> Step 6 of 6: Protect the installed build" in run.stdout and "Verified: torch 2.9.1+cu126" in run.stdout
    assert installed(tmp_path / "env")["torch"] == "2.9.1+cu126"


def test_rendered_script_runs_where_there_is_no_curl_or_wget(index, tmp_path: Path) -> None:
    """A fresh Debian has python3 but neither curl nor wget (found in a clean bookworm root, issue 16)."""
    plan = build_plan(torch_plan(f"{index.url}/whl/cu126"), machine(), f"venv:{tmp_path / 'env'}",
                      with_pip=False, host_pip=True)
    script = tmp_path / "install.sh"
    script.write_text(render_script(plan, "bash"))
    bare = tmp_path / "bin"
    bare.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep)[::-1]:
        for exe in Path(d).glob("*") if Path(d).is_dir() else []:
            if exe.name not in ("curl", "wget") and os.access(exe, os.X_OK):
                target = bare / exe.name
                if target.is_symlink():
                    target.unlink()
                target.symlink_to(exe)
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": str(bare)})
    assert run.returncode == 0, run.stdout + run.stderr
    assert installed(tmp_path / "env")["torch"] == "2.9.1+cu126"
    # and an index that does not answer still stops the script before anything changes
    dead = plan.indexes[0].replace(index.url, "http://127.0.0.1:9")
    script.write_text(render_script(plan, "bash").replace(plan.indexes[0], dead))
    run = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": str(bare)})
    assert run.returncode == 1 and "Cannot reach http://127.0.0.1:9" in run.stderr


def test_rendered_script_embeds_installers_and_stops_at_reboot() -> None:
    fps, m = no_driver_plan()
    text = render_script(build_plan(fps, m, "venv:~/gpu-env", portable=True, container_toolkit=True), "bash")
    assert "cat > \"$gpusetup_dir/nvidia-driver.sh\" <<'GPUSETUP_EOF'" in text
    assert 'sudo bash "$gpusetup_dir/nvidia-driver.sh" --flavour proprietary --branch 580' in text
    assert text.index("Restart the computer now") < text.index("sudo bash \"$gpusetup_dir/nvidia-container-toolkit.sh\"")
    assert "gpusetup_reach https://download.pytorch.org/whl/cu126/torch/" in text
    assert "python3 -m venv " in text


# ------------------------------------------------------------------------------------------------ CLI


def cli(*args: str) -> int:
    from gpusetup.cli import main

    return main(list(args))


@pytest.fixture
def local_machine(monkeypatch: pytest.MonkeyPatch) -> Machine:
    """This machine as detection would see it, without a GPU (detection is not what these tests test)."""
    m = Machine(system=System(os="linux", distro_id="debian", distro_version="12", arch="x86_64",
                              python=f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"))
    monkeypatch.setattr("gpusetup.commands.install.detect", lambda *a, **k: m)
    return m


def test_cli_dry_run_changes_nothing(local_machine: Machine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc = cli("install", "--dry-run", "--target", f"venv:{tmp_path / 'env'}", "--state-dir", str(tmp_path / "s"))
    out = capsys.readouterr().out
    assert rc == 0 and "Dry run: nothing was changed." in out
    assert f"1. Create the virtual environment {tmp_path / 'env'}" in out
    assert "--index-url https://download.pytorch.org/whl/cpu" in out
    assert not (tmp_path / "env").exists() and not (tmp_path / "s").exists()


def test_cli_without_terminal_refuses_without_yes(local_machine: Machine, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr("sys.stdin", open("/dev/null"))  # noqa: SIM115
    rc = cli("install", "--target", f"venv:{tmp_path / 'env'}", "--state-dir", str(tmp_path / "s"))
    assert rc == 3 and "add --yes" in capsys.readouterr().err
    assert not (tmp_path / "env").exists()


def test_cli_for_report_writes_a_script(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    fps, m = no_driver_plan()
    report = tmp_path / "machine.json"
    report.write_text(json.dumps(to_dict(m)))
    out = tmp_path / "for-user.sh"
    assert cli("install", "--for", str(report), "--script", str(out), "--target", "venv:~/gpu-env") == 0
    text = out.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "nvidia-driver.sh" in text and "sudo bash" in text
    assert cli("install", "--for", str(report), "--target", "venv:/tmp/none", "--yes") == 3
    assert "--for plans for another machine" in capsys.readouterr().err


def test_cli_real_install_through_the_resolver(index, local_machine: Machine, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    """End to end: detection → resolver → plan → pip from the local PyTorch mirror → verified venv."""
    from gpusetup.compat.resolver import resolve

    (fp,) = resolve(local_machine, ["pytorch"])
    ch = fp.choice
    assert ch is not None and ch.index_url and ch.index_url.startswith("https://download.pytorch.org/whl/")
    layout = ch.index_url.rsplit("/", 1)[-1]
    wheels = []
    for pin in ch.packages:
        name, _, ver = pin.partition("==")
        wheels.append(build_wheel(index.root, name, ver.replace(".*", ".0") + f"+{ch.variant}"))
    index.layouts[layout] = index.layouts.get(layout, []) + wheels
    state = tmp_path / "s"
    rc = cli("install", "--yes", "--target", f"venv:{tmp_path / 'env'}", "--state-dir", str(state),
             "--pytorch-mirror", f"{index.url}/whl")
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert f"Log: {state / 'install.log'}" in captured.out or str(state / "install.log") in captured.out
    got = installed(tmp_path / "env")
    assert all(got[w.name.split("-")[0]] == w.name.split("-")[1] for w in wheels)
    assert cli("install", "--rollback", "--yes", "--state-dir", str(state)) == 0
    assert not (tmp_path / "env").exists()
    assert cli("install", "--resume", "--yes", "--state-dir", str(state)) == 3


def test_execute_accepts_a_plain_plan(tmp_path: Path) -> None:
    from gpusetup.model import Plan, Step

    plan = Plan(steps=[Step(id="a", title="a", argv=[sys.executable, "-c", "print('hi')"])])
    res = execute(plan, journal_dir=tmp_path / "s", check_network=False, free_space=PLENTY)
    assert res.ok and "hi" in Path(res.log_path).read_text()


def test_elevation_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    ex = importlib.import_module("gpusetup.install.execute")

    monkeypatch.setattr(ex.os, "geteuid", lambda: 1000)
    monkeypatch.delenv("GPUSETUP_GUI", raising=False)
    assert ex._elevation("auto") == ["sudo"]
    monkeypatch.setenv("GPUSETUP_GUI", "1")
    monkeypatch.setattr(ex.shutil, "which", lambda name: "/usr/bin/pkexec" if name == "pkexec" else None)
    assert ex._elevation("auto") == ["pkexec"]
    assert ex._elevation("none") == []
    monkeypatch.setattr(ex.os, "geteuid", lambda: 0)
    assert ex._elevation("auto") == []  # already root: no prefix


def test_an_existing_environment_with_a_new_pip_reports_bytes(tmp_path: Path) -> None:
    """Its pip is the user's (never updated by the plan), but when it is 24.1 or newer the download reports
    bytes: the version is read from its dist-info folder (a real venv; pip put in by pip, from this test
    environment's own pip rebuilt as a wheel)."""
    from .stand_ins import wheel_of_installed

    old = tmp_path / "old"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(old)], check=True)
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{old}")
    assert plan.base_pip == "" and "--progress-bar" not in step(plan, "pip-install").argv
    assert "upgrade-pip" not in [s.id for s in plan.steps]
    new = tmp_path / "new"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(new)], check=True)
    whl = wheel_of_installed(tmp_path, "pip")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(new / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-index", "--no-deps", str(whl)], check=True, timeout=300)
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{new}")
    import importlib.metadata

    assert plan.base_pip == importlib.metadata.version("pip")
    want_raw = Version.parse(plan.base_pip) >= (24, 1)
    assert ("--progress-bar" in step(plan, "pip-install").argv) == want_raw
    assert "upgrade-pip" not in [s.id for s in plan.steps]


def test_a_sent_script_continues_after_the_restart_instead_of_stopping_there_again(tmp_path: Path) -> None:
    """The recipient of `install --script` has no gpusetup: running the same script again after the restart goes on
    after the reboot step (issue 26: it used to stop there again, and told them to run gpusetup install --resume)."""
    from gpusetup.install.plan import InstallPlan
    from gpusetup.messages import msg, worded_step

    log = tmp_path / "ran.txt"
    plan = InstallPlan(target="venv:/x")
    plan.steps = [
        worded_step("driver", msg("step.title.driver"), msg("step.explain.check-driver"), kind="command",
                    argv=["sh", "-c", f"echo driver >> {log}"]),
        worded_step("reboot", msg("step.title.reboot"), msg("step.explain.reboot"), kind="reboot"),
        worded_step("check-driver", msg("step.title.check-driver"), msg("step.explain.check-driver"),
                    kind="command", argv=["sh", "-c", f"echo check >> {log}"]),
    ]
    script = tmp_path / "install.sh"
    script.write_text(render_script(plan, "bash"))
    boot = tmp_path / "boot_id"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "GPUSETUP_BOOT_ID_FILE": str(boot)}
    (tmp_path / "reboot-needed").write_text("nvidia-driver.sh installed a driver; restart to load it\n")
    env["GPUSETUP_REBOOT_FILE"] = str(tmp_path / "reboot-needed")
    boot.write_text("boot-1\n")
    first = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert first.returncode == 0 and "Restart the computer now, then run this same script again" in first.stdout
    assert log.read_text() == "driver\n"
    again = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert "Restart the computer now" in again.stdout and log.read_text() == "driver\n"  # same boot: still waits
    boot.write_text("boot-2\n")  # the restart
    after = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "(done earlier)" in after.stdout and "All steps finished." in after.stdout
    assert log.read_text() == "driver\ncheck\n"  # the driver step did not run twice
    assert "gpusetup install --resume" not in script.read_text()
