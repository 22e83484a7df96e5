"""Named checks for the data catalogue (``resources/diagnostics/*.json`` entries name them in ``check``).

A check decides what a regular expression cannot: it compares the versions or sizes a message carries, or
reads live facts (compute mode, MIG mode, PRIME profile). It returns the values the entry's texts use, plus
optional ``evidence`` lines, or None when the entry does not apply after all. Pure; never raises on odd input.
"""

from __future__ import annotations

import re
from typing import Any

from gpusetup.model import Machine, Severity
from gpusetup.rules._util import joined_text
from gpusetup.rules.catalogue.data import check, entries
from gpusetup.versions import Version

_UNITS = {"b": 1 / 2**20, "bytes": 1 / 2**20, "kib": 1 / 1024, "kb": 1 / 1024, "mib": 1.0, "mb": 1.0, "gib": 1024.0, "gb": 1024.0,
          "tib": 1024.0**2}


def _mib(num: str | None, unit: str | None) -> float | None:
    try:
        return float(num or "") * _UNITS[(unit or "").lower()]
    except (ValueError, KeyError):
        return None


def _gib(mib: float) -> str:
    return f"{mib / 1024:.2f} GiB"


def _register() -> None:
    # ------------------------------------------------------------------------------------------ F36

    @check("memory-held-by-program")
    def memory_held_by_program(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """The out-of-memory message shows the failing program itself filled the card (the F36 check's opposite)."""
        if m is None or memory_held_elsewhere(machine, m) is not None:
            return None
        sizes = _accounting(m.string)
        if sizes is None:
            return None
        total, free, mine = sizes
        return {"total": _gib(total), "free": _gib(free), "mine": _gib(mine),
                "evidence": [f"this program holds {_gib(mine)} of {_gib(total)}; {_gib(free)} is free"]}

    @check("memory-held-elsewhere")
    def memory_held_elsewhere(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """PyTorch's out-of-memory message says how much this process holds; the rest of the card is elsewhere.

        Old wording: "(GPU 0; T total capacity; A already allocated; F free; R reserved in total by PyTorch)";
        new: "GPU 0 has a total capacity of T of which F is free. Process P has X memory in use. Including
        non-PyTorch memory, this process has Y memory in use". Only when more than half of the card (and
        over 1 GiB) is neither free nor held by the failing process is another process the cause.
        """
        if m is None:
            return None
        sizes = _accounting(m.string)
        if sizes is None:
            return None
        total, free, mine = sizes
        line = m.string
        elsewhere = total - free - mine
        if elsewhere < 1024 or elsewhere < total / 2:
            return None  # a genuine out-of-memory of this program: smaller batch, not a setup fault
        others = re.findall(r"Process (\d+) has ([\d.]+ [KMGT]i?B) memory in use", line)
        return {
            "total": _gib(total), "free": _gib(free), "mine": _gib(mine), "elsewhere": _gib(elsewhere),
            "evidence": [f"{_gib(elsewhere)} of {_gib(total)} is held outside this program "
                         f"(it holds {_gib(mine)}, {_gib(free)} is free)"]
            + [f"process {pid} holds {size}" for pid, size in others[:3]]
            # what the driver lists now, when diagnose could ask it: who holds the card
            + [f"GPU {g.index}: pid {p.pid} {p.name or '(name not visible)'} holds {p.used_mib} MiB now"
               for g in machine.nvidia_gpus for p in g.process_list[:3] if p.used_mib],
        }

    def _accounting(line: str) -> tuple[float, float, float] | None:
        """(total, free, held by the failing program) in MiB from PyTorch's message, None when incomplete."""
        total = _size(line, r"(?:([\d.]+) ([KMGT]i?B) total capacity|total capaci?ty of ([\d.]+) ([KMGT]i?B))")
        free = _size(line, r"(?:([\d.]+) ([KMGT]i?B) free\b|of which ([\d.]+) ([KMGT]i?B) is free)")
        mine = _size(line, r"(?:([\d.]+) ([KMGT]i?B) reserved in total by PyTorch|this process has ([\d.]+) "
                           r"([KMGT]i?B|bytes) memory in use)")
        if mine is None:  # older wording: allocated + cached; newer without "this process": allocated + reserved
            parts = [_size(line, r"([\d.]+) ([KMGT]i?B|bytes) already allocated"),
                     _size(line, r"([\d.]+) ([KMGT]i?B|bytes) cached"),
                     _size(line, r"([\d.]+) ([KMGT]i?B|bytes) is allocated by PyTorch"),
                     _size(line, r"([\d.]+) ([KMGT]i?B|bytes) is reserved by PyTorch but unallocated")]
            known = [p for p in parts if p is not None]
            mine = sum(known) if known else None
        if total is None or free is None or mine is None or total <= 0:
            return None
        return total, free, mine

    def _size(line: str, pattern: str) -> float | None:
        s = re.search(pattern, line, re.IGNORECASE)
        if not s:
            return None
        groups = [g for g in s.groups() if g is not None]
        return _mib(groups[0], groups[1]) if len(groups) >= 2 else None

    # ------------------------------------------------------------------------------------------ F37

    @check("exclusive-compute-mode", facts=True)
    def exclusive_mode(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        modes = [(g, g.compute_mode) for g in machine.nvidia_gpus
                 if (getattr(g, "compute_mode", None) or "").replace(" ", "_").lower()
                 in ("exclusive_process", "exclusive_thread", "prohibited", "e._process", "e._thread")]
        text = joined_text(machine)
        seen = re.findall(r"\b(E\. Process|E\. Thread|Exclusive_Process|Exclusive_Thread|Prohibited)\b", text)
        if m is None and not modes:
            return None
        if m is None:
            # live facts alone: exclusive mode is a choice on shared servers, worth knowing, not a fault
            return {"severity": Severity.INFO, "mode": modes[0][1],
                    "evidence": [f"GPU {g.index} ({g.name}): compute mode {mode}" for g, mode in modes]}
        mode = modes[0][1] if modes else (seen[0] if seen else None)
        ev = [f"GPU {g.index} ({g.name}): compute mode {md}" for g, md in modes]
        if seen and not modes:
            ev.append(f"nvidia-smi shows compute mode {seen[0]}")
        return {"mode": mode or "exclusive (to be confirmed)", "evidence": ev,
                "severity": Severity.ERROR if mode else Severity.WARNING}

    # ------------------------------------------------------------------------------------------ F39

    @check("amd-gfx-override")
    def gfx_override(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        text = joined_text(machine)
        gfx = (m.groupdict().get("gfx") if m else None) or _gfx_in(text) or next(
            (g.gfx_target for g in machine.gpus if g.gfx_target), None)
        data = next((e.data for e in entries() if e.check == "amd-gfx-override"), {})
        override = None
        if gfx:  # longest matching prefix: gfx1031 → "gfx103" → 10.3.0
            for prefix, value in sorted(data.get("override_for", {}).items(), key=lambda kv: -len(kv[0])):
                if gfx.lower().startswith(prefix):
                    override = value
                    break
        else:  # no target printed: the card's name ("rx 6600") says its family
            for rx, value in data.get("override_for_name", {}).items():
                named = re.search(rx, text, re.IGNORECASE)
                if named:
                    override, gfx = value, named.group(0)
                    break
        windows = bool(re.search(r"[A-Z]:\\Program Files\\AMD\\ROCm|HIP SDK|[A-Z]:\\\S*\\rocm\b", text))
        return {"gfx": gfx or "(not shown)", "override": override or "<the nearest supported gfx version>",
                "evidence": [f"GPU: {gfx}"] if gfx else [],
                **({"fix_key": "windows"} if windows else {})}

    def _gfx_in(text: str) -> str | None:
        g = re.search(r"\b(?:amdgcn-amd-amdhsa--|GPU arch : |Name:\s+)(gfx[0-9a-f]{3,4})\b", text, re.IGNORECASE)
        return g.group(1).lower() if g else None

    # ------------------------------------------------------------------------------------------ F40

    @check("nvcc-vs-driver-cuda")
    def nvcc_vs_driver(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        if m is None:
            return None
        nvcc = m.groupdict().get("nvcc")
        drv = machine.driver.cuda_driver_version
        if not drv:
            s = re.search(r"CUDA Version:\s*(\d+\.\d+)", joined_text(machine))
            drv = Version(s.group(1)) if s else None
        nt, dt = Version(nvcc).major_minor, drv.major_minor if drv else None
        if not nt or not dt or nt == dt:
            return None
        if nt > dt:
            return None  # a toolkit newer than the driver supports is a real problem (F01), not this note
        return {"driver_cuda": str(drv), "nvcc": nvcc,
                "evidence": [f"nvidia-smi \"CUDA Version\": {drv} (the newest CUDA the driver supports)",
                             f"nvcc: CUDA toolkit {nvcc} (the compiler installed)"]}


_register()


def _register_more() -> None:
    # ------------------------------------------------------------------------------------------ F44

    @check("macos-for-mps")
    def macos_for_mps(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """Fire only when the macOS in the evidence is older than what PyTorch's MPS needs (or unknown)."""
        if m is None:
            return None
        data = next((e.data for e in entries() if e.check == "macos-for-mps"), {})
        text = joined_text(machine)
        found = re.search(r"(?:OS: macOS |ProductVersion:\s*|macOS-|sw_vers.*?)(\d+\.\d+(?:\.\d+)?)", text)
        if not found:
            found = re.search(r"\bmacOS (\d+\.\d+(?:\.\d+)?)", text, re.IGNORECASE)
        macos = found.group(1) if found else None
        need = m.groupdict().get("need")
        current = data.get("current_minimum", "14.0")
        have = Version.parse(macos)
        if have is None and not need:
            return None  # "MPS not available" without a macOS version: too little to blame macOS
        if have is not None and have >= Version(current):
            return None  # new enough for every PyTorch release so far: the cause is something else
        note = ""
        if have is not None and need and have >= Version(need):
            note = (f"The message names {need}, but newer PyTorch releases need more than their message says "
                    f"(PyTorch 2.5 needs macOS {data.get('torch_2_5_minimum', '13.0')}, recent releases "
                    f"{current}).")
        return {"macos": macos or "version not shown", "note": note,
                "evidence": [f"macOS {macos}"] if macos else []}


_register_more()


def _register_live() -> None:
    """Checks on live facts (NVML / nvidia-smi, /etc/prime-discrete): they fire from ``diagnose`` alone."""
    def _label(g: Any) -> str:
        return f"GPU {g.index if g.index is not None else '?'} ({g.name or 'NVIDIA GPU'})"

    def _processes(g: Any) -> list[str]:
        return [f"{_label(g)}: pid {p.pid} {p.name or '(name not visible)'} holds "
                + (f"{p.used_mib} MiB" if p.used_mib is not None else "memory (amount not reported)")
                for p in g.process_list[:5]]

    # ------------------------------------------------------------------------------------------ F36

    @check("processes-hold-memory", facts=True)
    def processes_hold_memory(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """Running processes hold most (≥ half, ≥ 1 GiB) of a GPU's memory right now (NVML / nvidia-smi)."""
        for g in machine.nvidia_gpus:
            total = g.memory_total_mib or 0
            held = sum(p.used_mib or 0 for p in g.process_list)
            if total <= 0 or held < 1024 or held < total / 2:
                continue
            free = g.memory_free_mib
            nearly_full = free is not None and free < total / 10
            return {
                "index": g.index if g.index is not None else "?", "held": _gib(held), "total": _gib(total),
                "count": len(g.process_list), "free": _gib(free) if free is not None else "?",
                "severity": Severity.WARNING if nearly_full else Severity.INFO,
                "evidence": [f"{_label(g)}: running processes hold {held} MiB of {total} MiB"
                             + (f"; {free} MiB free" if free is not None else "")] + _processes(g),
            }
        return None

    # ------------------------------------------------------------------------------------------ F38

    @check("prime-profile", facts=True)
    def prime_profile(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """prime-select's profile read from /etc/prime-discrete: 'intel' blacklists the nvidia module."""
        live = machine.system.prime_profile
        if m is not None:  # the user's own words already show it; add the live profile when we read it
            return {"evidence": [f"/etc/prime-discrete: prime-select profile {live}"] if live == "intel" else []}
        if live != "intel" or not machine.nvidia_gpus:
            return None
        working = any(any(e.source in ("nvml", "nvidia-smi") and e.ok for e in g.evidence) for g in machine.nvidia_gpus)
        ev = [e.detail for e in machine.system.evidence if e.source == "/etc/prime-discrete" and e.detail]
        return {
            # still running: the blacklist takes effect at the next boot
            "severity": Severity.WARNING if working else Severity.ERROR,
            "evidence": (ev or ["/etc/prime-discrete: prime-select profile intel"])
            + [f"{_label(g)} is on the PCI bus" for g in machine.nvidia_gpus[:2]],
        }

    # ------------------------------------------------------------------------------------------ F47

    @check("mig-no-instances", facts=True)
    def mig_no_instances(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        # only sources that list MIG devices when there are some (NVML, `nvidia-smi -q` / `-q -x`): a pasted
        # table may simply have been cut before its "MIG devices" section
        def lists_mig(g: Any) -> bool:
            return any(e.ok and (e.source == "nvml" or e.detail in ("nvidia-smi -q -x", "nvidia-smi -q"))
                       for e in g.evidence)

        empty = [g for g in machine.nvidia_gpus if g.mig_mode == "Enabled" and not g.mig_devices and lists_mig(g)]
        ev = [f"{_label(g)}: MIG mode Enabled, no MIG devices" for g in empty]
        if m is not None:
            return {"evidence": ev}
        if not empty:
            return None
        return {"severity": Severity.WARNING, "evidence": ev}

    @check("mig-change-pending", facts=True)
    def mig_change_pending(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """MIG mode was switched but the GPU has not been reset yet: current ≠ pending."""
        for g in machine.nvidia_gpus:
            cur, pend = g.mig_mode, g.mig_mode_pending
            if cur in ("Enabled", "Disabled") and pend in ("Enabled", "Disabled") and cur != pend:
                return {"index": g.index if g.index is not None else "<index>", "current": cur, "pending": pend,
                        "evidence": [f"{_label(g)}: MIG mode current {cur}, pending {pend}"]}
        return None

    # ------------------------------------------------------------------------------------------ F51

    @check("persistence-off-datacenter", facts=True)
    def persistence_off(machine: Machine, m: re.Match[str] | None) -> dict[str, Any] | None:
        """A data-centre GPU on Linux with persistence mode off (nvidia-persistenced not running)."""
        off_any = [g for g in machine.nvidia_gpus if g.persistence_mode is False]
        if m is not None:  # the container toolkit timed out starting the driver: say what the live facts show
            return {"evidence": [f"{_label(g)}: persistence mode Disabled" for g in off_any]}
        if machine.system.os not in (None, "linux") or machine.system.wsl:
            return None
        data = next((e.data for e in entries() if e.check == "persistence-off-datacenter"), {})
        names = re.compile(data.get("datacenter_names", r"$^"), re.IGNORECASE)
        off = [g for g in off_any if names.search(g.name or "")]
        if not off:
            return None
        # seen on the machine, no failure yet: worth knowing, not a fault
        return {"severity": Severity.INFO, "evidence": [f"{_label(g)}: persistence mode Disabled" for g in off]}


_register_live()
