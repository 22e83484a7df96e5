"""The Install page's progress line in the Chinese interface: the installer reports it in English
(gpusetup.install.execute); the page words it through the Qt translation, step titles as their rows show them."""

from __future__ import annotations

import importlib
import inspect

from gpusetup.gui import i18n
from gpusetup.gui.pages.install import progress_text

TITLES = {"Install PyTorch 2.7.1 (CUDA 12.8 build)": "安装 PyTorch 2.7.1（CUDA 12.8 版）"}


def test_progress_lines_follow_the_interface_language(qapp) -> None:
    assert i18n.install("zh_CN")
    try:
        assert progress_text("Step 2 of 3: Install PyTorch 2.7.1 (CUDA 12.8 build)", TITLES) == \
            "第 2 步，共 3 步：安装 PyTorch 2.7.1（CUDA 12.8 版）"
        assert progress_text("Step 2 of 3: Install PyTorch 2.7.1 (CUDA 12.8 build) — 14 s", TITLES) == \
            "第 2 步，共 3 步：安装 PyTorch 2.7.1（CUDA 12.8 版） — 14 秒"
        assert progress_text("Undoing: Install PyTorch 2.7.1 (CUDA 12.8 build)", TITLES) == \
            "正在撤销：安装 PyTorch 2.7.1（CUDA 12.8 版）"
        assert progress_text("Checking free disk space", TITLES) == "正在检查可用磁盘空间"
        assert progress_text("Checking that https://pypi.org/simple can be reached", TITLES) == \
            "正在检查能否连接到 https://pypi.org/simple"
        assert progress_text("Done", TITLES) == "完成"
        assert progress_text("Rolled back", TITLES) == "已撤销"
    finally:
        i18n.install("en")
    assert progress_text("Step 2 of 3: Install PyTorch 2.7.1 (CUDA 12.8 build) — 14 s", {}) == \
        "Step 2 of 3: Install PyTorch 2.7.1 (CUDA 12.8 build) — 14 s"  # English: unchanged


def test_the_installer_still_words_its_progress_this_way() -> None:
    src = inspect.getsource(importlib.import_module("gpusetup.install.execute"))  # the module, not the function
    for form in ('f"Step {i + 1} of {n}: {step.title}"', '"Checking free disk space"', 'f"Checking that {url} can be reached"',
                 'f"Undoing: {step.title}"', '"Done"', '"Rolled back"', 'f"{label} — {time.monotonic() - t0:.0f} s"'):
        assert form in src, form


def test_pip_progress_is_worded_in_the_interface_language(qapp) -> None:
    """The download's bytes, speed and time left (gpusetup.install.progress), in Chinese from the catalogue."""
    from gpusetup.install.progress import PipProgress

    now = [0.0]
    p = PipProgress(clock=lambda: now[0])
    p.feed("  Downloading http://127.0.0.1/files/slowpkg-1.0-py3-none-any.whl (3.1 MB)")
    sized = p.label
    p.feed("Progress 1048576 of 3150000")
    now[0] += 4
    p.feed("Progress 2097152 of 3150000")
    line = f"Step 3 of 5: Install slowpkg==1.0 — {p.label}"
    assert p.label == "Downloading slowpkg-1.0-py3-none-any.whl 67% (2 of 3 MB, 0.3 MB/s, about 4 s left)"
    titles = {"Install slowpkg==1.0": "安装 slowpkg==1.0"}
    assert i18n.install("zh_CN")
    try:
        assert progress_text(line, titles) == (
            "第 3 步，共 5 步：安装 slowpkg==1.0 — 正在下载 slowpkg-1.0-py3-none-any.whl：67%（2 / 3 MB，每秒 0.3 MB，还需大约 4 秒）")
        assert progress_text(f"Step 3 of 5: Install slowpkg==1.0 — {sized}", titles).endswith(
            "正在下载 slowpkg-1.0-py3-none-any.whl（3.1 MB）")
        # words the progress module did not write stay as they came
        assert progress_text("Step 3 of 5: Install slowpkg==1.0 — Building wheel for x", titles).endswith(
            " — Building wheel for x")
    finally:
        i18n.install("en")
    assert progress_text(line, {}) == line  # English: unchanged


def test_every_label_the_progress_module_writes_is_given_back_as_its_message() -> None:
    from gpusetup.install.progress import PipProgress, message_of
    from gpusetup.messages import render

    now = [0.0]
    p = PipProgress(clock=lambda: now[0])
    lines = ["Collecting torch==2.9.1+cpu", "  Downloading https://x/torch-2.9.1%2Bcpu-cp311-cp311-linux_x86_64.whl (184.4 MB)",
             "Progress 1000000 of 184400000", "Progress 90000000 of 184400000", "Progress 184400000 of 184400000",
             "  Downloading https://x/tinydep-1.0-py3-none-any.whl", "Installing collected packages: tinydep, torch",
             "Successfully installed tinydep-1.0 torch-2.9.1+cpu", "Successfully downloaded a-1"]
    seen = [p.label]
    for i, ln in enumerate(lines):
        now[0] += 30 * i
        if p.feed(ln):
            seen.append(p.label)
    assert any("MB/s, about" in s and " min left" in s for s in seen) or any("MB/s" in s for s in seen), seen
    for label in seen:
        said = message_of(label)
        assert said is not None and render(said) == label, label
    assert message_of("Building wheel for x") is None
