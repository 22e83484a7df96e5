"""Support bundles under hostile conditions (issue 25):

* `bundle` took 224 s and 1.27 GB after a 300 MB line reached journal.jsonl: it read and redacted every state
  file whole before its 4 MB per-file cap; now each is read within the cap (its end, for logs) and the manifest
  says what was cut;
* a host name of this machine planted in `nvidia-smi topo -m` output and the kernel log survived in
  findings.json, raw/*, report.html and report.json, and a real IP on the same lines was no longer redacted;
* a link in the state folder is not followed into the bundle; `-o` a FIFO is written through.
"""

from __future__ import annotations

import json
import os
import threading
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from fakes.runner import FakeRunner, Reply
from report.sample import FIX, sample_report

from gpusetup.bundle import build_bundle
from gpusetup.bundle.collect import PER_FILE_CAP
from gpusetup.bundle.redact import Redactor
from gpusetup.rules import evaluate

pytestmark = pytest.mark.hostile
TOPO = FIX / "nvidia-smi-text" / "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-topo-m.txt"  # recorded
FQDN, IP = "vm.corp.example", "10.20.30.40"


def _blob(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n).decode("utf-8", "replace") for n in zf.namelist()}


def test_a_huge_state_file_is_read_within_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "gshome"
    monkeypatch.setenv("GPUSETUP_HOME", str(home))
    journal = home / "state" / "install" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    with open(journal, "wb") as fh:  # 300 MB, sparse: the size a 300 MB pip line gave it
        fh.write(b'{"event": "start", "step": "pip"}\n')
        fh.seek(300 << 20)
        fh.write(b'\n{"event": "end", "step": "pip", "tail": ["token=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"]}\n')
    report, ctx = sample_report(tmp_path)
    tracemalloc.start()
    try:
        result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3",
                              redactor=Redactor(usernames={"alice"}, hostnames={"gpu-node-17"}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * PER_FILE_CAP, f"{peak / 2**20:.0f} MiB"
    cut = {c["file"]: c for c in result.manifest["cut"]}
    entry = cut["logs/state/install/journal.jsonl"]
    assert entry["original_bytes"] > 300 << 20 and entry["kept_bytes"] <= PER_FILE_CAP
    assert entry["how"] == "kept the last part"
    kept = _blob(result.path)["logs/state/install/journal.jsonl"]
    assert '"event": "end"' in kept and "hf_AbCdEf" not in kept  # the end kept, and redacted


def test_a_link_in_the_state_folder_is_not_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "gshome"
    monkeypatch.setenv("GPUSETUP_HOME", str(home))
    (home / "state").mkdir(parents=True)
    secret = tmp_path / "not-for-support.txt"
    secret.write_text("the private diary of the admin\n")
    (home / "state" / "install.log").symlink_to(secret)
    report, ctx = sample_report(tmp_path)
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3")
    assert not any("private diary" in text for text in _blob(result.path).values())


def test_this_machines_fqdn_and_ips_are_gone_from_every_file(tmp_path: Path) -> None:
    """The host name is "vm" (too short to redact as a word); its FQDN appears in topo -m and in the kernel log,
    each time next to an address."""
    runner = FakeRunner()
    topo = TOPO.read_text() + f"\nReported by {FQDN} {IP}\n"
    runner.add(["nvidia-smi", "topo", "-m"], Reply(stdout=topo))
    report, ctx = sample_report(tmp_path, runner)
    ctx.runner = runner
    machine = report.machine
    machine.system.hostname = "vm"
    machine.kernel_log = [f"[ 1234.5] {FQDN} kernel: NVRM: Xid (PCI:0000:10:1c): 79, pid=1923, name=python, "
                          f"GPU has fallen off the bus. peer {FQDN} {IP}"]
    report.findings = evaluate(machine)
    assert any(FQDN in e for f in report.findings for e in f.evidence)
    red = Redactor.for_this_machine(extra_hosts=["vm"])
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3", redactor=red)
    files = _blob(result.path)
    for name in ("findings.json", "raw/kernel-log-gpu.txt", "raw/nvidia-smi-topo-m.txt", "report.html",
                 "report.json"):
        assert name in files, sorted(files)
        assert "corp.example" not in files[name], name
        assert IP not in files[name], name
    assert "GPU0" in files["raw/nvidia-smi-topo-m.txt"] and "Xid" in files["raw/kernel-log-gpu.txt"]


@pytest.mark.skipif(os.name != "posix", reason="FIFOs")
def test_bundle_to_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "bundle.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    report, ctx = sample_report(tmp_path)
    result = build_bundle(fifo, report, ctx, python="python3")
    t.join(timeout=30)
    assert got and got[0][:2] == b"PK" and len(got[0]) == result.size
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(("root", "gshome"))) == ["bundle.fifo"]
    manifest = json.loads(zipfile.ZipFile(__import__("io").BytesIO(got[0])).read("manifest.json"))
    assert manifest["kind"] == "gpusetup-bundle"
