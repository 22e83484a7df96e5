"""The DT_NEEDED names of a 64-bit little-endian ELF file, read with the standard library alone (no readelf).

Used by packaging/gpusetup.spec (to drop libraries nothing in the app needs any more) and by
tests/frozen/test_frozen_app.py (every library a kept Qt plugin needs is still there).
"""

import struct
from pathlib import Path


def needed(path: Path) -> list[str]:
    """Libraries ``path`` names as needed; [] for anything that is not a 64-bit ELF file."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for _name, kind, _flags, _addr, off, size, link, _info, _align, entsize in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strtab_off = sections[link][4]
        for pos in range(off, off + size, entsize or 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 0:  # DT_NULL
                break
            if tag == 1:  # DT_NEEDED
                start = strtab_off + val
                out.append(data[start:data.index(b"\0", start)].decode())
    return out
