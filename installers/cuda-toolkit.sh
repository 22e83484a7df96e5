#!/usr/bin/env bash
# Install the CUDA toolkit (nvcc, headers, libraries) and optionally cuDNN from NVIDIA's network repository.
# Only needed to compile CUDA code yourself: PyTorch / TensorFlow / JAX wheels bring their own CUDA libraries.
# It installs the toolkit only (cuda-toolkit-X-Y), never the driver (that is nvidia-driver.sh's job), and in
# WSL it uses NVIDIA's wsl-ubuntu repository, which has no driver packages at all.
#
# Repositories: ubuntuYYMM (Ubuntu and derivatives through UBUNTU_CODENAME), debianN, fedoraN, rhelN (RHEL and
# clones), amzn2023; Debian testing/unstable and SUSE are refused with the page to go to.
# Debian 13: NVIDIA's Driver Installation Guide (Linux System Requirements, checked 2026-11-27) lists
# "Debian 13 | debian13" for x86_64, hence repos/debian13/x86_64/; an sbsa repository for Debian 13 is not
# confirmed from NVIDIA's pages [I] (installers/README.md, "Sources").
# Every change is printed first ("+ command"); --dry-run changes nothing; running it twice is safe; --undo
# removes what it installed (dependencies included, never what was there before).
set -euo pipefail

NAME=cuda-toolkit
DRY_RUN=0
UNDO=0
ASSUME_FRESH=0
OS_RELEASE=/etc/os-release
PROC_VERSION=/proc/version
STATE_DIR=/var/lib/gpusetup
WSL=auto
VERSION=""
CUDNN=0
ARCH=""
BASE=https://developer.download.nvidia.com/compute/cuda/repos

usage() {
    cat <<'EOF'
Usage: cuda-toolkit.sh --version X.Y [--cudnn] [--dry-run] [--undo] [--os-release FILE]
                       [--proc-version FILE] [--wsl yes|no|auto] [--arch x86_64|aarch64]
                       [--state-dir DIR] [--assume-fresh]
EOF
}

while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) DRY_RUN=1 ;;
        --undo) UNDO=1 ;;
        --assume-fresh) ASSUME_FRESH=1 ;;
        --version) VERSION=${2:?--version needs X.Y}; shift ;;
        --cudnn) CUDNN=1 ;;
        --os-release) OS_RELEASE=${2:?--os-release needs a file}; shift ;;
        --proc-version) PROC_VERSION=${2:?--proc-version needs a file}; shift ;;
        --wsl) WSL=${2:?--wsl needs a value}; shift ;;
        --arch) ARCH=${2:?--arch needs a value}; shift ;;
        --state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; printf 'cuda-toolkit.sh: unknown option: %s\n' "$1" >&2; exit 1 ;;
    esac
    shift
done

# shellcheck source=installers/gpusetup-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpusetup-common.sh"

[ -n "$ARCH" ] || ARCH=$(uname -m)
REPO_ARCH=$ARCH
[ "$ARCH" = aarch64 ] && REPO_ARCH=sbsa
detect_distro

if [ "$UNDO" = 1 ]; then
    undo
    exit 0
fi

# X.Y or X.Y.Z: the packages are per minor release (cuda-toolkit-12-6 for 12.6 and 12.6.1)
case $VERSION in
    [0-9]*.[0-9]* | [0-9]*.[0-9]*.[0-9]*) ;;
    *) die "--version X.Y is required, e.g. --version 12.6" ;;
esac
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
case "$MAJOR$MINOR" in *[!0-9]*) die "--version X.Y is required, e.g. --version 12.6 (got $VERSION)" ;; esac
DASHED="$MAJOR-$MINOR"

if [ "$WSL" = auto ]; then
    if grep -qi microsoft "$PROC_VERSION" 2>/dev/null; then WSL=yes; else WSL=no; fi
fi

case $DISTRO in
    ubuntu)
        [ -n "$UBUNTU_VERSION" ] || refuse "$DISTRO_LABEL is based on Ubuntu, but its os-release does not say which Ubuntu release (no UBUNTU_CODENAME). Nothing was changed."
        REPO="ubuntu${UBUNTU_VERSION/./}"
        [ "$WSL" = yes ] && REPO=wsl-ubuntu ;;
    debian)
        [ -n "$DISTRO_MAJOR" ] || refuse "NVIDIA publishes no CUDA repository for Debian testing or unstable (see https://developer.nvidia.com/cuda-downloads). Nothing was changed."
        REPO="debian$DISTRO_MAJOR" ;;
    fedora) REPO="fedora$DISTRO_MAJOR" ;;
    rhel) REPO="rhel$DISTRO_MAJOR" ;;
    amzn) REPO=amzn2023 ;;
    *) refuse "no recipe for '$DISTRO_LABEL'; see https://developer.nvidia.com/cuda-downloads. Nothing was changed." ;;
esac
[ "$WSL" = yes ] && [ "$FAMILY" != deb ] && refuse "in WSL, NVIDIA's CUDA repository exists for Ubuntu only (wsl-ubuntu). Nothing was changed."

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

PKGS=("cuda-toolkit-$DASHED")
[ "$CUDNN" = 1 ] && PKGS+=("cudnn9-cuda-$MAJOR")
note "cuda-toolkit.sh: $DISTRO_LABEL ($ARCH, WSL $WSL), repository $REPO, packages ${PKGS[*]}"

missing=()
for p in "${PKGS[@]}"; do
    pkg_installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    note "already installed: ${PKGS[*]}"
    exit 0
fi

if [ "$FAMILY" = deb ]; then
    if ! pkg_installed cuda-keyring; then
        deb="$WORK/cuda-keyring_1.1-1_all.deb"
        fetch "$BASE/$REPO/$REPO_ARCH/cuda-keyring_1.1-1_all.deb" "$deb"
        before="" after=""
        if [ "$DRY_RUN" = 0 ]; then before=$(mktemp "$WORK/before.XXXXXX"); pkg_snapshot "$before"; fi
        run dpkg -i "$deb"
        if [ "$DRY_RUN" = 0 ]; then after=$(mktemp "$WORK/after.XXXXXX"); pkg_snapshot "$after"; record_changes "$before" "$after"; fi
    fi
    run "${APT[@]}" update
else
    repo_file="/etc/yum.repos.d/cuda-$REPO.repo"
    if [ ! -f "$repo_file" ] || [ "$ASSUME_FRESH" = 1 ]; then
        fetch "$BASE/$REPO/$REPO_ARCH/cuda-$REPO.repo" "$WORK/cuda-$REPO.repo"
        run install -m 0644 "$WORK/cuda-$REPO.repo" "$repo_file"  # never a truncated download
        record file "$repo_file"
    fi
fi
install_packages "${missing[@]}"
note "add it to your shell: export PATH=/usr/local/cuda-$MAJOR.$MINOR/bin:\$PATH"
