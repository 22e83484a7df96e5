#!/usr/bin/env bash
# Install the NVIDIA Container Toolkit and register it with the container runtime, so containers can use
# the GPU (docker run --gpus all ...). Follows NVIDIA's install guide (cloud-native-docs,
# container-toolkit/install-guide.md): repository + key, the four packages, `nvidia-ctk runtime configure`,
# then a restart of the runtime. Podman uses CDI instead (`nvidia-ctk cdi generate`).
#
# The runtime is the one installed here (Docker, Podman, CRI-O or containerd; --runtime to choose); none
# installed is refused. The runtime's configuration is backed up first, and the runtime is restarted only when
# its configuration really changed (a second run changes and restarts nothing), and only through a running
# systemd (elsewhere the script says how to restart it). Every change is printed first ("+ command");
# --dry-run changes nothing. What a run installs (dependencies included, never what was there before) is
# recorded so --undo removes just that and puts the configuration back as it was.
set -euo pipefail

NAME=nvidia-container-toolkit
DRY_RUN=0
UNDO=0
ASSUME_FRESH=0
OS_RELEASE=/etc/os-release
STATE_DIR=/var/lib/gpusetup
RUNTIME=auto
PACKAGES=(nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1)
KEYRING=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg
REPO_BASE=https://nvidia.github.io/libnvidia-container

usage() {
    cat <<'EOF'
Usage: nvidia-container-toolkit.sh [--runtime auto|docker|containerd|crio|podman] [--dry-run] [--undo]
                                   [--os-release FILE] [--state-dir DIR] [--assume-fresh]
EOF
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
        *) usage >&2; printf 'nvidia-container-toolkit.sh: unknown option: %s\n' "$1" >&2; exit 1 ;;
    esac
    shift
done

# shellcheck source=installers/gpusetup-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/gpusetup-common.sh"

case $RUNTIME in auto | docker | containerd | crio | podman) ;; *) die "--runtime must be auto, docker, containerd, crio or podman" ;; esac
detect_distro
case $DISTRO in
    ubuntu | debian | fedora | rhel | amzn | suse) ;;
    *) refuse "no recipe for '$DISTRO_LABEL'; see https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html. Nothing was changed." ;;
esac

if [ "$UNDO" = 1 ]; then
    undo
    note "removed what nvidia-container-toolkit.sh had installed and put back the runtime configuration it changed; restart the container runtime to apply it"
    exit 0
fi

# the runtime: the one installed here, in this order (a Kubernetes node has CRI-O or containerd alone)
runtime_installed() {
    case $1 in
        docker) have docker || have dockerd ;;
        podman) have podman ;;
        crio) have crio ;;
        containerd) have containerd ;;
    esac
}
if [ "$RUNTIME" = auto ]; then
    [ "$ASSUME_FRESH" = 0 ] || die "--runtime auto looks at this machine's container runtimes; for another machine give --runtime"
    for r in docker podman crio containerd; do
        if runtime_installed "$r"; then RUNTIME=$r; break; fi
    done
    [ "$RUNTIME" != auto ] || refuse "no container runtime is installed here (Docker, Podman, CRI-O or containerd), so there is nothing to connect the GPU to. Install one first (Docker: https://docs.docker.com/engine/install/), then run this again. Nothing was changed."
elif [ "$ASSUME_FRESH" = 0 ] && [ "$DRY_RUN" = 0 ] && ! runtime_installed "$RUNTIME"; then
    refuse "$RUNTIME is not installed here. Install it first (or choose the runtime you use with --runtime). Nothing was changed."
fi

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
    die "needs administrator rights: run it with sudo (or use --dry-run to see what it would do)"
fi

note "nvidia-container-toolkit.sh: $DISTRO_LABEL, runtime $RUNTIME"
missing=()
for p in "${PACKAGES[@]}"; do
    pkg_installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    note "the NVIDIA Container Toolkit is already installed"
else
    case $FAMILY in
        deb)
            list=/etc/apt/sources.list.d/nvidia-container-toolkit.list
            if [ ! -f "$KEYRING" ] || [ "$ASSUME_FRESH" = 1 ]; then
                need=()
                have curl || need+=(curl ca-certificates)
                have gpg || need+=(gnupg)
                if [ ${#need[@]} -gt 0 ]; then
                    run "${APT[@]}" update
                    install_packages "${need[@]}"
                fi
                fetch "$REPO_BASE/gpgkey" "$WORK/nvidia-container-toolkit.key"
                run gpg --batch --yes --dearmor -o "$WORK/nvidia-container-toolkit.gpg" "$WORK/nvidia-container-toolkit.key"
                run install -m 0644 "$WORK/nvidia-container-toolkit.gpg" "$KEYRING"
                record file "$KEYRING"
            fi
            if [ ! -f "$list" ] || [ "$ASSUME_FRESH" = 1 ]; then
                # shellcheck disable=SC2016 # $(ARCH) is expanded by apt, not by the shell
                write_file "$list" "deb [signed-by=$KEYRING] $REPO_BASE/stable/deb/\$(ARCH) /"
            fi
            run "${APT[@]}" update
            install_packages "${missing[@]}"
            ;;
        rpm)
            repo=/etc/yum.repos.d/nvidia-container-toolkit.repo
            if [ ! -f "$repo" ] || [ "$ASSUME_FRESH" = 1 ]; then
                fetch "$REPO_BASE/stable/rpm/nvidia-container-toolkit.repo" "$WORK/nvidia-container-toolkit.repo"
                run install -m 0644 "$WORK/nvidia-container-toolkit.repo" "$repo"  # never a truncated download
                record file "$repo"
            fi
            install_packages "${missing[@]}"
            ;;
        suse)
            repos=""
            [ "$ASSUME_FRESH" = 1 ] || repos=$(zypper --non-interactive repos 2>/dev/null || true)
            if [[ $repos != *nvidia-container-toolkit* ]]; then
                run zypper --non-interactive addrepo "$REPO_BASE/stable/rpm/nvidia-container-toolkit.repo"
            fi
            run zypper --non-interactive --gpg-auto-import-keys refresh
            install_packages "${missing[@]}"
            ;;
    esac
fi

restart_runtime() {
    if [ "$DRY_RUN" = 1 ] || systemd_running; then
        run systemctl restart "$1"
    else
        note "no running systemd here: restart $1 with this system's service manager (for example 'service $1 restart') so it reads the new configuration"
    fi
}

# configure RUNTIME FILE UNIT : let nvidia-ctk write the runtime's configuration; keep the old file; restart
# the runtime only when the file really changed
configure() {
    local rt=$1 conf=$2 unit=$3 old="$WORK/config.before" existed=0 backup sum
    if [ "$DRY_RUN" = 0 ] && [ -f "$conf" ]; then cp -p "$conf" "$old"; existed=1; fi
    run nvidia-ctk runtime configure --runtime="$rt"
    if [ "$DRY_RUN" = 1 ]; then
        note "only if that changed $conf (the old one is kept for --undo):"
        restart_runtime "$unit"
        return 0
    fi
    if [ "$existed" = 1 ] && cmp -s "$old" "$conf"; then
        note "$conf already registers the nvidia runtime: nothing changed, $unit not restarted"
        return 0
    fi
    sum=$(sha256sum "$conf" | cut -d' ' -f1)
    if [ "$existed" = 1 ]; then
        backup="$STATE_DIR/$(basename "$conf").before-gpusetup"
        mkdir -p "$STATE_DIR"
        cp -p "$old" "$backup"
        record config "$conf|$backup|$sum"
        note "the previous $conf is kept as $backup"
    else
        record file "$conf"
    fi
    restart_runtime "$unit"
}

case $RUNTIME in
    docker)
        configure docker /etc/docker/daemon.json docker
        note "test it: docker run --rm --gpus all ubuntu nvidia-smi"
        ;;
    containerd) configure containerd /etc/containerd/config.toml containerd ;;
    crio) configure crio /etc/crio/crio.conf crio ;;
    podman)
        spec=/etc/cdi/nvidia.yaml
        run nvidia-ctk cdi generate --output="$WORK/nvidia.yaml"
        if [ "$DRY_RUN" = 0 ] && [ -f "$spec" ] && cmp -s "$spec" "$WORK/nvidia.yaml"; then
            note "$spec is up to date"
        else
            existed=0
            [ "$DRY_RUN" = 0 ] && [ -f "$spec" ] && existed=1
            run install -D -m 0644 "$WORK/nvidia.yaml" "$spec"
            [ "$existed" = 1 ] || record file "$spec"
        fi
        note "test it: podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L"
        ;;
esac
