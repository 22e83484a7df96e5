"""How well `gpusetup analyze` names the cause of real reports it was not written from (issue 22).

Inputs are the real threads of the frozen split (resources/solved/split.json, scripts/split_eval.py):

* the solved-report index (resources/solved/*.jsonl): each thread's verbatim error lines are analysed as a user
  would paste them; the thread's own entry is left out of the similar-report search (leave-one-out), so a
  thread is never found by itself;
* analyze's recorded corpus (tests/fixtures/recorded-issues/*.txt): each excerpt is analysed as it is.

A report's cause counts as **named** when a rule finding of its family fires (catalogue code → families, see
``CATALOGUE_FAMILIES``) or one of the similar reports shown (at most 3) is of its family. **Traps** are real texts
that must not alarm: the index's ``benign-log`` and ``device-side-assert`` threads (harmless notices, program
errors), the corpus's ``NEG`` excerpts and the trap fixtures in tests/fixtures/traps/; a trap is a **false alarm**
when a finding at warning or error fires (for a ``NEG-Fnn`` excerpt: when entry Fnn fires).

The figure that counts is the EVALUATION part's; rules and the index are tuned on ``--part dev`` only.

Usage (from the repository root):
    .venv/bin/python benchmarks/analyze_eval.py [--part eval|dev|all] [--with-title] [--dev-index-only]
                                                [--show-misses] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from split_eval import CORPUS, load_split, part_of  # noqa: E402

from gpusetup.analyze import analyze_text  # noqa: E402
from gpusetup.analyze.similar import CATALOGUE_FAMILIES, finding_families, solved_index  # noqa: E402
from gpusetup.model import Severity  # noqa: E402

TRAP_FAMILIES = {"benign-log", "device-side-assert"}
TRAPS = ROOT / "tests" / "fixtures" / "traps"


def _named(analysis: Any, families: set[str]) -> tuple[bool, bool]:
    """(a rule finding names one of these families, a similar report shown is of one of them)."""
    by_rule = any(families & finding_families(f.catalogue, f.id) for f in analysis.findings
                  if f.id != "problem-not-recognised")
    by_similar = any(s.report.family in families for s in analysis.similar)
    return by_rule, by_similar


def _alarm(analysis: Any, only: str | None = None) -> list[str]:
    return [f"{f.catalogue or ''} {f.id}".strip() for f in analysis.findings
            if f.severity.rank >= Severity.WARNING.rank and (only is None or f.catalogue == only)]


def evaluate(part: str, *, with_title: bool, dev_index_only: bool) -> dict[str, Any]:
    split = load_split()
    idx = solved_index()
    eval_urls = {r.url for r in idx.reports if part_of(r.url, split) == "eval"}
    rows: list[dict[str, Any]] = []
    traps: list[dict[str, Any]] = []
    for r in idx.reports:
        where = part_of(r.url, split)
        if part != "all" and where != part:
            continue
        text = "\n".join(([r.title] if with_title else []) + list(r.signature))
        exclude = {r.url} | (eval_urls if dev_index_only else set())
        a = analyze_text(text, name=r.url, exclude_similar=exclude)
        if r.family in TRAP_FAMILIES:
            traps.append({"what": r.url, "family": r.family, "part": where, "alarms": _alarm(a)})
            continue
        by_rule, by_similar = _named(a, {r.family})
        rows.append({"what": r.url, "kind": "index", "family": r.family, "part": where, "rule": by_rule,
                     "similar": by_similar, "shown": [(s.report.family, round(s.closeness, 2)) for s in a.similar],
                     "findings": [f"{f.catalogue or ''} {f.id}".strip() for f in a.findings]})
    corpus_parts: dict[str, str] = split.get("corpus_files", {})
    for path in sorted(CORPUS.glob("*.txt")):
        where = corpus_parts.get(path.name, "dev")
        if part != "all" and where != part:
            continue
        code = path.name.split("__", 1)[0]
        text = path.read_text(encoding="utf-8")
        a = analyze_text(text, name=path.name, exclude_similar=eval_urls if dev_index_only else set())
        if code.startswith("NEG"):
            only = code.split("-", 1)[1] if "-" in code else None
            traps.append({"what": path.name, "family": code, "part": where,
                          "alarms": _alarm(a, only) if only else []})
            continue
        by_rule, by_similar = _named(a, CATALOGUE_FAMILIES.get(code, set()))
        rows.append({"what": path.name, "kind": "corpus", "family": code, "part": where, "rule": by_rule,
                     "similar": by_similar, "shown": [(s.report.family, round(s.closeness, 2)) for s in a.similar],
                     "findings": [f"{f.catalogue or ''} {f.id}".strip() for f in a.findings]})
    for path in sorted(TRAPS.glob("*.txt")) if TRAPS.is_dir() else []:
        a = analyze_text(path.read_text(encoding="utf-8"), name=path.name)
        traps.append({"what": path.name, "family": "trap-fixture", "part": "fixture", "alarms": _alarm(a)})
    return {"rows": rows, "traps": traps}


def summary(result: dict[str, Any]) -> dict[str, Any]:
    rows, traps = result["rows"], result["traps"]
    n = len(rows)
    named = sum(1 for r in rows if r["rule"] or r["similar"])
    out = {
        "reports": n,
        "named": named,
        "named_rate": named / n if n else 0.0,
        "named_by_rule": sum(1 for r in rows if r["rule"]),
        "named_by_similar_only": sum(1 for r in rows if r["similar"] and not r["rule"]),
        "index_reports": sum(1 for r in rows if r["kind"] == "index"),
        "index_named": sum(1 for r in rows if r["kind"] == "index" and (r["rule"] or r["similar"])),
        "corpus_reports": sum(1 for r in rows if r["kind"] == "corpus"),
        "corpus_named": sum(1 for r in rows if r["kind"] == "corpus" and (r["rule"] or r["similar"])),
        "traps": len(traps),
        "false_alarms": sum(1 for t in traps if t["alarms"]),
    }
    out["false_alarm_rate"] = out["false_alarms"] / len(traps) if traps else 0.0
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("eval", "dev", "all"), default="eval")
    ap.add_argument("--with-title", action="store_true",
                    help="give each index thread's title with its error lines (the reporter's own words)")
    ap.add_argument("--dev-index-only", action="store_true",
                    help="search only the dev part of the index (stricter: no other evaluation thread can help)")
    ap.add_argument("--show-misses", action="store_true", help="list the reports whose cause was not named")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    result = evaluate(args.part, with_title=args.with_title, dev_index_only=args.dev_index_only)
    s = summary(result)
    s["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps({"part": args.part, "with_title": args.with_title, "dev_index_only": args.dev_index_only,
                          "summary": s, **result}, indent=1))
        return 0
    print(f"part {args.part}{' (+titles)' if args.with_title else ''}"
          f"{' (dev index only)' if args.dev_index_only else ''}: cause named in {s['named']}/{s['reports']} reports "
          f"= {100 * s['named_rate']:.1f} % (rules {s['named_by_rule']}, similar reports only "
          f"{s['named_by_similar_only']}); index threads {s['index_named']}/{s['index_reports']}, corpus excerpts "
          f"{s['corpus_named']}/{s['corpus_reports']}")
    print(f"traps: {s['false_alarms']} false alarms in {s['traps']} = {100 * s['false_alarm_rate']:.1f} %"
          f" ({s['seconds']} s)")
    fams: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for r in result["rows"]:
        fams[r["family"]] += 1
        hits[r["family"]] += bool(r["rule"] or r["similar"])
    print("per family (named/reports): " + ", ".join(f"{f} {hits[f]}/{n}" for f, n in sorted(fams.items())))
    for t in result["traps"]:
        if t["alarms"]:
            print(f"  FALSE ALARM {t['what']}: {', '.join(t['alarms'])}")
    if args.show_misses:
        for r in result["rows"]:
            if not (r["rule"] or r["similar"]):
                print(f"  miss [{r['family']}] {r['what']}: shown {r['shown']} findings {r['findings']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

