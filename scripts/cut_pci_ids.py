#!/usr/bin/env python3
"""Cut the shipped ``resources/pci.ids`` subset from a full upstream ``pci.ids``.

Why a subset: gpusetup only names display devices, and the full file is 1.6 MB. We keep the header
(licence and version), every vendor line (so any vendor id gets a name), and only the device lines of
display-capable vendors: NVIDIA/AMD GPUs (not chipsets, audio, bridges, NVSwitches), Intel graphics, and
the virtual/BMC display adapters seen on servers and VMs. Subsystem lines and the class list are dropped.

Usage: python scripts/cut_pci_ids.py /path/to/full/pci.ids > resources/pci.ids
"""

from __future__ import annotations

import re
import sys

# Device names that are never a GPU, whatever the vendor.
_NOT_DISPLAY = re.compile(
    r"audio|usb|smbus|ethernet|\bide\b|sata|\blpc\b|\bisa\b|memory controller|bridge|pci[- ]?e? ?switch|"
    r"nvswitch|\bahci\b|raid|modem|firewire|\bdma\b|network|host controller|root port|root complex|"
    r"\bpmu\b|\bsmu\b|\bmci\b|co-?processor|serial ata|\bserial\b(?! number)|nvme|ufs|i2c|gpio|\bspi\b|uart|"
    r"thermal|sensor|watchdog|crypto|ipu\b|camera|\bnpu\b|vpu\b|management engine|\bheci\b|\bmei\b|"
    r"\bsram\b|\bcxl\b|northbridge|southbridge|\bdram\b|\bmemory\b|\bcpu\b|\bp2sb\b|"
    r"power management|\bscsi\b|timer|pic\b|\bapic\b|ioapic|xhci|ehci|ohci|uhci|\bhda\b|wireless|wifi|"
    r"wi-fi|bluetooth|\btrace hub\b|debug|\bgna\b|platform controller|\bish\b|integrated sensor",
    re.I,
)

# NVIDIA: GPU chip codenames (NV1x…GBxxx, Tegra GPUs) or a GPU product name in brackets.
_NVIDIA_GPU = re.compile(
    r"^(NV\d|G\d|GT\d|GF\d|GK\d|GM\d|GP\d|GV\d|TU\d|GA\d|AD\d|GH\d|GB\d|C\d\d|MCP\d+\w* \[GeForce|"
    r"nForce.*\[GeForce)|GeForce|Quadro|Tesla|TITAN|NVS|GRID|\bION\b|RTX|Graphics|\bGPU\b",
    re.I,
)
# AMD/ATI: almost everything under 1002 is a GPU except chipset/audio/bridge parts filtered above.
_AMD_GPU = re.compile(r".")
# Intel: graphics only (the 8086 section is mostly chipset functions).
_INTEL_GPU = re.compile(
    r"graphics|\bgpu\b|\bUHD\b|\bIris\b|\bArc\b|\bGMA\b|\bXe\b|\bDG[12]\b|Battlemage|Alchemist|"
    r"Flex \d|Data Center GPU|Ponte Vecchio|Larrabee|Xeon Phi|\bIGD\b|\bIGP\b|display|video",
    re.I,
)
_VIRTUAL_DISPLAY = re.compile(r"VGA|SVGA|graphic|GPU|render|display|video|\bG200|\bMGA\b|GD 54", re.I)

DISPLAY_VENDORS: dict[str, re.Pattern[str]] = {
    "10de": _NVIDIA_GPU,  # NVIDIA
    "1002": _AMD_GPU,  # AMD/ATI
    "8086": _INTEL_GPU,  # Intel
    "1af4": _VIRTUAL_DISPLAY,  # virtio GPU
    "1b36": _VIRTUAL_DISPLAY,  # QEMU QXL
    "15ad": _VIRTUAL_DISPLAY,  # VMware SVGA
    "1414": _VIRTUAL_DISPLAY,  # Hyper-V VGA, Basic Render Driver
    "1a03": _VIRTUAL_DISPLAY,  # ASPEED BMC graphics
    "102b": _VIRTUAL_DISPLAY,  # Matrox G200 (server BMC graphics)
    "1013": _VIRTUAL_DISPLAY,  # Cirrus (QEMU cirrus-vga)
    "80ee": _VIRTUAL_DISPLAY,  # VirtualBox Graphics Adapter
    "1234": _VIRTUAL_DISPLAY,  # QEMU/Bochs VGA (when present upstream)
}

_VENDOR = re.compile(r"^([0-9a-f]{4})  (.*)$")
_DEVICE = re.compile(r"^\t([0-9a-f]{4})  (.*)$")


def cut(lines: list[str]) -> list[str]:
    out: list[str] = []
    header = True
    vendor: str | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        if header:
            if _VENDOR.match(line):
                header = False
                out.append("#")
                out.append(
                    "#\tgpusetup subset: cut by scripts/cut_pci_ids.py from the full file above (same version)."
                )
                out.append(
                    "#\tKept: every vendor line; device lines only of display-capable vendors (NVIDIA 10de"
                )
                out.append(
                    "#\tand AMD 1002 GPUs without chipset/audio/bridge parts, Intel 8086 graphics, virtual and"
                )
                out.append(
                    "#\tBMC display adapters 1af4 1b36 15ad 1414 1a03 102b 1013 80ee). Subsystem lines, comments"
                )
                out.append("#\tinside sections and the device class list were dropped.")
                out.append("")
            else:
                out.append(line)
                continue
        if line.startswith("C ") or line.startswith("# List of known device classes"):
            break
        m = _VENDOR.match(line)
        if m:
            vendor = m.group(1)
            out.append(line)
            continue
        m = _DEVICE.match(line)
        if m and vendor in DISPLAY_VENDORS:
            name = m.group(2)
            if DISPLAY_VENDORS[vendor].search(name) and not _NOT_DISPLAY.search(name):
                out.append(line)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as fh:
        lines = fh.readlines()
    sys.stdout.write("\n".join(cut(lines)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
