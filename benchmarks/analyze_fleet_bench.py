"""Wall time of `gpusetup analyze --json` over a fleet of 1,000 whole-machine reports.

The reports are the five recorded demo machines (resources/demo/*.json) written as gpusetup JSON reports
(machine + findings + plan), each repeated 200 times under its own file name, so the input is real recorded
data, not invented output. Goal (issue 13): ≤ 4 s for 1,000 reports (12.9 s before from_dict cached its
type hints).

Usage (from the repository root):
    .venv/bin/python benchmarks/analyze_fleet_bench.py [--reports 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpusetup.compat.resolver import resolve
from gpusetup.model import Machine, Report, from_dict, to_dict
from gpusetup.resources import resource
from gpusetup.rules import evaluate


def write_fleet(directory: Path, count: int) -> list[str]:
    docs = []
    for demo in sorted(resource("demo").glob("*.json")):
        m = from_dict(Machine, json.loads(demo.read_text(encoding="utf-8"))["machine"])
        docs.append(json.dumps(to_dict(Report(machine=m, findings=evaluate(m), plans=resolve(m, ["pytorch"])))))
    paths = []
    for i in range(count):
        p = directory / f"node-{i:04d}.json"
        p.write_text(docs[i % len(docs)], encoding="utf-8")
        paths.append(str(p))
    return paths


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load average {load:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_fleet(Path(tmp), args.reports)
        # --repo: time another checkout (e.g. main before a change) with the same reports
        argv = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(args.repo)!r}); "
                "from gpusetup.cli import main; raise SystemExit(main(sys.argv[1:]))", "analyze", "--json", "-o", str(Path(tmp) / "out.json"), *paths]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            times.append(time.perf_counter() - start)
        machines = len(json.loads((Path(tmp) / "out.json").read_text(encoding="utf-8"))["machines"])
    med = statistics.median(times)
    print(f"gpusetup analyze --json, {args.reports} reports: median {med:.2f} s (min {min(times):.2f}, "
          f"max {max(times):.2f}) over {args.runs} runs; exit {rc}; {machines} machines in the output")
    print(f"  goal (≤ 4 s for 1,000 reports): {'met' if med <= 4 * args.reports / 1000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
