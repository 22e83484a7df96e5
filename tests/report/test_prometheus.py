"""`diagnose --format prometheus`: metrics node_exporter's textfile collector reads, checked by promtool.

Two validators: ``promtool check metrics`` (the Prometheus project's own linter, from the Debian package
``prometheus``; .ci/run installs it) and prometheus_client's text parser (from the Python package index,
always there), so the format is checked even where promtool is missing. The alerting rules that ship in
resources/prometheus/ are checked with ``promtool check rules`` and their expressions use only metric names
the renderer writes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpusetup.cli import main
from gpusetup.model import Finding, Machine, Report, Severity
from gpusetup.report.prometheus import render_prometheus
from gpusetup.resources import resource

from .sample import sample_report

PROMTOOL = shutil.which("promtool")
RULES = resource("prometheus", "gpusetup-alerts.yml")


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        assert fam.type == "gauge", fam.name
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if PROMTOOL is None:
        pytest.skip("promtool is not installed (Debian package 'prometheus'; .ci/run installs it); "
                    "the prometheus_client parser checks still ran in the other tests")
    return subprocess.run([PROMTOOL, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_sample_report_metrics_parse_and_carry_the_facts(tmp_path: Path) -> None:
    report, _ = sample_report(tmp_path)
    text = render_prometheus(report, now=1764000000.0)
    got = _samples(text)
    assert got[("gpusetup_driver_info", (("cuda_version", str(report.machine.driver.cuda_driver_version)),
                                         ("version", "535.54.03")))] == 1
    assert got[("gpusetup_gpus", (("vendor", "nvidia"),))] == 1
    assert got[("gpusetup_findings", (("severity", "error"),))] == 1
    assert got[("gpusetup_findings", (("severity", "warning"),))] == 0
    assert got[("gpusetup_finding_info", (("catalogue", "F21"), ("id", "row-remap-pending"), ("severity", "error")))] == 1
    assert got[("gpusetup_worst_severity", ())] == 3
    assert got[("gpusetup_last_run_timestamp_seconds", ())] == 1764000000.0
    assert got[("gpusetup_selftest_bandwidth_bytes_per_second", (("test", "h2d_pinned"),))] == pytest.approx(21.3e9)
    assert got[("gpusetup_selftest_flops", (("test", "matmul_fp32"),))] == pytest.approx(17.9e12)
    assert got[("gpusetup_selftest_passed", (("test", "h2d_pinned"),))] == 0
    assert got[("gpusetup_selftest_passed", (("test", "matmul_fp32"),))] == 1
    # Identifiers never become labels; the host name is node_exporter's business.
    assert "GPU-513536b6" not in text and "1650522003820" not in text and "gpu-node-17" not in text


def test_promtool_check_metrics_accepts_it(tmp_path: Path) -> None:
    report, _ = sample_report(tmp_path)
    text = render_prometheus(report)
    r = _promtool("check", "metrics", stdin=text)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr
    # The control: promtool does complain about a badly named counter, so silence above means something.
    bad = _promtool("check", "metrics", stdin="# HELP bad_count x\n# TYPE bad_count counter\nbad_count 1\n")
    assert "counter metrics should have \"_total\" suffix" in bad.stdout + bad.stderr


def test_label_values_are_escaped() -> None:
    m = Machine()
    report = Report(machine=m, findings=[Finding(id='odd"id\\x', severity=Severity.WARNING, title="t")])
    got = _samples(render_prometheus(report))
    assert got[("gpusetup_finding_info", (("id", 'odd"id\\x'), ("severity", "warning")))] == 1
    assert got[("gpusetup_gpus", (("vendor", "nvidia"),))] == 0  # no GPU is a sample, not a missing series


def test_diagnose_cli_writes_prometheus_and_textfile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prom = tmp_path / "textfile" / "gpusetup.prom"
    rc = main(["diagnose", "--json", "--textfile", str(prom)])
    assert rc in (0, 1, 2)
    got = _samples(prom.read_text())
    assert got[("gpusetup_worst_severity", ())] in {0: (0, 1), 1: (2,), 2: (3,)}[rc]  # as the exit code
    assert not list(prom.parent.glob(".*.tmp"))
    capsys.readouterr()
    main(["diagnose", "--format", "prometheus"])
    assert "# TYPE gpusetup_findings gauge" in capsys.readouterr().out


def test_alert_rules_pass_promtool_and_use_real_metric_names(tmp_path: Path) -> None:
    report, _ = sample_report(tmp_path)
    names = {fam.name for fam in text_string_to_metric_families(render_prometheus(report))}
    used = set(re.findall(r"\bgpusetup_[a-z_]+", RULES.read_text()))
    assert used and used <= names, used - names
    r = _promtool("check", "rules", str(RULES))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 7 rules found" in r.stdout
