"""What every framework family shares when it enumerates its builds: the machine as the resolver sees it
(:class:`Env`, :class:`GpuRef`), one published build and what speaks against it (:class:`Cand`), and the rules
that are not a framework's own — driver minimums (CUDA family, per-architecture, legacy branches), the wheel
check against the derived release history (:mod:`gpusetup.compat.wheels`), cuDNN pins, kernel coverage.

Each family (:mod:`.torch_builds`, :mod:`.tensorflow_builds`, :mod:`.jax_builds`) implements :class:`Family`;
:mod:`gpusetup.compat.resolver` searches over their candidates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpusetup import versions
from gpusetup.compat import branches
from gpusetup.compat import wheels as W
from gpusetup.compat.db import CompatDB, DataError
from gpusetup.enrich import CHIP_RULE_SOURCE, NAME_MATCH_SOURCE
from gpusetup.messages import msg
from gpusetup.model import Gpu, Machine, Message
from gpusetup.versions import ComputeCapability, PythonVersion, Version, kernel_coverage, planned_python
from gpusetup.versions import version_key as vkey

UNLIMITED = Version("9999")


# ------------------------------------------------------------------------------------ the machine


@dataclass(frozen=True, eq=False)
class GpuRef:
    """GPU number ``index`` of the machine (its position in ``Machine.gpus``, what ``--gpu`` names) and the
    :class:`~gpusetup.model.Gpu` itself: every fact is read from it as detection and the enrich step left it."""

    index: int
    gpu: Gpu

    @property
    def label(self) -> str:
        g = self.gpu
        return f"GPU {self.index}: {g.name or g.pci.device_name or g.pci.pci_id or self.vendor}"

    @property
    def vendor(self) -> str:
        return (self.gpu.vendor or "other").lower()

    @property
    def cc(self) -> ComputeCapability | None:
        return self.gpu.compute_capability

    @property
    def architecture(self) -> str | None:
        return self.gpu.architecture

    @property
    def gfx(self) -> str | None:
        return (self.gpu.gfx_target or "").lower() or None if self.vendor == "amd" else None

    @property
    def classified_from(self) -> str | None:
        """How the enrich step found the compute capability, when no driver reported it."""
        g = self.gpu
        if g.compute_capability is None:
            return None
        if g.compute_capability_source == CHIP_RULE_SOURCE:
            return next((e.detail for e in g.evidence if e.source == CHIP_RULE_SOURCE and e.ok and e.detail), None)
        if g.compute_capability_source == NAME_MATCH_SOURCE:
            return f"pci.ids name match for {g.name!r}"
        return None


def cc_in(cc: ComputeCapability | None, lo: str | None, hi: str | None) -> bool:
    """Is ``cc`` within a data row's [lo, hi] (texts such as "5.0"; a missing bound is open)? False when unknown."""
    if cc is None:
        return False
    low, high = ComputeCapability.parse(lo), ComputeCapability.parse(hi)
    return (low is None or low <= cc) and (high is None or cc <= high)


def cc_below(cc: ComputeCapability | None, bound: str | None) -> bool:
    b = ComputeCapability.parse(bound)
    return cc is not None and b is not None and cc < b


def cc_above(cc: ComputeCapability | None, bound: str | None) -> bool:
    b = ComputeCapability.parse(bound)
    return cc is not None and b is not None and cc > b


def in_range(v: Version | str, lo: str | None, hi: str | None) -> bool:
    v = v if isinstance(v, Version) else vkey(v)
    if lo and v < vkey(lo):
        return False
    return not (hi and v > vkey(hi))


@dataclass
class Env:
    """Platform facts that decide which wheels exist and which driver numbers apply."""

    os: str | None  # linux / windows / macos
    wsl: bool
    machine: str | None  # x86_64 / aarch64 / arm64
    python: PythonVersion | None  # 3.12, or free-threaded 3.13t
    driver: Version | None
    jetson: bool = False
    driver_cap: Version = UNLIMITED  # the newest driver these GPUs can use (legacy branches)
    macos: Version | None = None  # the macOS release ("14.5"): wheels tagged macosx_14_0 need 14 or newer
    # an NVIDIA driver is installed and answering even when its version number is unknown (kernel module loaded,
    # a GPU bound to it, NVML or the CUDA driver API answered): then "no driver is installed" would be false
    driver_present: bool = False
    driver_said: Message | None = None  # how the driver is named when only a lower bound is known

    @property
    def driver_words(self) -> Message | str:
        """The driver as the reasons name it ("you have …")."""
        return self.driver_said if self.driver_said is not None else str(self.driver)

    @property
    def wheel_os(self) -> str | None:
        """Which OS's wheels get installed (WSL2 runs Linux wheels)."""
        return "linux" if self.wsl else self.os

    @property
    def driver_os(self) -> str:
        """Which driver numbering applies: WSL2 uses the Windows host driver."""
        return "windows" if (self.wsl or self.os == "windows") else "linux"

    @property
    def driver_key(self) -> Version | None:
        return self.driver if self.driver else None

    @property
    def platform(self) -> str:
        """The wheel platform key: "linux-x86_64", "macos-arm64", "windows-x86_64"."""
        return f"{self.wheel_os}-{self.machine}"

    def target(self) -> W.Target:
        return W.Target(self.platform, self.python, self.macos if self.wheel_os == "macos" else None)

    def where(self) -> str:
        if self.wsl:
            return "WSL2"
        return {"linux": "Linux", "windows": "native Windows", "macos": "macOS"}.get(self.os or "", self.os or "this OS")

    def where_machine(self) -> str:
        return f"{self.where()} {self.machine}"

    @property
    def py_text(self) -> str:
        return str(self.python) if self.python else "unknown"


def norm_machine(arch: str | None) -> str | None:
    if not arch:
        return None
    a = arch.lower()
    if a in ("amd64", "x86_64", "x64"):
        return "x86_64"
    if a in ("arm64", "aarch64"):
        return "aarch64"
    return a


def driver_loaded(machine: Machine) -> bool:
    """An NVIDIA driver is installed and loaded, whatever its version: the kernel module is loaded, a GPU is
    bound to it, or NVML answered."""
    d = machine.driver
    return bool(d.nvml_version) or any(m.name == "nvidia" and m.loaded for m in d.modules) or any(
        (g.pci.kernel_driver or "") == "nvidia" for g in machine.gpus if g.vendor == "nvidia")


def machine_driver(db: CompatDB, machine: Machine, env: Env, notes: list[Message]) -> None:
    """The driver version the plan judges by: the one read (driver.version, else the first reading), else, when
    only the CUDA version the driver supports is known (deviceQuery, a report), the first driver that supports
    that CUDA — a lower bound, said as one — and whether a driver is there at all."""
    d = machine.driver
    env.driver = d.version or next((r.value for r in d.versions if r.value), None)
    env.driver_present = env.driver is not None or driver_loaded(machine)
    if env.driver is None and d.cuda_driver_version:
        floor = db.toolkit_driver(d.cuda_driver_version, env.driver_os)
        if floor:
            env.driver, env.driver_present = Version(floor), True
            env.driver_said = msg("word.driver-from-cuda", driver=floor, cuda=str(d.cuda_driver_version))
            notes.append(msg("note.driver-from-cuda", cuda=str(d.cuda_driver_version), driver=floor,
                             source=d.cuda_driver_version_source or "the driver"))


def machine_env(machine: Machine, python_version: str | None) -> tuple[Env, list[Message]]:
    notes: list[Message] = []
    s = machine.system
    os_name = (s.os or "").lower() or None
    if os_name in ("darwin", "mac", "osx"):
        os_name = "macos"
    arch = norm_machine(s.arch)
    if os_name == "macos" and arch == "aarch64":
        arch = "arm64"
    py: Any = python_version or s.python
    if not py:
        for pyenv in machine.python_envs:
            if pyenv.version:
                py = pyenv.version
                break
    pyv = planned_python(str(py)) if py else None
    if pyv is None:
        notes.append(msg("note.python-unknown"))
    if os_name is None:
        notes.append(msg("note.os-unknown"))
        os_name = "linux"
    if arch is None:
        arch = "arm64" if os_name == "macos" else "x86_64"
        notes.append(msg("note.arch-unknown", arch=arch))
    macos = Version.parse(s.os_version) if os_name == "macos" else None
    if macos is not None and (macos.major or 0) < 10:
        macos = None  # not a macOS release number (a Darwin kernel version is 2x.y)
    env = Env(os=os_name, wsl=bool(s.wsl), machine=arch, python=pyv, driver=machine.driver.version,
              jetson=bool(s.is_jetson), macos=macos)
    return env, notes


# ------------------------------------------------------------------------------------ candidates


@dataclass
class Cand:
    """One published build (framework release × variant) and everything that speaks against it."""

    framework: str
    version: str  # release series "2.14" (torch, TensorFlow) or release "0.6.2" (JAX)
    variant: str  # cu126 / rocm6.4 / xpu / mps / and-cuda / cuda13 / cuda11.8 / rocm7-local
    kind: str  # cuda / rocm / xpu / mps / cpu
    index_url: str | None = None
    packages: list[str] = field(default_factory=list)
    conda: list[str] = field(default_factory=list)
    python_range: tuple[str | None, str | None] = (None, None)
    python_bad: Message | None = None
    platform_bad: Message | None = None
    gpu_bad: dict[int, Message] = field(default_factory=dict)  # GPU index → why it has no kernels
    need_driver: str | None = None  # minimum driver version (for this OS's numbering)
    driver_why: Message | None = None  # why that minimum ("for CUDA 12.x builds")
    notes: list[Message] = field(default_factory=list)
    unverified: list[Message] = field(default_factory=list)
    order: int = 0  # lower is preferred
    env: dict[str, str] = field(default_factory=dict)  # runtime variables the build needs (set on activation)
    python: str | None = None  # the Python the chosen wheels are for ("3.13t"), when it differs from the machine's

    @property
    def option(self) -> str:
        names = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
        return f"{self.variant} ({names[self.framework]} {self.version})"


class Family(Protocol):
    """One framework family: its GPU backends, its builds for a machine, and its CPU build."""

    name: str  # "pytorch"
    label: str  # "PyTorch"
    package: str  # "torch"
    kinds: frozenset[str]  # GPU backends it has builds for: cuda / rocm / xpu / mps

    def candidates(self, db: CompatDB, env: Env, gpus: Sequence[GpuRef], kind: str) -> Iterator[Cand]:
        """Its builds for these GPUs, newest (most preferred) first: made as they are asked for, so a search
        that finds a working build early does not check the older ones."""
        ...

    def cpu_choice(self, db: CompatDB, env: Env) -> tuple[Cand | None, list[Message]]: ...

    def backend_notes(self, db: CompatDB, cand: Cand) -> list[Message]: ...

    def newest_known(self, db: CompatDB) -> str | None: ...


# ----------------------------------------------------------------------------------- shared rules


def driver_problem(c: Cand, env: Env, relax: frozenset[str]) -> Message | None:
    if c.need_driver is None or env.jetson:
        return None
    have = env.driver_key
    if "driver" in relax:
        if vkey(c.need_driver) > env.driver_cap:
            return msg("reason.driver-beyond-gpus", need=c.need_driver)
        return None
    if have is None:
        return msg("reason.driver-version-unknown" if env.driver_present else "reason.driver-missing", need=c.need_driver)
    if have < vkey(c.need_driver):
        return msg("reason.driver-too-old", need=c.need_driver, why=c.driver_why, have=env.driver_words)
    return None


def problems(c: Cand, env: Env, gpus: Sequence[GpuRef], relax: frozenset[str]) -> list[Message]:
    """Everything that stops this build from working on these GPUs, as messages ([] = it works)."""
    out: list[Message] = []
    if c.platform_bad:
        out.append(c.platform_bad)
    if c.python_bad and "python" not in relax:
        out.append(c.python_bad)
    for g in gpus:
        if g.index in c.gpu_bad:
            out.append(c.gpu_bad[g.index])
    d = driver_problem(c, env, relax)
    if d:
        out.append(d)
    return out


def memo(db: CompatDB) -> dict[Any, Any]:
    """Per-data answers that depend only on a GPU's CC (asked thousands of times per plan; see resolver_bench)."""
    got = db.__dict__.get("_resolver_memo")
    if got is None:
        got = db.__dict__["_resolver_memo"] = {}
    return got


def opt_rows(db: CompatDB, file: str, table: str) -> list[dict[str, Any]]:
    """Rows of a table that older data bundles may not have ([] then)."""
    try:
        return db.rows(file, table)
    except DataError:
        return []


def arch_min_driver(db: CompatDB, g: GpuRef, driver_os: str) -> tuple[str | None, str | None]:
    if not g.cc:
        return None, None
    m = memo(db)
    key = ("arch_min_driver", g.cc, driver_os)
    if key not in m:
        m[key] = (None, None)
        for row in db.rows("driver_branches", "architecture_min_driver"):
            if cc_in(g.cc, row["cc_min"], row["cc_max"]):
                m[key] = (row.get(driver_os), row["architecture"])
                break
    return m[key]


def legacy_row(db: CompatDB, g: GpuRef) -> dict[str, Any] | None:
    return branches.legacy_row(db, g.cc)


def ceiling(db: CompatDB, gpus: Sequence[GpuRef], driver_os: str) -> Version:
    """The newest driver all these NVIDIA GPUs can run (legacy branches cap it)."""
    top = UNLIMITED
    for g in gpus:
        row = legacy_row(db, g)
        below = row.get(f"{driver_os}_below") if row else None
        if below:
            cap = vkey(below).release
            cap = cap[:-1] + (cap[-1] - 1,) if cap else cap
            top = min(top, Version.of(cap + (9999,)))
    return top


def needed_driver(db: CompatDB, c: Cand, env: Env, gpus: Sequence[GpuRef], base: str | None,
                  base_why: Message | None) -> None:
    """Set the candidate's minimum driver: the CUDA family minimum and each GPU's own minimum."""
    need, why = base, base_why
    by_arch: tuple[str, str] | None = None
    for g in gpus:
        gmin, arch = arch_min_driver(db, g, env.driver_os)
        if gmin and (need is None or vkey(gmin) > vkey(need)):
            need, why = gmin, msg("why.arch-min-driver", architecture=arch)
            by_arch = (gmin, str(arch))
    c.need_driver, c.driver_why = need, why
    if by_arch and not db.table("driver_branches", "architecture_min_driver").verified:
        c.unverified.append(msg("unverified.arch-min-driver", architecture=by_arch[1], driver=by_arch[0]))


def python_check(c: Cand, env: Env, lo: str | None, hi: str | None) -> None:
    """A Python range check for builds the wheels tables do not cover (DirectML, the data's range rows)."""
    c.python_range = (lo, hi)
    if env.python is None:
        return
    have = Version(env.python.release)
    if lo and have < vkey(lo):
        c.python_bad = msg("reason.python-too-old", min=lo, have=env.py_text)
    elif hi and have > vkey(hi):
        c.python_bad = msg("reason.python-too-new", max=hi, have=env.py_text)


_PYTHON_REASONS = frozenset({"reason.python-too-old", "reason.python-too-new", "reason.no-wheel-python",
                             "reason.no-wheel-python-kind"})


def wheel_check(db: CompatDB, c: Cand, env: Env, project: str, rows: list[dict[str, Any]],
                label: str) -> dict[str, Any] | None:
    """Check the candidate's release(s) against the derived wheels: the newest release row that installs on
    this machine (None when none does; then ``python_bad`` or ``platform_bad`` says why, as a fact of the
    wheels). The Python range to switch to is the span of the Pythons with wheels for this platform.

    The answer depends only on the rows and the machine's wheel target, so it is kept per database (a plan asks
    the same question for every variant and every GPU subset)."""
    target = env.target()
    where = env.where_machine()
    key = ("wheel_check", project, label, tuple(id(r) for r in rows), target, where)
    m = memo(db)
    got = m.get(key)
    if got is None:
        got = m[key] = _wheel_check(project, rows, label, target, where)
    chosen, python_bad, platform_bad, python_range = got
    c.python_range = python_range
    if python_bad is not None:
        c.python_bad = python_bad
    if platform_bad is not None:
        c.platform_bad = platform_bad
    return chosen


def _wheel_check(project: str, rows: list[dict[str, Any]], label: str, target: W.Target,
                 where: str) -> tuple[dict[str, Any] | None, Message | None, Message | None, tuple[str | None, str | None]]:
    lo, hi = W.python_span(rows, target)
    if lo is None and target.python is not None and target.python.free_threaded:
        lo, hi = W.python_span(rows, W.Target(target.platform, PythonVersion(3, 0), target.os_release))
    for row in rows:
        if W.fits(row, target):
            return row, None, None, (lo, hi)
    if not rows:
        return None, None, msg("reason.no-wheel-platform", package=project, version=label, where=where), (lo, hi)
    reason = W.why_not(project, label, rows, target, where)
    if reason is not None and reason.code in _PYTHON_REASONS:
        # changing Python helps only when some Python has a wheel here on this OS release
        relaxed = W.Target(target.platform, None, target.os_release)
        if any(W.fits(r, relaxed) for r in rows):
            return None, reason, None, (lo, hi)
    return None, None, reason, (lo, hi)


def highest_cc(db: CompatDB, cuda: str) -> str | None:
    m = memo(db)
    key = ("highest_cc", cuda)
    if key not in m:
        m[key] = next((str(row["highest_cc"]) for row in db.rows("cuda_arch", "toolkit_targets")
                       if vkey(row["cuda_min"]) <= vkey(cuda) <= vkey(row["cuda_max"])), None)
    return m[key]


_COVERAGE: dict[Any, str | None] = {}


def coverage(cc: ComputeCapability, sass: Sequence[str], ptx: str | None) -> str | None:
    """:func:`gpusetup.versions.kernel_coverage`, kept per (GPU, arch list) — asked for every build and GPU subset —
    and per rule: the answers are the rule's (``versions.cubin_runs``/``ptx_runs``), so a changed rule is asked again."""
    key = (cc, tuple(sass), ptx, versions.cubin_runs, versions.ptx_runs)
    got = _COVERAGE.get(key, _UNSET)
    if got is _UNSET:
        if len(_COVERAGE) > 65536:
            _COVERAGE.clear()
        got = _COVERAGE[key] = kernel_coverage(cc, sass, ptx)
    return got  # type: ignore[return-value]


_UNSET = object()


def family_minimum(db: CompatDB, major: int, driver_os: str) -> str | None:
    m = memo(db)
    key = ("family_minimum", major, driver_os)
    if key not in m:
        m[key] = db.family_minimum(major, driver_os)
    return m[key]


def toolkit_driver(db: CompatDB, cuda: str, driver_os: str) -> str | None:
    m = memo(db)
    key = ("toolkit_driver", cuda, driver_os)
    if key not in m:
        m[key] = db.toolkit_driver(cuda, driver_os)
    return m[key]


def min_driver_for_cuda(db: CompatDB, cuda: str, driver_os: str) -> str | None:
    m = memo(db)
    key = ("min_driver_for_cuda", cuda, driver_os)
    if key not in m:
        m[key] = db.min_driver_for_cuda(cuda, driver_os)
    return m[key]


def cudnn_pin(db: CompatDB, c: Cand, framework: str, major: int, gpus: Sequence[GpuRef]) -> None:
    for pin in db.rows("cudnn", "legacy_pins"):
        if framework not in pin["frameworks"] or pin["cuda_major"] != major:
            continue
        old = [g for g in gpus if cc_below(g.cc, pin["cc_below"])]
        if old:
            if pin.get("verified", db.table("cudnn", "legacy_pins").verified) is False:
                c.unverified.append(msg("unverified.cudnn-pin", package=pin["package"], version=pin["version"],
                                        cc=pin["cc_below"]))
            c.packages.append(f"{pin['package']}=={pin['version']}")
            c.notes.append(
                msg("note.cudnn-pinned", package=pin["package"], version=pin["version"], cc=pin["cc_below"],
                    gpus=", ".join(g.label for g in old))
            )


def kind_word(kind: str) -> Message | str:
    words = {
        "cuda": msg("word.kind.cuda"),
        "rocm": msg("word.kind.rocm"),
        "xpu": msg("word.kind.xpu"),
        "mps": msg("word.kind.mps"),
        "cpu": msg("word.kind.cpu"),
    }
    return words.get(kind, kind)


def cuda_of_variant(variant: str) -> str:
    """'cu126' → '12.6', 'cu118' → '11.8', 'cu130' → '13.0'."""
    digits = variant[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def span(versions: Sequence[str]) -> str:
    ordered = sorted(set(versions), key=vkey)
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"


def series_pin(project: str, series: str, chosen: dict[str, Any] | None, newest: dict[str, Any] | None) -> str:
    """"torch==2.12.*" when the chosen release is the series' newest, else the exact release ("torch==2.12.0":
    a newer release of the series has no wheel for this Python or platform)."""
    if chosen is None or newest is None or chosen is newest:
        return f"{project}=={series}.*"
    return f"{project}=={chosen['version']}"
