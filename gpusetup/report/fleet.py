"""A fleet table: one row per machine, one column per kind of finding, for teams that collect reports from
many nodes (for example with the generated Kubernetes DaemonSet running ``gpusetup diagnose --json``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gpusetup.model import Finding, Machine, Severity, to_dict

_MARK = {Severity.ERROR: "E", Severity.WARNING: "W", Severity.INFO: "i", Severity.OK: "·"}


@dataclass
class FleetRow:
    label: str  # file name or host pseudonym
    machine: Machine | None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None  # the input could not be read

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)


def _gpu_summary(m: Machine | None) -> str:
    if m is None:
        return "?"
    names = Counter((g.name or g.pci.device_name or g.vendor).replace("NVIDIA ", "") for g in m.gpus)
    return ", ".join(f"{n}× {name}" if n > 1 else name for name, n in names.most_common()) or "no GPU"


def _column_key(f: Finding) -> str:
    return f.catalogue or f.id


def fleet_columns(rows: list[FleetRow]) -> list[tuple[str, str]]:
    """(column key, title) for every kind of finding seen, the most widespread first."""
    seen: Counter[str] = Counter()
    titles: dict[str, str] = {}
    for row in rows:
        for key in {_column_key(f) for f in row.findings if f.severity is not Severity.OK}:
            seen[key] += 1
        for f in row.findings:
            titles.setdefault(_column_key(f), f.id)
    return [(key, titles[key]) for key, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]


def fleet_table(rows: list[FleetRow]) -> str:
    cols = fleet_columns(rows)
    header = ["machine", "GPUs", "driver", "worst", *[c for c, _ in cols]]
    table = [header]
    for row in rows:
        if row.error:
            table.append([row.label, "—", "—", "unreadable", *["?" for _ in cols]])
            continue
        worst: dict[str, Severity] = {}
        for f in row.findings:
            key = _column_key(f)
            if key not in worst or f.severity.rank > worst[key].rank:
                worst[key] = f.severity
        driver = str(row.machine.driver.version) if row.machine and row.machine.driver.version else "—"
        marks = [_MARK[worst[c]] if c in worst else "·" for c, _ in cols]
        table.append([row.label, _gpu_summary(row.machine), driver, row.worst.value, *marks])
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    widths[1] = min(widths[1], 28)
    lines = ["  ".join(cell[: widths[i]].ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    total = len(rows)
    bad = sum(1 for r in rows if not r.error and r.worst.rank >= Severity.WARNING.rank)
    lines.append("")
    lines.append(f"{total} machines; {bad} with warnings or errors; {sum(1 for r in rows if r.error)} unreadable.")
    if cols:
        lines.append("Columns (E error, W warning, i info, · not found):")
        for key, slug in cols:
            count = sum(1 for r in rows if any(_column_key(f) == key and f.severity is not Severity.OK for f in r.findings))
            lines.append(f"  {key:<10} {slug}  — on {count} of {total}")
    for r in rows:
        if r.error:
            lines.append(f"  {r.label}: {r.error}")
    return "\n".join(lines) + "\n"


def fleet_json(rows: list[FleetRow]) -> dict:
    cols = fleet_columns(rows)
    return {
        "columns": [{"key": k, "id": slug} for k, slug in cols],
        "machines": [
            {
                "label": r.label,
                "error": r.error,
                "gpus": _gpu_summary(r.machine),
                "driver": to_dict(r.machine.driver.version) if r.machine else None,
                "worst": r.worst.value,
                "findings": sorted({_column_key(f) for f in r.findings if f.severity is not Severity.OK}),
            }
            for r in rows
        ],
    }
