#!/usr/bin/env bash
# Install the NVIDIA driver the way the distribution supports it, and check that it really was installed.
#
#   Ubuntu and derivatives: the archive's packages by name: the prebuilt, Canonical-signed kernel modules
#                  (linux-modules-nvidia-N[-server][-open]-FLAVOUR, no key enrolment with Secure Boot) and the
#                  driver (nvidia-driver-N[-open]; servers: nvidia-headless-no-dkms-N-server[-open] and
#                  nvidia-utils-N-server, so nvidia-smi is there); with no --branch, `ubuntu-drivers install`.
#                  Source: Ubuntu Server documentation, "NVIDIA drivers installation" (manual installation
#                  using APT), canonical/ubuntu-server-documentation.
#   Debian:        the distribution's packages (11: 470, 12: 535, 13: 550; legacy nvidia-tesla-470-driver and
#                  nvidia-legacy-390xx-driver where the release has them), NVIDIA's repository for newer
#                  branches. DKMS builds the module; with Secure Boot its key is enrolled (MOK).
#                  NVIDIA's repository is repos/debianN/x86_64 (sbsa on arm64); debian13 for Debian 13 per
#                  NVIDIA's Driver Installation Guide, checked 2026-11-27 (installers/README.md, "Sources").
#   Fedora:        RPM Fusion (akmod-nvidia, legacy akmod-nvidia-470xx/-390xx), the module built before the
#                  script ends; with Secure Boot the akmods key is enrolled.
#   RHEL 8/9/10 and clones, Amazon Linux 2023: NVIDIA's repository (8/9/2023: dnf module streams; 10:
#                  versionlock), DKMS. Source: NVIDIA Driver Installation Guide, "Kernel Modules".
#   WSL:           refused - the driver comes from Windows. No NVIDIA GPU on the PCI bus: refused.
#
# Pre-Turing GPUs (Maxwell, Pascal, Volta) need the proprietary flavour: NVIDIA's open kernel modules
# support Turing and newer only. --flavour says which one; gpusetup passes it.
#
# Data centres: --server installs the -server driver branch. On NVSwitch systems (HGX/DGX) it also installs
# the fabric manager (and libnvidia-nscq) of exactly the driver's upstream version and enables it; --server
# and NVSwitch systems also get the persistence daemon enabled.
#
# Every change is printed before it is made ("+ command"); --dry-run prints and changes nothing. Package
# managers never ask questions. Each step is checked on the system, not trusted from an exit code: the packages
# are installed, a kernel module exists for the running kernel, the Secure Boot key is enrolled or waiting.
# Running it twice is safe: an installed, working driver is left alone and nothing is restarted. What a run
# installed (dependencies included, never what was there before) is recorded, so --undo removes exactly that.
# A successful install prints "gpusetup: reboot-needed" and writes the reboot-needed state file, which the
# next run clears once the restart has happened.
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
KERNEL=""
NVIDIA_GPUS=auto
APT_ETC=/etc/apt

usage() {
    cat <<'EOF'
Usage: nvidia-driver.sh [--branch N] [--flavour open|proprietary|auto] [--dry-run] [--undo]
                        [--server] [--nvswitch yes|no|auto] [--persistence yes|no|auto]
                        [--secure-boot on|off|auto] [--os-release FILE] [--proc-version FILE]
                        [--wsl yes|no|auto] [--arch x86_64|aarch64] [--kernel RELEASE]
                        [--nvidia-gpus auto|N] [--state-dir DIR] [--sysfs DIR] [--apt-etc DIR]
                        [--assume-fresh]

  --branch N        driver branch, e.g. 580 (default: the distribution's recommendation)
  --flavour F       open (Turing and newer), proprietary (needed for Maxwell/Pascal/Volta) or auto
  --dry-run         print exactly what would be done; change nothing
  --undo            remove what earlier runs of this script installed (from its state file)
  --assume-fresh    treat every package as not installed (dry-runs for another machine)
  --server          the data-centre (-server) driver branch
  --nvswitch W      yes: also install the fabric manager matching the driver; auto: if NVSwitches are found
  --persistence W   enable nvidia-persistenced (auto: with --server or on NVSwitch systems)
  --kernel RELEASE  the kernel the module is for (default: the running one, uname -r)
  --nvidia-gpus N   how many NVIDIA GPUs the machine has (auto: count them on the PCI bus)
EOF
}

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
        --kernel) KERNEL=${2:?--kernel needs a release}; shift ;;
        --nvidia-gpus) NVIDIA_GPUS=${2:?--nvidia-gpus needs a number}; shift ;;
        --state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift ;;
        --apt-etc) APT_ETC=${2:?--apt-etc needs a directory}; shift ;;
        --server) SERVER=1 ;;
        --nvswitch) NVSWITCH=${2:?--nvswitch needs a value}; shift ;;
        --persistence) PERSISTENCE=${2:?--persistence needs a value}; shift ;;
        --sysfs) SYSFS=${2:?--sysfs needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; printf 'nvidia-driver.sh: unknown option: %s\n' "$1" >&2; exit 1 ;;
    esac
    shift
done

# shellcheck source=installers/gpusetup-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpusetup-common.sh"

case $FLAVOUR in open | proprietary | auto) ;; *) die "--flavour must be open, proprietary or auto" ;; esac
case $BRANCH in '' | [0-9][0-9][0-9]) ;; *) die "--branch must be a driver branch like 580" ;; esac
case $NVSWITCH in yes | no | auto) ;; *) die "--nvswitch must be yes, no or auto" ;; esac
case $PERSISTENCE in yes | no | auto) ;; *) die "--persistence must be yes, no or auto" ;; esac
case $SECURE_BOOT in on | off | auto) ;; *) die "--secure-boot must be on, off or auto" ;; esac
case $NVIDIA_GPUS in auto | [0-9] | [0-9][0-9] | [0-9][0-9][0-9]) ;; *) die "--nvidia-gpus must be auto or a number" ;; esac
[ -n "$ARCH" ] || ARCH=$(uname -m)
[ -n "$KERNEL" ] || KERNEL=$(uname -r)
# the kernel's flavour: 6.8.0-45-generic -> generic, 6.1.0-18-cloud-amd64 -> cloud-amd64
KFLAVOUR=${KERNEL#*-}
KFLAVOUR=${KFLAVOUR#*-}

detect_distro

if [ "$UNDO" = 1 ]; then
    undo
    note "removed what nvidia-driver.sh had installed; restart the computer to unload the driver"
    exit 0
fi

# ------------------------------------------------------------------------------- refusals, before anything
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

# NVIDIA display controllers (PCI vendor 10de, class 03xx) on the bus; NVSwitch bridges (class 0680; device
# ids from pci.ids: 1af1 "GA100 [A100 NVSwitch]", 22a3 "GH100 [H100 NVSwitch]") are counted apart
NVSWITCHES=0
if [ "$NVIDIA_GPUS" = auto ]; then
    [ -d "$SYSFS/bus/pci/devices" ] || refuse "cannot see the PCI bus ($SYSFS/bus/pci/devices is missing), so cannot tell whether this machine has an NVIDIA GPU. Nothing was changed."
    NVIDIA_GPUS=0
    for dev in "$SYSFS"/bus/pci/devices/*; do
        if [ ! -r "$dev/vendor" ] || [ "$(cat "$dev/vendor")" != 0x10de ]; then continue; fi
        case $(cat "$dev/class" 2>/dev/null || echo) in 0x03*) NVIDIA_GPUS=$((NVIDIA_GPUS + 1)) ;; esac
        case $(cat "$dev/device" 2>/dev/null || echo) in 0x1af1 | 0x22a3) NVSWITCHES=$((NVSWITCHES + 1)) ;; esac
    done
fi
if [ "$NVIDIA_GPUS" = 0 ]; then
    refuse "no NVIDIA GPU was found on this machine's PCI bus, so there is nothing for an NVIDIA driver to drive. Nothing was changed. (\`gpusetup diagnose\` lists the GPUs it finds; a GPU passed through to a virtual machine shows up only inside that machine.)"
fi
if [ "$NVSWITCH" = auto ]; then
    if [ "$NVSWITCHES" -gt 0 ]; then NVSWITCH=yes; else NVSWITCH=no; fi
fi

case $DISTRO in
    ubuntu | debian | fedora | rhel | amzn) ;;
    suse) refuse "$DISTRO_LABEL: gpusetup has no driver recipe for SUSE yet. Install the driver with NVIDIA's instructions for SUSE (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/). Nothing was changed." ;;
    *) refuse "no driver recipe for '$DISTRO_LABEL'. Install the driver with your distribution's tools (see https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/). Nothing was changed." ;;
esac

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

secure_boot_state
if [ "$PERSISTENCE" = auto ]; then
    PERSISTENCE=no
    if [ "$SERVER" = 1 ] || [ "$NVSWITCH" = yes ]; then PERSISTENCE=yes; fi
fi
if [ "$NVSWITCH" = yes ] && [ -z "$BRANCH" ]; then
    die "this is an NVSwitch system: give --branch N, so the fabric manager can be installed for exactly that driver"
fi

note "nvidia-driver.sh: $DISTRO_LABEL ($ARCH, kernel $KERNEL), branch ${BRANCH:-recommended}$([ "$SERVER" = 1 ] && printf ' (server)'), flavour $FLAVOUR, Secure Boot $SECURE_BOOT, NVSwitch $NVSWITCH, NVIDIA GPUs $NVIDIA_GPUS"
clear_stale_reboot
CHANGED=0

# all_installed PKG... : every one of them installed already
all_installed() {
    local p
    for p in "$@"; do pkg_installed "${p%%=*}" || return 1; done
}

# check_module : after an install, a module for the kernel exists (built by DKMS/akmods or prebuilt)
check_module() {
    if [ "$DRY_RUN" = 1 ]; then
        note "then: check that an NVIDIA kernel module for $KERNEL is in /lib/modules/$KERNEL"
        return 0
    fi
    if [ -n "$(find "/lib/modules/$KERNEL" -name 'nvidia*.ko*' -print -quit 2>/dev/null)" ]; then
        note "NVIDIA kernel module for $KERNEL: present"
        return 0
    fi
    die "the driver packages are installed, but there is no NVIDIA kernel module for the kernel $KERNEL. Look at 'dkms status' and the build log under /var/lib/dkms/; the kernel's headers (linux-headers-$KERNEL or kernel-devel-$KERNEL) must be installed. Nothing after this step was done."
}

blacklist_nouveau() {
    local conf=/etc/modprobe.d/gpusetup-blacklist-nouveau.conf
    if [ -f "$conf" ] && [ "$ASSUME_FRESH" = 0 ]; then
        return 0
    fi
    write_file "$conf" "# written by gpusetup: the NVIDIA driver cannot load while nouveau holds the GPU" \
        "blacklist nouveau" "options nouveau modeset=0"
    rebuild_initramfs
    CHANGED=1
}

enable_service() {
    if [ "$DRY_RUN" = 0 ] && ! command -v systemctl >/dev/null 2>&1; then
        note "no systemd here: start $1 with this system's service manager"
        return 0
    fi
    if [ "$ASSUME_FRESH" = 0 ] && [ "$DRY_RUN" = 0 ] && systemctl is-enabled --quiet "$1" 2>/dev/null; then
        return 0
    fi
    run systemctl enable "$1"
}

enable_persistence() {
    if [ "$PERSISTENCE" = yes ]; then
        note "persistence: nvidia-persistenced keeps the GPUs initialised between jobs (no start-up delay, stable state)"
        enable_service nvidia-persistenced
    fi
}

no_fabricmanager_recipe() {
    if [ "$NVSWITCH" = yes ]; then
        die "this is an NVSwitch system, and gpusetup has no fabric manager recipe for $DISTRO_LABEL: install the driver and nvidia-fabricmanager-$BRANCH of exactly the same version with NVIDIA's repository (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/)"
    fi
}

# apt_candidate PKG : the version apt would install (or has installed); empty if unknown
apt_candidate() {
    [ "$ASSUME_FRESH" = 1 ] && return 0
    [ "$DRY_RUN" = 1 ] && ! command -v apt-cache >/dev/null 2>&1 && return 0
    if pkg_installed "$1"; then
        dpkg-query -W -f='${Version}' "$1"
    else
        apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '^(none)$' || true
    fi
}

# -------------------------------------------------------------------------------------------- Ubuntu
install_ubuntu() {
    [ -n "$UBUNTU_VERSION" ] || refuse "$DISTRO_LABEL is based on Ubuntu, but its os-release does not say which Ubuntu release (no UBUNTU_CODENAME), so the right packages cannot be chosen. Nothing was changed."
    if [ -z "$BRANCH" ]; then
        local drivers=""
        if [ "$ASSUME_FRESH" = 0 ]; then
            drivers=$({ dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'nvidia-driver-*' 'nvidia-headless-no-dkms-*' 2>/dev/null || true; } | awk '$1 ~ /^ii/ {printf "%s ", $2}')
        fi
        if [ -n "$drivers" ]; then
            note "${drivers% } is already installed; nothing to install"
            return 0
        fi
        run "${APT[@]}" update
        install_packages ubuntu-drivers-common
        # ubuntu-drivers exits 0 even when it installed nothing (no supported GPU, a missing package): the
        # package database says what really happened
        local before=""
        if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
        if [ "$SERVER" = 1 ]; then run ubuntu-drivers install --gpgpu; else run ubuntu-drivers install; fi
        if [ "$DRY_RUN" = 0 ]; then
            local after
            after=$(mktemp "$WORK/after.XXXXXX")
            pkg_snapshot "$after"
            record_changes "$before" "$after"
            grep -qE '^(nvidia-driver-|nvidia-headless-no-dkms-)' "$after" || die "ubuntu-drivers installed no NVIDIA driver (it reports success even then). Run 'ubuntu-drivers list' to see what it offers, then run this script with --branch N."
        fi
        CHANGED=1
        return 0
    fi
    local s="" o=""
    if [ "$NVSWITCH" = yes ] && [ "$SERVER" = 0 ]; then
        note "NVSwitch system: the fabric manager in Ubuntu's archive matches the -server driver, so that one is installed"
        SERVER=1
    fi
    [ "$SERVER" = 1 ] && s=-server
    [ "$FLAVOUR" = open ] && o=-open
    local mods=("linux-modules-nvidia-$BRANCH$s$o-$KFLAVOUR" "linux-modules-nvidia-$BRANCH$s$o-$KERNEL") user=()
    if [ "$SERVER" = 1 ]; then
        user=("nvidia-headless-no-dkms-$BRANCH$s$o" "nvidia-utils-$BRANCH$s")
    else
        user=("nvidia-driver-$BRANCH$o")
    fi
    local fm=()
    [ "$NVSWITCH" = yes ] && fm=("nvidia-fabricmanager-$BRANCH" "libnvidia-nscq-$BRANCH")
    if all_installed "${mods[@]}" "${user[@]}" "${fm[@]}"; then
        note "${user[*]} and the kernel modules for $KERNEL are already installed; nothing to install"
        [ "$NVSWITCH" = yes ] && enable_service nvidia-fabricmanager
        return 0
    fi
    secure_boot_note_signed
    run "${APT[@]}" update
    if [ "$NVSWITCH" = yes ]; then
        # the fabric manager and NSCQ must have exactly the driver's upstream version; their Ubuntu revisions
        # differ (noble: driver 535.161.08-0ubuntu2, fabric manager 535.161.08-0ubuntu3), so pin upstream-*
        local ver up
        ver=$(apt_candidate "${user[0]}")
        if [ -z "$ver" ]; then
            [ "$DRY_RUN" = 1 ] || die "apt knows no ${user[0]}, so the fabric manager cannot be matched to it"
            up="<version of ${user[0]}>"
        else
            up=${ver%-*}
        fi
        note "NVSwitch system: the fabric manager must have exactly the driver's version ($up), or the GPUs stay unusable"
        fm=("nvidia-fabricmanager-$BRANCH=$up-*" "libnvidia-nscq-$BRANCH=$up-*")
    fi
    install_packages "${mods[@]}" "${user[@]}" "${fm[@]}"
    if [ "$NVSWITCH" = yes ]; then
        enable_service nvidia-fabricmanager
        note "After a driver upgrade, upgrade nvidia-fabricmanager-$BRANCH to the same version before restarting."
    fi
    CHANGED=1
}

secure_boot_note_signed() {
    if [ "$SECURE_BOOT" = on ]; then
        note "Secure Boot is on: Ubuntu's prebuilt kernel modules (linux-modules-nvidia-*) are Canonical-signed kernel modules, so no key enrolment is needed"
    fi
}

# -------------------------------------------------------------------------------------------- Debian
# debian_components SUITE : the components this machine's apt sources already have for SUITE of a Debian archive
debian_components() {
    local suite=$1
    {
        { cat "$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list 2>/dev/null || true; } \
            | awk -v s="$suite" '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                                  if ($(i + 1) == s) for (j = i + 2; j <= NF; j++) print $j }'
        { cat "$APT_ETC"/sources.list.d/*.sources 2>/dev/null || true; } \
            | awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" }
                { deb = 0; hit = 0; comps = ""; off = 0
                  for (k = 1; k <= NF; k++) {
                    if ($k ~ /^Types:.*(^|[ \t])deb([ \t]|$)/) deb = 1
                    if ($k ~ /^Enabled:[ \t]*no/) off = 1
                    if ($k ~ /^Suites:/) { n = split(substr($k, 8), a, /[ \t]+/); for (m = 1; m <= n; m++) if (a[m] == s) hit = 1 }
                    if ($k ~ /^Components:/) comps = substr($k, 12)
                  }
                  if (deb && hit && !off) { n = split(comps, c, /[ \t]+/); for (m = 1; m <= n; m++) if (c[m] != "") print c[m] } }'
    } | sort -u
}

# debian_mirror : the Debian archive this machine already uses (else deb.debian.org)
debian_mirror() {
    local uri=""
    [ "$ASSUME_FRESH" = 1 ] || uri=$({ { cat "$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list 2>/dev/null || true; } \
                | awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } print $i }'
            { grep -h '^URIs:' "$APT_ETC"/sources.list.d/*.sources 2>/dev/null || true; } | sed 's/^URIs:[ \t]*//' | tr ' ' '\n'
          } | { grep -E '/debian/?$' || true; } | { grep -v 'debian-security' || true; } | sed -n 1p)
    echo "${uri:-http://deb.debian.org/debian}"
}

# ensure_debian_components COMPONENT... : add the missing ones for this release (and -updates, -security),
# never one the sources already have (apt warns about every component configured twice)
ensure_debian_components() {
    local suite=$DEB_CODENAME lines=() s c missing
    if [ -z "$DISTRO_MAJOR" ]; then
        # testing or unstable: os-release names testing's codename on both, so take the suite the sources use
        suite=""
        [ "$ASSUME_FRESH" = 1 ] || suite=$({ { cat "$APT_ETC/sources.list" "$APT_ETC"/sources.list.d/*.list 2>/dev/null || true; } \
                    | awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($i ~ /\/debian\/?$/) print $(i + 1) }'
                  { grep -h '^Suites:' "$APT_ETC"/sources.list.d/*.sources 2>/dev/null || true; } | awk '{print $2}'
                } | sed -n 1p)
        if [ -z "$suite" ]; then
            case $(osr PRETTY_NAME) in */sid) suite=sid ;; *) suite=$DEB_CODENAME ;; esac
        fi
    fi
    local suites=("$suite")
    [ -n "$DISTRO_MAJOR" ] && suites+=("$suite-updates" "$suite-security")
    local have_comps
    for s in "${suites[@]}"; do
        missing=()
        have_comps=" "
        [ "$ASSUME_FRESH" = 1 ] || have_comps=" $(debian_components "$s" | tr '\n' ' ')"
        for c in "$@"; do
            case $have_comps in *" $c "*) ;; *) missing+=("$c") ;; esac
        done
        [ ${#missing[@]} -gt 0 ] || continue
        [ ${#lines[@]} -eq 0 ] || lines+=("")
        case $s in
            *-security) lines+=("Types: deb" "URIs: http://security.debian.org/debian-security") ;;
            *) lines+=("Types: deb" "URIs: $(debian_mirror)") ;;
        esac
        lines+=("Suites: $s" "Components: ${missing[*]}" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg")
    done
    if [ ${#lines[@]} -eq 0 ]; then
        note "the apt sources already have $* for $suite"
        return 0
    fi
    write_file "$APT_ETC/sources.list.d/gpusetup-debian-nonfree.sources" \
        "# written by gpusetup: the NVIDIA driver is in $*" "${lines[@]}"
}

debian_nvidia_repo() {
    [ -n "$DISTRO_MAJOR" ] || refuse "NVIDIA publishes no driver repository for Debian testing or unstable; install the distribution's nvidia-driver (run this script without --branch). Nothing was changed."
    local repo="debian$DISTRO_MAJOR" arch=$ARCH
    [ "$arch" = aarch64 ] && arch=sbsa
    if ! pkg_installed cuda-keyring; then
        local deb="$WORK/cuda-keyring_1.1-1_all.deb" before="" after=""
        fetch "https://developer.download.nvidia.com/compute/cuda/repos/$repo/$arch/cuda-keyring_1.1-1_all.deb" "$deb"
        if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
        run dpkg -i "$deb"
        if [ "$DRY_RUN" = 0 ]; then after=$(mktemp "$WORK/after.XXXXXX"); pkg_snapshot "$after"; record_changes "$before" "$after"; fi
    fi
    run "${APT[@]}" update
}

install_debian() {
    no_fabricmanager_recipe
    local dist=""  # the branch the release ships (packages.debian.org / the archive's Packages, 2026-11-27)
    case $DISTRO_MAJOR in 11) dist=470 ;; 12) dist=535 ;; 13 | "") dist=550 ;; esac
    local headers=("linux-headers-$KERNEL" "linux-headers-$KFLAVOUR") pkgs=() comps=(contrib non-free non-free-firmware)
    [ "$DISTRO_MAJOR" = 11 ] && comps=(contrib non-free)
    case $BRANCH in
        "") pkgs=(nvidia-driver) ;;
        470)
            if [ "$dist" = 470 ]; then pkgs=(nvidia-driver)
            elif [ "$DISTRO_MAJOR" = 12 ] || [ -z "$DISTRO_MAJOR" ]; then pkgs=(nvidia-tesla-470-driver)
            else refuse "$DISTRO_LABEL has no 470 driver (the last branch for Kepler GPUs) and NVIDIA's repository has none for it: use Debian 12, where nvidia-tesla-470-driver exists. Nothing was changed."; fi ;;
        390)
            if [ "$DISTRO_MAJOR" = 11 ] || [ -z "$DISTRO_MAJOR" ]; then pkgs=(nvidia-legacy-390xx-driver)
            else refuse "$DISTRO_LABEL has no 390 driver (the last branch for Fermi GPUs): only Debian 11 and unstable package it. Nothing was changed."; fi ;;
        *)
            if [ -n "$dist" ] && [ "$BRANCH" -le "$dist" ]; then pkgs=(nvidia-driver); fi ;;
    esac
    if [ ${#pkgs[@]} -gt 0 ]; then
        [ "$FLAVOUR" = open ] && [ "${pkgs[0]}" = nvidia-driver ] && pkgs=(nvidia-open-kernel-dkms "${pkgs[@]}")
        pkgs+=(firmware-misc-nonfree)
        if all_installed "${pkgs[0]}" "linux-headers-$KERNEL"; then
            note "${pkgs[0]} is already installed; nothing to install"
        else
            [ "$BRANCH" = "" ] || [ "$BRANCH" = "$dist" ] || [ "${pkgs[0]}" != nvidia-driver ] \
                || note "Debian's own driver is branch $dist, which is at least the $BRANCH asked for"
            ensure_debian_components "${comps[@]}"
            run "${APT[@]}" update
            install_packages "${headers[@]}" "${pkgs[@]}"
            CHANGED=1
        fi
    else
        # a newer branch than Debian ships: NVIDIA's repository, locked to the branch by its pinning package
        local pkg=cuda-drivers
        [ "$FLAVOUR" != proprietary ] && pkg=nvidia-open
        if all_installed "$pkg" "nvidia-driver-pinning-$BRANCH"; then
            note "$pkg (branch $BRANCH) is already installed; nothing to install"
        else
            debian_nvidia_repo
            install_packages "${headers[@]}" "nvidia-driver-pinning-$BRANCH"
            install_packages "$pkg"
            CHANGED=1
        fi
    fi
    check_module
    enrol_key /var/lib/dkms/mok.pub
}

# -------------------------------------------------------------------------------------------- Fedora
install_fedora() {
    no_fabricmanager_recipe
    local pkgs=(akmod-nvidia xorg-x11-drv-nvidia-cuda)
    if [ -n "$BRANCH" ] && [ "$BRANCH" -le 470 ]; then
        pkgs=("akmod-nvidia-${BRANCH}xx" "xorg-x11-drv-nvidia-${BRANCH}xx-cuda")  # RPM Fusion legacy packages
    fi
    if all_installed "${pkgs[@]}"; then
        note "${pkgs[0]} is already installed; nothing to install"
    else
        if ! pkg_installed rpmfusion-nonfree-release; then
            local before="" after=""
            if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
            run dnf install -y \
                "https://mirrors.rpmfusion.org/free/fedora/rpmfusion-free-release-$DISTRO_MAJOR.noarch.rpm" \
                "https://mirrors.rpmfusion.org/nonfree/fedora/rpmfusion-nonfree-release-$DISTRO_MAJOR.noarch.rpm"
            if [ "$DRY_RUN" = 0 ]; then after=$(mktemp "$WORK/after.XXXXXX"); pkg_snapshot "$after"; record_changes "$before" "$after"; fi
        fi
        if [ "$FLAVOUR" = open ] && { [ ! -f /etc/rpm/macros.nvidia-kmod ] || [ "$ASSUME_FRESH" = 1 ]; }; then
            # [I] RPM Fusion builds the open kernel module when this macro is set (RPM Fusion NVIDIA howto)
            write_file /etc/rpm/macros.nvidia-kmod "%_with_kmod_nvidia_open 1"
        fi
        if [ "$SECURE_BOOT" = on ]; then
            install_packages akmods mokutil openssl
            if [ ! -f /etc/pki/akmods/certs/public_key.der ] || [ "$ASSUME_FRESH" = 1 ]; then run kmodgenca -a; fi
        fi
        install_packages "kernel-devel-$KERNEL" "${pkgs[@]}"
        # akmods builds the module in the background after the install; build it now so it can be checked
        run akmods --force --kernels "$KERNEL"
        CHANGED=1
    fi
    check_module
    enrol_key /etc/pki/akmods/certs/public_key.der
}

# ------------------------------------------------------------------------ RHEL and clones, Amazon Linux
install_rhel() {
    local major=$DISTRO_MAJOR arch=$ARCH repo
    [ "$arch" = aarch64 ] && arch=sbsa
    if [ "$DISTRO" = amzn ]; then repo=amzn2023
    else
        case $major in 8 | 9 | 10) repo="rhel$major" ;;
            *) refuse "$DISTRO_LABEL: NVIDIA's driver repository covers RHEL-compatible releases 8, 9 and 10. Nothing was changed." ;; esac
    fi
    local pkg=nvidia-open
    [ "$FLAVOUR" = proprietary ] && pkg=cuda-drivers
    local want=("$pkg")
    [ "$NVSWITCH" = yes ] && want+=("nvidia-fabricmanager")
    if all_installed "${want[@]}"; then
        note "${want[*]} is already installed; nothing to install"
    else
        if [ "$DISTRO" = rhel ] && ! pkg_installed epel-release; then
            # DKMS comes from EPEL on RHEL and its clones
            local before="" after=""
            if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
            run dnf install -y "https://dl.fedoraproject.org/pub/epel/epel-release-latest-$major.noarch.rpm"
            if [ "$DRY_RUN" = 0 ]; then after=$(mktemp "$WORK/after.XXXXXX"); pkg_snapshot "$after"; record_changes "$before" "$after"; fi
        fi
        local file="/etc/yum.repos.d/cuda-$repo.repo"
        if [ ! -f "$file" ] || [ "$ASSUME_FRESH" = 1 ]; then
            fetch "https://developer.download.nvidia.com/compute/cuda/repos/$repo/$arch/cuda-$repo.repo" "$WORK/cuda-$repo.repo"
            run install -m 0644 "$WORK/cuda-$repo.repo" "$file"  # a truncated download never lands in yum.repos.d
            record file "$file"
        fi
        install_packages "kernel-devel-$KERNEL" kernel-headers
        if [ "$major" = 10 ] && [ "$DISTRO" = rhel ]; then
            # RHEL 10 has no module streams: the branch is held with dnf's versionlock plugin
            if [ -n "$BRANCH" ]; then
                install_packages python3-dnf-plugin-versionlock
                run dnf versionlock add "*nvidia*$BRANCH*"
                record versionlock "*nvidia*$BRANCH*"
            fi
            install_packages "${want[@]}"
        else
            local stream
            if [ "$FLAVOUR" = proprietary ]; then stream="${BRANCH:-latest}-dkms"
            elif [ -n "$BRANCH" ]; then stream="$BRANCH-open"
            else stream=open-dkms; fi
            if [ "$NVSWITCH" = yes ]; then
                # the stream's fm profile installs the driver with the fabric manager of the same version
                # (NVIDIA yum-packaging-fabric-manager README)
                note "NVSwitch system: installing the driver with its fabric manager (same version, one module stream)"
                local before="" after=""
                if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
                run dnf module install -y "nvidia-driver:$stream/fm"
                if [ "$DRY_RUN" = 0 ]; then after=$(mktemp "$WORK/after.XXXXXX"); pkg_snapshot "$after"; record_changes "$before" "$after"; fi
            else
                run dnf module enable -y "nvidia-driver:$stream"
                install_packages "$pkg"
            fi
        fi
        CHANGED=1
    fi
    [ "$NVSWITCH" = yes ] && enable_service nvidia-fabricmanager
    check_module
    enrol_key /var/lib/dkms/mok.pub
}

case $DISTRO in
    ubuntu) install_ubuntu ;;
    debian) install_debian ;;
    fedora) install_fedora ;;
    rhel | amzn) install_rhel ;;
esac
if [ "$CHANGED" = 1 ] || [ "$MOK_PENDING" = 1 ]; then blacklist_nouveau; fi
enable_persistence
if [ "$CHANGED" = 1 ] || [ "$MOK_PENDING" = 1 ]; then
    ask_reboot "nvidia-driver.sh installed a driver; restart to load it"
    note "Restart the computer to load the driver, then continue where you left off (gpusetup install --resume, or run the same script again)"
elif [ -f "$STATE_DIR/reboot-needed" ] && [ "$DRY_RUN" = 0 ]; then
    echo "gpusetup: reboot-needed"
    note "the driver is installed and waits for the restart asked for earlier"
else
    note "the driver is installed and nothing needed changing"
fi
