"""Wall time and peak memory of `gpusetup diagnose --json`, beside `python -m torch.utils.collect_env`.

collect_env is what support teams ask for today; we must be at least 5x faster while reporting more.
Targets (issue 2): median under 0.6 s and under 60 MB peak RSS on a 2-core machine without a GPU.

Usage (from the repository root):
    .venv/bin/python benchmarks/diagnose_bench.py [--runs 7] [--no-collect-env] [--against DIR] [--command bundle]

--against DIR alternates with another checkout's gpusetup (a folder holding gpusetup/ and resources/, e.g.
`git archive b069057 gpusetup resources | tar -x -C DIR`), pair by pair, to compare start-up before and after.

collect_env runs in its own venv with the CPU build of torch (benchmarks/out/torch-venv), created on the
first run: `pip install torch` from the CPU wheel index (or from a local wheel/constraint the machine's pip
is configured with).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"


def measure(argv: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[list[float], list[float], int]:
    """Run argv `runs` times; return wall seconds, peak RSS MB per run, and the last exit code."""
    times, rss = [], []
    rc = 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        rss.append(usage.ru_maxrss / 1024)  # Linux: KiB
        rc = os.waitstatus_to_exitcode(status)
        proc.returncode = rc
    return times, rss, rc


def tree_argv(tree: Path, command: list[str]) -> list[str]:
    """Run gpusetup from the source folder ``tree``, not from the installed (editable) package."""
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
            f"sys.path.insert(0, {str(tree)!r}); from gpusetup.cli import main; sys.exit(main({command!r}))")
    return [sys.executable, "-c", code]


def torch_venv() -> Path | None:
    venv = OUT / "torch-venv"
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
        return py
    print("creating a venv with the CPU build of torch for collect_env (once) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # Prefer a CPU wheel already available to this machine's pip; fall back to the CPU index.
    for extra in ([], ["--index-url", "https://download.pytorch.org/whl/cpu"]):
        r = subprocess.run([py, "-m", "pip", "install", "-q", "torch==2.13.0" if not extra else "torch", *extra])
        if r.returncode == 0:
            return py
    print("could not install torch; skipping collect_env", file=sys.stderr)
    return None


def summary(name: str, times: list[float], rss: list[float]) -> str:
    return (
        f"{name:<34} median {statistics.median(times):6.3f} s  "
        f"(min {min(times):.3f}, max {max(times):.3f})  peak RSS median {statistics.median(rss):5.1f} MB"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-collect-env", action="store_true")
    ap.add_argument("--against", type=Path, metavar="DIR", help="alternate with the gpusetup in this source folder")
    ap.add_argument("--command", default="diagnose --json", help="with --against: the command to compare")
    ap.add_argument("--no-pyc", action="store_true",
                    help="with --against: no bytecode caches (every run compiles, as in a sandbox with "
                         "PYTHONDONTWRITEBYTECODE); by default both trees use written caches, as pip's install does")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, load average {load:.1f} at start")
    if args.against:
        return against(args.against, args.command.split(), args.runs, load, args.no_pyc)
    gp = [sys.executable, "-m", "gpusetup", "diagnose", "--json"]
    ce = None
    if not args.no_collect_env:
        py = torch_venv()
        ce = [str(py), "-m", "torch.utils.collect_env"] if py else None
    measure(gp, 1)  # warm the file cache, like a second invocation would be
    if ce:
        measure(ce, 1)
    # Alternate A/B runs so that a machine whose load drifts during the benchmark moves both alike.
    t, r, ct, cr = [], [], [], []
    rc = 0
    for _ in range(args.runs):
        t1, r1, rc = measure(gp, 1)
        t += t1
        r += r1
        if ce:
            t2, r2, _ = measure(ce, 1)
            ct += t2
            cr += r2
    print(summary("gpusetup diagnose --json", t, r) + f"  exit {rc}")
    ok = statistics.median(t) < 0.6 and statistics.median(r) < 60
    print(f"  targets (median < 0.6 s, < 60 MB): {'met' if ok else 'NOT met'}")
    if ce:
        print(summary("python -m torch.utils.collect_env", ct, cr))
        ratios = sorted(b / a for a, b in zip(t, ct, strict=True))
        print(f"  gpusetup is {statistics.median(ratios):.1f}x faster, median of {len(ratios)} A/B pairs "
              f"(range {ratios[0]:.1f}x-{ratios[-1]:.1f}x; target: at least 5x)")
    return 0


def against(other: Path, command: list[str], runs: int, load: float, no_pyc: bool) -> int:
    import shutil

    a, b = tree_argv(ROOT, command), tree_argv(other.resolve(), command)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    # Both trees alike: gpusetup's caches written by the warm-up run, or removed and not written again (the
    # standard library and site-packages keep theirs, as in a sandbox with PYTHONDONTWRITEBYTECODE).
    if no_pyc:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for tree in (ROOT, other):
            for cache in (tree / "gpusetup").rglob("__pycache__"):
                shutil.rmtree(cache)
    measure(a, 1, env)
    measure(b, 1, env)
    ta, ra, tb, rb = [], [], [], []
    for _ in range(runs):  # pairs, so load drifting during the run moves both alike
        t1, r1, rc_a = measure(a, 1, env)
        t2, r2, rc_b = measure(b, 1, env)
        ta += t1
        ra += r1
        tb += t2
        rb += r2
    name = "gpusetup " + " ".join(command)
    print(summary(f"{name} (this tree)", ta, ra) + f"  exit {rc_a}")
    print(summary(f"{name} ({other})", tb, rb) + f"  exit {rc_b}")
    diffs = sorted(x - y for x, y in zip(ta, tb, strict=True))
    print(f"  this tree minus the other: median {statistics.median(diffs) * 1000:+.0f} ms over {runs} pairs")
    end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    pyc = "no bytecode caches: every run compiles" if no_pyc else "bytecode caches written"
    print(f"  load average {load:.1f} at start, {end:.1f} at end; {pyc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
