"""Rules that need more than the machine's facts: the self-test's measurements.

Some failures only show under load: a PCIe link that trains low only matters if copies are slow (F15),
broken peer-to-peer shows as P2P copies slower than staged ones (F35), and a GPU that computes wrong results
is a hardware fault (F16 family). These rules take the whole :class:`~gpusetup.model.Report`. They have their
own small registry; :func:`evaluate_report` runs the machine rules and these together.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from gpusetup.messages import msg
from gpusetup.model import Finding, Measurement, Report, Severity
from gpusetup.rules import evaluate, sort_findings
from gpusetup.rules._util import make

log = logging.getLogger("gpusetup.rules")

ReportRuleFn = Callable[[Report], list[Finding]]
_REPORT_RULES: dict[str, tuple[ReportRuleFn, str | None]] = {}


def report_rule(rule_id: str, catalogue: str | None = None) -> Callable[[ReportRuleFn], ReportRuleFn]:
    def deco(fn: ReportRuleFn) -> ReportRuleFn:
        _REPORT_RULES[rule_id] = (fn, catalogue)
        return fn

    return deco


def evaluate_report(report: Report) -> list[Finding]:
    """Machine rules plus report-level rules, most severe first. A crashing rule becomes an info finding."""
    return sort_findings(evaluate(report.machine) + evaluate_measurements(report))


def evaluate_measurements(report: Report) -> list[Finding]:
    """Only the report-level rules (over the self-test's measurements), most severe first."""
    findings: list[Finding] = []
    for rid, (fn, catalogue) in _REPORT_RULES.items():
        try:
            out = fn(report) or []
        except Exception as exc:  # noqa: BLE001 - a rule bug must not hide the report
            log.exception("report rule %s failed", rid)
            out = [Finding(id="rule-crashed", severity=Severity.INFO, title=f"gpusetup's check '{rid}' could not run",
                           detail=f"{type(exc).__name__}: {exc}. This is a bug in gpusetup, not your machine.")]
        for f in out:
            f.catalogue = f.catalogue or catalogue
        findings.extend(out)
    return sort_findings(findings)


def _bad(report: Report, pred: Callable[[Measurement], bool]) -> list[Measurement]:
    if report.selftest is None:
        return []
    return [m for m in report.selftest.measurements if pred(m) and m.verdict in ("warn", "fail")]


def _fmt(m: Measurement) -> str:
    s = f"{m.name}"
    if m.device is not None:
        s += f" (GPU {m.device})"
    if m.value is not None:
        s += f": {m.value:.3g} {m.unit}"
    if m.rated:
        s += f" of {m.rated:.3g} {m.unit} rated"
        if m.fraction is not None:
            s += f" ({m.fraction:.0%})"
    if m.reason:
        s += f" — {m.reason}"
    return s


@report_rule("pcie-bandwidth-low", catalogue="F15")
def pcie_bandwidth(report: Report) -> list[Finding]:
    bad = _bad(report, lambda m: m.name in ("h2d_pinned", "d2h_pinned"))
    if not bad:
        return []
    return [
        make(
            "pcie-bandwidth-low",
            Severity.WARNING,
            "Measured host↔GPU copy speed is well below what the PCIe link should give",
            "The self-test copied data between CPU and GPU and got a fraction of the link's rated speed. Data "
            "loading and multi-GPU exchange will be slower than they should be.",
            msg("fix.pcie-bandwidth-low"),
            [_fmt(m) for m in bad],
            gpu_index=bad[0].device,
        )
    ]


@report_rule("p2p-slow", catalogue="F35")
def p2p(report: Report) -> list[Finding]:
    bad = _bad(report, lambda m: "p2p" in m.name.lower() or "peer" in m.name.lower())
    if not bad:
        return []
    cmdline = report.machine.system.kernel_cmdline or ""
    return [
        make(
            "p2p-slow",
            Severity.WARNING,
            "GPU-to-GPU (peer-to-peer) copies failed or are slower than expected",
            "PCIe ACS or the IOMMU redirecting peer traffic makes direct GPU↔GPU copies crawl or hang; multi-GPU "
            "training with NCCL then freezes or runs slowly.",
            msg("fix.p2p-slow"),
            [_fmt(m) for m in bad] + ([f"kernel command line: {cmdline[:200]}"] if cmdline else []),
        )
    ]


@report_rule("gpu-computes-wrong-results", catalogue="F16")
def wrong_results(report: Report) -> list[Finding]:
    bad = [m for m in _bad(report, lambda m: m.name in ("matmul_fp32_correct", "matmul_repeat_bitexact"))
           if m.verdict == "fail"]
    if not bad:
        return []
    return [
        make(
            "gpu-computes-wrong-results",
            Severity.ERROR,
            "The GPU computed wrong or inconsistent results in the self-test",
            "The same matrix multiplication gave different results when repeated, or differed from the reference. "
            "That is a hardware fault (memory, overheating, unstable clocks or power), not a software setup problem.",
            msg("fix.gpu-computes-wrong-results"),
            [_fmt(m) for m in bad],
            gpu_index=bad[0].device,
        )
    ]
