"""Markdown and HTML reports: content, escaping, self-containedness, and a real browser rendering."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from gpusetup.cli import main
from gpusetup.model import Finding, Machine, Report, Severity
from gpusetup.report import render

from .sample import A100_SERIAL, A100_UUID, sample_report


def test_markdown_has_findings_first_and_collapsible_raw(tmp_path):
    report, _ = sample_report(tmp_path)
    md = render(report, "markdown")
    assert md.index("### Findings") < md.index("### GPUs")
    assert "🔴 **Error**: GPU 0 has a memory row waiting to be remapped `F21`" in md
    assert "NVIDIA A100-SXM4-80GB" in md
    assert "<details><summary>evidence</summary>" in md
    assert A100_UUID not in md and A100_SERIAL not in md
    assert "| matmul_fp32 | 17.9 TFLOP/s | 19.5 (92%) | pass: 92% of rated |" in md


def test_html_is_self_contained_and_escaped(tmp_path):
    report, _ = sample_report(tmp_path)
    report.findings.append(Finding("xss", Severity.WARNING, "<script>alert(1)</script>"))
    html = render(report, "html")
    assert html.startswith("<!doctype html>")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no external assets"
    assert "prefers-color-scheme: dark" in html
    assert 'class="finding error"' in html
    assert html.index("Findings") < html.index("GPUs (")
    assert 'aria-label="92% of rated"' in html  # the FP32 matmul bar
    assert A100_UUID not in html


def test_cli_formats(tmp_path, capsys):
    for fmt in ("markdown", "html"):
        out = tmp_path / f"r.{fmt}"
        assert main(["diagnose", "--format", fmt, "-o", str(out)]) in (0, 1, 2)
        assert out.stat().st_size > 200


def test_empty_report_renders_in_every_format():
    for fmt in ("text", "json", "markdown", "html"):
        assert "gpusetup" in render(Report(Machine()), fmt)


@pytest.mark.skipif(not shutil.which("chromium"), reason="Chromium is not installed (Debian package 'chromium'); the HTML screenshot check needs it")
def test_html_renders_in_headless_chromium(tmp_path):
    report, _ = sample_report(tmp_path)
    page = tmp_path / "report.html"
    page.write_text(render(report, "html"), encoding="utf-8")
    shot = tmp_path / "report.png"
    cmd = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri(),
    ]
    subprocess.run(cmd, capture_output=True, timeout=90)
    assert shot.exists(), "Chromium wrote no screenshot"
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000, "the page rendered (nearly) empty"
    shutil.copy(shot, tmp_path.parent / "report-html-screenshot.png")
