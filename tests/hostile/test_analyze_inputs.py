"""What strangers send to `gpusetup analyze` is bounded before it is parsed, and one bad input never stops the
others (issue 25):

* a 1 MB zip whose manifest.json unpacks to 1 GiB made analyze use 2.1 GB and 16 s before any bound applied
  (the "is this a bundle" check read the manifest whole);
* `[` × 200,000 raised RecursionError and stopped the whole run: one bad file in a fleet and nothing analysed;
* a bundle with an empty manifest and an Xid 79 in an unlisted file said "0 inputs … nothing was analysed",
  exit 0; a report with schema_version 99 was read as current without a word.
"""

from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from gpusetup.analyze import analyze_paths, readers
from gpusetup.analyze.readers import read_bytes, register_reader
from gpusetup.cli import main
from gpusetup.untrusted import MAX_DEPTH, TooDeep, json_depth, loads

pytestmark = pytest.mark.hostile
FIX = Path(__file__).resolve().parents[1] / "fixtures"
XID79 = FIX / "dmesg" / "xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt"  # NVIDIA's docs, recorded
SMI = FIX / "nvidia-smi-text"


def _bomb_bundle(path: Path, manifest_mib: int = 1024) -> Path:
    """A zip of about 1 MB whose manifest.json (valid JSON, a gpusetup bundle's kind) unpacks to ``manifest_mib``."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("manifest.json", "w", force_zip64=True) as fh:
            fh.write(b'{"kind": "gpusetup-bundle", "bundle_version": "1", "files": []')
            block = b" " * (1 << 20)
            for _ in range(manifest_mib):
                fh.write(block)
            fh.write(b"}")
        zf.write(XID79, "raw/kernel-log-gpu.txt")
    return path


def test_a_manifest_that_unpacks_to_a_gibibyte_is_never_read_whole(tmp_path: Path) -> None:
    bomb = _bomb_bundle(tmp_path / "bundle.zip")
    assert bomb.stat().st_size < 4 << 20
    data = bomb.read_bytes()
    tracemalloc.start()
    try:
        parts = read_bytes("bundle.zip", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"{peak / 2**20:.0f} MiB while reading a {len(data) / 2**20:.1f} MiB zip"
    # not a bundle gpusetup wrote (its manifest is too large): read as a zip, the kernel log in it still counts
    assert any("kernel-log-gpu.txt" in p.name and "Xid" in (p.text or "") for p in parts)


def test_the_bundle_check_reads_at_most_the_manifest_limit(tmp_path: Path) -> None:
    """Just past the limit (cheap to build): refused by its declared size, before a byte is unpacked."""
    bomb = _bomb_bundle(tmp_path / "b.zip", manifest_mib=3)
    assert readers._bundle_matches("b.zip", bomb.read_bytes()) is False


def test_json_depth_is_measured_without_parsing() -> None:
    assert json_depth('{"a": [1, {"b": "[[[[[["}], "c": "\\"[["}') == 3
    assert json_depth("[" * 200_000) == 200_000
    with pytest.raises(TooDeep):
        loads("[" * 200_000)
    with pytest.raises(ValueError):
        loads('{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1))
    assert loads('{"a": [[1]]}') == {"a": [[1]]}


def _deep(tmp_path: Path) -> Path:
    p = tmp_path / "deep.json"
    p.write_text("[" * 200_000)
    return p


def test_deeply_nested_json_does_not_stop_the_other_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["analyze", str(_deep(tmp_path)), str(XID79), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2  # the Xid 79 of the other input is an error finding
    assert "gpu-fell-off-bus" in {f["id"] for f in out["findings"]}
    deep = next(i for i in out["inputs"] if i["name"].endswith("deep.json"))
    assert deep["error"] is None and deep["warnings"]  # read as text: nothing recognised, said so


@pytest.mark.parametrize("where", ["report.json", "manifest.json"])
def test_deep_json_inside_a_bundle_is_a_problem_of_that_bundle_only(tmp_path: Path, where: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    deep = b"[" * 200_000
    files = {"report.json": deep} if where == "report.json" else {}
    manifest = deep if where == "manifest.json" else json.dumps({
        "kind": "gpusetup-bundle", "bundle_version": "1",
        "files": [{"path": n, "sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in files.items()]
    }).encode()
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", manifest)
        for n, d in files.items():
            zf.writestr(n, d)
    rc = main(["analyze", str(bundle), str(XID79)])
    captured = capsys.readouterr()
    assert "RecursionError" not in captured.out + captured.err
    assert "fallen off the bus" in captured.out
    assert rc in (2, 3)


def test_deep_json_in_a_fleet_is_one_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpusetup.analyze.fleet import fleet_rows

    rows = fleet_rows([str(_deep(tmp_path)), str(XID79)])
    assert rows is None  # a log among them: one machine's story, analysed merged (above), not a crash


def test_a_plug_in_reader_that_crashes_costs_only_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd.crash"
    odd.write_bytes(b"CRASHME\n")

    def boom(name: str, data: bytes) -> list:
        raise RuntimeError("the plug-in reader's own bug")

    register_reader("crashy", lambda name, data: data.startswith(b"CRASHME"), boom)
    try:
        a = analyze_paths([str(odd), str(XID79)])
    finally:
        readers._READERS[:] = [r for r in readers._READERS if r.name != "crashy"]
    bad = [i for i in a.inputs if i.error]
    assert len(bad) == 1 and "RuntimeError" in bad[0].error and "the other inputs were" in bad[0].error
    assert "gpu-fell-off-bus" in {f.id for f in a.findings}
    assert a.exit_code == 3


def test_an_empty_manifest_with_an_xid_in_an_unlisted_file_is_not_healthy(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "bundle_version": "1", "files": []}))
        zf.write(XID79, "raw/kernel-log-gpu.txt")
    rc = main(["analyze", str(bundle)])
    out = capsys.readouterr().out
    assert rc == 2, out
    assert "0 inputs" not in out and "nothing was analysed" not in out
    assert "not in its manifest (raw/kernel-log-gpu.txt); they were read, but nothing vouches for them" in out
    assert "fallen off the bus" in out


def test_an_input_that_yields_nothing_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty_bundle = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty_bundle, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "bundle_version": "1", "files": []}))
    prose = tmp_path / "message.txt"
    prose.write_text("Hello, my training is slow, can you help?\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["analyze", str(empty_bundle)]) == 1
    assert main(["analyze", str(prose)]) == 1
    assert "nothing gpusetup knows how to read was found in it" in capsys.readouterr().out
    assert main(["analyze", str(empty)]) == 3  # unreadable stays 3
    capsys.readouterr()
    rc = main(["analyze", str(prose), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["inputs"][0]["warnings"]


def _report_with_schema(version: str) -> bytes:
    from gpusetup.model import Machine, Report, to_dict

    doc = to_dict(Report(machine=Machine()))
    doc["schema_version"] = version
    return json.dumps(doc).encode()


def test_a_report_from_a_newer_major_schema_is_read_with_a_warning(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    report.write_bytes(_report_with_schema("99.0"))
    rc = main(["analyze", str(report), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc >= 1
    inp = doc["inputs"][0]
    assert "gpusetup-report" in inp["kinds"]  # read (best effort), not refused
    assert any("report format 99.0" in w for w in inp["warnings"])
    # the same report inside a bundle
    bundle = tmp_path / "bundle.zip"
    data = _report_with_schema("99.1")
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"kind": "gpusetup-bundle", "bundle_version": "1", "files": [
            {"path": "report.json", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}]}))
        zf.writestr("report.json", data)
    rc = main(["analyze", str(bundle)])
    assert rc >= 1 and "report format 99.1" in capsys.readouterr().out
    # the current major version: no warning
    report.write_bytes(_report_with_schema("1.7"))
    main(["analyze", str(report), "--json"])
    assert not json.loads(capsys.readouterr().out)["inputs"][0]["warnings"]


def test_a_ten_megabyte_line_is_cut_before_any_pattern_sees_it(tmp_path: Path) -> None:
    smi = next(SMI.glob("*.txt")).read_text()
    big = tmp_path / "big.txt"
    big.write_text(smi + "\n" + "A" * (10 << 20) + "\n")
    tracemalloc.start()
    try:
        a = analyze_paths([str(big)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 120 << 20, f"{peak / 2**20:.0f} MiB"
    assert any(k.startswith("nvidia-smi") for k in a.inputs[0].kinds)


def test_zip_members_past_the_limits_are_skipped_not_unpacked(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i in range(readers.MAX_ZIP_MEMBERS + 50):
            zf.writestr(f"log-{i:04d}.txt", f"line {i}\n")
        with zf.open("huge.log", "w", force_zip64=True) as fh:
            for _ in range(readers.MAX_BYTES // (1 << 20) + 2):
                fh.write(b"x" * (1 << 20))
    parts = read_bytes("many.zip", buf.getvalue())
    assert len(parts) == readers.MAX_ZIP_MEMBERS
    assert not any("huge.log" in p.name for p in parts)
