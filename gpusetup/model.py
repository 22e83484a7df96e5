"""The facts gpusetup works with, as plain JSON-serialisable dataclasses.

Probes fill a :class:`Machine`; rules turn it into :class:`Finding` s; the resolver into a :class:`Plan`;
the self-test into a :class:`SelfTestResult`. Everything here is data: no I/O, no Qt, no numpy.

Unknown is a value (``None``), never an exception. Every fact that came from somewhere carries
:class:`Evidence` saying where, and the error when the source failed, so a report can show *why* a value
is missing. The JSON form is versioned by :data:`SCHEMA_VERSION` and described by
``resources/schema/report.schema.json`` (generated from these classes by ``gpusetup.schema``).

Software versions and compute capabilities are stored typed (:class:`~gpusetup.versions.Version`,
:class:`~gpusetup.versions.ComputeCapability`), so every consumer compares them one way; in JSON they are the
texts they were read from ("570.133.07", "8.6"). Constructors and assignments also accept those texts (a recorded
report, a test) and store the typed value (:class:`_Typed`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from gpusetup.versions import ComputeCapability, Version, as_version
from gpusetup.versions import version_key as version_of

SCHEMA_VERSION = "1.0"


class Severity(str, enum.Enum):
    """How bad a finding is; ordered so that ``max()`` gives the worst."""

    OK = "ok"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @property
    def exit_code(self) -> int:
        """Monitoring-style exit code: 0 healthy, 1 warnings, 2 errors."""
        return {Severity.OK: 0, Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}[self]


_SEVERITY_RANK = {Severity.OK: 0, Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


class _Typed:
    """Version and compute-capability fields hold typed values whatever is assigned: a constructor or an
    assignment given a text ("570.133.07", "8.6": a recorded report, a test, another tool) stores the
    :class:`~gpusetup.versions.Version` / :class:`~gpusetup.versions.ComputeCapability` (the version's text is
    kept, so JSON round-trips exactly). :func:`from_dict` fills objects directly with typed values."""

    __slots__ = ()
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset()
    _CCS: typing.ClassVar[frozenset[str]] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if value is not None:
            if name in self._VERSIONS:
                if type(value) is not Version:
                    value = as_version(value)
            elif name in self._CCS and type(value) is not ComputeCapability:
                value = ComputeCapability.parse(value)
        object.__setattr__(self, name, value)


@dataclass
class Evidence:
    """Where a fact came from (``nvml``, ``nvidia-smi -q -x``, ``/proc/driver/nvidia/version``…).

    ``ok`` is False when the source was tried and failed; ``error`` then says why in plain words.
    ``detail`` holds the raw line(s) that the fact was read from, for support teams.
    """

    source: str
    ok: bool = True
    error: str | None = None
    detail: str | None = None


@dataclass
class Reading(_Typed):
    """One value as reported by one source, for facts that several sources report (driver version)."""

    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"value"})

    value: Version | None
    source: str
    error: str | None = None


# --------------------------------------------------------------------------------------------- GPUs


@dataclass
class PciInfo:
    """A PCI display device as the bus sees it: works with no driver installed."""

    address: str | None = None  # 0000:01:00.0
    vendor_id: str | None = None  # "10de" (lower-case hex, no 0x)
    device_id: str | None = None  # "2204"
    subsystem_vendor_id: str | None = None
    subsystem_device_id: str | None = None
    class_code: str | None = None  # "030000"
    revision: str | None = None
    vendor_name: str | None = None  # from pci.ids
    device_name: str | None = None  # from pci.ids, e.g. "GA102 [GeForce RTX 3090]"
    kernel_driver: str | None = None  # module bound to the device: nvidia, nouveau, amdgpu, vfio-pci…

    @property
    def pci_id(self) -> str | None:
        if self.vendor_id and self.device_id:
            return f"{self.vendor_id}:{self.device_id}"
        return None


@dataclass
class PcieLink:
    gen_current: int | None = None
    gen_max: int | None = None  # what GPU and slot can do together (NVML "max")
    gen_device_max: int | None = None  # what the GPU alone can do
    width_current: int | None = None
    width_max: int | None = None
    replay_counter: int | None = None


@dataclass
class Clocks:
    graphics_mhz: int | None = None
    sm_mhz: int | None = None
    memory_mhz: int | None = None
    graphics_max_mhz: int | None = None
    sm_max_mhz: int | None = None
    memory_max_mhz: int | None = None


@dataclass
class Ecc:
    mode_current: str | None = None  # Enabled / Disabled / N/A
    mode_pending: str | None = None
    volatile_corrected: int | None = None
    volatile_uncorrected: int | None = None
    aggregate_corrected: int | None = None
    aggregate_uncorrected: int | None = None
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None


@dataclass
class GpuProcess:
    """A process holding memory on a GPU (NVML running processes / nvidia-smi ``<processes>``)."""

    pid: int | None = None
    name: str | None = None  # executable as NVML/nvidia-smi name it ("/usr/lib/xorg/Xorg", "python")
    used_mib: int | None = None  # None when the driver does not tell (Windows WDDM: N/A)
    kind: str | None = None  # C (compute) / G (graphics) / C+G


@dataclass
class Gpu(_Typed):
    """One GPU. NVIDIA GPUs are filled from NVML/nvidia-smi; every vendor at least from PCI."""

    _CCS: typing.ClassVar[frozenset[str]] = frozenset({"compute_capability"})

    vendor: str  # nvidia / amd / intel / apple / other
    name: str | None = None
    index: int | None = None  # NVML index when the driver sees it
    pci: PciInfo = field(default_factory=PciInfo)
    uuid: str | None = None
    serial: str | None = None
    chip: str | None = None  # GA102, AD107, gfx1100…
    architecture: str | None = None  # Ampere, Ada Lovelace…
    compute_capability: ComputeCapability | None = None  # (8, 6), "8.6" in JSON
    compute_capability_source: str | None = None  # nvml / nvidia-smi / chip rule (pci.ids)
    gfx_target: str | None = None  # AMD only
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    memory_free_mib: int | None = None
    sm_count: int | None = None
    vbios: str | None = None
    clocks: Clocks = field(default_factory=Clocks)
    pcie: PcieLink = field(default_factory=PcieLink)
    ecc: Ecc = field(default_factory=Ecc)
    throttle_reasons: list[str] = field(default_factory=list)
    temperature_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    utilization_gpu_pct: int | None = None
    persistence_mode: bool | None = None
    mig_mode: str | None = None  # Enabled / Disabled / N/A
    compute_mode: str | None = None  # Default / Exclusive_Process / Exclusive_Thread / Prohibited
    mig_devices: list[str] = field(default_factory=list)
    driver_model: str | None = None  # WDDM / TCC / MCDM on Windows
    display_active: bool | None = None
    processes: int | None = None
    evidence: list[Evidence] = field(default_factory=list)
    mig_mode_pending: str | None = None  # what MIG mode becomes after the next GPU reset (Enabled / Disabled)
    process_list: list[GpuProcess] = field(default_factory=list)  # who holds the GPU's memory, biggest first
    cuda_supported: bool | None = None  # False: the chip rule says no current CUDA release runs this chip (enrich)


# ------------------------------------------------------------------------------------------- driver


@dataclass
class KernelModule(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version"})

    name: str  # nvidia, nouveau, nova_core, amdgpu…
    loaded: bool | None = None
    version: Version | None = None
    flavour: str | None = None  # open / proprietary (NVIDIA only)
    available_for_running_kernel: bool | None = None  # a .ko exists under /lib/modules/$(uname -r)
    signer: str | None = None
    dkms_status: list[str] = field(default_factory=list)


@dataclass
class Driver(_Typed):
    """The NVIDIA driver as each source sees it; disagreement between sources is itself a finding."""

    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version", "cuda_driver_version", "nvml_version"})

    version: Version | None = None  # best single answer (user-space first)
    versions: list[Reading] = field(default_factory=list)  # each source's answer
    cuda_driver_version: Version | None = None  # highest CUDA the driver supports, "12.8"
    cuda_driver_version_source: str | None = None
    nvml_version: Version | None = None
    nvml_error: str | None = None  # plain-words reason NVML could not start, when it could not
    cuinit_error: str | None = None  # CUresult name when cuInit failed
    modules: list[KernelModule] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


# ------------------------------------------------------------------------------------- CUDA and libs


@dataclass
class Toolkit(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version"})

    path: str
    version: Version | None = None
    source: str = ""  # /usr/local/cuda-*, CUDA_HOME, nvcc on PATH, conda
    nvcc: str | None = None


@dataclass
class Library(_Typed):
    """A CUDA-family shared library found on the system (loader cache, pip wheel, toolkit dir)."""

    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version"})

    name: str  # libcudnn, libcublas, libnccl…
    version: Version | None = None
    path: str | None = None
    source: str = ""  # ldconfig / pip wheel nvidia-cudnn-cu12 / toolkit


@dataclass
class PipPackage(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version"})

    name: str
    version: Version
    installed_at: str | None = None  # dist-info RECORD time (UTC ISO-8601) when read; tells install order


@dataclass
class CudaStack:
    toolkits: list[Toolkit] = field(default_factory=list)
    libraries: list[Library] = field(default_factory=list)
    nvidia_wheels: list[PipPackage] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, CUDA_HOME…
    host_compiler: str | None = None  # "gcc 13.2.0": what nvcc would use to build extensions
    evidence: list[Evidence] = field(default_factory=list)


# ------------------------------------------------------------------------------------- frameworks


@dataclass
class FrameworkInstall(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version", "build_cuda", "build_rocm", "cudnn"})

    name: str  # torch, tensorflow, jax, jaxlib, cupy, onnxruntime
    version: Version | None = None
    build_cuda: Version | None = None  # CUDA the wheel was built against ("12.6"), None for CPU builds
    build_rocm: Version | None = None
    cudnn: Version | None = None
    arch_list: list[str] = field(default_factory=list)  # sm_50 … compiled in
    gpu_available: bool | None = None  # torch.cuda.is_available() and friends
    device_count: int | None = None
    devices: list[str] = field(default_factory=list)
    location: str | None = None
    installer: str | None = None  # pip / conda
    probed: bool = False  # False: read from dist-info only, not imported
    build: str | None = None  # conda build string ("py3.7_cpu_0") or wheel local tag ("cpu", "cu121")
    error: str | None = None
    installed_at: str | None = None  # dist-info RECORD time (UTC ISO-8601): when pip last (re)installed it
    direct_url: str | None = None  # direct_url.json "url": set when installed from a file/URL, not an index
    cudnn_requirement: str | None = None  # the wheel's own Requires-Dist on cuDNN ("nvidia-cudnn-cu12==9.1.0.70")


@dataclass
class PythonEnv(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"version"})

    executable: str
    version: Version | None = None
    is_venv: bool | None = None
    is_conda: bool | None = None
    frameworks: list[FrameworkInstall] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    companions: list[PipPackage] = field(default_factory=list)  # torchvision/torchaudio…: their +cuXXX tag


# ------------------------------------------------------------------------------------------- system


@dataclass
class Cpu:
    model: str | None = None
    vendor: str | None = None
    cores_physical: int | None = None
    cores_logical: int | None = None
    flags: list[str] = field(default_factory=list)  # only the ones that matter: avx2, avx512f, fma…


@dataclass
class System(_Typed):
    _VERSIONS: typing.ClassVar[frozenset[str]] = frozenset({"python"})

    os: str | None = None  # linux / windows / macos
    os_version: str | None = None
    distro_id: str | None = None  # ubuntu, debian, fedora…
    distro_version: str | None = None
    distro_name: str | None = None
    distro_like: list[str] = field(default_factory=list)
    # the os-release fields the installer scripts read (ID, ID_LIKE, VERSION_ID, VERSION_CODENAME, UBUNTU_CODENAME,
    # PRETTY_NAME), so a plan made from this report previews exactly what its scripts will do on that machine
    os_release: dict[str, str] = field(default_factory=dict)
    kernel: str | None = None
    arch: str | None = None  # x86_64 / aarch64 / arm64
    hostname: str | None = None
    wsl: bool | None = None
    wsl_version: int | None = None
    container: str | None = None  # docker / podman / kubernetes / lxc / None
    secure_boot: bool | None = None
    secure_boot_source: str | None = None
    kernel_cmdline: str | None = None  # /proc/cmdline (iommu=, module blacklists)
    python: Version | None = None  # the Python gpusetup runs on, "3.12.3"
    cpu: Cpu = field(default_factory=Cpu)
    ram_total_mib: int | None = None
    ram_available_mib: int | None = None
    disk_free_mib: dict[str, int] = field(default_factory=dict)  # path -> MiB free
    is_jetson: bool | None = None
    evidence: list[Evidence] = field(default_factory=list)
    prime_profile: str | None = None  # Ubuntu nvidia-prime: nvidia / on-demand / intel (/etc/prime-discrete)
    nvswitches: int | None = None  # NVIDIA NVSwitch bridges on the PCI bus (HGX/DGX: the fabric manager is needed)
    init_system: str | None = None  # "systemd" when systemd runs as PID 1, else PID 1's name (init, tini…); None: unknown


@dataclass
class Containers:
    docker: str | None = None  # version, None when absent
    docker_daemon_reachable: bool | None = None
    podman: str | None = None
    nvidia_runtime_registered: bool | None = None
    default_runtime: str | None = None
    cdi_specs: list[str] = field(default_factory=list)
    toolkit_version: str | None = None  # nvidia-ctk / nvidia-container-cli
    toolkit_error: str | None = None  # what `nvidia-container-cli info` printed when it failed
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class CommandRecord:
    """What the runner ran: for the log, the bundle and the report's 'how we know'."""

    argv: list[str]
    returncode: int | None
    duration_ms: float
    timed_out: bool = False
    error: str | None = None  # could not start (not found, no permission)
    stdout_tail: str = ""
    stderr_tail: str = ""


@dataclass
class ProbeRun:
    name: str
    duration_ms: float
    ok: bool = True
    error: str | None = None


@dataclass
class Machine:
    """Everything detected about one machine."""

    schema_version: str = SCHEMA_VERSION
    tool_version: str | None = None
    collected_at: str | None = None  # ISO-8601 UTC
    system: System = field(default_factory=System)
    gpus: list[Gpu] = field(default_factory=list)
    driver: Driver = field(default_factory=Driver)
    cuda: CudaStack = field(default_factory=CudaStack)
    python_envs: list[PythonEnv] = field(default_factory=list)
    containers: Containers = field(default_factory=Containers)
    kernel_log: list[str] = field(default_factory=list)  # NVRM/Xid/nouveau lines only, never the whole log
    packages: list[str] = field(default_factory=list)  # distro packages of the NVIDIA stack, "ii nvidia-driver-550 550.120…"
    package_history: list[str] = field(default_factory=list)  # tail of apt history / dnf log for NVIDIA/CUDA packages
    messages: list[str] = field(default_factory=list)  # error lines seen (tracebacks, docker errors), matched by rules
    probes: list[ProbeRun] = field(default_factory=list)
    commands: list[CommandRecord] = field(default_factory=list)

    @property
    def nvidia_gpus(self) -> list[Gpu]:
        return [g for g in self.gpus if g.vendor == "nvidia"]


# ------------------------------------------------------------------------------------------ findings


@dataclass
class Finding:
    """A diagnosis: what is wrong (or notable), what it means, and the exact fix for this machine."""

    id: str  # stable slug, e.g. "driver-missing"
    severity: Severity
    title: str  # one plain line
    detail: str = ""  # what it means, why it matters
    fix: str = ""  # exact steps/commands for this machine
    catalogue: str | None = None  # F01…F35 from the failure catalogue
    evidence: list[str] = field(default_factory=list)  # the lines that triggered it
    gpu_index: int | None = None
    fix_code: Message | None = None  # ``fix`` as data (a gpusetup.messages code and this machine's values)
    sure_code: Message | None = None  # what would confirm it ("To be sure: …" at the end of ``detail``), as data
    params: dict[str, str] = field(default_factory=dict)  # this machine's values, for a translated title and meaning


# ------------------------------------------------------------------------------------------- plans


@dataclass
class Step:
    """One action of a plan. Prepared first, shown, then executed; ``undo`` puts it back."""

    id: str
    title: str
    argv: list[str] = field(default_factory=list)
    needs_root: bool = False
    explain: str = ""
    undo: list[str] = field(default_factory=list)
    kind: str = "command"  # command / venv / pip / script / reboot / manual / python
    subject: str = ""  # what the step acts on (a path, the packages, a driver branch): shown beside a translated title
    env: dict[str, str] = field(default_factory=dict)  # extra environment variables for argv (no secrets)
    title_code: Message | None = None  # ``title`` as data (a gpusetup.messages code), to word it in any language
    explain_code: Message | None = None  # ``explain`` as data


@dataclass
class Message:
    """A decision or note as data: a catalogue code and its parameters (values, or nested messages as
    ``{"code", "params"}``). :mod:`gpusetup.messages` turns it into words in English or 简体中文 from
    ``resources/translations/messages_<lang>.json``; the English text is also kept beside it (``notes``,
    ``reason``, ``why``) for readers that do not know the codes."""

    code: str  # "reject.driver-too-old", "note.python-unknown" …
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    note_codes: list[Message] = field(default_factory=list)  # the same notes as data, in the same order


@dataclass
class Choice:
    """The build the resolver picked for one framework."""

    version: str  # "2.9.1"
    variant: str  # cu126 / cu130 / rocm6.4 / cpu / xpu / cuda12 (JAX) / and-cuda (TensorFlow)
    index_url: str | None = None
    packages: list[str] = field(default_factory=list)  # exact pip requirement strings
    commands: list[str] = field(default_factory=list)  # ready-to-paste install commands
    conda: list[str] = field(default_factory=list)  # conda alternative, when one exists
    python: str | None = None
    env: dict[str, str] = field(default_factory=dict)  # runtime variables the build needs, set on activation


@dataclass
class Action:
    """Something the user must do first (install/upgrade a driver, use WSL2, change Python, reboot)."""

    kind: str  # install-driver / upgrade-driver / use-wsl2 / change-python / reboot / install-rocm / …
    why: str
    min_version: str | None = None
    branch: str | None = None  # driver branch to choose, e.g. "580" or "470 (legacy)"
    commands: list[str] = field(default_factory=list)
    code: str = ""  # ``why`` as data: a gpusetup.messages code and its parameters
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Rejected:
    option: str  # "cu130", "torch 2.8 cu128", "tensorflow on native Windows"
    reason: str  # plain words a beginner understands (English)
    code: str = ""  # ``reason`` as data: a gpusetup.messages code and its parameters
    params: dict[str, Any] = field(default_factory=dict)


# The environment files a FrameworkPlan can be written as (`gpusetup plan --emit KIND`, gpusetup.generate.project).
# Here, so the command line can list them without importing the generators.
EMIT_KINDS = ("uv", "pixi", "conda", "requirements")


@dataclass
class FrameworkPlan:
    """The resolver's answer for one framework: what works now, what to do first, what not and why."""

    framework: str  # pytorch / tensorflow / jax
    ok: bool  # a GPU build is possible now (no action needed first)
    choice: Choice | None = None
    gpu_choice: Choice | None = None  # the GPU build that would work after the actions (when ok is False)
    actions: list[Action] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gpus_covered: list[int] = field(default_factory=list)  # indices into Machine.gpus
    gpus_left_out: list[int] = field(default_factory=list)
    note_codes: list[Message] = field(default_factory=list)  # the same notes as data, in the same order


# ---------------------------------------------------------------------------------------- self-test


@dataclass
class Measurement:
    """One self-test number against its rated peak, with a verdict in words."""

    name: str  # "h2d_pinned", "matmul_fp32", "cpu_triad"…
    value: float | None
    unit: str  # GB/s, TFLOP/s, GFLOP/s
    rated: float | None = None
    fraction: float | None = None  # value / rated
    verdict: str = "info"  # pass / warn / fail / info / skipped
    reason: str = ""
    samples: list[float] = field(default_factory=list)
    spread: float | None = None  # (max - min) / median
    device: int | None = None
    tier: str = ""  # driver / cublas / framework / cpu
    rated_basis: str | None = None  # how ``rated`` was obtained: live-clock / max-clock / datasheet / pcie-link
    datasheet: float | None = None  # the spec-sheet peak, shown beside a peak computed from live clocks
    code: str = ""  # ``reason`` as data (a gpusetup.messages code) when the self-test words it so
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class SelfTestResult:
    mode: str = "quick"
    measurements: list[Measurement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    gpu_tested: bool = False
    verdict: str = "info"  # worst of the measurements
    gpu_name: str | None = None  # the GPU that was tested, as the driver names it
    device: int | None = None  # its CUDA device number
    duration_s: float | None = None
    framework_python: str | None = None  # the interpreter whose frameworks the framework tier checked
    headline: Message | None = None  # why the GPU was not tested, as data (the English is among the notes)
    note_codes: list[Message] = field(default_factory=list)  # the notes as data, in the same order


@dataclass
class Report:
    """What `gpusetup diagnose --json` writes: the facts, the findings, and plans/self-test when run."""

    machine: Machine
    kind: str = "gpusetup-report"
    schema_version: str = SCHEMA_VERSION
    findings: list[Finding] = field(default_factory=list)
    plans: list[FrameworkPlan] = field(default_factory=list)  # resolver output per framework
    selftest: SelfTestResult | None = None

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)


# ------------------------------------------------------------------------------- (de)serialisation


def to_dict(obj: Any) -> Any:
    """Dataclass tree → JSON-ready dict (enums as their values, versions and compute capabilities as text)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (Version, ComputeCapability)):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj


class SchemaError(ValueError):
    """The JSON does not have the shape of a gpusetup object."""


_T = typing.TypeVar("_T")


def from_dict(cls: type[_T], data: Any, path: str = "$") -> _T:
    """JSON dict → dataclass tree, checking types as it goes; unknown keys are ignored (newer writers)."""
    return typing.cast(_T, _convert(cls, data, path))


@functools.cache
def _fields_of(tp: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, resolved type, required) of a dataclass's fields, resolved once per class: resolving the string
    annotations (typing.get_type_hints) on every object was most of the time `analyze` spent on a fleet."""
    hints = typing.get_type_hints(tp)
    return tuple(
        (f.name, hints[f.name], f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        for f in dataclasses.fields(tp)
    )


def _convert(tp: Any, data: Any, path: str) -> Any:
    return _converter(tp)(data, path)


_Converter = typing.Callable[[Any, str], Any]


@functools.cache
def _converter(tp: Any) -> _Converter:
    """The reader for one type, worked out once per type (a fleet of reports reads the same types 80,000
    times: asking typing about each value again was most of `analyze`'s time)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return lambda data, path: data
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        nullable = type(None) in args
        options = [_converter(a) for a in args if a is not type(None)]

        def union(data: Any, path: str) -> Any:
            if data is None and nullable:
                return None
            errors = []
            for option in options:
                try:
                    return option(data, path)
                except SchemaError as exc:
                    errors.append(str(exc))
            raise SchemaError("; ".join(errors) or f"{path}: unexpected null")

        return union
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        read_item = _converter(item)

        def as_list(data: Any, path: str) -> Any:
            if not isinstance(data, list):
                raise SchemaError(f"{path}: expected a list, got {type(data).__name__}")
            return [read_item(v, f"{path}[{i}]") for i, v in enumerate(data)]

        return as_list
    if origin is dict:
        _, val = typing.get_args(tp) or (str, Any)
        read_val = _converter(val)

        def as_dict(data: Any, path: str) -> Any:
            if not isinstance(data, dict):
                raise SchemaError(f"{path}: expected an object, got {type(data).__name__}")
            return {str(k): read_val(v, f"{path}.{k}") for k, v in data.items()}

        return as_dict
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        cls = tp
        post_init = getattr(cls, "__post_init__", None)

        def as_dataclass(data: Any, path: str) -> Any:
            if not isinstance(data, dict):
                raise SchemaError(f"{path}: expected an object for {cls.__name__}, got {type(data).__name__}")
            # Filled directly rather than through __init__ and _Typed.__setattr__ (the readers give typed values
            # already; measured: a fleet of 1,000 reports is ~25,000 objects, benchmarks/analyze_fleet_bench.py);
            # __post_init__ still runs where a class has one.
            obj = object.__new__(cls)
            values = obj.__dict__
            for name, read, required, default, factory in _field_readers(cls):
                if name in data:
                    values[name] = read(data[name], f"{path}.{name}")
                elif required:
                    raise SchemaError(f"{path}: missing required field '{name}'")
                else:
                    values[name] = default if factory is None else factory()
            if post_init is not None:
                post_init(obj)
            return obj

        return as_dataclass
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        enum_type = tp

        def as_enum(data: Any, path: str) -> Any:
            try:
                return enum_type(data)
            except ValueError as exc:
                raise SchemaError(f"{path}: {data!r} is not one of {[m.value for m in enum_type]}") from exc

        return as_enum
    if tp is Version:

        def read_version(data: Any, path: str) -> Any:
            if not isinstance(data, str):
                raise SchemaError(f"{path}: expected a version text, got {data!r}")
            return version_of(data)

        return read_version
    if tp is ComputeCapability:

        def as_cc(data: Any, path: str) -> Any:
            cc = ComputeCapability.parse(data) if isinstance(data, str) else None
            if cc is None:
                raise SchemaError(f"{path}: expected a compute capability such as \"8.6\", got {data!r}")
            return cc

        return as_cc
    if tp is float:

        def as_float(data: Any, path: str) -> Any:
            if isinstance(data, bool) or not isinstance(data, (int, float)):
                raise SchemaError(f"{path}: expected a number, got {data!r}")
            return float(data)

        return as_float
    if tp is int:

        def as_int(data: Any, path: str) -> Any:
            if isinstance(data, bool) or not isinstance(data, int):
                raise SchemaError(f"{path}: expected an integer, got {data!r}")
            return data

        return as_int
    if tp in (str, bool):
        want = tp

        def as_plain(data: Any, path: str) -> Any:
            if not isinstance(data, want):
                raise SchemaError(f"{path}: expected {want.__name__}, got {data!r}")
            return data

        return as_plain

    def unreadable(data: Any, path: str) -> Any:
        raise SchemaError(f"{path}: cannot read type {tp!r}")

    return unreadable


@functools.cache
def _field_readers(cls: type) -> tuple[tuple[str, _Converter, bool, Any, typing.Callable[[], Any] | None], ...]:
    """(name, reader, required, default, default factory) of each field; resolved on first use, not when the
    dataclass's converter is built (recursive types)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    out = []
    for name, hint, required in _fields_of(cls):
        f = fields[name]
        factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
        out.append((name, _converter(hint), required, None if f.default is dataclasses.MISSING else f.default, factory))
    return tuple(out)
