"""Robust reading of what users send: NUL-padded kernel logs, huge single-line inputs (linear time)."""

from __future__ import annotations

import time
from pathlib import Path

from gpusetup.analyze import MAX_LINE_CHARS, analyze_paths, analyze_text, split_long_lines
from gpusetup.analyze.readers import looks_binary, read_bytes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
XID79 = FIXTURES / "dmesg" / "xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt"
CUDNN = FIXTURES / "recorded-issues" / "F23__jax-cudnn-8.5.0-vs-8.6.0__jax-15268.txt"


def test_kernel_log_with_nul_padding_is_read(tmp_path: Path) -> None:
    """After a hard reset a log file holds a run of NUL bytes (allocated, never written) — right where the
    Xid 79 of the crash is. The real excerpt with such padding in front of and inside it must still be read."""
    real = XID79.read_bytes()
    lines = real.splitlines(keepends=True)
    padded = b"\x00" * 8192 + b"".join(lines[:1]) + b"\x00" * 3000 + b"".join(lines[1:])
    path = tmp_path / "kern.log"
    path.write_bytes(padded)
    assert not looks_binary(padded)
    (part,) = read_bytes("kern.log", padded)
    assert "\x00" not in (part.text or "")
    analysis = analyze_paths([str(path)])
    assert not analysis.unreadable
    assert analysis.findings and analysis.findings[0].catalogue == "F14"


def test_real_binary_is_still_refused() -> None:
    elf = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64
    assert looks_binary(elf)


def test_ten_megabyte_single_line_takes_seconds() -> None:
    line = CUDNN.read_text(encoding="utf-8").strip()
    text = (line + " ") * (10_000_000 // (len(line) + 1))
    assert len(text) > 9_000_000 and "\n" not in text
    start = time.monotonic()
    analysis = analyze_text(text)
    took = time.monotonic() - start
    assert took < 15, f"{took:.1f} s for 10 MB"  # about 1-2 s on a laptop core; was 23+ s
    assert analysis.findings[0].catalogue == "F23"


def test_junk_ten_megabytes_is_fast_too() -> None:
    start = time.monotonic()
    analyze_text("x" * 10_000_000)
    analyze_text("1 " * 5_000_000)
    assert time.monotonic() - start < 20


def test_long_lines_are_cut_at_spaces_and_escaped_newlines() -> None:
    assert split_long_lines("short\nlines") == "short\nlines"
    long = ("word " * 2000) + "\\nsecond line"
    out = split_long_lines(long).split("\n")
    assert all(len(ln) <= MAX_LINE_CHARS for ln in out)
    assert out[-1] == "second line" and out[0].startswith("word word")
    assert "".join(out[:-1]).replace(" ", "") == "word" * 2000
    solid = "y" * (3 * MAX_LINE_CHARS + 5)
    assert "".join(split_long_lines(solid).split("\n")) == solid
