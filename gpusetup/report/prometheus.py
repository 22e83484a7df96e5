"""Prometheus text format for node_exporter's textfile collector: fleets watch gpusetup with Prometheus.

``render_prometheus(report)`` gives the exposition text; ``diagnose --format prometheus -o DIR/gpusetup.prom``
(or ``--textfile``) writes it atomically, so node_exporter (``--collector.textfile.directory=DIR``) never
reads half a file. No timestamps on samples (the textfile collector refuses them): the run time is the gauge
``gpusetup_last_run_timestamp_seconds``. GPU UUIDs, serials and the host name are never labels (node_exporter
adds ``instance``); names and versions are.

Metrics (all gauges), named as node_exporter and dcgm-exporter name theirs: ``*_build_info`` for the
program's own version, ``*_info`` for information carried as labels on a constant 1, ``*_ratio`` for a
value between 0 and 1, base units (``_bytes_per_second``, ``_seconds``):

- ``gpusetup_build_info{version}`` 1, ``gpusetup_driver_info{version, cuda_version}`` 1 (only with a driver),
  ``gpusetup_cuda_toolkit_info{version}`` 1 per toolkit found;
- ``gpusetup_gpus{vendor}`` the number of GPUs, ``gpusetup_gpu_info{gpu, vendor, name, compute_capability,
  pci_id}`` 1 per GPU;
- ``gpusetup_findings{severity}`` the number of findings of each severity (all four always present, so an
  alert can compare with 0), ``gpusetup_finding_info{id, severity, catalogue, gpu}`` 1 per finding,
  ``gpusetup_worst_severity`` 0 ok, 1 info, 2 warning, 3 error (as the exit code, plus info);
- with a self-test: ``gpusetup_selftest_bandwidth_bytes_per_second{test, device}``,
  ``gpusetup_selftest_flops{test, device}``, ``gpusetup_selftest_rated_ratio{test, device}`` (the result over the rated peak) and
  ``gpusetup_selftest_passed{test, device}`` (1 pass, 0 fail or warn; skipped tests are left out).
"""

from __future__ import annotations

import math
import time

from gpusetup import __version__
from gpusetup.escape import prom_label
from gpusetup.model import Report, Severity

_SEVERITIES = (Severity.OK, Severity.INFO, Severity.WARNING, Severity.ERROR)
# self-test units → (metric, factor to the base unit Prometheus wants)
_UNITS = {
    "GB/s": ("gpusetup_selftest_bandwidth_bytes_per_second", 1e9,
             "Measured transfer or memory bandwidth of a self-test, in bytes per second."),
    "TFLOP/s": ("gpusetup_selftest_flops", 1e12, "Measured floating-point rate of a self-test, in FLOP per second."),
    "GFLOP/s": ("gpusetup_selftest_flops", 1e9, "Measured floating-point rate of a self-test, in FLOP per second."),
}


def _escape(value: str) -> str:
    """A label value as the text format escapes it (control characters shown as text: no escape exists)."""
    return prom_label(value)


def _labels(**labels: object) -> str:
    items = [(k, str(v)) for k, v in labels.items() if v is not None and v != ""]
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in items) + "}"


def _num(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class _Out:
    def __init__(self) -> None:
        self.families: dict[str, tuple[str, list[str]]] = {}

    def add(self, metric: str, help_: str, value: float, **labels: object) -> None:
        fam = self.families.setdefault(metric, (help_, []))
        fam[1].append(f"{metric}{_labels(**labels)} {_num(value)}")

    def text(self) -> str:
        out: list[str] = []
        for name, (help_, samples) in self.families.items():
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} gauge")
            out += samples
        return "\n".join(out) + "\n"


def render_prometheus(report: Report, *, now: float | None = None) -> str:
    """The report as Prometheus text exposition (format 0.0.4) for the textfile collector."""
    m = report.machine
    o = _Out()
    o.add("gpusetup_build_info", "The gpusetup version that wrote these metrics.", 1, version=__version__)
    o.add("gpusetup_last_run_timestamp_seconds", "When gpusetup diagnose ran (Unix time).",
          round(time.time() if now is None else now, 3))
    if m.driver.version:
        o.add("gpusetup_driver_info", "The NVIDIA driver version and the highest CUDA version it supports.", 1,
              version=m.driver.version, cuda_version=m.driver.cuda_driver_version)
    for tk in m.cuda.toolkits:
        if tk.version:
            o.add("gpusetup_cuda_toolkit_info", "A CUDA toolkit found on the machine.", 1, version=tk.version)
    vendors: dict[str, int] = {}
    for g in m.gpus:
        vendors[g.vendor] = vendors.get(g.vendor, 0) + 1
    for vendor in sorted(vendors) or ["nvidia"]:
        o.add("gpusetup_gpus", "The number of GPUs gpusetup found, by vendor.", vendors.get(vendor, 0), vendor=vendor)
    for i, g in enumerate(m.gpus):
        o.add("gpusetup_gpu_info", "One GPU: its name, compute capability and PCI id.", 1,
              gpu=g.index if g.index is not None else i, vendor=g.vendor, name=g.name or g.pci.device_name,
              compute_capability=g.compute_capability, pci_id=g.pci.pci_id)
    counts = {s: 0 for s in _SEVERITIES}
    for f in report.findings:
        counts[f.severity] += 1
    for s in _SEVERITIES:
        o.add("gpusetup_findings", "The number of findings of each severity.", counts[s], severity=s.value)
    for f in report.findings:
        o.add("gpusetup_finding_info", "One finding of gpusetup diagnose (id and catalogue number as labels).", 1,
              id=f.id, severity=f.severity.value, catalogue=f.catalogue, gpu=f.gpu_index)
    o.add("gpusetup_worst_severity", "The worst finding: 0 ok, 1 info, 2 warning, 3 error.", report.worst.rank)
    if report.selftest is not None:
        _selftest(o, report)
    return o.text()


def _selftest(o: _Out, report: Report) -> None:
    st = report.selftest
    assert st is not None
    for ms in st.measurements:
        if ms.verdict == "skipped" or ms.value is None:
            continue
        labels = {"test": ms.name, "device": ms.device if ms.device is not None else st.device}
        unit = _UNITS.get(ms.unit)
        if unit:
            name, factor, help_ = unit
            o.add(name, help_, ms.value * factor, **labels)
        if ms.fraction is not None:
            o.add("gpusetup_selftest_rated_ratio", "A self-test result divided by the rated peak (0 to 1 and above).",
                  round(ms.fraction, 4), **labels)
        if ms.verdict in ("pass", "warn", "fail"):
            o.add("gpusetup_selftest_passed", "1 when the self-test met its expectation, 0 when it did not.",
                  1 if ms.verdict == "pass" else 0, **labels)
