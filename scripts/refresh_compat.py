#!/usr/bin/env python3
"""Refresh the compat data from the artifacts themselves, as a diff for a maintainer to review.

    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh                   # PyPI, index facts only
    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh --gpu-code         # + cuobjdump, newest series
    .venv/bin/python scripts/refresh_compat.py --out /tmp/refresh --history --tf-docs ~/src/tensorflow-docs
        # + every release since 2020 (the wheels tables) and TensorFlow's tested configurations from its docs
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

import subprocess  # noqa: E402

from gpusetup.compat import derive  # noqa: E402
from gpusetup.compat import history as H  # noqa: E402
from gpusetup.compat import refresh as R  # noqa: E402
from gpusetup.compat.indexcache import IndexCache  # noqa: E402
from gpusetup.paths import cache_dir  # noqa: E402
from gpusetup.runner import SubprocessRunner  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FILES = ("pytorch", "tensorflow", "jax", "host_compilers")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-url", default="https://pypi.org/simple/", help="PEP 503/691 index (default: PyPI)")
    ap.add_argument("--project", action="append", choices=sorted(derive.DERIVERS),
                    help="torch, tensorflow, jax or nvcc (the host compilers nvcc accepts; repeatable; default: all)")
    ap.add_argument("--series", default="", help="only these release series, comma-separated (e.g. 2.14,2.15)")
    ap.add_argument("--gpu-code", action="store_true",
                    help="run cuobjdump on the CUDA libraries inside the wheels (fetches those members by range)")
    ap.add_argument("--gpu-code-series", default="",
                    help="series to read GPU code for (default: the newest); torch series older than 2.0 may be named "
                         "(their arch_lists rows are proposed, their variants are not)")
    ap.add_argument("--max-library-mb", type=int, default=256,
                    help="largest library member to fetch for cuobjdump (torch's libtorch_cuda.so is ~500 MiB, "
                         "TensorFlow's libtensorflow_framework.so.2 ~160 MiB; default 256)")
    ap.add_argument("--cuobjdump", help="path to cuobjdump (default: PATH, then the nvidia-cuda-cuobjdump wheel)")
    ap.add_argument("--cuobjdump-legacy", metavar="PATH",
                    help="a CUDA 11.x cuobjdump, used where the current one refuses a library (sm_35/sm_37 cubins of "
                         "torch <= 2.0, torch 2.1-2.4's libtorch_cuda.so); e.g. usr/bin/cuobjdump of Ubuntu's "
                         "nvidia-cuda-toolkit 11.5.1 package")
    ap.add_argument("--data", type=Path, default=ROOT / "resources" / "compat", help="compat data to diff against")
    ap.add_argument("--out", type=Path, required=True, help="folder for compat.diff, facts.json, proposed/")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--history", action="store_true",
                    help="derive every release since 2020 of the three families (the wheels tables) from the index")
    ap.add_argument("--cache", type=Path, default=None,
                    help="cache folder for pages, metadata and wheel members (default: <cache dir>/refresh); a "
                         "second refresh reads only what is new")
    ap.add_argument("--tf-docs", type=Path, default=None,
                    help="a git checkout of github.com/tensorflow/docs: TensorFlow's tested configurations are read "
                         "from site/en/install/source.md and source_windows.md at its HEAD commit")
    args = ap.parse_args(argv)

    opts = derive.Options(
        index_url=args.index_url,
        series=[s for s in args.series.split(",") if s],
        min_series={"torch": "2.0", "tensorflow": "2.10"},
        gpu_code=args.gpu_code,
        gpu_code_series=[s for s in args.gpu_code_series.split(",") if s],
        max_library_bytes=args.max_library_mb << 20,
        cuobjdump=args.cuobjdump,
        cuobjdump_legacy=args.cuobjdump_legacy,
    )
    # one cache folder for pages, metadata, wheel members and what cuobjdump read: a second refresh reads only new files
    cache = IndexCache(R.Http(timeout=args.timeout, deadline=args.timeout * 20), args.cache or cache_dir() / "refresh")
    ctx = derive.Context(R.Http(timeout=args.timeout, deadline=args.timeout * 20), SubprocessRunner(), opts,
                         cache=cache)
    facts: list[derive.Fact] = []
    for project in args.project or sorted(derive.DERIVERS):
        try:
            facts += derive.DERIVERS[project](ctx)
        except R.RefreshError as exc:
            ctx.problems.append(f"{project}: {exc}")
    before = {n: json.loads((args.data / f"{n}.json").read_text(encoding="utf-8")) for n in FILES}
    after, changes = derive.propose(before, facts)
    hist = None
    if args.history:
        hist = H.derive(H.Reader(cache, args.index_url))
        for fam in H.FAMILIES:
            after[fam]["tables"]["wheels"] = H.table(hist, fam)
            changes.append(f"wheels table of {fam}: {len(hist.rows[fam])} releases")
        ctx.problems += hist.problems
        (args.out).mkdir(parents=True, exist_ok=True)
        (args.out / "history.json").write_text(H.dumps(hist), encoding="utf-8")
    if args.tf_docs:
        changes += tf_tested_configs(after["tensorflow"], args.tf_docs, derive.Options().today)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "proposed").mkdir(exist_ok=True)
    for name, doc in after.items():
        (args.out / "proposed" / f"{name}.json").write_text(derive.dump(doc), encoding="utf-8")
    diff = derive.unified_diff(before, after)
    (args.out / "compat.diff").write_text(diff, encoding="utf-8")
    report = derive.facts_report(facts, ctx.problems, ctx)
    (args.out / "facts.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(facts)} facts from {args.index_url} ({ctx.http.requests} requests, {ctx.http.bytes >> 10} KiB; "
          f"{ctx.reads['libraries']} CUDA libraries read by cuobjdump, {ctx.reads['cached']} from the cache)")
    if hist is not None:
        st = hist.stats
        print(f"history: {st['http_requests']} requests ({st['not_modified']} not modified), {st['bytes'] >> 10} KiB; "
              f"{st['metadata']} metadata and {st['member']} wheel members read, {st['cached']} from the cache")
    for line in changes:
        print("  " + line)
    for p in ctx.problems:
        print("  could not read: " + p)
    print(f"review {args.out / 'compat.diff'} ({len(diff.splitlines())} lines); nothing in {args.data} was changed")
    return 0


def tf_tested_configs(doc: dict, checkout: Path, today: str) -> list[str]:
    """Replace tensorflow/tested_configs (Linux) and tested_configs_windows with the GPU tables of TensorFlow's
    docs at the checkout's HEAD; the rows keep the commit they were read at."""
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    out = []
    for table, path, section in (("tested_configs", "site/en/install/source.md", "### Linux"),
                                 ("tested_configs_windows", "site/en/install/source_windows.md",
                                  "## Tested build configurations")):
        text = subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:{path}"], capture_output=True, text=True,
                              check=True).stdout
        url = f"https://github.com/tensorflow/docs/blob/{commit}/{path}"
        rows = H.tested_configs(text, section)
        old = {r["version"]: r for r in doc["tables"].get(table, {}).get("rows", [])}
        released = [w["version"] for w in doc["tables"].get("wheels", {}).get("rows", []) if w["project"] == "tensorflow"]
        for r in rows:
            ours = [v for v in released if v.split(".")[:2] == r["version"].split(".")[:2]]
            r["latest_known"] = (max(ours, key=R.version_key) if ours
                                 else old.get(r["version"], {}).get("latest_known", r["version"] + ".0"))
            r["verified"] = True
            r["provenance"] = {"source": url, "how": "the GPU table of TensorFlow's tested build configurations",
                               "date": today, "fields": ["cuda", "cudnn", "python_max", "python_min"]}
        doc["tables"][table] = {
            "source": [url], "checked": today, "verified": True,
            "note": "GPU tested build configurations (Python, cuDNN, CUDA), read by scripts/refresh_compat.py --tf-docs "
                    "from TensorFlow's docs at the commit in the source URL.",
            "rows": rows,
        }
        out.append(f"{table}: {len(rows)} rows from {url}")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
