from gpusetup.model import Finding, Gpu, Machine, Severity
from gpusetup.report.fleet import FleetRow, fleet_json, fleet_table
from gpusetup.versions import Version


def _m(name: str, n: int, driver: str) -> Machine:
    m = Machine()
    m.gpus = [Gpu(vendor="nvidia", name=name) for _ in range(n)]
    m.driver.version = Version(driver)
    return m


def test_fleet_table_one_row_per_machine_one_column_per_finding_kind():
    rows = [
        FleetRow("node-a.json", _m("NVIDIA H100 80GB HBM3", 8, "590.48.01"), [Finding("xid-79", Severity.ERROR, "GPU fell off the bus", catalogue="F18")]),
        FleetRow("node-b.json", _m("NVIDIA H100 80GB HBM3", 8, "590.48.01"), []),
        FleetRow("node-c.json", _m("NVIDIA H100 80GB HBM3", 8, "580.95.05"), [
            Finding("xid-79", Severity.ERROR, "GPU fell off the bus", catalogue="F18"),
            Finding("persistence-off", Severity.INFO, "Persistence mode is off"),
        ]),
        FleetRow("broken.json", None, error="not JSON"),
    ]
    text = fleet_table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["machine", "GPUs", "driver", "worst", "F18"]
    row_a = next(line for line in lines if line.startswith("node-a.json"))
    row_b = next(line for line in lines if line.startswith("node-b.json"))
    assert "8× H100 80GB HBM3" in row_a and " E" in row_a
    assert row_b.split()[-2:] == ["·", "·"]
    assert "4 machines; 2 with warnings or errors; 1 unreadable." in text
    assert "F18        xid-79  — on 2 of 4" in text
    data = fleet_json(rows)
    assert data["columns"][0] == {"key": "F18", "id": "xid-79"}
    assert data["machines"][2]["findings"] == ["F18", "persistence-off"]
