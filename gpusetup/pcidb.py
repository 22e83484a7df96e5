"""PCI names and the NVIDIA chip rule, from data shipped in ``resources/``.

``lookup()`` names a PCI vendor/device from the shipped ``resources/pci.ids`` subset (so a GPU is named even
with no driver installed). ``classify_nvidia()`` turns a pci.ids name such as ``"GA106M [GeForce RTX 3060
Mobile / Max-Q]"`` into chip, compute capability and architecture by the chip-prefix rule of
``resources/compat/gpu_chips.json`` — never by the marketing name, which is ambiguous (a Kepler GK107 is sold
as "GeForce GT 1030", a Kepler GK106 as "GTX 750 Ti").

Both files are parsed once, lazily, on first use (a few milliseconds); nothing here does I/O at import time.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

from gpusetup import resources

log = logging.getLogger("gpusetup.pcidb")

NO_CUDA = "no CUDA support"


@dataclass(frozen=True)
class ChipClass:
    """What the chip rule says about one NVIDIA chip.

    ``compute_capability`` is None when the chip has no CUDA support today (``cuda`` False: pre-Kepler GPUs
    and nForce chipsets) or when nobody has published it yet (``cuda`` None).
    """

    chip: str
    compute_capability: str | None
    architecture: str
    cuda: bool | None = True

    @property
    def cuda_supported(self) -> bool | None:
        return self.cuda


# ------------------------------------------------------------------------------------------- pci.ids

_DEVICE_LINE = re.compile(r"^\t([0-9a-fA-F]{4})\s+(.+?)\s*$")


_VENDOR_SCAN = re.compile(r"^([0-9a-fA-F]{4})[ \t]+(\S.*?)[ \t]*\r?$", re.M)


class PciIds:
    """A pci.ids file: vendor id → (vendor name, device id → device name); ids lower-case.

    Only vendor lines are read up front (one regex pass); a vendor's device lines are parsed the first time
    that vendor is looked up, so naming one GPU costs a couple of milliseconds, not a full parse.
    """

    def __init__(self, text: str = "") -> None:
        m = re.search(r"^#\s*Version:\s*(\S+)", text[:4096], re.M)
        self.version: str | None = m.group(1) if m else None
        cls = re.search(r"^C [0-9a-fA-F]{2}", text, re.M)  # device class list: end of the vendor part
        self._text = text[: cls.start()] if cls else text
        self._names: dict[str, str] = {}
        self._spans: dict[str, list[tuple[int, int]]] = {}
        matches = list(_VENDOR_SCAN.finditer(self._text))
        for i, vm in enumerate(matches):
            vid = vm.group(1).lower()
            self._names.setdefault(vid, vm.group(2))
            stop = matches[i + 1].start() if i + 1 < len(matches) else len(self._text)
            self._spans.setdefault(vid, []).append((vm.end(), stop))
        self._devices: dict[str, dict[str, str]] = {}

    @property
    def vendor_names(self) -> dict[str, str]:
        return self._names

    def devices(self, vendor_id: str) -> dict[str, str]:
        vid = _norm_id(vendor_id) or ""
        if vid not in self._devices:
            self._devices[vid] = self._parse_devices(vid)
        return self._devices[vid]

    def _parse_devices(self, vid: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for start, stop in self._spans.get(vid, []):
            for line in self._text[start:stop].splitlines():
                if not line or line[0] == "#":
                    continue
                if line[0] != "\t":
                    break  # a garbled line ends the section, as a new vendor would
                if line.startswith("\t\t"):
                    continue  # subsystem line
                dm = _DEVICE_LINE.match(line)
                if dm:
                    out.setdefault(dm.group(1).lower(), dm.group(2))
        return out

    @property
    def vendors(self) -> dict[str, tuple[str, dict[str, str]]]:
        """Everything parsed (slow path, for tools and tests)."""
        return {vid: (name, self.devices(vid)) for vid, name in self._names.items()}

    def lookup(self, vendor_id: str, device_id: str | None = None) -> tuple[str | None, str | None]:
        vid = _norm_id(vendor_id)
        if vid is None or vid not in self._names:
            return None, None
        did = _norm_id(device_id) if device_id else None
        return self._names[vid], self.devices(vid).get(did) if did else None


def parse_pci_ids(text: str) -> PciIds:
    """Parse pci.ids text. Tolerant: unknown or garbled lines are skipped, never raised on."""
    return PciIds(text)


@functools.lru_cache(maxsize=1)
def pci_ids() -> PciIds:
    """The shipped pci.ids subset, read through :mod:`gpusetup.resources` and parsed once."""
    try:
        text = resources.read_text("pci.ids", errors="replace")
    except OSError as exc:
        log.warning("cannot read the shipped pci.ids: %s", exc)
        return PciIds()
    return parse_pci_ids(text)


def lookup(vendor_id: str, device_id: str) -> tuple[str | None, str | None]:
    """(vendor name, device name) from the shipped pci.ids subset; None for what it does not know."""
    return pci_ids().lookup(vendor_id, device_id)


def _norm_id(pid: str | None) -> str | None:
    """``"0x10DE"`` / ``"10de"`` / ``"10DE\\n"`` → ``"10de"``; anything else → None."""
    if not pid:
        return None
    s = pid.strip().lower()
    if s.startswith("0x"):
        s = s[2:]
    if len(s) > 4 and s.startswith("0000"):  # some tools print 8 hex digits
        s = s[-4:]
    return s if re.fullmatch(r"[0-9a-f]{4}", s) else None


# ------------------------------------------------------------------------------------- chip rule


@dataclass(frozen=True)
class _ChipRules:
    exact: dict[str, tuple[str | None, str, bool | None]]  # chip codename → (cc, arch, cuda)
    patterns: tuple[tuple[re.Pattern[str], str], ...]  # no-CUDA families → architecture
    data_version: str | None


@functools.lru_cache(maxsize=1)
def _rules() -> _ChipRules:
    """The chip rule of ``resources/compat/gpu_chips.json`` (not a resolver table: ``compat.db`` leaves it to
    this module), read through :mod:`gpusetup.resources` and parsed once."""
    exact: dict[str, tuple[str | None, str, bool | None]] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    try:
        data = resources.read_json("compat", "gpu_chips.json")
    except (OSError, ValueError) as exc:
        log.warning("cannot read the chip table gpu_chips.json: %s", exc)
        return _ChipRules({}, (), None)
    for table in data.get("tables", {}).values():
        for row in table.get("rows", []):
            cc, arch, cuda = (
                row.get("compute_capability"),
                row.get("architecture", "unknown"),
                row.get("cuda"),
            )
            for chip in row.get("chips", []):
                exact[chip.upper()] = (cc, arch, cuda)
            if row.get("pattern"):
                try:
                    patterns.append((re.compile(row["pattern"], re.I), arch))
                except re.error as exc:
                    log.warning("bad pattern %r in gpu_chips.json: %s", row["pattern"], exc)
    return _ChipRules(exact, tuple(patterns), data.get("version"))


_BRACKETS = re.compile(r"\[[^\]]*\]|\([^)]*\)")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# A chip codename token: letters, then at least one digit, optionally a letter suffix (GL, M, GLM, BM, B…).
_CHIPISH = re.compile(r"^[A-Z]{1,6}\d[0-9A-Z]*$", re.I)


def classify_nvidia(name_or_chip: str) -> ChipClass | None:
    """Chip, compute capability and architecture from a chip codename or a pci.ids/lspci device name.

    Only the chip codename counts (outside brackets, so the marketing name in ``[...]`` is ignored). Returns
    None when no chip codename is recognised (for instance a bare marketing name from NVML).
    """
    if not name_or_chip or not isinstance(name_or_chip, str):
        return None
    rules = _rules()
    text = _BRACKETS.sub(" ", name_or_chip)
    for token in _TOKEN.findall(text):
        if not _CHIPISH.match(token):
            continue
        found = _classify_token(token, rules)
        if found:
            return found
    return None


def _classify_token(token: str, rules: _ChipRules) -> ChipClass | None:
    up = token.upper()
    # Longest known chip that the token starts with, followed only by a letter suffix (GA106M, GV100GL…).
    best = None
    for chip in rules.exact:
        rest = up[len(chip) :]
        if up.startswith(chip) and (not rest or rest.isalpha()) and (best is None or len(chip) > len(best)):
            best = chip
    if best is not None:
        cc, arch, cuda = rules.exact[best]
        return ChipClass(best, cc, arch, cuda)
    for pattern, arch in rules.patterns:
        if pattern.search(token):
            return ChipClass(_strip_suffix(up), None, arch, False)
    return None


def _strip_suffix(token: str) -> str:
    """``GF100GL`` → ``GF100``, ``GF108M`` → ``GF108``; chipset names (``MCP7A``) stay whole."""
    return re.sub(r"(?<=\d)(GLM|GLS|GL|BM|M)$", "", token)


def classify_pci(vendor_id: str, device_id: str) -> ChipClass | None:
    """Chip rule applied to the pci.ids name of an NVIDIA device id; None for other vendors or unknown ids."""
    if _norm_id(vendor_id) != "10de":
        return None
    _, name = lookup(vendor_id, device_id)
    return classify_nvidia(name) if name else None


def data_versions() -> dict[str, str | None]:
    """Versions of the shipped tables, for the report's 'data as of' line."""
    return {"pci.ids": pci_ids().version, "gpu_chips": _rules().data_version}
