"""A mutation fuzzer over every fixture family (issue 16): what a user pastes is often damaged.

Each family in tests/fixtures (nvidia-smi text/XML, collect_env, dmesg, lspci, /proc, sysfs, ROCm,
Windows, recorded issues…) gives two real files, chosen with a fixed seed; each is mutated six ways —
truncated, bytes flipped, NUL padding, re-encoded as UTF-16, CRLF line ends, one huge single line — and fed to
`gpusetup analyze` (the in-process entry point the CLI uses). Every case must end without an exception, give
JSON that validates against resources/schema/analyze.schema.json, and take under the time bound.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import jsonschema
import pytest

from gpusetup.analyze import analyze_paths
from gpusetup.resources import resource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEED = 20261124
PER_FAMILY = 2
CASE_CPU_LIMIT = 5.0  # seconds of CPU per input: the bound for any input under 20 MB
HUGE_LINE = 4 * 1024 * 1024


def _families() -> dict[str, list[Path]]:
    rnd = random.Random(SEED)
    out = {}
    for family in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        files = sorted(f for f in family.rglob("*") if f.is_file() and f.stat().st_size < 2 * 1024 * 1024)
        if files:
            out[family.name] = rnd.sample(files, min(PER_FAMILY, len(files)))
    return out


def truncate(data: bytes, rnd: random.Random) -> bytes:
    return data[: rnd.randrange(0, max(1, len(data)))]


def flip_bytes(data: bytes, rnd: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(min(64, max(1, len(buf) // 100))):
        if buf:
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
    return bytes(buf)


def nul_padding(data: bytes, rnd: random.Random) -> bytes:
    at = rnd.randrange(0, len(data) + 1)
    return data[:at] + b"\0" * 4096 + data[at:] + b"\0" * 1024


def utf16(data: bytes, rnd: random.Random) -> bytes:
    return data.decode("utf-8", errors="replace").encode("utf-16")


def crlf(data: bytes, rnd: random.Random) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def huge_line(data: bytes, rnd: random.Random) -> bytes:
    lines = data.split(b"\n")
    at = rnd.randrange(0, len(lines))
    seed_line = lines[at] or b"NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."
    lines[at] = (seed_line + b" ") * (HUGE_LINE // (len(seed_line) + 1))
    return b"\n".join(lines)


MUTATIONS = (truncate, flip_bytes, nul_padding, utf16, crlf, huge_line)
CASES = [(fam, f, m) for fam, files in _families().items() for f in files for m in MUTATIONS]


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(resource("schema", "analyze.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def test_every_family_is_covered() -> None:
    fams = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert {fam for fam, _, _ in CASES} == fams and len(fams) >= 10


@pytest.mark.parametrize("family, path, mutate", CASES,
                         ids=[f"{fam}-{p.stem[:24]}-{m.__name__}" for fam, p, m in CASES])
def test_mutated_input_is_analysed_without_a_traceback(family: str, path: Path, mutate, validator,
                                                       tmp_path: Path) -> None:
    rnd = random.Random(f"{SEED}:{path.name}:{mutate.__name__}")
    data = mutate(path.read_bytes(), rnd)
    src = tmp_path / path.name
    src.write_bytes(data)
    start = time.process_time()
    analysis = analyze_paths([str(src)])
    doc = json.loads(json.dumps(analysis.to_dict(), ensure_ascii=False))
    spent = time.process_time() - start
    validator.validate(doc)
    assert spent < CASE_CPU_LIMIT, f"{spent:.1f} s CPU for {len(data)} bytes"
