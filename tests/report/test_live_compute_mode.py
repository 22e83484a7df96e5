"""Live facts for the new rules: compute mode read from NVML (fake fed with a real A100 XML) and from every
nvidia-smi format, and an exclusive compute mode explained even when no error was seen yet."""

from __future__ import annotations

from pathlib import Path

from fakes.runner import FakeRunner

from gpusetup.analyze import analyze_paths
from gpusetup.model import Gpu, Machine, Severity
from gpusetup.rules import evaluate

from .sample import sample_report

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def test_nvml_probe_reads_compute_mode(tmp_path) -> None:
    report, _ = sample_report(tmp_path, FakeRunner())
    assert report.machine.gpus[0].compute_mode == "Default"


def test_smi_formats_read_compute_mode() -> None:
    table = FIX / "recorded-issues" / "F37__error-46-tesla-k40m-e-process__digits-2005.txt"
    assert analyze_paths([str(table)]).machine.gpus[0].compute_mode == "Exclusive_Process"
    thread = FIX / "recorded-issues" / "F37__pbs-cluster-gtx-titan-e-thread__cbio-cluster-144.txt"
    assert analyze_paths([str(thread)]).machine.gpus[0].compute_mode == "Exclusive_Thread"
    xml = FIX / "nvidia-smi-xml" / "tesla-t4__515.105.01__telegraf.xml"
    assert analyze_paths([str(xml)]).machine.gpus[0].compute_mode == "Default"
    q = FIX / "nvidia-smi-text" / "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-q.txt"
    assert analyze_paths([str(q)]).machine.gpus[0].compute_mode == "Default"


def test_exclusive_mode_seen_live_is_explained_as_info() -> None:
    m = Machine()
    m.gpus.append(Gpu(vendor="nvidia", index=0, name="Tesla V100", compute_mode="Exclusive_Process"))
    found = [f for f in evaluate(m) if f.catalogue == "F37"]
    assert found and found[0].severity == Severity.INFO
    assert "Exclusive_Process" in found[0].title
    m.gpus[0].compute_mode = "Default"
    assert not [f for f in evaluate(m) if f.catalogue == "F37"]
