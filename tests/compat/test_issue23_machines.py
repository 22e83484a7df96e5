"""Issue 23: machine profiles the resolver failed on (facts from PyPI's wheels, TensorFlow's tested
configurations and JAX's install docs), each a regression test that failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.compat import download_size
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

RTX4090_PY315 = {"os": "linux", "arch": "x86_64", "python": "3.15", "driver": "580.95.05",
                 "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}
A100_PY310 = {"os": "linux", "arch": "x86_64", "python": "3.10", "driver": "580.95.05",
              "gpus": [{"vendor": "nvidia", "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]}


# ------------------------------------------------------------------------------ the range crash


@pytest.mark.parametrize(("text", "python", "abi"), [
    ("3.10–3.13", "3.10", "cp310"),  # a GPU build's range after "change Python": the lowest, as install provides
    ("≥ 3.12", "3.12", "cp312"),
    ("3.13t", "3.13t", "cp313t"),
    ("3.12", "3.12", "cp312"),
])
def test_download_target_reads_the_python_a_plan_writes(text: str, python: str, abi: str) -> None:
    """download_size.Target parsed "3.10–3.13" as a version (ValueError: invalid literal for int() … '10–3')."""
    t = download_size.Target(text)
    assert t.python == python
    tags = t.tags()
    assert tags and any(f"-{abi}-manylinux_2_28_x86_64" in tag for tag in tags)
    assert t.markers()["python_version"] == python.rstrip("t")


def test_free_threaded_target_takes_no_abi3_and_no_standard_wheels() -> None:
    tags = download_size.Target("3.13t").tags()
    assert "cp313-cp313t-manylinux_2_28_x86_64" in tags
    assert "cp313-cp313-manylinux_2_28_x86_64" not in tags and "cp39-abi3-manylinux_2_28_x86_64" not in tags
    assert "py3-none-any" in tags


def test_macos_target_allows_only_wheels_its_release_can_load() -> None:
    """torch 2.15 ships only macosx_14_0_arm64; a Mac on 13 cannot load it, one on 14.5 can."""
    assert "cp312-cp312-macosx_14_0_arm64" in download_size.Target("3.12", "macos", "arm64", macos="14.5").tags()
    assert "cp312-cp312-macosx_14_0_arm64" not in download_size.Target("3.12", "macos", "arm64", macos="13.6").tags()


def _index(tmp: Path) -> LocalIndex:
    idx = LocalIndex(tmp)
    for name in ("tensorflow-2.13.1-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                 "jax-0.6.2-py3-none-any.whl"):
        project, version = name.split("-")[:2]
        idx.add(project, build_wheel(tmp, name, metadata(project, version)))
    return idx


@pytest.mark.network
@pytest.mark.parametrize(("profile", "framework"), [(RTX4090_PY315, "tensorflow"), (A100_PY310, "jax")])
def test_plan_for_a_machine_whose_gpu_build_needs_another_python_does_not_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        profile: dict, framework: str) -> None:
    """`plan --for` a TensorFlow machine on Python 3.15 (and JAX on 3.10) stopped with an internal error: the GPU
    build's Python range went to the download-size walk as a version."""
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    f = tmp_path / "m.json"
    f.write_text(json.dumps(profile), encoding="utf-8")
    with serve(_index(tmp_path)) as idx:
        code = main(["plan", "--for", str(f), "-f", framework, "--live-index", idx.url, "--json"])
    out, err = capsys.readouterr()
    assert "internal error" not in err
    doc = json.loads(out)
    assert code in (0, 1) and doc["download"][framework]["source"] in ("index", "estimate")
