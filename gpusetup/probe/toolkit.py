"""The CUDA stack outside the driver: toolkits, CUDA libraries the loader finds, pip ``nvidia-*`` wheels and
the environment variables that change what CUDA programs see.

Nothing is imported or loaded: toolkits are read from ``version.json``/``version.txt``/``dist-info`` and
``nvcc --version``; libraries from ``ldconfig -p`` and ``LD_LIBRARY_PATH`` folders; wheels from the target
environment's ``*.dist-info`` folders.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gpusetup.model import Evidence, Library, PipPackage, Toolkit
from gpusetup.probe import pyenv
from gpusetup.versions import Version, as_version

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

# Environment variables that change which GPUs/libraries CUDA programs and frameworks see. Reported when set,
# even when empty: CUDA_VISIBLE_DEVICES="" hides every GPU.
CUDA_ENV_VARS: tuple[str, ...] = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "CUDA_DEVICE_ORDER",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDNN_PATH",
    "CUDA_VERSION",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "TORCH_CUDA_ARCH_LIST",
    "PYTORCH_CUDA_ALLOC_CONF",
    "XLA_FLAGS",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "JAX_PLATFORMS",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_ENABLE_ONEDNN_OPTS",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HSA_OVERRIDE_GFX_VERSION",
    "NCCL_P2P_DISABLE",
    "NCCL_IB_DISABLE",
    "NVCC_CCBIN",
    "CUDAHOSTCXX",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
)

# Library families worth reporting (soname stem → family name).
LIB_FAMILIES: tuple[str, ...] = (
    "libcuda",
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcudnn",
    "libnccl",
    "libnvidia-ml",
    "libnvrtc",
    "libnvJitLink",
    "libcufft",
    "libcurand",
    "libcusolver",
    "libcusparse",
    "libcupti",
)
_LIB_RE = re.compile(r"^(?P<stem>lib[A-Za-z_-]+?)(?:64_\d+)?\.so(?:\.(?P<ver>[\d.]+))?$")

# pip wheel name (without -cuXX) → library it ships.
WHEEL_LIBS = {
    "nvidia-cudnn": "libcudnn",
    "nvidia-cublas": "libcublas",
    "nvidia-nccl": "libnccl",
    "nvidia-cuda-runtime": "libcudart",
    "nvidia-cuda-nvrtc": "libnvrtc",
    "nvidia-nvjitlink": "libnvJitLink",
    "nvidia-cufft": "libcufft",
    "nvidia-curand": "libcurand",
    "nvidia-cusolver": "libcusolver",
    "nvidia-cusparse": "libcusparse",
    "nvidia-cuda-cupti": "libcupti",
}


def probe(ctx: ProbeContext, machine: Machine) -> None:
    cuda = machine.cuda
    cuda.env = {k: ctx.env[k] for k in CUDA_ENV_VARS if k in ctx.env}
    cuda.toolkits = find_toolkits(ctx, cuda.evidence)
    cuda.libraries = loader_libraries(ctx, cuda.evidence) + ld_library_path_libraries(ctx)
    wheels, wheel_libs = pip_wheels(ctx)
    cuda.nvidia_wheels = wheels
    cuda.libraries += wheel_libs
    compiler = host_compiler_command(ctx.env, lambda p: ctx.path(p).is_dir())
    if cuda.toolkits and ctx.runner.which(compiler):
        res = ctx.runner.run([compiler, "--version"], timeout=min(ctx.timeout, 3.0))
        first = res.stdout.splitlines()[0] if res.stdout else ""
        m = re.search(r"(\d+\.\d+\.\d+)", first)
        kind = "clang" if "clang" in first.lower() else "gcc"
        cuda.host_compiler = f"{kind} {m.group(1)}" if m else None


def host_compiler_command(env: Mapping[str, str], isdir: Callable[[str], bool] = os.path.isdir) -> str:
    """The host compiler nvcc would use: ``-ccbin`` in NVCC_PREPEND/APPEND_FLAGS, NVCC_CCBIN, CUDAHOSTCXX, else gcc.

    A ``-ccbin`` folder means the ``gcc`` in it. Checking plain ``gcc`` when the user already points nvcc at
    ``g++-12`` would report a problem that is already solved.
    """
    for var in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"):
        m = re.search(r"(?:-ccbin|--compiler-bindir)[=\s]+(\S+)", env.get(var, ""))
        if m:
            return _compiler_in(m.group(1).strip("'\""), isdir)
    for var in ("NVCC_CCBIN", "CUDAHOSTCXX"):
        if env.get(var, "").strip():
            return _compiler_in(env[var].strip(), isdir)
    return "gcc"


def _compiler_in(value: str, isdir: Callable[[str], bool]) -> str:
    return os.path.join(value, "gcc") if isdir(value) else value


# ------------------------------------------------------------------------------------------- toolkits


def parse_nvcc_version(text: str) -> str | None:
    """``Cuda compilation tools, release 13.0, V13.0.88`` → ``13.0.88`` (``13.0`` without the V part)."""
    m = re.search(r"release (\d+\.\d+),\s*V(\d+\.\d+\.\d+)", text)
    if m:
        return m.group(2)
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def toolkit_version(d: Path) -> tuple[str | None, str]:
    """Version of a toolkit folder and where it was read: version.json, version.txt, dist-info, folder name."""
    try:
        data = json.loads((d / "version.json").read_text(encoding="utf-8"))
        v = data.get("cuda", {}).get("version") if isinstance(data, dict) else None
        if isinstance(v, str) and v:
            return v, "version.json"
    except (OSError, ValueError, AttributeError):
        pass
    try:
        m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)?)", (d / "version.txt").read_text(encoding="utf-8"))
        if m:
            return m.group(1), "version.txt"
    except OSError:
        pass
    try:
        for n in sorted(os.listdir(d / "dist-info")):
            m = re.match(r"nvidia_cuda_nvcc-(\d+\.\d+\.\d+)", n)
            if m:
                return m.group(1), "dist-info (nvidia_cuda_nvcc)"
    except OSError:
        pass
    m = re.search(r"(?:^|cuda-|^v)(\d+\.\d+)$", d.name)  # cuda-12.4 (Linux), v12.4 (Windows)
    if m:
        return m.group(1), "folder name"
    return None, ""


def _display(ctx: ProbeContext, p: Path) -> str:
    """A path under a fake root shown as the system path it stands for."""
    try:
        rel = p.relative_to(ctx.root)
        return "/" + str(rel) if ctx.root != Path("/") else str(p)
    except ValueError:
        return str(p)


def find_toolkits(ctx: ProbeContext, evidence: list[Evidence]) -> list[Toolkit]:
    found: dict[str, Toolkit] = {}  # by real path

    def add(d: Path, source: str) -> Toolkit | None:
        if not d.is_dir():
            return None
        try:
            real = str(d.resolve())
        except OSError:
            real = str(d)
        name = _display(ctx, d)
        if real in found:
            tk = found[real]
            if source not in tk.source:
                tk.source += f", {source}"
            if name != tk.path and d.is_symlink():
                tk.source += f" ({name} → {tk.path})"
            return tk
        version, how = toolkit_version(d.resolve() if d.is_symlink() else d)
        nvcc = d / "bin" / ("nvcc.exe" if ctx.os_name == "windows" else "nvcc")
        shown = _display(ctx, Path(real)) if d.is_symlink() else name
        tk = Toolkit(
            path=shown, version=as_version(version), source=source, nvcc=_display(ctx, nvcc) if nvcc.exists() else None
        )
        if d.is_symlink():
            tk.source += f" ({name} → {shown})"
        if how:
            evidence.append(Evidence(f"{shown}/{how.split(' ')[0]}", detail=f"CUDA {version}"))
        found[real] = tk
        return tk

    candidates: list[tuple[Path, str]] = []
    for base in ("/usr/local", "/opt"):
        try:
            entries = sorted(os.listdir(ctx.path(base)))
        except OSError:
            continue
        for e in entries:
            if e == "cuda" or re.fullmatch(r"cuda-\d+(\.\d+)*", e):
                candidates.append((ctx.path(f"{base}/{e}"), f"{base}/cuda*"))
    if ctx.os_name == "windows":
        pf = ctx.env.get("ProgramFiles", r"C:\Program Files")
        root = Path(pf) / "NVIDIA GPU Computing Toolkit" / "CUDA"
        with contextlib.suppress(OSError):
            candidates += [(root / e, "Program Files") for e in sorted(os.listdir(root))]
    # Real folders first so a /usr/local/cuda symlink is reported as an alias of the folder it points to.
    candidates.sort(key=lambda c: c[0].is_symlink())
    for d, source in candidates:
        add(d, source)
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        val = ctx.env.get(var)
        if val:
            tk = add(ctx.path(val), var)
            if tk is None:
                evidence.append(Evidence(var, ok=False, error=f"{var}={val} does not exist"))
    nvcc = ctx.runner.which("nvcc")
    if nvcc:
        res = ctx.runner.run([nvcc, "--version"], timeout=min(ctx.timeout, 5.0))
        version = as_version(parse_nvcc_version(res.stdout))
        evidence.append(
            Evidence("nvcc --version", ok=version is not None, error=res.error, detail=res.stdout[-300:])
        )
        same = [t for t in found.values() if t.version and version and _extends(version, t.version)]
        same = same or [t for t in found.values() if t.version and version and _extends(t.version, version)]
        if same:
            same[0].source += ", nvcc on PATH"
            same[0].nvcc = nvcc
            if version and len(version.release) > len(same[0].version.release if same[0].version else ()):
                same[0].version = version
        else:
            home = str(Path(nvcc).parent.parent)
            found[f"nvcc:{nvcc}"] = Toolkit(path=home, version=version, source="nvcc on PATH", nvcc=nvcc)
    return list(found.values())


def _extends(longer: Version, shorter: Version) -> bool:
    """12.4.131 extends 12.4 (nvcc names the patch, a folder name only major.minor)."""
    return longer.release[: len(shorter.release)] == shorter.release


# ------------------------------------------------------------------------------------------ libraries


def parse_ldconfig(text: str) -> list[tuple[str, str]]:
    """``ldconfig -p`` → (soname, path) pairs."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)", line)
        if m:
            out.append((m.group(1), m.group(3)))
    return out


def _family(soname: str) -> tuple[str, str | None] | None:
    m = _LIB_RE.match(soname)
    if not m:
        return None
    stem = m.group("stem")
    for fam in sorted(LIB_FAMILIES, key=len, reverse=True):
        if stem == fam or (fam == "libcudnn" and stem.startswith("libcudnn")):
            return stem, m.group("ver")
    return None


def loader_libraries(ctx: ProbeContext, evidence: list[Evidence]) -> list[Library]:
    """CUDA-family libraries in the dynamic loader cache (Linux)."""
    if ctx.os_name != "linux":
        return []
    exe = ctx.runner.which("ldconfig") or ("/sbin/ldconfig" if ctx.path("/sbin/ldconfig").exists() else None)
    if exe is None:
        return []
    res = ctx.runner.run([exe, "-p"], timeout=min(ctx.timeout, 5.0))
    if not res.ok and not res.stdout:
        evidence.append(Evidence("ldconfig -p", ok=False, error=res.error or res.stderr.strip()[:200]))
        return []
    return _libraries(ctx, parse_ldconfig(res.stdout), "ldconfig")


def _libraries(ctx: ProbeContext, pairs: list[tuple[str, str]], source: str) -> list[Library]:
    best: dict[tuple[str, str], Library] = {}
    for soname, path in pairs:
        fam = _family(soname)
        if fam is None:
            continue
        stem, ver = fam
        real = _real_version(ctx, path, stem) or ver
        key = (stem, str(Path(path).parent))
        lib = Library(name=stem, version=as_version(real), path=path, source=source)
        old = best.get(key)
        # Prefer the versioned soname (libcudart.so.13) over the dev symlink (libcudart.so).
        if (
            old is None
            or (old.version is None and lib.version is not None)
            or (".so." in soname and ".so." not in (old.path or ""))
        ):
            best[key] = lib
    return list(best.values())


def _real_version(ctx: ProbeContext, path: str, stem: str) -> str | None:
    """``libcudart.so.13`` → its target ``libcudart.so.13.0.96`` → ``13.0.96``."""
    try:
        real = ctx.path(path).resolve().name
    except OSError:
        return None
    m = re.match(re.escape(stem) + r"\.so\.([\d.]+)$", real)
    return m.group(1) if m else None


def ld_library_path_libraries(ctx: ProbeContext) -> list[Library]:
    """CUDA libraries in LD_LIBRARY_PATH folders: they win over the loader cache, often by accident."""
    if ctx.os_name not in ("linux", "wsl"):
        return []
    out: list[Library] = []
    for d in [p for p in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if p][:20]:
        try:
            names = sorted(os.listdir(ctx.path(d)))
        except OSError:
            continue
        pairs = [(n, f"{d.rstrip('/')}/{n}") for n in names if n.startswith("lib") and ".so" in n]
        out += _libraries(ctx, pairs, "LD_LIBRARY_PATH")
    return out


def pip_wheels(ctx: ProbeContext) -> tuple[list[PipPackage], list[Library]]:
    """``nvidia-*`` wheels (cuDNN, cuBLAS, NCCL, CUDA runtime…) in the target environment."""
    info = pyenv.python_info(ctx)
    dists = pyenv.distributions(info.site_dirs)
    wheels = []
    libs = []
    for name, dist in sorted(dists.items()):
        if not name.startswith("nvidia-"):
            continue
        wheels.append(PipPackage(name, Version(dist.version)))
        base = re.sub(r"-cu\d+$", "", name)
        lib = WHEEL_LIBS.get(base)
        if lib:
            sub = (
                base.removeprefix("nvidia-")
                .replace("cuda-runtime", "cuda_runtime")
                .replace("cuda-nvrtc", "cuda_nvrtc")
            )
            sub = sub.replace("cuda-cupti", "cuda_cupti")
            lib_dir = dist.site_dir / "nvidia" / sub / "lib"
            libs.append(
                Library(
                    name=lib,
                    version=as_version(dist.version),
                    path=str(lib_dir) if lib_dir.is_dir() else None,
                    source=f"pip wheel {name}",
                )
            )
    return wheels, libs
