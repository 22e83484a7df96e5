"""The resolver: which PyTorch / TensorFlow / JAX build works on this machine, how to install it, and why
every other option does not.

It reads only facts from the compat data (``resources/compat/*.json`` via :mod:`gpusetup.compat.db`); the
code holds the *rules* (how a cubin runs on a GPU, how minor-version compatibility works), not version
numbers. For each framework it enumerates every published build (release × variant), checks Python,
platform, GPU kernels (compute capability / gfx target) and driver, and picks the newest build that works on
every selected GPU. When none works as the machine is, it says so — never a silent CPU fallback — and
searches for the smallest set of actions (driver install/upgrade, Python change, WSL2) that would make a GPU
build work, returning the CPU build as the choice for *now* and the GPU build as ``gpu_choice``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from gpusetup.compat import branches
from gpusetup.compat.db import CompatDB, DataError, get_db
from gpusetup.enrich import CHIP_RULE_SOURCE, NAME_MATCH_SOURCE
from gpusetup.messages import add_note, msg, render
from gpusetup.model import Action, Choice, FrameworkPlan, Gpu, Machine, Message, Rejected
from gpusetup.versions import ComputeCapability, Version, kernel_coverage
from gpusetup.versions import version_key as vkey


class RequestError(ValueError):
    """The request cannot be planned as asked (a GPU number this machine does not have, an unknown
    framework); ``message`` is the same as data, ``str()`` the English."""

    def __init__(self, message: Message) -> None:
        super().__init__(render(message))
        self.message = message

FRAMEWORKS = ("pytorch", "tensorflow", "jax")
_ALIASES = {"torch": "pytorch", "pytorch": "pytorch", "tensorflow": "tensorflow", "tf": "tensorflow", "jax": "jax"}

# Relaxations tried, least intrusive first, when no GPU build works as the machine is.
_RELAXATIONS: tuple[frozenset[str], ...] = tuple(
    frozenset(r)
    for r in (
        (),
        ("driver",),
        ("wsl",),
        ("wsl", "driver"),
        ("python",),
        ("driver", "python"),
        ("wsl", "python"),
        ("wsl", "driver", "python"),
    )
)
_UNLIMITED = Version("9999")


# ---------------------------------------------------------------------------------------- helpers


def _mm(version: str | Version | None) -> tuple[int, int] | None:
    """Major.minor of a Python version string ('3.12.1' → (3, 12))."""
    k = Version(version).release
    return (k[0], k[1]) if len(k) >= 2 else None


def _fmt_py(v: tuple[int, int] | None) -> str:
    return f"{v[0]}.{v[1]}" if v else "unknown"


def _cuda_of_variant(variant: str) -> str:
    """'cu126' → '12.6', 'cu118' → '11.8', 'cu130' → '13.0'."""
    digits = variant[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def _in_range(v: Version | tuple[int, ...], lo: str | None, hi: str | None) -> bool:
    if isinstance(v, tuple):
        v = Version.of(v)
    if lo and v < vkey(lo):
        return False
    return not (hi and v > vkey(hi))


def _span(versions: list[str]) -> str:
    ordered = sorted(set(versions), key=vkey)
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"


# ------------------------------------------------------------------------------------ the machine


@dataclass(frozen=True, eq=False)
class GpuRef:
    """GPU number ``index`` of the machine (its position in ``Machine.gpus``, what ``--gpu`` names) and the
    :class:`~gpusetup.model.Gpu` itself: every fact is read from it as detection and the enrich step left it
    (the resolver derives no compute capability of its own)."""

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


def _cc_in(cc: ComputeCapability | None, lo: str | None, hi: str | None) -> bool:
    """Is ``cc`` within a data row's [lo, hi] (texts such as "5.0"; a missing bound is open)? False when unknown."""
    if cc is None:
        return False
    low, high = ComputeCapability.parse(lo), ComputeCapability.parse(hi)
    return (low is None or low <= cc) and (high is None or cc <= high)


def _cc_below(cc: ComputeCapability | None, bound: str | None) -> bool:
    b = ComputeCapability.parse(bound)
    return cc is not None and b is not None and cc < b


def _cc_above(cc: ComputeCapability | None, bound: str | None) -> bool:
    b = ComputeCapability.parse(bound)
    return cc is not None and b is not None and cc > b


@dataclass
class Env:
    """Platform facts that decide which wheels exist and which driver numbers apply."""

    os: str | None  # linux / windows / macos
    wsl: bool
    machine: str | None  # x86_64 / aarch64 / arm64
    python: tuple[int, int] | None
    driver: Version | None
    jetson: bool = False
    driver_cap: Version = _UNLIMITED  # the newest driver these GPUs can use (legacy branches)

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

    def where(self) -> str:
        if self.wsl:
            return "WSL2"
        return {"linux": "Linux", "windows": "native Windows", "macos": "macOS"}.get(self.os or "", self.os or "this OS")


def _norm_machine(arch: str | None) -> str | None:
    if not arch:
        return None
    a = arch.lower()
    if a in ("amd64", "x86_64", "x64"):
        return "x86_64"
    if a in ("arm64", "aarch64"):
        return "aarch64"
    return a


def _machine_env(machine: Machine, python_version: str | None) -> tuple[Env, list[Message]]:
    notes: list[Message] = []
    s = machine.system
    os_name = (s.os or "").lower() or None
    if os_name in ("darwin", "mac", "osx"):
        os_name = "macos"
    arch = _norm_machine(s.arch)
    if os_name == "macos" and arch == "aarch64":
        arch = "arm64"
    py = python_version or s.python
    if not py:
        for pyenv in machine.python_envs:
            if pyenv.version:
                py = pyenv.version
                break
    pyv = _mm(py)
    if pyv is None:
        notes.append(msg("note.python-unknown"))
    if os_name is None:
        notes.append(msg("note.os-unknown"))
        os_name = "linux"
    if arch is None:
        arch = "arm64" if os_name == "macos" else "x86_64"
        notes.append(msg("note.arch-unknown", arch=arch))
    env = Env(os=os_name, wsl=bool(s.wsl), machine=arch, python=pyv, driver=machine.driver.version, jetson=bool(s.is_jetson))
    return env, notes


def _gpus(machine: Machine) -> list[GpuRef]:
    return [GpuRef(i, g) for i, g in enumerate(machine.gpus)]


# ------------------------------------------------------------------------------------ candidates


@dataclass
class Cand:
    """One published build (framework release × variant) and everything that speaks against it."""

    framework: str
    version: str  # release series, "2.14"
    variant: str  # cu126 / rocm6.4 / xpu / mps / and-cuda / cuda13 / cuda11.2
    kind: str  # cuda / rocm / xpu / mps
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

    @property
    def option(self) -> str:
        names = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
        return f"{self.variant} ({names[self.framework]} {self.version})"


def _driver_problem(c: Cand, env: Env, relax: frozenset[str]) -> Message | None:
    if c.need_driver is None or env.jetson:
        return None
    have = env.driver_key
    if "driver" in relax:
        if vkey(c.need_driver) > env.driver_cap:
            return msg("reason.driver-beyond-gpus", need=c.need_driver)
        return None
    if have is None:
        return msg("reason.driver-missing", need=c.need_driver)
    if have < vkey(c.need_driver):
        return msg("reason.driver-too-old", need=c.need_driver, why=c.driver_why, have=str(env.driver))
    return None


def _problems(c: Cand, env: Env, gpus: Sequence[GpuRef], relax: frozenset[str]) -> list[Message]:
    """Everything that stops this build from working on these GPUs, as messages ([] = it works)."""
    out: list[Message] = []
    if c.platform_bad:
        out.append(c.platform_bad)
    if c.python_bad and "python" not in relax:
        out.append(c.python_bad)
    for g in gpus:
        if g.index in c.gpu_bad:
            out.append(c.gpu_bad[g.index])
    d = _driver_problem(c, env, relax)
    if d:
        out.append(d)
    return out


# ----------------------------------------------------------------------------------- shared rules


def _memo(db: CompatDB) -> dict[Any, Any]:
    """Per-data answers that depend only on a GPU's CC (asked thousands of times per plan; see resolver_bench)."""
    memo = db.__dict__.get("_resolver_memo")
    if memo is None:
        memo = db.__dict__["_resolver_memo"] = {}
    return memo


def _arch_min_driver(db: CompatDB, g: GpuRef, driver_os: str) -> tuple[str | None, str | None]:
    if not g.cc:
        return None, None
    memo = _memo(db)
    key = ("arch_min_driver", g.cc, driver_os)
    if key not in memo:
        memo[key] = (None, None)
        for row in db.rows("driver_branches", "architecture_min_driver"):
            if _cc_in(g.cc, row["cc_min"], row["cc_max"]):
                memo[key] = (row.get(driver_os), row["architecture"])
                break
    return memo[key]


def _legacy_row(db: CompatDB, g: GpuRef) -> dict[str, Any] | None:
    return branches.legacy_row(db, g.cc)


def _ceiling(db: CompatDB, gpus: Sequence[GpuRef], driver_os: str) -> Version:
    """The newest driver all these NVIDIA GPUs can run (legacy branches cap it)."""
    ceiling = _UNLIMITED
    for g in gpus:
        row = _legacy_row(db, g)
        below = row.get(f"{driver_os}_below") if row else None
        if below:
            cap = vkey(below).release
            cap = cap[:-1] + (cap[-1] - 1,) if cap else cap
            ceiling = min(ceiling, Version.of(cap + (9999,)))
    return ceiling


def _needed_driver(
    db: CompatDB, c: Cand, env: Env, gpus: Sequence[GpuRef], base: str | None, base_why: Message | None
) -> None:
    """Set the candidate's minimum driver: the CUDA family minimum and each GPU's own minimum."""
    need, why = base, base_why
    by_arch: tuple[str, str] | None = None
    for g in gpus:
        gmin, arch = _arch_min_driver(db, g, env.driver_os)
        if gmin and (need is None or vkey(gmin) > vkey(need)):
            need, why = gmin, msg("why.arch-min-driver", architecture=arch)
            by_arch = (gmin, str(arch))
    c.need_driver, c.driver_why = need, why
    if by_arch and not db.table("driver_branches", "architecture_min_driver").verified:
        c.unverified.append(msg("unverified.arch-min-driver", architecture=by_arch[1], driver=by_arch[0]))


def _python_check(c: Cand, env: Env, lo: str | None, hi: str | None) -> None:
    c.python_range = (lo, hi)
    if env.python is None:
        return
    if lo and Version.of(env.python) < vkey(lo):
        c.python_bad = msg("reason.python-too-old", min=lo, have=_fmt_py(env.python))
    elif hi and Version.of(env.python) > vkey(hi):
        c.python_bad = msg("reason.python-too-new", max=hi, have=_fmt_py(env.python))


# ------------------------------------------------------------------------------------------ PyTorch


def _torch_rows(db: CompatDB) -> list[dict[str, Any]]:
    return sorted(db.rows("pytorch", "releases"), key=lambda r: vkey(r["version"]), reverse=True)


def _torch_platform(db: CompatDB, kind: str, env: Env, version: str) -> bool:
    for row in db.rows("pytorch", "platforms"):
        if (
            row["kind"] == kind
            and row["os"] == env.wheel_os
            and row["machine"] == env.machine
            and _in_range(vkey(version), row.get("torch_min"), row.get("torch_max"))
        ):
            return True
    return False


def _torch_arch(db: CompatDB, version: str, variant: str, env: Env) -> dict[str, Any] | None:
    """The first arch_lists row for this build (exact-release rows read from the wheels come first)."""
    memo = _memo(db)
    key = ("torch_arch", version, variant, env.wheel_os, env.machine)
    if key not in memo:
        memo[key] = next(
            (
                row
                for row in db.rows("pytorch", "arch_lists")
                if row["variant"] == variant
                and row["os"] == env.wheel_os
                and row["machine"] == env.machine
                and _in_range(vkey(version), row["torch_min"], row["torch_max"])
            ),
            None,
        )
    return memo[key]


def _torch_packages(rel: dict[str, Any]) -> list[str]:
    pkgs = [f"torch=={rel['version']}.*"]
    if rel.get("torchvision"):
        pkgs.append(f"torchvision=={rel['torchvision']}.*")
    if rel.get("torchaudio"):
        pkgs.append(f"torchaudio=={rel['torchaudio']}.*")
    return pkgs


def _torch_candidates(db: CompatDB, env: Env, gpus: Sequence[GpuRef], kind: str) -> list[Cand]:
    url = db.rows("pytorch", "indexes")[0]["url"]
    cands: list[Cand] = []
    for order, rel in enumerate(_torch_rows(db)):
        v = rel["version"]
        if kind == "cuda":
            variants = sorted(rel["cuda_variants"], key=lambda x: vkey(_cuda_of_variant(x)), reverse=True)
        elif kind == "rocm":
            variants = list(rel["rocm_variants"])
        elif kind == "xpu":
            variants = ["xpu"] if rel.get("xpu") else []
        else:
            variants = [kind]
        for j, variant in enumerate(variants):
            c = Cand("pytorch", v, variant, kind, order=order * 10 + j, packages=_torch_packages(rel))
            c.index_url = None if kind == "mps" else url.format(variant=variant)
            _python_check(c, env, rel["python_min"], rel["python_max"])
            if rel.get("python_max") is None:
                c.notes.append(msg("note.python-max-unpublished", package="torch", version=v))
            if rel.get("verified") is False and rel.get("note"):
                c.unverified.append(msg("unverified.release", package="torch", version=v, detail=rel["note"]))
            if not _torch_platform(db, kind, env, v):
                c.platform_bad = msg(
                    "reason.torch-no-platform-build", kind=_kind_word(kind), version=v, where=env.where(), machine=env.machine
                )
            elif kind == "cuda":
                _torch_cuda_checks(db, c, env, gpus)
            elif kind == "rocm":
                _rocm_checks(db, c, gpus)
            elif kind == "mps":
                c.env["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"
                c.notes.append(msg("note.env-mps-fallback"))
            cands.append(c)
    return cands


def _kind_word(kind: str) -> Message | str:
    words = {
        "cuda": msg("word.kind.cuda"),
        "rocm": msg("word.kind.rocm"),
        "xpu": msg("word.kind.xpu"),
        "mps": msg("word.kind.mps"),
        "cpu": msg("word.kind.cpu"),
    }
    return words.get(kind, kind)


def _jetson_block(db: CompatDB, env: Env, gpus: Sequence[GpuRef]) -> Message | None:
    """Why server-Arm (SBSA) CUDA wheels cannot be used on this Jetson, or None when they can."""
    if not env.jetson:
        return None
    for g in gpus:
        row = next(
            (r for r in db.rows("pytorch", "jetson") if _cc_in(g.cc, r["cc_min"], r["cc_max"])), None
        )
        if row is None or not row["sbsa_wheels"]:
            hint = row["note"] if row else msg("hint.jetson-no-data")
            if row is not None and row.get("verified", db.table("pytorch", "jetson").verified) is False:
                return msg("reason.jetson-sbsa-unverified", gpu=g.label, hint=hint)
            return msg("reason.jetson-sbsa", gpu=g.label, hint=hint)
    return None


def _torch_cuda_checks(db: CompatDB, c: Cand, env: Env, gpus: Sequence[GpuRef]) -> None:
    jetson = _jetson_block(db, env, gpus)
    if jetson:
        c.platform_bad = jetson
        return
    arch = _torch_arch(db, c.version, c.variant, env)
    if arch is None:
        c.platform_bad = msg("reason.no-arch-list", where=env.where(), machine=env.machine)
        return
    if arch.get("verified") is False:
        c.unverified.append(
            msg("unverified.arch-list", package="torch", version=c.version, variant=c.variant, detail=arch.get("note", ""))
        )
    cuda = _cuda_of_variant(c.variant)
    major = vkey(cuda).major or 0
    uses_ptx = False
    for g in gpus:
        if not g.cc:
            continue
        how = kernel_coverage(g.cc, arch["cc"], arch.get("ptx"))
        highest = _highest_cc(db, cuda) if how == "ptx" else None
        if how is None:
            c.gpu_bad[g.index] = msg("reason.no-kernels-cc", cc=str(g.cc), gpu=g.label)
        elif _cc_above(g.cc, highest):
            # PTX alone is not enough when the wheel's pinned CUDA libraries (cuBLAS, cuDNN) predate the GPU.
            c.gpu_bad[g.index] = msg("reason.ptx-libraries-too-old", cc=str(g.cc), gpu=g.label, cuda=cuda, highest=highest)
        elif how == "ptx":
            uses_ptx = True
            c.notes.append(msg("note.ptx-jit", gpu=g.label, cc=str(g.cc)))
    base = db.family_minimum(major, env.driver_os) if major >= 11 else db.toolkit_driver(cuda, env.driver_os)
    why = msg("why.cuda-family-driver", major=major)
    if uses_ptx:
        t3 = db.toolkit_driver(cuda, env.driver_os)
        if t3 and (base is None or vkey(t3) > vkey(base)):
            base, why = t3, msg("why.ptx-jit-driver", cuda=cuda)
    _needed_driver(db, c, env, gpus, base, why)


def _rocm_checks(db: CompatDB, c: Cand, gpus: Sequence[GpuRef]) -> None:
    row = next((r for r in db.rows("rocm", "index_gfx") if r["index"] == c.variant), None)
    if row is None:
        c.platform_bad = msg("reason.no-gfx-list", variant=c.variant)
        return
    # Consumer RDNA2 cards (gfx1031-gfx1036) run the gfx1030 kernels with HSA_OVERRIDE_GFX_VERSION=10.3.0
    # (ROCm/ROCm#2353). The variable applies to every GPU of the process, so only when all are RDNA2.
    override = "gfx1030" in row["gfx"] and bool(gpus) and all(
        g.gfx and re.fullmatch(r"gfx103[0-6]", g.gfx) for g in gpus)
    for g in gpus:
        if not g.gfx:
            c.gpu_bad[g.index] = msg("reason.gfx-unknown", gpu=g.label)
        elif g.gfx not in row["gfx"] and override:
            c.env["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"
            c.notes.append(msg("note.env-hsa-override", gpu=g.label, gfx=g.gfx, value="10.3.0", target="gfx1030",
                               source="https://github.com/ROCm/ROCm/issues/2353"))
        elif g.gfx not in row["gfx"]:
            c.gpu_bad[g.index] = msg("reason.no-kernels-gfx", gfx=g.gfx, gpu=g.label)


# --------------------------------------------------------------------------------------- TensorFlow


def _tf_candidates(db: CompatDB, env: Env, gpus: Sequence[GpuRef]) -> list[Cand]:
    cands: list[Cand] = []
    builds = db.rows("tensorflow", "gpu_builds")
    configs = sorted(db.rows("tensorflow", "tested_configs"), key=lambda r: vkey(r["version"]), reverse=True)
    for order, cfg in enumerate(configs):
        v = cfg["version"]
        for b in builds:
            if not _in_range(vkey(v), b["tf_min"], b.get("tf_max")):
                continue
            c = Cand("tensorflow", v, b["variant"], "cuda", order=order)
            c.packages = [b["requirement"].format(version=f"{v}.*")]
            c.conda = list(b.get("conda", []))
            _python_check(c, env, cfg["python_min"], cfg["python_max"])
            if b.get("verified") is False:
                c.unverified.append(msg("unverified.build", package="tensorflow", variant=b["variant"], detail=b.get("note", "")))
            if b["os"] == "windows":
                c.notes.append(msg("note.tf-last-windows-gpu", version=v, detail=b.get("note", "")))
            if not (env.wheel_os == b["os"] and env.machine == b["machine"]):
                if b["os"] == "windows":
                    continue  # the Windows-only build is not an option elsewhere
                c.platform_bad = _tf_platform_reason(env)
                cands.append(c)
                continue
            _tf_gpu_checks(db, c, cfg, env, gpus)
            cands.append(c)
    return cands


def _tf_platform_reason(env: Env) -> Message:
    if env.os == "windows" and not env.wsl:
        return msg("reason.tf-native-windows")
    return msg("reason.tf-no-platform-build", where=env.where(), machine=env.machine)


def _tf_gpu_checks(db: CompatDB, c: Cand, cfg: dict[str, Any], env: Env, gpus: Sequence[GpuRef]) -> None:
    cuda = cfg["cuda"]
    major = vkey(cuda).major or 0
    min_cc = next(
        (r for r in db.rows("tensorflow", "min_cc") if _in_range(vkey(c.version), r["tf_min"], r.get("tf_max"))), None
    )
    highest = _highest_cc(db, cuda)
    arch = _tf_arch(db, c.version, env)
    if arch is not None:
        _tf_kernel_checks(db, c, arch, gpus)
    elif min_cc and min_cc.get("verified") is False:
        c.unverified.append(msg("unverified.tf-min-cc", version=c.version, detail=min_cc.get("note", "")))
    for g in gpus:
        if not g.cc or arch is not None:
            continue
        if min_cc and _cc_below(g.cc, min_cc["cc_min"]):
            c.gpu_bad[g.index] = msg(
                "reason.cc-too-low" if db.table("tensorflow", "min_cc").verified else "reason.cc-too-low-inferred",
                min=min_cc["cc_min"], gpu=g.label, cc=str(g.cc),
            )
        elif _cc_above(g.cc, highest):
            # No record of this wheel's GPU code: it could only run through PTX JIT, which users report failing on
            # new GPUs for the releases whose wheels were read (tensorflow/ptx_jit_failures), so it is not offered.
            c.gpu_bad[g.index] = msg("reason.tf-no-ptx-record", cc=str(g.cc), gpu=g.label, cuda=cuda, version=c.version)
    base = db.family_minimum(major, env.driver_os)
    why = msg("why.cuda-family-driver", major=major)
    if env.wsl:
        wsl = db.rows("tensorflow", "wsl")[0]
        if vkey(wsl["driver_min"]) > vkey(base or ""):
            base, why = wsl["driver_min"], msg("why.wsl-driver")
    _needed_driver(db, c, env, gpus, base, why)
    _cudnn_pin(db, c, "tensorflow", major, gpus)


def _tf_arch(db: CompatDB, version: str, env: Env) -> dict[str, Any] | None:
    """The GPU code in this TensorFlow release's wheel (tensorflow/arch_lists, read by cuobjdump), if known."""
    memo = _memo(db)
    key = ("tf_arch", version, env.wheel_os, env.machine)
    if key not in memo:
        memo[key] = next(
            (
                row
                for row in _opt_rows(db, "tensorflow", "arch_lists")
                if row["os"] == env.wheel_os and row["machine"] == env.machine
                and _in_range(vkey(version), row["tf_min"], row.get("tf_max"))
            ),
            None,
        )
    return memo[key]


def _tf_kernel_checks(db: CompatDB, c: Cand, arch: dict[str, Any], gpus: Sequence[GpuRef]) -> None:
    """Which GPUs the wheel's cubins serve, which only its PTX, and where PTX JIT is reported to fail."""
    cubins = ", ".join(arch["cc"])
    ptx = arch.get("ptx") or "none"
    for g in gpus:
        if not g.cc:
            continue
        how = kernel_coverage(g.cc, arch["cc"], arch.get("ptx"))
        if how is None:
            c.gpu_bad[g.index] = msg("reason.tf-no-kernels-cc", cc=str(g.cc), gpu=g.label, cubins=cubins, ptx=ptx)
        elif how == "ptx":
            fail = next(
                (
                    r
                    for r in _opt_rows(db, "tensorflow", "ptx_jit_failures")
                    if _in_range(vkey(c.version), r["tf_min"], r.get("tf_max"))
                    and _cc_in(g.cc, r["cc_min"], r.get("cc_max"))
                ),
                None,
            )
            if fail:
                params = {"cc": str(g.cc), "gpu": g.label, "ptx": ptx, "error": fail["error"], "source": fail["sources"][0]}
                if fail.get("verified") is False:
                    c.gpu_bad[g.index] = msg("reason.tf-ptx-jit-fails-unverified", **params)
                    c.unverified.append(msg("unverified.tf-ptx-jit", cc=str(g.cc), detail=fail["note"]))
                else:
                    c.gpu_bad[g.index] = msg("reason.tf-ptx-jit-fails", **params)
            else:
                c.notes.append(msg("note.tf-ptx-jit", gpu=g.label, version=c.version, cc=str(g.cc), ptx=ptx))


def _opt_rows(db: CompatDB, file: str, table: str) -> list[dict[str, Any]]:
    """Rows of a table that older data bundles may not have ([] then)."""
    try:
        return db.rows(file, table)
    except DataError:
        return []


def _highest_cc(db: CompatDB, cuda: str) -> str | None:
    for row in db.rows("cuda_arch", "toolkit_targets"):
        if vkey(row["cuda_min"]) <= vkey(cuda) <= vkey(row["cuda_max"]):
            return row["highest_cc"]
    return None


def _cudnn_pin(db: CompatDB, c: Cand, framework: str, major: int, gpus: Sequence[GpuRef]) -> None:
    for pin in db.rows("cudnn", "legacy_pins"):
        if framework not in pin["frameworks"] or pin["cuda_major"] != major:
            continue
        old = [g for g in gpus if _cc_below(g.cc, pin["cc_below"])]
        if old:
            if pin.get("verified", db.table("cudnn", "legacy_pins").verified) is False:
                c.unverified.append(msg("unverified.cudnn-pin", package=pin["package"], version=pin["version"], cc=pin["cc_below"]))
            c.packages.append(f"{pin['package']}=={pin['version']}")
            c.notes.append(
                msg("note.cudnn-pinned", package=pin["package"], version=pin["version"], cc=pin["cc_below"],
                    gpus=", ".join(g.label for g in old))
            )


# ---------------------------------------------------------------------------------------------- JAX


def _jax_candidates(db: CompatDB, env: Env, gpus: Sequence[GpuRef]) -> list[Cand]:
    cands: list[Cand] = []
    extras = {r["extra"]: r for r in db.rows("jax", "extras")}
    plat_os = "wsl2" if env.wsl else env.os
    plat = next((r for r in db.rows("jax", "platforms") if r["os"] == plat_os and r["machine"] == env.machine), None)
    for order, rel in enumerate(db.rows("jax", "releases")):
        for j, extra in enumerate(rel["extras"]):
            ex = extras[extra]
            c = Cand("jax", rel["version"], extra, "cuda", order=order * 10 + j)
            c.packages = [f"jax[{extra}]=={rel['version']}"]
            _python_check(c, env, rel["python_min"], rel["python_max"])
            if rel.get("verified") is False:
                c.unverified.append(msg("unverified.release", package="jax", version=rel["version"], detail=rel.get("note", "")))
            if plat is None or plat["nvidia"] == "no":
                c.platform_bad = (
                    msg("reason.jax-native-windows")
                    if env.os == "windows" and not env.wsl
                    else msg("reason.jax-no-platform-build", where=env.where(), machine=env.machine)
                )
            elif env.jetson:
                c.platform_bad = msg("reason.jax-jetson")
            else:
                if plat["nvidia"] == "experimental":
                    c.notes.append(msg("note.jax-wsl-experimental"))
                for g in gpus:
                    if _cc_below(g.cc, ex["min_cc"]):
                        c.gpu_bad[g.index] = msg("reason.cc-too-low", min=ex["min_cc"], gpu=g.label, cc=str(g.cc))
                base = ex["min_driver_linux"] if env.driver_os == "linux" else db.family_minimum(ex["cuda_major"], "windows")
                _needed_driver(db, c, env, gpus, base, msg("why.jax-extra-driver", extra=extra))
                _cudnn_pin(db, c, "jax", ex["cuda_major"], gpus)
            cands.append(c)
    return cands


# ------------------------------------------------------------------------------------------- search


@dataclass
class _Found:
    cand: Cand
    relax: frozenset[str]
    gpus: list[GpuRef]
    env: Env


def _search(
    make: Callable[[Env, Sequence[GpuRef]], list[Cand]],
    db: CompatDB,
    env: Env,
    gpus: list[GpuRef],
    relaxations: Sequence[frozenset[str]],
) -> _Found | None:
    """First (relaxation, GPU subset) for which some build works; the newest build wins within it."""
    subsets: list[list[GpuRef]] = [gpus]
    if len(gpus) > 1:
        # Keep the newest GPUs first when not all can be served by one build.
        newest_first = sorted(gpus, key=lambda g: (g.cc or (0, 0), g.gfx or ""), reverse=True)
        for drop in range(1, len(gpus)):
            for keep in combinations(newest_first, len(gpus) - drop):
                subsets.append(sorted(keep, key=lambda g: g.index))
    nvidia = bool(gpus) and all(g.vendor == "nvidia" for g in gpus)
    cache: dict[tuple[bool, tuple[int, ...]], list[Cand]] = {}
    for relax in relaxations:
        if "wsl" in relax and not (env.os == "windows" and not env.wsl and nvidia):
            continue  # WSL2 is offered for NVIDIA GPUs on native Windows only (CUDA on WSL)
        if "wsl" in relax and env.machine != "x86_64":
            continue
        e = replace(env, wsl=env.wsl or "wsl" in relax)
        for subset in subsets:
            es = replace(e, driver_cap=_ceiling(db, subset, e.driver_os))
            key = ("wsl" in relax, tuple(g.index for g in subset))
            if key not in cache:
                cache[key] = sorted(make(es, subset), key=lambda c: c.order)
            for c in cache[key]:
                if not _problems(c, es, subset, relax):
                    return _Found(c, relax, subset, es)
    return None


def _group_rejections(cands: Sequence[Cand], env: Env, gpus: Sequence[GpuRef], newer_than: Cand | None) -> list[Rejected]:
    """Every build that does not work, grouped by variant and reason: 'cu130 (torch 2.9–2.15)': why.

    With a choice, only builds at least as new as the choice are listed (the older ones are not better);
    builds that fail on Python alone are grouped per release range, whatever their variant.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    reasons: dict[str, Message] = {}
    for c in cands:
        if newer_than is not None and (
            vkey(c.version) < vkey(newer_than.version) or (c.version, c.variant) == (newer_than.version, newer_than.variant)
        ):
            continue
        problems = _problems(c, env, gpus, frozenset())
        if not problems:
            continue
        variant = c.variant
        if c.python_bad:
            variant, problems = "*", [c.python_bad]
        unique = list({render(p): p for p in problems}.values())
        reason = unique[0] if len(unique) == 1 else msg("reason.several", reasons=unique)
        text = render(reason)
        reasons.setdefault(text, reason)
        groups.setdefault((variant, text), []).append(c.version)
    fw = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}[cands[0].framework] if cands else ""
    out = []
    for (variant, text), versions in groups.items():
        option = f"{fw} {_span(versions)} (every build)" if variant == "*" else f"{variant} ({fw} {_span(versions)})"
        out.append(rejected(option, reasons[text]))
    return out


def rejected(option: str, reason: Message) -> Rejected:
    """A rejected option with its reason as data (code, params) and in English words."""
    return Rejected(option=option, reason=render(reason), code=reason.code, params=dict(reason.params))


def action(kind: str, why: Message, **fields: Any) -> Action:
    """An action with its reason as data (code, params) and in English words."""
    return Action(kind=kind, why=render(why), code=why.code, params=dict(why.params), **fields)


# --------------------------------------------------------------------------------------- assembling


def _choice(c: Cand, env: Env) -> Choice:
    quoted = " ".join(f'"{p}"' for p in c.packages)
    cmd = f"python -m pip install {quoted}"
    if c.index_url:
        cmd += f" --index-url {c.index_url}"
    commands = [cmd]
    return Choice(
        version=c.version,
        variant=c.variant,
        index_url=c.index_url,
        packages=list(c.packages),
        commands=commands,
        conda=list(c.conda),
        python=_fmt_py(env.python) if env.python else None,
        env=dict(c.env),
    )


def _cpu_choice(db: CompatDB, framework: str, env: Env) -> tuple[Choice | None, list[Message]]:
    """The newest CPU build for this Python (or, failing that, for any Python) — never chosen silently."""
    notes: list[Message] = []
    if framework == "pytorch":
        kind = "mps" if (env.os == "macos" and env.machine == "arm64") else "cpu"
        for strict in (True, False):
            for rel in _torch_rows(db):
                v = rel["version"]
                if strict and env.python and not _in_range(env.python, rel["python_min"], rel["python_max"]):
                    continue
                if not _torch_platform(db, kind, env, v) and not _torch_platform(db, "cpu", env, v):
                    continue
                pkgs = _torch_packages(rel)
                c = Cand("pytorch", v, "cpu", "cpu", packages=pkgs)
                c.index_url = None if env.os == "macos" else db.rows("pytorch", "indexes")[0]["url"].format(variant="cpu")
                if not strict:
                    notes.append(msg("note.cpu-needs-other-python", package="torch", python=_fmt_py(env.python)))
                return _choice(c, env), notes
        return None, notes
    if framework == "tensorflow":
        rows = sorted(db.rows("tensorflow", "tested_configs"), key=lambda r: vkey(r["version"]), reverse=True)
        fits = [r for r in rows if not env.python or _in_range(env.python, r["python_min"], r["python_max"])]
        rel = (fits or rows)[0]
        if not fits:
            notes.append(msg("note.cpu-needs-other-python", package="TensorFlow", python=_fmt_py(env.python)))
        return _choice(Cand("tensorflow", rel["version"], "cpu", "cpu", packages=[f"tensorflow=={rel['version']}.*"]), env), notes
    rows = db.rows("jax", "releases")
    fits = [r for r in rows if not env.python or _in_range(env.python, r["python_min"], r["python_max"])]
    rel = (fits or rows)[0]
    if not fits:
        notes.append(msg("note.cpu-needs-other-python", package="JAX", python=_fmt_py(env.python)))
    return _choice(Cand("jax", rel["version"], "cpu", "cpu", packages=[f"jax=={rel['version']}"]), env), notes


def _driver_branch(db: CompatDB, gpus: Sequence[GpuRef], need: str | None, driver_os: str) -> Message:
    """The driver branch to install for these GPUs (gpusetup.compat.branches, as `install --driver` chooses it)."""
    choice = branches.driver_branch(db, [g.cc for g in gpus], need)
    if choice.legacy:
        text = msg("branch.legacy", branch=choice.branch, architecture=choice.architecture)
    else:
        text = msg("branch.at-least", branch=choice.branch) if choice.branch else msg("branch.newest")
    modules = choice.modules if driver_os == "linux" else None
    if modules == "open":
        return msg("branch.with-open-modules", branch=text)
    if modules == "proprietary":
        return msg("branch.with-proprietary-modules", branch=text)
    return text


def _actions(db: CompatDB, found: _Found, env: Env, framework: str) -> list[Action]:
    c, relax = found.cand, found.relax
    acts: list[Action] = []
    fw_name = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}[framework]
    if "wsl" in relax:
        acts.append(action("use-wsl2", msg("action.use-wsl2", framework=fw_name), commands=["wsl --install -d Ubuntu"]))
    if "driver" in relax and c.need_driver and _driver_problem(c, found.env, frozenset()):
        kind = "install-driver" if not env.driver else "upgrade-driver"
        branch = _driver_branch(db, found.gpus, c.need_driver, found.env.driver_os)
        fields = dict(option=c.option, need=c.need_driver, why=c.driver_why, branch=branch)
        if env.driver:
            why = msg("action.driver-upgrade-wsl" if found.env.wsl else "action.driver-upgrade", have=str(env.driver), **fields)
        else:
            why = msg("action.driver-install-wsl" if found.env.wsl else "action.driver-install", **fields)
        acts.append(action(kind, why, min_version=c.need_driver, branch=render(branch)))
    if "python" in relax and c.python_bad:
        lo, hi = c.python_range
        rng = msg("range.between", min=lo, max=hi) if hi else msg("range.at-least", min=lo)
        acts.append(
            action("change-python", msg("action.change-python", option=c.option, reason=c.python_bad, range=rng), min_version=lo)
        )
    return acts


def _plan_for(
    db: CompatDB, framework: str, env: Env, all_gpus: list[GpuRef], selected: list[GpuRef], left: dict[int, Message],
    base_notes: list[Message],
) -> FrameworkPlan:
    plan = FrameworkPlan(framework=framework, ok=False)
    notes = _decide(plan, db, framework, env, all_gpus, selected, left, base_notes)
    for note in notes:
        add_note(plan, note)
    return plan


def _legacy_unverified(db: CompatDB, gpus: Sequence[GpuRef], actions: Sequence[Action]) -> list[Message]:
    """A driver action naming a legacy branch rests on driver_branches/legacy_branches; say when it is unverified."""
    if not any(a.kind in ("install-driver", "upgrade-driver") for a in actions):
        return []
    rows = [r for r in (_legacy_row(db, g) for g in gpus) if r]
    if not rows:
        return []
    row = min(rows, key=lambda r: r["last_branch"])
    if row.get("verified", db.table("driver_branches", "legacy_branches").verified) is not False:
        return []
    detail = msg("unverified.legacy-branch", branch=row["last_branch"], architecture=row["architecture"])
    return [msg("note.unverified-data", detail=detail)]


def _unverified(c: Cand) -> list[Message]:
    return [msg("note.unverified-data", detail=u) for u in c.unverified]


def _decide(
    plan: FrameworkPlan, db: CompatDB, framework: str, env: Env, all_gpus: list[GpuRef], selected: list[GpuRef],
    left: dict[int, Message], base_notes: list[Message],
) -> list[Message]:
    """Fill ``plan``'s choice, actions and rejections; return its notes, in order."""
    notes = list(base_notes)
    kind = _backend_kind(selected)
    fw_name = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}[framework]

    make = _maker(db, framework, kind)
    if make is None:
        cpu, cnotes = _cpu_choice(db, framework, env)
        plan.choice = cpu
        notes += cnotes
        plan.gpus_left_out = sorted(set(left) | {g.index for g in selected})
        why = _no_backend_reason(framework, kind, selected, env)
        if selected or all_gpus:
            plan.rejected.append(rejected(f"{fw_name} GPU build", why))
        notes.insert(0, msg("note.no-gpu-build-cpu-shown", framework=fw_name, reason=why))
        for i, r in sorted(left.items()):
            notes.append(msg("note.gpu-left-out", index=i, reason=r))
        return notes

    now = _search(make, db, env, selected, _RELAXATIONS[:1])
    full_cands = sorted(make(env, selected), key=lambda c: c.order)
    if now is not None:
        plan.ok = True
        plan.choice = _choice(now.cand, env)
        notes += now.cand.notes + _unverified(now.cand)
        notes += _backend_notes(db, framework, now.cand)
        plan.gpus_covered = [g.index for g in now.gpus]
        dropped = [g for g in selected if g not in now.gpus]
        for g in dropped:
            left[g.index] = _why_left_out(full_cands, now.cand, g, env)
        plan.rejected = _group_rejections(full_cands, env, selected, now.cand)
        better = _search(make, db, env, now.gpus, _RELAXATIONS[1:2])
        if better is not None and better.cand.order < now.cand.order:
            notes.append(msg("note.newer-driver-better-build", need=better.cand.need_driver, option=better.cand.option))
    elif (dml := _directml(db, framework, kind, env)) is not None and isinstance(dml, Choice):
        plan.ok = True
        plan.choice = dml
        plan.gpus_covered = [g.index for g in selected]
        plan.rejected = _group_rejections(full_cands, env, selected, None)
        vendor = {"rocm": "AMD", "xpu": "Intel"}[kind]
        row = db.rows("pytorch", "directml")[0]
        notes.insert(len(base_notes), msg("note.directml", vendor=vendor, version=row["version"], torch=row["torch"],
                                           source=db.table("pytorch", "directml").source[0]))
        if kind == "rocm":
            notes.append(msg("note.rocm-windows-preview", source=ROCM_WINDOWS_DOCS))
    else:
        cpu, cnotes = _cpu_choice(db, framework, env)
        plan.choice = cpu
        notes += cnotes
        plan.rejected = _group_rejections(full_cands, env, selected, None)
        if isinstance(dml, Rejected):
            plan.rejected.append(dml)
        later = _search(make, db, env, selected, _RELAXATIONS[1:])
        if later is not None:
            plan.gpu_choice = _choice(later.cand, later.env)
            if "python" in later.relax and later.cand.python_bad:
                lo, hi = later.cand.python_range
                plan.gpu_choice.python = f"{lo}–{hi}" if hi else f"≥ {lo}"
            plan.actions = _actions(db, later, env, framework)
            notes += _legacy_unverified(db, later.gpus, plan.actions)
            plan.gpus_covered = [g.index for g in later.gpus]
            for g in selected:
                if g not in later.gpus:
                    left[g.index] = _why_left_out(full_cands, later.cand, g, env)
            notes += later.cand.notes + _unverified(later.cand)
            notes.insert(
                len(base_notes),
                msg(
                    "note.gpu-build-after-actions",
                    framework=fw_name,
                    actions=[_action_word(a.kind) for a in plan.actions],
                    option=later.cand.option,
                ),
            )
        else:
            notes.insert(len(base_notes), msg("note.no-gpu-build-possible", framework=fw_name))
            plan.gpus_left_out = [g.index for g in selected]
    plan.gpus_left_out = sorted(set(plan.gpus_left_out) | set(left))
    for i in sorted(left):
        notes.append(msg("note.gpu-not-used", index=i, reason=left[i]))
    return notes


ROCM_WINDOWS_DOCS = ("https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/install/installrad/windows/"
                     "install-pytorch.html")


def _directml(db: CompatDB, framework: str, kind: str, env: Env) -> Choice | Rejected | None:
    """DirectML for AMD and Intel GPUs on native Windows when no native build works: the Choice, or why not."""
    if framework != "pytorch" or kind not in ("rocm", "xpu") or env.os != "windows" or env.wsl:
        return None
    rows = [r for r in db.rows("pytorch", "directml") if r["os"] == "windows" and r["machine"] == env.machine]
    if not rows:
        return None
    r = rows[0]
    if env.python and not (vkey(r["python_min"]) <= vkey(_fmt_py(env.python)) <= vkey(r["python_max"])):
        return rejected(f"{r['package']} {r['version']}", msg("reason.directml-python", version=r["version"],
                        lo=r["python_min"], hi=r["python_max"], python=_fmt_py(env.python)))
    pkg = f"{r['package']}=={r['version']}"
    return Choice(version=r["version"], variant="directml", index_url=None, packages=[pkg],
                  commands=[f'python -m pip install "{pkg}"'],
                  python=_fmt_py(env.python) if env.python else None)


def _action_word(kind: str) -> Message | str:
    words = {
        "install-driver": msg("word.action.install-driver"),
        "upgrade-driver": msg("word.action.upgrade-driver"),
        "use-wsl2": msg("word.action.use-wsl2"),
        "change-python": msg("word.action.change-python"),
    }
    return words.get(kind, kind)


def _backend_notes(db: CompatDB, framework: str, c: Cand) -> list[Message]:
    backend = {"rocm": msg("note.backend-rocm"), "xpu": msg("note.backend-xpu"), "mps": msg("note.backend-mps")}
    notes = []
    if framework == "pytorch" and c.kind in backend:
        notes.append(backend[c.kind])
    if framework == "pytorch" and c.kind == "rocm":
        newer = [r["version"] for r in _torch_rows(db) if vkey(r["version"]) > vkey(c.version) and not r["rocm_variants"]]
        if newer:
            notes.append(msg("note.rocm-newer-unknown", versions=_span(newer)))
    return notes


def _why_left_out(cands: Sequence[Cand], chosen: Cand, g: GpuRef, env: Env) -> Message:
    for c in cands:
        if c.version == chosen.version and c.variant == chosen.variant:
            if g.index in c.gpu_bad:
                return msg("left.build-lacks-gpu", option=c.option, reason=c.gpu_bad[g.index])
            probs = _problems(c, env, [g], frozenset())
            if probs:
                return msg("left.build-problem-on-gpu", option=c.option, gpu=g.label, reason=probs[0])
    return msg("left.no-single-build")


def _backend_kind(selected: Sequence[GpuRef]) -> str:
    if not selected:
        return "none"
    return {"nvidia": "cuda", "amd": "rocm", "intel": "xpu", "apple": "mps"}.get(selected[0].vendor, "none")


def _maker(db: CompatDB, framework: str, kind: str) -> Callable[[Env, Sequence[GpuRef]], list[Cand]] | None:
    if framework == "pytorch":
        if kind in ("cuda", "rocm", "xpu", "mps"):
            return lambda e, g: _torch_candidates(db, e, g, kind)
        return None
    if kind != "cuda":
        return None
    if framework == "tensorflow":
        return lambda e, g: _tf_candidates(db, e, g)
    return lambda e, g: _jax_candidates(db, e, g)


def _no_backend_reason(framework: str, kind: str, selected: Sequence[GpuRef], env: Env) -> Message:
    if not selected:
        return msg("reason.no-usable-gpu")
    vendor = {"rocm": "AMD", "xpu": "Intel", "mps": "Apple"}.get(kind, selected[0].vendor)
    if framework == "tensorflow":
        return msg("reason.tf-vendor-unplanned", vendor=vendor)
    if framework == "jax":
        return msg("reason.jax-vendor-unplanned", vendor=vendor)
    return msg("reason.torch-vendor-unknown", vendor=vendor)


# ------------------------------------------------------------------------------------------- public


def _select(gpus: list[GpuRef], gpu_index: int | None) -> tuple[list[GpuRef], dict[int, Message], list[Message]]:
    """Which GPUs to plan for: the one asked for, else the vendor with usable GPUs (NVIDIA first)."""
    left: dict[int, Message] = {}
    notes: list[Message] = []
    usable: list[GpuRef] = []
    for g in gpus:
        if g.vendor == "nvidia" and g.gpu.cuda_supported is False:
            left[g.index] = msg("left.gpu-too-old-for-cuda", gpu=g.label, architecture=g.architecture or "pre-Kepler")
        elif g.vendor == "nvidia" and not g.cc:
            usable.append(g)
            notes.append(msg("note.cc-unknown", gpu=g.label))
        elif g.vendor in ("nvidia", "amd", "intel", "apple"):
            usable.append(g)
        else:
            left[g.index] = msg("left.vendor-no-build", gpu=g.label, vendor=g.vendor)
    if gpu_index is not None:
        chosen = [g for g in gpus if g.index == gpu_index]
        if not chosen:
            if not gpus:
                raise RequestError(msg("request.no-gpu-found", index=gpu_index))
            if len(gpus) == 1:
                raise RequestError(msg("request.no-such-gpu-one", index=gpu_index))
            raise RequestError(msg("request.no-such-gpu", index=gpu_index, last=len(gpus) - 1))
        for g in gpus:
            if g.index != gpu_index:
                left.setdefault(g.index, msg("left.not-selected"))
        return [g for g in chosen if g in usable], left, notes
    for vendor in ("nvidia", "amd", "intel", "apple"):
        group = [g for g in usable if g.vendor == vendor]
        if group:
            for g in usable:
                if g.vendor != vendor:
                    left[g.index] = msg(
                        "left.other-vendor", gpu=g.label, vendor=vendor.upper() if vendor != "nvidia" else "NVIDIA", index=g.index
                    )
            return group, left, notes
    return [], left, notes


def resolve(
    machine: Machine,
    frameworks: Sequence[str] = ("pytorch",),
    *,
    gpu_index: int | None = None,
    python_version: str | None = None,
) -> list[FrameworkPlan]:
    """Plan each framework for this machine: the newest build that works on every selected GPU, or the CPU
    build plus the actions that would enable the GPU, with a plain reason for every rejected option.

    Raises ValueError for an unknown framework name or a GPU index the machine does not have.
    """
    db = get_db()
    env, env_notes = _machine_env(machine, python_version)
    gpus = _gpus(machine)
    selected, left, sel_notes = _select(gpus, gpu_index)
    nvidia_sel = [g for g in selected if g.vendor == "nvidia"]
    if nvidia_sel and not env.driver and env.jetson:
        env_notes.append(msg("note.jetson-driver"))
    if env.os == "macos" and nvidia_sel:
        env_notes.append(msg("note.macos-no-cuda"))
        selected = [g for g in selected if g.vendor != "nvidia"]
        for g in nvidia_sel:
            left[g.index] = msg("left.macos-no-cuda", gpu=g.label)
    if not env.jetson and env.machine == "aarch64":
        tegra = {ComputeCapability.parse(cc) for r in _opt_rows(db, "pytorch", "jetson") for cc in r.get("ccs", [])}
        jetson_gpu = next((g for g in nvidia_sel if g.cc in tegra), None)
        if jetson_gpu is not None:
            env.jetson = True
            env_notes.append(msg("note.jetson-inferred", gpu=jetson_gpu.label, cc=str(jetson_gpu.cc)))
    for g in gpus:
        if g.classified_from and g in selected:
            env_notes.append(msg("note.cc-classified", gpu=g.label, cc=str(g.cc), architecture=g.architecture, source=g.classified_from))
    plans = []
    for name in frameworks:
        fw = _ALIASES.get(name.lower())
        if fw is None:
            raise RequestError(msg("request.unknown-framework", name=name))
        plans.append(_plan_for(db, fw, env, gpus, selected, dict(left), env_notes + sel_notes))
    return plans
