"""One rule per failure F01–F35 (code) and F36 onwards (data: ``resources/diagnostics/``, read by ``data.py``) of the catalogue in ``reference/diagnostics.md`` Part 2.

Importing this package registers them (``gpusetup.rules`` imports it). Grouped by layer as in the
catalogue; F09 and F28 live in ``gpusetup.rules.basic`` with the other first-line checks.
"""

from __future__ import annotations

from gpusetup.rules.catalogue import (  # noqa: F401 - registers rules
    compat,
    containers,
    data,
    ecosystem,
    extensions,
    hardware,
    kernel,
    python,
)
