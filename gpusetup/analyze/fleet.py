"""Many reports or bundles at once (a fleet): one row per machine instead of one merged diagnosis."""

from __future__ import annotations

from pathlib import Path

from gpusetup.analyze import analyze_parts
from gpusetup.analyze.readers import UnreadableInput, read_path
from gpusetup.report.fleet import FleetRow

_WHOLE_MACHINE = {"gpusetup-report", "gpusetup-bundle"}


def fleet_rows(paths: list[str]) -> list[FleetRow] | None:
    """Per-machine findings when every readable input is a whole machine (our JSON report or bundle);
    None when the inputs are pieces of one machine's story (logs, tracebacks), which analyze merges."""
    if len(paths) < 2 or "-" in paths:
        return None
    rows: list[FleetRow] = []
    for p in paths:
        label = Path(p).name
        try:
            parts = read_path(p)
        except UnreadableInput as exc:
            rows.append(FleetRow(label, None, error=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a hostile file stops its own row, not the fleet
            rows.append(FleetRow(label, None, error=f"{label}: could not be read ({type(exc).__name__})"))
            continue
        analysis = analyze_parts(parts, one_input=p)
        whole = any(k in _WHOLE_MACHINE for i in analysis.inputs for k in i.kinds)
        if not whole:
            if Path(p).suffix.lower() in (".json", ".zip"):
                rows.append(FleetRow(label, None, error=f"{label} is not a gpusetup report or bundle"))
                continue
            return None  # a log or a message: part of one machine's story, not a fleet
        rows.append(FleetRow(label, analysis.machine, analysis.findings))
    return rows if sum(1 for r in rows if r.error is None) >= 2 else None
