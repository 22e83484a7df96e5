#!/usr/bin/env bash
# Install the CUDA toolkit (nvcc, headers, libraries) and optionally cuDNN from NVIDIA's network repository.
# Only needed to compile CUDA code yourself: PyTorch / TensorFlow / JAX wheels bring their own CUDA libraries.
# It installs the toolkit only (cuda-toolkit-X-Y), never the driver (that is nvidia-driver.sh's job), and in
# WSL it uses NVIDIA's wsl-ubuntu repository, which has no driver packages at all.
#
# Every change is printed first ("+ command"); --dry-run changes nothing; running it twice is safe; --undo
# removes what it recorded.
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

die() { printf 'cuda-toolkit.sh: %s\n' "$*" >&2; exit 1; }
note() { printf '# %s\n' "$*"; }
run() {
    printf '+'
    printf ' %q' "$@"
    printf '\n'
    if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}
record() {
    if [ "$DRY_RUN" = 0 ]; then
        mkdir -p "$STATE_DIR"
        printf '%s %s\n' "$1" "$2" >>"$STATE_DIR/$NAME.created"
    fi
}
osr() { sed -n "s/^$1=//p" "$OS_RELEASE" | head -n1 | tr -d '"'; }
installed() {
    [ "$ASSUME_FRESH" = 0 ] || return 1
    if [ "$FAMILY" = deb ]; then
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
    else
        command -v rpm >/dev/null 2>&1 && rpm -q "$1" >/dev/null 2>&1
    fi
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
        *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
done
[ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE (which Linux distribution is this?)"
[ -n "$ARCH" ] || ARCH=$(uname -m)
REPO_ARCH=$ARCH
[ "$ARCH" = aarch64 ] && REPO_ARCH=sbsa

ID=$(osr ID)
ID_LIKE=$(osr ID_LIKE)
VERSION_ID=$(osr VERSION_ID)
case " $ID $ID_LIKE " in
    *" debian "* | *" ubuntu "*) FAMILY=deb ;;
    *) FAMILY=rpm ;;
esac

if [ "$UNDO" = 1 ]; then
    state="$STATE_DIR/$NAME.created"
    if [ ! -f "$state" ]; then
        note "nothing to undo: $state does not exist (this script installed nothing here)"
        exit 0
    fi
    tac "$state" | while read -r kind item; do
        case $kind in
            file) run rm -f "$item" ;;
            pkg) if [ "$FAMILY" = deb ]; then run apt-get purge -y "$item"; else run dnf remove -y "$item"; fi ;;
        esac
    done
    run rm -f "$state"
    exit 0
fi

case $VERSION in [0-9]*.[0-9]*) ;; *) die "--version X.Y is required, e.g. --version 12.6" ;; esac
MAJOR=${VERSION%%.*}
DASHED=${VERSION/./-}

if [ "$WSL" = auto ]; then
    if grep -qi microsoft "$PROC_VERSION" 2>/dev/null; then WSL=yes; else WSL=no; fi
fi

case " $ID $ID_LIKE " in
    *" ubuntu "*)
        REPO="ubuntu${VERSION_ID/./}"
        [ "$WSL" = yes ] && REPO=wsl-ubuntu ;;
    *" debian "*) REPO="debian${VERSION_ID%%.*}" ;;
    *" fedora "*)
        if [ "$ID" = fedora ]; then REPO="fedora$VERSION_ID"; else REPO="rhel${VERSION_ID%%.*}"; fi ;;
    *" rhel "* | *" centos "*) REPO="rhel${VERSION_ID%%.*}" ;;
    *) die "no recipe for '${ID:-unknown}'; see https://developer.nvidia.com/cuda-downloads" ;;
esac
[ "$WSL" = yes ] && [ "$FAMILY" != deb ] && die "in WSL, NVIDIA's CUDA repository exists for Ubuntu only (wsl-ubuntu)"

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

PKGS=("cuda-toolkit-$DASHED")
[ "$CUDNN" = 1 ] && PKGS+=("cudnn9-cuda-$MAJOR")
note "cuda-toolkit.sh: ${ID:-unknown} $VERSION_ID ($ARCH${WSL:+, WSL $WSL}), repository $REPO, packages ${PKGS[*]}"

missing=()
for p in "${PKGS[@]}"; do
    installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    note "already installed: ${PKGS[*]}"
    exit 0
fi

if [ "$FAMILY" = deb ]; then
    if ! installed cuda-keyring; then
        run curl -fsSL -o /tmp/gpusetup-cuda-keyring.deb "$BASE/$REPO/$REPO_ARCH/cuda-keyring_1.1-1_all.deb"
        run dpkg -i /tmp/gpusetup-cuda-keyring.deb
        run rm -f /tmp/gpusetup-cuda-keyring.deb
        record pkg cuda-keyring
    fi
    run apt-get update
    run apt-get install -y "${missing[@]}"
else
    repo_file="/etc/yum.repos.d/cuda-$REPO.repo"
    if [ ! -f "$repo_file" ] || [ "$ASSUME_FRESH" = 1 ]; then
        run curl -fsSL -o "$repo_file" "$BASE/$REPO/$REPO_ARCH/cuda-$REPO.repo"
        record file "$repo_file"
    fi
    run dnf install -y "${missing[@]}"
fi
for p in "${missing[@]}"; do record pkg "$p"; done
note "add it to your shell: export PATH=/usr/local/cuda-$VERSION/bin:\$PATH"
