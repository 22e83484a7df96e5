"""What a beginner must read on a page, and whether any of it is an English sentence or jargon.

"Must read" = the text of every QLabel, button, check box, radio button and the page title/subtitle that is
visible on the current page. Not counted: tooltips, the read-only command boxes (commands are commands), and
everything inside a closed Collapsible ("Details" / 详细信息, "Options not picked" …).

An *English sentence* is a run of 3 or more ASCII words with nothing but spaces and ASCII punctuation between
them, after taking out what is not prose: commands in `backticks`, URLs, paths, versions and numbers, the
names of this machine's GPUs, and product / proper names (NVIDIA GeForce RTX, Docker Desktop …).
*Jargon* is shown no matter the language: ``[I]``-style markers, issue numbers (#123), environment variables
(UV_CONSTRAINT), local wheel tags (+cu126) and command-line flags (--index-url).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Qt only where pages are read: english_runs/jargon also check CLI output (tests/cli)
    from PySide6.QtWidgets import QWizard

# Names that read the same in every language (products, companies, formats); compared case-insensitively.
PROPER = {
    "nvidia", "geforce", "rtx", "gtx", "quadro", "tesla", "titan", "ti", "super", "laptop", "gpu", "gpus", "max-q",
    "amd", "radeon", "instinct", "rx", "xt", "xtx", "pro", "intel", "arc", "uhd", "iris", "xe", "graphics", "apple",
    "cuda", "cudnn", "rocm", "tensorrt", "nccl", "pytorch", "torch", "torchvision", "torchaudio", "tensorflow",
    "jax", "jaxlib", "python", "pip", "conda", "venv", "uv", "docker", "desktop", "podman", "compose", "kubernetes",
    "slurm", "wsl", "wsl2", "ubuntu", "debian", "fedora", "linux", "windows", "macos", "secure", "boot", "mok",
    "nvidia-smi", "smi", "nvml", "pci", "pcie", "gen", "sxm4", "sxm5", "sxm2", "pcie4", "hbm3", "hbm2e", "nvlink",
    "jetson", "orin", "agx", "dgx", "spark", "hopper", "ampere", "ada", "lovelace", "blackwell", "turing", "volta",
    "pascal", "maxwell", "kepler", "x86_64", "aarch64", "arm64", "arm", "cpu", "mps", "metal", "xpu", "nouveau",
    "gpusetup", "json", "html", "markdown", "a100", "h100", "b200", "t4", "v100", "l4", "l40s", "jetpack",
    "container", "toolkit", "runtime", "app", "cdi", "ptx", "sm", "dkms", "gib", "mib", "gb", "mb", "tb", "s", "ms",
    "tflop", "gflop", "bf16", "fp16", "fp32", "fp64", "tf32", "int8", "ok", "dev", "hbm", "pcie-gen",
}
JARGON = [
    (re.compile(r"\[[A-Z]\]"), "a [X] marker"),
    (re.compile(r"(?<![\w&])#\d{2,}\b"), "an issue number"),
    (re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"), "an environment variable"),
    (re.compile(r"\+(?:cu|rocm)\d"), "a local wheel tag"),
    (re.compile(r"(?<![\w-])--[a-z][a-z-]+"), "a command-line flag"),
]
_TAG = re.compile(r"<[^>]+>")
_NOT_PROSE = [
    re.compile(r"`[^`]*`"),  # inline commands
    re.compile(r"https?://\S+"),
    re.compile(r"(?:[A-Za-z]:)?(?:[~.\w-]*[/\\][^\s，。；：、（）()]*)"),  # paths: anything with a slash
    re.compile(r"\b[\w.+-]+@[\w.-]+\b"),
    re.compile(r"\b\w+(?:==|>=|<=)[\w.*]+"),  # requirement strings
    re.compile(r"\b\w*\d[\w.]*\b"),  # versions, numbers, model numbers, cu126
]
_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ \t,.:;!?'\"()\[\]&–—/-]+[A-Za-z][A-Za-z'’-]*)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def visible_texts(wizard: QWizard) -> list[tuple[str, str]]:
    """(where, text) for everything a user sees on the current page, closed sections and tooltips excluded."""
    from PySide6.QtWidgets import QAbstractButton, QLabel, QPlainTextEdit, QTextEdit, QWidget

    page = wizard.currentPage()
    out = [("title", page.title()), ("subtitle", page.subTitle())]
    for w in page.findChildren(QWidget):
        if not w.isVisibleTo(page) or isinstance(w, (QPlainTextEdit, QTextEdit)):
            continue
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append((type(w).__name__, w.text()))
    # the wizard's own buttons (Next / Back / Install …)
    for b in wizard.findChildren(QAbstractButton):
        if b.isVisibleTo(wizard) and b.parent() is not None and not page.isAncestorOf(b):
            out.append(("button", b.text()))
    return [(where, t) for where, t in out if t and t.strip()]


def english_runs(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Runs of ≥ 3 ASCII prose words left in ``text`` once non-prose and ``allowed`` names are taken out."""
    t = _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&")
    for name in sorted(allowed, key=len, reverse=True):
        if name:
            t = t.replace(name, " ")
    for pat in _NOT_PROSE:
        t = pat.sub(" ", t)
    runs = []
    for m in _RUN.finditer(t):
        words = [w for w in _WORD.findall(m.group(0)) if w.lower().strip("'’-") not in PROPER]
        if len(words) >= 3:
            runs.append(m.group(0).strip())
    return runs


def jargon(text: str) -> list[str]:
    t = _TAG.sub(" ", text)
    for pat in _NOT_PROSE[:2]:  # commands in backticks and URLs may carry flags
        t = pat.sub(" ", t)
    return [f"{why}: {m.group(0)}" for pat, why in JARGON for m in pat.finditer(t)]


def problems(wizard: QWizard, allowed: Iterable[str] = ()) -> list[str]:
    allowed = list(allowed)
    out = []
    for where, text in visible_texts(wizard):
        for run in english_runs(text, allowed):
            out.append(f"{where}: English {run!r} in {text!r}")
        for j in jargon(text):
            out.append(f"{where}: {j} in {text!r}")
    return out
