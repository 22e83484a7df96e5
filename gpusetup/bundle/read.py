"""The support side of a bundle: open it, verify every file against the manifest, hand back the report.

Everything is bounded before it is parsed (issue 25): the manifest's declared and real size, each member's,
the whole bundle's, the number of members, the JSON nesting depth (:mod:`gpusetup.untrusted`). Files in the zip
that the manifest does not list are read too (within the same bounds) and handed back apart, in
:attr:`Bundle.unlisted`, with a warning: a bundle whose manifest lost its entries still says what it holds.
A report written by a gpusetup with a newer major ``schema_version`` is read as far as it goes, with a warning.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup import untrusted
from gpusetup.messages import msg, render
from gpusetup.model import SCHEMA_VERSION, Message, Report, SchemaError, from_dict

MAX_ENTRY = 20 * 1024 * 1024  # one file in a bundle (the collector caps each far below this)
MAX_TOTAL = 64 * 1024 * 1024  # everything a bundle unpacks to: a zip bomb stops here, not at 1 GiB
MAX_MANIFEST = 2 * 1024 * 1024
MAX_ENTRIES = 1000
_CHUNK = 1024 * 1024


class BundleError(Exception):
    """The file is not a usable gpusetup bundle; the message says why and what to ask the user for."""


@dataclass
class Bundle:
    path: Path
    manifest: dict
    files: dict[str, bytes]
    report: Report | None
    warnings: list[str] = field(default_factory=list)  # English; ``notices`` says the same as data
    unlisted: dict[str, bytes] = field(default_factory=dict)  # in the zip, not in the manifest: unverified
    notices: list[Message] = field(default_factory=list)

    def text(self, name: str) -> str:
        return self.files[name].decode("utf-8", errors="replace")


_ASK_AGAIN = "Ask the user to run `gpusetup bundle` again and send the new file unchanged."


def read_bundle(path: str | Path, data: bytes | None = None) -> Bundle:
    """Open and verify a bundle, from a file or (``data``) from bytes already read; ``path`` names it."""
    path = Path(path)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data) if data is not None else path)
    except FileNotFoundError as exc:
        raise BundleError(f"{path}: no such file") from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{path} is not a complete zip file (truncated or damaged: {exc}). {_ASK_AGAIN}") from exc
    with zf:
        try:
            manifest = untrusted.loads(read_member(zf, "manifest.json", MAX_MANIFEST)[0])
        except _TooBig as exc:
            raise BundleError(f"{path}: manifest.json {exc}. {_ASK_AGAIN}") from exc
        except KeyError as exc:
            raise BundleError(f"{path} has no manifest.json, so it is not a gpusetup bundle. {_ASK_AGAIN}") from exc
        except (ValueError, zipfile.BadZipFile, OSError) as exc:
            raise BundleError(f"{path}: manifest.json is unreadable ({exc}). {_ASK_AGAIN}") from exc
        if not isinstance(manifest, dict) or manifest.get("kind") != "gpusetup-bundle":
            raise BundleError(f"{path}: manifest.json does not describe a gpusetup bundle. {_ASK_AGAIN}")
        files: dict[str, bytes] = {}
        problems: list[str] = []
        entries = manifest.get("files", [])
        if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
            raise BundleError(f"{path}: manifest.json lists {len(entries) if isinstance(entries, list) else 'no'} "
                              f"files (a bundle has at most {MAX_ENTRIES}). {_ASK_AGAIN}")
        budget = MAX_TOTAL
        for entry in entries:
            name = entry.get("path", "") if isinstance(entry, dict) else ""
            if not isinstance(name, str) or not name:
                problems.append("the manifest has an entry without a file name")
                continue
            try:
                data, digest = read_member(zf, name, min(MAX_ENTRY, budget))
            except KeyError:
                problems.append(f"{name} is listed in the manifest but missing")
                continue
            except _TooBig as exc:  # a zip bomb or a damaged size field: refuse at once, read nothing more
                limit = "the per-file limit" if budget > MAX_ENTRY else "what is left of the bundle's limit"
                raise BundleError(f"{path}: {name} {exc}, more than {limit} ({MAX_ENTRY // 2**20} MB per file, "
                                  f"{MAX_TOTAL // 2**20} MB in all); this is not a bundle gpusetup wrote. "
                                  f"{_ASK_AGAIN}") from exc
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
                problems.append(f"{name} cannot be read ({exc})")
                continue
            budget -= len(data)
            if digest != entry.get("sha256"):
                problems.append(f"{name} does not match its checksum (changed after the bundle was made)")
                continue
            files[name] = data
        if problems:
            raise BundleError(f"{path} failed verification: " + "; ".join(problems) + f". {_ASK_AGAIN}")
        listed = {e.get("path") for e in entries if isinstance(e, dict)} | {"manifest.json"}
        unlisted, notices = _read_unlisted(zf, listed, budget, len(entries))
    warnings = [render_english(n) for n in notices]
    report = None
    if "report.json" in files:
        try:
            data = untrusted.loads(files["report.json"])
            newer = newer_schema(data)
            if newer is not None:
                notices.append(msg("bundle.read.newer-schema", version=newer, ours=SCHEMA_VERSION))
                warnings.append(render_english(notices[-1]))
            report = from_dict(Report, data)
        except (ValueError, SchemaError) as exc:
            notices.append(msg("bundle.read.report-unreadable", reason=str(exc)[:300]))
            warnings.append(render_english(notices[-1]))
    return Bundle(path, manifest, {k: v for k, v in files.items()}, report, warnings, unlisted, notices)


def render_english(message: Message) -> str:
    return render(message)


def newer_schema(data: object) -> str | None:
    """The report's ``schema_version`` when its major version is not this gpusetup's: such a report is read
    best-effort (unknown fields ignored) and said so, never taken as current without a word."""
    if not isinstance(data, dict):
        return None
    version = data.get("schema_version")
    if not isinstance(version, str) or not version:
        return None
    major = version.split(".", 1)[0]
    return None if major == SCHEMA_VERSION.split(".", 1)[0] else version[:20]


def _read_unlisted(zf: zipfile.ZipFile, listed: set[object], budget: int,
                   listed_count: int) -> tuple[dict[str, bytes], list[Message]]:
    """Members the manifest does not name: read within what is left of the bundle's limits, never fatal."""
    out: dict[str, bytes] = {}
    names: list[str] = []
    skipped = 0
    for info in zf.infolist()[: max(0, MAX_ENTRIES - listed_count)]:
        if info.filename in listed or info.is_dir():
            continue
        names.append(info.filename)
        try:
            data, _digest = read_member(zf, info.filename, min(MAX_ENTRY, budget))
        except (_TooBig, KeyError, zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError):
            skipped += 1
            continue
        budget -= len(data)
        out[info.filename] = data
    notices: list[Message] = []
    if names:
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        notices.append(msg("bundle.read.unlisted", count=len(names), files=shown))
    if skipped:
        notices.append(msg("bundle.read.unlisted-skipped", count=skipped))
    return out, notices


class TooBig(ValueError):
    """A member unpacks to more than the limit (declared or counted): nothing more of it was read."""


_TooBig = TooBig


def read_member(zf: zipfile.ZipFile, name: str, limit: int) -> tuple[bytes, str]:
    """An entry's bytes and sha256, read in chunks and never more than ``limit`` bytes (else :class:`_TooBig`).

    The declared size is checked first (instant refusal of a 1 GiB entry); the stream is counted as well,
    because the declared size is the attacker's to write.
    """
    info = zf.getinfo(name)
    if info.file_size > limit:
        raise _TooBig(f"unpacks to {info.file_size / 2**20:.0f} MB")
    buf = bytearray()
    hasher = hashlib.sha256()
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                break
            buf += chunk
            hasher.update(chunk)
            if len(buf) > limit:
                raise _TooBig(f"unpacks to more than {limit / 2**20:.0f} MB")
    return bytes(buf), hasher.hexdigest()
