"""The support side of a bundle: open it, verify every file against the manifest, hand back the report."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.model import Report, SchemaError, from_dict


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
            manifest = json.loads(zf.read("manifest.json"))
        except KeyError as exc:
            raise BundleError(f"{path} has no manifest.json, so it is not a gpusetup bundle. {_ASK_AGAIN}") from exc
        except (ValueError, zipfile.BadZipFile, OSError) as exc:
            raise BundleError(f"{path}: manifest.json is unreadable ({exc}). {_ASK_AGAIN}") from exc
        if not isinstance(manifest, dict) or manifest.get("kind") != "gpusetup-bundle":
            raise BundleError(f"{path}: manifest.json does not describe a gpusetup bundle. {_ASK_AGAIN}")
        files: dict[str, bytes] = {}
        problems: list[str] = []
        for entry in manifest.get("files", []):
            name = entry.get("path", "")
            try:
                data = zf.read(name)
            except KeyError:
                problems.append(f"{name} is listed in the manifest but missing")
                continue
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                problems.append(f"{name} cannot be read ({exc})")
                continue
            if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
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
