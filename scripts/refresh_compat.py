#!/usr/bin/env python3
"""Refresh the compat data from the artifacts themselves, as a diff for a maintainer to review.

    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh                   # PyPI, index facts only
    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh --gpu-code         # + cuobjdump, newest series
    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh --gpu-code --gpu-code-series 2.14,2.15 \\
        --project torch --max-library-mb 1024
    git apply /tmp/refresh/compat.diff    # after reading it

Writes into --out: ``compat.diff`` (unified diff against resources/compat), ``facts.json`` (every derived
fact with its source URL, how it was derived and the date, plus what could not be read) and ``proposed/``
(the full proposed files). It never edits resources/compat. See the README's maintainer section.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpusetup.compat import derive  # noqa: E402
from gpusetup.compat import refresh as R  # noqa: E402
from gpusetup.runner import SubprocessRunner  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FILES = ("pytorch", "tensorflow", "jax")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-url", default="https://pypi.org/simple/", help="PEP 503/691 index (default: PyPI)")
    ap.add_argument("--project", action="append", choices=sorted(derive.DERIVERS),
                    help="torch, tensorflow or jax (repeatable; default: all three)")
    ap.add_argument("--series", default="", help="only these release series, comma-separated (e.g. 2.14,2.15)")
    ap.add_argument("--gpu-code", action="store_true",
                    help="run cuobjdump on the CUDA libraries inside the wheels (fetches those members by range)")
    ap.add_argument("--gpu-code-series", default="", help="series to read GPU code for (default: the newest)")
    ap.add_argument("--max-library-mb", type=int, default=256,
                    help="largest library member to fetch for cuobjdump (torch's libtorch_cuda.so is ~500 MiB, "
                         "TensorFlow's libtensorflow_framework.so.2 ~160 MiB; default 256)")
    ap.add_argument("--cuobjdump", help="path to cuobjdump (default: PATH, then the nvidia-cuda-cuobjdump wheel)")
    ap.add_argument("--data", type=Path, default=ROOT / "resources" / "compat", help="compat data to diff against")
    ap.add_argument("--out", type=Path, required=True, help="folder for compat.diff, facts.json, proposed/")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)

    opts = derive.Options(
        index_url=args.index_url,
        series=[s for s in args.series.split(",") if s],
        min_series={"torch": "2.0", "tensorflow": "2.10"},
        gpu_code=args.gpu_code,
        gpu_code_series=[s for s in args.gpu_code_series.split(",") if s],
        max_library_bytes=args.max_library_mb << 20,
        cuobjdump=args.cuobjdump,
    )
    ctx = derive.Context(R.Http(timeout=args.timeout), SubprocessRunner(), opts)
    facts: list[derive.Fact] = []
    for project in args.project or sorted(derive.DERIVERS):
        try:
            facts += derive.DERIVERS[project](ctx)
        except R.RefreshError as exc:
            ctx.problems.append(f"{project}: {exc}")
    before = {n: json.loads((args.data / f"{n}.json").read_text(encoding="utf-8")) for n in FILES}
    after, changes = derive.propose(before, facts)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "proposed").mkdir(exist_ok=True)
    for name, doc in after.items():
        (args.out / "proposed" / f"{name}.json").write_text(derive.dump(doc), encoding="utf-8")
    diff = derive.unified_diff(before, after)
    (args.out / "compat.diff").write_text(diff, encoding="utf-8")
    report = derive.facts_report(facts, ctx.problems, ctx)
    (args.out / "facts.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(facts)} facts from {args.index_url} ({ctx.http.requests} requests, {ctx.http.bytes >> 10} KiB)")
    for line in changes:
        print("  " + line)
    for p in ctx.problems:
        print("  could not read: " + p)
    print(f"review {args.out / 'compat.diff'} ({len(diff.splitlines())} lines); nothing in {args.data} was changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
