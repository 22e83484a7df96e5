#!/usr/bin/env python3
"""Which compute capabilities the GPUs of each list in NVIDIA's driver README (Appendix A) have.

    python readme_legacy_lists.py README.txt

README.txt: the plain-text README NVIDIA ships with a Linux driver (here 595.99.02, read out of Ubuntu's
nvidia-driver-595 package: usr/share/doc/nvidia-driver-595/README.txt.gz). Each "The NNN.xx driver supports the
following set of GPUs" list (and the current driver's own list) is read; every device PCI ID is classified by
gpusetup's chip rules (resources/pci.ids + resources/compat/gpu_chips.json), and the compute capabilities found
are printed per list. It reproduces the check recorded in driver_branches/legacy_branches and kernel_modules.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gpusetup import pcidb  # noqa: E402

ROW = re.compile(r"^ (\S.*?)\s{2,}([0-9A-F]{4})(?: [0-9A-F]{4} [0-9A-F]{4})?(?:\s|$)")


def lists(text: str) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^The (\S+) driver supports the following set of GPUs", line)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        if line.startswith("A1. CURRENT NVIDIA GPUS"):
            current = "current (the unified driver)"
            continue
        if re.match(r"^Appendix B\.", line):
            break
        r = ROW.match(line)
        if r and current:
            out.setdefault(current, []).append((r.group(1).strip(), r.group(2)))
    return out


def main() -> int:
    text = Path(sys.argv[1]).read_text(encoding="utf-8", errors="replace")
    start = text.index("A1. CURRENT NVIDIA GPUS")
    for name, gpus in lists(text[start:]).items():
        ccs: Counter[str] = Counter()
        examples: dict[str, str] = {}
        for product, dev in gpus:
            cls = pcidb.classify_pci("10de", dev.lower())
            chip = (pcidb.lookup("10de", dev.lower())[1] or "").split(" ")[0]
            if cls is None:
                cc = "unknown"
            elif cls.compute_capability is None:  # pre-Kepler: named by chip family (pci.ids codename)
                cc = "no CUDA, " + (re.match(r"[A-Z]+\d?", chip).group(0) if re.match(r"[A-Z]+\d?", chip) else "?")
            else:
                cc = str(cls.compute_capability)
            ccs[cc] += 1
            examples.setdefault(cc, f"{product} ({dev})")
        print(f"{name}: {len(gpus)} products; compute capabilities: "
              + ", ".join(f"{cc} x{n} (e.g. {examples[cc]})" for cc, n in sorted(ccs.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
