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
