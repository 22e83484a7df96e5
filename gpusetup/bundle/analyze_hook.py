"""Lets `gpusetup analyze` read our support bundles: verified against the manifest first, then the report's
facts plus the raw text the report does not already hold (kernel log lines, installer journals, logs).

Imported lazily by :mod:`gpusetup.analyze.readers` (listed in its ``READER_MODULES``)."""

from __future__ import annotations

import io
import json
import zipfile

from gpusetup.analyze.readers import InputPart, UnreadableInput, register_reader
from gpusetup.bundle.read import BundleError, read_bundle

# Raw files whose facts are already in report.json; reading them again would only duplicate them.
_ALREADY_IN_REPORT = ("report.json", "report.html", "findings.json", "plan.json", "selftest.json", "raw/nvidia-smi-q.txt", "raw/pip-list.json", "raw/cuda-env.txt", "raw/packages.txt")


def is_bundle(name: str, data: bytes) -> bool:
    if data[:4] != b"PK\x03\x04":
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return json.loads(zf.read("manifest.json")).get("kind") == "gpusetup-bundle"
    except (KeyError, ValueError, zipfile.BadZipFile, OSError, AttributeError):
        return False


def read_as_parts(name: str, data: bytes) -> list[InputPart]:
    try:
        bundle = read_bundle(name, data)
    except BundleError as exc:
        raise UnreadableInput(str(exc)) from exc
    parts: list[InputPart] = []
    if bundle.report is not None:
        parts.append(InputPart(f"{name}: report.json", machine=bundle.report.machine, kinds=["gpusetup-bundle"]))
    for fname in sorted(bundle.files):
        if fname in _ALREADY_IN_REPORT:
            continue
        # Our own logs (installer journals) quote planned commands ("pip install torch==…"): not installed facts.
        kinds = ["gpusetup-log"] if fname.startswith("logs/") else []
        parts.append(InputPart(f"{name}: {fname}", text=bundle.text(fname), kinds=kinds))
    return parts


register_reader("gpusetup-bundle", is_bundle, read_as_parts)
