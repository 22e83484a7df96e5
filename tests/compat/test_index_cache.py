"""The index cache behind the live check, the download-size walk and the refresh tool (gpusetup.compat.indexcache),
against a package index on 127.0.0.1: pages kept parsed with their validators and revalidated with conditional
requests, read side by side, private on disk, never holding a credential, and every download bounded by a
deadline (issue 23 "fast online"; issue 25: a dripping server, passwords in --live-index)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.compat import live
from gpusetup.compat import refresh as R
from gpusetup.compat.indexcache import IndexCache
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.messages import render
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

pytestmark = pytest.mark.network

RTX4090 = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.95.05",
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}
SECRET = "s3cr3t-Passw0rd"


def _index(tmp: Path) -> LocalIndex:
    idx = LocalIndex(tmp)
    for name, layout in (("torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl", "cu132"),
                         ("torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl", "simple"),
                         ("tensorflow-2.21.0-cp312-cp312-manylinux_2_27_x86_64.whl", "simple"),
                         ("jaxlib-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl", "simple"),
                         ("jax-0.12.0.1-py3-none-any.whl", "simple")):
        project, version = name.split("-")[:2]
        idx.add(project, build_wheel(tmp, name, metadata(project, version)), layout=layout)
    return idx


def test_a_stale_page_is_revalidated_with_its_etag_and_not_read_again(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    idx.validators = True
    with serve(idx):
        first = IndexCache(R.Http(timeout=10), tmp_path / "cache", max_age=60, now=1000.0).page(idx.url, "torch")
        fresh = IndexCache(R.Http(timeout=10), tmp_path / "cache", max_age=60, now=1030.0).page(idx.url, "torch")
        asked = len(idx.requests)
        later = IndexCache(R.Http(timeout=10), tmp_path / "cache", max_age=60, now=5000.0).page(idx.url, "torch")
    assert (first.how, fresh.how, later.how) == ("fetched", "cache", "revalidated")
    assert asked == 1 and len(idx.requests) == 2 and idx.not_modified == 1  # one conditional request, answered 304
    assert [f.filename for f in later.files] == [f.filename for f in first.files]
    stored = json.loads(next((tmp_path / "cache").glob("page-*.json")).read_text())
    assert stored["etag"].startswith('"') and stored["fetched"] == 5000.0
    assert "files" in stored and "<html" not in json.dumps(stored)  # the parsed fields, not the page


def test_pages_are_read_side_by_side(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    idx.latency = 0.3
    with serve(idx):
        got = IndexCache(R.Http(timeout=10), None).pages([(idx.url, p) for p in ("torch", "tensorflow", "jax", "jaxlib")])
    assert all(not isinstance(p, Exception) for p in got.values())
    assert idx.max_inflight >= 2


def test_the_cache_is_private_and_holds_no_credential(tmp_path: Path) -> None:
    """--live-index http://user:PW@… printed the password twice and stored it in clear in the live-index cache
    (0644 files, 0755 folders); now the URL is masked in every answer, key and file, and the cache is 0700/0600."""
    idx = _index(tmp_path)
    cache = tmp_path / "xdg" / "gpusetup" / "index"
    plans = resolve(machine_from_data(RTX4090), ["pytorch"])
    with serve(idx):
        url = idx.url.replace("http://", f"http://gpuuser:{SECRET}@")
        res = live.check(plans, machine_from_data(RTX4090), index=url, timeout=10, cache=cache)
    assert res.status == "checked"
    shown = json.dumps(res.to_dict()) + " ".join(render(n) for n in res.framework_notes["pytorch"])
    assert SECRET not in shown and "gpuuser:****@" in shown
    assert any(a and a.startswith("Basic ") for a in idx.auth)  # the password was used, only not kept
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    for f in cache.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert SECRET not in f.read_text(encoding="utf-8")


def test_plan_cli_with_a_password_in_the_live_index_never_prints_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RTX4090), encoding="utf-8")
    idx = _index(tmp_path)
    with serve(idx):
        url = idx.url.replace("http://", f"http://gpuuser:{SECRET}@")
        assert main(["plan", "--for", str(prof), "--live-index", url]) == 0
        text = capsys.readouterr().out
        monkeypatch.setenv("GPUSETUP_LIVE_INDEX", url)
        assert main(["plan", "--for", str(prof), "--json"]) == 0
        doc = capsys.readouterr().out
    assert "Package index checked live: http://gpuuser:****@127.0.0.1" in text
    assert SECRET not in text and SECRET not in doc
    for f in (tmp_path / "xdg").rglob("*"):
        if f.is_file():
            assert SECRET not in f.read_text(encoding="utf-8", errors="replace"), f


def test_a_server_that_drips_a_byte_a_second_is_cut_off_at_the_deadline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Timeouts were per read: a byte every second kept the live check going past 90 s. The download now has a
    deadline of its own (live.DEADLINE, here 1.5 s) and the plan stands on the shipped data."""
    idx = _index(tmp_path)
    idx.drip = 0.5  # one byte every half second: no single read ever times out
    monkeypatch.setattr(live, "DEADLINE", 1.5)
    plans = resolve(machine_from_data(RTX4090), ["pytorch"])
    with serve(idx):
        start = time.monotonic()
        res = live.check(plans, machine_from_data(RTX4090), index=idx.url, timeout=2, cache=tmp_path / "cache")
        took = time.monotonic() - start
    assert res.status == "offline"
    said = [render(n) for n in res.framework_notes["pytorch"]]
    assert any("did not finish in time" in n or "timed out" in n for n in said), said
    assert took < 20  # bounded by the deadline (pages side by side), far from the page's 1,000+ seconds


def test_empty_xdg_cache_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG_CACHE_HOME set but empty put the cache in ./gpusetup under the current directory; platformdirs
    ignores an empty value, as the XDG spec says."""
    from gpusetup.paths import cache_dir

    monkeypatch.delenv("GPUSETUP_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    got = cache_dir()
    assert got.is_absolute() and got != Path("gpusetup").absolute() and got.name == "gpusetup"
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert got == tmp_path / ".cache" / "gpusetup"


# ------------------------------------------------------------------ a cold plan's cost (benchmarks/resolver_bench.py)


def test_storing_a_big_page_reads_the_environment_once_not_per_file(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file URL was scrubbed on its own, and every scrub reads the whole environment for new secrets: torch's
    page (~7,000 files) cost 1.7 million environment reads, most of a cold plan's CPU (3.5 s of CPU against PyPI
    here; 1.8 s after). The page is now scrubbed in one pass, with the same masking per file."""
    from gpusetup import credentials

    calls = {"n": 0}
    real = credentials._absorb_environment

    def counting(env: object = None) -> None:
        calls["n"] += 1
        real(env)  # type: ignore[arg-type]

    monkeypatch.setattr(credentials, "_absorb_environment", counting)
    idx = LocalIndex(tmp_path)
    for i in range(300):
        idx.add("torch", build_wheel(tmp_path, f"torch-2.{i}.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                                     metadata("torch", f"2.{i}.0")))
    with serve(idx):
        url = idx.url.replace("http://", f"http://gpuuser:{SECRET}@")
        page = IndexCache(R.Http(timeout=10), tmp_path / "cache").page(url, "torch")
    assert len(page.files) == 300
    assert calls["n"] < 20  # was > 300: one per file
    stored = json.loads(next((tmp_path / "cache").glob("page-*.json")).read_text())
    assert len(stored["files"]) == 300 and SECRET not in json.dumps(stored)


def test_the_same_page_asked_from_two_threads_at_once_is_read_once(tmp_path: Path) -> None:
    """The plan's three download walks ask for the same pages (numpy, nvidia-cudnn-cu12) at the same moment: each
    read them again. A page being read is now waited for."""
    import threading

    idx = _index(tmp_path)
    idx.latency = 0.3
    cache = IndexCache(R.Http(timeout=10), None)
    got: list[object] = []
    with serve(idx):
        threads = [threading.Thread(target=lambda: got.append(cache.page(idx.url, "torch"))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(got) == 3 and len({id(p) for p in got}) == 1
    assert [p for p, _rng in idx.requests].count("/simple/torch/") == 1


def test_a_page_that_failed_is_not_asked_again_by_the_threads_waiting_for_it(tmp_path: Path) -> None:
    import threading

    idx = _index(tmp_path)
    idx.latency = 0.3
    cache = IndexCache(R.Http(timeout=10), None)
    errors: list[Exception] = []

    def ask() -> None:
        try:
            cache.page(idx.url, "no-such-project")
        except R.RefreshError as exc:
            errors.append(exc)

    with serve(idx):
        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(errors) == 3 and all("404" in str(e) for e in errors)
    assert [p for p, _rng in idx.requests].count("/simple/no-such-project/") == 1


def test_many_reads_at_once_keep_their_connections(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """requests keeps 10 connections per host; the walks read up to 24 pages at once, so urllib3 discarded
    connections — a new TCP (and TLS) handshake for each — and printed "Connection pool is full, discarding
    connection" on the plan's stderr. Clients now share one session whose pool fits the concurrency."""
    import logging
    from concurrent.futures import ThreadPoolExecutor

    idx = _index(tmp_path)
    idx.latency = 0.1
    http = R.Http(timeout=10)
    caplog.set_level(logging.WARNING, logger="urllib3")
    with serve(idx), ThreadPoolExecutor(max_workers=24) as pool:
        list(pool.map(lambda _i: http.get(idx.url + "torch/"), range(48)))
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]
    assert R.Http(timeout=3).session is http.session  # the live check's connections serve the walks too
