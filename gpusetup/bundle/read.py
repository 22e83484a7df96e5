"""The support side of a bundle: open it, verify every file against the manifest, hand back the report."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.model import Report, SchemaError, from_dict

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
    warnings: list[str] = field(default_factory=list)

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
            manifest = json.loads(_read_bounded(zf, "manifest.json", MAX_MANIFEST)[0])
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
                data, digest = _read_bounded(zf, name, min(MAX_ENTRY, budget))
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
        listed = {e.get("path") for e in manifest.get("files", [])} | {"manifest.json"}
        warnings = [f"{n} is in the zip but not in the manifest; ignored" for n in zf.namelist() if n not in listed]
    report = None
    if "report.json" in files:
        try:
            report = from_dict(Report, json.loads(files["report.json"]))
        except (ValueError, SchemaError) as exc:
            warnings.append(f"report.json could not be read as a gpusetup report: {exc}")
    return Bundle(path, manifest, {k: v for k, v in files.items()}, report, warnings)


class _TooBig(ValueError):
    pass


def _read_bounded(zf: zipfile.ZipFile, name: str, limit: int) -> tuple[bytes, str]:
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
