"""Every reader has a bound (issue 16, defect 2): a zip bomb bundle is answered fast, in bounded memory."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from gpusetup.bundle.read import MAX_ENTRY, BundleError, read_bundle

GIB = 1024 ** 3
CHUNK = b"\0" * (4 * 1024 * 1024)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ~1-3 MB bundle whose manifest lists a 1 GiB entry with its correct checksum."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.zip"
    digest = hashlib.sha256()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        info = zipfile.ZipInfo("logs/dmesg.txt")
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as fh:
            for _ in range(GIB // len(CHUNK)):
                fh.write(CHUNK)
                digest.update(CHUNK)
        manifest = {"kind": "gpusetup-bundle", "files": [{"path": "logs/dmesg.txt", "sha256": digest.hexdigest()}]}
        zf.writestr("manifest.json", json.dumps(manifest))
    assert path.stat().st_size < 20 * 1024 * 1024
    return path


def test_read_bundle_refuses_a_zip_bomb_at_once(bomb: Path) -> None:
    start = time.process_time()
    with pytest.raises(BundleError) as err:
        read_bundle(bomb)
    assert time.process_time() - start < 1.0
    assert "logs/dmesg.txt unpacks to 1024 MB" in str(err.value) and "20 MB per file" in str(err.value)


def test_a_lying_size_field_is_caught_by_counting(tmp_path: Path) -> None:
    """The declared size is the attacker's to write; the stream is counted too."""
    payload = b"x" * (MAX_ENTRY + 10)
    path = tmp_path / "liar.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.txt", payload)
        zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "files": [
            {"path": "big.txt", "sha256": hashlib.sha256(payload).hexdigest()}]}))
    raw = bytearray(path.read_bytes())
    # patch the declared uncompressed size (local header and central directory) to a small number
    real = (MAX_ENTRY + 10).to_bytes(4, "little")
    assert raw.count(real) == 2
    raw = raw.replace(real, (1000).to_bytes(4, "little"))
    path.write_bytes(bytes(raw))
    with pytest.raises(BundleError) as err:
        read_bundle(path)
    assert "big.txt" in str(err.value)


def test_analyze_answers_the_bomb_in_bounded_time_and_memory(bomb: Path, tmp_path: Path) -> None:
    """The CLI in a fresh interpreter: ≤ 5 s CPU, ≤ 300 MB peak resident memory, a clear message, exit code 3."""
    env = dict(os.environ, GPUSETUP_HOME=str(tmp_path / "h"))
    # VmHWM (peak resident set of this process image); ru_maxrss would carry the forking parent's peak
    code = ("import re, sys, time\n"
            "from gpusetup.cli import main\n"
            "rc = main(['analyze', sys.argv[1]])\n"
            "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "print('MEASURED', time.process_time(), hwm, file=sys.stderr)\n"
            "sys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 3, proc.stderr
    assert "unpacks to 1024 MB" in proc.stderr and "Traceback" not in proc.stderr
    cpu, rss_kib = proc.stderr.split("MEASURED")[1].split()
    assert float(cpu) < 5.0
    assert int(rss_kib) < 300 * 1024  # KiB on Linux
