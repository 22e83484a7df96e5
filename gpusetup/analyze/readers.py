"""Turning an input file (or stdin) into text parts — the hook where other formats plug in.

An *input reader* takes the raw bytes of one input and returns :class:`InputPart` s: pieces of text, or an
already-built :class:`~gpusetup.model.Machine` (a reader for a structured format can skip text recognition).
Readers are tried in registration order; the first whose ``matches`` says yes wins; plain text is the
fallback.

Our support bundles are read first (verified against their manifest, then the report's facts plus the raw text
the report does not already hold); any other ``.zip`` is opened by the generic zip reader, which analyses every
text member. Another format plugs in with :func:`register_reader`.
"""

from __future__ import annotations

import gzip
import io
import re
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup import untrusted
from gpusetup.bundle.read import MAX_MANIFEST, BundleError, TooBig, read_bundle, read_member
from gpusetup.messages import msg, render
from gpusetup.model import Machine, Message

MAX_BYTES = 20 * 1024 * 1024  # a support ticket attachment, not a disk image
MAX_ZIP_MEMBERS = 200
MAX_ZIP_TOTAL = 64 * 1024 * 1024  # all text unpacked from one zip
TEXT_SUFFIXES = (".txt", ".log", ".json", ".xml", ".md", ".csv", ".out", ".err", ".yaml", ".yml", ".conf", "")

# Raw files of a support bundle whose facts are already in its report.json; reading them again would only
# duplicate them.
_ALREADY_IN_REPORT = ("report.json", "report.html", "findings.json", "plan.json", "selftest.json", "raw/nvidia-smi-q.txt",
                      "raw/pip-list.json", "raw/cuda-env.txt", "raw/packages.txt")


class UnreadableInput(Exception):
    """The input cannot be read at all (missing file, no permission, binary junk). ``message`` says why as
    data (a gpusetup.messages code, worded in the CLI's language; None for a plug-in reader's own words);
    ``str()`` is the English."""

    def __init__(self, message: Message | str) -> None:
        self.message = message if isinstance(message, Message) else None
        super().__init__(render(message))


@dataclass
class InputPart:
    """One piece of an input: text to recognise, or a ready Machine (from a structured format)."""

    name: str
    text: str | None = None
    machine: Machine | None = None
    kinds: list[str] = field(default_factory=list)  # set by readers that already know what it is
    notices: list[Message] = field(default_factory=list)  # warnings about this input (unverified files, a newer format)


ReaderFn = Callable[[str, bytes], list[InputPart]]
MatchFn = Callable[[str, bytes], bool]


@dataclass(frozen=True)
class InputReader:
    name: str
    matches: MatchFn
    read: ReaderFn


_READERS: list[InputReader] = []


def register_reader(name: str, matches: MatchFn, read: ReaderFn, *, first: bool = True) -> None:
    """Add a reader; ``first`` puts it before the built-in ones (so a bundle reader beats the generic zip)."""
    global _READERS
    _READERS = [r for r in _READERS if r.name != name]
    reader = InputReader(name, matches, read)
    if first:
        _READERS.insert(0, reader)
    else:
        _READERS.append(reader)


def readers() -> list[InputReader]:
    return list(_READERS)


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le"/"utf-16-be" when ASCII-range text was saved as UTF-16 without a BOM."""
    if len(head) < 8:
        return None
    odd_nul = head[1::2].count(0) / max(1, len(head[1::2]))
    even_nul = head[0::2].count(0) / max(1, len(head[0::2]))
    if odd_nul > 0.9 and even_nul < 0.1:
        return "utf-16-le"
    if even_nul > 0.9 and odd_nul < 0.1:
        return "utf-16-be"
    return None


def decode_text(data: bytes) -> str:
    """Bytes → text: UTF-8 (with or without BOM), UTF-16 with BOM (PowerShell's `>` redirect), else Latin-1.

    Lines longer than MAX_LINE are cut (a pasted log with a megabyte on one line is damage, not data, and
    the recognisers' patterns are not meant to scan it); a JSON document (a report on one line) is left whole.
    nvidia-smi's XML is pretty-printed, one element per line."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return cap_lines(data.decode("utf-16", errors="replace"))
    enc = _utf16_without_bom(data[:4096])
    if enc:
        return cap_lines(data.decode(enc, errors="replace"))
    try:
        return cap_lines(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return cap_lines(data.decode("latin-1"))


MAX_LINE = 16 * 1024


def cap_lines(text: str) -> str:
    if len(text) <= MAX_LINE:
        return text
    lines = text.split("\n")
    if all(len(line) <= MAX_LINE for line in lines):
        return text
    head = text.lstrip()[:64]
    if head[:1] in ("{", "["):
        try:
            untrusted.loads(text)  # depth checked before parsing: [×200000 is not a report
            return text  # a JSON document on one line (a report): whole
        except ValueError:
            pass
    return "\n".join(line if len(line) <= MAX_LINE else
                     f"{line[:MAX_LINE]} …[{len(line) - MAX_LINE} characters of this line left out]" for line in lines)


_CONTROL = set(range(0, 9)) | {11, 12} | set(range(14, 27)) | set(range(28, 32))
_CONTROL_BYTES = bytes(sorted(_CONTROL))


def looks_binary(data: bytes) -> bool:
    """NUL bytes (outside UTF-16 text or NUL padding) or many control characters: not a text file."""
    head = data[:4096]
    if not head or head.startswith((b"\xff\xfe", b"\xfe\xff")) or _utf16_without_bom(head):
        return False
    if b"\x00" in head:
        if not nul_padded(data):
            return True
        head = data.replace(b"\x00", b"")[:4096]
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))  # counted in C, not byte by byte
    return controls > len(head) // 20


def nul_padded(data: bytes) -> bool:
    """Text with long runs of NUL bytes: a log file after a hard reset (blocks allocated, never written).

    Binary files have NULs scattered everywhere; padding comes in a few long runs around ordinary text lines.
    """
    sample = data[:1 << 20]
    runs = [len(r) for r in re.findall(rb"\x00+", sample)]
    if not runs:
        return False
    text = sample.replace(b"\x00", b"")
    if len(text) < 16 or b"\n" not in text:
        return False
    if len(runs) > 16 and sum(runs) / len(runs) < 64:
        return False  # many short NUL runs: structured binary data, not padding
    return sum(b in _CONTROL for b in text[:65536]) <= min(len(text), 65536) // 20


def strip_nul_padding(data: bytes) -> bytes:
    """NUL padding out, each run replaced by a line break so the lines around it stay apart."""
    return re.sub(rb"\x00+", b"\n", data) if b"\x00" in data and nul_padded(data) else data


def _zip_matches(name: str, data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04"


def _zip_read(name: str, data: bytes) -> list[InputPart]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise UnreadableInput(msg("analyze.read.bad-zip", name=name, reason=str(exc))) from exc
    parts: list[InputPart] = []
    budget = MAX_ZIP_TOTAL  # declared sizes can lie, but zipfile never unpacks past them; their sum is bounded
    with zf:
        for info in zf.infolist()[:MAX_ZIP_MEMBERS]:
            if info.is_dir() or info.file_size > MAX_BYTES or info.file_size > budget:
                continue
            budget -= info.file_size
            lower = info.filename.lower()
            if not any(lower.endswith(s) for s in TEXT_SUFFIXES if s) and "." in lower.rsplit("/", 1)[-1]:
                continue
            try:
                raw = zf.read(info)
            except (zipfile.BadZipFile, RuntimeError, OSError):
                continue  # encrypted or damaged member: skip it, keep the rest
            if looks_binary(raw):
                continue
            parts.append(InputPart(f"{name}:{info.filename}", decode_text(strip_nul_padding(raw))))
    if not parts:
        raise UnreadableInput(msg("analyze.read.zip-no-text", name=name))
    return parts


def _text_read(name: str, data: bytes) -> list[InputPart]:
    if not data.strip():
        raise UnreadableInput(msg("analyze.read.empty", name=name))
    if looks_binary(data):
        raise UnreadableInput(msg("analyze.read.binary", name=name))
    return [InputPart(name, decode_text(strip_nul_padding(data)))]


def _gzip_matches(name: str, data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b"


def _gzip_read(name: str, data: bytes) -> list[InputPart]:
    """A gzip-compressed text, such as nvidia-bug-report.log.gz (decompressed up to MAX_BYTES)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            raw = gz.read(MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise UnreadableInput(msg("analyze.read.bad-gzip", name=name, reason=str(exc))) from exc
    inner = name[:-3] if name.endswith(".gz") else name
    return read_bytes(inner, raw[:MAX_BYTES])


def _bundle_matches(name: str, data: bytes) -> bool:
    """Is this our support bundle? Only its manifest is read, within MAX_MANIFEST bytes (declared and real):
    a 1 MB zip whose manifest.json unpacks to 1 GiB once cost 2.1 GB and 16 s here, before any bound applied."""
    if data[:4] != b"PK\x03\x04":
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            manifest = untrusted.loads(read_member(zf, "manifest.json", MAX_MANIFEST)[0])
            return isinstance(manifest, dict) and manifest.get("kind") == "gpusetup-bundle"
    except (KeyError, ValueError, TooBig, zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError):
        return False


def _bundle_read(name: str, data: bytes) -> list[InputPart]:
    """A gpusetup support bundle: verified against its manifest, then the report's facts and the raw text.
    Files the manifest does not list are read as well (unverified, with a warning): the Xid in a file someone
    added, or the whole content of a bundle whose manifest lost its entries, is not silently ignored."""
    try:
        bundle = read_bundle(name, data)
    except BundleError as exc:
        raise UnreadableInput(str(exc)) from exc
    parts: list[InputPart] = []
    if bundle.report is not None:
        parts.append(InputPart(f"{name}: report.json", machine=bundle.report.machine, kinds=["gpusetup-bundle"]))
    for fname in sorted(bundle.files):
        if fname in _ALREADY_IN_REPORT and (bundle.report is not None or not fname.startswith("raw/")):
            continue  # (without a readable report, its raw outputs are what there is to read)
        # Our own logs (installer journals) quote planned commands ("pip install torch==…"): not installed facts.
        kinds = ["gpusetup-log"] if fname.startswith("logs/") else []
        parts.append(InputPart(f"{name}: {fname}", text=bundle.text(fname), kinds=kinds))
    for fname in sorted(bundle.unlisted):
        raw = bundle.unlisted[fname]
        if looks_binary(raw):
            continue
        kinds = ["gpusetup-log"] if fname.startswith("logs/") else []
        parts.append(InputPart(f"{name}: {fname}", text=decode_text(strip_nul_padding(raw)), kinds=kinds))
    notices = [msg("analyze.warn.bundle", name=name, detail=n) for n in bundle.notices]
    if not parts:
        parts.append(InputPart(f"{name}: manifest.json", text=""))  # nothing in it: said as a warning
    parts[0].notices.extend(notices)
    return parts


register_reader("gpusetup-bundle", _bundle_matches, _bundle_read, first=False)
register_reader("zip", _zip_matches, _zip_read, first=False)
register_reader("gzip", _gzip_matches, _gzip_read, first=False)


def read_bytes(name: str, data: bytes) -> list[InputPart]:
    """Raw input → parts, through the first matching reader (plain text when none matches)."""
    if len(data) > MAX_BYTES:
        raise UnreadableInput(msg("analyze.read.too-large", name=name, mb=MAX_BYTES // (1024 * 1024)))
    for r in readers():
        try:
            ok = r.matches(name, data)
        except Exception:  # noqa: BLE001 - a broken plug-in reader must not stop plain-text analysis
            ok = False
        if ok:
            return r.read(name, data)
    return _text_read(name, data)


def read_path(path: str, stdin: io.BufferedIOBase | None = None) -> list[InputPart]:
    """A file path, or ``-`` for standard input → parts. Raises :class:`UnreadableInput` with plain words."""
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        try:
            data = stream.read(MAX_BYTES + 1)
        except OSError as exc:
            raise UnreadableInput(msg("analyze.read.stdin", reason=str(exc))) from exc
        return read_bytes("stdin", data or b"")
    p = Path(path).expanduser()
    try:
        if p.is_dir():
            raise UnreadableInput(msg("analyze.read.folder", name=path))
        with p.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError as exc:
        raise UnreadableInput(msg("analyze.read.missing", name=path)) from exc
    except PermissionError as exc:
        raise UnreadableInput(msg("analyze.read.permission", name=path)) from exc
    except OSError as exc:
        raise UnreadableInput(msg("analyze.read.unreadable", name=path, reason=exc.strerror or str(exc))) from exc
    try:
        return read_bytes(p.name, data)
    except UnreadableInput as exc:  # name the file as the user gave it
        said = exc.message
        if said is not None and said.params.get("name") == p.name:
            raise UnreadableInput(Message(code=said.code, params={**said.params, "name": path})) from exc
        text = str(exc)
        raise UnreadableInput(path + text[len(p.name):] if text.startswith(p.name) else text) from exc
