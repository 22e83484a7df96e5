"""Markdown and HTML of an analysis (gpusetup/analyze/output.py): what the input said is quoted through the escaping
layer of each format, so a hostile line cannot add markup, links or script."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from gpusetup.analyze import analyze_text
from gpusetup.analyze.output import render_html, render_markdown

HOSTILE = ("GPU: RTX 4090 <script>alert(1)</script> ```\n"
           "torch==2.3.1+cu121 [click](javascript:alert(1))\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device <img src=x>\n")


@pytest.mark.hostile
def test_markdown_quotes_the_input_as_text() -> None:
    md = render_markdown(analyze_text(HOSTILE), "en")
    html = MarkdownIt("commonmark").render(md)
    assert "<script>" not in html and "<img" not in html and 'href="javascript' not in html
    assert "RTX 4090" in md


@pytest.mark.hostile
def test_html_escapes_the_input() -> None:
    page = render_html(analyze_text(HOSTILE), "zh_CN")
    assert "<script>alert" not in page and "<img src=x>" not in page
    assert page.startswith("<!doctype html><html lang=zh-CN>")
