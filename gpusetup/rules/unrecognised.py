"""The honest answer when no rule recognises a reported problem: say so, and say what to collect next.

``analyze`` calls :func:`not_recognised` after the rules ran. When the input plainly shows a problem (error
lines, a traceback, kernel-log errors, a container error) but no finding at warning or above explains it, the
user gets this info finding instead of silence: the lines gpusetup could not place, and the commands whose
output would decide — ending with ``gpusetup bundle`` on the affected machine.
"""

from __future__ import annotations

import re

from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.rules._util import driver_version, make, text_lines

# Strong error markers only: help texts ("--error-on-warning", "Reset ECC error counts") and notes such as
# "not supported on vGPU host" must not make a healthy tool output look like a problem report.
_PROBLEM = re.compile(
    r"\w(?:Error|Exception)\b\s*[:(]|\bERROR\b|\berror:|\b(?:[Ff]ailed|[Ff]ailure|cannot|can't|[Cc]ould not|"
    r"[Uu]nable to|fatal|FATAL|[Dd]enied|timed out|incompatible|[Mm]ismatch)\b|Traceback|[Nn]o such file|"
    r"not found|Segmentation fault|core dumped|out of memory|not available|busy or unavailable|\bXid\b"
)
# Normal placeholders of environment reports (collect_env, nvidia-smi -q), not errors.
_NOT_A_PROBLEM = re.compile(
    r"Could not collect|\[Not Supported\]|:\s*N/A\s*$|No CUDA\s*$|"
    r"^\s*[\w .()/-]+?\s{2,}:\s|"  # nvidia-smi -q fields ("Remapping Failure Occurred   : No")
    r"^\s*-{1,2}[\w-]+[,= ]|\bindicates that\b|"  # help texts and field descriptions
    r"^\s*\"[\w.]+\"\s*$|^\s*[0-9a-f]{4}\s{2}",  # query-field lists, pci.ids entries
    re.IGNORECASE,
)
PROBLEM_KINDS = {"traceback", "error-lines", "docker-error", "kernel-log"}


def problem_lines(machine: Machine, limit: int = 4) -> list[str]:
    out = []
    for ln in text_lines(machine):
        if _PROBLEM.search(ln) and not _NOT_A_PROBLEM.search(ln) and len(ln) < 400:
            out.append(ln.strip())
            if len(out) >= limit:
                break
    return out


def next_steps(machine: Machine, lines: list[str]) -> list[Message]:
    """The commands whose output would decide, most specific first."""
    text = "\n".join(lines).lower()
    steps: list[Message] = []
    if not driver_version(machine) and machine.system.os != "macos":
        steps.append(msg("fix.problem-not-recognised.nvidia-smi"))
    if any(w in text for w in ("torch", "cuda", "traceback", "python")) and not any(
            env.frameworks for env in machine.python_envs):
        steps.append(msg("fix.problem-not-recognised.collect-env"))
    if any(w in text for w in ("docker", "container", "kubectl", "pod", "runtime")):
        steps.append(msg("fix.problem-not-recognised.docker"))
    if any(w in text for w in ("nvrm", "xid", "kernel", "module", "dkms")) or not machine.kernel_log:
        steps.append(msg("fix.problem-not-recognised.dmesg"))
    steps.append(msg("fix.problem-not-recognised.bundle"))
    return steps


def not_recognised(machine: Machine, findings: list[Finding], kinds: set[str]) -> Finding | None:
    """An info finding when the input shows a problem that no rule explains (None otherwise)."""
    if any(f.severity.rank >= Severity.WARNING.rank for f in findings):
        return None
    if not (kinds & PROBLEM_KINDS):
        return None
    if kinds & {"nvidia-smi-q", "nvidia-smi-xml"} and not kinds & {"traceback", "docker-error"}:
        return None  # a full nvidia-smi dump: its help texts and field names are not error reports
    lines = problem_lines(machine)
    if not lines:
        return None
    steps = next_steps(machine, lines)
    return make(
        "problem-not-recognised",
        Severity.INFO,
        "The problem in this input is not one gpusetup recognises yet",
        "The input shows errors (quoted below), but none of gpusetup's checks matches them, so it cannot name "
        "the cause with confidence — rather than guess, it says so. The output of the commands below would "
        "decide it.",
        msg("fix.problem-not-recognised", steps=steps),
        lines,
    )
