"""The installer's progress is said as data (gpusetup.install.execute passes Messages: a code and its values,
the step's title as its code); the CLI words it in its language, the wizard's job in the interface's. Nothing
parses an English label back."""

from __future__ import annotations

import sys
from pathlib import Path

from gpusetup.gui import i18n
from gpusetup.gui.workers import JobContext
from gpusetup.install import execute
from gpusetup.install.plan import InstallPlan
from gpusetup.install.progress import PipProgress
from gpusetup.messages import msg, render, worded_step
from gpusetup.model import Message, Step


def _plan(tmp_path: Path) -> InstallPlan:
    env = str(tmp_path / "env")
    return InstallPlan(steps=[
        worded_step("create-venv", msg("step.title.create-venv", venv=env), msg("step.explain.create-venv"),
                    argv=[sys.executable, "-c", "print('made')"]),
        Step(id="old", title="A step from a plan saved before titles had codes", argv=[sys.executable, "-c", "pass"]),
    ])


def test_the_installer_says_its_progress_as_data(tmp_path: Path) -> None:
    seen: list[object] = []
    res = execute(_plan(tmp_path), journal_dir=tmp_path / "state", progress=lambda said, f: seen.append(said),
                  check_network=False)
    assert res.ok, res.message
    assert seen and all(isinstance(s, Message) for s in seen), seen
    en = [render(s) for s in seen]
    assert en[0] == f"Step 1 of 2: Create the virtual environment {tmp_path / 'env'}" and en[-1] == "Done"
    zh = [render(s, "zh_CN") for s in seen]
    assert zh[0] == f"第 1 步，共 2 步：创建虚拟环境 {tmp_path / 'env'}" and zh[-1] == "完成"
    # a title without a code (an older saved plan) is shown as it was written
    assert "第 2 步，共 2 步：A step from a plan saved before titles had codes" in zh


class _Signal:
    def __init__(self) -> None:
        self.got: list[tuple[str, float]] = []

    def emit(self, *args: object) -> None:
        self.got.append(args)  # type: ignore[arg-type]


class _Signals:
    def __init__(self) -> None:
        self.progress = _Signal()


def test_the_wizard_words_progress_in_its_language(qapp) -> None:
    """The job's progress callback words a message once, in the interface's language (the page shows it)."""
    signals = _Signals()
    ctx = JobContext(signals, token=None, interval=0.0)  # type: ignore[arg-type]
    now = [0.0]
    pip = PipProgress(clock=lambda: now[0])
    pip.feed("  Downloading http://127.0.0.1/files/slowpkg-1.0-py3-none-any.whl (3.1 MB)")
    pip.feed("Progress 1048576 of 3150000")
    now[0] += 4
    pip.feed("Progress 2097152 of 3150000")
    step = msg("install.progress.step", i=3, n=5, title=msg("step.title.verify"))
    assert i18n.install("zh_CN")
    try:
        ctx.progress(msg("install.progress.with", what=step, detail=pip.message), 0.5)
        ctx.progress(msg("install.progress.with", what=step, detail=msg("duration.seconds", n=14)), 0.5)
        ctx.progress(msg("install.progress.reach", url="https://pypi.org/simple"), None)
        ctx.progress("words a job said itself", 0.9)
    finally:
        i18n.install("en")
    texts = [t for t, _ in signals.progress.got]
    assert texts[0] == ("第 3 步，共 5 步：检查安装的版本是否与计划一致 — 正在下载 slowpkg-1.0-py3-none-any.whl：67%"
                        "（2 / 3 MB，0.3 MB/s，剩余约 4 秒）")
    assert texts[1].endswith(" — 14 秒") and texts[2] == "正在检查能否连接到 https://pypi.org/simple"
    assert texts[3] == "words a job said itself"
    ctx.progress(step, 0.6)  # English again
    assert signals.progress.got[-1][0].startswith("Step 3 of 5: ")
