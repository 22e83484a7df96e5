"""The support side: `gpusetup analyze` reads our bundles (verified) and turns many reports into a fleet table."""

from __future__ import annotations

import json
import zipfile

from fakes.scenarios import scenario

from gpusetup.bundle import build_bundle
from gpusetup.bundle.redact import Redactor
from gpusetup.cli import main
from gpusetup.model import Report
from gpusetup.probe import detect
from gpusetup.report import render
from gpusetup.rules import evaluate

from .sample import sample_report
from .test_bundle import _runner


def _bundle(tmp_path, name="b.zip"):
    report, ctx = sample_report(tmp_path)
    ctx.runner = _runner()
    return build_bundle(tmp_path / name, report, ctx, python="python3", redactor=Redactor()).path


def test_analyze_reads_a_bundle_and_finds_the_xid_from_its_kernel_log(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "h"))
    path = _bundle(tmp_path)
    rc = main(["analyze", "--json", str(path)])
    data = json.loads(capsys.readouterr().out)
    kinds = {k for i in data["inputs"] for k in i.get("kinds", [])}
    assert "gpusetup-bundle" in kinds
    xid = [f for f in data["findings"] if any("Xid" in e for e in f["evidence"])]
    assert xid and xid[0]["catalogue"] == "F16"  # Xid 63: memory row remap pending until a GPU reset
    assert rc == 1


def test_analyze_rejects_a_tampered_bundle_clearly(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "h"))
    good = _bundle(tmp_path)
    bad = tmp_path / "tampered.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for n in src.namelist():
            data = src.read(n)
            dst.writestr(n, data + b" " if n == "report.json" else data)
    rc = main(["analyze", str(bad)])
    err = capsys.readouterr().err
    assert rc == 3
    assert "report.json does not match its checksum" in err


def test_fleet_table_from_many_reports(tmp_path, capsys):
    paths = []
    for i, name in enumerate(["xml:a100-sxm4-80gb__535.54.03__telegraf.xml", "nvidia-no-driver", "xml:tesla-t4__515.105.01__telegraf.xml"]):
        m = detect(scenario(tmp_path / f"m{i}", name))
        p = tmp_path / f"node-{i}.json"
        p.write_text(render(Report(m, findings=evaluate(m)), "json"))
        paths.append(str(p))
    (tmp_path / "junk.json").write_text("{not json")
    rc = main(["analyze", *paths, str(tmp_path / "junk.json")])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("machine")
    assert any(line.startswith("node-0.json") and "A100-SXM4-80GB" in line for line in lines)
    assert any(line.startswith("node-1.json") and "error" in line for line in lines)
    assert "4 machines;" in out and "1 unreadable" in out
    assert rc == 3

    rc = main(["analyze", "--json", *paths])
    data = json.loads(capsys.readouterr().out)
    assert [m["label"] for m in data["machines"]] == ["node-0.json", "node-1.json", "node-2.json"]
    assert rc == 2


def test_pieces_of_one_story_are_still_merged(tmp_path, capsys):
    a = tmp_path / "smi.txt"
    a.write_text("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
    b = tmp_path / "note.txt"
    b.write_text("I upgraded the driver yesterday and now nothing works\n")
    main(["analyze", "--json", str(a), str(b)])
    data = json.loads(capsys.readouterr().out)
    assert "inputs" in data and "findings" in data
