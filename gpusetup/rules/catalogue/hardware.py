"""Catalogue C — hardware, bus and runtime-state faults (F14–F18)."""

from __future__ import annotations

import re

from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import driver_version, gpu_label, grep, make, nvml_ok, search

_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)", re.IGNORECASE)
# Xids as people report them: "Xid 79 twice this week, then Xid 154", "Xids 13, 31", a table row "| Xid | 79 |"
XID_MENTION = re.compile(r"\bXids?\b(?:\s*(?:errors?|codes?|events?))?[\s:#=(|-]*"
                         r"((?:\d{1,3}(?:\s*(?:,|/|and|&|or|\|)\s*)?)+)", re.IGNORECASE)


def xid_mentions(line: str) -> list[int]:
    """The Xid numbers a line of prose names (none for the kernel's own NVRM lines, read by :func:`xids`)."""
    if "NVRM" in line:
        return []
    return [n for m in XID_MENTION.finditer(line) for n in map(int, re.findall(r"\d{1,3}", m.group(1))) if 1 <= n <= 200]


def xids(machine: Machine) -> list[tuple[str, int, str]]:
    """(PCI address, Xid number, line) for each Xid line in the kernel log or pasted text; an Xid a person
    reported in words has no address ("")."""
    out = []
    for ln in grep(machine, _XID, 200):
        m = _XID.search(ln)
        if m:
            out.append((m.group(1), int(m.group(2)), ln))
    for ln in grep(machine, XID_MENTION, 20):
        out.extend(("", n, ln) for n in xid_mentions(ln))
    return out


# ------------------------------------------------------------------------------------------- F14


@rule("gpu-fell-off-bus", catalogue="F14")
def fell_off_bus(machine: Machine) -> list[Finding]:
    lines = [ln for _, n, ln in xids(machine) if n == 79]
    lines += [ln for ln in grep(machine, r"fallen off the bus|GPU is lost|GPU_IS_LOST", 4) if ln not in lines]
    if not lines:
        return []
    addrs = sorted({m.group(1) for m in (_XID.search(ln) for ln in lines) if m})
    return [
        make(
            "gpu-fell-off-bus",
            Severity.ERROR,
            "A GPU stopped responding on the PCIe bus ('fallen off the bus', Xid 79)",
            "The card vanished from the bus while in use"
            + (f" (PCI {', '.join(addrs)})" if addrs else "")
            + ". This is almost always power, heat or the physical connection — NVIDIA names overheating, lack of "
            "power and outdated system BIOS as the usual causes — not a software setup problem. Reinstalling "
            "drivers will not help.",
            msg("fix.gpu-fell-off-bus"),
            lines,
        )
    ]


# ------------------------------------------------------------------------------------------- F15


_LIMITED = re.compile(
    r"([\d.]+ Gb/s) available PCIe bandwidth, limited by ([\d.]+ GT/s PCIe x\d+) link at (\S+) "
    r"\(capable of ([\d.]+ Gb/s) with ([\d.]+ GT/s PCIe x\d+) link\)",
    re.IGNORECASE,
)
_DOWNGRADED = re.compile(r"LnkSta:\s*Speed [\d.]+GT/s(?: \(downgraded\))?, Width x\d+(?: \(downgraded\))?",
                         re.IGNORECASE)
LOAD_THRESHOLD_PCT = 50  # "under load": a link judged only while the GPU is busy


@rule("pcie-link-degraded", catalogue="F15")
def pcie_link(machine: Machine) -> list[Finding]:
    out = []
    for g in machine.nvidia_gpus:
        p = g.pcie
        busy = g.utilization_gpu_pct is not None and g.utilization_gpu_pct >= LOAD_THRESHOLD_PCT
        low_gen = p.gen_current is not None and p.gen_max is not None and p.gen_current < p.gen_max
        low_width = p.width_current is not None and p.width_max is not None and p.width_current < p.width_max
        if (low_gen or low_width) and busy:
            out.append(
                make(
                    "pcie-link-degraded",
                    Severity.WARNING,
                    f"{gpu_label(g)} runs its PCIe link below capability while busy "
                    f"(Gen{p.gen_current} x{p.width_current} of Gen{p.gen_max} x{p.width_max})",
                    "Under load the link should train to its maximum. A lower speed or width means slower data "
                    "transfers between CPU and GPU (data loading, multi-GPU).",
                    msg("fix.pcie-link-degraded"),
                    [f"PCIe Gen{p.gen_current} x{p.width_current} (max Gen{p.gen_max} x{p.width_max}) at "
                     f"{g.utilization_gpu_pct}% GPU load"],
                    gpu_index=g.index,
                    params={"gpu": gpu_label(g), "link": f"Gen{p.gen_current} x{p.width_current}",
                            "best": f"Gen{p.gen_max} x{p.width_max}"},
                )
            )
        elif (low_width) and not busy and p.width_current is not None and p.width_current <= 4 and (p.width_max or 0) >= 16:
            # Width rarely drops for power saving; a narrow idle link is worth a look, not an alarm.
            out.append(
                make(
                    "pcie-link-narrow-idle",
                    Severity.INFO,
                    f"{gpu_label(g)} shows a PCIe x{p.width_current} link (max x{p.width_max}) while idle",
                    "Idle GPUs may lower link speed to save power; a narrow width usually means the slot or riser "
                    "provides fewer lanes.",
                    msg("fix.pcie-link-narrow-idle"),
                    [f"PCIe Gen{p.gen_current} x{p.width_current} (max Gen{p.gen_max} x{p.width_max}), idle"],
                    gpu_index=g.index,
                )
            )
    limited = grep(machine, _LIMITED, 4)
    if limited:
        m = _LIMITED.search(limited[0])
        assert m is not None
        out.append(
            make(
                "pcie-link-degraded",
                Severity.WARNING,
                f"The kernel reports PCIe bandwidth limited to {m.group(1)} by a {m.group(2)} link "
                f"(the device can do {m.group(4)})",
                "A link on the way to the device (a slot, riser or PCIe switch) is slower than the device itself, "
                "so host↔device transfers are capped at about half (or less) of what the GPU supports.",
                msg("fix.pcie-link-degraded.kernel", address=m.group(3)),
                limited,
            )
        )
    downgraded = [ln for ln in grep(machine, _DOWNGRADED, 4) if "downgraded" in ln.lower()]
    if downgraded and not out:
        out.append(
            make(
                "pcie-link-downgraded-lspci",
                Severity.INFO,
                "lspci shows a PCIe link running below its capability ('downgraded')",
                "An idle GPU legitimately drops to Gen1 (2.5 GT/s) to save power, so this alone is not a fault. It "
                "is a problem only if it stays low while the GPU is busy.",
                msg("fix.pcie-link-downgraded-lspci"),
                downgraded + grep(machine, r"LnkCap:", 1),
                to_be_sure=msg("sure.pcie-link-downgraded-lspci"),
            )
        )
    return out


# ------------------------------------------------------------------------------------------- F16

_ECC_TEXT = re.compile(
    r"uncorrectable ECC error encountered|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable|"
    r"runtime error \(39\).*ECC",
    re.IGNORECASE,
)
_HW_XIDS = {48: "double-bit ECC error", 63: "page retirement / row remapping pending", 64: "page retirement or "
            "row remapping failed", 92: "high single-bit ECC rate", 94: "contained ECC error", 95: "uncontained ECC error"}


@rule("gpu-memory-errors", catalogue="F16")
def memory_errors(machine: Machine) -> list[Finding]:
    serious: list[str] = []
    pending: list[str] = []
    history: list[str] = []
    for g in machine.nvidia_gpus:
        e = g.ecc
        label = gpu_label(g)
        if e.volatile_uncorrected:
            serious.append(f"{label}: {e.volatile_uncorrected} uncorrectable ECC errors since the last driver load")
        if e.remapped_rows_failure:
            serious.append(f"{label}: row remapping failed")
        if e.retired_pages_pending or e.remapped_rows_pending:
            pending.append(f"{label}: memory repair pending (page retirement / row remap needs a GPU reset)")
        if e.aggregate_uncorrected and not e.volatile_uncorrected:
            history.append(f"{label}: {e.aggregate_uncorrected} uncorrectable ECC errors in its lifetime")
    for _, n, ln in xids(machine):
        if n in (48, 64, 95):
            serious.append(ln)
        elif n in (63, 92, 94):
            pending.append(ln)
    text = grep(machine, _ECC_TEXT, 3)
    serious += text
    if not serious and not pending:
        if history:
            return [
                make(
                    "gpu-memory-errors-in-the-past",
                    Severity.INFO,
                    "The GPU had uncorrectable memory (ECC) errors in the past",
                    "None since the driver was last loaded. Memory with errors is normally retired or remapped "
                    "automatically; keep an eye on the counts.",
                    msg("fix.gpu-memory-errors-in-the-past"),
                    history,
                )
            ]
        return []
    if serious:
        return [
            make(
                "gpu-memory-errors",
                Severity.ERROR,
                "The GPU reports uncorrectable memory (ECC) errors",
                "The GPU's memory produced errors its error correction could not fix. This is a hardware fault: "
                "results computed on this GPU cannot be trusted, and reinstalling software will not help.",
                msg("fix.gpu-memory-errors"),
                serious + pending,
            )
        ]
    return [
        make(
            "gpu-memory-repair-pending",
            Severity.WARNING,
            "The GPU has marked memory for repair; it takes effect after a GPU reset",
            "The driver found weak memory cells and scheduled them to be retired/remapped. Until the GPU is reset "
            "the repair is not active.",
            msg("fix.gpu-memory-repair-pending"),
            pending,
        )
    ]


# ------------------------------------------------------------------------------------------- F17

_F17_TEXT = re.compile(
    r"CUDA unknown error - this may be due to an incorrectly set up environment|CUDA_ERROR_UNKNOWN|"
    r"init failure: 999\b|cudaErrorUnknown",
    re.IGNORECASE,
)


@rule("cuda-broken-after-suspend", catalogue="F17")
def after_suspend(machine: Machine) -> list[Finding]:
    lines = grep(machine, _F17_TEXT, 3)
    structured = (machine.driver.cuinit_error or "").upper() == "CUDA_ERROR_UNKNOWN" and nvml_ok(machine)
    if structured:
        lines.append(f"cuInit: {machine.driver.cuinit_error} while NVML works")
    if not lines:
        return []
    resume = grep(machine, r"PM: suspend exit|PM: resume|suspend|standby|wake up|after sleep", 2)
    sure = None if (resume or structured) else msg("sure.cuda-broken-after-suspend")
    return [
        make(
            "cuda-broken-after-suspend",
            Severity.WARNING,
            "CUDA fails with 'unknown error' while the driver itself works — typical after suspend/resume",
            "After the machine sleeps, the NVIDIA unified-memory module (nvidia_uvm) can come back in a broken state: "
            "nvidia-smi still works but every CUDA program fails to start (error 999). PyTorch's hint about "
            "CUDA_VISIBLE_DEVICES is usually a red herring here.",
            msg("fix.cuda-broken-after-suspend"),
            lines + resume,
            to_be_sure=sure,
        )
    ]


# ------------------------------------------------------------------------------------------- F18

_F18_TEXT = re.compile(
    r"init failure: 3\b|CUDA_ERROR_NOT_INITIALIZED|cuInit\(0\) failed|cudaErrorInitializationError",
    re.IGNORECASE,
)


@rule("cuda-init-uvm-hmm", catalogue="F18")
def uvm_hmm(machine: Machine) -> list[Finding]:
    lines = grep(machine, _F18_TEXT, 3)
    structured = (machine.driver.cuinit_error or "").upper() == "CUDA_ERROR_NOT_INITIALIZED" and nvml_ok(machine)
    if structured:
        lines.append(f"cuInit: {machine.driver.cuinit_error} while NVML works")
    if not lines:
        return []
    m = search(machine, r"libcuda\.so\.([\d.]+)")
    dv = driver_version(machine) or (m.group(1) if m else None)
    return [
        make(
            "cuda-init-uvm-hmm",
            Severity.WARNING,
            "CUDA cannot initialise (error 3) although the driver is loaded",
            "cuInit returns CUDA_ERROR_NOT_INITIALIZED while nvidia-smi works. On recent kernels a driver bug in "
            "the unified-memory module's HMM support causes exactly this (reported with RTX 5090 / RTX 6000 "
            "Blackwell and on EL9/EL10 with the open modules)"
            + (f"; driver {dv}." if dv else "."),
            msg("fix.cuda-init-uvm-hmm"),
            lines,
            to_be_sure=None if structured else msg("sure.cuda-init-uvm-hmm"),
        )
    ]
