"""Turn a :class:`~gpusetup.model.Report` into text people and programs read.

``render(report, fmt)`` is the one entry point used by the CLI, the wizard ("copy report") and the support
bundle. Identifiers (GPU UUIDs, serials, host name) are masked unless ``show_ids`` is set: a report gets
pasted into public issue trackers.
"""

from __future__ import annotations

import json

from gpusetup.model import Report, to_dict
from gpusetup.report.privacy import mask_identifiers

FORMATS: tuple[str, ...] = ("text", "json", "markdown", "html")


def render(report: Report, fmt: str = "text", *, color: bool = False, show_ids: bool = False,
           language: str | None = None) -> str:
    """``report`` in ``fmt``. ``language`` (default: the language set for printed output) words the text report and
    the findings of the Markdown and HTML reports; JSON carries the codes and the English words."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    shown = report if show_ids else mask_identifiers(report)
    if fmt == "json":
        return json.dumps(to_dict(shown), indent=2, ensure_ascii=False) + "\n"
    # lazy: each renderer is imported when its format is asked for: together they cost `diagnose --json` 15-39 ms
    # of its start-up (python -X importtime; tests/unit/test_diagnose_cli.py keeps them out).
    if fmt == "text":
        from gpusetup.report import text  # lazy: see above

        return text.render_text(shown, color=color, language=language)
    if fmt == "markdown":
        from gpusetup.report import markdown  # lazy: see above

        return markdown.render(shown, language)
    from gpusetup.report import html  # lazy: see above

    return html.render(shown, language)


def available_formats() -> list[str]:
    return list(FORMATS)
