#!/usr/bin/env python3
"""The frozen development / evaluation split of analyze's real reports, by thread.

Two collections of real threads are split together, so a thread never sits on both sides:

* the solved-report index, ``resources/solved/*.jsonl`` (one entry per thread URL);
* analyze's recorded corpus, ``tests/fixtures/recorded-issues/*.txt`` (thread URLs from its PROVENANCE.md;
  several excerpt files may come from one thread and then share its part).

``freeze`` runs ONCE: with the fixed seed below it shuffles the sorted canonical thread URLs and puts the first
``FRACTION`` of them in ``eval``, the rest in ``dev``, and writes ``resources/solved/split.json`` with the date and
the commit it was computed on. It refuses to run again. Rules and index changes are written looking at ``dev``
only; ``eval`` measures them.

Threads added later are never re-shuffled: ``part_of(url)`` answers from the frozen table, and for a URL not in
it from a hash of the canonical URL (sha256, first 8 hex digits as a fraction of 2**32, below ``FRACTION`` →
``eval``). ``update`` records such later threads under ``added`` with that hash-derived part, so the file
lists every thread, and the frozen table never changes. ``check`` verifies all of that.

Usage::

    python scripts/split_eval.py freeze          # once
    python scripts/split_eval.py update          # after adding threads to the index or the corpus
    python scripts/split_eval.py check           # exit 1 when a thread has no part or the frozen table moved
    python scripts/split_eval.py list --part eval [--kind corpus|index]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solved_index import SOLVED, canonical_url, load_entries  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPLIT = SOLVED / "split.json"
CORPUS = ROOT / "tests" / "fixtures" / "recorded-issues"
SEED = 20261127
FRACTION = 0.30  # at least 25 % must be eval; 30 % leaves room for the hash rule's drift on later threads
HASH_RULE = ("later threads: int(sha256(canonical_url).hexdigest()[:8], 16) / 2**32 < fraction → eval, "
             "else dev; canonical_url as in scripts/solved_index.py")


def corpus_threads(corpus: Path = CORPUS) -> dict[str, list[str]]:
    """Canonical thread URL → the recorded-issues files excerpted from it (from PROVENANCE.md's table)."""
    out: dict[str, list[str]] = {}
    text = (corpus / "PROVENANCE.md").read_text(encoding="utf-8")
    for m in re.finditer(r"^\|\s*`([^`]+\.txt)`\s*\|\s*(https?://\S+)", text, re.MULTILINE):
        name, url = m.group(1), m.group(2).rstrip(").,")
        if (corpus / name).exists():
            out.setdefault(canonical_url(url), []).append(name)
    return out


def index_threads(solved: Path = SOLVED) -> set[str]:
    return {canonical_url(e["url"]) for e in load_entries(solved)}


def hash_part(url: str, fraction: float = FRACTION) -> str:
    h = int(hashlib.sha256(canonical_url(url).encode("utf-8")).hexdigest()[:8], 16)
    return "eval" if h / 2**32 < fraction else "dev"


def shuffle_parts(urls: list[str], seed: int = SEED, fraction: float = FRACTION) -> dict[str, str]:
    """The frozen assignment: sorted URLs shuffled with ``seed``; the first ceil(fraction·n) are eval."""
    order = sorted(urls)
    random.Random(seed).shuffle(order)
    n_eval = math.ceil(fraction * len(order))
    return {u: ("eval" if i < n_eval else "dev") for i, u in enumerate(order)}


def load_split(path: Path = SPLIT) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def part_of(url: str, split: dict[str, Any] | None = None) -> str:
    """``eval`` or ``dev`` for any thread URL: the frozen or recorded part, else the hash rule."""
    split = split if split is not None else load_split()
    key = canonical_url(url)
    for table in ("threads", "added"):
        if key in split.get(table, {}):
            return str(split[table][key])
    return hash_part(key, float(split.get("fraction", FRACTION)))


def _head_commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _corpus_files(corpus: dict[str, list[str]], parts: dict[str, str]) -> dict[str, str]:
    return {name: parts[url] for url, names in sorted(corpus.items()) for name in sorted(names)}


def freeze(path: Path = SPLIT, today: str | None = None) -> dict[str, Any]:
    if path.exists():
        raise SystemExit(f"{path} exists: the split is frozen; use `update` for new threads")
    corpus = corpus_threads()
    index = index_threads()
    urls = sorted(set(corpus) | index)
    parts = shuffle_parts(urls)
    doc = {
        "about": "Frozen dev/eval split of analyze's real reports by thread (scripts/split_eval.py). Rules and index "
                 "changes are developed on dev; the eval threads measure them and must not be looked at while "
                 "writing rules.",
        "seed": SEED,
        "fraction": FRACTION,
        "frozen_on": today or _dt.date.today().isoformat(),
        "frozen_at_commit": _head_commit(),
        "rule_for_later_threads": HASH_RULE,
        "counts": {"threads": len(urls), "eval": sum(p == "eval" for p in parts.values()),
                   "index_threads": len(index), "corpus_threads": len(corpus)},
        "threads": parts,
        "added": {},
        "corpus_files": _corpus_files(corpus, parts),
    }
    _write(path, doc)
    return doc


def update(path: Path = SPLIT) -> list[str]:
    """Record threads that came after the freeze with their hash-derived part; the frozen table is untouched."""
    doc = load_split(path)
    corpus = corpus_threads()
    known = set(doc["threads"]) | set(doc.get("added", {}))
    new = sorted((set(corpus) | index_threads()) - known)
    added = dict(doc.get("added", {}))
    for url in new:
        added[url] = hash_part(url, float(doc["fraction"]))
    doc["added"] = dict(sorted(added.items()))
    parts = {**doc["threads"], **doc["added"]}
    doc["corpus_files"] = _corpus_files(corpus, parts)
    _write(path, doc)
    return new


def check(path: Path = SPLIT) -> list[str]:
    doc = load_split(path)
    problems = []
    frozen = doc["threads"]
    if shuffle_parts(list(frozen), int(doc["seed"]), float(doc["fraction"])) != frozen:
        problems.append("the frozen table is not the seeded shuffle of its own threads: it was edited by hand")
    for url, part in doc.get("added", {}).items():
        if url in frozen:
            problems.append(f"{url}: both frozen and added")
        if part != hash_part(url, float(doc["fraction"])):
            problems.append(f"{url}: added as {part}, the hash rule says {hash_part(url, float(doc['fraction']))}")
    known = set(frozen) | set(doc.get("added", {}))
    for url in sorted((index_threads() | set(corpus_threads())) - known):
        problems.append(f"{url}: no part yet (run `python scripts/split_eval.py update`)")
    n_eval = sum(p == "eval" for p in {**frozen, **doc.get("added", {})}.values())
    if n_eval < 0.25 * len(known):
        problems.append(f"only {n_eval} of {len(known)} threads are eval (< 25 %)")
    corpus_parts = _corpus_files(corpus_threads(), {**frozen, **doc.get("added", {})})
    if doc.get("corpus_files") != corpus_parts:
        problems.append("corpus_files is stale (run `update`)")
    return problems


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("freeze")
    sub.add_parser("update")
    sub.add_parser("check")
    p = sub.add_parser("list")
    p.add_argument("--part", choices=["eval", "dev"], required=True)
    p.add_argument("--kind", choices=["index", "corpus", "all"], default="all")
    a = ap.parse_args(argv)
    if a.cmd == "freeze":
        doc = freeze()
        print(f"froze {doc['counts']}", file=sys.stderr)
        return 0
    if a.cmd == "update":
        new = update()
        print(f"recorded {len(new)} later threads", file=sys.stderr)
        return 0
    if a.cmd == "check":
        problems = check()
        for x in problems:
            print(x)
        return 1 if problems else 0
    if a.cmd == "list":
        doc = load_split()
        parts = {**doc["threads"], **doc.get("added", {})}
        if a.kind == "corpus":
            for name, part in doc["corpus_files"].items():
                if part == a.part:
                    print(f"tests/fixtures/recorded-issues/{name}")
            return 0
        index = index_threads() if a.kind == "index" else None
        for url, part in sorted(parts.items()):
            if part == a.part and (index is None or url in index):
                print(url)
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
