"""Facts people write in their own words: "GPU: RTX 5080", "driver 550.54.14", "torch 2.3.1+cu121", "Xid 79 twice
this week, then Xid 154" — not only what tools print in their fixed formats (the other recognisers).

Every fact found here is kept with the line it came from (:class:`~gpusetup.analyze.recognisers.FactLine`), so the
report can show why gpusetup believes it. A GPU model is only taken when it is a real NVIDIA marketing name (one of
the shipped pci.ids names, in any case and spacing): its chip and compute capability are then filled by the one
:func:`gpusetup.enrich.enrich` step, like a GPU any probe found. Facts the structured recognisers already read
(an nvidia-smi table, collect_env) are never replaced: these run after them and fill only what is still unknown.

Unrelated numbers must not become facts: a version needs its name next to it ("driver", "torch", "release"), a
short data-centre model name (T4, L4, A10) needs a GPU word on its line, and an Xid needs the word "Xid".
"""

from __future__ import annotations

import re
from functools import cache

from gpusetup import pcidb
from gpusetup.analyze.recognisers import Extraction, recogniser
from gpusetup.model import Toolkit
from gpusetup.rules.catalogue.hardware import xid_mentions
from gpusetup.versions import Version, as_version

# ------------------------------------------------------------------------------------------------ GPU models

_BRACKET = re.compile(r"^(\S+)\s+\[(.+)\]$")
_DROP = re.compile(r"nvidia|geforce|tesla|[^a-z0-9]")


def model_key(name: str) -> str:
    """A marketing name as a lookup key: lower case, without "NVIDIA", "GeForce", "Tesla", spaces and dashes
    ("NVIDIA GeForce RTX 5080" → "rtx5080", "rtx-5080" → "rtx5080", "Tesla T4" → "t4")."""
    return _DROP.sub("", name.lower())


@cache
def marketing_names() -> dict[str, dict[str, set[str]]]:
    """key → {pci.ids marketing name: chips it is listed for}, from the shipped pci.ids (NVIDIA only)."""
    out: dict[str, dict[str, set[str]]] = {}
    for dev in pcidb.pci_ids().devices("10de").values():
        m = _BRACKET.match(dev)
        if not m:
            continue
        chip = re.sub(r"(GL|GLM|M|BM|L)$", "", m.group(1))
        for name in (n.strip() for n in m.group(2).split("/")):
            key = model_key(name)
            if len(key) >= 2 and any(c.isdigit() for c in key) or key in ("titan", "titanv", "titanrtx", "titanxp"):
                out.setdefault(key, {}).setdefault(name, set()).add(chip)
    return out


# what may follow a model in a pci.ids name without making it another model: form factor and memory only
_FORM_FACTOR = re.compile(r"(?:sxm\d?|pcie|hbm\d?e?|nvl|dgxs?|fhhl|\d+gb|gen\d)+")


def resolve_model(mention: str) -> tuple[str | None, str | None]:
    """(pci.ids name, chip) for a model as a person wrote it, (None, None) when it is no known NVIDIA GPU.

    An exact name ("rtx 5080" → "GeForce RTX 5080") gives the name and lets enrich resolve it; a shorter one that
    stands for variants of a single chip ("A100" → A100 SXM4 40GB, A100 PCIe 80GB… all GA100) gives the chip."""
    key = model_key(mention)
    names = marketing_names()
    if key in names:
        return min(names[key], key=len), None
    chips: set[str] = set()
    found = False
    for k, by_name in names.items():
        if k.startswith(key) and _FORM_FACTOR.fullmatch(k[len(key):]):
            found = True
            for cs in by_name.values():
                chips |= cs
    if found and len(chips) == 1:
        return None, next(iter(chips))
    return None, None


_MODEL = re.compile(
    r"(?<![\w.-])(?:nvidia[ _-]?)?(?:geforce[ _-]?)?(?:"
    r"(?:rtx|gtx|gt|mx)[ _-]?\d{3,4}(?:[ _-]?(?:ti[ _-]?super|ti|super|d))?(?:[ _-]?(?:laptop(?: gpu)?|mobile|max-q))?|"
    r"(?:gtx[ _-]?)?titan(?:[ _-]?(?:rtx|xp|x|v|z|black))?|"
    r"quadro[ _-]?(?:rtx[ _-]?)?[a-z]{0,2}\d{3,5}|"
    r"rtx[ _-]?a\d{3,4}|rtx[ _-]?\d{4}[ _-]?ada|"
    r"(?:tesla[ _-]?)?(?:gh200|gb200|b200|b100|h200|h100|h800|h20|a100|a800|a40|a30|a16|a10g?|a2|l40s?|l20|l4|t4|"
    r"v100s?|p100|p40|p4|k80|k40m?|k20m?|m40|m60|m10)"
    r")(?![\w.-]*\d)(?!\w)",
    re.IGNORECASE,
)
# Short data-centre names that are also ordinary words or codes: only with a GPU word on the same line.
_SHORT = {"a2", "a10", "a10g", "a16", "a30", "a40", "h20", "l4", "l20", "t4", "p4", "p40", "m10", "m40", "m60",
          "k80", "k40", "k40m", "k20m"}
_GPU_WORD = re.compile(r"\b(?:nvidia|tesla|gpus?|cuda|graphics card|card|instance|device)\b", re.IGNORECASE)
_GPU_LABEL = re.compile(r"^\s*(?:[-*>#]+\s*)?(?:\*\*)?(?:gpu|graphics card|video card|gpu model|gpu type|显卡)s?"
                        r"(?:\*\*)?\s*[:：=]", re.IGNORECASE)
_JETSON = re.compile(r"\bjetson[ _-]?(?:agx[ _-]?|orin[ _-]?)?(orin|xavier|nano|tx2|tx1)\b", re.IGNORECASE)


def _tidy(mention: str) -> str:
    s = re.sub(r"[ _-]+", " ", mention.strip())
    return re.sub(r"(?i)\b(rtx|gtx|gt|mx|ti)\b", lambda m: m.group(1).upper() if m.group(1).lower() != "ti"
                  else "Ti", s)


@recogniser("prose-gpu", "GPU models named in the text")
def prose_gpu(text: str, ex: Extraction) -> bool:
    """GPU models anywhere in prose, labels ("GPU: RTX 5080") and tables, in any case and spacing. Taken only when
    no tool output in this input listed the GPUs (those are exact); each distinct model becomes one GPU."""
    low = text.lower()
    found = False
    if "jetson" in low:
        for ln in text.splitlines():
            m = _JETSON.search(ln)
            if m:
                ex.machine.system.is_jetson = True
                ex.fact("jetson", f"Jetson {m.group(1).capitalize()}", ln)
                found = True
                break
    if ex.machine.gpus:
        return found
    seen: dict[str, tuple[str | None, str | None, str, str]] = {}
    labelled: list[str] = []
    for ln in text.splitlines():
        if len(ln) > 600:
            continue
        for m in _MODEL.finditer(ln):
            mention = m.group(0)
            key = model_key(mention)
            if key in _SHORT and not _GPU_WORD.search(ln):
                continue
            if key in seen:
                continue
            name, chip = resolve_model(mention)
            if name is None and chip is None:
                continue
            seen[key] = (name, chip, mention, ln)
            if _GPU_LABEL.search(ln):
                labelled.append(key)
    keys = labelled or list(seen)  # a "GPU:" line says which GPU this machine has; else every model named
    for n, key in enumerate(keys):
        name, chip, mention, ln = seen[key]
        shown = f"NVIDIA {name}" if name else f"NVIDIA {_tidy(mention)}"
        g = ex.gpu(n, shown)
        if chip and not g.chip:
            g.chip = chip
        ex.fact("gpu", shown, ln)
        found = True
    return found


# ----------------------------------------------------------------------------------------------------- driver

_DRIVER = re.compile(
    r"\b(?:nvidia[ _-]?)?(?:display[ _-]?)?driver(?:[ _-]?version)?s?\b[^\d\n]{0,24}?(?<![\d.])"
    r"r?(\d{3}\.\d{2,3}(?:\.\d{1,3})?)(?![\d.]*\d)|"
    r"(?<![\d.])(\d{3}\.\d{2,3}(?:\.\d{1,3})?)(?![\d.])[ _-]?(?:nvidia[ _-]?)?driver\b",
    re.IGNORECASE,
)


@recogniser("prose-driver", "driver version named in the text")
def prose_driver(text: str, ex: Extraction) -> bool:
    if "driver" not in text.lower():
        return False
    for ln in text.splitlines():
        if "driver" not in ln.lower() or len(ln) > 600:
            continue
        m = _DRIVER.search(ln)
        if not m:
            continue
        value = m.group(1) or m.group(2)
        major = int(value.split(".")[0])
        if not 180 <= major <= 999:
            continue
        known = ex.machine.driver.version or next((r.value for r in ex.machine.driver.versions if r.value), None)
        if known is None:
            ex.driver(value, "the text")
        ex.fact("driver", value, ln)
        return True
    return False


# ------------------------------------------------------------------------------------------------- frameworks

_FW = r"(torch|pytorch|tensorflow(?:-gpu)?|jax|jaxlib|paddlepaddle(?:-gpu)?|cupy(?:-cuda\w+)?|onnxruntime(?:-gpu)?)"
_VER = r"v?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.dev|\.post)\d+)?(?:\+[\w.]+)?)"
_FW_NAMES = {"torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow", "tensorflow-gpu": "tensorflow",
             "jax": "jax", "jaxlib": "jaxlib", "paddlepaddle": "paddlepaddle", "paddlepaddle-gpu": "paddlepaddle",
             "onnxruntime": "onnxruntime", "onnxruntime-gpu": "onnxruntime"}
_FW_PATTERNS = [
    # pip freeze / requirements / pip show: torch==2.3.1+cu121
    re.compile(rf"(?<![\w-]){_FW}\s*==\s*{_VER}", re.IGNORECASE),
    # a list line: "torch 2.3.1+cu121" (pip list), "- PyTorch: 2.3.1", "PyTorch version: 2.3.1"
    re.compile(rf"^\s*(?:[-*>|]\s*)?(?:\*\*)?{_FW}(?:\s+version)?(?:\*\*)?\s*(?:[:=|]\s*|\s+){_VER}(?!\S*/)",
               re.IGNORECASE | re.MULTILINE),
    # anywhere with the word version or a build tag: "torch version is 2.0.1", "PyTorch 2.3.1+cu121"
    re.compile(rf"(?<![\w-]){_FW}(?:\s+version)\s*(?:is|:|=)?\s*{_VER}", re.IGNORECASE),
    re.compile(rf"(?<![\w-]){_FW}\s*(?:[:=]\s*)?v?(\d+\.\d+\.\d+\+(?:cu\d+|cpu|rocm[\d.]+))", re.IGNORECASE),
    # a wheel file name or URL: torch-2.3.1+cu121-cp310-cp310-linux_x86_64.whl (the + may be written %2B)
    re.compile(r"(?<![\w-])(torch|tensorflow|jaxlib|paddlepaddle_gpu)-(\d+\.\d+\.\d+(?:(?:\+|%2B)[\w.]+)?)-cp\d+",
               re.IGNORECASE),
]
# print(torch.__version__) and its answer on the next line, or on the same one
_DUNDER = re.compile(r"(torch|tensorflow|tf|jax|jaxlib)\.__version__\)?\s*(?:[:=]|->|→)?\s*['\"]?"
                     r"(\d+\.\d+(?:\.\d+)?(?:\+[\w.]+)?)?", re.IGNORECASE)
_ANSWER = re.compile(r"^\s*(?:>>>\s*|Out\[\d+\]:\s*)?['\"]?(\d+\.\d+(?:\.\d+)?(?:\+[\w.]+)?)['\"]?\s*$")
_TORCH_CUDA = re.compile(r"torch\.version\.cuda\)?\s*(?:[:=]|->)?\s*['\"]?(\d+\.\d+)?", re.IGNORECASE)
_CUDA_BUILD = re.compile(r"CUDA used to build PyTorch\s*:\s*(\d+\.\d+)", re.IGNORECASE)


def _set_framework(ex: Extraction, name: str, version: str, line: str) -> bool:
    key = _FW_NAMES.get(name.lower(), "tensorflow" if name.lower() == "tf" else name.lower())
    if key.startswith("paddlepaddle_gpu"):
        key = "paddlepaddle"
    if key.startswith("cupy"):
        key = "cupy"
    v = version.replace("%2B", "+").replace("%2b", "+")
    fw = ex.framework(key)
    if fw.version is None:
        fw.version = as_version(v)
    elif fw.version != Version(v) and "+" in v and "+" not in str(fw.version) \
            and str(fw.version) == v.split("+", 1)[0]:
        fw.version = as_version(v)  # the same release, now with its build tag
    ex.fact("framework", f"{key} {v}", line)
    return True


@recogniser("prose-frameworks", "framework builds named in the text")
def prose_frameworks(text: str, ex: Extraction) -> bool:
    low = text.lower()
    if not any(w in low for w in ("torch", "tensorflow", "jax", "paddle", "cupy", "onnxruntime", "__version__")):
        return False
    found = False
    lines = text.splitlines()
    done: set[str] = set()
    for n, ln in enumerate(lines):
        if len(ln) > 600:
            continue
        for rx in _FW_PATTERNS:
            for m in rx.finditer(ln):
                name = _FW_NAMES.get(m.group(1).lower(), m.group(1).lower())
                if name in done:
                    continue
                done.add(name)
                found = _set_framework(ex, m.group(1), m.group(2), ln) or found
        if "__version__" in ln:
            d = _DUNDER.search(ln)
            if d:
                answer = d.group(2)
                where = ln
                if not answer and n + 1 < len(lines):
                    a = _ANSWER.match(lines[n + 1])
                    answer, where = (a.group(1), f"{ln.strip()} → {lines[n + 1].strip()}") if a else (None, ln)
                name = "torch" if d.group(1).lower() == "torch" else d.group(1).lower()
                if answer and _FW_NAMES.get(name, name) not in done:
                    done.add(_FW_NAMES.get(name, name))
                    found = _set_framework(ex, name, answer, where) or found
        if "torch.version.cuda" in ln or "CUDA used to build PyTorch" in ln:
            t = _TORCH_CUDA.search(ln) or _CUDA_BUILD.search(ln)
            value = t.group(1) if t else None
            where = ln
            if not value and n + 1 < len(lines):
                a = _ANSWER.match(lines[n + 1])
                value, where = (a.group(1), f"{ln.strip()} → {lines[n + 1].strip()}") if a else (None, ln)
            if value and re.fullmatch(r"\d+\.\d+", value):
                torch = ex.framework("torch")
                if torch.build_cuda is None:
                    torch.build_cuda = Version(value)
                ex.fact("framework-cuda", f"torch built with CUDA {value}", where)
                found = True
    return found


# ------------------------------------------------------------------------------------------ toolkit and CUDA

_NVCC = re.compile(r"Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_CUDA_NEAR = re.compile(r"\bCUDA(?:[ _-]?(?:version|toolkit|driver|runtime))?\s*[:=]?\s*v?(\d{1,2}\.\d)(?![\d.]*\d)",
                        re.IGNORECASE)
_DRIVER_WORD = re.compile(r"\bdriver\b|nvidia-smi", re.IGNORECASE)
_TOOLKIT_WORD = re.compile(r"\b(?:toolkit|nvcc|cudatoolkit|cuda_home|installed)\b", re.IGNORECASE)
_ARCH = re.compile(r"\b(?:compute|sm)_(\d{2,3}[a-z]?)\b")
_BUILD_WORDS = ("nvcc", "gencode", "arch=", "-arch", "torch_cuda_arch_list", "cuda_architectures",
                "unsupported gpu architecture")


@recogniser("prose-toolkit", "CUDA toolkit, CUDA version and build targets named in the text")
def prose_toolkit(text: str, ex: Extraction) -> bool:
    found = False
    m = _NVCC.search(text) if "compilation tools" in text else None
    if m:
        line = next((ln for ln in text.splitlines() if "compilation tools" in ln), m.group(0))
        if not any(t.version == Version(m.group(2)) for t in ex.machine.cuda.toolkits):
            ex.machine.cuda.toolkits.append(Toolkit(path="(nvcc on PATH)", version=Version(m.group(2)),
                                                    source=f"nvcc --version ({ex.name})"))
        ex.fact("toolkit", f"nvcc {m.group(2)}", line)
        found = True
    if "cuda" not in text.lower() and "sm_" not in text and "compute_" not in text:
        return found
    for ln in text.splitlines():
        if len(ln) > 600:
            continue
        low = ln.lower()
        if "cuda" in low and "compilation tools" not in ln:
            for c in _CUDA_NEAR.finditer(ln):
                window = ln[max(0, c.start() - 40): c.end() + 40]
                if _DRIVER_WORD.search(window):
                    if ex.machine.driver.cuda_driver_version is None:
                        ex.machine.driver.cuda_driver_version = Version(c.group(1))
                        ex.machine.driver.cuda_driver_version_source = f"the text ({ex.name})"
                    ex.fact("driver-cuda", c.group(1), ln)
                    found = True
                elif _TOOLKIT_WORD.search(window):
                    if not ex.machine.cuda.toolkits:
                        ex.machine.cuda.toolkits.append(Toolkit(path="(named in the text)", version=Version(c.group(1)),
                                                                source=f"the text ({ex.name})"))
                    ex.fact("toolkit", f"CUDA {c.group(1)}", ln)
                    found = True
        if ("sm_" in low or "compute_" in low) and any(w in low for w in _BUILD_WORDS):
            arches = sorted({a for a in _ARCH.findall(ln)}, key=lambda a: (len(a), a))
            if arches:
                ex.fact("build-arch", " ".join(f"sm_{a}" for a in arches), ln)
                found = True
    return found


# -------------------------------------------------------------------------------------------------------- Xid

@recogniser("prose-xid", "Xid numbers named in the text")
def prose_xid(text: str, ex: Extraction) -> bool:
    """Xid numbers as people report them: "Xid 79 twice this week, then Xid 154", "Xids 13, 31", a table row
    "| Xid | 79 |". The kernel's own "NVRM: Xid (PCI:…): 79" lines are the kernel log's (other recognisers)."""
    if "xid" not in text.lower():
        return False
    found = False
    for ln in text.splitlines():
        if "xid" not in ln.lower() or len(ln) > 600:
            continue
        for num in xid_mentions(ln):
            ex.fact("xid", str(num), ln)
            found = True
    return found
