"""Time before and during (issue 21: "no time estimate for any step; durations only in the log"): each step is
announced with what it took here before, or with the download size over the speed measured here, and shows the
time left while it runs. Nothing is shown where nothing was measured."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from gpusetup.commands.install import render_plan
from gpusetup.install import execute, step_estimates
from gpusetup.install.plan import InstallPlan
from gpusetup.install.progress import PipProgress
from gpusetup.install.timing import FILE, StepClock, Times
from gpusetup.messages import msg as m
from gpusetup.messages import render, worded_step
from gpusetup.model import Step

from .stand_ins import machine

MB = 1 << 20


def sleeper(seconds: float) -> Step:
    return Step(id="wait", title="Wait a while", argv=[sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_nothing_measured_means_no_estimate(tmp_path: Path) -> None:
    plan = InstallPlan(steps=[sleeper(0.1)])
    assert step_estimates(plan, tmp_path) == {}
    seen: list[str] = []
    assert execute(plan, journal_dir=tmp_path, progress=lambda said, f: seen.append(render(said)),
                   check_network=False).ok
    assert "Step 1 of 1: Wait a while" in seen and not any("about" in s for s in seen), seen


def test_a_step_is_announced_with_what_it_took_here_before_and_counts_down(tmp_path: Path) -> None:
    plan = InstallPlan(steps=[sleeper(2.4)])
    assert execute(plan, journal_dir=tmp_path, check_network=False).ok  # measured: about 2.5 s
    times = json.loads((tmp_path / FILE).read_text())
    assert 2.3 < times["steps"]["wait"][0] < 6, times
    assert stat.S_IMODE(os.stat(tmp_path / FILE).st_mode) == 0o600
    assert 2.3 < step_estimates(plan, tmp_path)["wait"] < 6
    seen: list[str] = []
    assert execute(plan, journal_dir=tmp_path, progress=lambda said, f: seen.append(render(said, "en")),
                   check_network=False).ok
    start = next(s for s in seen if s.startswith("Step 1 of 1: Wait a while"))
    assert start.startswith("Step 1 of 1: Wait a while — about ") and start.endswith(" s"), seen
    beats = [s for s in seen if "left" in s]
    assert beats and beats[0].startswith("Step 1 of 1: Wait a while — 1 s, about ") and beats[0].endswith(" s left")
    zh: list[str] = []
    assert execute(plan, journal_dir=tmp_path, progress=lambda said, f: zh.append(render(said, "zh_CN")),
                   check_network=False).ok
    assert any(s.startswith("第 1 步，共 1 步：Wait a while — 约 ") and s.endswith(" 秒") for s in zh), zh
    assert any(s.startswith("第 1 步，共 1 步：Wait a while — 已用 1 秒，约剩 ") for s in zh), zh


def test_a_download_is_estimated_from_its_size_and_the_speed_measured_here(tmp_path: Path) -> None:
    pip = worded_step("pip-install", m("step.title.pip-install", names="torch"), m("step.explain.pip-install",
                      names="torch", where=m("step.where.pypi")), kind="pip", argv=["pip", "install", "torch"])
    plan = InstallPlan(steps=[pip], download={"source": "index", "bytes": 200 * MB}, download_mib=200)
    times = Times(tmp_path)
    assert step_estimates(plan, tmp_path) == {}, "a size alone is no time"
    times.record(pip, 30.0, downloaded=100 * MB, download_seconds=20.0)  # 5 MB/s here, 10 s unpacking
    est = step_estimates(plan, tmp_path)["pip-install"]
    assert est == pytest.approx(200 / 5 + 10.0)
    # the CLI's plan listing says it beside the step
    text = render_plan(plan, machine(), state_dir=tmp_path)
    assert "1. Install torch (about 50 s)" in text


def test_time_left_follows_the_bytes_pip_reports() -> None:
    now = [0.0]
    parser = PipProgress(clock=lambda: now[0])
    clock = StepClock(estimate=60.0, download_bytes=100 * MB, unpack=5.0, clock=lambda: now[0])
    parser.feed("Downloading torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl (100.0 MB)")
    parser.feed(f"Progress 0 of {100 * MB}")
    now[0] = 10.0
    parser.feed(f"Progress {20 * MB} of {100 * MB}")
    assert parser.downloaded == 20 * MB and parser.speed() == pytest.approx(2 * MB)
    assert clock.left(parser.downloaded, parser.speed()) == pytest.approx(80 / 2 + 5.0)
    # a second file of the same step: the bytes add up
    parser.feed("Downloading nvidia_cublas-12.8-py3-none-manylinux_2_28_x86_64.whl (50.0 MB)")
    parser.feed(f"Progress 0 of {50 * MB}")
    now[0] = 15.0
    parser.feed(f"Progress {10 * MB} of {50 * MB}")
    assert parser.downloaded == 30 * MB
