"""The shipped alert rules fire when they should: `promtool test rules` on series shaped like the textfile.

Issue 24: the generated diagnose image crashed, the DaemonSet wrote no metric, and no shipped alert noticed a
node that stopped (or never started) reporting. The series below are what `gpusetup diagnose --textfile`
writes (gpusetup_last_run_timestamp_seconds, from gpusetup/report/prometheus.py) and what kube-state-metrics
exports for a DaemonSet (kube_daemonset_status_number_unavailable, its documented name).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gpusetup.resources import resource

RULES = resource("prometheus", "gpusetup-alerts.yml")


def _promtool() -> str:
    found = shutil.which("promtool")
    if not found:
        pytest.skip("promtool is not installed (Debian package 'prometheus'; .ci/run installs it)")
    return found


def _test(tmp_path: Path, tests: list[dict]) -> subprocess.CompletedProcess[str]:
    rules = tmp_path / "rules.yml"
    rules.write_text(RULES.read_text(encoding="utf-8"), encoding="utf-8")
    spec = tmp_path / "test.yml"
    spec.write_text(yaml.safe_dump({"rule_files": [str(rules)], "evaluation_interval": "1m", "tests": tests}))
    return subprocess.run([_promtool(), "test", "rules", str(spec)], capture_output=True, text=True, timeout=120)


def test_a_node_that_stops_reporting_raises_an_alert_and_a_reporting_one_does_not(tmp_path: Path) -> None:
    # node-a reports every 5 minutes all along; node-b reports for an hour, then never again (its diagnose
    # crashes before writing the textfile: the series ends).
    a = " ".join(str(1764000000 + 300 * i) for i in range(48))
    b = " ".join(str(1764000000 + 300 * i) for i in range(12))
    series = [
        {"series": 'gpusetup_last_run_timestamp_seconds{instance="node-a:9100",job="node"}', "values": a},
        {"series": 'gpusetup_last_run_timestamp_seconds{instance="node-b:9100",job="node"}', "values": b},
    ]
    r = _test(tmp_path, [{
        "interval": "5m",
        "input_series": series,
        "alert_rule_test": [
            {"eval_time": "50m", "alertname": "GpusetupMetricsAbsent", "exp_alerts": []},
            {"eval_time": "3h", "alertname": "GpusetupMetricsAbsent", "exp_alerts": [
                {"exp_labels": {"severity": "warning", "instance": "node-b:9100", "job": "node"},
                 "exp_annotations": {
                     "summary": "gpusetup metrics from node-b:9100 have disappeared",
                     "description": "The node reported gpusetup metrics in the last 7 days and reports none now: "
                                    "the diagnose pod is gone, gpusetup fails before it writes the textfile, or "
                                    "node_exporter no longer reads the folder."}},
            ]},
        ],
    }])
    assert r.returncode == 0, r.stdout + r.stderr
    # The control: the same test expecting no alert at 3h fails, so the pass above means the rule fired.
    r = _test(tmp_path, [{"interval": "5m", "input_series": series, "alert_rule_test": [
        {"eval_time": "3h", "alertname": "GpusetupMetricsAbsent", "exp_alerts": []}]}])
    assert r.returncode != 0


def test_a_gpu_node_without_a_running_diagnose_pod_raises_an_alert(tmp_path: Path) -> None:
    """A node that never reported at all has no gpusetup series to go stale: kube-state-metrics says the
    DaemonSet's pod there is unavailable (image pull error, crash loop)."""
    r = _test(tmp_path, [{
        "interval": "5m",
        "input_series": [{"series": 'kube_daemonset_status_number_unavailable{daemonset="gpusetup-diagnose",'
                                    'namespace="monitoring"}', "values": "0 0 1+0x30"}],
        "alert_rule_test": [
            {"eval_time": "30m", "alertname": "GpusetupDiagnoseNotRunning", "exp_alerts": []},
            {"eval_time": "2h", "alertname": "GpusetupDiagnoseNotRunning", "exp_alerts": [
                {"exp_labels": {"severity": "warning", "daemonset": "gpusetup-diagnose", "namespace": "monitoring"},
                 "exp_annotations": {
                     "summary": "1 GPU node(s) have no running gpusetup-diagnose pod",
                     "description": "Those nodes have never reported (or stopped): `kubectl get pods -l "
                                    "app.kubernetes.io/name=gpusetup-diagnose -o wide` shows which and why (image "
                                    "pull, crash loop). Needs kube-state-metrics."}}]},
        ],
    }])
    assert r.returncode == 0, r.stdout + r.stderr


def test_stale_metrics_raise_an_alert(tmp_path: Path) -> None:
    # the series keeps being scraped (node_exporter re-reads an old file) but the run time stands still
    r = _test(tmp_path, [{
        "interval": "5m",
        "input_series": [{"series": 'gpusetup_last_run_timestamp_seconds{instance="node-c:9100",job="node"}',
                          "values": "0+0x200"}],
        "alert_rule_test": [
            {"eval_time": "13h", "alertname": "GpusetupMetricsStale", "exp_alerts": [
                {"exp_labels": {"severity": "warning", "instance": "node-c:9100", "job": "node"},
                 "exp_annotations": {
                     "summary": "gpusetup has not checked node-c:9100 for more than 12 hours",
                     "description": "The gpusetup-diagnose DaemonSet (or the cron job) stopped writing its "
                                    "textfile metrics."}}]},
        ],
    }])
    assert r.returncode == 0, r.stdout + r.stderr
