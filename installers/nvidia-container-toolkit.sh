#!/usr/bin/env bash
# Install the NVIDIA Container Toolkit and register it with the container runtime, so containers can use
# the GPU (docker run --gpus all ...). Follows NVIDIA's install guide (cloud-native-docs,
# container-toolkit/install-guide.md): repository + key, the four packages, `nvidia-ctk runtime configure`,
# then a restart of the runtime. Podman uses CDI instead (`nvidia-ctk cdi generate`).
#
# Every change is printed first ("+ command"); --dry-run changes nothing. Running it twice is safe. What it
# creates (repository file, key, packages that were not installed) is recorded so --undo removes just that.
set -euo pipefail

NAME=nvidia-container-toolkit
DRY_RUN=0
UNDO=0
ASSUME_FRESH=0
OS_RELEASE=/etc/os-release
STATE_DIR=/var/lib/gpusetup
RUNTIME=docker
PACKAGES=(nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1)
KEYRING=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg
REPO_BASE=https://nvidia.github.io/libnvidia-container

usage() {
    cat <<'EOF'
Usage: nvidia-container-toolkit.sh [--runtime docker|containerd|crio|podman] [--dry-run] [--undo]
                                   [--os-release FILE] [--state-dir DIR] [--assume-fresh]
EOF
}

die() { printf 'nvidia-container-toolkit.sh: %s\n' "$*" >&2; exit 1; }
note() { printf '# %s\n' "$*"; }
run() {
    printf '+'
    printf ' %q' "$@"
    printf '\n'
    if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}
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
installed() {
    [ "$ASSUME_FRESH" = 0 ] || return 1
    if command -v dpkg-query >/dev/null 2>&1 && [ "$FAMILY" = deb ]; then
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
        --runtime) RUNTIME=${2:?--runtime needs a value}; shift ;;
        --os-release) OS_RELEASE=${2:?--os-release needs a file}; shift ;;
        --state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
    shift
done
case $RUNTIME in docker | containerd | crio | podman) ;; *) die "--runtime must be docker, containerd, crio or podman" ;; esac
[ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE (which Linux distribution is this?)"

ID=$(osr ID)
ID_LIKE=$(osr ID_LIKE)
case " $ID $ID_LIKE " in
    *" debian "* | *" ubuntu "*) FAMILY=deb ;;
    *" fedora "* | *" rhel "* | *" centos "* | *" amzn "*) FAMILY=rpm ;;
    *" suse "* | *" opensuse "* | *" sles "*) FAMILY=suse ;;
    *) die "no recipe for '${ID:-unknown}'; see https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html" ;;
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
            pkg)
                case $FAMILY in
                    deb) run apt-get purge -y "$item" ;;
                    rpm) run dnf remove -y "$item" ;;
                    suse) run zypper --non-interactive remove "$item" ;;
                esac ;;
        esac
    done
    run rm -f "$state"
    note "removed what nvidia-container-toolkit.sh had installed (the runtime's config keeps the nvidia entry until you remove it)"
    exit 0
fi

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

note "nvidia-container-toolkit.sh: ${ID:-unknown} $(osr VERSION_ID), runtime $RUNTIME"
missing=()
for p in "${PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    note "the NVIDIA Container Toolkit is already installed"
else
    case $FAMILY in
        deb)
            list=/etc/apt/sources.list.d/nvidia-container-toolkit.list
            run apt-get update
            run apt-get install -y ca-certificates curl gnupg2
            if [ ! -f "$KEYRING" ] || [ "$ASSUME_FRESH" = 1 ]; then
                run curl -fsSL -o /tmp/gpusetup-nvidia-container-toolkit.key "$REPO_BASE/gpgkey"
                run gpg --batch --yes --dearmor -o "$KEYRING" /tmp/gpusetup-nvidia-container-toolkit.key
                run rm -f /tmp/gpusetup-nvidia-container-toolkit.key
                record file "$KEYRING"
            fi
            if [ ! -f "$list" ] || [ "$ASSUME_FRESH" = 1 ]; then
                # shellcheck disable=SC2016 # $(ARCH) is expanded by apt, not by the shell
                write_file "$list" "deb [signed-by=$KEYRING] $REPO_BASE/stable/deb/\$(ARCH) /"
            fi
            run apt-get update
            run apt-get install -y "${missing[@]}"
            ;;
        rpm)
            repo=/etc/yum.repos.d/nvidia-container-toolkit.repo
            if [ ! -f "$repo" ] || [ "$ASSUME_FRESH" = 1 ]; then
                run curl -fsSL -o "$repo" "$REPO_BASE/stable/rpm/nvidia-container-toolkit.repo"
                record file "$repo"
            fi
            run dnf install -y "${missing[@]}"
            ;;
        suse)
            run zypper --non-interactive addrepo "$REPO_BASE/stable/rpm/nvidia-container-toolkit.repo"
            run zypper --non-interactive --gpg-auto-import-keys install -y "${missing[@]}"
            ;;
    esac
    for p in "${missing[@]}"; do record pkg "$p"; done
fi

case $RUNTIME in
    docker)
        run nvidia-ctk runtime configure --runtime=docker
        if [ "$DRY_RUN" = 1 ] || have systemctl; then
            run systemctl restart docker
        fi
        note "test it: docker run --rm --gpus all ubuntu nvidia-smi"
        ;;
    containerd)
        run nvidia-ctk runtime configure --runtime=containerd
        run systemctl restart containerd
        ;;
    crio)
        run nvidia-ctk runtime configure --runtime=crio
        run systemctl restart crio
        ;;
    podman)
        run nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml
        record file /etc/cdi/nvidia.yaml
        note "test it: podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L"
        ;;
esac
