"""Kernel log lines that decide many GPU problems: NVRM messages, Xid errors, nouveau, PCIe limits.

Reads ``dmesg`` (or ``journalctl -k -b`` when the kernel restricts dmesg to root), keeps only the lines that
matter for GPU diagnosis and only a bounded number of them — never the whole log, which holds unrelated and
private information. Linux only; each command has a short timeout.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpusetup.model import Evidence

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

SOURCE = "kernel log"
MAX_LINES = 200  # first 50 (boot: driver load, probe failures) + last 150 (recent Xids)
KEEP_FIRST = 50
TIMEOUT = 5.0

# What the rules look for (diagnostics.md playbook): NVRM/Xid, nouveau/nova, API mismatch, fallen off the bus,
# legacy-driver notices, PCIe "limited by", Secure Boot rejections, suspend/resume markers, UVM.
PATTERN = re.compile(
    r"NVRM|\bXid\b|nouveau|nova_core|NovaCore|API mismatch|fallen off the bus|Legacy drivers|"
    r"available PCIe bandwidth, limited by|nvidia|\bnv_|PM: suspend (?:entry|exit)|Lockdown:|"
    r"module verification failed|Key was rejected|Loading of unsigned module|Loading of module with unavailable key",
    re.IGNORECASE,
)


# journalctl's short-monotonic format names the host ("[  12.3] myhost kernel: ..."); the report keeps no
# host names, so that part is dropped.
_JOURNAL_HOST = re.compile(r"^(\[\s*[\d.]+\])\s+\S+\s+kernel:\s?")


def filter_lines(text: str, max_lines: int = MAX_LINES) -> list[str]:
    """The matching lines of a kernel log, bounded (first ``KEEP_FIRST`` and the most recent rest)."""
    hits = [_JOURNAL_HOST.sub(r"\1 ", ln.rstrip()) for ln in (text or "").splitlines()
            if ln.strip() and PATTERN.search(ln)]
    if len(hits) <= max_lines:
        return hits
    first = min(KEEP_FIRST, max_lines)
    return hits[:first] + hits[len(hits) - (max_lines - first):]


def probe(ctx: ProbeContext, machine: Machine) -> None:
    if ctx.os_name != "linux":
        return
    attempts = []
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short-monotonic"]):
        if ctx.runner.which(argv[0]) is None:
            attempts.append(f"{argv[0]}: not installed")
            continue
        res = ctx.runner.run(argv, timeout=min(ctx.timeout, TIMEOUT))
        if res.ok and res.stdout.strip():
            machine.kernel_log = filter_lines(res.stdout)
            machine.system.evidence.append(
                Evidence(SOURCE, ok=True, detail=f"{' '.join(argv)}: {len(machine.kernel_log)} matching lines")
            )
            return
        why = res.error or (res.stderr.strip().splitlines() or ["no output"])[-1][:200]
        attempts.append(f"{argv[0]}: {why}")
    machine.system.evidence.append(
        Evidence(
            SOURCE,
            ok=False,
            error="the kernel log could not be read (" + "; ".join(attempts) + "). Run gpusetup with sudo, or "
            "add your user to the 'adm' or 'systemd-journal' group, to include NVRM/Xid messages.",
        )
    )
