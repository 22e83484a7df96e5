# shellcheck shell=bash disable=SC2034  # the variables set here are read by the scripts that source this file
# Shared by installers/*.sh (sourced, never run on its own). One place for what every installer needs:
#   - printing each change before it is made ("+ command"), --dry-run, and the state file --undo reads;
#   - which distribution this is (derivatives through ID_LIKE / UBUNTU_CODENAME), refusing clearly otherwise;
#   - package managers driven non-interactively and recoverably, with what a run installed recorded from a
#     before/after comparison of the package database (so undo removes exactly that, dependencies included,
#     and never a package that was there before);
#   - downloads with a time limit and a word about proxies, into a private temporary folder;
#   - Secure Boot key enrolment with a one-time password shown on screen, and the reboot-needed state.
# The sourcing script sets NAME and its option variables before calling anything here.

DRY_RUN=${DRY_RUN:-0}
ASSUME_FRESH=${ASSUME_FRESH:-0}
STATE_DIR=${STATE_DIR:-/var/lib/gpusetup}
OS_RELEASE=${OS_RELEASE:-/etc/os-release}

die() { printf '%s.sh: %s\n' "$NAME" "$*" >&2; exit 1; }
refuse() { printf '%s.sh: %s\n' "$NAME" "$*" >&2; exit 3; }  # 3: refused before changing anything
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
        chmod 0755 "$STATE_DIR"
        printf '%s %s\n' "$1" "$2" >>"$STATE_DIR/$NAME.created"
    fi
}
# write_file PATH LINE... : create a file (recorded for --undo)
write_file() {
    local path=$1
    shift
    printf '+ write %s\n' "$path"
    printf '  | %s\n' "$@"
    if [ "$DRY_RUN" = 0 ]; then
        mkdir -p "$(dirname "$path")"
        printf '%s\n' "$@" >"$path.gpusetup-new"
        mv -f "$path.gpusetup-new" "$path"
        record file "$path"
    fi
}
have() { [ "$ASSUME_FRESH" = 0 ] && command -v "$1" >/dev/null 2>&1; }
# a running systemd (not just the systemctl binary: containers and chroots have the one without the other)
systemd_running() { [ "$ASSUME_FRESH" = 0 ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

# --------------------------------------------------------------------------------------- distribution
# osr KEY : a value of the os-release file, without its quotes
osr() { sed -n "s/^$1=//p" "$OS_RELEASE" | head -n1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'$/\1/"; }

# ubuntu_version CODENAME : the Ubuntu release a codename stands for (derivatives name their Ubuntu base)
ubuntu_version() {
    case $1 in
        focal) echo 20.04 ;; jammy) echo 22.04 ;; noble) echo 24.04 ;; oracular) echo 24.10 ;;
        plucky) echo 25.04 ;; questing) echo 25.10 ;; resolute) echo 26.04 ;; *) echo "" ;;
    esac
}

# detect_distro : sets DISTRO (ubuntu, debian, fedora, rhel, amzn, suse or unknown), FAMILY (deb, rpm, suse),
# DISTRO_MAJOR, UBUNTU_VERSION / UBUNTU_CODENAME, DEB_CODENAME, DISTRO_LABEL (for messages)
detect_distro() {
    [ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE (which Linux distribution is this?)"
    local id like version codename
    id=$(osr ID)
    like=$(osr ID_LIKE)
    version=$(osr VERSION_ID)
    codename=$(osr VERSION_CODENAME)
    DISTRO=unknown FAMILY="" DISTRO_MAJOR="" UBUNTU_VERSION="" UBUNTU_CODENAME="" DEB_CODENAME=""
    DISTRO_LABEL="$(osr PRETTY_NAME)"
    [ -n "$DISTRO_LABEL" ] || DISTRO_LABEL="${id:-unknown} ${version}"
    case " $id $like " in
        *" ubuntu "*)
            DISTRO=ubuntu FAMILY=deb
            UBUNTU_CODENAME=$(osr UBUNTU_CODENAME)
            [ -n "$UBUNTU_CODENAME" ] || { [ "$id" = ubuntu ] && UBUNTU_CODENAME=$codename; }
            UBUNTU_VERSION=$(ubuntu_version "$UBUNTU_CODENAME")
            [ -n "$UBUNTU_VERSION" ] || { [ "$id" = ubuntu ] && UBUNTU_VERSION=$version; }
            DEB_CODENAME=$UBUNTU_CODENAME
            DISTRO_MAJOR=${UBUNTU_VERSION%%.*} ;;
        *" debian "*)
            if [ "$id" = debian ]; then
                DISTRO=debian FAMILY=deb DEB_CODENAME=$codename
                DISTRO_MAJOR=${version%%.*}  # empty on testing and unstable (no VERSION_ID there)
            fi ;;
        *" fedora "* | *" rhel "* | *" centos "*)
            case $id in
                fedora) DISTRO=fedora FAMILY=rpm DISTRO_MAJOR=$version ;;
                amzn) FAMILY=rpm DISTRO_MAJOR=${version%%.*}; [ "$version" = 2023 ] && DISTRO=amzn ;;
                *) DISTRO=rhel FAMILY=rpm DISTRO_MAJOR=${version%%.*} ;;
            esac ;;
        *" suse "* | *" opensuse "* | *" sles "*) DISTRO=suse FAMILY=suse DISTRO_MAJOR=${version%%.*} ;;
    esac
}

# ------------------------------------------------------------------------------------- package managers
# apt and dpkg never ask: a question read from a closed stdin fails dpkg and leaves packages half-configured
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

JUST_INSTALLED=" "  # what this run installed (a dry-run's later steps see it as there)
pkg_installed() {
    case $JUST_INSTALLED in *" $1 "*) return 0 ;; esac
    [ "$ASSUME_FRESH" = 0 ] || return 1
    case $FAMILY in
        deb) case $(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) in ii*) return 0 ;; *) return 1 ;; esac ;;
        *) command -v rpm >/dev/null 2>&1 && rpm -q "$1" >/dev/null 2>&1 ;;
    esac
}

# pkg_snapshot FILE : "name|version" of every installed package, sorted
pkg_snapshot() {
    case $FAMILY in
        deb) dpkg-query -W -f='${db:Status-Abbrev}|${binary:Package}|${Version}\n' 2>/dev/null \
                 | awk -F'|' '$1 ~ /^ii/ {print $2 "|" $3}' | LC_ALL=C sort >"$1" ;;
        *) rpm -qa --qf '%{NAME}|%{VERSION}-%{RELEASE}\n' 2>/dev/null | LC_ALL=C sort >"$1" ;;
    esac
}

# install_packages PKG... : install what is missing; record what the run added (dependencies too), what it
# found already there ("had", never removed by undo), upgraded or removed
install_packages() {
    local want=() p
    for p in "$@"; do
        if pkg_installed "${p%%=*}"; then
            case $JUST_INSTALLED in
                *" ${p%%=*} "*) ;;
                *) note "${p%%=*} is already installed"; record had "${p%%=*}" ;;
            esac
        else
            want+=("$p")
        fi
    done
    [ ${#want[@]} -gt 0 ] || return 0
    local before="" after=""
    if [ "$DRY_RUN" = 0 ]; then
        before=$(mktemp "$WORK/before.XXXXXX")
        pkg_snapshot "$before"
    fi
    case $FAMILY in
        deb) run "${APT[@]}" install "${want[@]}" || apt_failed "${want[@]}" ;;
        rpm) run dnf install -y "${want[@]}" || die "dnf could not install ${want[*]} (see above); nothing after this step was done" ;;
        suse) run zypper --non-interactive install "${want[@]}" || die "zypper could not install ${want[*]} (see above)" ;;
    esac
    if [ "$DRY_RUN" = 0 ]; then
        after=$(mktemp "$WORK/after.XXXXXX")
        pkg_snapshot "$after"
        record_changes "$before" "$after"
        for p in "${want[@]}"; do
            pkg_installed "${p%%=*}" || die "${p%%=*} is not installed although the package manager reported success; nothing after this step was done"
        done
    fi
    for p in "${want[@]}"; do JUST_INSTALLED="$JUST_INSTALLED${p%%=*} "; done
}

# record_changes BEFORE AFTER : what the package database gained, lost or upgraded between two snapshots
record_changes() {
    [ "$DRY_RUN" = 0 ] || return 0
    mkdir -p "$STATE_DIR"
    {
        awk -F'|' 'NR == FNR {old[$1] = $2; next}
                   !($1 in old) {print "pkg " $1; next}
                   old[$1] != $2 {print "upgraded " $1 "|" old[$1]}' "$1" "$2"
        awk -F'|' 'NR == FNR {now[$1] = 1; next} !($1 in now) {print "removed " $1 "|" $2}' "$2" "$1"
    } >>"$STATE_DIR/$NAME.created"
}

apt_failed() {
    local rc=$?
    if [ "$DRY_RUN" = 0 ] && [ -n "$(dpkg --audit 2>/dev/null)" ]; then
        note "dpkg was interrupted and some packages are only half configured. Finish them with:"
        note "  sudo dpkg --configure -a && sudo apt-get -f install"
    fi
    die "apt-get could not install $* (exit $rc, see above). Nothing after this step was done; fix the cause (network, proxy, a held or missing package) and run this script again."
}

# ----------------------------------------------------------------------------------------- downloads
WORK=/tmp/gpusetup.XXXXXX  # what a dry-run shows; a real run gets a private folder of its own
if [ "$DRY_RUN" = 0 ]; then
    WORK=$(mktemp -d /tmp/gpusetup.XXXXXX)
    trap 'rm -rf "$WORK"' EXIT
fi

# fetch URL FILE : download with a time limit; on failure say what usually causes it
fetch() {
    if [ "$DRY_RUN" = 0 ] && ! command -v curl >/dev/null 2>&1; then
        install_packages curl ca-certificates
    fi
    run curl -fsSL --retry 2 --connect-timeout 20 --max-time 900 -o "$2" "$1" || die "could not download $1. Check the network connection. Behind a proxy: sudo does not pass https_proxy on to this script; run it with sudo --preserve-env=https_proxy,http_proxy,no_proxy (and give apt the proxy in /etc/apt/apt.conf.d/ or dnf in /etc/dnf/dnf.conf)."
}

# ----------------------------------------------------------------------------------------------- undo
undo() {
    local state="$STATE_DIR/$NAME.created" kind item
    if [ ! -f "$state" ]; then
        note "nothing to undo: $state does not exist (this script installed nothing here)"
        exit 0
    fi
    local pkgs=() files=() configs=() had=() upgraded=() removed=() locks=() initramfs=0
    while read -r kind item; do
        case $kind in
            pkg) pkgs+=("$item") ;;
            file) files=("$item" "${files[@]}") ;;
            config) configs=("$item" "${configs[@]}") ;;
            had) had+=("$item") ;;
            upgraded) upgraded+=("$item") ;;
            removed) removed+=("$item") ;;
            versionlock) locks+=("$item") ;;
        esac
    done <"$state"
    local gone=() p
    for p in "${pkgs[@]}"; do
        if [ "$DRY_RUN" = 1 ] || pkg_installed "$p"; then gone+=("$p"); fi
    done
    if [ ${#gone[@]} -gt 0 ]; then
        case $FAMILY in
            deb)
                # apt would also remove whatever was installed later on top of these: stop instead
                if [ "$DRY_RUN" = 0 ]; then
                    local extra
                    extra=$(apt-get -s purge "${gone[@]}" 2>/dev/null \
                                | awk -v ours=" ${gone[*]} " '/^Purg / && index(ours, " " $2 " ") == 0 {print $2}' || true)
                    [ -z "$extra" ] || die "undo stopped before changing anything: removing what $NAME.sh installed would also remove packages installed later that need them: $(echo "$extra" | tr '\n' ' ')"
                fi
                run "${APT[@]}" purge "${gone[@]}" ;;
            rpm)
                if [ "$DRY_RUN" = 0 ] && ! rpm -e --test "${gone[@]}" >/dev/null 2>&1; then
                    die "undo stopped before changing anything: packages installed later need what $NAME.sh installed (rpm -e --test ${gone[*]} says why)"
                fi
                run dnf remove -y "${gone[@]}" ;;
            suse) run zypper --non-interactive remove "${gone[@]}" ;;
        esac
    fi
    local c
    for c in "${locks[@]}"; do run dnf versionlock delete "$c"; done
    local path backup sum
    for c in "${configs[@]}"; do  # config PATH|BACKUP|SHA256: the file before this script changed it, and after
        IFS='|' read -r path backup sum <<<"$c"
        if [ "$DRY_RUN" = 0 ] && [ -n "$sum" ] && [ "$(sha256sum "$path" 2>/dev/null | cut -d' ' -f1)" != "$sum" ]; then
            note "left $path as it is: it was changed after $NAME.sh configured it; the version from before is $backup"
            continue
        fi
        run cp -p "$backup" "$path"
        run rm -f "$backup"
    done
    for item in "${files[@]}"; do
        run rm -f "$item"
        case $item in /etc/modprobe.d/*) initramfs=1 ;; esac
    done
    if [ "$initramfs" = 1 ]; then rebuild_initramfs; fi
    run rm -f "$state"
    for p in "${had[@]}"; do
        case " ${pkgs[*]} " in *" $p "*) ;; *) note "left $p: it was installed before $NAME.sh ran" ;; esac
    done
    for p in "${upgraded[@]}"; do note "left ${p%%|*} at its newer version: $NAME.sh upgraded it from ${p#*|} and undo does not downgrade"; done
    for p in "${removed[@]}"; do note "${p%%|*} ${p#*|} was removed by the install and is not put back: reinstall it if you need it"; done
}

# ------------------------------------------------------------------------------------------ Secure Boot
SECURE_BOOT=${SECURE_BOOT:-auto}
secure_boot_state() {
    if [ "$SECURE_BOOT" = auto ]; then
        SECURE_BOOT=unknown
        if have mokutil; then
            case $(mokutil --sb-state 2>/dev/null || true) in
                *"SecureBoot enabled"*) SECURE_BOOT=on ;;
                *"SecureBoot disabled"*) SECURE_BOOT=off ;;
            esac
        fi
    fi
}

MOK_PENDING=0
# enrol_key KEYFILE : with Secure Boot on, make sure the key that signs the module is enrolled or waiting for
# the restart; a new enrolment gets a one-time password, shown on screen (never written to a file)
enrol_key() {
    local key=$1 state pw hash
    [ "$SECURE_BOOT" = on ] || return 0
    if ! have mokutil && ! pkg_installed mokutil; then install_packages mokutil; fi
    state=unknown
    if [ "$DRY_RUN" = 0 ]; then
        [ -r "$key" ] || die "Secure Boot is on but the module signing key $key is missing: the driver's module cannot load. Reinstall the driver packages (they create the key) and run this script again."
        case $(mokutil --test-key "$key" 2>&1 || true) in
            *"is not enrolled"*) state=absent ;;
            *"enrollment request"*) state=pending ;;
            *"already"*) state=enrolled ;;  # mokutil 0.6: "SKIP: KEY is already enrolled" / "... in db"
        esac
    fi
    case $state in
        enrolled) note "Secure Boot: the module signing key $key is enrolled" ;;
        pending)
            note "Secure Boot: the key $key is waiting to be enrolled at the next restart (choose 'Enroll MOK' in the blue"
            note "MOK manager screen and type the one-time password you were given). Lost it? Run: sudo mokutil --revoke-import $key, then this script again."
            MOK_PENDING=1 ;;
        *)
            pw=$(od -An -N8 -tu1 /dev/urandom 2>/dev/null | awk '{for (i = 1; i <= NF; i++) printf "%d", $i % 10}')
            [ -n "$pw" ] || pw=$(date +%N | cut -c1-8)
            hash="$WORK/mok.hash"
            printf '+ mokutil --generate-hash=<one-time password> > %s\n' "$hash"
            # shown, not run: the import needs the hash file written just below (mokutil fails without it)
            printf '+ mokutil --import %q --hash-file %q\n' "$key" "$hash"
            if [ "$DRY_RUN" = 0 ]; then
                mokutil --generate-hash="$pw" >"$hash"
                mokutil --import "$key" --hash-file "$hash" || die "mokutil could not request the key enrolment (see above); the driver's module will not load with Secure Boot on"
                rm -f "$hash"
                echo "gpusetup: mok-password $pw"
                note "Secure Boot: at the next restart a blue 'MOK management' screen appears. Choose 'Enroll MOK',"
                note "'Continue', 'Yes', then type this one-time password: $pw  (write it down now; it is not stored anywhere)"
            fi
            MOK_PENDING=1 ;;
    esac
}

# rebuild_initramfs : so the early boot sees a changed module blacklist (no tool: a container or chroot)
rebuild_initramfs() {
    local tool=update-initramfs args=(-u)
    [ "$FAMILY" = deb ] || { tool=dracut; args=(--force); }
    if [ "$DRY_RUN" = 1 ] || command -v "$tool" >/dev/null 2>&1; then
        run "$tool" "${args[@]}"
    else
        note "no $tool here (a container or chroot?): the initial ramdisk was not rebuilt"
    fi
}

# --------------------------------------------------------------------------------------- reboot state
boot_id() { cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown; }
# a reboot-needed file from before the last restart is stale: the restart it asked for has happened
clear_stale_reboot() {
    local file="$STATE_DIR/reboot-needed"
    [ "$DRY_RUN" = 0 ] && [ -f "$file" ] || return 0
    if ! grep -qx "boot_id=$(boot_id)" "$file"; then
        rm -f "$file"
        note "the restart asked for earlier has happened"
    fi
}
ask_reboot() {
    local id="<this boot>"
    [ "$DRY_RUN" = 1 ] || id=$(boot_id)
    write_file "$STATE_DIR/reboot-needed" "$1" "boot_id=$id"
    if [ "$DRY_RUN" = 0 ]; then echo "gpusetup: reboot-needed"; fi
}
