"""A driver step that requests a Secure Boot key enrolment for real: the installers' own ``enrol_key``
(installers/gpusetup-common.sh) with Secure Boot on, against a stand-in ``mokutil``.

The stand-in answers as mokutil does (the strings of mokutil 0.6.0, Debian 12's package, as
tests/install/test_installers_real.py uses them); ``--import`` with a hash file that cannot be opened fails as
the real one does (https://github.com/lcp/mokutil, src/mokutil.c ``get_pw_hash_from_file``: "Failed to open
FILE" then "Failed to read hash", non-zero exit). No root, no EFI variables: the request is a file in ``folder``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PASSWORD_LINE = re.compile(r"^gpusetup: mok-password (\d{8})$", re.M)

MOKUTIL = """#!/bin/sh
s={state}
case "$1" in
  --sb-state) echo "SecureBoot enabled" ;;
  --test-key)
    if [ -f $s/enrolled ]; then echo "SKIP: $2 is already enrolled"; exit 0; fi
    if [ -f $s/pending ]; then echo "$2 is already in the enrollment request"; exit 0; fi
    echo "$2 is not enrolled"; exit 1 ;;
  --generate-hash=*) echo '$6$stand-in$hash' ;;
  --import)
    [ "$3" = --hash-file ] && [ -r "$4" ] || {{ echo "Failed to open $4" >&2; echo "Failed to read hash" >&2; exit 255; }}
    mkdir -p $s; cp "$4" $s/pending ;;
esac
"""

DRIVER = """#!/usr/bin/env bash
# the Secure Boot part of nvidia-driver.sh: the module signing key enrolled with a one-time password
set -euo pipefail
NAME=nvidia-driver
export PATH={bin}:$PATH
. {common}
SECURE_BOOT=on
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
enrol_key {key}
[ "$MOK_PENDING" = 1 ] && echo "gpusetup: reboot-needed"
"""


def mok_driver_step(folder: Path) -> list[str]:
    """The argv of a driver step that prints the installer's password line (and its note that repeats it)."""
    folder.mkdir(parents=True, exist_ok=True)
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    mokutil = bin_dir / "mokutil"
    mokutil.write_text(MOKUTIL.format(state=folder / "mok-state"))
    mokutil.chmod(0o755)
    key = folder / "mok.pub"
    key.write_text("stand-in DKMS signing key\n")
    script = folder / "nvidia-driver-standin.sh"
    script.write_text(DRIVER.format(bin=bin_dir, common=ROOT / "installers" / "gpusetup-common.sh", key=key))
    return ["bash", str(script)]


def files_under(folder: Path) -> dict[Path, str]:
    """Every regular file below ``folder`` with its text (binary files decoded leniently)."""
    return {p: p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file()}
