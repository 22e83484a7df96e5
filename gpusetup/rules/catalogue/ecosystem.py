"""Failures in what surrounds the frameworks, each with one clear signature in many solved reports (issue 22).

Written from the development split of the solved-report index (resources/solved, tests/rules/test_ecosystem.py has
those threads as fixtures), never from its evaluation split:

- the build cannot find the CUDA compiler (``No CMAKE_CUDA_COMPILER could be found``, ``CUDA_HOME environment
  variable is not set``): cuda-toolkit threads;
- a feature the GPU's architecture lacks (FlashAttention 2 and bfloat16 need compute capability 8.0):
  gpu-feature-unsupported threads;
- PTX newer than the driver (``the provided PTX was compiled with an unsupported toolchain``): driver-too-old threads;
- bitsandbytes without its CUDA library (``CUDA Setup failed despite GPU being available``): bitsandbytes threads.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from gpusetup.messages import msg, render
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import build_cuda, driver_version, grep, make, min_driver_for_cuda, torch_installs

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
