"""How long and how much memory does `gpusetup analyze` need for a 19 MB input (issue 16: ≤ 5 s, ≤ 300 MB)?

Builds a 19 MB file from each fixture family (the real recorded files, repeated) and a zip bomb (a bundle
whose manifest lists a 1 GiB entry), runs `gpusetup analyze` on each in a fresh interpreter and prints CPU
seconds and peak resident memory (VmHWM, Linux).

    .venv/bin/python benchmarks/analyze_large_inputs.py

Exit code 0 when every input stays within 5 s CPU and 300 MB, 1 otherwise.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SIZE = 19 * 1024 * 1024
CPU_LIMIT, MEM_LIMIT_MB = 5.0, 300

_CODE = ("import re, sys, time\nfrom gpusetup.cli import main\nt = time.process_time()\n"
         "rc = main(['analyze', '--json', '-o', sys.argv[2], sys.argv[1]])\n"
         "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
         "print('MEASURED', time.process_time() - t, hwm, rc, file=sys.stderr)\n")


def measure(path: Path, out: Path) -> tuple[float, float]:
    p = subprocess.run([sys.executable, "-c", _CODE, str(path), str(out)], capture_output=True, text=True,
                       timeout=600)
    cpu, hwm, _rc = p.stderr.split("MEASURED")[1].split()[:3]
    return float(cpu), int(hwm) / 1024


def bomb(path: Path) -> None:
    digest = hashlib.sha256()
    chunk = b"\0" * (4 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        info = zipfile.ZipInfo("logs/dmesg.txt")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as fh:
            for _ in range(256):
                fh.write(chunk)
                digest.update(chunk)
        zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "files": [
            {"path": "logs/dmesg.txt", "sha256": digest.hexdigest()}]}))


def main() -> int:
    worst_ok = True
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        inputs = []
        for fam in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
            blob = b"\n".join(f.read_bytes() for f in sorted(fam.rglob("*")) if f.is_file())
            if blob:
                path = t / f"{fam.name}.txt"
                path.write_bytes((blob * (SIZE // len(blob) + 1))[:SIZE])
                inputs.append(path)
        b = t / "bomb.zip"
        bomb(b)
        inputs.append(b)
        for path in inputs:
            cpu, mb = measure(path, t / "out.json")
            ok = cpu <= CPU_LIMIT and mb <= MEM_LIMIT_MB
            worst_ok &= ok
            print(f"{path.name:28s} {path.stat().st_size / 2**20:6.1f} MB   {cpu:5.2f} s CPU   {mb:6.0f} MB peak"
                  f"{'' if ok else '   OVER'}")
    return 0 if worst_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
