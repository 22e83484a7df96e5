#!/usr/bin/env bash
# Install the NVIDIA driver the way the distribution supports it.
#
#   Ubuntu:        ubuntu-drivers (picks Canonical-signed modules: no Secure Boot key enrolment needed)
#   Debian:        the distribution's packages (535 / legacy 470), or NVIDIA's repository for newer branches
#   Fedora:        RPM Fusion (akmod-nvidia; akmods signs the module, MOK enrolment explained)
#   RHEL & clones: NVIDIA's CUDA repository (dnf module streams, DKMS)
#   WSL:           refused - the driver comes from Windows.
#
# Pre-Turing GPUs (Maxwell, Pascal, Volta) need the proprietary flavour: NVIDIA's open kernel modules
# (the default since 560) support Turing and newer only. --flavour says which one; gpusetup passes it.
#
# Data centres: --server installs the -server driver branch (Ubuntu: `ubuntu-drivers install --gpgpu`,
# nvidia-driver-N-server). On NVSwitch systems (HGX/DGX; --nvswitch auto finds the NVSwitch bridges in
# sysfs) it also installs the fabric manager of exactly the driver's version (the GPUs stay unusable when
# the two differ) and enables it; --server and NVSwitch systems also get the persistence daemon enabled.
#
# Every change is printed before it is made ("+ command"); --dry-run prints and changes nothing. Running it
# twice is safe: an installed driver is left alone. What it creates is listed in the state file, so --undo
# removes exactly that. A successful install prints "gpusetup: reboot-needed" and writes the reboot-needed
# state file; `gpusetup install --resume` continues after the restart.
#
# Facts marked [I] are inferred from NVIDIA / distribution documentation, not tested on every release:
# check https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ when a command fails.
set -euo pipefail

NAME=nvidia-driver
DRY_RUN=0
UNDO=0
ASSUME_FRESH=0
OS_RELEASE=/etc/os-release
PROC_VERSION=/proc/version
STATE_DIR=/var/lib/gpusetup
WSL=auto
SECURE_BOOT=auto
BRANCH=""
FLAVOUR=auto
ARCH=""
SERVER=0
NVSWITCH=auto
PERSISTENCE=auto
SYSFS=/sys

usage() {
    cat <<'EOF'
Usage: nvidia-driver.sh [--branch N] [--flavour open|proprietary|auto] [--dry-run] [--undo]
                        [--server] [--nvswitch yes|no|auto] [--persistence yes|no|auto]
                        [--secure-boot on|off|auto] [--os-release FILE] [--proc-version FILE]
                        [--wsl yes|no|auto] [--arch x86_64|aarch64] [--state-dir DIR] [--sysfs DIR]
                        [--assume-fresh]

  --branch N        driver branch, e.g. 580 (default: the distribution's recommendation)
  --flavour F       open (Turing and newer), proprietary (needed for Maxwell/Pascal/Volta) or auto
  --dry-run         print exactly what would be done; change nothing
  --undo            remove what an earlier run of this script installed (from its state file)
  --assume-fresh    treat every package as not installed (dry-runs for another machine)
  --server          the data-centre (-server / gpgpu) driver branch
  --nvswitch W      yes: also install the fabric manager matching the driver; auto: if NVSwitches are found
  --persistence W   enable nvidia-persistenced (auto: with --server or on NVSwitch systems)
EOF
}

die() { printf 'nvidia-driver.sh: %s\n' "$*" >&2; exit 1; }
note() { printf '# %s\n' "$*"; }
run() {
    printf '+'
    printf ' %q' "$@"
    printf '\n'
    if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}
# write_file PATH LINE... : create a file (recorded for --undo)
write_file() {
    local path=$1
    shift
    printf '+ write %s\n' "$path"
    printf '  | %s\n' "$@"
    if [ "$DRY_RUN" = 0 ]; then
        mkdir -p "$(dirname "$path")"
        printf '%s\n' "$@" >"$path"
        record file "$path"
    fi
}
record() {
    if [ "$DRY_RUN" = 0 ]; then
        mkdir -p "$STATE_DIR"
        printf '%s %s\n' "$1" "$2" >>"$STATE_DIR/$NAME.created"
    fi
}
have() { [ "$ASSUME_FRESH" = 0 ] && command -v "$1" >/dev/null 2>&1; }
osr() { sed -n "s/^$1=//p" "$OS_RELEASE" | head -n1 | tr -d '"'; }
deb_installed() { [ "$ASSUME_FRESH" = 0 ] && dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
rpm_installed() { [ "$ASSUME_FRESH" = 0 ] && command -v rpm >/dev/null 2>&1 && rpm -q "$1" >/dev/null 2>&1; }

while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) DRY_RUN=1 ;;
        --undo) UNDO=1 ;;
        --assume-fresh) ASSUME_FRESH=1 ;;
        --branch) BRANCH=${2:?--branch needs a value}; shift ;;
        --flavour | --flavor) FLAVOUR=${2:?--flavour needs a value}; shift ;;
        --secure-boot) SECURE_BOOT=${2:?--secure-boot needs a value}; shift ;;
        --os-release) OS_RELEASE=${2:?--os-release needs a file}; shift ;;
        --proc-version) PROC_VERSION=${2:?--proc-version needs a file}; shift ;;
        --wsl) WSL=${2:?--wsl needs a value}; shift ;;
        --arch) ARCH=${2:?--arch needs a value}; shift ;;
        --state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift ;;
        --server) SERVER=1 ;;
        --nvswitch) NVSWITCH=${2:?--nvswitch needs a value}; shift ;;
        --persistence) PERSISTENCE=${2:?--persistence needs a value}; shift ;;
        --sysfs) SYSFS=${2:?--sysfs needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
done

case $FLAVOUR in open | proprietary | auto) ;; *) die "--flavour must be open, proprietary or auto" ;; esac
case $BRANCH in '' | [0-9][0-9][0-9]) ;; *) die "--branch must be a driver branch like 580" ;; esac
case $NVSWITCH in yes | no | auto) ;; *) die "--nvswitch must be yes, no or auto" ;; esac
case $PERSISTENCE in yes | no | auto) ;; *) die "--persistence must be yes, no or auto" ;; esac
[ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE (which Linux distribution is this?)"
[ -n "$ARCH" ] || ARCH=$(uname -m)

ID=$(osr ID)
ID_LIKE=$(osr ID_LIKE)
VERSION_ID=$(osr VERSION_ID)
CODENAME=$(osr VERSION_CODENAME)

# ------------------------------------------------------------------------------------------------ undo
if [ "$UNDO" = 1 ]; then
    state="$STATE_DIR/$NAME.created"
    if [ ! -f "$state" ]; then
        note "nothing to undo: $state does not exist (this script installed nothing here)"
        exit 0
    fi
    tac "$state" | while read -r kind item; do
        case $kind in
            file) run rm -f "$item" ;;
            pkg)
                if command -v apt-get >/dev/null 2>&1; then run apt-get purge -y "$item"
                else run dnf remove -y "$item"; fi ;;
        esac
    done
    run rm -f "$state" "$STATE_DIR/reboot-needed"
    note "removed what nvidia-driver.sh had installed; restart the computer to unload the driver"
    exit 0
fi

# ------------------------------------------------------------------------------------------------- WSL
if [ "$WSL" = auto ]; then
    if grep -qi microsoft "$PROC_VERSION" 2>/dev/null; then WSL=yes; else WSL=no; fi
fi
if [ "$WSL" = yes ]; then
    cat >&2 <<'EOF'
nvidia-driver.sh: this is WSL (Windows Subsystem for Linux). Do not install a Linux NVIDIA driver here:
WSL uses the Windows driver, and a Linux driver inside WSL breaks GPU access.
Update the NVIDIA driver on the Windows side instead (https://www.nvidia.com/Download/index.aspx or the
NVIDIA App), then restart WSL with `wsl --shutdown` from Windows.
EOF
    exit 3
fi

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

# ----------------------------------------------------------------------------------------- Secure Boot
if [ "$SECURE_BOOT" = auto ]; then
    SECURE_BOOT=unknown
    if have mokutil; then
        case $(mokutil --sb-state 2>/dev/null || true) in
            *"SecureBoot enabled"*) SECURE_BOOT=on ;;
            *"SecureBoot disabled"*) SECURE_BOOT=off ;;
        esac
    fi
fi

# NVSwitch bridges (PCI vendor 10de; device ids from the pci.ids database: 1af1 "GA100 [A100 NVSwitch]",
# 22a3 "GH100 [H100 NVSwitch]"). They are visible before any driver is installed.
if [ "$NVSWITCH" = auto ]; then
    NVSWITCH=no
    for dev in "$SYSFS"/bus/pci/devices/*; do
        [ -r "$dev/vendor" ] && [ -r "$dev/device" ] || continue
        if [ "$(cat "$dev/vendor")" = 0x10de ]; then
            case $(cat "$dev/device") in 0x1af1 | 0x22a3) NVSWITCH=yes ;; esac
        fi
    done
fi
if [ "$PERSISTENCE" = auto ]; then
    PERSISTENCE=no
    if [ "$SERVER" = 1 ] || [ "$NVSWITCH" = yes ]; then PERSISTENCE=yes; fi
fi
if [ "$NVSWITCH" = yes ] && [ -z "$BRANCH" ]; then
    die "this is an NVSwitch system: give --branch N, so the fabric manager can be installed for exactly that driver"
fi

note "nvidia-driver.sh: ${ID:-unknown} ${VERSION_ID:-} ($ARCH), branch ${BRANCH:-recommended}$([ "$SERVER" = 1 ] && printf ' (server)'), flavour $FLAVOUR, Secure Boot $SECURE_BOOT, NVSwitch $NVSWITCH"

blacklist_nouveau() {
    local conf=/etc/modprobe.d/gpusetup-blacklist-nouveau.conf
    if [ -f "$conf" ] && [ "$ASSUME_FRESH" = 0 ]; then
        note "nouveau is already switched off ($conf)"
        return
    fi
    write_file "$conf" "# written by gpusetup: the NVIDIA driver cannot load while nouveau holds the GPU" \
        "blacklist nouveau" "options nouveau modeset=0"
    if [ "$1" = deb ]; then run update-initramfs -u; else run dracut --force; fi
}

# deb_version PKG : the installed version of PKG, else the version apt would install; empty if unknown
deb_version() {
    [ "$ASSUME_FRESH" = 1 ] && return 0
    if deb_installed "$1"; then
        dpkg-query -W -f='${Version}' "$1"
    elif command -v apt-cache >/dev/null 2>&1; then
        apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '^(none)$' || true
    fi
}

# fabricmanager_deb DRIVER_PACKAGE : nvidia-fabricmanager-N of exactly the driver package's version
fabricmanager_deb() {
    local drv=$1 fm="nvidia-fabricmanager-$BRANCH" ver
    ver=$(deb_version "$drv")
    if [ -z "$ver" ]; then
        [ "$DRY_RUN" = 1 ] || die "cannot tell which version of $drv is installed, so the fabric manager cannot be matched to it"
        ver="<version of $drv>"
    fi
    note "NVSwitch system: the fabric manager must have exactly the driver's version ($ver), or the GPUs stay unusable"
    run apt-get install -y "$fm=$ver"
    record pkg "$fm"
    run systemctl enable nvidia-fabricmanager
    note "After a driver upgrade, upgrade $fm to the same version before restarting."
}

enable_persistence() {
    if [ "$PERSISTENCE" = yes ]; then
        note "persistence: nvidia-persistenced keeps the GPUs initialised between jobs (no start-up delay, stable state)"
        run systemctl enable nvidia-persistenced
    fi
}

finish() {
    enable_persistence
    write_file "$STATE_DIR/reboot-needed" "nvidia-driver.sh installed a driver; restart to load it"
    if [ "$DRY_RUN" = 0 ]; then echo "gpusetup: reboot-needed"; fi
    note "Restart the computer to load the driver, then run: gpusetup install --resume"
}

secure_boot_note_signed() {
    if [ "$SECURE_BOOT" = on ]; then
        note "Secure Boot is on: $1"
    fi
}

# -------------------------------------------------------------------------------------------- Ubuntu
install_ubuntu() {
    local pkg="" spec="" suffix="" have_driver=0
    local gpgpu=()
    if [ "$SERVER" = 1 ]; then
        suffix="-server"
        gpgpu=(--gpgpu)  # ubuntu-drivers' data-centre mode: the -server (gpgpu) packages
    fi
    if [ -n "$BRANCH" ]; then
        pkg="nvidia-driver-$BRANCH$suffix"
        [ "$FLAVOUR" = open ] && pkg="$pkg-open"
        spec="nvidia:$BRANCH$suffix"
        [ "$FLAVOUR" = open ] && spec="$spec-open"  # [I] ubuntu-drivers maps nvidia:580-open to nvidia-driver-580-open
        if deb_installed "$pkg"; then
            if [ "$NVSWITCH" != yes ]; then
                note "$pkg is already installed; nothing to do"
                exit 0
            fi
            note "$pkg is already installed; checking the fabric manager"
            have_driver=1
        fi
    fi
    if [ "$have_driver" = 1 ]; then
        fabricmanager_deb "$pkg"
        enable_persistence
        exit 0
    fi
    secure_boot_note_signed "ubuntu-drivers installs Canonical-signed kernel modules (linux-modules-nvidia-*), so no key enrolment is needed"
    run apt-get update
    if ! have ubuntu-drivers; then
        run apt-get install -y ubuntu-drivers-common
        record pkg ubuntu-drivers-common
    fi
    if [ -n "$spec" ]; then
        run ubuntu-drivers install "${gpgpu[@]}" "$spec"
        record pkg "$pkg"
    else
        run ubuntu-drivers install "${gpgpu[@]}"
    fi
    if [ "$NVSWITCH" = yes ]; then fabricmanager_deb "$pkg"; fi
    blacklist_nouveau deb
}

# -------------------------------------------------------------------------------------------- Debian
debian_nvidia_repo() {
    local repo="debian${VERSION_ID%%.*}" arch=$ARCH
    [ "$arch" = aarch64 ] && arch=sbsa
    local deb=/tmp/gpusetup-cuda-keyring.deb
    if ! deb_installed cuda-keyring; then
        run curl -fsSL -o "$deb" "https://developer.download.nvidia.com/compute/cuda/repos/$repo/$arch/cuda-keyring_1.1-1_all.deb"
        run dpkg -i "$deb"
        run rm -f "$deb"
        record pkg cuda-keyring
    fi
    run apt-get update
}

no_fabricmanager_recipe() {
    if [ "$NVSWITCH" = yes ]; then
        die "this is an NVSwitch system, and gpusetup has no fabric manager recipe for ${ID:-this distribution}: install the driver and nvidia-fabricmanager-$BRANCH of exactly the same version with NVIDIA's repository (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/)"
    fi
}

install_debian() {
    no_fabricmanager_recipe
    local headers=linux-headers-amd64
    [ "$ARCH" = aarch64 ] && headers=linux-headers-arm64
    if [ -z "$BRANCH" ] || [ "$BRANCH" = 535 ] || [ "$BRANCH" = 470 ]; then
        # the distribution's own packages (contrib / non-free / non-free-firmware)
        local pkgs=(nvidia-driver firmware-misc-nonfree)
        [ "$BRANCH" = 470 ] && pkgs=(nvidia-tesla-470-driver firmware-misc-nonfree)
        [ "$FLAVOUR" = open ] && [ "$BRANCH" != 470 ] && pkgs=(nvidia-open-kernel-dkms "${pkgs[@]}")
        if deb_installed "${pkgs[0]}"; then
            note "${pkgs[0]} is already installed; nothing to do"
            exit 0
        fi
        local sources=/etc/apt/sources.list.d/gpusetup-debian-nonfree.sources
        if [ ! -f "$sources" ] || [ "$ASSUME_FRESH" = 1 ]; then
            write_file "$sources" "# written by gpusetup: the NVIDIA driver is in contrib / non-free" \
                "Types: deb" "URIs: http://deb.debian.org/debian" \
                "Suites: ${CODENAME:-bookworm} ${CODENAME:-bookworm}-updates" \
                "Components: contrib non-free non-free-firmware" \
                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
        fi
        run apt-get update
        run apt-get install -y "$headers" "${pkgs[@]}"
        for p in "${pkgs[@]}"; do record pkg "$p"; done
    else
        # a newer branch than Debian ships: NVIDIA's repository, locked to the branch  [I]
        local pkg=cuda-drivers
        [ "$FLAVOUR" != proprietary ] && pkg=nvidia-open
        if deb_installed "$pkg"; then
            note "$pkg is already installed; nothing to do"
            exit 0
        fi
        debian_nvidia_repo
        run apt-get install -y "$headers" "nvidia-driver-pinning-$BRANCH"
        run apt-get install -y "$pkg"
        record pkg "nvidia-driver-pinning-$BRANCH"
        record pkg "$pkg"
    fi
    if [ "$SECURE_BOOT" = on ]; then
        note "Secure Boot is on: DKMS builds the module and signs it with this machine's key (/var/lib/dkms/mok.pub)."
        note "Enrol that key once: the next command asks for a one-time password; at the restart choose"
        note "'Enroll MOK' in the blue MOK manager screen and type that password. Without this the driver will not load."
        run mokutil --import /var/lib/dkms/mok.pub
    fi
    blacklist_nouveau deb
}

# -------------------------------------------------------------------------------------------- Fedora
install_fedora() {
    no_fabricmanager_recipe
    local pkgs=(akmod-nvidia xorg-x11-drv-nvidia-cuda)
    if [ -n "$BRANCH" ] && [ "$BRANCH" -le 470 ]; then
        pkgs=("akmod-nvidia-${BRANCH}xx" "xorg-x11-drv-nvidia-${BRANCH}xx-cuda")  # RPM Fusion legacy packages
    fi
    if rpm_installed "${pkgs[0]}"; then
        note "${pkgs[0]} is already installed; nothing to do"
        exit 0
    fi
    run dnf install -y \
        "https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-$VERSION_ID.noarch.rpm" \
        "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-$VERSION_ID.noarch.rpm"
    record pkg rpmfusion-nonfree-release
    record pkg rpmfusion-free-release
    if [ "$FLAVOUR" = open ]; then
        # [I] RPM Fusion builds the open kernel module when this macro is set (RPM Fusion NVIDIA howto)
        write_file /etc/rpm/macros.nvidia-kmod "%_with_kmod_nvidia_open 1"
    fi
    if [ "$SECURE_BOOT" = on ]; then
        note "Secure Boot is on: akmods signs the module with a key made for this machine. Enrol it once:"
        note "the mokutil command asks for a one-time password; at the restart choose 'Enroll MOK' and type it."
        run dnf install -y akmods mokutil openssl
        run kmodgenca -a
        run mokutil --import /etc/pki/akmods/certs/public_key.der
    fi
    run dnf install -y "${pkgs[@]}"
    for p in "${pkgs[@]}"; do record pkg "$p"; done
    note "akmods builds the module in the background; wait until 'modinfo -F version nvidia' answers before restarting"
    blacklist_nouveau rpm
}

# ------------------------------------------------------------------------------------- RHEL and clones
install_rhel() {
    local major=${VERSION_ID%%.*} arch=$ARCH
    [ "$arch" = aarch64 ] && arch=sbsa
    local pkg=nvidia-open stream="${BRANCH:-open}-open"
    [ -z "$BRANCH" ] && stream=open-dkms
    if [ "$FLAVOUR" = proprietary ]; then
        pkg=cuda-drivers
        stream="${BRANCH:-latest}-dkms"
    fi
    if rpm_installed "$pkg"; then
        note "$pkg is already installed; nothing to do"
        exit 0
    fi
    local repo="/etc/yum.repos.d/cuda-rhel$major.repo"
    if [ ! -f "$repo" ] || [ "$ASSUME_FRESH" = 1 ]; then
        run dnf install -y "https://dl.fedoraproject.org/pub/epel/epel-release-latest-$major.noarch.rpm"
        record pkg epel-release
        run dnf config-manager --add-repo "https://developer.download.nvidia.com/compute/cuda/repos/rhel$major/$arch/cuda-rhel$major.repo"
        record file "$repo"
    fi
    run dnf install -y kernel-devel-matched kernel-headers
    if [ "$NVSWITCH" = yes ]; then
        # the module stream's fm profile installs the driver together with the fabric manager of the same
        # version (NVIDIA yum-packaging-fabric-manager README), then the service is enabled
        note "NVSwitch system: installing the driver with its fabric manager (same version, one module stream)"
        run dnf module install -y "nvidia-driver:$stream/fm"
        record pkg "nvidia-fabricmanager-$BRANCH"
        run systemctl enable nvidia-fabricmanager
    else
        run dnf module enable -y "nvidia-driver:$stream"
        run dnf install -y "$pkg"
    fi
    record pkg "$pkg"
    if [ "$SECURE_BOOT" = on ]; then
        note "Secure Boot is on: the DKMS-built module must be signed by a key the firmware trusts."
        note "Enrol DKMS's key once: the command asks for a one-time password; at the restart choose 'Enroll MOK'."
        run mokutil --import /var/lib/dkms/mok.pub
    fi
    blacklist_nouveau rpm
}

case " $ID $ID_LIKE " in
    *" ubuntu "*) install_ubuntu ;;
    *" debian "*) install_debian ;;
    *" fedora "*)
        if [ "$ID" = fedora ]; then install_fedora; else install_rhel; fi ;;
    *" rhel "* | *" centos "*) install_rhel ;;
    *) die "no driver recipe for '${ID:-unknown}'. Install the driver with your distribution's tools (see https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/)." ;;
esac
finish
