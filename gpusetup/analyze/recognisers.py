"""Recognisers: what kind of text is this, and which facts does it hold?

Each recogniser is a function ``fn(text, ex) -> bool``: it looks for its kind of output anywhere in the text
(a user's message often mixes prose, an nvidia-smi table and a traceback), puts the facts it understands into
``ex.machine`` (a partial :class:`~gpusetup.model.Machine`) and returns True when it found something. All
recognisers run on every text; the ones that return True name the input's kinds. Register new ones with
:func:`recogniser`. None of them may raise on odd input.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpusetup import untrusted
from gpusetup.bundle.read import newer_schema
from gpusetup.compat.profile import machine_from_data
from gpusetup.messages import msg
from gpusetup.model import (
    SCHEMA_VERSION,
    FrameworkInstall,
    Gpu,
    Library,
    Machine,
    Message,
    PipPackage,
    PythonEnv,
    Reading,
    Toolkit,
)
from gpusetup.probe.smi import merge_gpu, parse_smi_header, parse_smi_q, parse_smi_table, parse_smi_xml
from gpusetup.versions import ComputeCapability, Version, as_version

MAX_LINES = 5000  # lines of one input kept as messages for the rules


@dataclass(frozen=True)
class FactLine:
    """A fact read from what a person wrote (not from a tool's fixed format), with the line it came from."""

    fact: str  # gpu / driver / framework / toolkit / driver-cuda / build-arch / xid / jetson
    value: str  # as gpusetup understood it: "NVIDIA GeForce RTX 5080", "torch 2.3.1+cu121", "79"
    line: str  # the input's line, as written (stripped, at most 300 characters)
    input: str  # which input it was in

    def to_dict(self) -> dict[str, str]:
        return {"fact": self.fact, "value": self.value, "line": self.line, "input": self.input}


@dataclass
class Extraction:
    """What the recognisers learn from one input."""

    name: str
    machine: Machine = field(default_factory=Machine)
    kinds: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "not a gpusetup report: …"
    facts: list[FactLine] = field(default_factory=list)  # facts read from prose, each with its line
    warnings: list[Message] = field(default_factory=list)  # about the input as a whole (a newer report format)

    def fact(self, fact: str, value: str, line: str) -> None:
        item = FactLine(fact, value, line.strip()[:300], self.name)
        if item not in self.facts:
            self.facts.append(item)

    def framework(self, name: str) -> FrameworkInstall:
        if not self.machine.python_envs:
            self.machine.python_envs.append(PythonEnv(executable=f"(from {self.name})"))
        env = self.machine.python_envs[0]
        for fw in env.frameworks:
            if fw.name == name:
                return fw
        fw = FrameworkInstall(name=name)
        env.frameworks.append(fw)
        return fw

    def gpu(self, index: int | None, name: str | None) -> Gpu:
        for g in self.machine.gpus:
            if index is not None and g.index == index:
                if name and (not g.name or len(name) > len(g.name.rstrip(". "))):
                    g.name = name
                return g
        g = Gpu(vendor="nvidia", name=name, index=index)
        self.machine.gpus.append(g)
        return g

    def driver(self, text: str | None, source: str) -> None:
        if not text:
            return
        version = Version(text)
        if not any(r.value == version and r.source == source for r in self.machine.driver.versions):
            self.machine.driver.versions.append(Reading(version, f"{source} ({self.name})"))
        if not self.machine.driver.version:
            self.machine.driver.version = version


RecogniserFn = Callable[[str, Extraction], bool]


@dataclass(frozen=True)
class Recogniser:
    name: str
    label: str  # plain words for the report: "PyTorch collect_env output"
    fn: RecogniserFn
    exclusive: bool = False  # when it recognises the text, the text is structured: no other recogniser runs


RECOGNISERS: list[Recogniser] = []


def recogniser(name: str, label: str, *, exclusive: bool = False) -> Callable[[RecogniserFn], RecogniserFn]:
    def deco(fn: RecogniserFn) -> RecogniserFn:
        RECOGNISERS[:] = [r for r in RECOGNISERS if r.name != name]
        RECOGNISERS.append(Recogniser(name, label, fn, exclusive))
        return fn

    return deco


def labels() -> dict[str, str]:
    return {r.name: r.label for r in RECOGNISERS}


def _clean(v: str | None) -> str | None:
    if v is None:
        return None
    v = v.strip().strip("`'\"").strip()
    if not v or v.lower() in ("none", "n/a", "could not collect", "no cuda", "unknown"):
        return None
    return v


def _short_cuda(v: str | None) -> str | None:
    """"10.0.130" → "10.0"; "11.6" stays; junk → None."""
    v = _clean(v)
    if not v:
        return None
    m = re.match(r"(\d+)\.(\d+)", v)
    return f"{m.group(1)}.{m.group(2)}" if m else None


# ------------------------------------------------------------------------------- our own JSON report


@recogniser("gpusetup-report", "gpusetup diagnose JSON report", exclusive=True)
def gpusetup_report(text: str, ex: Extraction) -> bool:
    s = text.lstrip()
    if not s.startswith("{"):
        return False
    try:
        data = untrusted.loads(s)  # nesting depth checked before parsing
    except ValueError:
        return False
    newer = newer_schema(data)
    if newer is not None:
        ex.warnings.append(msg("analyze.warn.newer-schema", name=ex.name, version=newer, ours=SCHEMA_VERSION))
    try:
        machine = machine_from_data(data, ex.name)
    except Exception as exc:  # noqa: BLE001 - ProfileError and anything odd: report it, keep analysing as text
        ex.notes.append(str(exc))
        return False
    ex.machine = merge_machines(ex.machine, machine)
    return True


@recogniser("gpusetup-plan", "gpusetup install plan (what would be installed, not what is)", exclusive=True)
def gpusetup_plan(text: str, ex: Extraction) -> bool:
    """Our own plan.json (`gpusetup plan --json`, a bundle's plan): it names versions to install, which are not
    facts about the machine, so nothing is taken from it (and no other recogniser reads its commands)."""
    s = text.lstrip()
    if not s.startswith(("[", "{")):
        return False
    try:
        data = untrusted.loads(s)
    except ValueError:
        return False
    plans = data.get("plans") if isinstance(data, dict) else data
    if not isinstance(plans, list) or not plans:
        return False
    if not all(isinstance(p, dict) and "framework" in p and ("choice" in p or "gpu_choice" in p) for p in plans):
        return False
    ex.notes.append("an install plan made by gpusetup: it says what would be installed, so no installed "
                    "framework is read from it")
    return True


# ------------------------------------------------------------------------------------ nvidia-smi


@recogniser("nvidia-smi-xml", "nvidia-smi -q -x (XML)")
def smi_xml(text: str, ex: Extraction) -> bool:
    if "<nvidia_smi_log" not in text:
        return False
    start = text.index("<?xml") if "<?xml" in text else text.index("<nvidia_smi_log")
    snap = parse_smi_xml(text[start:])
    _apply_snapshot(snap, ex, "nvidia-smi -q -x")
    return bool(snap.gpus or snap.driver_version)


@recogniser("nvidia-smi-q", "nvidia-smi -q")
def smi_q(text: str, ex: Extraction) -> bool:
    if "NVSMI LOG" not in text and not re.search(r"^\s*Attached GPUs\s+:", text, re.M):
        return False
    start = text.find("==============NVSMI LOG")
    snap = parse_smi_q(text[start:] if start >= 0 else text)
    _apply_snapshot(snap, ex, "nvidia-smi -q")
    return bool(snap.gpus or snap.driver_version)


_SMI_HEADER = re.compile(r"NVIDIA-SMI\s+[\w.]+\s+(?:Driver|KMD)\s+Version:\s*[\w.]+", re.IGNORECASE)


@recogniser("nvidia-smi-table", "nvidia-smi table")
def smi_table(text: str, ex: Extraction) -> bool:
    if not _SMI_HEADER.search(text):
        return False
    # The table may be indented or quoted in a message: strip common leading tabs/'>' per line.
    lines = [re.sub(r"^[\t >]+(?=[|+])", "", ln) for ln in text.splitlines()]
    body = "\n".join(lines)
    start = body.find("+---")
    head = _SMI_HEADER.search(body)
    if head is not None:
        start = body.rfind("\n", 0, head.start()) + 1 if start < 0 or start > head.start() else start
    snap = parse_smi_table(body[start:] if start >= 0 else body)
    if not snap.driver_version:
        snap.driver_version, snap.cuda_version = parse_smi_header(body)
    _apply_snapshot(snap, ex, "nvidia-smi")
    return True


def _apply_snapshot(snap, ex: Extraction, source: str) -> None:  # noqa: ANN001 - SmiSnapshot
    ex.driver(snap.driver_version, source)
    if snap.cuda_version and not ex.machine.driver.cuda_driver_version:
        ex.machine.driver.cuda_driver_version = as_version(_short_cuda(snap.cuda_version) or snap.cuda_version)
        ex.machine.driver.cuda_driver_version_source = f"{source} ({ex.name})"
    for g in snap.gpus:
        g.vendor = "nvidia"
        same = None
        for have in ex.machine.gpus:
            if (g.pci.address and have.pci.address == g.pci.address) or (
                g.index is not None and have.index == g.index
            ):
                same = have
                break
        if same is None:
            ex.machine.gpus.append(g)
        else:
            name = same.name
            merge_gpu(same, g)
            if name and same.name and len(name) > len(same.name.rstrip(". ")):
                same.name = name  # keep the untruncated name (collect_env) over the table's cut one


# ---------------------------------------------------------------------------------- collect_env


def _field(text: str, label: str) -> str | None:
    m = re.search(rf"^{re.escape(label)}:[ \t]*(.*)$", text, re.M)
    return m.group(1).strip() if m else None


@recogniser("collect-env", "PyTorch collect_env output")
def collect_env(text: str, ex: Extraction) -> bool:
    if "PyTorch version:" not in text or not (
        "Is CUDA available" in text or "CUDA used to build PyTorch" in text
    ):
        return False
    m = ex.machine
    torch = ex.framework("torch")
    torch.version = as_version(_clean(_field(text, "PyTorch version")) or torch.version)
    torch.build_cuda = as_version(_short_cuda(_field(text, "CUDA used to build PyTorch")) or torch.build_cuda)
    torch.build_rocm = as_version(_clean(_field(text, "ROCM used to build PyTorch")) or torch.build_rocm)
    avail = (_field(text, "Is CUDA available") or "").lower()
    if avail:
        torch.gpu_available = avail in ("true", "yes")
    torch.probed = True
    rt = _field(text, "CUDA runtime version")
    if _short_cuda(rt):
        m.cuda.toolkits.append(Toolkit(path="(nvcc on PATH)", version=as_version(_clean(rt)), source="nvcc on PATH "
                                       "(collect_env 'CUDA runtime version')"))
    ex.driver(_clean(_field(text, "Nvidia driver version")), "nvidia-smi via collect_env")
    gm = re.search(r"^GPU models and configuration:[ \t]*(.*(?:\n(?:GPU \d+:.*))*)", text, re.M)
    if gm:
        for idx, name in re.findall(r"GPU (\d+): ([^\n(]+?)(?:\s*\(UUID[^)]*\))?\s*$", gm.group(1), re.M):
            ex.gpu(int(idx), name.strip())
    cudnn = _field(text, "cuDNN version")
    if cudnn is not None:
        block = text[text.find("cuDNN version"):].splitlines()[:12]
        cands: list[tuple[str | None, str]] = [(None, cudnn)] if re.fullmatch(r"\d+\.\d+\.\d+", cudnn.strip()) else []
        for ln in block:
            lm = re.search(r"(\S*libcudnn[\w]*\.(?:so\.|dylib|dll)?\S*?)(\d+\.\d+\.\d+)", ln)
            if lm:
                cands.append((lm.group(0), lm.group(2)))
        for path, v in cands:
            if not any(lib.version == v and lib.path == path for lib in m.cuda.libraries):
                m.cuda.libraries.append(Library(name="libcudnn", version=Version(v), path=path,
                                                source=f"collect_env ({ex.name})"))
    _os_line(_field(text, "OS"), m)
    plat = _field(text, "Python platform") or ""
    km = re.search(r"-(\d+\.\d+\.\d+[\w.+-]*?)-(?:x86_64|aarch64|arm64)", plat)
    if km and not m.system.kernel:
        m.system.kernel = km.group(1)
    if "microsoft" in plat.lower() or "wsl" in plat.lower():
        m.system.wsl = True
    gcc = _field(text, "GCC version")
    gv = re.search(r"(\d+\.\d+\.\d+)", gcc or "")
    if gv:
        m.cuda.host_compiler = f"gcc {gv.group(1)}"
    _package_lists(text, ex)
    return True


def _os_line(os_line: str | None, m: Machine) -> None:
    if not os_line or m.system.os:
        return
    low = os_line.lower()
    if "windows" in low:
        m.system.os = "windows"
    elif "macos" in low or "mac os" in low or "darwin" in low:
        m.system.os = "macos"
    else:
        m.system.os = "linux"
        m.system.distro_name = re.sub(r"\s*\(\w+\)\s*$", "", os_line).strip()
        d = re.match(r"([A-Za-z]+)", m.system.distro_name)
        if d:
            m.system.distro_id = d.group(1).lower()
    m.system.os_version = os_line.strip()
    a = re.search(r"\((x86_64|aarch64|arm64)\)", os_line)
    if a:
        m.system.arch = a.group(1)


_PIP_LINE = re.compile(r"^\[(?:pip3?|uv)\]\s*([\w.-]+)==([\w.+!-]+)", re.M)
_CONDA_LINE = re.compile(r"^\[conda\]\s*([\w.-]+)\s+([\w.+!-]+)\s+(\S+)", re.M)
_FRAMEWORK_NAMES = {"torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow", "tensorflow-gpu": "tensorflow",
                    "jax": "jax", "jaxlib": "jaxlib", "cupy": "cupy", "onnxruntime-gpu": "onnxruntime",
                    "onnxruntime": "onnxruntime"}


_COMPANIONS = {"torchvision", "torchaudio", "torchtext", "xformers"}


def _package_lists(text: str, ex: Extraction) -> None:
    for name, version in _PIP_LINE.findall(text):
        low = name.lower()
        key = _FRAMEWORK_NAMES.get(low)
        if key:
            fw = ex.framework(key)
            fw.version = fw.version or as_version(version)
            fw.installer = fw.installer or "pip"
        elif low.startswith(("jax-cuda", "jax_cuda")):
            ex.framework(low)
        elif low in _COMPANIONS:
            # their +cuXXX tag shows which torch build the environment had (a later CPU torch replaced it: F21)
            env = _env(ex)
            if not any(c.name == low for c in env.companions):
                env.companions.append(PipPackage(low, Version(version)))
        elif low.startswith("nvidia-") and not any(w.name == low for w in ex.machine.cuda.nvidia_wheels):
            ex.machine.cuda.nvidia_wheels.append(PipPackage(low, Version(version)))
    for name, version, build in _CONDA_LINE.findall(text):
        key = _FRAMEWORK_NAMES.get(name.lower())
        if key and build != "pypi" and not build.startswith("pypi"):
            fw = ex.framework(key)
            fw.version = fw.version or as_version(version)
            fw.installer = "conda"
            fw.build = build


def _env(ex: Extraction) -> PythonEnv:
    if not ex.machine.python_envs:
        ex.machine.python_envs.append(PythonEnv(executable=f"(from {ex.name})"))
    return ex.machine.python_envs[0]


# ------------------------------------------------------------------------------ other structured bits


@recogniser("conda-list", "conda list output")
def conda_list(text: str, ex: Extraction) -> bool:
    found = False
    for name, version, build in re.findall(r"^(pytorch|tensorflow|jaxlib)\s+(\d[\w.+]*)\s+(\S+)", text, re.M):
        fw = ex.framework(_FRAMEWORK_NAMES[name])
        fw.version = fw.version or as_version(version)
        fw.installer = "conda"
        fw.build = build
        found = True
    return found


_DPKG = re.compile(r"^([uihrp][ncHUFWti])\s+(\S*(?:nvidia|cuda|cudnn|nccl)\S*)\s+(\S+)", re.M | re.I)


@recogniser("package-list", "dpkg -l package list")
def package_list(text: str, ex: Extraction) -> bool:
    lines = [f"{s}  {n}  {v}" for s, n, v in _DPKG.findall(text)]
    for ln in lines:
        if ln not in ex.machine.packages:
            ex.machine.packages.append(ln)
    return bool(lines)


@recogniser("apt-history", "apt history log")
def apt_history(text: str, ex: Extraction) -> bool:
    if "Start-Date:" not in text and "Commandline:" not in text:
        return False
    keep = [ln.strip() for ln in text.splitlines()
            if re.match(r"\s*(Start-Date|Commandline|Upgrade|Install|Remove|Purge|End-Date):", ln)]
    ex.machine.package_history.extend(keep[-60:])
    return bool(keep)


@recogniser("device-query", "CUDA deviceQuery output")
def device_query(text: str, ex: Extraction) -> bool:
    if "CUDA Capability Major/Minor version number" not in text:
        return False
    for block in re.split(r"(?=^Device \d+: )", text, flags=re.M):
        m = re.match(r"Device (\d+): \"([^\"]+)\"", block)
        cc = re.search(r"CUDA Capability Major/Minor version number:\s*(\d+)\.(\d+)", block)
        if m and cc:
            g = ex.gpu(int(m.group(1)), m.group(2))
            g.compute_capability = ComputeCapability(int(cc.group(1)), int(cc.group(2)))
            g.compute_capability_source = f"deviceQuery ({ex.name})"
    dv = re.search(r"CUDA Driver Version / Runtime Version\s+([\d.]+)\s*/\s*([\d.]+)", text)
    if dv and not ex.machine.driver.cuda_driver_version:
        ex.machine.driver.cuda_driver_version = Version(dv.group(1))
        ex.machine.driver.cuda_driver_version_source = f"deviceQuery ({ex.name})"
    return True


_CC_TEXT = re.compile(r"Found GPU(\d+) (.+?) which is of cuda capability (\d+\.\d+)", re.I)


@recogniser("framework-mentions", "framework versions mentioned in text")
def framework_mentions(text: str, ex: Extraction) -> bool:
    """Versions written in prose or issue templates: "Tensorflow Version\\n\\n2.11.0", "torch is 2.0.1"."""
    found = False
    pats = [
        (r"(?:^|\n)#*\s*Tensorflow Version\s*:?\s*\n+\s*(?:tf\s*)?v?(\d+\.\d+(?:\.\d+)?)", "tensorflow"),
        (r"TensorFlow(?: version)?\s*[:=]\s*v?(\d+\.\d+(?:\.\d+)?)", "tensorflow"),
        (r"\btensorflow(?:-gpu)?==(\d+\.\d+(?:\.\d+)?)", "tensorflow"),
        (r"\bversion torch is (\d+\.\d+(?:\.\d+)?)", "torch"),
        (r"\btorch==(\d+\.\d+(?:\.\d+)?(?:\+\w+)?)", "torch"),
        (r"^\s*\+?\s*jax==(\d+\.\d+(?:\.\d+)?)", "jax"),
        (r"^\s*\+?\s*jaxlib==(\d+\.\d+(?:\.\d+)?)", "jaxlib"),
    ]
    low = text.lower()
    for pat, name in pats:
        if name not in low:
            continue  # the framework is not named at all: skip the pattern (huge inputs stay fast)
        m = re.search(pat, text, re.I | re.M)
        if m:
            fw = ex.framework(name)
            fw.version = fw.version or Version(m.group(1))
            found = True
    for plugin in re.findall(r"^\s*\+?\s*(jax-cuda\d+-(?:plugin|pjrt))==", text, re.M | re.I) if "jax-cuda" in low else []:
        ex.framework(plugin.lower())
        found = True
    m = re.search(r"^\s*cuda is (\d+\.\d+)\s*$", text, re.I | re.M) if "cuda is" in low else None
    if m:
        torch = [fw for env in ex.machine.python_envs for fw in env.frameworks if fw.name == "torch"]
        if torch and not torch[0].build_cuda:
            torch[0].build_cuda = Version(m.group(1))
    for idx, name, cc in _CC_TEXT.findall(text) if "found gpu" in low else []:
        g = ex.gpu(int(idx), name.strip())
        g.compute_capability = ComputeCapability.parse(cc)
        g.compute_capability_source = f"PyTorch warning ({ex.name})"
        found = True
    return found


_WSL = re.compile(r"microsoft-standard-WSL2|\bWSL ?2\b|\[x\] WSL 2", re.I)


@recogniser("system-hints", "OS and platform hints")
def system_hints(text: str, ex: Extraction) -> bool:
    s = ex.machine.system
    found = False
    low = text.lower()
    if ("wsl" in low or "microsoft" in low) and _WSL.search(text):
        s.wsl = True
        s.os = s.os or "linux"
        found = True
    if not s.os and "os" in low:
        m = re.search(r"(?:^|\n)#*\s*OS(?: Platform and Distribution| platform and distribution| version)?\s*:?\s*\n*"
                      r"\s*((?:Microsoft )?Windows \d+[^\n]*|Win\d+[^\n]*|Ubuntu [\d.]+[^\n]*|macOS[^\n]*|"
                      r"Rocky Linux[^\n]*|Fedora[^\n]*|CentOS[^\n]*|Debian[^\n]*)", text, re.I)
        if m:
            line = m.group(1).strip()
            if line.lower().startswith("win"):
                line = "Windows " + line[3:] if not line.lower().startswith("windows") else line
            _os_line(line, ex.machine)
            found = True
    if not s.container and "root@" in text and re.search(r"^root@[0-9a-f]{12}:", text, re.M):
        s.container = "docker"  # a shell prompt inside a container (hostname = container id)
        found = True
    return found


_LD = re.compile(r"LD_LIBRARY_PATH[:=]\s*([^\s;'\"]+)")
_ENV_LINE = re.compile(r"^(?:export\s+)?(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|NVIDIA_DRIVER_CAPABILITIES|"
                       r"CUDA_HOME|CUDA_PATH)=([^\s]*)\s*$", re.M)


@recogniser("environment", "environment variables")
def environment(text: str, ex: Extraction) -> bool:
    env = ex.machine.cuda.env
    found = False
    m = _LD.search(text)
    if m and "LD_LIBRARY_PATH" not in env:
        env["LD_LIBRARY_PATH"] = m.group(1)
        found = True
    for name, value in _ENV_LINE.findall(text):
        env.setdefault(name, value.strip("'\""))
        found = True
    return found


_NVRM_VERSION = re.compile(r"NVRM version: NVIDIA UNIX.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_NVRM_LOADING = re.compile(r"NVRM: loading NVIDIA UNIX.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")


@recogniser("nvidia-proc-version", "NVIDIA kernel module version (/proc/driver/nvidia/version or NVRM load line)")
def nvrm_version(text: str, ex: Extraction) -> bool:
    """The loaded kernel module's version: /proc/driver/nvidia/version, else the last NVRM 'loading' line."""
    m = _NVRM_VERSION.search(text)
    if m:
        ex.machine.driver.versions.append(Reading(Version(m.group(1)), f"/proc/driver/nvidia/version ({ex.name})"))
        return True
    loads = _NVRM_LOADING.findall(text)
    if loads:
        ex.machine.driver.versions.append(Reading(loads[-1], f"kernel module load line ({ex.name})"))
        return True
    return False


# ------------------------------------------------------------------------------------ log lines

_KERNEL = re.compile(
    r"NVRM|\bXid\b|\bnouveau(?: [0-9a-f]{4}:|:)|nova_core|NovaCore|nvidia-nvlink:|nvidia-uvm:|\bkernel: (?=\D)|PM: suspend|"
    r"available PCIe bandwidth, limited by|module verification failed|Lockdown:|fallen off the bus",
    re.IGNORECASE,
)


@recogniser("log-lines", "log and error lines")
def log_lines(text: str, ex: Extraction) -> bool:
    """Every line goes to the rules: kernel-log lines as the kernel log, the rest as messages.

    Literal pre-checks (``in``, done in C) decide before any regular expression runs, so a huge input costs
    little more than reading it once.
    """
    m = ex.machine
    n_kernel = n_msg = 0
    for ln in text.splitlines()[:MAX_LINES]:
        s = ln.rstrip()
        if not s.strip():
            continue
        low = s.lower()
        if any(k in low for k in _KERNEL_HINTS) and _KERNEL.search(s):
            m.kernel_log.append(s)
            n_kernel += 1
        else:
            m.messages.append(s)
            n_msg += 1
    if n_kernel and "kernel-log" not in ex.kinds:
        ex.kinds.append("kernel-log")
    tb = ("Traceback (most recent call last)" in text or "Error: " in text or "Exception: " in text) and re.search(
        r"Traceback \(most recent call last\)|^\w+(?:Error|Exception): ", text, re.M)
    if tb and "traceback" not in ex.kinds:
        ex.kinds.append("traceback")
    if "Error response from daemon" in text or "nvidia-container-cli" in text:
        ex.kinds.append("docker-error")
    low_text = text.lower()
    if not tb and any(w in low_text for w in _ERROR_WORDS) and re.search(
            r"\b(?:error|failed|failure|cannot|could not|not compiled|insufficient|mismatch|out of memory|"
            r"busy or unavailable)\b", text, re.I):
        ex.kinds.append("error-lines")
    return False  # never a kind by itself; the kinds above say what was seen


# Lower-case literals one of which every _KERNEL match contains (checked before the regular expression).
_KERNEL_HINTS = ("nvrm", "xid", "nouveau", "nova", "nvidia-nvlink:", "nvidia-uvm:", "kernel: ", "pm: suspend",
                 "pcie bandwidth", "module verification failed", "lockdown:", "fallen off the bus")
_ERROR_WORDS = ("error", "fail", "cannot", "could not", "not compiled", "insufficient", "mismatch",
                "out of memory", "busy or unavailable")


RECOGNISER_LABELS_EXTRA = {
    "kernel-log": "kernel log (dmesg/journal) lines",
    "traceback": "Python traceback / error",
    "docker-error": "docker / container toolkit error",
    "error-lines": "error messages",
    "text": "free text",
}


# ------------------------------------------------------------------------------------------ merge


_BLANKS = (Machine(), Machine(tool_version=None))  # what an Extraction and analyze_parts start from


def merge_machines(a: Machine, b: Machine) -> Machine:
    """Combine partial facts from several inputs: lists are joined, the first known scalar wins. Nothing
    known yet (a blank machine): ``b`` as it is (a fleet of 1,000 reports walked every field twice each)."""
    if a in _BLANKS:
        return b
    def merge(x, y):  # noqa: ANN001, ANN202 - generic over dataclasses
        if x is None:
            return y
        if y is None:
            return x
        if dataclasses.is_dataclass(x) and dataclasses.is_dataclass(y) and type(x) is type(y):
            for f in dataclasses.fields(x):
                setattr(x, f.name, merge(getattr(x, f.name), getattr(y, f.name)))
            return x
        if isinstance(x, list) and isinstance(y, list):
            out = list(x)
            for item in y:
                if item not in out:
                    out.append(item)
            return out
        if isinstance(x, dict) and isinstance(y, dict):
            return {**y, **x}
        return x if x not in ("", [], {}) else y

    if not a.gpus or not b.gpus:
        return merge(a, b)
    # GPUs: pair by PCI address or index, so one GPU seen in two inputs stays one GPU.
    gpus = list(a.gpus)
    for g in b.gpus:
        same = next((h for h in gpus if (g.pci.address and h.pci.address == g.pci.address)
                     or (g.index is not None and h.index == g.index)), None)
        if same is None:
            gpus.append(g)
        else:
            merge(same, g)
    b.gpus = []
    out = merge(a, b)
    out.gpus = gpus
    return out


# ------------------------------------------------------------------------------------------ lspci

_LSPCI_HEAD = re.compile(
    r"^(?:(?P<dom>[0-9a-f]{4}):)?(?P<bus>[0-9a-f]{2}):(?P<dev>[0-9a-f]{2})\.(?P<fn>\d) "
    r"(?P<cls>VGA compatible controller|3D controller|Display controller)(?: \[(?P<code>[0-9a-f]{4})\])?: "
    r"(?P<desc>.*)$",
    re.IGNORECASE | re.M,
)


@recogniser("lspci", "lspci output")
def lspci(text: str, ex: Extraction) -> bool:
    """Display devices with the driver bound to them ("Kernel driver in use"), works without any GPU driver."""
    heads = list(_LSPCI_HEAD.finditer(text))
    found = False
    for i, h in enumerate(heads):
        desc = h.group("desc")
        ids = re.search(r"\[([0-9a-f]{4}):([0-9a-f]{4})\]", desc)
        vendor = ids.group(1) if ids else ("10de" if "NVIDIA" in desc else None)
        if vendor != "10de":
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        nxt = re.search(r"^\S", text[h.end() + 1:end], re.M)
        block = text[h.end(): h.end() + 1 + nxt.start()] if nxt else text[h.end():end]
        drv = re.search(r"Kernel driver in use:\s*(\S+)", block)
        addr = f"{h.group('dom') or '0000'}:{h.group('bus')}:{h.group('dev')}.{h.group('fn')}".lower()
        gpu = next((g for g in ex.machine.gpus if g.pci.address == addr), None)
        if gpu is None:
            name = re.sub(r"\s*\[[0-9a-f]{4}:[0-9a-f]{4}\]|\s*\(rev [0-9a-f]+\)|\s*\(prog-if[^)]*\)", "", desc)
            gpu = Gpu(vendor="nvidia", name=name.replace("NVIDIA Corporation ", "").strip())
            gpu.pci.address = addr
            ex.machine.gpus.append(gpu)
        gpu.pci.vendor_id = "10de"
        if ids:
            gpu.pci.device_id = ids.group(2)
        if drv:
            gpu.pci.kernel_driver = drv.group(1)
        found = True
    return found
