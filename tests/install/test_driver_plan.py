"""`gpusetup install --driver`: the branch comes from the GPUs, a machine without an NVIDIA GPU is refused, and a
`--for` preview is the script that will run on that machine (its distribution, kernel, Secure Boot and NVSwitches
from the report or profile, never from this machine's sysfs) — issue 26."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpusetup.compat import branches
from gpusetup.compat.db import get_db
from gpusetup.compat.profile import machine_from_data
from gpusetup.install import PlanError, build_plan
from gpusetup.versions import ComputeCapability


def driver_argv(profile: dict) -> list[str]:
    m = machine_from_data(profile)
    plan = build_plan([], m, "venv:/nonexistent/gpusetup-test-env", portable=True, foreign=True, driver=True)
    return next(s for s in plan.steps if s.id == "driver").argv


def cli(*args: str) -> int:
    from gpusetup.cli import main

    return main(list(args))


def test_one_branch_function_for_resolver_and_installer() -> None:
    db = get_db()
    cc = ComputeCapability.parse
    # Kepler's last branch is 470 (driver_branches/legacy_branches); a newer GPU beside it does not lift it
    assert branches.driver_branch(db, [cc("3.0")]) == branches.BranchChoice(470, True, "Kepler", "proprietary")
    assert branches.driver_branch(db, [cc("3.5"), cc("8.6")]).branch == 470
    assert branches.driver_branch(db, [cc("8.6")], "570.86.10").branch == 570  # what a framework needs
    assert branches.driver_branch(db, [cc("8.6")]).branch is None  # the distribution recommends one
    assert branches.driver_branch(db, [cc("9.0")], server=True).branch == 580  # CUDA 13's family minimum: 580
    assert branches.driver_branch(db, [cc("9.0")]).modules == "open"


def test_a_kepler_gpu_gets_its_legacy_branch_without_any_framework(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """GTX 770 (GK104, 10de:1184): 470 on Debian 12 (nvidia-tesla-470-driver), akmod-nvidia-470xx on Fedora."""
    gpu = {"vendor": "nvidia", "name": "NVIDIA GeForce GTX 770", "pci_id": "10de:1184"}
    argv = driver_argv({"os": "linux", "distro": "debian 12", "gpus": [gpu]})
    assert argv[argv.index("--branch") + 1] == "470" and argv[argv.index("--flavour") + 1] == "proprietary"
    for distro, package in (("debian 12", "nvidia-tesla-470-driver"), ("fedora 40", "akmod-nvidia-470xx")):
        prof = tmp_path / f"{distro.split()[0]}.json"
        prof.write_text(json.dumps({"os": "linux", "distro": distro, "kernel": "6.1.0-18-amd64", "gpus": [gpu]}))
        rc = cli("install", "--dry-run", "--driver", "--for", str(prof), "--state-dir", str(tmp_path / "s"))
        out = capsys.readouterr().out
        assert rc == 0, out
        assert package in out, out
        assert "nvidia-driver firmware-misc-nonfree" not in out  # not the distribution's 535


def test_install_driver_on_a_machine_without_an_nvidia_gpu_is_refused(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    prof = tmp_path / "intel.json"
    prof.write_text(json.dumps({"os": "linux", "distro": "ubuntu 24.04",
                                "gpus": [{"vendor": "intel", "name": "Intel Arc A770", "pci_id": "8086:56a0"}]}))
    with pytest.raises(PlanError) as err:
        build_plan([], machine_from_data(json.loads(prof.read_text())), "venv:/x", foreign=True, driver=True)
    assert err.value.message.code == "plan-error.driver-no-nvidia-gpu"
    rc = cli("install", "--dry-run", "--driver", "--for", str(prof), "--state-dir", str(tmp_path / "s"))
    captured = capsys.readouterr()
    assert rc != 0 and "No NVIDIA GPU was found" in captured.out + captured.err
    rc = cli("--lang", "zh_CN", "install", "--dry-run", "--driver", "--for", str(prof), "--state-dir",
             str(tmp_path / "s"))
    captured = capsys.readouterr()
    assert rc != 0 and "没有找到 NVIDIA 显卡" in captured.out + captured.err


def test_an_nvswitch_report_previews_the_fabric_manager_step(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """An HGX H100 report says 4 NVSwitches: the preview adds the fabric manager, whatever this machine's sysfs
    says (it used to scan the local /sys and say 'NVSwitch no')."""
    gpus = [{"vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3", "pci_id": "10de:2330"}] * 8
    profile = {"os": "linux", "distro": "ubuntu 24.04", "kernel": "6.8.0-45-generic", "secure_boot": True,
               "nvswitches": 4, "gpus": gpus}
    argv = driver_argv(profile)
    assert "--server" in argv and argv[argv.index("--nvswitch") + 1] == "yes"
    assert argv[argv.index("--nvidia-gpus") + 1] == "8" and argv[argv.index("--branch") + 1] == "580"
    assert argv[argv.index("--kernel") + 1] == "6.8.0-45-generic" and argv[argv.index("--secure-boot") + 1] == "on"
    prof = tmp_path / "hgx.json"
    prof.write_text(json.dumps(profile))
    rc = cli("install", "--dry-run", "--driver", "--for", str(prof), "--state-dir", str(tmp_path / "s"))
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "nvidia-fabricmanager-580" in out and "libnvidia-nscq-580" in out and "nvidia-utils-580-server" in out
    assert "linux-modules-nvidia-580-server-open-6.8.0-45-generic" in out
    assert "NVSwitch yes" in out and "Secure Boot on" in out


def test_a_derivative_is_previewed_with_its_ubuntu_base(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    prof = tmp_path / "mint.json"
    prof.write_text(json.dumps({
        "os": "linux", "kernel": "6.8.0-45-generic",
        "os_release": {"ID": "linuxmint", "ID_LIKE": "ubuntu debian", "VERSION_ID": "22.3", "UBUNTU_CODENAME": "noble"},
        "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4070", "pci_id": "10de:2786"}]}))
    rc = cli("install", "--dry-run", "--driver", "--for", str(prof), "--state-dir", str(tmp_path / "s"))
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "linux-modules-nvidia-580-open-6.8.0-45-generic" in out, out  # Ubuntu's recipe (ID_LIKE, UBUNTU_CODENAME)
    assert "does not say which Ubuntu release" not in out


@pytest.mark.parametrize(("field", "value"), [("distro", "Ubuntu!"), ("kernel", "latest"), ("nvswitches", -1),
                                              ("secure_boot", "yes"), ("os_release", {"NAME": "x"})])
def test_profile_fields_for_installers_are_checked(field: str, value: object) -> None:
    from gpusetup.compat.profile import ProfileError

    with pytest.raises(ProfileError):
        machine_from_data({"os": "linux", field: value})


def test_container_toolkit_uses_the_runtime_the_report_found() -> None:
    from gpusetup.model import Containers, Machine, System

    for containers, expected in ((Containers(docker="27.3.1"), ["--runtime", "docker"]),
                                 (Containers(podman="5.2.2"), ["--runtime", "podman"]),
                                 (Containers(), [])):
        m = Machine(system=System(os="linux", distro_id="fedora", distro_version="40"), containers=containers)
        plan = build_plan([], m, "venv:/x", container_toolkit=True, portable=True)
        argv = next(s for s in plan.steps if s.id == "container-toolkit").argv
        assert argv[2:] == expected
