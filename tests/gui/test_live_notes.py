"""The wizard gets the plan-time index check from the core (Services.resolve → gpusetup.compat.live): its
notes arrive as codes on the plans, so the plan page shows them in English and in Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusetup.compat.profile import machine_from_data
from gpusetup.gui.services import Services
from gpusetup.messages import render_notes
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

RTX4090 = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.95.05",
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}


@pytest.mark.network
def test_wizard_plans_carry_the_live_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = LocalIndex(tmp_path)
    for name, layout in (("torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl", "cu132"),
                         ("torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl", "simple")):
        idx.add("torch", build_wheel(tmp_path, name, metadata("torch", name.split("-")[1])), layout=layout)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with serve(idx):
        monkeypatch.setenv("GPUSETUP_LIVE", "on")
        monkeypatch.setenv("GPUSETUP_LIVE_INDEX", idx.url)
        (plan,) = Services(state_dir=tmp_path / "state").resolve(machine_from_data(RTX4090), ("pytorch",), "3.12")
    codes = [m.code for m in plan.note_codes]
    assert "live.wheel-found" in codes and "live.newer-release" in codes
    zh = render_notes(plan.notes, plan.note_codes, "zh_CN")
    assert any("已在线核对" in n for n in zh) and any("torch 2.16.0" in n for n in zh)


def test_wizard_plans_without_the_live_check_when_it_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUSETUP_LIVE", "off")
    (plan,) = Services(state_dir=tmp_path / "state").resolve(machine_from_data(RTX4090), ("pytorch",), "3.12")
    assert not [m for m in plan.note_codes if m.code.startswith("live.")]


def test_demo_machines_are_not_checked_live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpusetup.gui.demo import DemoServices, demo_machine

    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("GPUSETUP_LIVE_INDEX", "http://127.0.0.1:9/simple/")  # would be 'offline' if it were asked
    svc = DemoServices("rtx3060", state_dir=tmp_path / "state")
    plans = svc.resolve(demo_machine("rtx3060"), ("pytorch",), "3.11")
    assert not [m for p in plans for m in p.note_codes if m.code.startswith("live.")]
