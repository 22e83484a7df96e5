#!/usr/bin/env python3
"""Tooling for the index of solved real reports (``resources/solved/``).

The index is data: one JSON object a line in ``resources/solved/<family>.jsonl`` (schema:
``resources/schema/solved_report.schema.json``; families: ``resources/solved/families.json``). Each entry is a
public thread whose cause was resolved or clearly confirmed, with its error lines copied verbatim.

Sub-commands::

    check                     validate every entry (schema, family, unique URL, signature, Chinese style); exit 1 on a problem
    stats                     entries per family and component, and how many threads were reviewed and rejected
    normalise [LINE ...]      print the normalised form of error lines (stdin when none) -- what retrieval should match on
    candidates RESULTS.json…  turn saved results of the search tool (its JSON answer, saved as is) into a curation sheet:
                              one block per thread not yet reviewed, with the lines that look like errors offered as
                              signature candidates; the curator marks each block accepted (+) or rejected (-)
    ingest SHEET…             add the accepted blocks of curated sheets to the index (all or nothing), record every query
                              with its accepted and rejected threads in scripts/solved_sources/queries.jsonl
    drop URL REASON           take an accepted thread out again after a second look (e.g. its signature is prose, not an
                              error line): removed from its family file, recorded as rejected with REASON in the manifest;
                              its dev/eval part in split.json stays, so the split never moves

The sheet format (one block per thread; blank lines and ``#`` comments ignored)::

    @date 2026-11-27
    @query issues: CUDA driver version is insufficient for CUDA runtime version
    + https://github.com/owner/repo/issues/9
    t: the thread's title
    f: driver-too-old          (family, one of families.json)
    k: pytorch                 (component, optional)
    s: an error line copied exactly from the thread      (1-5 of them)
    c: the cause in English        cz: the cause in Simplified Chinese
    x: the fix in English          xz: the fix in Simplified Chinese
    e: the evidence that the thread resolved it
    - https://github.com/owner/repo/issues/10 unresolved   (a reviewed, rejected thread and why)

``candidates`` writes blocks starting with ``?`` and candidate lines as ``s?:``; ``ingest`` refuses a ``?`` block,
so nothing goes in unreviewed, and ignores ``s?:`` lines the curator did not turn into ``s:``.

The normaliser (:func:`normalise_signature`) is the one retrieval uses on both sides, on the index's signature lines
and on the error lines of a user's report: it is ``gpusetup.analyze.similar.normalise_signature`` itself.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python scripts/solved_index.py` from a checkout
    sys.path.insert(0, str(ROOT))
from gpusetup.analyze import similar as _similar  # noqa: E402 - after the checkout is on the path

SOLVED = ROOT / "resources" / "solved"
SCHEMA = ROOT / "resources" / "schema" / "solved_report.schema.json"
FAMILIES_SCHEMA = ROOT / "resources" / "schema" / "solved_families.schema.json"
SOURCES = ROOT / "scripts" / "solved_sources"
MANIFEST = SOURCES / "queries.jsonl"
NON_FAMILY_FILES = {"families.json", "split.json", "README.md"}

# ---------------------------------------------------------------------------------------------------------------
# URLs


def canonical_url(url: str) -> str:
    """The key two links to the same thread share: https, lower-case host, no fragment, query or trailing slash,
    and GitHub's ``/pull/N`` read as ``/issues/N`` (issues and pull requests share one number space)."""
    u = url.strip()
    u = re.sub(r"^http://", "https://", u)
    u = u.split("#", 1)[0]
    m = re.match(r"^(https://)([^/]+)(.*)$", u)
    if not m:
        return u
    host = m.group(2).lower()
    if host == "www.github.com":
        host = "github.com"
    path = m.group(3)
    path = path.split("?", 1)[0]  # no tracker or forum here names a thread by its query string
    path = path.rstrip("/")
    if host == "github.com":
        path = re.sub(r"^(/[^/]+/[^/]+)/pull/(\d+)(/.*)?$", r"\1/issues/\2", path)
        path = re.sub(r"^(/[^/]+/[^/]+)/issues/(\d+)/.*$", r"\1/issues/\2", path)
        path = path.lower()  # owner/name are case-insensitive on GitHub
    if host.endswith("stackoverflow.com") or host.endswith("stackexchange.com") or host == "superuser.com" \
            or host == "askubuntu.com" or host == "serverfault.com":
        path = re.sub(r"^/questions/(\d+)(/.*)?$", r"/questions/\1", path)  # the slug after the id is decoration
    return f"https://{host}{path}"


# ---------------------------------------------------------------------------------------------------------------
# Normalising error signatures

# The normaliser is the core's (gpusetup.analyze.similar): the index is written and searched with one definition.
normalise_signature = _similar.normalise_signature


# ---------------------------------------------------------------------------------------------------------------
# Chinese style (the parts of /work/shared/zh-glossary.md a program can check)

_CJK = "\u4e00-\u9fff"
_FULLWIDTH_PUNCT = "，。；：？！（）“”、"
_AVOID = ["你", "相容", "軟體", "软体", "硬體", "記憶體", "记忆体", "顯示卡", "显示卡", "程式", "網路", "預設", "設定",
          "檔案", "資料夾", "支援", "使用者", "伺服器", "資訊", "讯息", "透過", "登入", "快取", "頻寬", "频宽", "韌體", "韧体",
          "匯流排", "汇流排", "執行緒", "执行绪", "重新開機", "安全開機", "安全开机", "停用", "記錄檔", "套件", "轮子", "算力",
          "图形卡", "显卡内存", "GPU 内存", "驱动程式", "内显"]


def zh_style_problems(text: str) -> list[str]:
    """What breaks the glossary's mechanical rules: 你 instead of 您, avoided (Taiwan / literal) terms, no space
    between Chinese and Latin letters or digits, half-width punctuation next to Chinese, spaces next to full-width
    punctuation."""
    problems = []
    for term in _AVOID:
        if term in text:
            problems.append(f"avoid {term!r}")
    if not re.search(f"[{_CJK}]", text):
        problems.append("no Chinese text")
    for m in re.finditer(f"[{_CJK}][A-Za-z0-9`]|[A-Za-z0-9`][{_CJK}]", text):
        problems.append(f"no space between Chinese and Latin: {m.group(0)!r}")
    for m in re.finditer(f"[{_CJK}][,.;:!?()]|[,;:!?(][{_CJK}]", text):
        problems.append(f"half-width punctuation next to Chinese: {m.group(0)!r}")
    for m in re.finditer(f"\\s[{_FULLWIDTH_PUNCT}]|[{_FULLWIDTH_PUNCT}]\\s", text):
        problems.append(f"space next to full-width punctuation: {m.group(0)!r}")
    return problems


# ---------------------------------------------------------------------------------------------------------------
# Loading and checking


def load_families(solved: Path = SOLVED) -> dict[str, dict[str, str]]:
    data = json.loads((solved / "families.json").read_text(encoding="utf-8"))
    return dict(data["families"])


def family_files(solved: Path = SOLVED) -> list[Path]:
    return sorted(p for p in solved.glob("*.jsonl"))


def load_entries(solved: Path = SOLVED) -> list[dict[str, Any]]:
    """Every entry of the index, in file order (files by name)."""
    entries = []
    for path in family_files(solved):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path.name}:{n}: not JSON ({e})") from None
            entry["_file"] = path.name
            entries.append(entry)
    return entries


def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


# "RuntimeError:", "Traceback (most recent call last):", "ERROR:" -- a line that names no failure
_BARE_LABEL = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception|Warning)|ERROR|Error|Traceback \(most recent call last\)):?\s*$")


def entry_problems(entry: dict[str, Any], families: dict[str, Any], validator: Any | None = None) -> list[str]:
    """What is wrong with one entry (empty when nothing)."""
    validator = validator or _validator()
    bare = {k: v for k, v in entry.items() if not k.startswith("_")}
    problems = [f"schema: {'/'.join(map(str, e.absolute_path)) or '(entry)'}: {e.message[:160]}"
                for e in validator.iter_errors(bare)]
    fam = entry.get("family")
    if fam not in families:
        problems.append(f"unknown family {fam!r} (add it to families.json)")
    if "_file" in entry and entry["_file"] != f"{fam}.jsonl":
        problems.append(f"family {fam!r} lives in {entry['_file']}")
    for sig in entry.get("signature", []):
        if isinstance(sig, str) and not normalise_signature(sig).strip("<>nv "):
            problems.append(f"signature line says nothing once normalised: {sig!r}")
        elif isinstance(sig, str) and _BARE_LABEL.match(sig):
            problems.append(f"signature line is only a label, not the error: {sig!r}")
    for part in ("cause", "fix"):
        texts = entry.get(part) or {}
        if isinstance(texts, dict):
            if re.search(f"[{_CJK}]", str(texts.get("en", ""))):
                problems.append(f"{part}.en has Chinese text")
            problems += [f"{part}.zh_CN: {p}" for p in zh_style_problems(str(texts.get("zh_CN", "")))]
    return problems


def check(solved: Path = SOLVED, manifest_path: Path | None = None) -> list[str]:
    """Every problem in the index: per entry, duplicate URLs, files not sorted by URL, families without entries
    are fine (they are allowed to be empty), family files without a family. With ``manifest_path`` (the default
    index uses the real manifest), also a thread that is in the index but recorded as rejected for a reason other
    than 'dup' (a contradiction: seen again under another query, it must be recorded as a repeat)."""
    if manifest_path is None and solved == SOLVED:
        manifest_path = MANIFEST
    import jsonschema

    families = load_families(solved)
    jsonschema.Draft202012Validator(json.loads(FAMILIES_SCHEMA.read_text(encoding="utf-8"))).validate(
        json.loads((solved / "families.json").read_text(encoding="utf-8")))
    validator = _validator()
    problems = []
    seen: dict[str, str] = {}
    entries = load_entries(solved)
    for e in entries:
        where = f"{e['_file']}: {e.get('url')}"
        problems += [f"{where}: {p}" for p in entry_problems(e, families, validator)]
        key = canonical_url(str(e.get("url", "")))
        if key in seen:
            problems.append(f"{where}: duplicate of {seen[key]}")
        seen[key] = where
    for path in family_files(solved):
        if path.stem not in families:
            problems.append(f"{path.name}: no such family in families.json")
        urls = [json.loads(x)["url"] for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        if urls != sorted(urls):
            problems.append(f"{path.name}: entries not sorted by URL (run ingest, which rewrites files sorted)")
    if manifest_path is not None:
        for q in load_manifest(manifest_path):
            for r in q.get("rejected", []):
                if canonical_url(r["url"]) in seen and r.get("why") != "dup":
                    problems.append(f"manifest: {r['url']} is in the index but rejected as {r.get('why')!r} "
                                    f"under query {q.get('query')!r}")
    return problems


# ---------------------------------------------------------------------------------------------------------------
# The query manifest


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def reviewed_urls(manifest: Iterable[dict[str, Any]]) -> set[str]:
    out = set()
    for q in manifest:
        out.update(canonical_url(u) for u in q.get("accepted", []))
        out.update(canonical_url(r["url"]) for r in q.get("rejected", []))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Curation sheets

_KEYS = {"t": "title", "f": "family", "k": "component", "c": "cause_en", "cz": "cause_zh", "x": "fix_en",
         "xz": "fix_zh", "e": "evidence"}
_ERRORISH = re.compile(
    r"(error|Error|ERROR|failed|Failed|FAILED|cannot|can't|could not|Could not|not found|no kernel image|"
    r"undefined symbol|Exception|Traceback|fatal|Fatal|CUDA_ERROR|cuda runtime error|NCCL WARN|Xid|"
    r"insufficient|mismatch|not supported|unsupported|denied|unavailable|out of memory|OOM)")


@dataclass
class Block:
    mark: str  # '+' accepted, '-' rejected, '?' not yet reviewed
    url: str
    why: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    signature: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Query:
    corpus: str
    query: str
    date: str
    blocks: list[Block] = field(default_factory=list)


def parse_sheet(text: str, default_date: str | None = None) -> list[Query]:
    """The queries of a curation sheet with their blocks; raises ValueError naming the line of a malformed one."""
    queries: list[Query] = []
    date = default_date or _dt.date.today().isoformat()
    block: Block | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("@date "):
            date = line[6:].strip()
            continue
        if line.startswith("@query "):
            m = re.match(r"^@query (\w+): (.+)$", line)
            if not m:
                raise ValueError(f"line {n}: '@query <corpus>: <text>' expected")
            queries.append(Query(m.group(1), m.group(2).strip(), date))
            block = None
            continue
        m = re.match(r"^([+?-]) (https?://\S+)\s*(.*)$", line)
        if m:
            if not queries:
                raise ValueError(f"line {n}: a thread before any @query")
            block = Block(m.group(1), m.group(2), m.group(3).strip(), line=n)
            queries[-1].blocks.append(block)
            continue
        m = re.match(r"^(s\??|[a-z]{1,2}): ?(.*)$", line)
        if not m or block is None:
            raise ValueError(f"line {n}: cannot read {line[:60]!r}")
        key, value = m.group(1), m.group(2)
        if key == "s":
            block.signature.append(value.strip())
        elif key == "s?":
            continue
        elif key in _KEYS:
            if key in block.fields:
                raise ValueError(f"line {n}: {key}: given twice for {block.url}")
            block.fields[key] = value.strip()
        else:
            raise ValueError(f"line {n}: unknown key {key!r}")
    return queries


def clip_signature(line: str, limit: int = 200) -> str:
    """A long error line cut to a verbatim prefix of at most ``limit`` characters, ending at a word boundary."""
    line = line.strip()
    if len(line) <= limit:
        return line
    cut = line[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip()


def block_entry(block: Block, query: Query) -> dict[str, Any]:
    f = block.fields
    entry: dict[str, Any] = {
        "url": block.url,
        "title": f.get("t", ""),
        "family": f.get("f", ""),
    }
    if f.get("k"):
        entry["component"] = f["k"]
    entry.update({
        "signature": [clip_signature(x) for x in block.signature],
        "cause": {"en": f.get("c", ""), "zh_CN": f.get("cz", "")},
        "fix": {"en": f.get("x", ""), "zh_CN": f.get("xz", "")},
        "evidence": f.get("e", ""),
        "found_by": {"corpus": query.corpus, "query": query.query},
        "date_seen": query.date,
    })
    return entry


def _write_family(path: Path, entries: list[dict[str, Any]]) -> None:
    entries = sorted(entries, key=lambda e: e["url"])
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if not k.startswith("_")}, ensure_ascii=False)
                            + "\n" for e in entries), encoding="utf-8")


def ingest(sheets: Sequence[Path], solved: Path = SOLVED, manifest_path: Path = MANIFEST,
           dry_run: bool = False) -> tuple[int, int, list[str], list[str]]:
    """Add the accepted blocks of ``sheets``. All or nothing: when any block has a problem, nothing is written and
    the problems are returned. A thread already in the index becomes a rejected 'dup' record (with a warning).
    Returns (accepted, rejected, warnings, problems)."""
    families = load_families(solved)
    validator = _validator()
    existing = {canonical_url(e["url"]): e for e in load_entries(solved)}
    problems: list[str] = []
    warnings: list[str] = []
    new: dict[str, dict[str, Any]] = {}
    records = []
    n_rej = 0
    for sheet in sheets:
        for q in parse_sheet(sheet.read_text(encoding="utf-8")):
            rec: dict[str, Any] = {"date": q.date, "corpus": q.corpus, "query": q.query, "accepted": [],
                                   "rejected": []}
            for b in q.blocks:
                key = canonical_url(b.url)
                if b.mark == "?":
                    problems.append(f"{sheet.name}:{b.line}: {b.url} not reviewed (mark it + or -)")
                    continue
                if b.mark == "-":
                    why = b.why or "unresolved"
                    if key in existing or key in new:
                        # seen again under another query; the accepted entry stands, so it is only a repeat
                        warnings.append(f"{sheet.name}:{b.line}: {b.url} is in the index; '{why}' recorded as dup")
                        why = "dup"
                    rec["rejected"].append({"url": b.url, "why": why})
                    n_rej += 1
                    continue
                if key in existing or key in new:
                    warnings.append(f"{sheet.name}:{b.line}: {b.url} is already in the index; recorded as dup")
                    rec["rejected"].append({"url": b.url, "why": "dup"})
                    continue
                entry = block_entry(b, q)
                probs = entry_problems(entry, families, validator)
                problems += [f"{sheet.name}:{b.line}: {b.url}: {p}" for p in probs]
                new[key] = entry
                rec["accepted"].append(b.url)
            records.append(rec)
    if problems:
        return 0, 0, warnings, problems
    if not dry_run:
        by_family: dict[str, list[dict[str, Any]]] = {}
        for e in existing.values():
            by_family.setdefault(e["family"], []).append(e)
        touched = set()
        for e in new.values():
            by_family.setdefault(e["family"], []).append(e)
            touched.add(e["family"])
        for fam in touched:
            _write_family(solved / f"{fam}.jsonl", by_family[fam])
        manifest_path.parent.mkdir(parents=True, exist_ok=True)
        with manifest_path.open("a", encoding="utf-8") as out:
            for rec in records:
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return len(new), n_rej, warnings, []


def drop(url: str, reason: str, solved: Path = SOLVED, manifest_path: Path = MANIFEST) -> str:
    """Remove the entry for ``url``; the manifest records it as rejected (``reason``) under the query that found it.
    Returns the family it was in. Raises KeyError when no entry has that URL."""
    key = canonical_url(url)
    entries = load_entries(solved)
    hit = [e for e in entries if canonical_url(e["url"]) == key]
    if not hit:
        raise KeyError(url)
    fam = hit[0]["family"]
    _write_family(solved / f"{fam}.jsonl", [e for e in entries if e["family"] == fam and canonical_url(e["url"]) != key])
    recs = load_manifest(manifest_path)
    for rec in recs:
        kept = [u for u in rec.get("accepted", []) if canonical_url(u) != key]
        if len(kept) != len(rec.get("accepted", [])):
            rec["accepted"] = kept
            rec.setdefault("rejected", []).append({"url": hit[0]["url"], "why": reason})
    manifest_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    return fam


def candidates(result_files: Sequence[Path], solved: Path = SOLVED, manifest_path: Path = MANIFEST) -> str:
    """A curation sheet for the threads in saved search results that are neither in the index nor reviewed."""
    known = {canonical_url(e["url"]) for e in load_entries(solved)} | reviewed_urls(load_manifest(manifest_path))
    out = [f"@date {_dt.date.today().isoformat()}"]
    for path in result_files:
        data = json.loads(path.read_text(encoding="utf-8"))
        out.append(f"\n@query {data.get('corpus', 'issues')}: {data.get('query', '')}")
        seen_here = set()
        for r in data.get("results", []):
            url = r.get("url") or r.get("address") or ""
            key = canonical_url(url)
            if not url or key in known or key in seen_here:
                continue
            seen_here.add(key)
            out.append(f"? {url}")
            out.append(f"t: {r.get('title', '').strip()}")
            excerpt = str(r.get("excerpt", ""))
            lines = [x.strip() for x in excerpt.splitlines()]
            picked = [x for x in lines if 8 <= len(x) <= 200 and _ERRORISH.search(x)][:8]
            out += [f"s?: {x}" for x in picked]
            out += [f"# | {x}" for x in lines if x][:40]
            out.append("")
    return "\n".join(out) + "\n"


def stats(solved: Path = SOLVED, manifest_path: Path = MANIFEST) -> str:
    entries = load_entries(solved)
    fam = Counter(e["family"] for e in entries)
    comp = Counter(e.get("component", "?") for e in entries)
    manifest = load_manifest(manifest_path)
    why = Counter(r["why"].split()[0] for q in manifest for r in q.get("rejected", []))
    lines = [f"{len(entries)} entries in {len(fam)} families; {len(manifest)} queries recorded; "
             f"{sum(why.values())} threads reviewed and rejected ({', '.join(f'{k} {v}' for k, v in why.most_common())})",
             "", "family                      entries"]
    families = load_families(solved)
    for name in sorted(families, key=lambda f: (-fam[f], f)):
        lines.append(f"  {name:<26}{fam[name]:>6}")
    lines += ["", "components (top 40): " + ", ".join(f"{k} {v}" for k, v in comp.most_common(40))]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check")
    sub.add_parser("stats")
    p = sub.add_parser("normalise")
    p.add_argument("lines", nargs="*")
    p = sub.add_parser("candidates")
    p.add_argument("results", nargs="+", type=Path)
    p = sub.add_parser("ingest")
    p.add_argument("sheets", nargs="+", type=Path)
    p.add_argument("--dry-run", action="store_true")
    p = sub.add_parser("drop")
    p.add_argument("url")
    p.add_argument("reason")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        problems = check()
        for x in problems:
            print(x)
        n = len(load_entries())
        print(f"{n} entries, {len(problems)} problems", file=sys.stderr)
        return 1 if problems else 0
    if a.cmd == "stats":
        print(stats())
        return 0
    if a.cmd == "normalise":
        for line in a.lines or sys.stdin.read().splitlines():
            print(normalise_signature(line))
        return 0
    if a.cmd == "candidates":
        sys.stdout.write(candidates(a.results))
        return 0
    if a.cmd == "drop":
        try:
            fam = drop(a.url, a.reason)
        except KeyError:
            print(f"{a.url}: not in the index", file=sys.stderr)
            return 1
        print(f"dropped {a.url} from {fam}", file=sys.stderr)
        return 0
    if a.cmd == "ingest":
        added, rejected, warnings, problems = ingest(a.sheets, dry_run=a.dry_run)
        for x in warnings + problems:
            print(x, file=sys.stderr)
        if problems:
            print(f"{len(problems)} problems; nothing written", file=sys.stderr)
            return 1
        print(f"{'would add' if a.dry_run else 'added'} {added}, rejected {rejected}", file=sys.stderr)
        split = SOLVED / "split.json"
        if added and not a.dry_run and split.exists():
            import split_eval  # the frozen dev/eval split records every later thread with its hash-derived part

            new = split_eval.update(split)
            print(f"split: {len(new)} later threads recorded", file=sys.stderr)
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
