"""Small shared tables for the NVIDIA probes (NVML, nvidia-smi, fakes): pure data, no imports of note.

Kept apart from ``nvml.py``/``smi.py`` so that the text parsers (reused by ``gpusetup analyze`` on pasted
output) and the NVML facade agree on names without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

# Clock event ("throttle") reasons: NVML bit → the name nvidia-smi uses in its XML tags
# (``clocks_event_reason_<name>`` since R535, ``clocks_throttle_reason_<name>`` before). Bits from nvml.h
# (nvmlClocksEventReason*), as mirrored in nvidia-ml-py.
THROTTLE_REASON_BITS: dict[int, str] = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}
THROTTLE_NAME_BITS: dict[str, int] = {v: k for k, v in THROTTLE_REASON_BITS.items()}

# `nvidia-smi -q` text labels of the same reasons.
THROTTLE_TEXT_LABELS: dict[str, str] = {
    "idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clocks_setting",
}


def decode_throttle_reasons(mask: int | None) -> list[str]:
    """NVML bitmask → reason names, lowest bit first; unknown bits become ``unknown_0x...``."""
    if mask is None:
        return []
    names = []
    rest = int(mask)
    for bit, name in THROTTLE_REASON_BITS.items():
        if rest & bit:
            names.append(name)
            rest &= ~bit
    bit = 1
    while rest:
        if rest & bit:
            names.append(f"unknown_0x{bit:x}")
            rest &= ~bit
        bit <<= 1
    return names


def encode_throttle_reasons(names: list[str]) -> int:
    """Reason names → NVML bitmask (names we do not know are ignored)."""
    mask = 0
    for n in names:
        mask |= THROTTLE_NAME_BITS.get(n, 0)
    return mask


# NVML architecture codes (nvmlDeviceArchitecture_t, NVML_DEVICE_ARCH_* in nvidia-ml-py) → the names
# nvidia-smi prints as product_architecture.
ARCHITECTURES: dict[int, str] = {
    2: "Kepler",
    3: "Maxwell",
    4: "Pascal",
    5: "Volta",
    6: "Turing",
    7: "Ampere",
    8: "Ada Lovelace",
    9: "Hopper",
    10: "Blackwell",
    13: "Rubin",
}

# NVML driver model values (nvmlDriverModel_t): 0 WDDM, 1 WDM (shown by nvidia-smi as TCC), 2 MCDM.
DRIVER_MODELS: dict[int, str] = {0: "WDDM", 1: "TCC", 2: "MCDM"}
DRIVER_MODEL_CODES: dict[str, int] = {"WDDM": 0, "TCC": 1, "WDM": 1, "MCDM": 2}


def cuda_version_from_int(v: int | None) -> str | None:
    """12080 → "12.8", 11040 → "11.4", 13020 → "13.2" (the CUDA driver API / NVML encoding)."""
    if v is None or isinstance(v, bool):
        return None
    try:
        v = int(v)
    except (TypeError, ValueError):
        return None
    if v <= 0:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


@dataclass
class MigInfo:
    """One MIG device as NVML (or nvidia-smi) describes it."""

    index: int | None
    name: str | None = None  # "NVIDIA H100 80GB HBM3 MIG 3g.40gb" (NVML) or None (nvidia-smi XML)
    uuid: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    sm_count: int | None = None
    memory_total_mib: int | None = None


def describe_mig(m: MigInfo) -> str:
    """One line per MIG device, the same from NVML and nvidia-smi: ``"MIG 0: GI 2, CI 0, 60 SMs, 40448 MiB"``."""
    parts = []
    if m.name:
        parts.append(m.name)
    if m.gpu_instance_id is not None:
        parts.append(f"GI {m.gpu_instance_id}")
    if m.compute_instance_id is not None:
        parts.append(f"CI {m.compute_instance_id}")
    if m.sm_count is not None:
        parts.append(f"{m.sm_count} SMs")
    if m.memory_total_mib is not None:
        parts.append(f"{m.memory_total_mib} MiB")
    if m.uuid:
        parts.append(m.uuid)
    head = f"MIG {m.index}" if m.index is not None else "MIG"
    return f"{head}: {', '.join(parts)}" if parts else head
