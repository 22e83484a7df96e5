"""Masking of identifiers in reports (the support bundle does deeper redaction of raw text).

GPU UUIDs become stable pseudonyms (``GPU-masked-3f2a1c9e``): the same GPU gets the same pseudonym within a
report and across reports from one machine, so several GPUs stay distinguishable, but the real id is not
published. Serial numbers and the host name are dropped.
"""

from __future__ import annotations

import copy
import hashlib
import re

from gpusetup.model import Report

_UUID_RE = re.compile(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")


def pseudonym(uuid: str, prefix: str = "GPU") -> str:
    digest = hashlib.sha256(uuid.strip().lower().encode()).hexdigest()[:8]
    return f"{prefix}-masked-{digest}"


def mask_uuid_text(text: str) -> str:
    return _UUID_RE.sub(lambda m: pseudonym(m.group(0), m.group(1)), text)


def mask_identifiers(report: Report) -> Report:
    shown = copy.deepcopy(report)
    m = shown.machine
    m.system.hostname = None
    for gpu in m.gpus:
        if gpu.uuid and not gpu.uuid.startswith(("GPU-masked-", "MIG-masked-")):
            gpu.uuid = pseudonym(gpu.uuid, "MIG" if gpu.uuid.startswith("MIG") else "GPU")
        gpu.serial = None
        gpu.mig_devices = [mask_uuid_text(d) for d in gpu.mig_devices]
        for ev in gpu.evidence:
            if ev.detail:
                ev.detail = mask_uuid_text(ev.detail)
    for cmd in m.commands:
        cmd.stdout_tail = mask_uuid_text(cmd.stdout_tail)
        cmd.stderr_tail = mask_uuid_text(cmd.stderr_tail)
    for f in shown.findings:
        f.evidence = [mask_uuid_text(e) for e in f.evidence]
    return shown
