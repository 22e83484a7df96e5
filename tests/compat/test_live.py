"""The plan-time live index check (gpusetup.compat.live) against a package index on 127.0.0.1.

The layouts mirror the real ones: /simple/<project>/ like PyPI, /whl/<variant>/<project>/ like
download.pytorch.org; ``--live-index`` / GPUSETUP_LIVE_INDEX swaps the host and keeps the path.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.compat import live
from gpusetup.compat.db import get_db
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.messages import render
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

pytestmark = pytest.mark.network

RTX4090 = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.95.05",
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}


def _wheel(tmp: Path, name: str) -> Path:
    project, version = name.split("-")[:2]
    return build_wheel(tmp, name, metadata(project, version))


def _index(tmp: Path, torch_files: list[str], pypi_torch: list[str]) -> LocalIndex:
    idx = LocalIndex(tmp)
    for n in torch_files:
        idx.add("torch", _wheel(tmp, n), layout="cu132")
    for n in pypi_torch:
        idx.add("torch", _wheel(tmp, n))
    return idx


def _plans():
    return resolve(machine_from_data(RTX4090), ["pytorch"])


def test_the_chosen_wheel_is_found_on_the_index(tmp_path: Path) -> None:
    plans = _plans()
    assert plans[0].choice.variant == "cu132" and plans[0].choice.version == "2.15"
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl",
                            "torch-2.15.0+cu132-cp313-cp313-manylinux_2_28_x86_64.whl"],
                 ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        res = live.check(plans, machine_from_data(RTX4090), timeout=30, index=idx.url, cache=tmp_path / "cache")
    assert res.status == "checked"
    notes = [render(n) for n in res.framework_notes["pytorch"]]
    assert any(n.startswith("Checked live:") and "torch 2.15.*+cu132 for Python 3.12 on Linux x86_64" in n
               and "torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl" in n for n in notes), notes
    assert ("/whl/cu132/torch/", None) in idx.requests
    assert res.newer == {}


def test_a_missing_wheel_is_reported_not_hidden(tmp_path: Path) -> None:
    plans = _plans()
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp311-cp311-manylinux_2_28_x86_64.whl",
                            "torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_aarch64.whl",
                            "torch-2.15.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        # a cache of its own: a shared one could hold another test's answers for the same (reused) port
        res = live.check(plans, machine_from_data(RTX4090), timeout=30, index=idx.url, cache=tmp_path / "cache")
    live.apply(plans, res)
    assert any("has no torch 2.15.*+cu132 wheel for Python 3.12 on Linux x86_64" in n for n in plans[0].notes)


def test_a_newer_release_than_the_data_knows_is_noticed(tmp_path: Path) -> None:
    # timeout=30 in these calls: the local index answers at once, but a loaded CI machine may not (issue 16)
    plans = _plans()
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl", "torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                  "torch-2.17.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        res = live.check(plans, machine_from_data(RTX4090), timeout=30, index=idx.url, cache=tmp_path / "cache")
    assert res.newer == {"pytorch": "2.16.0"}  # a release candidate is not a release
    checked = get_db().checked
    assert any(f"The compatibility data is from {checked}; the index has torch 2.16.0" in n
               for n in map(render, res.framework_notes["pytorch"]))


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_offline_falls_back_to_the_shipped_data_and_says_so(tmp_path: Path) -> None:
    plans = _plans()
    before = plans[0].choice
    res = live.check(plans, machine_from_data(RTX4090), index=f"http://127.0.0.1:{_closed_port()}/simple/", timeout=2,
                     cache=tmp_path / "cache")
    live.apply(plans, res)
    assert res.status == "offline"
    assert plans[0].choice == before
    assert any("Could not reach the package index" in n and "built-in data" in n for n in plans[0].notes)


def test_answers_are_cached_for_the_next_plan(tmp_path: Path) -> None:
    plans = _plans()
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        url = idx.url
        first = live.check(plans, machine_from_data(RTX4090), timeout=30, index=url, cache=tmp_path / "cache", now=1000.0)
    # the server is gone: the cached pages answer, until they are older than CACHE_SECONDS
    again = live.check(plans, machine_from_data(RTX4090), timeout=30, index=url, cache=tmp_path / "cache", now=1000.0 + 60)
    assert first.status == again.status == "checked"
    stale = live.check(plans, machine_from_data(RTX4090), index=url, cache=tmp_path / "cache", timeout=2,
                       now=1000.0 + live.CACHE_SECONDS + 1)
    assert stale.status == "offline"


def test_plan_cli_shows_the_live_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RTX4090), encoding="utf-8")
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        assert main(["plan", "--for", str(prof), "--live-index", idx.url, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["live"]["status"] == "checked" and doc["live"]["newer"] == {"pytorch": "2.16.0"}
        assert any(n.startswith("Checked live:") for n in doc["plans"][0]["notes"])
        assert main(["plan", "--for", str(prof), "--live-index", idx.url]) == 0
        text = capsys.readouterr().out
    assert "Package index checked live: " + idx.url in text
    assert "Newer than the data: the index has PyTorch 2.16.0" in text
    assert main(["plan", "--for", str(prof), "--offline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["live"]["status"] == "off"


def test_unreachable_variant_index_falls_back_to_the_same_build_on_pypi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytorch/releases 2.15 pypi_default_linux = cu132 (read from the PyPI wheel's Requires-Dist): when the
    download.pytorch.org-style index cannot be reached, PyPI's wheel of the release is the same build."""
    plans = _plans()
    plans[0].choice.index_url = f"http://127.0.0.1:{_closed_port()}/whl/cu132"
    idx = _index(tmp_path, [], ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        monkeypatch.setattr(live, "PYPI", idx.url)
        res = live.check(plans, machine_from_data(RTX4090), cache=None, timeout=2)
    notes = [render(n) for n in res.framework_notes["pytorch"]]
    assert res.status == "partial"
    assert any(n.startswith("Could not reach the package index http://127.0.0.1:") and "that has the chosen build "
               "(127.0.0.1: " in n for n in notes), notes
    live.apply(plans, res)
    assert live.unreachable(plans[0]) == [plans[0].choice.index_url + "/"]  # the plan page says so (issue 21)
    assert any(n.startswith("PyPI (" + idx.url + ") has the same build: torch 2.15.*+cu132 for Python 3.12")
               and "torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl" in n for n in notes), notes


def test_an_index_without_the_project_lacks_the_wheel(tmp_path: Path) -> None:
    plans = _plans()
    idx = _index(tmp_path, [], ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])  # no /whl/cu132/torch/
    with serve(idx):
        res = live.check(plans, machine_from_data(RTX4090), timeout=30, index=idx.url, cache=tmp_path / "cache")
    assert res.status == "checked"
    assert any("has no torch 2.15.*+cu132 wheel" in render(n) for n in res.framework_notes["pytorch"])


def test_install_cli_checks_the_index_at_plan_time_and_shows_its_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`gpusetup install` runs the same live check as `gpusetup plan`; --offline and --wheelhouse skip it."""
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RTX4090), encoding="utf-8")
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.16.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    base = ["install", "--for", str(prof), "--dry-run", "--target", f"venv:{tmp_path / 'env'}",
            "--state-dir", str(tmp_path / "state")]
    with serve(idx):
        assert main([*base, "--live-index", idx.url]) == 0
        text = capsys.readouterr().out
        assert "  Note: Checked live: " + idx.url.rstrip("/").rsplit("/simple", 1)[0] in text, text
        assert "torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl" in text
        assert "the index has torch 2.16.0, newer than any release gpusetup knows" in text
        asked = len(idx.requests)
        assert main([*base, "--live-index", idx.url, "--offline"]) == 0
        assert "Checked live" not in capsys.readouterr().out and len(idx.requests) == asked
    # unreachable: the plan stands on the shipped data and says so
    assert main([*base, "--live-index", f"http://127.0.0.1:{_closed_port()}/simple/"]) == 0
    assert "  Note: Could not reach the package index (127.0.0.1" in capsys.readouterr().out


def test_the_check_asks_the_mirrors_the_install_will_use(tmp_path: Path) -> None:
    """A PyTorch mirror stands for https://download.pytorch.org/whl and a PyPI mirror for PyPI (issue 21): the
    live check asks them, the variant path kept, and never the upstream hosts."""
    plans = _plans()
    assert plans[0].choice.index_url == "https://download.pytorch.org/whl/cu132"
    idx = _index(tmp_path, ["torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 ["torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl"])
    with serve(idx):
        base = idx.url.replace("/simple/", "/whl")
        res = live.check(plans, machine_from_data(RTX4090), timeout=30, cache=None, pypi_mirror=idx.url,
                         pytorch_mirror=base)
    assert res.status == "checked", [render(n) for n in res.framework_notes["pytorch"]]
    assert ("/whl/cu132/torch/", None) in idx.requests and ("/simple/torch/", None) in idx.requests
    assert res.index == idx.url
    live.apply(plans, res)
    assert live.unreachable(plans[0]) == []


def test_an_unreachable_mirror_is_named_as_the_index_that_cannot_be_reached() -> None:
    plans = _plans()
    mirror = f"http://127.0.0.1:{_closed_port()}/pytorch/whl"
    res = live.check(plans, machine_from_data(RTX4090), timeout=2, cache=None, pytorch_mirror=mirror,
                     index=None, pypi_mirror=f"http://127.0.0.1:{_closed_port()}/simple")
    live.apply(plans, res)
    assert live.unreachable(plans[0]) == [mirror + "/cu132/"]
    assert res.status == "offline"
