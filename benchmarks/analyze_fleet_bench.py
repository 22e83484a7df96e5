"""Wall time of `gpusetup analyze --json` over a fleet of 1,000 whole-machine reports.

The reports are the five recorded demo machines (resources/demo/*.json) written as gpusetup JSON reports
(machine + findings + plan), each repeated 200 times under its own file name, so the input is real recorded
data, not invented output. Goal (issue 13): ≤ 4 s for 1,000 reports (12.9 s before from_dict cached its
type hints).

Usage (from the repository root):
    .venv/bin/python benchmarks/analyze_fleet_bench.py [--reports 1000] [--runs 3] [--against OTHER_CHECKOUT]
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


def _argv(repo: Path, out: Path, paths: list[str]) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(repo)!r}); "
            "from gpusetup.cli import main; raise SystemExit(main(sys.argv[1:]))", "analyze", "--json", "-o",
            str(out), *paths]


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code)."""
    before = os.times()
    start = time.perf_counter()
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system), rc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--against", type=Path, help="another checkout, timed in alternating pairs (A B A B ...)")
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load average {load:.1f} at start")
    # as installed: with bytecode caches (PYTHONDONTWRITEBYTECODE would make every run compile every module)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_fleet(Path(tmp), args.reports)
        a = _argv(args.repo, Path(tmp) / "out.json", paths)
        b = _argv(args.against, Path(tmp) / "out-b.json", paths) if args.against else None
        _timed(a, env)  # warm-up: writes the bytecode caches, fills the file cache
        if b:
            _timed(b, env)
        runs, other = [], []
        for _ in range(args.runs):
            runs.append(_timed(a, env))
            if b:
                other.append(_timed(b, env))
        machines = len(json.loads((Path(tmp) / "out.json").read_text(encoding="utf-8"))["machines"])
    med = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"gpusetup analyze --json, {args.reports} reports: median {med:.2f} s wall, {cpu:.2f} s CPU (min "
          f"{min(r[0] for r in runs):.2f}, max {max(r[0] for r in runs):.2f}) over {args.runs} runs; exit "
          f"{runs[-1][2]}; {machines} machines in the output; load average {load_end:.1f} at the end")
    if other:
        ratio_wall = statistics.median(x[0] / y[0] for x, y in zip(runs, other, strict=True))
        ratio_cpu = statistics.median(x[1] / y[1] for x, y in zip(runs, other, strict=True))
        print(f"  {args.against}: median {statistics.median(r[0] for r in other):.2f} s wall, "
              f"{statistics.median(r[1] for r in other):.2f} s CPU; median ratio of the {args.runs} alternating "
              f"pairs: wall {ratio_wall:.2f}, CPU {ratio_cpu:.2f}")
    print(f"  goal (≤ 4 s for 1,000 reports): {'met' if med <= 4 * args.reports / 1000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
