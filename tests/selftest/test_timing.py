"""The self-test's announced duration is what was measured here (per mode and frameworks checked), else the
bound its framework timeout sets; a stopped run is not kept; the file is private."""

from __future__ import annotations

import stat
from pathlib import Path

from gpusetup.messages import render
from gpusetup.model import SelfTestResult
from gpusetup.selftest import timing
from gpusetup.selftest.base import Sizes


def test_measured_durations_are_announced(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    first = timing.estimate(folder, "quick", ["numpy"])
    assert first.code == "selftest.estimate.first-framework"
    assert first.params["timeout"] == round(Sizes.for_mode("quick").framework_timeout)
    assert timing.estimate(folder, "quick", []).code == "selftest.estimate.first"
    for seconds in (3.6, 4.4, 9.0):
        timing.record(folder, SelfTestResult(mode="quick", duration_s=seconds), ["numpy"])
    timing.record(folder, SelfTestResult(mode="quick", duration_s=60.0, cancelled=True), ["numpy"])
    assert timing.measured(folder, "quick", ["numpy"]) == 4.4  # the median; the stopped run is not kept
    est = timing.estimate(folder, "quick", ["numpy"])
    assert est.code == "selftest.estimate.measured" and est.params == {"seconds": 4}
    assert render(est) == "Testing… this took about 4 s on this computer last time."
    assert timing.measured(folder, "quick", ["torch"]) is None and timing.measured(folder, "full", ["numpy"]) is None
    assert stat.S_IMODE((folder / timing.FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for _ in range(10):
        timing.record(folder, SelfTestResult(mode="quick", duration_s=1.0), ["numpy"])
    assert timing.measured(folder, "quick", ["numpy"]) == 1.0  # only the last few runs count


def test_a_damaged_file_is_no_measurement(tmp_path: Path) -> None:
    (tmp_path / timing.FILE).write_text("{not json")
    assert timing.measured(tmp_path, "quick", []) is None
    timing.record(tmp_path, SelfTestResult(mode="quick", duration_s=2.0), [])
    assert timing.measured(tmp_path, "quick", []) == 2.0
