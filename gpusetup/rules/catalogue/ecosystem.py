"""Failures in what surrounds the frameworks, each with one clear signature in many solved reports (issue 22).

Written from the development split of the solved-report index (resources/solved, tests/rules/test_ecosystem.py has
those threads as fixtures), never from its evaluation split:

- the build cannot find the CUDA compiler (``No CMAKE_CUDA_COMPILER could be found``, ``CUDA_HOME environment
  variable is not set``): cuda-toolkit threads;
- a feature the GPU's architecture lacks (FlashAttention 2 and bfloat16 need compute capability 8.0):
  gpu-feature-unsupported threads;
- PTX newer than the driver (``the provided PTX was compiled with an unsupported toolchain``): driver-too-old threads;
- bitsandbytes without its CUDA library (``CUDA Setup failed despite GPU being available``): bitsandbytes threads;
- nvcc refuses a GPU architecture (``nvcc fatal : Unsupported gpu architecture 'compute_86'``): extension-build and
  cuda-toolkit threads — which way (the toolkit is too old for a new GPU, or the build still lists an architecture
  the toolkit dropped) is computed from the toolkit's compute-capability range in ``resources/compat/cuda_arch.json``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from gpusetup.messages import msg, render
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    build_cuda,
    driver_version,
    grep,
    make,
    min_driver_for_cuda,
    search,
    toolkit_cc_ranges,
    torch_installs,
)
from gpusetup.versions import ComputeCapability, Version

# Fixes and "to be sure" texts are message codes (fix.…, sure.…, both languages). Where the Finding model carries
# them as data (Finding.fix_code, on main since issue 21) they are passed as messages; until then as their English.
_AS_DATA = "fix_code" in {f.name for f in dataclasses.fields(Finding)}


def as_text(message: Message) -> Any:
    """A fix or to-be-sure message as :func:`make` takes it on this model: the message, or its English words."""
    return message if _AS_DATA else render(message)

# --------------------------------------------------------------------------------------------- nvcc missing

_NO_NVCC = re.compile(
    r"No CMAKE_CUDA_COMPILER could be found|CUDA_HOME environment variable is not set|Could not find nvcc|"
    r"Failed to find nvcc|\bnvcc: (?:command )?not found|\bnvcc: no such file or directory|CUDAToolkit_ROOT",
    re.IGNORECASE,
)


@rule("cuda-compiler-not-found")
def nvcc_missing(machine: Machine) -> list[Finding]:
    lines = grep(machine, _NO_NVCC, 3)
    if not lines:
        return []
    cuda = next((build_cuda(fw) for fw in torch_installs(machine) if build_cuda(fw)), None)
    mm = cuda.major_minor if cuda else None
    return [
        make(
            "cuda-compiler-not-found",
            Severity.ERROR,
            "The build cannot find the CUDA compiler (nvcc)",
            "Compiling CUDA code (an extension, llama.cpp, a CMake project) needs nvcc from a CUDA toolkit. The "
            "NVIDIA driver and the CUDA libraries inside framework wheels do not include it, so it is either not "
            "installed or not where the build looks (PATH, CUDA_HOME, CMAKE_CUDA_COMPILER).",
            as_text(msg("fix.cuda-compiler-not-found.version", cuda=f"{mm[0]}.{mm[1]}") if mm
                    else msg("fix.cuda-compiler-not-found")),
            lines,
            to_be_sure=None if mm else as_text(msg("sure.cuda-compiler-not-found")),
        )
    ]


# ----------------------------------------------------------------------------------- feature needs newer GPU

_FEATURE = re.compile(
    r"FlashAttention only supports Ampere GPUs or newer|Bfloat16 is only supported on GPUs with compute capability "
    r"of at least 8\.0|FlashAttention is only supported on (?:Ampere|sm8)",
    re.IGNORECASE,
)


@rule("gpu-feature-needs-newer-gpu")
def feature_needs_ampere(machine: Machine) -> list[Finding]:
    lines = grep(machine, _FEATURE, 3)
    if not lines:
        return []
    bf16 = any("bfloat16" in ln.lower() for ln in lines)
    return [
        make(
            "gpu-feature-needs-newer-gpu",
            Severity.ERROR,
            "The program asks for a feature this GPU's architecture does not have"
            + (" (bfloat16)" if bf16 else " (FlashAttention 2)"),
            "FlashAttention 2 and bfloat16 arithmetic need compute capability 8.0 (Ampere) or newer; on older GPUs "
            "(Turing, Volta, Pascal — T4, V100, RTX 20xx, GTX 10xx) the library refuses them. Nothing in the setup "
            "is broken: the program's settings ask for more than the GPU can do.",
            as_text(msg("fix.gpu-feature-needs-newer-gpu.bf16") if bf16 else msg("fix.gpu-feature-needs-newer-gpu.flash")),
            lines,
        )
    ]


# ---------------------------------------------------------------------------------------- PTX newer than driver

_PTX = re.compile(r"the provided PTX was compiled with an unsupported toolchain|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|"
                  r"cudaErrorUnsupportedPtxVersion", re.IGNORECASE)


@rule("ptx-newer-than-driver")
def ptx_toolchain(machine: Machine) -> list[Finding]:
    lines = grep(machine, _PTX, 3)
    if not lines:
        return []
    dv = driver_version(machine)
    cuda = next((build_cuda(fw) for fw in torch_installs(machine) if build_cuda(fw)), None)
    need = min_driver_for_cuda(cuda) if cuda else None
    return [
        make(
            "ptx-newer-than-driver",
            Severity.ERROR,
            "The program's GPU code (PTX) was made by a newer CUDA than the driver understands",
            "PTX is compiled for the GPU by the driver when the program starts; a driver older than the CUDA toolkit "
            "that produced the PTX refuses it. The program (or an extension in it) was built with a newer CUDA than "
            "the installed driver supports"
            + (f" (driver {dv})" if dv else "") + ".",
            as_text(msg("fix.ptx-newer-than-driver.need", cuda=str(cuda), need=need) if need
                    else msg("fix.ptx-newer-than-driver")),
            lines,
            to_be_sure=None if dv else as_text(msg("sure.ptx-newer-than-driver")),
        )
    ]


# ------------------------------------------------------------------------------------------------ bitsandbytes

_BNB = re.compile(r"CUDA Setup failed despite GPU being available|bitsandbytes was compiled without GPU support|"
                  r"libbitsandbytes_cpu\.so: undefined symbol", re.IGNORECASE)


@rule("bitsandbytes-without-cuda")
def bitsandbytes_cpu(machine: Machine) -> list[Finding]:
    lines = grep(machine, _BNB, 3)
    if not lines:
        return []
    return [
        make(
            "bitsandbytes-without-cuda",
            Severity.ERROR,
            "bitsandbytes runs without its CUDA library",
            "bitsandbytes loads a compiled library for the CUDA version it finds; when it finds none that matches "
            "(old releases shipped few CUDA versions, or only a CPU build on Windows), 8-bit and 4-bit quantisation "
            "on the GPU is unavailable even though the GPU works for PyTorch.",
            as_text(msg("fix.bitsandbytes-without-cuda")),
            lines,
        )
    ]


# ------------------------------------------------------------------------------------ nvcc refuses an architecture

_ARCH_REFUSED = re.compile(
    r"Unsupported gpu architecture '?(?:compute|sm)_(\d{2,3})[a-z]?'?|"
    r"Value '(?:compute|sm)_(\d{2,3})[a-z]?' is not defined for option 'gpu-architecture'",
    re.IGNORECASE,
)
# the nvcc a build ran, when its path names the release ("/usr/local/cuda-8.0/bin/nvcc")
_NVCC_PATH = re.compile(r"cuda-(\d{1,2}\.\d)[/\\]bin[/\\]nvcc", re.IGNORECASE)


def _toolkit_in_use(machine: Machine) -> Version | None:
    """The CUDA release of the nvcc the build used: from its path in the log, else the one toolkit known."""
    m = search(machine, _NVCC_PATH)
    if m:
        return Version(m.group(1))
    versions = {t.version.major_minor for t in machine.cuda.toolkits if t.version and t.version.major_minor}
    if len(versions) == 1:
        return next(t.version for t in machine.cuda.toolkits if t.version and t.version.major_minor)
    return None


def _which_way(cc: ComputeCapability, nvcc: Version | None,
               ranges: list[tuple[Version, Version, ComputeCapability, ComputeCapability]]) -> str:
    """Why nvcc refuses ``cc``: "too-new" (the GPU is newer than the toolkit), "dropped" (the toolkit no longer
    compiles for that old architecture) or "either" (the text does not say which toolkit ran).

    With the toolkit's release known, its range in the data decides. Without it: an architecture every current
    toolkit compiles for can only be refused by an older one (too new for it); one that even the previous major
    release no longer compiled for (Kepler and older, dropped by CUDA 12.0) is an old architecture still listed;
    between the two (Maxwell to Volta, dropped by CUDA 13.0, but unknown to toolkits before them) it is either."""
    if not ranges:
        return "either"
    mm = nvcc.major_minor if nvcc else None
    if mm:
        mine = next((r for r in ranges if r[0].major_minor and r[1].major_minor
                     and r[0].major_minor <= mm <= r[1].major_minor), None)
        if mine is not None:
            return "too-new" if cc > mine[3] else "dropped" if cc < mine[2] else "either"
        if nvcc is not None and nvcc < ranges[0][0]:  # older than the data: it cannot know what came later
            return "too-new" if cc > ranges[0][2] else "either"
        if nvcc is not None and nvcc > ranges[-1][1]:  # newer than the data
            return "dropped" if cc < ranges[-1][2] else "too-new"
    newest_lowest = ranges[-1][2]
    previous_lowest = next((r[2] for r in reversed(ranges) if r[2] < newest_lowest), newest_lowest)
    if cc >= newest_lowest:
        return "too-new"
    return "dropped" if cc < previous_lowest else "either"


@rule("nvcc-arch-unsupported")
def nvcc_arch_refused(machine: Machine) -> list[Finding]:
    lines = grep(machine, _ARCH_REFUSED, 3)
    if not lines:
        return []
    m = _ARCH_REFUSED.search(lines[0])
    cc = ComputeCapability.parse(next(g for g in m.groups() if g)) if m else None
    if cc is None:
        return []
    ranges = toolkit_cc_ranges()
    knows = [r for r in ranges if r[2] <= cc <= r[3]]
    first = str(knows[0][0]) if knows else None  # the oldest CUDA in the data that compiles for it
    last = str(knows[-1][1]) if knows else None  # the newest that still does
    nvcc = _toolkit_in_use(machine)
    arch = f"compute_{cc.major}{cc.minor}"
    way = _which_way(cc, nvcc, ranges)
    newest = str(ranges[-1][1]) if ranges else None
    sm = f"sm_{cc.major}{cc.minor}"
    if way == "too-new" and (last is None or last == newest):
        fix = msg("fix.nvcc-arch-unsupported.too-new", cc=str(cc), first=first or "?")
    elif way == "too-new":
        fix = msg("fix.nvcc-arch-unsupported.too-new-span", cc=str(cc), first=first, last=last)
    elif way == "dropped":
        fix = msg("fix.nvcc-arch-unsupported.dropped", arch=arch, sm=sm, cc=str(cc)) if last is None else \
            msg("fix.nvcc-arch-unsupported.dropped-since", arch=arch, sm=sm, cc=str(cc), last=last)
    else:
        fix = msg("fix.nvcc-arch-unsupported.either", arch=arch, first=first or "?", last=last or "?")
    release = nvcc.major_minor if nvcc else None
    known = f" (nvcc from CUDA {release[0]}.{release[1]})" if release else ""
    span = f"CUDA {first} and newer" if last == newest else f"CUDA {first} to {last}"
    meaning = {
        "too-new": f"The build asks nvcc to compile for {arch} (compute capability {cc}), a GPU architecture newer "
                   f"than this CUDA toolkit{known} knows; {span} compile for it. Often a newer toolkit is installed, "
                   "but the build picks up an older nvcc first.",
        "dropped": f"The build still lists {arch} (compute capability {cc}), an old GPU architecture this CUDA "
                   f"toolkit{known} no longer compiles for"
                   + (f" (CUDA {last} was the last that did)." if last else " (no CUDA release since 10.0 does).")
                   + " The list is in the project's setup.py, CMakeLists.txt or Makefile, or in TORCH_CUDA_ARCH_LIST.",
        "either": f"nvcc does not compile for {arch} (compute capability {cc}); CUDA {first} to {last} do. Either "
                  "the toolkit the build uses is too old to know this architecture, or newer than CUDA "
                  f"{last}, which was the last to compile for it.",
    }[way]
    return [
        make(
            "nvcc-arch-unsupported",
            Severity.ERROR,
            f"nvcc cannot compile for GPU architecture {arch}",
            meaning,
            as_text(fix),
            lines,
            to_be_sure=as_text(msg("sure.nvcc-arch-unsupported")) if way == "either" else None,
            params={"arch": arch, "cc": str(cc)},
        )
    ]
