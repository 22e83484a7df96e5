"""Soak: 1,000 mixed hostile inputs through `gpusetup analyze` in one run (issue 25).

Every input is something an attacker or an unlucky user sends: JSON nested 200,000 deep, a bundle whose
manifest unpacks to 1 GiB, a zip bomb entry, a gzip bomb, a 2 MB line, binary junk, NUL-padded and
escape-laden logs, UTF-16 and Latin-1 text, recorded fixtures cut short or with flipped bytes, reports with a
newer schema_version or wrong types, bundles with an empty manifest, a tampered checksum or cut in half, an
XML entity bomb, 200,000 kernel-log lines, empty files. The recorded fixtures (tests/fixtures) are the base of
the mutated ones, so the parsers see real GPU output going wrong, not invented text.

The run passes when `gpusetup analyze --json` over all of them (one process, `-o FILE`):
* keeps its peak memory (VmHWM) at or under 200 MB,
* prints no traceback and exits 0-3 (3: some inputs are unreadable, which they are),
* accounts for every input in its JSON (read, warned about, or refused with a reason).

Usage (from the repository root):
    .venv/bin/python benchmarks/analyze_soak.py [--inputs 1000] [--seed 25] [--keep DIR]

Exit code 0 when the run holds every bound, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MEM_LIMIT_MB = 200

_CODE = ("import re, sys, time\nfrom gpusetup.cli import main\nt = time.process_time()\n"
         "rc = main(['analyze', '--json', '-o', sys.argv[1], *sys.argv[2:]])\n"
         "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
         "print('MEASURED', time.process_time() - t, hwm, rc, file=sys.stderr)\n")


def _fixture_texts() -> list[bytes]:
    out = []
    for family in ("dmesg", "nvidia-smi-text", "nvidia-smi-xml", "collect-env", "recorded-issues", "lspci",
                   "linux-packages", "device-query", "proc-driver"):
        for p in sorted((FIXTURES / family).rglob("*")):
            if p.is_file() and p.stat().st_size < 2 << 20:
                out.append(p.read_bytes())
    return out


class Maker:
    """Writes hostile inputs; the expensive ones (bombs) are built once and copied."""

    def __init__(self, folder: Path, rng: random.Random) -> None:
        self.folder, self.rng = folder, rng
        self.fixtures = _fixture_texts()
        self._cache: dict[str, bytes] = {}

    def once(self, key: str, build: Callable[[], bytes]) -> bytes:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def fixture(self) -> bytes:
        return self.rng.choice(self.fixtures)

    # ---- the kinds
    def deep_json(self) -> bytes:
        return b"[" * 200_000

    def deep_object(self) -> bytes:
        return b'{"machine": ' * 100_000

    def manifest_bomb(self) -> bytes:
        def build() -> bytes:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
                with zf.open("manifest.json", "w", force_zip64=True) as fh:
                    fh.write(b'{"kind": "gpusetup-bundle", "files": []')
                    for _ in range(1024):
                        fh.write(b" " * (1 << 20))
                    fh.write(b"}")
                zf.writestr("raw/kernel-log-gpu.txt", self.fixtures[0])
            return buf.getvalue()
        return self.once("manifest_bomb", build)

    def entry_bomb(self) -> bytes:
        def build() -> bytes:
            buf, digest, chunk = io.BytesIO(), hashlib.sha256(), b"\0" * (4 << 20)
            with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
                with zf.open("logs/dmesg.txt", "w", force_zip64=True) as fh:
                    for _ in range(256):
                        fh.write(chunk)
                        digest.update(chunk)
                zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "files": [
                    {"path": "logs/dmesg.txt", "sha256": digest.hexdigest()}]}))
            return buf.getvalue()
        return self.once("entry_bomb", build)

    def zip_many(self) -> bytes:
        def build() -> bytes:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
                for i in range(500):
                    zf.writestr(f"part-{i:03d}.log", f"NVRM: line {i}\n")
                with zf.open("huge.log", "w", force_zip64=True) as fh:
                    for _ in range(30):
                        fh.write(b"\0" * (1 << 20))
            return buf.getvalue()
        return self.once("zip_many", build)

    def gzip_bomb(self) -> bytes:
        return self.once("gzip_bomb", lambda: gzip.compress(b"\0" * (200 << 20), compresslevel=9))

    def long_line(self) -> bytes:
        return self.fixture() + b"\n" + b"A" * (2 << 20) + b"\n"

    def binary(self) -> bytes:
        return self.rng.randbytes(64 * 1024)

    def nul_padded(self) -> bytes:
        text = self.fixture()
        cut = self.rng.randrange(len(text) + 1)
        return text[:cut] + b"\0" * self.rng.randrange(1, 1 << 18) + text[cut:]

    def escapes(self) -> bytes:
        lines = self.fixture().split(b"\n")
        bad = [b"\x1b]0;owned\x07", b"\x1b[2J", b"\x1b[31mAll GPUs healthy\x1b[0m", b"\r", b"\x08" * 10, b"\x9b2J"]
        return b"\n".join(ln + self.rng.choice(bad) for ln in lines)

    def utf16(self) -> bytes:
        return self.fixture().decode("utf-8", "replace").encode("utf-16")

    def latin1(self) -> bytes:
        return self.fixture() + bytes(range(128, 256)) * 50

    def truncated(self) -> bytes:
        text = self.fixture()
        return text[: self.rng.randrange(1, len(text) + 1)]

    def flipped(self) -> bytes:
        data = bytearray(self.fixture())
        for _ in range(max(1, len(data) // 200)):
            data[self.rng.randrange(len(data))] = self.rng.randrange(256)
        return bytes(data)

    def report(self, version: str = "99.0", wreck: bool = False) -> bytes:
        doc = json.loads(self.once("report", self._report))
        doc["schema_version"] = version
        if wreck:
            doc["machine"]["gpus"] = "all of them"
            doc["machine"]["driver"] = {"version": "9" * 5000, "versions": [float("nan")]}
        return json.dumps(doc).encode()

    def _report(self) -> bytes:
        demo = sorted((ROOT / "resources" / "demo").glob("*.json"))[0]
        return demo.read_bytes()

    def report_v99(self) -> bytes:
        return self.report("99.0")

    def report_wrong_types(self) -> bytes:
        return self.report("1.0", wreck=True)

    def bundle(self, files: dict[str, bytes], listed: dict[str, bytes] | None = None, tamper: bool = False) -> bytes:
        listed = files if listed is None else listed
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            entries = [{"path": n, "sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in listed.items()]
            zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "bundle_version": "1", "files": entries}))
            for n, d in files.items():
                zf.writestr(n, (d + b"tampered") if tamper else d)
        return buf.getvalue()

    def bundle_unlisted(self) -> bytes:
        return self.bundle({"raw/kernel-log-gpu.txt": self.fixture()}, listed={})

    def bundle_tampered(self) -> bytes:
        return self.bundle({"raw/kernel-log-gpu.txt": self.fixture()}, tamper=True)

    def bundle_cut(self) -> bytes:
        whole = self.bundle({"report.json": self.report("1.0"), "raw/kernel-log-gpu.txt": self.fixture()})
        return whole[: len(whole) // 2]

    def empty(self) -> bytes:
        return self.rng.choice([b"", b"   \n\t\n", b"\0" * 100])

    def xml_laughs(self) -> bytes:
        ent = ['<!ENTITY l0 "lollollollollollollollollollol">'] + \
              [f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10)]
        return (f'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [\n{chr(10).join(ent)}\n]>\n'
                "<nvidia_smi_log><driver_version>&l9;</driver_version><gpu><product_name>&l9;</product_name></gpu>"
                "</nvidia_smi_log>\n").encode()

    def many_lines(self) -> bytes:
        line = b"[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1)\n"
        return line * 200_000

    def huge_numbers(self) -> bytes:
        return b'{"machine": {"system": {"os": "linux"}, "gpus": [{"index": ' + b"9" * 100_000 + b"}]}}"


KINDS = ["deep_json", "deep_object", "manifest_bomb", "entry_bomb", "zip_many", "gzip_bomb", "long_line", "binary",
         "nul_padded", "escapes", "utf16", "latin1", "truncated", "flipped", "report_v99", "report_wrong_types",
         "bundle_unlisted", "bundle_tampered", "bundle_cut", "empty", "xml_laughs", "many_lines", "huge_numbers"]
SUFFIX = {"manifest_bomb": ".zip", "entry_bomb": ".zip", "zip_many": ".zip", "gzip_bomb": ".log.gz",
          "bundle_unlisted": ".zip", "bundle_tampered": ".zip", "bundle_cut": ".zip", "report_v99": ".json",
          "report_wrong_types": ".json", "deep_json": ".json", "deep_object": ".json", "xml_laughs": ".xml",
          "huge_numbers": ".json"}


def make_inputs(folder: Path, count: int, seed: int) -> list[tuple[str, Path]]:
    rng = random.Random(seed)
    maker = Maker(folder, rng)
    out = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        path = folder / f"{i:04d}-{kind}{SUFFIX.get(kind, '.txt')}"
        path.write_bytes(getattr(maker, kind)())
        out.append((kind, path))
    rng.shuffle(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--keep", type=Path, help="write the inputs and the result here (kept)")
    args = ap.parse_args()
    print(f"cores {os.cpu_count()}, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="gpusetup-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    (folder / "inputs").mkdir(exist_ok=True)
    inputs = make_inputs(folder / "inputs", args.inputs, args.seed)
    size = sum(p.stat().st_size for _, p in inputs)
    print(f"made {len(inputs)} inputs ({size / 2**20:.0f} MiB on disk) in {time.monotonic() - t:.1f} s")
    out = folder / "result.json"
    t = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _CODE, str(out), *(str(p) for _, p in inputs)],
                          capture_output=True, text=True, cwd=ROOT, timeout=3600)
    wall = time.monotonic() - t
    failures = []
    if "Traceback" in proc.stderr or "MEASURED" not in proc.stderr:
        failures.append("a traceback (or no measurement):\n" + proc.stderr[-3000:])
        print("\n".join(failures))
        return 1
    cpu, hwm, rc = proc.stderr.split("MEASURED")[1].split()[:3]
    mem = int(hwm) / 1024
    doc = json.loads(out.read_text(encoding="utf-8"))
    def rows_of(p: Path) -> list[dict]:  # an input's rows: named as given (refused) or by file name (parts)
        return [i for i in doc["inputs"]
                if i["name"] in (str(p), p.name) or i["name"].startswith((str(p) + ":", p.name + ":"))]

    missing = [str(p) for _, p in inputs if not rows_of(p)]
    by_kind: dict[str, Counter[str]] = {}
    for kind, p in inputs:
        rows = rows_of(p)
        c = by_kind.setdefault(kind, Counter())
        c["inputs"] += 1
        c["refused"] += any(r["error"] for r in rows)
        c["warned"] += any(r.get("warnings") for r in rows) and not any(r["error"] for r in rows)
        c["read"] += not any(r["error"] for r in rows) and not any(r.get("warnings") for r in rows)
    print(f"\n{'kind':<20} {'inputs':>6} {'read':>6} {'warned':>6} {'refused':>7}")
    for kind in KINDS:
        c = by_kind.get(kind, Counter())
        print(f"{kind:<20} {c['inputs']:>6} {c['read']:>6} {c['warned']:>6} {c['refused']:>7}")
    print(f"\nexit code {rc}, wall {wall:.1f} s, CPU {float(cpu):.1f} s, peak memory (VmHWM) {mem:.0f} MB "
          f"(limit {MEM_LIMIT_MB} MB), {len(doc['findings'])} findings")
    if int(rc) not in (0, 1, 2, 3):
        failures.append(f"exit code {rc}")
    if mem > MEM_LIMIT_MB:
        failures.append(f"peak memory {mem:.0f} MB > {MEM_LIMIT_MB} MB")
    if missing:
        failures.append(f"{len(missing)} inputs not accounted for, e.g. {missing[:3]}")
    if re.search(r"internal error", proc.stderr):
        failures.append("an internal error: " + proc.stderr[-1000:])
    for f in failures:
        print("FAIL:", f)
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    print("PASS" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
