"""Similar solved reports: the closest threads of the shipped index of solved real reports (``resources/solved/``).

The index holds public threads in which a GPU setup failure was resolved or its cause confirmed: the thread's
error lines (verbatim), the cause and the fix (English and Simplified Chinese), and its link. For an input that
shows a problem, :func:`similar_reports` ranks the index by its error lines with BM25 (the ``bm25s`` package)
over normalised words, and returns the best few with how close each is. They are *similar*, not certain: the
analysis shows them below the rules' findings, labelled so.

Normalising (:func:`normalise_signature`) removes what differs from one machine to the next (paths, addresses,
versions, sizes, timestamps) and keeps what names the failure (error codes, architectures, library names). The
same function is applied to the index and to the input.

Cost: nothing is loaded until an input with problem lines asks (the fleet of whole-machine reports never does);
the first query imports bm25s and numpy, reads the index and builds the BM25 matrix once per process (about 0.08 s
on the development machine for 642 threads), later ones take about 3 ms.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpusetup.resources import read_text, resource

# ----------------------------------------------------------------------------------------------- normalising
# The same steps as scripts/solved_index.py (which the curators use to check their entries);
# tests/analyze/test_similar.py keeps the two identical on every signature line of the index.

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_LEADING_STAMPS = [
    re.compile(r"^\s*\[\s*\d+\.\d+\]\s*"),  # dmesg: [ 1234.567890]
    re.compile(r"^\s*\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?:?\s*"),  # ISO stamps
    re.compile(r"^\s*[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+"),  # glog (JAX, XLA)
    re.compile(r"^\s*[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ \S+?:\s*"),  # syslog: Jan  2 03:04:05 host kernel:
]
_URL = re.compile(r"\bhttps?://\S+")
_WIN_PATH = re.compile(r"(?<![\w])[A-Za-z]:[\\/](?:[^\\/\s'\"<>|:*?]+[\\/])*([^\\/\s'\"<>|:*?]*)")
_UNIX_PATH = re.compile(r"(?<![\w.:~-])(?:~|\.{1,2})?/(?:[\w.+@%=-]+/)+([\w.+@%=-]*)")
_REL_PATH = re.compile(r"(?<![\w.:/~-])(?:[\w.+@-]+/){2,}([\w.+@-]+)")
_PCI = re.compile(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?\b")
_UUID = re.compile(r"\b(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_LONG_HEX = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b")
_SIZE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|bytes|[KMGT]iB/s|MHz|GHz|W)\b", re.IGNORECASE)
_FILE_LINE = re.compile(r"(\.(?:c|cc|cpp|cu|cuh|h|hpp|py|pyx|rs|go|js|ts|java)):\d+(?::\d+)?\b")
_LINE_WORD = re.compile(r"\b(line|Line|LINE)\s+\d+\b")
_VERSION = re.compile(r"(?<![\w])v?\d+(?:\.\d+)+(?:\+[0-9A-Za-z.]+|(?:rc|a|b|post|dev)\d+)?\b")
_BIG_NUMBER = re.compile(r"(?<![\w])(?<!error )(?<!Error )(?<!ERROR )(?<!code )(?<!Code )\d{4,}\b")
_SPACES = re.compile(r"\s+")


def normalise_signature(line: str) -> str:
    """One error line reduced to what stays the same from one machine to the next: no terminal colours, no
    leading timestamp, a path kept as its last part, and URLs, PCI addresses, UUIDs, addresses and hashes,
    sizes, source line numbers, dotted versions and numbers of four or more digits (unless they follow "error"
    or "code") replaced by placeholders. Short numbers stay: error codes (35, 999, Xid 79), architectures (sm_86).
    """
    s = _ANSI.sub("", line)
    for stamp in _LEADING_STAMPS:
        s = stamp.sub("", s, count=1)
    s = _URL.sub("<url>", s)
    s = _WIN_PATH.sub(lambda m: m.group(1) or "<path>", s)
    s = _UNIX_PATH.sub(lambda m: m.group(1) or "<path>", s)
    s = _REL_PATH.sub(lambda m: m.group(1), s)
    s = _PCI.sub("<pci>", s)
    s = _UUID.sub("<uuid>", s)
    s = _HEX.sub("<hex>", s)
    s = _LONG_HEX.sub("<hex>", s)
    s = _SIZE.sub("<size>", s)
    s = _FILE_LINE.sub(r"\1:<n>", s)
    s = _LINE_WORD.sub(r"\1 <n>", s)
    s = _VERSION.sub("<v>", s)
    s = _BIG_NUMBER.sub("<n>", s)
    return _SPACES.sub(" ", s).strip()


# --------------------------------------------------------------------------------------------------- words

_WORD = re.compile(r"[a-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Placeholders left by normalise_signature, and words that say nothing about which failure it is.
_STOP_WORDS = (
    "v n hex path url size pci uuid "
    "a an the of to in on at by for from with and or not no is are was be been it its this that as if "
    "can could cannot please try trying use using used see set get got have has had do does did you your we our "
    "i me my there than then so but when which what who will would should may might also only just any all "
    "file line module most recent call last"
)
_STOP = frozenset(_STOP_WORDS.split())


def words(line: str) -> list[str]:
    """The words of one normalised line that BM25 ranks on: lower-case identifiers and numbers of two or three
    digits (error codes), camelCase names also in their parts (``cudaErrorNoKernelImageForDevice`` →
    ``cudaerrornokernelimagefordevice cuda error no kernel image for device``), common English words dropped."""
    out: list[str] = []
    for raw in re.findall(r"[A-Za-z0-9_]+", line):
        low = raw.lower()
        if low.isdigit() and not 2 <= len(low) <= 3:
            continue  # error codes (35, 999) stay; indices and counts (0, 1, GPU:0) and long numbers say nothing
        if low not in _STOP and len(low) > 1:
            out.append(low)
        if not raw.islower() and not raw.isupper() and not raw.isdigit():
            parts = [p.lower() for p in _CAMEL.findall(raw)]
            if len(parts) > 1:
                out.extend(p for p in parts if p not in _STOP and len(p) > 1)
        elif "_" in raw:
            out.extend(p for p in low.split("_") if p not in _STOP and len(p) > 1 and p != low)
    return out


def tokens(lines: Iterable[str]) -> list[str]:
    """The BM25 tokens of several raw lines: each normalised, then split into :func:`words`."""
    out: list[str] = []
    for ln in lines:
        out.extend(words(normalise_signature(ln)))
    return out


# ---------------------------------------------------------------------------------------------------- index


@dataclass(frozen=True)
class SolvedReport:
    """One thread of the index (resources/schema/solved_report.schema.json)."""

    url: str
    title: str
    family: str
    component: str
    signature: tuple[str, ...]
    cause: dict[str, str]
    fix: dict[str, str]

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SolvedReport:
        return cls(url=str(d["url"]), title=str(d.get("title") or ""), family=str(d["family"]),
                   component=str(d.get("component") or ""), signature=tuple(str(s) for s in d["signature"]),
                   cause=dict(d["cause"]), fix=dict(d["fix"]))


@dataclass
class SimilarReport:
    """A solved report found close to the input: how close (0–1), and the input's lines it was matched on."""

    report: SolvedReport
    closeness: float
    score: float
    family_name: dict[str, str] = field(default_factory=dict)
    matched: list[str] = field(default_factory=list)
    same_cause: list[str] = field(default_factory=list)  # links of other close reports of the same cause family

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        return {"url": r.url, "title": r.title, "family": r.family, "family_name": dict(self.family_name),
                "component": r.component, "closeness": round(self.closeness, 2), "signature": list(r.signature),
                "cause": dict(r.cause), "fix": dict(r.fix), "matched": list(self.matched),
                "same_cause": list(self.same_cause)}


MAX_INDEX_BYTES = 16 * 1024 * 1024  # the whole index; a damaged or replaced file is refused, not read without end


class SolvedIndex:
    """The index, read and turned into a BM25 matrix on first use (thread-safe, once per process)."""

    def __init__(self, reports: Sequence[SolvedReport], families: dict[str, dict[str, str]]) -> None:
        self.reports = list(reports)
        self.families = families
        self._lock = threading.Lock()
        self._bm25: Any = None
        self._docs: list[list[str]] = []

    def _model(self) -> Any:
        with self._lock:
            if self._bm25 is None:
                import bm25s  # lazy: numpy and bm25s load only when an input shows a problem

                logging.getLogger("bm25s").setLevel(logging.WARNING)  # its DEBUG lines are not for our users
                self._docs = [doc_tokens(r) for r in self.reports]
                model = bm25s.BM25(k1=K1, b=B)
                model.index(self._docs, show_progress=False)
                self._bm25 = model
            return self._bm25

    def scores(self, query: list[str]) -> list[float]:
        """The BM25 score of every report for these tokens (index order)."""
        if not query or not self.reports:
            return [0.0] * len(self.reports)
        model = self._model()
        # each word once: a line repeated a hundred times (one per GPU thread) must not weigh a hundred times
        return [float(s) for s in model.get_scores(list(dict.fromkeys(query)))]

    def self_score(self, i: int) -> float:
        """The score a report gets for its own tokens: what a perfect match would reach."""
        doc = self._docs[i] if self._docs else doc_tokens(self.reports[i])
        return self.scores(doc)[i] if doc else 0.0


K1, B = 1.2, 0.75  # BM25's usual parameters (tuned on the dev split only: benchmarks/analyze_eval.py)


def doc_tokens(r: SolvedReport) -> list[str]:
    """What a report is found by: its error lines."""
    return tokens(r.signature)


_INDEX: list[SolvedIndex] = []
_INDEX_LOCK = threading.Lock()


def solved_index() -> SolvedIndex:
    """The shipped index (read once)."""
    with _INDEX_LOCK:
        if not _INDEX:
            _INDEX.append(load_index())
        return _INDEX[0]


def load_index(folder: str = "solved") -> SolvedIndex:
    """Read ``resources/<folder>/*.jsonl`` and its families.json. A missing or damaged index gives an empty one
    (analysis then shows no similar reports; it never fails because of this data)."""
    reports: list[SolvedReport] = []
    families: dict[str, dict[str, str]] = {}
    base = resource(folder)
    budget = MAX_INDEX_BYTES
    try:
        families = dict(json.loads(read_text(folder, "families.json")).get("families") or {})
        paths = sorted(base.glob("*.jsonl"))
    except (OSError, ValueError, AttributeError):
        return SolvedIndex([], {})
    for path in paths:
        try:
            text = read_text(folder, path.name, limit=budget)
        except OSError:
            continue
        budget -= len(text.encode("utf-8"))
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                reports.append(SolvedReport.from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # one damaged line loses that report, not the index
    return SolvedIndex(reports, families)


# -------------------------------------------------------------------------------------------------- querying

MAX_QUERY_LINES = 24

# A line worth searching with: an error, a failure, a warning or a refusal in any of the words tools use.
_QUERY_LINE = re.compile(
    r"\w(?:Error|Exception|Warning)\b|\b(?:error|errors|failed|failure|fails|fatal|cannot|can't|could not|couldn't|"
    r"unable|not found|no such|undefined symbol|unsupported|not supported|incompatible|mismatch|invalid|illegal|"
    r"denied|refused|rejected|timed? ?out|no kernel image|not compatible|not available|unavailable|out of memory|"
    r"segmentation fault|core dumped|assert|abort|aborted|killed|warning|warn|requires?|required|missing|"
    r"no (?:cuda|gpu|nvidia|device)|not (?:detected|loaded|installed|compiled|enabled)|deprecated|too old|"
    r"no longer|does not|doesn't|is not|xid|nvrm|traceback|could be found|no module named|not defined|"
    r"conflicts?|conflicting|unsatisfiable|unmet|not installable|in use|stopped|not initialized|not enabled|"
    r"disabled|outdated|symbol not found|unknown|too new|only supports?|only supported|larger than|"
    r"(?:code|error) ?\d{2,4}|status_[a-z_]+|[a-z]+_status_[a-z_]+|falling back|fall back)\b",
    re.IGNORECASE,
)
_NOT_A_QUERY = re.compile(r"^\s*[|+][-=+ ]*[|+]?\s*$|^\s*[-=_*#]{4,}\s*$")


def query_lines(lines: Iterable[str], limit: int = MAX_QUERY_LINES) -> list[str]:
    """The lines of an input that the search is given: those that read as an error, failure or warning (first
    ``limit`` of them, without repeats)."""
    out: list[str] = []
    seen: set[str] = set()
    for ln in lines:
        s = ln.strip()
        if not s or len(s) > 600 or s in seen or _NOT_A_QUERY.match(s) or not _QUERY_LINE.search(s):
            continue
        seen.add(s)
        out.append(s)
        if len(out) >= limit:
            break
    return out


MIN_CLOSENESS = 0.3  # below this a report shares too little with the input to be worth showing (dev split)
TOP = 3  # reports shown
CANDIDATES = 30  # best BM25 scores looked at before ranking by closeness


def similar_reports(lines: Sequence[str], *, top: int = TOP, min_closeness: float = MIN_CLOSENESS,
                    exclude: Iterable[str] = (), index: SolvedIndex | None = None) -> list[SimilarReport]:
    """The solved reports closest to these input lines (the problem lines of an input), best first.

    ``closeness`` is the report's BM25 score for the input divided by the score its own error lines would get:
    1 when the input contains all of the report's error words, lower when it shares only some or only common
    ones. ``exclude``: URLs left out (the evaluation leaves each thread's own report out)."""
    idx = index or solved_index()
    chosen = list(lines)[:MAX_QUERY_LINES]
    query = tokens(chosen)
    if not query or not idx.reports:
        return []
    skip = set(exclude)
    scores = idx.scores(query)
    # the best-scoring candidates, then ranked by score × closeness: a long report that shares many common words
    # must not push aside a short one the input matches entirely (dev split: benchmarks/analyze_eval.py)
    order = sorted(range(len(scores)), key=lambda i: -scores[i])[:CANDIDATES + len(skip)]
    found: list[SimilarReport] = []
    for i in order:
        r = idx.reports[i]
        if scores[i] <= 0 or r.url in skip:
            continue
        own = idx.self_score(i)
        closeness = min(1.0, scores[i] / own) if own > 0 else 0.0
        if closeness >= min_closeness:
            found.append(SimilarReport(r, closeness, scores[i], idx.families.get(r.family, {})))
    found.sort(key=lambda s: -(s.score * s.closeness))
    # the best report of each cause family, so the few shown offer different causes; the others of a family are
    # kept as its links (dev split: 78 % → 81 % of threads with their family among the three shown)
    best: dict[str, SimilarReport] = {}
    for s in found:
        if s.report.family in best:
            best[s.report.family].same_cause.append(s.report.url)
        else:
            best[s.report.family] = s
    shown = list(best.values())[:top]
    for s in shown:
        s.matched = _matched_lines(chosen, set(doc_tokens(s.report)))
    return shown


def _matched_lines(lines: Sequence[str], doc_words: set[str], limit: int = 2) -> list[str]:
    """The input lines that share most words with the report (what the match rests on)."""
    ranked = sorted(((len(set(tokens([ln])) & doc_words), n, ln) for n, ln in enumerate(lines)),
                    key=lambda t: (-t[0], t[1]))
    return [ln.strip()[:300] for shared, _, ln in ranked[:limit] if shared]


# The index families each catalogue entry (F01…) stands for: a rule finding of that entry names the cause of a
# report of one of these families (used to tell whether a similar report repeats a finding, and by
# benchmarks/analyze_eval.py to judge whether the cause was named).
CATALOGUE_FAMILIES: dict[str, set[str]] = {
    "F01": {"driver-too-old"}, "F02": {"driver-too-old", "cuda-init-failure"}, "F03": {"cuda-init-failure"},
    "F04": {"gpu-too-old", "no-kernel-image"}, "F05": {"no-kernel-image"},
    "F06": {"driver-not-loaded", "driver-install", "secure-boot-dkms"}, "F07": {"secure-boot-dkms", "driver-not-loaded"},
    "F08": {"nouveau", "driver-not-loaded"}, "F09": {"driver-library-mismatch"},
    "F10": {"driver-not-loaded", "driver-install"}, "F11": {"gpu-too-old", "driver-install"},
    "F12": {"driver-not-loaded", "xid-hardware"}, "F13": {"host-compiler"}, "F14": {"xid-hardware"},
    "F15": {"xid-hardware"}, "F16": {"xid-hardware"}, "F17": {"cuda-init-failure"}, "F18": {"cuda-init-failure"},
    "F19": {"torch-cpu-build"}, "F20": {"torch-cpu-build", "conda"}, "F21": {"torch-cpu-build", "pip-resolution"},
    "F22": {"cudnn", "cuda-math-libs", "windows-dll", "tensorflow", "onnxruntime"}, "F23": {"cudnn"},
    "F24": {"tensorflow"}, "F25": {"jax"}, "F26": {"cuda-math-libs", "pip-resolution"},
    "F27": {"cuda-toolkit", "extension-build"}, "F28": {"no-cuda-device"},
    "F29": {"container-toolkit"}, "F30": {"container-toolkit"}, "F31": {"container-toolkit"},
    "F32": {"container-toolkit"}, "F33": {"wsl"}, "F34": {"wsl"}, "F35": {"nccl"}, "F36": {"out-of-memory"},
    "F37": {"no-cuda-device", "cuda-init-failure"}, "F38": {"driver-not-loaded"}, "F39": {"rocm"},
    "F40": {"cuda-toolkit"}, "F41": {"apple-mps"}, "F42": {"xid-hardware"}, "F43": {"xid-hardware"},
    "F44": {"apple-mps"}, "F45": {"out-of-memory"}, "F46": {"mig"}, "F47": {"mig"}, "F48": {"driver-install"},
    "F49": {"kubernetes", "container-toolkit"}, "F50": {"kubernetes", "container-toolkit"},
    "F51": {"container-toolkit"},
}

# Findings without a catalogue code, and the index families they name.
FINDING_FAMILIES: dict[str, set[str]] = {
    "extension-built-for-other-torch": {"extension-abi"},
    "cuda-compiler-not-found": {"cuda-toolkit", "extension-build"},
    "gpu-feature-needs-newer-gpu": {"gpu-feature-unsupported"},
    "ptx-newer-than-driver": {"driver-too-old"},
    "bitsandbytes-without-cuda": {"bitsandbytes"},
    "nvcc-arch-unsupported": {"cuda-toolkit", "extension-build"},
}


def finding_families(catalogue: str | None, finding_id: str) -> set[str]:
    """The index families a finding names (by its catalogue code, else by its id)."""
    return CATALOGUE_FAMILIES.get(catalogue or "", set()) | FINDING_FAMILIES.get(finding_id, set())
