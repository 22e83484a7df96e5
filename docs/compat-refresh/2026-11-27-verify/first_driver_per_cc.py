#!/usr/bin/env python3
"""The first Linux driver that lists a GPU of each compute capability, from NVIDIA's driver changelog.

    python first_driver_per_cc.py NVIDIA_Changelog README.txt

NVIDIA_Changelog and README.txt: the files NVIDIA ships with a Linux driver (here 595.99.02, read out of Ubuntu's
nvidia-driver-595 package: usr/share/doc/nvidia-driver-595/NVIDIA_Changelog.gz and README.txt.gz). Every
"Added support for the following GPU(s)" entry of the changelog is matched by product name to the README's
Appendix A (product → device PCI ID), the PCI ID classified by gpusetup's chip rules (resources/pci.ids +
resources/compat/gpu_chips.json), and the lowest driver version is printed per compute capability with the
products it added. It reproduces driver_branches/architecture_min_driver's Linux column.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gpusetup import pcidb  # noqa: E402
from gpusetup.versions import version_key  # noqa: E402

ROW = re.compile(r"^ (\S.*?)\s{2,}([0-9A-F]{4})(?: [0-9A-F]{4} [0-9A-F]{4})?(?:\s|$)")


def readme_products(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in text[text.index("A1. CURRENT NVIDIA GPUS"):].splitlines():
        if line.startswith("Appendix B."):
            break
        m = ROW.match(line)
        if m:
            out.setdefault(_norm(m.group(1)), set()).add(m.group(2).lower())
    return out


def _norm(name: str) -> str:
    return re.sub(r"^nvidia ", "", re.sub(r"\s+", " ", name.strip().lower()))


def added(changelog: str) -> list[tuple[str, str]]:
    """(driver version, product) for every GPU the changelog says support was added for."""
    out, version, in_list = [], None, False
    for line in changelog.splitlines():
        m = re.match(r"^\d{4}-\d\d-\d\d version (\S+)", line)
        if m:
            version, in_list = m.group(1), False
            continue
        if re.search(r"Added support for the following GPUs?:", line):
            in_list = True
            continue
        if in_list:
            item = re.match(r"^\s+\*\s+(.+?)\s*$", line)
            if item and line.startswith("        "):
                if version:
                    out.append((version, item.group(1)))
            elif line.strip() and not line.startswith("        "):
                in_list = False
    return out


def main() -> int:
    changelog = Path(sys.argv[1]).read_text(encoding="utf-8", errors="replace")
    products = readme_products(Path(sys.argv[2]).read_text(encoding="utf-8", errors="replace"))
    first: dict[str, tuple[str, list[str]]] = {}
    unmatched = 0
    for version, product in added(changelog):
        ids = products.get(_norm(product))
        if not ids:
            unmatched += 1
            continue
        ccs = {str(c.compute_capability) for c in (pcidb.classify_pci("10de", i) for i in ids)
               if c is not None and c.compute_capability is not None}
        for cc in ccs:
            have = first.get(cc)
            if have is None or version_key(version) < version_key(have[0]):
                first[cc] = (version, [product])
            elif version == have[0]:
                have[1].append(product)
    for cc in sorted(first, key=version_key):
        v, names = first[cc]
        print(f"CC {cc}: first in {v} ({', '.join(sorted(set(names)))})")
    print(f"({unmatched} changelog entries name a product the README lists under another name or no longer lists)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
