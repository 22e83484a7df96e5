"""Small helpers shared by the rule modules: where rules look for text, version maths, data tables.

Rules read two kinds of signal from a :class:`~gpusetup.model.Machine`:

- structured facts (driver versions, compute capability, framework builds, container state), filled by live
  detection or by ``gpusetup analyze`` from pasted output;
- literal lines (kernel log, error messages, probe errors), matched against the texts users actually see.

Everything here is pure and never raises on odd input: unknown is ``None``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from gpusetup.compat.db import DataError, get_db
from gpusetup.messages import msg, render
from gpusetup.model import Finding, FrameworkInstall, Gpu, Machine, Message, Severity
from gpusetup.pcidb import classify_pci
from gpusetup.versions import ComputeCapability, Version, arch_list_coverage

MAX_EVIDENCE = 6  # lines quoted per finding; enough to recognise the problem, short enough to read


# ------------------------------------------------------------------------------------------- text


def _text_key(machine: Machine) -> tuple[object, ...]:
    return (
        len(machine.kernel_log), len(machine.messages), machine.driver.nvml_error, len(machine.driver.evidence),
        machine.containers.toolkit_error, sum(len(env.frameworks) for env in machine.python_envs),
        machine.kernel_log[-1:], machine.messages[-1:],
    )


def text_lines(machine: Machine) -> list[str]:
    """Every line of text a rule may match: kernel log, collected messages, probe and framework errors.

    Computed once per machine state and cached on the machine (rules call this dozens of times); while
    :func:`gpusetup.rules.evaluate` runs, the lines it computed first are used as they are (rules read the
    machine, they do not change it: ~25% of evaluating a fleet went to checking the cache).
    """
    frozen = machine.__dict__.get("_rules_text_frozen") if hasattr(machine, "__dict__") else None
    if frozen is not None:
        return frozen
    key = _text_key(machine)
    cached = getattr(machine, "_rules_text_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    lines = _text_lines(machine)
    with contextlib.suppress(AttributeError):  # a machine type without a __dict__ just is not cached
        object.__setattr__(machine, "_rules_text_cache", (key, lines, "\n".join(lines)))
    return lines


@contextlib.contextmanager
def text_frozen(machine: Machine) -> Iterator[None]:
    """Within it, :func:`text_lines` gives the machine's lines computed once at the start."""
    if not hasattr(machine, "__dict__") or "_rules_text_frozen" in machine.__dict__:
        yield
        return
    machine.__dict__["_rules_text_frozen"] = text_lines(machine)
    try:
        yield
    finally:
        machine.__dict__.pop("_rules_text_frozen", None)


def _text_lines(machine: Machine) -> list[str]:
    out: list[str] = []
    out.extend(machine.kernel_log)
    out.extend(machine.messages)
    if machine.driver.nvml_error:
        out.append(f"NVML: {machine.driver.nvml_error}")
    for ev in machine.driver.evidence:
        if ev.error:
            out.append(f"{ev.source}: {ev.error}")
        if not ev.ok and ev.detail:
            out.extend(ev.detail.splitlines())
    for env in machine.python_envs:
        for fw in env.frameworks:
            if fw.error:
                out.extend(fw.error.splitlines())
    if machine.containers.toolkit_error:
        out.extend(machine.containers.toolkit_error.splitlines())
    seen: set[str] = set()
    uniq = []
    for line in out:
        s = line.rstrip()
        if s and s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


def grep(machine: Machine, pattern: str | re.Pattern[str], limit: int = MAX_EVIDENCE) -> list[str]:
    """Lines matching ``pattern`` (case-insensitive), first ``limit`` of them, stripped for quoting."""
    rx = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.IGNORECASE)
    hits = [ln.strip() for ln in text_lines(machine) if rx.search(ln)]
    return hits[:limit]


def search(machine: Machine, pattern: str | re.Pattern[str]) -> re.Match[str] | None:
    """First regex match over all text lines (for pulling numbers out of a message)."""
    rx = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.IGNORECASE)
    for ln in text_lines(machine):
        m = rx.search(ln)
        if m:
            return m
    return None


_LOG_PREFIX = re.compile(
    r"^(?:\[\s*\d+\.\d+\]\s*|\w{3} \d{1,2} [\d:]{8} \S+ [\w.@/-]+(?:\[\d+\])?:\s*|"
    r"\d{4}-\d\d-\d\d[T ][\d:.]+Z?\s*|kernel:\s*)+"
)


def strip_log_prefix(line: str) -> str:
    """"Oct 04 13:19:39 host app[394]: message" / "[  12.3] message" → "message"."""
    return _LOG_PREFIX.sub("", line.strip())


def joined_text(machine: Machine) -> str:
    """All text lines as one string, for patterns that span a wrapped kernel message."""
    lines = text_lines(machine)
    cached = getattr(machine, "_rules_text_cache", None)
    if cached is not None and cached[1] is lines:
        return cached[2]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- versions


def ver(v: str | Version | None) -> Version | None:
    """The typed version of a text from data or a log line (None when there is none): compares as packaging does.
    Model fields are typed already; this is for texts."""
    return Version.parse(v)


def vmajor(v: str | Version | None) -> int | None:
    return Version(v).major


def cuda_from_tag(version: str | Version | None) -> Version | None:
    """torch "2.4.0+cu121" → 12.1; "+cu118" → 11.8; "+cu92" → 9.2; no tag → None."""
    if not version:
        return None
    m = re.search(r"\+cu(\d{2,3})\b", str(version))
    if not m:
        return None
    digits = m.group(1)
    return Version(f"{digits[:-1]}.{digits[-1]}")


def arch_supports(cc: tuple[int, int], arch_list: Iterable[str]) -> bool | None:
    """Can a build carrying ``arch_list`` run on a GPU of compute capability ``cc``? None when the list is
    empty (unknown). The rule itself is :func:`gpusetup.versions.kernel_coverage`."""
    if not any(a and a.strip() for a in arch_list):
        return None
    return arch_list_coverage(cc, arch_list) is not None


# ------------------------------------------------------------------------------------------ facts


def probed(machine: Machine, name: str) -> bool:
    """True when the named probe ran and succeeded (so an empty answer from it means 'none')."""
    return any(p.name == name and p.ok for p in machine.probes)


def frameworks(machine: Machine, *names: str) -> list[FrameworkInstall]:
    wanted = {n.lower() for n in names}
    return [fw for env in machine.python_envs for fw in env.frameworks if fw.name.lower() in wanted]


def torch_installs(machine: Machine) -> list[FrameworkInstall]:
    return frameworks(machine, "torch", "pytorch")


def build_cuda(fw: FrameworkInstall) -> Version | None:
    return fw.build_cuda or cuda_from_tag(fw.version)


def is_cpu_build(fw: FrameworkInstall) -> bool:
    """A framework build known to carry no GPU support (not merely 'unknown')."""
    local = (fw.version.local if fw.version else None) or ""
    b = (fw.build or "").lower()
    return "cpu" in local.split(".") or b == "cpu" or "_cpu_" in b or b.startswith("cpu")


def driver_version(machine: Machine) -> Version | None:
    if machine.driver.version:
        return machine.driver.version
    for r in machine.driver.versions:
        if r.value:
            return r.value
    return None


def driver_branch(machine: Machine) -> int | None:
    return vmajor(driver_version(machine))


def nvidia_module(machine: Machine, *names: str) -> Any:
    wanted = set(names or ("nvidia",))
    for m in machine.driver.modules:
        if m.name in wanted:
            return m
    return None


def nvml_ok(machine: Machine) -> bool:
    """NVML answered (so the kernel driver and user-space library are loaded and agree)."""
    if machine.driver.nvml_error:
        return False
    if machine.driver.nvml_version:
        return True
    return any(e.source == "nvml" and e.ok for g in machine.nvidia_gpus for e in g.evidence)


def gpu_label(gpu: Gpu) -> str:
    name = gpu.name or gpu.pci.device_name or (f"PCI {gpu.pci.pci_id}" if gpu.pci.pci_id else "GPU")
    if gpu.index is not None:
        return f"GPU {gpu.index} ({name})"
    return name


def has_nvidia_gpu(machine: Machine) -> bool:
    return bool(machine.nvidia_gpus)


def is_windows(machine: Machine) -> bool:
    return (machine.system.os or "").lower() == "windows" and not machine.system.wsl


def is_macos(machine: Machine) -> bool:
    return (machine.system.os or "").lower() in ("macos", "darwin")


def in_container(machine: Machine) -> bool:
    return bool(machine.system.container)


# --------------------------------------------------------------------------------------- packages

_DPKG = re.compile(r"^(?P<status>[uihrp][ncHUFWti]R?)\s+(?P<name>\S+?)(?::\w+)?\s+(?P<version>\S+)")
_RPM = re.compile(r"^rpm\s+(?P<name>\S+)\s+(?P<version>\S+)")


def parse_package_line(line: str) -> tuple[str, str, str] | None:
    """"ii  nvidia-driver-550  550.120-0ubuntu…" → ("ii", name, version); "rpm name ver" → ("rpm", …)."""
    m = _DPKG.match(line.strip())
    if m:
        return m.group("status"), m.group("name"), m.group("version")
    m = _RPM.match(line.strip())
    if m:
        return "rpm", m.group("name"), m.group("version")
    return None


def packages(machine: Machine) -> list[tuple[str, str, str]]:
    out = []
    for line in machine.packages:
        p = parse_package_line(line)
        if p:
            out.append(p)
    return out


def package_driver_versions(machine: Machine) -> dict[str, set[str]]:
    """Upstream driver versions ("550.120") named by installed NVIDIA driver packages → package names."""
    found: dict[str, set[str]] = {}
    for status, name, version in packages(machine):
        if status not in ("ii", "rpm", "iU", "iF", "hi"):
            continue
        if not re.match(r"(lib)?nvidia-(driver|utils|compute-utils|kernel|dkms|gl|common|cfg|decode|encode|fbc|extra)"
                        r"|(lib)?nvidia-(ml|compute)|xserver-xorg-video-nvidia|kmod-nvidia|akmod-nvidia", name):
            continue
        m = re.match(r"(?:\d+:)?(\d{3,}\.\d+(?:\.\d+)?)", version)
        if m:
            found.setdefault(m.group(1), set()).add(name)
    return found


# ------------------------------------------------------------------------------------------ data


def compat_table(file: str, table: str) -> tuple[dict[str, Any], ...]:
    """Rows of one compat table, read through :func:`gpusetup.compat.db.get_db` (so a verified ``db update``
    reaches the rules as it reaches the resolver); empty when the data is missing."""
    try:
        rows = get_db().rows(file, table)
    except (DataError, OSError, KeyError, TypeError, ValueError):
        return ()
    return tuple(r for r in rows if isinstance(r, dict))


def toolkit_cc_ranges() -> list[tuple[Version, Version, ComputeCapability, ComputeCapability]]:
    """(first CUDA, last CUDA, lowest, highest compute capability it compiles for), oldest first."""
    out = []
    for row in compat_table("cuda_arch", "toolkit_targets"):
        lo, hi = Version(row.get("cuda_min")), Version(row.get("cuda_max"))
        a, b = ComputeCapability.parse(row.get("lowest_cc")), ComputeCapability.parse(row.get("highest_cc"))
        if lo and hi and a and b:
            out.append((lo, hi, a, b))
    return sorted(out, key=lambda r: r[0])


def min_driver_for_cuda(cuda: Version | str | None, windows: bool = False) -> str | None:
    """Lowest driver that runs CUDA ``cuda`` via minor-version compatibility (from compat data)."""
    try:
        return get_db().min_driver_for_cuda(cuda, "windows" if windows else "linux")
    except DataError:
        return None


def kernel_modules(cc: ComputeCapability | None) -> str | None:
    """"open" or "proprietary": the NVIDIA kernel modules a GPU of this compute capability needs (compat data)."""
    try:
        return get_db().kernel_modules(cc)
    except DataError:
        return None


def legacy_branch_for_cc(cc: ComputeCapability | None) -> tuple[int, str] | None:
    """(last driver branch, architecture) for a GPU whose CC is in a legacy range, from compat data."""
    if cc is None:
        return None
    for row in compat_table("driver_branches", "legacy_branches"):
        lo, hi = ComputeCapability.parse(row.get("cc_min")), ComputeCapability.parse(row.get("cc_max"))
        if lo and hi and lo <= cc <= hi and isinstance(row.get("last_branch"), int):
            return row["last_branch"], str(row.get("architecture") or "")
    return None


def host_compiler_limit(cuda: Version | None) -> dict[str, Any] | None:
    """The ``host_compilers`` row for a toolkit's major.minor (newest GCC/clang it accepts), None when unknown."""
    if not cuda or len(cuda.release) < 2:
        return None
    for row in compat_table("host_compilers", "nvcc_host_compilers"):
        if cuda.same_series(str(row.get("cuda") or "")):
            return row
    return None


def oldest_toolkit_accepting(kind: str, major: int) -> str | None:
    """The first CUDA major.minor whose nvcc accepts compiler ``kind`` (gcc/clang) of this major version."""
    key = "clang_max" if kind == "clang" else "gcc_max"
    ok = [str(r["cuda"]) for r in compat_table("host_compilers", "nvcc_host_compilers")
          if isinstance(r.get(key), int) and r[key] >= major and ver(str(r.get("cuda")))]
    return min(ok, key=Version) if ok else None


def parse_compiler(text: str | None) -> tuple[str, int] | None:
    """"gcc 13.2.0" → ("gcc", 13); "clang 17.0.6" → ("clang", 17); None for anything else."""
    m = re.match(r"\s*(gcc|g\+\+|clang\+*)\D*?(\d+)(?:\.\d+)*", text or "", re.IGNORECASE)
    if not m:
        return None
    kind = "clang" if m.group(1).lower().startswith("clang") else "gcc"
    return kind, int(m.group(2))


def cudnn_version(raw: str | Version | None) -> Version | None:
    """cuDNN as people write it: torch's ``90100`` → ``9.1.0``, ``8906`` → ``8.9.6``; dotted stays dotted."""
    if raw is None or not str(raw).strip():
        return None
    s = str(raw).strip()
    t = re.fullmatch(r"\(\s*(\d+),\s*(\d+),\s*(\d+)\s*\)", s)  # PyTorch prints (8, 9, 2)
    if t:
        return Version(".".join(t.groups()))
    if re.fullmatch(r"\d{4,6}", s):
        n = int(s)
        if n >= 90000:  # cuDNN 9+: major*10000 + minor*100 + patch
            return Version(f"{n // 10000}.{n % 10000 // 100}.{n % 100}")
        return Version(f"{n // 1000}.{n % 1000 // 100}.{n % 100}")  # cuDNN <= 8: major*1000 + minor*100 + patch
    return Version.parse(s)


def requirement_parts(req: str | None) -> tuple[str, SpecifierSet] | None:
    """"nvidia-cudnn-cu12==9.1.0.70" → ("nvidia-cudnn-cu12", SpecifierSet("==9.1.0.70")); ">=9.3,<10" too.
    Read as pip reads a Requires-Dist (markers after ";" are ignored); None when it is not a requirement."""
    try:
        parsed = Requirement(req or "")
    except InvalidRequirement:
        return None
    return parsed.name.lower(), parsed.specifier


def satisfies(version: str | Version | None, specs: SpecifierSet) -> bool | None:
    """Does ``version`` meet the specifier, as pip decides it (pre-releases allowed)? None when the version is
    unknown or there is nothing to meet."""
    v = Version(version).packaging
    if v is None or not specs:
        return None
    return specs.contains(v, prereleases=True)


def classify_pci_id(pci_id: str | None) -> Any:
    """PCI "10de:1d01" → ChipClass via the shipped chip rule (None when unknown or pcidb is unavailable)."""
    if not pci_id or ":" not in pci_id:
        return None
    vendor, device = pci_id.lower().split(":", 1)
    try:
        return classify_pci(vendor, device)
    except Exception:  # noqa: BLE001 - data lookups must never break a rule
        return None


# --------------------------------------------------------------------------------------- findings


def make(
    fid: str,
    severity: Severity,
    title: str,
    detail: str = "",
    fix: str | Message = "",
    evidence: Iterable[str] = (),
    catalogue: str | None = None,
    gpu_index: int | None = None,
    to_be_sure: str | Message | None = None,
    params: dict[str, object] | None = None,
) -> Finding:
    """A finding with deduplicated, bounded evidence; ``to_be_sure`` says what would confirm it.

    ``fix`` and ``to_be_sure`` are messages (a ``fix.…`` / ``sure.…`` code with this machine's values): the
    finding keeps their English words (``fix``, the end of ``detail``) and the messages themselves, so every
    surface can word them in the reader's language (:func:`gpusetup.messages.finding_words`). A plain string
    is English only. ``params`` are this machine's values a translated title or meaning may name (GPU, versions).
    """
    ev: list[str] = []
    for e in evidence:
        e = (e or "").strip()
        if e and e not in ev:
            ev.append(e if len(e) <= 400 else e[:397] + "...")
    fix_code = fix if isinstance(fix, Message) else None
    sure_code = to_be_sure if isinstance(to_be_sure, Message) else None
    if to_be_sure:
        detail = f"{detail} {render(msg('finding.to-be-sure', what=to_be_sure))}".strip()
    return Finding(
        id=fid,
        severity=severity,
        title=title,
        detail=detail,
        fix=render(fix),
        catalogue=catalogue,
        evidence=ev[:MAX_EVIDENCE],
        gpu_index=gpu_index,
        fix_code=fix_code,
        sure_code=sure_code,
        params={k: str(v) for k, v in (params or {}).items() if v is not None and str(v) != ""},
    )
