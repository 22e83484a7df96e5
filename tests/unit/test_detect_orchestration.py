"""The orchestrator: probe order, isolation of failures, cancellation."""

from __future__ import annotations

import pytest
from fakes.scenarios import scenario

from gpusetup.cancel import Cancelled, CancelToken
from gpusetup.probe import PROBE_ORDER, detect


def test_probes_are_reported_in_order_even_when_some_run_in_threads(tmp_path):
    m = detect(scenario(tmp_path, "no-gpu"))
    assert [p.name for p in m.probes] == list(PROBE_ORDER)


def test_cancel_stops_between_probes(tmp_path):
    token = CancelToken()
    seen: list[str] = []

    def progress(name: str, fraction: float) -> None:
        seen.append(name)
        if name == "nvml":
            token.cancel()

    with pytest.raises(Cancelled):
        detect(scenario(tmp_path, "no-gpu"), progress=progress, cancel=token)
    assert "nvml" in seen and "driver" not in seen


def test_already_cancelled_runs_nothing(tmp_path):
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        detect(scenario(tmp_path, "no-gpu"), cancel=token)
