"""AMD GPUs: VRAM, VBIOS, link and gfx target from the amdgpu driver's sysfs and the KFD topology (no ROCm
user space needed), then ``rocm-smi --json`` and ``rocminfo`` when ROCm is installed.

The gfx target (gfx1100, gfx942…) decides which ROCm builds of PyTorch run (compat.md §9).
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from gpusetup.model import Evidence
from gpusetup.probe import find_or_add_gpu, normalize_pci_address
from gpusetup.probe.platform.linux import parse_link_speed, parse_uevent, read_first_line, read_text

if TYPE_CHECKING:
    from gpusetup.model import Gpu, Machine
    from gpusetup.probe import ProbeContext

AMD = "1002"


def probe(ctx: ProbeContext, machine: Machine) -> None:
    if ctx.os_name != "linux":
        return
    drm_cards(ctx, machine)
    kfd_targets(ctx, machine)
    amd = [g for g in machine.gpus if g.vendor == "amd"]
    if ctx.runner.which("rocm-smi"):
        res = ctx.runner.run(
            ["rocm-smi", "--showproductname", "--showbus", "--showmeminfo", "vram", "--json"],
            timeout=min(ctx.timeout, 5.0),
        )
        apply_rocm_smi(machine, res.stdout)
    if amd and any(g.gfx_target is None for g in amd) and ctx.runner.which("rocminfo"):
        res = ctx.runner.run(["rocminfo"], timeout=min(ctx.timeout, 5.0))
        agents = parse_rocminfo(res.stdout)
        gpus = [a for a in agents if a.get("type") == "GPU"]
        todo = [g for g in amd if g.gfx_target is None]
        if len(gpus) == len(todo):  # rocminfo has no bus id: match only when the counts agree
            for g, a in zip(todo, gpus, strict=True):
                g.gfx_target = a.get("gfx")
                g.evidence.append(
                    Evidence("rocminfo", detail=f"{a.get('gfx')} {a.get('marketing', '')}".strip())
                )


# ---------------------------------------------------------------------------------------- sysfs


def drm_cards(ctx: ProbeContext, machine: Machine) -> None:
    """Every ``/sys/class/drm/cardN`` whose PCI vendor is AMD: VRAM, VBIOS, product name, link."""
    base = ctx.path("/sys/class/drm")
    try:
        cards = sorted(n for n in os.listdir(base) if re.fullmatch(r"card\d+", n))
    except OSError:
        return
    for card in cards:
        dev = f"/sys/class/drm/{card}/device"
        uevent = parse_uevent(read_text(ctx, f"{dev}/uevent", 4096) or "")
        vendor = (read_first_line(ctx, f"{dev}/vendor") or "").lower().removeprefix("0x")
        if not vendor and ":" in uevent.get("PCI_ID", ""):
            vendor = uevent["PCI_ID"].split(":")[0].lower()
        if vendor != AMD:
            continue
        slot = uevent.get("PCI_SLOT_NAME")
        if not slot:
            try:
                slot = os.path.basename(os.path.realpath(ctx.path(dev)))
            except OSError:
                slot = None
        gpu = find_or_add_gpu(machine, "amd", normalize_pci_address(slot))
        total = _int(read_first_line(ctx, f"{dev}/mem_info_vram_total"))
        used = _int(read_first_line(ctx, f"{dev}/mem_info_vram_used"))
        if total:
            gpu.memory_total_mib = gpu.memory_total_mib or total // 2**20
            if used is not None:
                gpu.memory_used_mib = used // 2**20
                gpu.memory_free_mib = (total - used) // 2**20
        gpu.vbios = gpu.vbios or read_first_line(ctx, f"{dev}/vbios_version")
        product = read_first_line(ctx, f"{dev}/product_name")
        if product and not gpu.name:
            gpu.name = product
        if gpu.pcie.gen_current is None:
            gpu.pcie.gen_current = parse_link_speed(read_first_line(ctx, f"{dev}/current_link_speed"))
            gpu.pcie.gen_device_max = parse_link_speed(read_first_line(ctx, f"{dev}/max_link_speed"))
            gpu.pcie.width_current = _int(read_first_line(ctx, f"{dev}/current_link_width"))
            gpu.pcie.width_max = _int(read_first_line(ctx, f"{dev}/max_link_width"))
        replays = _int(read_first_line(ctx, f"{dev}/pcie_replay_count"))
        if replays is not None:
            gpu.pcie.replay_counter = replays
        gpu.pci.kernel_driver = gpu.pci.kernel_driver or uevent.get("DRIVER")
        gpu.evidence.append(
            Evidence(f"/sys/class/drm/{card}/device (amdgpu)", detail=f"VRAM {gpu.memory_total_mib} MiB")
        )


def gfx_name(target_version: int) -> str | None:
    """KFD ``gfx_target_version`` → gfx name: 110000 → gfx1100, 90010 → gfx90a, 90402 → gfx942."""
    if target_version <= 0:
        return None
    major, minor, step = target_version // 10000, (target_version // 100) % 100, target_version % 100
    if minor > 15 or step > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def parse_kfd_properties(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"-?\d+", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


def kfd_targets(ctx: ProbeContext, machine: Machine) -> None:
    """gfx target per GPU from ``/sys/class/kfd/kfd/topology/nodes/*/properties`` (amdgpu driver only)."""
    base = ctx.path("/sys/class/kfd/kfd/topology/nodes")
    try:
        nodes = sorted(os.listdir(base), key=lambda n: int(n) if n.isdigit() else 1 << 30)
    except OSError:
        return
    found: list[tuple[str | None, str, dict[str, int]]] = []
    for node in nodes:
        props = parse_kfd_properties(
            read_text(ctx, f"/sys/class/kfd/kfd/topology/nodes/{node}/properties") or ""
        )
        gfx = gfx_name(props.get("gfx_target_version", 0))
        if gfx is None:
            continue  # a CPU node
        loc = props.get("location_id")
        addr = None
        if loc is not None:
            bus, devfn = loc >> 8, loc & 0xFF
            addr = f"{props.get('domain', 0):04x}:{bus:02x}:{devfn >> 3:02x}.{devfn & 7:x}"
        found.append((addr, gfx, props))
    amd = [g for g in machine.gpus if g.vendor == "amd"]
    for addr, gfx, props in found:
        gpu = next((g for g in amd if addr and normalize_pci_address(g.pci.address) == addr), None)
        if gpu is None and len(found) == 1 and len(amd) == 1:
            gpu = amd[0]
        if gpu is None:
            gpu = find_or_add_gpu(machine, "amd", addr)
            amd.append(gpu)
        gpu.gfx_target = gpu.gfx_target or gfx
        simds = props.get("simd_count")
        gpu.evidence.append(Evidence("KFD topology", detail=f"{gfx}" + (f", {simds} SIMDs" if simds else "")))


# ------------------------------------------------------------------------------------ ROCm tools


def apply_rocm_smi(machine: Machine, text: str) -> None:
    """``rocm-smi … --json``: card → bus, VRAM, gfx version, series name."""
    try:
        data = json.loads(text) if text and text.strip() else None
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    for key, card in data.items():
        if not (isinstance(card, dict) and key.startswith("card")):
            continue
        bus = card.get("PCI Bus")
        gpu = find_or_add_gpu(machine, "amd", bus if isinstance(bus, str) else None)
        _apply_card(gpu, card)


def _apply_card(gpu: Gpu, card: dict[str, Any]) -> None:
    gfx = card.get("GFX Version")
    if isinstance(gfx, str) and gfx.startswith("gfx"):
        gpu.gfx_target = gpu.gfx_target or gfx
    total = _int(card.get("VRAM Total Memory (B)"))
    used = _int(card.get("VRAM Total Used Memory (B)"))
    if total:
        gpu.memory_total_mib = gpu.memory_total_mib or total // 2**20
        if used is not None:
            gpu.memory_used_mib = used // 2**20
            gpu.memory_free_mib = (total - used) // 2**20
    series = card.get("Card Series") or card.get("Device Name")
    if isinstance(series, str) and series.strip() and not series.startswith("0x") and not gpu.name:
        m = re.search(r"\[([^\]]+)\]", series)
        gpu.name = f"AMD {m.group(1)}" if m else series.strip()
    vbios = card.get("VBIOS version")
    if isinstance(vbios, str) and vbios and not gpu.vbios:
        gpu.vbios = vbios
    dev = card.get("Device ID") or card.get("Card Model")
    if isinstance(dev, str) and re.fullmatch(r"0x[0-9a-fA-F]{4}", dev) and gpu.pci.device_id is None:
        gpu.pci.device_id = dev[2:].lower()
        gpu.pci.vendor_id = gpu.pci.vendor_id or AMD
    gpu.evidence.append(Evidence("rocm-smi --json", detail=f"{gpu.gfx_target or '?'}"))


def parse_rocminfo(text: str) -> list[dict[str, str]]:
    """Agents of ``rocminfo``: name (gfx target for GPUs), marketing name, device type."""
    agents: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    for line in (text or "").splitlines():
        s = line.strip()
        if re.match(r"^\*+$", s):
            continue
        if re.match(r"^Agent \d+$", s):
            cur = {}
            agents.append(cur)
            continue
        key, sep, value = s.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        indent = len(line) - len(line.lstrip())
        # An agent-level "Name:" after a finished agent starts the next one, even when the header was
        # lost (abridged outputs write "[...]" in its place).
        if key == "Name" and indent <= 2 and (cur is None or "name" in cur):
            cur = {}
            agents.append(cur)
        if cur is None:
            continue
        if key == "Name" and "name" not in cur:
            cur["name"] = value
            if value.startswith("gfx"):
                cur["gfx"] = value
        elif key == "Marketing Name" and "marketing" not in cur:
            cur["marketing"] = value
        elif key == "Device Type" and "type" not in cur:
            cur["type"] = value
    return agents


def _int(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None
