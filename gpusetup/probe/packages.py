"""Distribution packages of the NVIDIA/CUDA stack, their recent history, and DKMS build errors.

Decides the "half-done upgrade" (F09: packages of two driver versions, or one left half-configured), what
unattended-upgrades changed behind the user's back, and why a module build failed (F06). ``dkms status``
itself is read by the platform probe (it fills the nvidia KernelModule's ``dkms_status``). Linux only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from gpusetup.model import Evidence

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

SOURCE = "packages"
TIMEOUT = 10.0
MAX_PACKAGES = 300
MAX_HISTORY_LINES = 60
TAIL_BYTES = 256 * 1024

NAME = re.compile(r"nvidia|cuda|cudnn|libnccl|tensorrt|libnvinfer|fabric-?manager|libcublas|libcufft|libnpp",
                  re.IGNORECASE)


def parse_dpkg_l(text: str) -> list[str]:
    """``dpkg -l`` → "ii  name  version" lines for the NVIDIA/CUDA stack (header lines skipped)."""
    out = []
    for ln in (text or "").splitlines():
        m = re.match(r"^([uihrp][ncHUFWti])R?\s+(\S+)\s+(\S+)", ln)
        if m and NAME.search(m.group(2)):
            out.append(f"{m.group(1)}  {m.group(2)}  {m.group(3)}")
    return out[:MAX_PACKAGES]


def parse_rpm_qa(text: str) -> list[str]:
    """``rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE}\\n'`` → "rpm  name  version-release" lines."""
    out = []
    for ln in (text or "").splitlines():
        parts = ln.split()
        if len(parts) == 2 and NAME.search(parts[0]):
            out.append(f"rpm  {parts[0]}  {parts[1]}")
    return sorted(out)[:MAX_PACKAGES]


def parse_apt_history(text: str, max_lines: int = MAX_HISTORY_LINES) -> list[str]:
    """The entries of /var/log/apt/history.log that touched NVIDIA/CUDA packages (most recent last)."""
    keep: list[str] = []
    for block in re.split(r"\n\s*\n", text or ""):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        changes = [ln for ln in lines if re.match(r"(Install|Upgrade|Remove|Purge|Downgrade|Reinstall):", ln)]
        if not any(NAME.search(ln) for ln in changes):
            continue
        for ln in lines:
            if re.match(r"(Start-Date|Commandline|Requested-By|End-Date):", ln):
                keep.append(ln)
            elif ln in changes:
                kind, _, pkgs = ln.partition(":")
                nv = [p.strip() for p in re.split(r"\),\s*", pkgs) if NAME.search(p)]
                shown = ", ".join(p if p.endswith(")") else p + ")" for p in nv[:8])
                more = f" … (+{len(nv) - 8} more)" if len(nv) > 8 else ""
                keep.append(f"{kind}: {shown}{more}")
    return keep[-max_lines:]


def _tail(path: Path, limit: int = TAIL_BYTES) -> str | None:
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def dkms_build_errors(ctx: ProbeContext, limit: int = 5) -> list[str]:
    """Error lines from nvidia DKMS make.log files (only worth reading when the module is not loaded)."""
    base = ctx.path("/var/lib/dkms")
    out: list[str] = []
    try:
        logs = sorted(p for pattern in ("nvidia*/*/build/make.log", "nvidia*/*/*/*/log/make.log")
                      for p in base.glob(pattern))
    except OSError:
        return []
    for log in logs[-3:]:
        text = _tail(log, 64 * 1024) or ""
        errs = [ln.strip() for ln in text.splitlines() if re.search(r"\berror\b|Error \d", ln)]
        for ln in errs[-limit:]:
            out.append(f"DKMS make.log ({log.relative_to(base)}): {ln[:300]}")
    return out[-limit:]


def probe(ctx: ProbeContext, machine: Machine) -> None:
    if ctx.os_name != "linux":
        return
    runner = ctx.runner
    if runner.which("dpkg"):
        # Wide columns so long package names and versions are not cut.
        res = runner.run(["dpkg", "-l"], timeout=min(ctx.timeout, TIMEOUT), env={"COLUMNS": "300"})
        if res.stdout:
            machine.packages = parse_dpkg_l(res.stdout)
        _note(machine, "dpkg -l", res.ok or bool(res.stdout), res.error, len(machine.packages))
    elif runner.which("rpm"):
        res = runner.run(["rpm", "-qa", "--qf", "%{NAME} %{VERSION}-%{RELEASE}\n"], timeout=min(ctx.timeout, TIMEOUT))
        if res.stdout:
            machine.packages = parse_rpm_qa(res.stdout)
        _note(machine, "rpm -qa", res.ok or bool(res.stdout), res.error, len(machine.packages))
    hist = _tail(ctx.path("/var/log/apt/history.log"))
    if hist:
        machine.package_history = parse_apt_history(hist)
    else:
        dnf = _tail(ctx.path("/var/log/dnf.rpm.log"))
        if dnf:
            machine.package_history = [ln.strip() for ln in dnf.splitlines() if NAME.search(ln)][-MAX_HISTORY_LINES:]
    mod = next((m for m in machine.driver.modules if m.name == "nvidia"), None)
    if mod is None or mod.loaded is False:
        for line in dkms_build_errors(ctx):
            if line not in machine.messages:
                machine.messages.append(line)


def _note(machine: Machine, what: str, ok: bool, error: str | None, n: int) -> None:
    machine.system.evidence.append(
        Evidence(f"{SOURCE} ({what})", ok=ok, error=None if ok else (error or f"{what} failed"),
                 detail=f"{n} NVIDIA/CUDA packages" if ok else None)
    )
