"""The installer scripts run for real in Debian 12 and Ubuntu 24.04 roots (debootstrap + chroot), against a local
apt archive of stand-in packages with the real names, versions and dependency shapes (issue 26).

What an administrator needs to trust them unattended, checked in the package database and on disk, not from
exit codes: a driver install is verified (packages, a module for the kernel), `nvidia-smi` is there after an
Ubuntu server install, a second run changes nothing, undo leaves `dpkg -l` exactly as it was, `dpkg --audit`
stays clean, a machine without an NVIDIA GPU is refused before anything changes, ubuntu-drivers' "success"
with nothing installed is caught, and a Secure Boot key enrolment is not forgotten by a second run.

Stand-in versions are copied from the distributions' Packages indexes (deb.debian.org bookworm non-free,
archive.ubuntu.com noble-updates restricted/multiverse, read 2026-11-27): driver 535.261.03-1 on Debian 12;
580.178.04-0ubuntu0.24.04.1 for the Ubuntu 580-server packages, whose fabric manager and NSCQ library carry
another Ubuntu revision (as 535.161.08-0ubuntu2 / -0ubuntu3 do in noble), so only an upstream-version pin finds
them. The kernel is a stand-in release (6.1.0-99-amd64, 6.8.0-99-generic) that no real package uses.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .standin_apt import (
    Deb,
    audit,
    chroot,
    installed,
    make_root,
    needs_root_and_debootstrap,
    script,
    use_archive,
)

pytestmark = pytest.mark.installers

DEB_VER = "535.261.03-1"
DEB_KERNEL = "6.1.0-99-amd64"
# A debconf question at install time (critical priority: every frontend but noninteractive shows it). Its text is
# a stand-in; the real driver packages ask debconf questions too (and Ubuntu's DKMS asks for a MOK password). The
# scripts run apt with DEBIAN_FRONTEND=noninteractive, so it is never asked: the install does not wait on it.
QUESTION_TEMPLATE = """Template: nvidia-installer-cleanup/continue
Type: boolean
Default: true
Description: Continue the installation?
 A stand-in question, asked at high priority as the real driver packages' notes are.
"""
QUESTION_CONFIG = """#!/bin/sh
set -e
. /usr/share/debconf/confmodule
db_fset nvidia-installer-cleanup/continue seen false
db_input critical nvidia-installer-cleanup/continue
db_go
"""


CTK = """#!/bin/sh
# stand-in nvidia-ctk: `runtime configure --runtime=docker` adds the nvidia runtime to daemon.json, keeping what
# is there (a second run changes nothing)
f=/etc/docker/daemon.json
[ "$1 $2" = "runtime configure" ] || exit 0
mkdir -p /etc/docker
if [ -f $f ] && grep -q '"nvidia"' $f; then exit 0; fi
old=$( [ -f $f ] && sed -e '1d' -e '$d' $f )
{ echo '{'; [ -n "$old" ] && echo "$old,"; echo '  "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}}'; echo '}'; } > $f
"""


def debian_standins() -> list[Deb]:
    mod = f"/lib/modules/{DEB_KERNEL}/updates/dkms/nvidia-current.ko"
    return [
        Deb(f"linux-headers-{DEB_KERNEL}", "6.1.999-1", section="kernel"),
        Deb("linux-headers-amd64", "6.1.999-1", depends=f"linux-headers-{DEB_KERNEL}", section="kernel"),
        Deb("firmware-misc-nonfree", "20230210-5", section="non-free-firmware/kernel"),
        Deb("nvidia-installer-cleanup", "20220217+3", templates=QUESTION_TEMPLATE, config=QUESTION_CONFIG),
        Deb("nvidia-kernel-dkms", DEB_VER, depends="nvidia-installer-cleanup", provides="nvidia-kernel-535.261.03",
            files={mod: "stand-in kernel module\n", "/var/lib/dkms/mok.pub": "stand-in DKMS signing key\n"}),
        Deb("libcuda1", DEB_VER),
        Deb("nvidia-smi", DEB_VER, files={"/usr/bin/nvidia-smi": "#!/bin/sh\necho 'stand-in nvidia-smi'\n"}),
        Deb("nvidia-driver", DEB_VER, depends=f"nvidia-kernel-dkms (= {DEB_VER}) | nvidia-kernel-535.261.03, "
            f"libcuda1 (= {DEB_VER}), nvidia-smi, nvidia-installer-cleanup", provides="nvidia-driver-any"),
        # something a user installs later on top of the driver's libraries
        Deb("users-cuda-app", "1.0-1", depends="libcuda1", section="science"),
        # the container toolkit (versions of NVIDIA's libnvidia-container repository) and a Docker to register
        # it with; nvidia-ctk's stand-in adds the nvidia runtime to daemon.json as the real one does
        *[Deb(n, "1.17.8-1", section="utils") for n in
          ("nvidia-container-toolkit-base", "libnvidia-container1", "libnvidia-container-tools")],
        Deb("nvidia-container-toolkit", "1.17.8-1", section="utils", files={"/usr/bin/nvidia-ctk": CTK},
            depends="nvidia-container-toolkit-base, libnvidia-container-tools, libnvidia-container1"),
        Deb("docker.io", "20.10.24+dfsg1-1+b3", section="admin", files={"/usr/bin/docker": "#!/bin/sh\nexit 0\n"}),
    ]


UB = "580.178.04-0ubuntu0.24.04.1"
UB_FM = "580.178.04-0ubuntu0.24.04.2"
UB_KERNEL = "6.8.0-99-generic"


def ubuntu_standins() -> list[Deb]:
    return [
        Deb(f"linux-image-{UB_KERNEL}", "6.8.0-99.99", section="kernel"),
        Deb("nvidia-kernel-common-580-server", UB, provides="nvidia-kernel-common-580-server-580.178.04"),
        Deb(f"linux-modules-nvidia-580-server-open-{UB_KERNEL}", "6.8.0-99.99",
            depends=f"linux-image-{UB_KERNEL}, nvidia-kernel-common-580-server (>= 580.178.04)",
            files={f"/lib/modules/{UB_KERNEL}/kernel/nvidia-580srv-open/nvidia.ko": "stand-in module\n"}),
        Deb("linux-modules-nvidia-580-server-open-generic", "6.8.0-99.99",
            depends=f"linux-modules-nvidia-580-server-open-{UB_KERNEL} (= 6.8.0-99.99), "
                    "nvidia-kernel-common-580-server (>= 580.178.04)",
            provides=f"nvidia-dkms-580-server-open (= {UB})"),
        Deb("libnvidia-compute-580-server", UB, depends="nvidia-kernel-common-580-server-580.178.04"),
        Deb("nvidia-headless-no-dkms-580-server-open", UB,
            depends=f"nvidia-kernel-common-580-server (>= 580.178.04), libnvidia-compute-580-server (= {UB})"),
        Deb("nvidia-utils-580-server", UB, depends="libnvidia-compute-580-server (>= 580.178.04)",
            provides="nvidia-smi", files={"/usr/bin/nvidia-smi": "#!/bin/sh\necho 'stand-in nvidia-smi 580'\n"}),
        Deb("nvidia-fabricmanager-580", UB_FM, files={"/usr/bin/nv-fabricmanager": "#!/bin/sh\nexit 0\n"}),
        Deb("libnvidia-nscq-580", UB_FM),
        # ubuntu-drivers as it behaved on a machine without an NVIDIA GPU (issue 26): a message, exit 0
        Deb("ubuntu-drivers-common", "1:0.9.7.6ubuntu3.1", files={
            "/usr/bin/ubuntu-drivers": "#!/bin/sh\necho 'All the available drivers are already installed.'\nexit 0\n"}),
    ]


@pytest.fixture(scope="module")
def debian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs_root_and_debootstrap()
    root = make_root("bookworm", tmp_path_factory.mktemp("debian") / "root")
    use_archive(root, ["bookworm", "bookworm-updates", "bookworm-security"],
                ["main", "contrib", "non-free", "non-free-firmware"], debian_standins())
    # present before gpusetup: an install must leave it, and undo must not remove it
    chroot(root, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "firmware-misc-nonfree",
           check=True)
    return root


@pytest.fixture(scope="module")
def ubuntu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs_root_and_debootstrap()
    root = make_root("noble", tmp_path_factory.mktemp("ubuntu") / "root")
    use_archive(root, ["noble"], ["main", "restricted", "universe", "multiverse"], ubuntu_standins())
    chroot(root, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", f"linux-image-{UB_KERNEL}",
           check=True)
    return root


def commands(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("+ ")]


def test_debian_install_is_verified_idempotent_and_undone_exactly(debian: Path) -> None:
    before = installed(debian)
    args = ["--branch", "535", "--flavour", "proprietary", "--secure-boot", "off", "--kernel", DEB_KERNEL,
            "--nvidia-gpus", "1"]
    res = script(debian, "nvidia-driver.sh", *args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert audit(debian) == "", "dpkg left packages half-installed or half-configured"
    now = installed(debian)
    assert now["nvidia-driver"] == DEB_VER and now["nvidia-kernel-dkms"] == DEB_VER
    assert {"libcuda1", "nvidia-smi", "nvidia-installer-cleanup", f"linux-headers-{DEB_KERNEL}"} <= set(now)
    assert (debian / f"lib/modules/{DEB_KERNEL}/updates/dkms/nvidia-current.ko").exists()
    assert "NVIDIA kernel module for 6.1.0-99-amd64: present" in out
    assert "gpusetup: reboot-needed" in out
    assert "firmware-misc-nonfree is already installed" in out
    state = (debian / "var/lib/gpusetup/nvidia-driver.created").read_text()
    assert "pkg nvidia-kernel-dkms" in state and "pkg libcuda1" in state  # dependencies recorded, not just the request
    assert "pkg firmware-misc-nonfree" not in state and "had firmware-misc-nonfree" in state

    again = script(debian, "nvidia-driver.sh", *args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not [c for c in commands(again.stdout) if "apt-get" in c or "update-initramfs" in c], again.stdout
    assert installed(debian) == now
    assert "waits for the restart asked for earlier" in again.stdout  # not a fresh "installed" claim

    undo = script(debian, "nvidia-driver.sh", "--undo")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert installed(debian) == before, "undo must leave dpkg -l exactly as it was before the install"
    assert audit(debian) == ""
    assert "left firmware-misc-nonfree: it was installed before nvidia-driver.sh ran" in undo.stdout
    assert not (debian / "etc/modprobe.d/gpusetup-blacklist-nouveau.conf").exists()
    assert not (debian / "var/lib/gpusetup/reboot-needed").exists()


def test_no_nvidia_gpu_is_refused_before_anything_changes(debian: Path, ubuntu: Path) -> None:
    for root, extra in ((debian, ["--kernel", DEB_KERNEL]), (ubuntu, ["--kernel", UB_KERNEL, "--server"])):
        sysfs = root / "opt/no-gpu-sys/bus/pci/devices/0000:00:02.0"  # an Intel display controller only
        sysfs.mkdir(parents=True, exist_ok=True)
        (sysfs / "vendor").write_text("0x8086\n")
        (sysfs / "class").write_text("0x030000\n")
        (sysfs / "device").write_text("0x46a6\n")
        before = installed(root)
        for dry in ([], ["--dry-run"]):
            res = script(root, "nvidia-driver.sh", "--branch", "580", "--flavour", "open", "--sysfs", "/opt/no-gpu-sys",
                         *extra, *dry)
            assert res.returncode == 3, res.stdout + res.stderr
            assert "no NVIDIA GPU was found" in res.stderr and "Nothing was changed" in res.stderr
            assert commands(res.stdout) == []
        assert installed(root) == before
        assert not (root / "var/lib/gpusetup/reboot-needed").exists()


def test_secure_boot_enrolment_is_shown_and_not_forgotten_by_a_second_run(debian: Path) -> None:
    # mokutil stand-in: its answers are the strings of the real mokutil 0.6.0 (Debian 12's package)
    mok = debian / "usr/local/bin/mokutil"
    mok.write_text("""#!/bin/sh
s=/var/lib/standin-mok
case "$1" in
  --sb-state) echo "SecureBoot enabled" ;;
  --test-key)
    if [ -f $s/enrolled ]; then echo "SKIP: $2 is already enrolled"; exit 0; fi
    if [ -f $s/pending ]; then echo "$2 is already in the enrollment request"; exit 0; fi
    echo "$2 is not enrolled"; exit 1 ;;
  --generate-hash=*) echo '$6$stand-in$hash' ;;
  --import) mkdir -p $s; touch $s/pending ;;
esac
""")
    mok.chmod(0o755)
    before = installed(debian)
    args = ["--branch", "535", "--flavour", "proprietary", "--kernel", DEB_KERNEL, "--nvidia-gpus", "1"]
    try:
        res = script(debian, "nvidia-driver.sh", *args)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "Secure Boot on" in res.stdout
        pw = re.search(r"^gpusetup: mok-password (\d{8})$", res.stdout, re.M)
        assert pw, res.stdout
        assert f"type this one-time password: {pw.group(1)}" in res.stdout  # on screen, for the user
        assert pw.group(1) not in (debian / "var/lib/gpusetup/nvidia-driver.created").read_text()
        assert (debian / "var/lib/standin-mok/pending").exists()

        again = script(debian, "nvidia-driver.sh", *args)  # enrolment still pending: not "nothing to do"
        assert again.returncode == 0
        assert "waiting to be enrolled at the next restart" in again.stdout
        assert "gpusetup: reboot-needed" in again.stdout and "mok-password" not in again.stdout

        (debian / "var/lib/standin-mok/pending").unlink()  # the MOK manager was skipped at the restart
        third = script(debian, "nvidia-driver.sh", *args)
        assert re.search(r"^gpusetup: mok-password \d{8}$", third.stdout, re.M), third.stdout  # asked again
    finally:
        script(debian, "nvidia-driver.sh", "--undo")
        mok.unlink()
    assert installed(debian) == before


def test_ubuntu_server_install_has_nvidia_smi_and_the_matching_fabric_manager(ubuntu: Path) -> None:
    before = installed(ubuntu)
    args = ["--branch", "580", "--flavour", "open", "--server", "--nvswitch", "yes", "--kernel", UB_KERNEL,
            "--nvidia-gpus", "8", "--secure-boot", "off"]
    res = script(ubuntu, "nvidia-driver.sh", *args)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    now = installed(ubuntu)
    assert now["nvidia-utils-580-server"] == UB and now["nvidia-headless-no-dkms-580-server-open"] == UB
    assert now["nvidia-fabricmanager-580"] == UB_FM and now["libnvidia-nscq-580"] == UB_FM  # upstream-version pin
    assert f"linux-modules-nvidia-580-server-open-{UB_KERNEL}" in now
    assert chroot(ubuntu, "nvidia-smi").stdout.strip() == "stand-in nvidia-smi 580"
    assert "ubuntu-drivers" not in " ".join(commands(res.stdout))  # its exit code cannot be trusted
    assert audit(ubuntu) == ""

    again = script(ubuntu, "nvidia-driver.sh", *args)
    assert again.returncode == 0 and not [c for c in commands(again.stdout) if "apt-get" in c], again.stdout
    assert installed(ubuntu) == now

    undo = script(ubuntu, "nvidia-driver.sh", "--undo")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert installed(ubuntu) == before and audit(ubuntu) == ""


def test_ubuntu_drivers_reporting_success_with_nothing_installed_is_a_failure(ubuntu: Path) -> None:
    before = installed(ubuntu)
    res = script(ubuntu, "nvidia-driver.sh", "--kernel", UB_KERNEL, "--nvidia-gpus", "1", "--secure-boot", "off")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "ubuntu-drivers installed no NVIDIA driver" in res.stderr
    assert "gpusetup: reboot-needed" not in res.stdout
    assert not (ubuntu / "etc/modprobe.d/gpusetup-blacklist-nouveau.conf").exists()
    undo = script(ubuntu, "nvidia-driver.sh", "--undo")
    assert undo.returncode == 0
    assert installed(ubuntu) == before  # ubuntu-drivers-common, installed for the attempt, is gone again


def test_undo_stops_before_removing_what_later_software_needs(debian: Path) -> None:
    before = installed(debian)
    args = ["--branch", "535", "--flavour", "proprietary", "--secure-boot", "off", "--kernel", DEB_KERNEL,
            "--nvidia-gpus", "1"]
    assert script(debian, "nvidia-driver.sh", *args).returncode == 0
    chroot(debian, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "users-cuda-app", check=True)
    with_app = installed(debian)
    res = script(debian, "nvidia-driver.sh", "--undo")
    assert res.returncode == 1 and "users-cuda-app" in res.stderr and "before changing anything" in res.stderr
    assert installed(debian) == with_app
    chroot(debian, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "purge", "-y", "users-cuda-app", check=True)
    assert script(debian, "nvidia-driver.sh", "--undo").returncode == 0
    assert installed(debian) == before


def test_container_toolkit_configures_once_restarts_only_on_change_and_undo_restores(debian: Path) -> None:
    chroot(debian, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "docker.io", check=True)
    conf = debian / "etc/docker/daemon.json"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text('{\n  "log-driver": "journald"\n}\n')
    original = conf.read_text()
    # NVIDIA's repository counts as configured already (its packages come from the local stand-in archive)
    (debian / "usr/share/keyrings/nvidia-container-toolkit-keyring.gpg").write_text("")
    (debian / "etc/apt/sources.list.d/nvidia-container-toolkit.list").write_text("# the stand-in archive serves it\n")
    before = installed(debian)
    res = script(debian, "nvidia-container-toolkit.sh")  # the runtime is found, not assumed
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "runtime docker" in out and '"nvidia"' in conf.read_text() and '"journald"' in conf.read_text()
    assert "no running systemd here" in out  # a chroot: no restart through a systemd that is not running
    assert (debian / "var/lib/gpusetup/daemon.json.before-gpusetup").read_text() == original
    again = script(debian, "nvidia-container-toolkit.sh")
    assert again.returncode == 0
    assert "nothing changed, docker not restarted" in again.stdout
    assert not [c for c in commands(again.stdout) if "apt-get" in c or "restart" in c]
    undo = script(debian, "nvidia-container-toolkit.sh", "--undo")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert conf.read_text() == original and installed(debian) == before
