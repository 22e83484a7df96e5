"""The catalogue as data (resources/diagnostics/*.json): valid, and every wording proven on a real excerpt.

Each wording names the public report it was taken from; that report's excerpt must be in
tests/fixtures/recorded-issues (its PROVENANCE row gives the same URL) and the wording must match it. So a
new failure or a new tool's words cannot be added without the real text that shows them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from gpusetup.analyze import analyze_text
from gpusetup.resources import resource
from gpusetup.rules.catalogue import data

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded-issues"
FILES = sorted(resource("diagnostics").glob("*.json"))


def _provenance() -> dict[str, list[Path]]:
    """URL → the recorded excerpts taken from it."""
    out: dict[str, list[Path]] = {}
    for ln in (RECORDED / "PROVENANCE.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `([^`]+)` \| (https://\S+)", ln)
        if m:
            out.setdefault(m.group(2).rstrip(" |"), []).append(RECORDED / m.group(1))
    return out


def _all_wordings() -> list[tuple[str, dict]]:
    out = []
    for path in FILES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for e in doc.get("entries", []):
            out.extend((e["catalogue"], w) for w in e["wordings"])
        for code, ws in doc.get("wordings", {}).items():
            out.extend((code, w) for w in ws)
    return out


def test_files_match_the_schema() -> None:
    schema = json.loads(resource("schema", "diagnostics.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert FILES
    for path in FILES:
        jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), schema)


def test_ids_and_codes_are_unique_and_checks_exist() -> None:
    entries = data.entries()
    ids = [e.id for e in entries]
    codes = [e.catalogue for e in entries]
    assert len(ids) == len(set(ids))
    # one code, one failure: a code may have one entry matched by wordings, plus entries that read live facts
    # only (no wordings; e.g. F36's processes seen by NVML beside F36's out-of-memory message)
    worded = [e.catalogue for e in entries if e.wordings]
    assert len(worded) == len(set(worded))
    assert all(e.wordings or (e.check and data.CHECKS[e.check].facts) for e in entries)
    assert all(int(c[1:]) >= 36 for c in codes), "F01-F35 are code rules; add their words under 'wordings'"
    for e in entries:
        assert e.check is None or e.check in data.CHECKS, (e.id, e.check)


@pytest.mark.parametrize(("code", "wording"), _all_wordings(), ids=lambda x: x if isinstance(x, str) else x["tool"])
def test_every_wording_matches_its_recorded_source(code: str, wording: dict) -> None:
    prov = _provenance()
    files = prov.get(wording["source"], [])
    assert files, f"{code} wording {wording['pattern']!r}: no recorded excerpt from {wording['source']}"
    rx = re.compile(wording["pattern"], re.IGNORECASE)
    texts = [f.read_text(encoding="utf-8") for f in files]
    if wording.get("multiline"):
        assert any(rx.search(t) for t in texts), (code, wording["source"])
    else:
        assert any(rx.search(ln) for t in texts for ln in t.splitlines()), (code, wording["source"])


def test_a_new_entry_is_only_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding a failure needs no code: a JSON file with a wording makes analyze name it."""
    folder = tmp_path / "diagnostics"
    folder.mkdir()
    for f in FILES:
        (folder / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "zz-test.json").write_text(json.dumps({"about": "a test entry added as data only", "entries": [{
        "id": "test-only-entry", "catalogue": "F99", "severity": "warning", "title": "A test failure {n}",
        "detail": "Only here to show that a JSON entry becomes a finding without code.",
        "fix": "Nothing; this is a test entry.",
        "wordings": [{"tool": "test", "pattern": r"frobnicator failed with code (?P<n>\d+)",
                      "source": "https://example.invalid"}]}]}), encoding="utf-8")
    monkeypatch.setenv("GPUSETUP_RESOURCES", str(tmp_path))
    data.load.cache_clear()
    try:
        entry = next(e for e in data.entries() if e.id == "test-only-entry")
        from gpusetup.model import Machine

        m = Machine()
        m.messages.append("the frobnicator failed with code 7")
        (finding,) = data.evaluate_entry(entry, m)
        assert finding.title == "A test failure 7" and finding.catalogue == "F99"
        assert finding.evidence == ["the frobnicator failed with code 7"]
    finally:
        data.load.cache_clear()


def test_values_of_the_message_reach_the_advice() -> None:
    """F39: the gfx target in rocBLAS's words picks the override version."""
    text = ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or "
            "directory for GPU arch : gfx1031")
    f = next(f for f in analyze_text(text).findings if f.catalogue == "F39")
    assert "gfx1031" in f.title and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix


@pytest.mark.parametrize(("text", "code", "xid"), [
    ("We see Xid 119 on two of our nodes every few days.", "F43", "119"),
    ("Xids 13, 31 in the journal after the job died", "F42", "31"),
    ("| Xid | 43 |", "F42", "43"),
    ("desktop froze: Xid 62 -> Xid 119 -> Xid 154", "F43", "119"),
])
def test_an_xid_named_in_words_is_diagnosed_like_the_kernel_line(text: str, code: str, xid: str) -> None:
    """F42/F43 are data: their prose wording reads an Xid a person wrote (real excerpts in
    tests/fixtures/recorded-issues; these lines are written here, as people write them, to pin the forms)."""
    f = next(f for f in analyze_text(text + "\n").findings if f.catalogue == code)
    assert f"(Xid {xid})" in f.title


@pytest.mark.parametrize("text", [
    "Xid 79 twice this week",  # fell off the bus: F14, not a program's fault
    "Xid 130 on boot",  # not 13
    "Xid 13.5",  # not an Xid number
    "The process used 13 GB and 31 threads",  # no Xid word
    "NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.",
])
def test_other_xids_and_numbers_are_not_read_as_f42_or_f43(text: str) -> None:
    codes = {f.catalogue for f in analyze_text(text + "\n").findings}
    assert not codes & {"F42", "F43"}, codes
