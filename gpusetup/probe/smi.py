"""``nvidia-smi``: parsers for its outputs, and the fallback probe when NVML gives nothing.

NVML is the first source (see ``nvml.py``); ``nvidia-smi -q -x`` is run only when NVML failed or saw no
NVIDIA device, because nvidia-smi is slow and can hang for minutes on a GPU that fell off the bus.

The parsers are pure functions of text so that ``gpusetup analyze`` can reuse them on output that users
paste into a support ticket. None of them raises on bad input: each returns its result type with
``error`` set (plain words) and whatever could be read before the damage. Documented error values:

- :func:`parse_smi_xml` → :class:`SmiSnapshot` with ``error`` set and ``partial=True`` when the XML is
  cut off or malformed (the elements read before the break are kept);
- :func:`parse_smi_table`, :func:`parse_smi_q` → :class:`SmiSnapshot` with ``error`` set when no
  nvidia-smi header or GPU could be found;
- :func:`parse_smi_version` → :class:`SmiVersion` with ``error`` set;
- :func:`parse_smi_list`, :func:`parse_smi_csv`, :func:`gpus_from_csv` → empty lists;
- :func:`split_capture_sections` → an empty dict for text without capture headers;
- :func:`parse_smi_failure`, :func:`parse_nvml_library_version` → ``None`` when the text holds no known
  nvidia-smi failure message / library version.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpusetup.model import Clocks, Ecc, Evidence, Gpu, GpuProcess, PcieLink, PciInfo, Reading
from gpusetup.probe import find_or_add_gpu, normalize_pci_address
from gpusetup.probe.nvtypes import THROTTLE_NAME_BITS, THROTTLE_TEXT_LABELS, MigInfo, describe_mig
from gpusetup.versions import ComputeCapability, as_version

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

SOURCE = "nvidia-smi"
MAX_PROCESSES = 32  # processes kept per GPU from <processes> (a shared server can list hundreds)
SMI_TIMEOUT = 15.0  # a healthy nvidia-smi -q -x answers in well under 2 s; a wedged GPU hangs it for minutes

# Values nvidia-smi prints for "no value". Compared case-insensitively after stripping.
_NA = {
    "",
    "n/a",
    "[n/a]",
    "not supported",
    "[not supported]",
    "not available",
    "unknown error",
    "[unknown error]",
    "requested functionality has been deprecated",
    "insufficient permissions",
    "[insufficient permissions]",
    "gpu is lost",
    "[gpu is lost]",
    "unknown",
    "redacted",
}


@dataclass
class SmiSnapshot:
    """What one nvidia-smi output says: driver, CUDA, and per-GPU facts as :class:`Gpu` objects."""

    driver_version: str | None = None
    cuda_version: str | None = None  # highest CUDA the driver supports ("CUDA Version" / "CUDA UMD Version")
    attached_gpus: int | None = None
    gpus: list[Gpu] = field(default_factory=list)
    mig: dict[int, list[MigInfo]] = field(default_factory=dict)  # per GPU position: MIG devices in detail
    dtd_version: str | None = None  # "v12" from nvsmi_device_v12.dtd (XML only)
    timestamp: str | None = None
    kind: str = "xml"  # xml / table / q
    partial: bool = False  # cut off or damaged; what was read before the damage is kept
    error: str | None = None  # plain words, None when the whole output was understood


@dataclass
class SmiVersion:
    """``nvidia-smi --version``. Since R610 "DRIVER version" is deprecated for "KMD version"."""

    smi: str | None = None
    nvml: str | None = None
    driver: str | None = None  # the kernel-mode driver version (DRIVER version, or KMD version on R610+)
    cuda: str | None = None  # CUDA Version, or CUDA UMD Version on R610+
    error: str | None = None


@dataclass
class SmiListEntry:
    """One ``nvidia-smi -L`` line: ``GPU 0: NAME (UUID: GPU-…)`` with its MIG devices."""

    index: int
    name: str
    uuid: str | None = None
    mig_devices: list[str] = field(default_factory=list)  # "MIG 3g.40gb Device 0 (MIG-…)"


# ----------------------------------------------------------------------------------- value helpers


_DEPRECATED_NOTE = re.compile(r"\s*\[[^\]]*deprecated[^\]]*\]\s*$", re.IGNORECASE)


def _clean(s: str | None) -> str | None:
    if s is None:
        return None
    s = _DEPRECATED_NOTE.sub("", s).strip()
    if s.lower() in _NA:
        return None
    return s


_NUM = re.compile(r"[-+]?\d+(?:\.\d+)?")


def _int(s: str | None) -> int | None:
    """``"16x"`` → 16, ``"10240 MiB"`` → 10240, ``"27 C"`` → 27, N/A → None."""
    s = _clean(s)
    if s is None:
        return None
    m = _NUM.search(s)
    if not m:
        return None
    try:
        return int(float(m.group()))
    except (ValueError, OverflowError):
        return None


def _float(s: str | None) -> float | None:
    s = _clean(s)
    if s is None:
        return None
    m = _NUM.search(s)
    if not m:
        return None
    try:
        return float(m.group())
    except (ValueError, OverflowError):
        return None


def _yes(s: str | None) -> bool | None:
    """Enabled/Yes/On/Active → True; Disabled/No/Off/Not Active → False; anything else → None."""
    s = _clean(s)
    if s is None:
        return None
    low = s.lower()
    if low in ("enabled", "yes", "on", "active", "true"):
        return True
    if low in ("disabled", "no", "off", "not active", "false"):
        return False
    return None


def _mode(s: str | None) -> str | None:
    """Normalise a mode string to Enabled/Disabled, keep other values, N/A → None."""
    b = _yes(s)
    if b is True:
        return "Enabled"
    if b is False:
        return "Disabled"
    return _clean(s)


def split_pci_device_id(value: str | None) -> tuple[str | None, str | None]:
    """``"221610DE"``/``"0x233010DE"`` (device id in the high half, vendor in the low) → ("10de", "2216")."""
    s = _clean(value)
    if not s:
        return None, None
    s = s.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{8}", s):
        return None, None
    return s[4:], s[:4]


def _sum(values: list[int | None]) -> int | None:
    nums = [v for v in values if v is not None]
    return sum(nums) if nums else None


# --------------------------------------------------------------------------------------- XML (-q -x)


def _xml_root(text: str) -> tuple[ET.Element | None, str | None]:
    """Parse as much of the document as possible: (root, error). A cut-off document keeps its prefix."""
    if "<!ENTITY" in text:
        return None, "the XML declares entities, which nvidia-smi never does; not read"
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
    root: ET.Element | None = None
    error = None
    try:
        parser.feed(text)
        parser.close()
    except ET.ParseError as exc:
        error = f"the nvidia-smi XML is cut off or damaged ({exc})"
    except (ValueError, TypeError) as exc:  # odd characters the expat wrapper refuses
        error = f"the nvidia-smi XML could not be read ({exc})"
    try:
        for event in parser.read_events():
            elem = event[-1]
            if isinstance(elem, ET.Element):
                root = elem
                break
    except ET.ParseError:  # pragma: no cover - events were already queued
        pass
    return root, error


def _x(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    try:
        found = el.find(path)
    except SyntaxError:  # pragma: no cover - paths are constants
        return None
    if found is None:
        return None
    return _clean(found.text or "")


def _x_first(el: ET.Element | None, *paths: str) -> str | None:
    for p in paths:
        v = _x(el, p)
        if v is not None:
            return v
    return None


def parse_smi_xml(text: str) -> SmiSnapshot:
    """Parse ``nvidia-smi -q -x`` (all DTD versions seen: none, v10 … v13). Never raises."""
    snap = SmiSnapshot(kind="xml")
    if not isinstance(text, str) or not text.strip():
        snap.error = "nvidia-smi printed nothing"
        return snap
    m = re.search(r"nvsmi_device_(v\d+)\.dtd", text[:500])
    snap.dtd_version = m.group(1) if m else None
    root, error = _xml_root(text)
    if error:
        snap.error, snap.partial = error, True
    if root is None:
        snap.partial = False
        snap.error = error if error and "entities" in error else None
        snap.error = snap.error or parse_smi_failure(text) or "no nvidia-smi XML found in the output"
        return snap
    if root.tag != "nvidia_smi_log":
        snap.error = f"not an nvidia-smi log (root element <{root.tag}>)"
        return snap
    snap.timestamp = _x(root, "timestamp")
    snap.driver_version = _x(root, "driver_version")
    snap.cuda_version = _x_first(root, "cuda_version", "cuda_umd_version")
    snap.attached_gpus = _int(_x(root, "attached_gpus"))
    for i, g in enumerate(root.findall("gpu")):
        migs: list[MigInfo] = []
        snap.mig[i] = migs
        try:
            snap.gpus.append(_gpu_from_xml(g, i, migs))
        except Exception as exc:  # noqa: BLE001 - one odd <gpu> must not hide the others
            snap.gpus.append(
                Gpu(
                    vendor="nvidia",
                    index=i,
                    evidence=[Evidence(SOURCE, ok=False, error=f"unreadable GPU entry: {exc}")],
                )
            )
    return snap


def _gpu_from_xml(g: ET.Element, index: int, migs: list[MigInfo]) -> Gpu:
    gpu = Gpu(vendor="nvidia", index=index)
    gpu.name = _x(g, "product_name")
    gpu.architecture = _x(g, "product_architecture")
    gpu.uuid = _x(g, "uuid")
    gpu.serial = _x(g, "serial")
    gpu.vbios = _x(g, "vbios_version")
    gpu.persistence_mode = _yes(_x(g, "persistence_mode"))
    gpu.display_active = _yes(_x(g, "display_active"))
    gpu.mig_mode = _mode(_x(g, "mig_mode/current_mig"))
    gpu.mig_mode_pending = _mode(_x(g, "mig_mode/pending_mig"))
    gpu.compute_mode = _compute_mode(_x(g, "compute_mode"))
    gpu.driver_model = _x(g, "driver_model/current_dm")

    bus = _x(g, "pci/pci_bus_id") or _clean(g.get("id"))
    vendor_id, device_id = split_pci_device_id(_x(g, "pci/pci_device_id"))
    sub_vendor, sub_device = split_pci_device_id(_x(g, "pci/pci_sub_system_id"))
    if vendor_id != "10de":  # masked/odd ids seen in real files ("000000DE", "[REDACTED]"): not usable
        vendor_id = device_id = None
    gpu.pci = PciInfo(
        address=normalize_pci_address(bus),
        vendor_id=vendor_id,
        device_id=device_id,
        subsystem_vendor_id=sub_vendor,
        subsystem_device_id=sub_device,
    )

    link = g.find("pci/pci_gpu_link_info")
    gpu.pcie = PcieLink(
        gen_current=_int(_x(link, "pcie_gen/current_link_gen")),
        gen_max=_int(_x(link, "pcie_gen/max_link_gen")),
        gen_device_max=_int(_x(link, "pcie_gen/max_device_link_gen")),
        width_current=_int(_x(link, "link_widths/current_link_width")),
        width_max=_int(_x(link, "link_widths/max_link_width")),
        replay_counter=_int(_x(g, "pci/replay_counter")),
    )

    gpu.memory_total_mib = _int(_x(g, "fb_memory_usage/total"))
    gpu.memory_used_mib = _int(_x(g, "fb_memory_usage/used"))
    gpu.memory_free_mib = _int(_x(g, "fb_memory_usage/free"))

    gpu.clocks = Clocks(
        graphics_mhz=_int(_x(g, "clocks/graphics_clock")),
        sm_mhz=_int(_x(g, "clocks/sm_clock")),
        memory_mhz=_int(_x(g, "clocks/mem_clock")),
        graphics_max_mhz=_int(_x(g, "max_clocks/graphics_clock")),
        sm_max_mhz=_int(_x(g, "max_clocks/sm_clock")),
        memory_max_mhz=_int(_x(g, "max_clocks/mem_clock")),
    )

    reasons = []
    for section in ("clocks_event_reasons", "clocks_throttle_reasons"):
        sec = g.find(section)
        if sec is None:
            continue
        for child in sec:
            name = child.tag.replace("clocks_event_reason_", "").replace("clocks_throttle_reason_", "")
            if _yes(child.text) is True and name not in reasons:
                reasons.append(name)
    gpu.throttle_reasons = reasons

    gpu.temperature_c = _int(_x(g, "temperature/gpu_temp"))
    gpu.power_draw_w = _float(
        _x_first(
            g,
            "gpu_power_readings/power_draw",
            "gpu_power_readings/instant_power_draw",
            "gpu_power_readings/average_power_draw",
            "power_readings/power_draw",
        )
    )
    gpu.power_limit_w = _float(
        _x_first(
            g,
            "gpu_power_readings/current_power_limit",
            "power_readings/enforced_power_limit",
            "power_readings/power_limit",
        )
    )
    gpu.utilization_gpu_pct = _int(_x(g, "utilization/gpu_util"))
    gpu.ecc = _ecc_from_xml(g)

    mig = g.find("mig_devices")
    if mig is not None:
        for d in mig.findall("mig_device"):
            migs.append(
                MigInfo(
                    index=_int(_x(d, "index")),
                    name=None,
                    gpu_instance_id=_int(_x(d, "gpu_instance_id")),
                    compute_instance_id=_int(_x(d, "compute_instance_id")),
                    sm_count=_int(_x(d, "device_attributes/shared/multiprocessor_count")),
                    memory_total_mib=_int(_x(d, "fb_memory_usage/total")),
                    uuid=None,
                )
            )
    gpu.mig_devices = [describe_mig(m) for m in migs]
    procs = g.find("processes")
    if procs is not None:
        infos = procs.findall("process_info")
        gpu.processes = len(infos)
        gpu.process_list = sorted(
            (GpuProcess(pid=_int(_x(p, "pid")), name=_x(p, "process_name"), used_mib=_int(_x(p, "used_memory")),
                        kind=_x(p, "type")) for p in infos[:MAX_PROCESSES]),
            key=lambda p: -(p.used_mib or 0),
        )
    gpu.evidence.append(Evidence(SOURCE, detail="nvidia-smi -q -x"))
    return gpu


def _ecc_counts(sec: ET.Element | None) -> tuple[int | None, int | None]:
    """(corrected, uncorrected) from a <volatile>/<aggregate> block of any DTD version."""
    if sec is None:
        return None, None
    if sec.find("single_bit") is not None or sec.find("double_bit") is not None:
        return _int(_x(sec, "single_bit/total")), _int(_x(sec, "double_bit/total"))
    corr: list[int | None] = []
    unc: list[int | None] = []
    for child in sec:
        tag = child.tag
        if tag.endswith("threshold_exceeded"):
            continue
        if "uncorrectable" in tag:
            unc.append(_int(child.text))
        elif "correctable" in tag:
            corr.append(_int(child.text))
    return _sum(corr), _sum(unc)


def _ecc_from_xml(g: ET.Element) -> Ecc:
    ecc = Ecc(
        mode_current=_mode(_x(g, "ecc_mode/current_ecc")), mode_pending=_mode(_x(g, "ecc_mode/pending_ecc"))
    )
    ecc.volatile_corrected, ecc.volatile_uncorrected = _ecc_counts(g.find("ecc_errors/volatile"))
    ecc.aggregate_corrected, ecc.aggregate_uncorrected = _ecc_counts(g.find("ecc_errors/aggregate"))
    ecc.retired_pages_sbe = _int(_x(g, "retired_pages/multiple_single_bit_retirement/retired_count"))
    ecc.retired_pages_dbe = _int(_x(g, "retired_pages/double_bit_retirement/retired_count"))
    pend = [_yes(_x(g, "retired_pages/pending_retirement")), _yes(_x(g, "retired_pages/pending_blacklist"))]
    ecc.retired_pages_pending = True if True in pend else (False if False in pend else None)
    ecc.remapped_rows_correctable = _int(_x(g, "remapped_rows/remapped_row_corr"))
    ecc.remapped_rows_uncorrectable = _int(_x(g, "remapped_rows/remapped_row_unc"))
    ecc.remapped_rows_pending = _yes(_x(g, "remapped_rows/remapped_row_pending"))
    ecc.remapped_rows_failure = _yes(_x(g, "remapped_rows/remapped_row_failure"))
    return ecc


# ------------------------------------------------------------------------------------- -q (text)


@dataclass
class _Node:
    key: str
    value: str | None
    children: list[_Node] = field(default_factory=list)

    def get(self, *path: str) -> _Node | None:
        node: _Node | None = self
        for part in path:
            if node is None:
                return None
            low = part.lower()
            node = next((c for c in node.children if c.key.lower() == low), None)
        return node

    def v(self, *path: str) -> str | None:
        n = self.get(*path)
        return _clean(n.value) if n is not None and n.value is not None else None

    def first(self, *paths: tuple[str, ...]) -> str | None:
        for p in paths:
            val = self.v(*p)
            if val is not None:
                return val
        return None

    def all(self, key: str) -> list[_Node]:
        low = key.lower()
        return [c for c in self.children if c.key.lower() == low]


_KV = re.compile(r"^(.*?\S)\s+:(?:\s+(.*))?$")


def _indent_tree(text: str) -> _Node:
    """``Key : value`` lines nested by indentation → a tree (a line with children may also have a value)."""
    root = _Node("", None)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.strip() in ("[...]",) or raw.lstrip().startswith("====="):
            continue
        indent = len(raw) - len(raw.lstrip(" \t"))
        line = raw.strip()
        m = _KV.match(line)
        node = _Node(m.group(1).strip(), (m.group(2) or "").strip()) if m else _Node(line, None)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else root
        parent.children.append(node)
        stack.append((indent, node))
    return root


def parse_smi_q(text: str) -> SmiSnapshot:
    """Parse ``nvidia-smi -q`` text (also abridged copies with ``[...]``). Never raises."""
    snap = SmiSnapshot(kind="q")
    if not isinstance(text, str) or not text.strip():
        snap.error = "nvidia-smi printed nothing"
        return snap
    failure = parse_smi_failure(text)
    if failure:
        snap.error = failure
        return snap
    try:
        root = _indent_tree(text)
    except RecursionError:  # pragma: no cover - the tree is built iteratively
        snap.error = "the nvidia-smi -q output could not be read"
        return snap
    snap.timestamp = root.v("Timestamp")
    snap.driver_version = root.first(("KMD Version",), ("Driver Version",))
    snap.cuda_version = root.first(("CUDA UMD Version",), ("CUDA Version",))
    snap.attached_gpus = _int(root.v("Attached GPUs"))
    gpu_nodes = [c for c in root.children if re.match(r"^GPU\s+[0-9A-Fa-f]+:[0-9A-Fa-f]{2}:", c.key)]
    for i, n in enumerate(gpu_nodes):
        gpu = Gpu(vendor="nvidia", index=i)
        gpu.name = n.v("Product Name")
        gpu.architecture = n.v("Product Architecture")
        gpu.uuid = n.v("GPU UUID")
        gpu.serial = n.v("Serial Number")
        gpu.vbios = n.v("VBIOS Version")
        gpu.persistence_mode = _yes(n.v("Persistence Mode"))
        gpu.display_active = _yes(n.v("Display Active"))
        gpu.mig_mode = _mode(n.v("MIG Mode", "Current"))
        gpu.mig_mode_pending = _mode(n.v("MIG Mode", "Pending"))
        gpu.compute_mode = _compute_mode(n.v("Compute Mode"))
        gpu.driver_model = n.v("Driver Model", "Current")
        vendor_id, device_id = split_pci_device_id(n.v("PCI", "Device Id"))
        sub_vendor, sub_device = split_pci_device_id(n.v("PCI", "Sub System Id"))
        gpu.pci = PciInfo(
            address=normalize_pci_address(n.v("PCI", "Bus Id") or n.key.split(None, 1)[1]),
            vendor_id=vendor_id,
            device_id=device_id,
            subsystem_vendor_id=sub_vendor,
            subsystem_device_id=sub_device,
        )
        link = n.get("PCI", "GPU Link Info")
        if link is not None:
            gpu.pcie = PcieLink(
                gen_current=_int(link.v("PCIe Generation", "Current")),
                gen_max=_int(link.v("PCIe Generation", "Max")),
                gen_device_max=_int(link.v("PCIe Generation", "Device Max")),
                width_current=_int(link.v("Link Width", "Current")),
                width_max=_int(link.v("Link Width", "Max")),
            )
        gpu.pcie.replay_counter = _int(n.v("PCI", "Replays Since Reset"))
        gpu.memory_total_mib = _int(n.v("FB Memory Usage", "Total"))
        gpu.memory_used_mib = _int(n.v("FB Memory Usage", "Used"))
        gpu.memory_free_mib = _int(n.v("FB Memory Usage", "Free"))
        gpu.clocks = Clocks(
            graphics_mhz=_int(n.v("Clocks", "Graphics")),
            sm_mhz=_int(n.v("Clocks", "SM")),
            memory_mhz=_int(n.v("Clocks", "Memory")),
            graphics_max_mhz=_int(n.v("Max Clocks", "Graphics")),
            sm_max_mhz=_int(n.v("Max Clocks", "SM")),
            memory_max_mhz=_int(n.v("Max Clocks", "Memory")),
        )
        for sec_name in ("Clocks Event Reasons", "Clocks Throttle Reasons"):
            sec = n.get(sec_name)
            if sec is None:
                continue
            for item in _walk(sec):
                name = THROTTLE_TEXT_LABELS.get(item.key.lower())
                if name and _yes(item.value) is True and name not in gpu.throttle_reasons:
                    gpu.throttle_reasons.append(name)
        gpu.temperature_c = _int(n.v("Temperature", "GPU Current Temp"))
        gpu.power_draw_w = _float(
            n.first(
                ("GPU Power Readings", "Power Draw"),
                ("GPU Power Readings", "Instantaneous Power Draw"),
                ("GPU Power Readings", "Average Power Draw"),
                ("Power Readings", "Power Draw"),
            )
        )
        gpu.power_limit_w = _float(
            n.first(
                ("GPU Power Readings", "Current Power Limit"),
                ("GPU Power Readings", "GPU Ceiling Power Limit", "Current Power Limit"),
                ("Power Readings", "Enforced Power Limit"),
                ("Power Readings", "Power Limit"),
            )
        )
        gpu.utilization_gpu_pct = _int(n.v("Utilization", "GPU"))
        gpu.ecc = _ecc_from_q(n)
        snap.mig[i] = migs = []
        for d in n.all("MIG Device"):
            migs.append(
                MigInfo(
                    index=_int(d.v("Index")),
                    name=None,
                    gpu_instance_id=_int(d.v("GPU Instance ID")),
                    compute_instance_id=_int(d.v("Compute Instance ID")),
                    sm_count=_int(d.v("Device Attributes", "Shared", "Multiprocessor count")),
                    memory_total_mib=_int(d.v("Shared FB Memory Usage", "Total")),
                    uuid=None,
                )
            )
        gpu.mig_devices = [describe_mig(m) for m in migs]
        procs = n.get("Processes")
        if procs is not None:
            gpu.processes = len(
                [
                    c
                    for c in procs.children
                    if c.get("Process ID") is not None or "process id" in c.key.lower()
                ]
            )
            if not procs.children and (procs.value or "").strip().lower() == "none":
                gpu.processes = 0
            gpu.process_list = sorted(
                (GpuProcess(pid=_int(c.value), name=c.v("Name"), used_mib=_int(c.v("Used GPU Memory")),
                            kind=c.v("Type")) for c in procs.all("Process ID")[:MAX_PROCESSES]),
                key=lambda p: -(p.used_mib or 0),
            )
        gpu.evidence.append(Evidence(SOURCE, detail="nvidia-smi -q"))
        snap.gpus.append(gpu)
    if not gpu_nodes and snap.driver_version is None:
        snap.error = "no nvidia-smi -q report found in the text"
    return snap


def _walk(node: _Node) -> list[_Node]:
    out = []
    for c in node.children:
        out.append(c)
        out.extend(_walk(c))
    return out


def _ecc_counts_q(sec: _Node | None) -> tuple[int | None, int | None]:
    if sec is None:
        return None, None
    if sec.get("Single Bit") is not None or sec.get("Double Bit") is not None:
        return _int(sec.v("Single Bit", "Total")), _int(sec.v("Double Bit", "Total"))
    corr: list[int | None] = []
    unc: list[int | None] = []
    for c in sec.children:
        k = c.key.lower()
        if "threshold" in k:
            continue
        if "uncorrectable" in k:
            unc.append(_int(c.value))
        elif "correctable" in k:
            corr.append(_int(c.value))
    return _sum(corr), _sum(unc)


def _ecc_from_q(n: _Node) -> Ecc:
    ecc = Ecc(mode_current=_mode(n.v("ECC Mode", "Current")), mode_pending=_mode(n.v("ECC Mode", "Pending")))
    ecc.volatile_corrected, ecc.volatile_uncorrected = _ecc_counts_q(n.get("ECC Errors", "Volatile"))
    ecc.aggregate_corrected, ecc.aggregate_uncorrected = _ecc_counts_q(n.get("ECC Errors", "Aggregate"))
    rp = n.get("Retired Pages")
    if rp is not None:
        # Old drivers nest a count under "Single Bit ECC"; newer print the count on the line itself.
        sbe = rp.get("Single Bit ECC")
        dbe = rp.get("Double Bit ECC")
        ecc.retired_pages_sbe = (
            _int(sbe.value) if sbe and sbe.value else _int(rp.v("Single Bit ECC", "Retired Count"))
        )
        ecc.retired_pages_dbe = (
            _int(dbe.value) if dbe and dbe.value else _int(rp.v("Double Bit ECC", "Retired Count"))
        )
        ecc.retired_pages_pending = _yes(rp.first(("Pending Page Blacklist",), ("Pending Retirement",)))
    rr = n.get("Remapped Rows")
    if rr is not None:
        ecc.remapped_rows_correctable = _int(rr.v("Correctable Error"))
        ecc.remapped_rows_uncorrectable = _int(rr.v("Uncorrectable Error"))
        ecc.remapped_rows_pending = _yes(rr.v("Pending"))
        ecc.remapped_rows_failure = _yes(rr.v("Remapping Failure Occurred"))
    return ecc


# ------------------------------------------------------------------------------ default table


_HEADER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>[\w.]+)\s+(?:Driver|KMD)\s+Version:\s*(?P<driver>[\w.]+)\s+CUDA(?:\s+UMD)?\s+Version:\s*(?P<cuda>[\w./]+)",
    re.IGNORECASE,
)


def parse_smi_header(text: str) -> tuple[str | None, str | None]:
    """(driver version, CUDA version) from the first line of the default table, old or new layout."""
    m = _HEADER.search(text or "")
    if not m:
        return None, None
    return _clean(m.group("driver")), _clean(m.group("cuda"))


def parse_smi_table(text: str) -> SmiSnapshot:
    """Parse the default ``nvidia-smi`` table (pre-2023 and current layouts, Linux and Windows). Never raises.

    Names in this table are cut to the column width (``NVIDIA GeForce RTX 2080 ...``); they are kept as
    printed, so a caller can tell they are truncated.
    """
    snap = SmiSnapshot(kind="table")
    if not isinstance(text, str) or not text.strip():
        snap.error = "nvidia-smi printed nothing"
        return snap
    failure = parse_smi_failure(text)
    if failure:
        snap.error = failure
        return snap
    snap.driver_version, snap.cuda_version = parse_smi_header(text)
    lines = text.splitlines()
    status_col = "persistence"
    for line in lines:
        if "Driver-Model" in line or "TCC/WDDM" in line:
            status_col = "driver_model"
            break
    # GPU rows: after the first "|===" line, until a line that is not part of a box.
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith("|==="))
    except StopIteration:
        if snap.driver_version is None:
            snap.error = "no nvidia-smi table found in the text"
        else:
            snap.error, snap.partial = "the nvidia-smi table has no GPU rows (cut off?)", True
        return snap
    blocks: list[list[str]] = []
    cur: list[str] = []
    for ln in lines[start + 1 :]:
        if ln.startswith("|") and not ln.startswith("|---"):
            cur.append(ln)
            continue
        if cur:
            blocks.append(cur)
            cur = []
        if not (ln.startswith("+") or ln.startswith("|---")):
            break
    if cur:
        blocks.append(cur)
    for block in blocks:
        gpu = _gpu_from_table_block(block, status_col)
        if gpu is not None:
            snap.gpus.append(gpu)
    _table_mig_and_processes(lines, snap)
    if snap.gpus and not any("Processes:" in ln for ln in lines):
        snap.partial = True
        snap.error = "the nvidia-smi table stops early (no process list); the GPU rows were read"
    if not snap.gpus:
        snap.error, snap.partial = "the nvidia-smi table has no readable GPU rows", True
    return snap


_COMPUTE_MODES = {"default": "Default", "e. process": "Exclusive_Process", "exclusive_process": "Exclusive_Process",
                  "e. thread": "Exclusive_Thread", "exclusive_thread": "Exclusive_Thread", "prohibited": "Prohibited"}


def _compute_mode(value: str | None) -> str | None:
    """nvidia-smi's compute mode in any of its spellings ("E. Process" in the table) → NVML's name."""
    return _COMPUTE_MODES.get((value or "").strip().lower()) if value else None


_ROW1 = re.compile(r"^\s*(?P<idx>\d+)\s+(?P<name>.*?)\s+(?P<status>On|Off|WDDM|TCC|MCDM|N/A)\s*$")


def _gpu_from_table_block(block: list[str], status_col: str) -> Gpu | None:
    cells = [ln.strip().strip("|").split("|") for ln in block]
    if not cells or len(cells[0]) < 3:
        return None
    m = _ROW1.match(cells[0][0])
    if not m:
        return None
    gpu = Gpu(vendor="nvidia", index=int(m.group("idx")), name=m.group("name").strip() or None)
    status = m.group("status")
    if status_col == "driver_model":
        gpu.driver_model = _clean(status)
    else:
        gpu.persistence_mode = _yes(status)
    bus = cells[0][1].split()
    if bus:
        gpu.pci = PciInfo(address=normalize_pci_address(bus[0]))
        if len(bus) > 1:
            gpu.display_active = _yes(bus[1])
    ecc_cell = _clean(cells[0][2])
    if ecc_cell is not None and ecc_cell.isdigit():
        gpu.ecc.volatile_uncorrected = int(ecc_cell)
    if len(cells) > 1 and len(cells[1]) >= 3:
        c0 = cells[1][0]
        t = re.search(r"(-?\d+)C\b", c0)
        gpu.temperature_c = int(t.group(1)) if t else None
        p = re.search(r"(\S+)\s*/\s*(\S+)\s*$", c0)
        if p:
            gpu.power_draw_w = _float(p.group(1).rstrip("W")) if p.group(1) != "N/A" else None
            gpu.power_limit_w = _float(p.group(2).rstrip("W")) if p.group(2) != "N/A" else None
        mem = re.search(r"(\d+)MiB\s*/\s*(\d+)MiB", cells[1][1])
        if mem:
            gpu.memory_used_mib, gpu.memory_total_mib = int(mem.group(1)), int(mem.group(2))
            gpu.memory_free_mib = gpu.memory_total_mib - gpu.memory_used_mib
        u = re.search(r"(\d+)%", cells[1][2])
        gpu.utilization_gpu_pct = int(u.group(1)) if u else None
        cm = re.search(r"(Default|E\. Process|E\. Thread|Prohibited)\s*$", cells[1][2].strip())
        gpu.compute_mode = _compute_mode(cm.group(1)) if cm else None
    if len(cells) > 2 and len(cells[2]) >= 3:
        gpu.mig_mode = _mode(cells[2][2])
    gpu.evidence.append(Evidence(SOURCE, detail="nvidia-smi (table)"))
    return gpu


# what follows the type in a Processes row: the (possibly cut) name and the memory ("15690MiB", or N/A on WDDM)
_TABLE_PROCESS_TAIL = re.compile(r"\s*(.*?)\s+(\d+\s*MiB|N/A)\s*\|\s*$")


def _table_mig_and_processes(lines: list[str], snap: SmiSnapshot) -> None:
    by_index = {g.index: g for g in snap.gpus}
    section = None
    for ln in lines:
        if "MIG devices:" in ln:
            section = "mig"
            continue
        if "Processes:" in ln:
            section = "proc"
            for g in snap.gpus:
                g.processes = 0
            continue
        if section == "mig":
            m = re.match(
                r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)\s", ln
            )
            if m and int(m.group(1)) in by_index:
                info = MigInfo(
                    index=int(m.group(4)),
                    name=None,
                    gpu_instance_id=int(m.group(2)),
                    compute_instance_id=int(m.group(3)),
                    sm_count=int(m.group(7)),
                    memory_total_mib=int(m.group(6)),
                    uuid=None,
                )
                snap.mig.setdefault(int(m.group(1)), []).append(info)
                by_index[int(m.group(1))].mig_devices.append(describe_mig(info))
        elif section == "proc":
            m = re.match(r"^\|\s+(\d+)\s+(?:\S+\s+\S+\s+)?(\d+)\s+(C\+G|C|G|M|M\+C)\s", ln)
            if m and int(m.group(1)) in by_index:
                g = by_index[int(m.group(1))]
                g.processes = (g.processes or 0) + 1
                rest = _TABLE_PROCESS_TAIL.match(ln[m.end():])
                if rest and len(g.process_list) < MAX_PROCESSES:
                    g.process_list.append(GpuProcess(pid=int(m.group(2)), name=rest.group(1) or None,
                                                     used_mib=_int(rest.group(2)), kind=m.group(3)))
                    g.process_list.sort(key=lambda p: -(p.used_mib or 0))


# -------------------------------------------------------------------------------- small outputs


def parse_smi_version(text: str) -> SmiVersion:
    """``nvidia-smi --version`` (also R610+: "KMD version" / "CUDA UMD version"). Never raises."""
    ver = SmiVersion()
    if not isinstance(text, str) or not text.strip():
        ver.error = "nvidia-smi printed nothing"
        return ver
    vals: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            vals[key.strip().lower()] = value.strip()

    def good(v: str | None) -> str | None:
        v = _clean(v)
        if v is None or v.lower().startswith("deprecated"):
            return None
        return v

    ver.smi = good(vals.get("nvidia-smi version"))
    ver.nvml = good(vals.get("nvml version"))
    ver.driver = good(vals.get("kmd version")) or good(vals.get("driver version"))
    ver.cuda = good(vals.get("cuda umd version")) or good(vals.get("cuda version"))
    if not any((ver.smi, ver.nvml, ver.driver, ver.cuda)):
        ver.error = parse_smi_failure(text) or "no version lines found in the nvidia-smi --version output"
    return ver


_LIST_GPU = re.compile(r"^GPU\s+(\d+):\s+(.*?)\s*(?:\(UUID:\s*([^)]+)\))?\s*$")
_LIST_MIG = re.compile(r"^\s+(MIG\s+\S+)\s+Device\s+(\d+):\s*(?:\(UUID:\s*([^)]+)\))?")


def parse_smi_list(text: str) -> list[SmiListEntry]:
    """``nvidia-smi -L``. Never raises; unreadable lines are skipped."""
    out: list[SmiListEntry] = []
    if not isinstance(text, str):
        return out
    for line in text.splitlines():
        m = _LIST_GPU.match(line.rstrip())
        if m:
            out.append(SmiListEntry(int(m.group(1)), m.group(2), _clean(m.group(3))))
            continue
        mm = _LIST_MIG.match(line)
        if mm and out:
            uuid = _clean(mm.group(3))
            out[-1].mig_devices.append(f"{mm.group(1)} Device {mm.group(2)}" + (f" ({uuid})" if uuid else ""))
    return out


def parse_smi_csv(text: str) -> list[dict[str, str | None]]:
    """``nvidia-smi --query-gpu=... --format=csv``: one dict per GPU keyed by field name without units.

    ``memory.used [MiB]`` becomes ``memory.used``; ``[N/A]`` becomes None; abridged ``[...]`` lines are
    skipped. Never raises; returns [] when there is no header.
    """
    if not isinstance(text, str):
        return []
    lines = [ln for ln in text.splitlines() if ln.strip() and ln.strip() != "[...]"]
    if not lines:
        return []
    header = [re.sub(r"\s*\[[^\]]*\]\s*$", "", h.strip()) for h in lines[0].split(",")]
    if not header or not all(re.fullmatch(r"[A-Za-z_][\w.]*", h) for h in header):
        return []
    rows = []
    for ln in lines[1:]:
        vals = [v.strip() for v in ln.split(",")]
        if len(vals) != len(header):
            continue
        rows.append({h: _clean(v) for h, v in zip(header, vals, strict=False)})
    return rows


def gpus_from_csv(rows: list[dict[str, str | None]]) -> list[Gpu]:
    """``--query-gpu`` rows (see :func:`parse_smi_csv`) → :class:`Gpu` objects; unknown fields are ignored.

    This is the one nvidia-smi output that carries ``compute_cap``. Field names follow
    ``nvidia-smi --help-query-gpu`` (both ``name`` and ``gpu_name`` spellings).
    """
    out = []
    for pos, r in enumerate(rows):

        def f(*keys: str, _r: dict[str, str | None] = r) -> str | None:
            for k in keys:
                if _r.get(k) is not None:
                    return _r[k]
            return None

        g = Gpu(vendor="nvidia", index=_int(f("index")) if f("index") is not None else pos)
        g.name = f("name", "gpu_name")
        g.uuid = f("uuid", "gpu_uuid")
        g.serial = f("serial", "gpu_serial")
        g.vbios = f("vbios_version")
        vendor_id, device_id = split_pci_device_id(f("pci.device_id"))
        sub_vendor, sub_device = split_pci_device_id(f("pci.sub_device_id"))
        g.pci = PciInfo(
            address=normalize_pci_address(f("pci.bus_id", "gpu_bus_id")),
            vendor_id=vendor_id,
            device_id=device_id,
            subsystem_vendor_id=sub_vendor,
            subsystem_device_id=sub_device,
        )
        cc = f("compute_cap")
        if cc and re.fullmatch(r"\d+\.\d+", cc):
            g.compute_capability, g.compute_capability_source = ComputeCapability.parse(cc), SOURCE
        g.memory_total_mib, g.memory_used_mib, g.memory_free_mib = (
            _int(f("memory.total")),
            _int(f("memory.used")),
            _int(f("memory.free")),
        )
        g.pcie = PcieLink(
            gen_current=_int(f("pcie.link.gen.current", "pcie.link.gen.gpucurrent")),
            gen_max=_int(f("pcie.link.gen.max")),
            gen_device_max=_int(f("pcie.link.gen.gpumax")),
            width_current=_int(f("pcie.link.width.current")),
            width_max=_int(f("pcie.link.width.max")),
        )
        g.clocks = Clocks(
            graphics_mhz=_int(f("clocks.current.graphics", "clocks.gr")),
            sm_mhz=_int(f("clocks.current.sm", "clocks.sm")),
            memory_mhz=_int(f("clocks.current.memory", "clocks.mem")),
            graphics_max_mhz=_int(f("clocks.max.graphics", "clocks.max.gr")),
            sm_max_mhz=_int(f("clocks.max.sm")),
            memory_max_mhz=_int(f("clocks.max.memory", "clocks.max.mem")),
        )
        g.ecc = Ecc(
            mode_current=_mode(f("ecc.mode.current")),
            mode_pending=_mode(f("ecc.mode.pending")),
            volatile_corrected=_int(f("ecc.errors.corrected.volatile.total")),
            volatile_uncorrected=_int(f("ecc.errors.uncorrected.volatile.total")),
            aggregate_corrected=_int(f("ecc.errors.corrected.aggregate.total")),
            aggregate_uncorrected=_int(f("ecc.errors.uncorrected.aggregate.total")),
            retired_pages_sbe=_int(f("retired_pages.single_bit_ecc.count", "retired_pages.sbe")),
            retired_pages_dbe=_int(f("retired_pages.double_bit.count", "retired_pages.dbe")),
            retired_pages_pending=_yes(f("retired_pages.pending")),
            remapped_rows_correctable=_int(f("remapped_rows.correctable")),
            remapped_rows_uncorrectable=_int(f("remapped_rows.uncorrectable")),
            remapped_rows_pending=_yes(f("remapped_rows.pending")),
            remapped_rows_failure=_yes(f("remapped_rows.failure")),
        )
        g.throttle_reasons = [
            name
            for name in THROTTLE_NAME_BITS
            if _yes(f(f"clocks_event_reasons.{name}", f"clocks_throttle_reasons.{name}"))
        ]
        g.temperature_c = _int(f("temperature.gpu"))
        g.power_draw_w = _float(f("power.draw", "power.draw.instant", "power.draw.average"))
        g.power_limit_w = _float(f("enforced.power.limit", "power.limit"))
        g.utilization_gpu_pct = _int(f("utilization.gpu"))
        g.persistence_mode = _yes(f("persistence_mode"))
        g.display_active = _yes(f("display_active"))
        g.mig_mode = _mode(f("mig.mode.current"))
        g.mig_mode_pending = _mode(f("mig.mode.pending"))
        g.compute_mode = _compute_mode(f("compute_mode"))
        g.driver_model = f("driver_model.current")
        g.evidence.append(Evidence(SOURCE, detail="nvidia-smi --query-gpu"))
        out.append(g)
    return out


_SECTION = re.compile(r"^# (?P<state>[\w-]+) :: (?P<name>.+?)\s*$")


def split_capture_sections(text: str) -> dict[str, str]:
    """A whole capture file (``# idle :: query (-q)`` headers between ``####`` rules) → {"idle :: query (-q)": body}.

    Captures made by nvidia_gpu_exporter's collector hold every nvidia-smi output of one machine; support
    bundles may hold the same. Never raises; text without such headers gives {}.
    """
    sections: dict[str, str] = {}
    if not isinstance(text, str):
        return sections
    current: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            if current is not None:
                sections[current] = "\n".join(body).strip("\n")
            current, body = f"{m.group('state')} :: {m.group('name')}", []
            continue
        if current is None or line.startswith("# $ ") or re.fullmatch(r"#{20,}", line.strip()):
            continue
        body.append(line)
    if current is not None:
        sections[current] = "\n".join(body).strip("\n")
    return sections


_FAILURES: tuple[tuple[str, str], ...] = (
    (
        "couldn't communicate with the nvidia driver",
        "nvidia-smi could not talk to the NVIDIA driver: the driver is not installed, or its kernel module is "
        "not loaded (often after a kernel update, or because Secure Boot blocked it).",
    ),
    (
        "driver/library version mismatch",
        "The NVIDIA kernel module and the user-space driver libraries are different versions (usually after a "
        "driver update without a reboot). Reboot, or reload the nvidia kernel modules.",
    ),
    (
        "no devices were found",
        "The NVIDIA driver is loaded but sees no GPU (it may be bound to another driver, disabled, or hidden).",
    ),
    (
        "gpu is lost",
        'A GPU stopped answering ("GPU is lost"): it fell off the PCIe bus. This needs a reboot and often '
        "points to power, cooling or seating problems.",
    ),
    (
        "unable to determine the device handle",
        "nvidia-smi could not open one of the GPUs; it may have fallen off the bus or be in a bad state.",
    ),
    (
        "insufficient permissions",
        "nvidia-smi has no permission to access the GPU device files (/dev/nvidia*).",
    ),
    (
        "failed to initialize nvml",
        "nvidia-smi could not start NVML, the NVIDIA management library that comes with the driver.",
    ),
    (
        "nvml library not found",
        "The NVIDIA management library (libnvidia-ml) is missing: the NVIDIA driver is not (fully) installed.",
    ),
)


_NVML_LIB = re.compile(r"NVML library version:\s*(\d+\.\d+(?:\.\d+)?)")


def parse_nvml_library_version(text: str) -> str | None:
    """Newer nvidia-smi prints ``NVML library version: 570.124`` after "Driver/library version mismatch":
    the user-space side of the mismatch."""
    if not isinstance(text, str):
        return None
    m = _NVML_LIB.search(text)
    return m.group(1) if m else None


def parse_smi_failure(text: str) -> str | None:
    """A known nvidia-smi failure message → what it means in plain words; otherwise None."""
    if not isinstance(text, str):
        return None
    low = text.lower()
    for needle, meaning in _FAILURES:
        if needle in low:
            return meaning
    return None


# ---------------------------------------------------------------------------------- merging, probe


def merge_gpu(dst: Gpu, src: Gpu) -> None:
    """Copy what ``src`` knows into ``dst``; PCI ids already known (from the bus) are kept."""
    for name in (
        "name",
        "index",
        "uuid",
        "serial",
        "memory_total_mib",
        "memory_used_mib",
        "memory_free_mib",
        "sm_count",
        "vbios",
        "temperature_c",
        "power_draw_w",
        "power_limit_w",
        "utilization_gpu_pct",
        "persistence_mode",
        "mig_mode",
        "mig_mode_pending",
        "driver_model",
        "display_active",
        "processes",
    ):
        v = getattr(src, name)
        if v is not None:
            setattr(dst, name, v)
    if src.compute_capability and not dst.compute_capability:
        dst.compute_capability = src.compute_capability
        dst.compute_capability_source = src.compute_capability_source
    if src.architecture and not dst.architecture:
        dst.architecture = src.architecture
    for f in ("address", "vendor_id", "device_id", "subsystem_vendor_id", "subsystem_device_id"):
        if getattr(dst.pci, f) is None and getattr(src.pci, f) is not None:
            setattr(dst.pci, f, getattr(src.pci, f))
    dst.clocks, dst.pcie, dst.ecc = src.clocks, src.pcie, src.ecc
    if src.throttle_reasons:
        dst.throttle_reasons = list(src.throttle_reasons)
    if src.mig_devices:
        dst.mig_devices = list(src.mig_devices)
    if src.process_list:
        dst.process_list = list(src.process_list)
    dst.evidence.extend(src.evidence)


def _nvml_gave_data(machine: Machine) -> bool:
    return any(any(e.source == "nvml" and e.ok for e in g.evidence) for g in machine.nvidia_gpus)


def probe(ctx: ProbeContext, machine: Machine) -> None:
    """Fallback: run ``nvidia-smi -q -x`` only when NVML produced no NVIDIA device data."""
    if _nvml_gave_data(machine):
        return
    exe = ctx.runner.which("nvidia-smi")
    if exe is None:
        machine.driver.evidence.append(
            Evidence(SOURCE, ok=False, error="nvidia-smi is not installed (not on PATH)")
        )
        return
    timeout = min(ctx.timeout, SMI_TIMEOUT) if ctx.timeout else SMI_TIMEOUT
    res = ctx.runner.run(["nvidia-smi", "-q", "-x"], timeout=timeout)
    if res.timed_out:
        machine.driver.evidence.append(
            Evidence(
                SOURCE,
                ok=False,
                error=f"timed out: nvidia-smi did not answer within {timeout:g} s (stopped). A GPU that fell off "
                "the bus or a wedged driver does this.",
                detail=res.error,
            )
        )
        if "<gpu " not in res.stdout:
            return
        # What it printed before it hung is still worth having (the GPUs before the wedged one).
    elif res.error and res.returncode is None:
        machine.driver.evidence.append(Evidence(SOURCE, ok=False, error=res.error))
        return
    snap = parse_smi_xml(res.stdout) if "<nvidia_smi_log" in res.stdout else None
    if snap is None or (not snap.gpus and snap.driver_version is None):
        if res.timed_out:
            return
        msg = parse_smi_failure(res.stdout + "\n" + res.stderr)
        if msg is None:
            tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
            msg = f"nvidia-smi failed (exit code {res.returncode}): {tail[0][:200]}".rstrip(": ")
        machine.driver.evidence.append(
            Evidence(SOURCE, ok=False, error=msg, detail=(res.stdout + res.stderr)[-500:])
        )
        lib_version = parse_nvml_library_version(res.stdout + "\n" + res.stderr)
        machine.driver.versions.append(Reading(as_version(lib_version), SOURCE, error=msg))
        return
    machine.driver.versions.append(Reading(as_version(snap.driver_version), SOURCE, error=snap.error))
    if snap.cuda_version and not machine.driver.cuda_driver_version:
        machine.driver.cuda_driver_version = as_version(snap.cuda_version)
        machine.driver.cuda_driver_version_source = SOURCE
    machine.driver.evidence.append(
        Evidence(
            SOURCE,
            ok=snap.error is None,
            error=snap.error,
            detail=f"nvidia-smi -q -x ({len(snap.gpus)} GPU(s))",
        )
    )
    for src in snap.gpus:
        dst = find_or_add_gpu(machine, "nvidia", src.pci.address)
        merge_gpu(dst, src)


def throttle_mask_from_names(names: list[str]) -> int:
    """For fakes: nvidia-smi reason names → NVML bitmask."""
    return sum(THROTTLE_NAME_BITS.get(n, 0) for n in set(names))
