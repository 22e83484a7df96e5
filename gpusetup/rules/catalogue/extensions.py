"""Compiled extensions built for another PyTorch (the solved index's ``extension-abi`` family).

Packages with compiled parts (flash-attn, xformers, vLLM, torchvision, torchaudio, mmcv, DeepSpeed ops…) link
against one PyTorch build. Installed beside a different torch, they fail at import with a linker message naming a
PyTorch symbol, or with the package's own version check. The signature is clear and the fix is always the same:
the extension's build for the installed torch. The rule was written from the ``extension-abi`` threads of the
development split of resources/solved (tests/rules/test_extension_abi.py), never from the evaluation split.
"""

from __future__ import annotations

import re

from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import grep, make
from gpusetup.rules.catalogue.ecosystem import as_text

# a PyTorch C++ symbol (namespaces c10, at, torch, caffe2 in their mangled form) the loader cannot find
_SYMBOL = re.compile(r"undefined symbol:?\s*(_ZN?K?(?:3c10|2at|5torch|6caffe2)\w*)|"
                     r"Symbol not found:\s*(_?_ZN?K?(?:3c10|2at|5torch)\w*|_torch_\w+)")  # the second: macOS dyld
_LIBRARY = re.compile(r"([\w.+-]+\.(?:so|pyd))\b[^\n]{0,40}?undefined symbol")
_PACKAGE_CHECK = re.compile(
    # torchvision's check, and the same one in PyG's extensions (torch_scatter, torch_sparse, torch_cluster …)
    r"Detected that PyTorch and (\w+) were compiled with different CUDA versions|"
    r"operator torchvision::\w+ does not exist|"
    r"xFormers was built for:|xFormers can't load C\+\+/CUDA extensions",
)


# the pip package of a compiled module, where its file name says it (others are named by their file)
_PACKAGES = {"flash_attn": "flash-attn", "libtorchaudio": "torchaudio", "_torchaudio": "torchaudio",
             "torchaudio": "torchaudio", "_torchvision": "torchvision", "torchvision": "torchvision",
             "xformers": "xformers", "_C_flashattention": "xformers"}


def _package(library: str | None) -> str | None:
    """flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so → flash-attn; libtorchaudio.so → torchaudio."""
    if not library:
        return None
    base = library.split(".", 1)[0]
    return next((pkg for prefix, pkg in _PACKAGES.items() if base.startswith(prefix)), None)


@rule("extension-built-for-other-torch")
def extension_abi(machine: Machine) -> list[Finding]:
    symbols = grep(machine, _SYMBOL, 4)
    checks = grep(machine, _PACKAGE_CHECK, 3)
    if not symbols and not checks:
        return []
    lib = next((m.group(1) for m in (_LIBRARY.search(ln) for ln in symbols) if m), None)
    checked = next((m.group(1) for m in (_PACKAGE_CHECK.search(ln) for ln in checks) if m and m.group(1)), None)
    package = _package(lib) or (checked.replace("_", "-") if checked else
                                "torchvision" if any("torchvision" in ln for ln in checks) else
                                "xformers" if any("xformers" in ln.lower() for ln in checks) else None)
    what = package or lib
    return [
        make(
            "extension-built-for-other-torch",
            Severity.ERROR,
            f"A compiled extension{f' ({what})' if what else ''} was built for a different PyTorch than the one "
            "installed",
            "Packages with compiled parts link against the exact PyTorch build they were compiled with. Beside "
            "another torch version (or another CUDA variant of it) the loader cannot find the PyTorch functions they "
            "call ('undefined symbol'), or the package's own check refuses to load. Upgrading or reinstalling torch "
            "after the extension is the usual way this happens.",
            as_text(msg("fix.extension-built-for-other-torch", package=package or "<package>")),
            symbols + checks,
        )
    ]
