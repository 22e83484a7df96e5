"""Deep-learning frameworks in the target Python (this one, or ``--python PATH``).

Default: read only package metadata and small version files (``torch/version.py``, TensorFlow's
``build_info.py``, onnxruntime's ``version_info.py``) — no import, so it costs milliseconds and a broken
install cannot crash or hang the report. With ``ctx.deep``, each framework is also imported in its own
subprocess with a timeout, which tells whether the GPU is usable (``torch.cuda.is_available()`` and friends).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpusetup.model import Evidence, FrameworkInstall, PipPackage, PythonEnv
from gpusetup.probe import pyenv
from gpusetup.versions import Version, as_version

if TYPE_CHECKING:
    from gpusetup.model import Machine
    from gpusetup.probe import ProbeContext

# Distribution names we report (normalised), in report order. Patterns catch the CUDA-suffixed variants.
FRAMEWORK_PATTERNS: tuple[tuple[str, str], ...] = (
    ("torch", r"torch"),
    ("tensorflow", r"tensorflow|tensorflow-(cpu|gpu|intel|macos|metal)|tf-nightly"),
    ("jax", r"jax"),
    ("jaxlib", r"jaxlib"),
    ("jax-plugin", r"jax-cuda\d+-(plugin|pjrt)|jax-rocm\d*-(plugin|pjrt)|jax-metal"),
    ("cupy", r"cupy|cupy-cuda\d+x?|cupy-rocm-[\d-]+"),
    ("onnxruntime", r"onnxruntime|onnxruntime-(gpu|directml|openvino|training)"),
)

MARK = "@@GPUSETUP@@"

# One small script per framework for the deep probe; each prints MARK + JSON on its last line.
_DEEP = {
    "torch": """
import torch
o['version'] = torch.__version__
o['build_cuda'] = torch.version.cuda
o['build_rocm'] = getattr(torch.version, 'hip', None)
o['gpu_available'] = bool(torch.cuda.is_available())
o['device_count'] = torch.cuda.device_count() if o['gpu_available'] else 0
o['arch_list'] = list(torch.cuda.get_arch_list()) if hasattr(torch.cuda, 'get_arch_list') else []
o['cudnn'] = str(torch.backends.cudnn.version()) if torch.backends.cudnn.is_available() else None
o['devices'] = [torch.cuda.get_device_name(i) for i in range(o['device_count'])]
""",
    "tensorflow": """
import tensorflow as tf
o['version'] = tf.__version__
b = tf.sysconfig.get_build_info()
o['build_cuda'] = b.get('cuda_version') if b.get('is_cuda_build') else None
o['build_rocm'] = b.get('rocm_version') if b.get('is_rocm_build') else None
o['cudnn'] = b.get('cudnn_version')
g = tf.config.list_physical_devices('GPU')
o['gpu_available'] = bool(g)
o['device_count'] = len(g)
o['devices'] = [d.name for d in g]
""",
    "jax": """
import jax
o['version'] = jax.__version__
d = jax.devices()
g = [x for x in d if x.platform in ('gpu', 'cuda', 'rocm', 'METAL', 'metal')]
o['gpu_available'] = bool(g)
o['device_count'] = len(g)
o['devices'] = [str(x) for x in g]
""",
    "cupy": """
import cupy
o['version'] = cupy.__version__
v = cupy.cuda.runtime.runtimeGetVersion()
o['build_cuda'] = '%d.%d' % (v // 1000, (v % 1000) // 10)
n = cupy.cuda.runtime.getDeviceCount()
o['gpu_available'] = n > 0
o['device_count'] = n
""",
    "onnxruntime": """
import onnxruntime as ort
o['version'] = ort.__version__
p = ort.get_available_providers()
o['gpu_available'] = any(x in p for x in ('CUDAExecutionProvider', 'ROCMExecutionProvider', 'TensorrtExecutionProvider', 'DmlExecutionProvider'))
o['devices'] = p
""",
}
_DEEP_WRAPPER = """import json, sys
o = {}
try:
@BODY@
except BaseException as e:
    o['error'] = type(e).__name__ + ': ' + str(e)[:500]
print(@MARK@ + json.dumps(o, default=str))
"""


def probe(ctx: ProbeContext, machine: Machine) -> None:
    info = pyenv.python_info(ctx)
    env = PythonEnv(
        executable=info.executable, version=as_version(info.version), is_venv=info.is_venv, is_conda=info.is_conda
    )
    if info.error:
        env.evidence.append(Evidence(f"{info.executable} -c sys.path", ok=False, error=info.error))
        machine.python_envs.append(env)
        return
    dists = pyenv.distributions(info.site_dirs)
    for family, pattern in FRAMEWORK_PATTERNS:
        for name, dist in sorted(dists.items()):
            if re.fullmatch(pattern, name):
                env.frameworks.append(from_metadata(family, dist))
    env.companions = companions(dists)
    if info.is_conda and info.prefix:
        _conda_builds(Path(info.prefix), env.frameworks)
    env.evidence.append(Evidence("package metadata (*.dist-info)", detail=", ".join(info.site_dirs[-3:])))
    if ctx.deep and pyenv.target_python(ctx):
        for fw in env.frameworks:
            family = _family_of(fw.name)
            if family in _DEEP:
                deep_probe(ctx, pyenv.target_python(ctx), family, fw)
    machine.python_envs.append(env)


def _family_of(name: str) -> str:
    for family, pattern in FRAMEWORK_PATTERNS:
        if re.fullmatch(pattern, name):
            return family
    return name


def from_metadata(family: str, dist: pyenv.Dist) -> FrameworkInstall:
    """What the files say, without importing: version, local build tag, CUDA/ROCm it was built for."""
    fw = FrameworkInstall(name=dist.name, version=as_version(dist.version), location=str(dist.site_dir))
    fw.installer = dist.installer
    fw.build = dist.local_tag
    fw.installed_at = installed_at(dist.meta_dir)
    fw.direct_url = direct_url(dist.meta_dir)
    fw.cudnn_requirement = cudnn_requirement(dist.meta_dir)
    tag = (dist.local_tag or "").lower()
    site = dist.site_dir
    if family == "torch":
        text = _read(site / "torch" / "version.py")
        fw.build_cuda = as_version(_py_assign(text, "cuda") or _tag_cuda(tag))
        fw.build_rocm = as_version(_py_assign(text, "hip") or (_dotted(tag[4:]) if tag.startswith("rocm") else None))
    elif family == "tensorflow":
        text = _read(site / "tensorflow" / "python" / "platform" / "build_info.py")
        fw.build_cuda = as_version(_dict_value(text, "cuda_version"))
        fw.cudnn = as_version(_dict_value(text, "cudnn_version"))
        if fw.build_cuda is None and re.search(r"'is_rocm_build':\s*True", text):
            fw.build_rocm = as_version(_dict_value(text, "rocm_version") or "yes")
    elif family == "jaxlib":
        m = re.match(r"cuda(\d+)(?:\.cudnn(\d+))?", tag)
        if m:
            fw.build_cuda = as_version(_dotted(m.group(1)))
            fw.cudnn = as_version(_dotted(m.group(2)) if m.group(2) else None)
    elif family == "jax-plugin":
        m = re.search(r"cuda(\d+)", dist.name)
        fw.build_cuda = as_version(m.group(1) if m else None)
        m = re.search(r"rocm(\d+)", dist.name)
        fw.build_rocm = as_version(m.group(1) if m else None)
    elif family == "cupy":
        m = re.fullmatch(r"cupy-cuda(\d+)(x?)", dist.name)
        if m:
            fw.build_cuda = as_version(m.group(1) if m.group(2) else _dotted(m.group(1)))
        m = re.fullmatch(r"cupy-rocm-([\d-]+)", dist.name)
        if m:
            fw.build_rocm = as_version(m.group(1).replace("-", "."))
    elif family == "onnxruntime":
        text = _read(site / "onnxruntime" / "capi" / "version_info.py")
        fw.build_cuda = as_version(_py_assign(text, "cuda_version"))
        fw.cudnn = as_version(_py_assign(text, "cudnn_version"))
    return fw


def deep_probe(ctx: ProbeContext, python: str, family: str, fw: FrameworkInstall) -> None:
    """Import one framework in a subprocess with a timeout and merge what it says into ``fw``."""
    body = "\n".join("    " + line for line in _DEEP[family].strip().splitlines())
    script = _DEEP_WRAPPER.replace("@BODY@", body).replace("@MARK@", repr(MARK))
    res = ctx.runner.run([python, "-c", script], timeout=max(ctx.timeout * 2, 1.0))
    fw.probed = True
    data = parse_deep_output(res.stdout)
    if data is None:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]
        fw.error = res.error or f"import failed (exit code {res.returncode}): {tail[0][:300]}"
        return
    if data.get("error"):
        fw.error = str(data["error"])
    for key in ("version", "build_cuda", "build_rocm", "cudnn"):
        v = data.get(key)
        if isinstance(v, (str, int, float)) and v != "":
            setattr(fw, key, str(v))
    if isinstance(data.get("gpu_available"), bool):
        fw.gpu_available = data["gpu_available"]
    if isinstance(data.get("device_count"), int):
        fw.device_count = data["device_count"]
    for key in ("arch_list", "devices"):
        v = data.get(key)
        if isinstance(v, list):
            setattr(fw, key, [str(x) for x in v][:64])


def parse_deep_output(stdout: str) -> dict[str, Any] | None:
    """The JSON after the last MARK line (frameworks print their own noise first)."""
    for line in reversed((stdout or "").splitlines()):
        if line.startswith(MARK):
            try:
                data = json.loads(line[len(MARK) :])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


# Packages built together with torch: when torch is "+cpu" but these still carry "+cu121", torch was replaced.
COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio", "torchtext", "xformers")

_CUDNN_REQ = re.compile(r"^Requires-Dist:\s*(nvidia-cudnn-cu\d+)\s*\(?\s*([^;)\s][^;)]*)?\)?\s*(;.*)?$",
                        re.IGNORECASE | re.M)


def companions(dists: dict[str, pyenv.Dist]) -> list[PipPackage]:
    """torchvision/torchaudio…: version (with local tag) and when pip installed them."""
    return [PipPackage(name, Version(d.version), installed_at(d.meta_dir)) for name, d in sorted(dists.items())
            if name in COMPANIONS]


def installed_at(meta_dir: Path) -> str | None:
    """When pip wrote this dist-info (its RECORD file, else the folder), as UTC ISO-8601; None when unreadable."""
    for p in (meta_dir / "RECORD", meta_dir):
        try:
            ts = p.stat().st_mtime
        except OSError:
            continue
        return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def direct_url(meta_dir: Path) -> str | None:
    """PEP 610 ``direct_url.json``: present when installed from a URL/file/VCS, absent for index installs."""
    try:
        data = json.loads((meta_dir / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) and url else None


def cudnn_requirement(meta_dir: Path) -> str | None:
    """The wheel's Requires-Dist on a pip cuDNN (``nvidia-cudnn-cu12==9.1.0.70``), Linux markers or the
    ``and-cuda``/``cuda12`` extras included; None when the wheel names none (CPU builds, Windows-only)."""
    text = _read(meta_dir / "METADATA", 262144)
    for m in _CUDNN_REQ.finditer(text):
        marker = (m.group(3) or "").lower()
        if "platform_system == \"windows\"" in marker or "sys_platform == \"win32\"" in marker:
            continue
        spec = (m.group(2) or "").strip().replace(" ", "")
        return f"{m.group(1).lower()}{spec}"
    return None


# conda package name → the pip distribution name it installs
_CONDA_NAMES = {
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-base": "tensorflow",
    "jaxlib": "jaxlib",
    "cupy": "cupy",
    "onnxruntime": "onnxruntime",
}


def _conda_builds(prefix: Path, frameworks: list[FrameworkInstall]) -> None:
    """Conda build strings (``py3.11_cuda12.1_cudnn8.9.2_0``) tell the CUDA variant of conda packages."""
    try:
        names = os.listdir(prefix / "conda-meta")
    except OSError:
        return
    by_name = {f.name: f for f in frameworks}
    for n in names:
        parts = n.removesuffix(".json").rsplit("-", 2)
        if len(parts) != 3 or parts[0] not in _CONDA_NAMES:
            continue
        fw = by_name.get(_CONDA_NAMES[parts[0]])
        if fw is None:
            continue
        fw.build = parts[2]
        fw.installer = fw.installer or "conda"
        m = re.search(r"cuda(\d+)\.?(\d+)?", parts[2])
        if m and fw.build_cuda is None:
            fw.build_cuda = as_version(f"{m.group(1)}.{m.group(2)}" if m.group(2) else _dotted(m.group(1)))


# ---------------------------------------------------------------------------------------- helpers


def _read(p: Path, limit: int = 65536) -> str:
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""


def _py_assign(text: str, name: str) -> str | None:
    """``cuda: Optional[str] = '12.6'`` / ``cuda = "12.6"`` → ``12.6``; ``= None`` → None."""
    m = re.search(rf"^{name}\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return m.group(1) if m else None


def _dict_value(text: str, key: str) -> str | None:
    m = re.search(rf"['\"]{key}['\"]\s*:\s*['\"]([^'\"]+)['\"]", text)
    return m.group(1) if m else None


def _tag_cuda(tag: str) -> str | None:
    m = re.fullmatch(r"cu(\d+)", tag)
    return _dotted(m.group(1)) if m else None


def _dotted(digits: str) -> str | None:
    """``126`` → ``12.6``, ``118`` → ``11.8``, ``92`` → ``9.2``, ``12`` → ``12`` (major only)."""
    if not digits or not digits.isdigit():
        return digits or None
    if len(digits) == 3:
        return f"{digits[:2]}.{digits[2]}"
    if len(digits) == 2 and digits[0] in "789":
        return f"{digits[0]}.{digits[1]}"
    return digits
