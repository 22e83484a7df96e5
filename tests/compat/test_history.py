"""scripts/refresh_compat.py --history (gpusetup.compat.history) against a package index on 127.0.0.1: every
release's wheels grouped per platform with the minimum OS and Python tags (free-threaded too), the build facts
read out of the wheels (torch/version.py, TensorFlow's build_info.py), the pairing and extras from the
metadata, and a second refresh that reads nothing but revalidated pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpusetup.compat import history as H
from gpusetup.compat import refresh as R
from gpusetup.compat.indexcache import IndexCache
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

pytestmark = pytest.mark.network

VERSION_PY = b"__version__ = '2.99.0'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = 'abc'\nhip: Optional[str] = None\n"
# TensorFlow 2.13.1's build_info.py, as the wheel on PyPI carries it (read on 2026-11-27)
BUILD_INFO = (b'"""Auto-generated module providing information about the build."""\nimport collections\n\n'
              b"build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-16/bin/clang'), "
              b"('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), "
              b"('cuda_version', '11.8'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), "
              b"('is_tensorrt_build', True)])\n")


def _index(tmp: Path) -> LocalIndex:
    idx = LocalIndex(tmp)
    idx.pep658 = True
    idx.validators = True
    for name in ("torch-2.99.0-cp312-cp312-manylinux_2_28_x86_64.whl", "torch-2.99.0-cp313-cp313t-manylinux_2_28_x86_64.whl",
                 "torch-2.99.0-cp312-none-macosx_14_0_arm64.whl", "torch-2.99.0-cp312-cp312-win_amd64.whl"):
        idx.add("torch", build_wheel(tmp, name, metadata("torch", "2.99.0", ">=3.12"), {"torch/version.py": VERSION_PY}),
                requires_python=">=3.12")
    idx.add("torch", build_wheel(tmp, "torch-3.0.0rc1-cp312-cp312-manylinux_2_28_x86_64.whl", metadata("torch", "3.0.0rc1")))
    idx.add("torchvision", build_wheel(tmp, "torchvision-0.114.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                                       metadata("torchvision", "0.114.0", None, ("torch==2.99.0",))))
    idx.add("tensorflow", build_wheel(tmp, "tensorflow-2.13.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                                      metadata("tensorflow", "2.13.1"),
                                      {"tensorflow/python/platform/build_info.py": BUILD_INFO}))
    idx.add("jax", build_wheel(tmp, "jax-0.99.0-py3-none-any.whl", metadata("jax", "0.99.0", ">=3.12", (
        'jaxlib<=0.99.0,>=0.99.0; extra == "cuda13"', 'jax-cuda13-plugin[with-cuda]<=0.99.0,>=0.99.0; extra == "cuda13"',
        'jaxlib<=0.99.0,>=0.99.0; extra == "tpu"'), ("cuda13", "tpu"))))
    return idx


def _derive(idx: LocalIndex, cache: Path) -> H.History:
    return H.derive(H.Reader(IndexCache(R.Http(timeout=10), cache), idx.url), today="2026-11-27")


def test_every_release_is_read_from_the_index_and_the_wheels(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    with serve(idx):
        h = _derive(idx, tmp_path / "cache")
    assert h.problems == []
    torch = [r for r in h.rows["pytorch"] if r["project"] == "torch"]
    assert [r["version"] for r in torch] == ["2.99.0"]  # the release candidate is not a release
    (t,) = torch
    assert t["requires_python"] == ">=3.12" and t["date"] == "2026-11-20"
    assert {(f["platform"], f["min_os"], tuple(f["pythons"])) for f in t["files"]} == {
        ("linux-x86_64", "2.28", ("3.12", "3.13t")), ("macos-arm64", "14.0", ("3.12",)), ("windows-x86_64", None, ("3.12",))}
    assert t["builds"] == {"linux-x86_64": "cu130", "windows-x86_64": "cu130"}  # from torch/version.py in the wheel
    (tv,) = [r for r in h.rows["pytorch"] if r["project"] == "torchvision"]
    assert tv["torch"] == "2.99.0"
    (tf,) = h.rows["tensorflow"]
    assert tf["builds"]["linux-x86_64"] == {"cuda": "11.8", "cudnn": "8",
                                            "arch": ["sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"]}
    (jax,) = h.rows["jax"]
    assert jax["extras"] == {"cuda13": ["jax-cuda13-plugin[with-cuda]<=0.99.0,>=0.99.0", "jaxlib<=0.99.0,>=0.99.0"]}
    table = H.table(h, "pytorch")
    assert table["verified"] is True and table["source"] == [idx.url + "torch/", idx.url + "torchvision/"]


def test_a_second_refresh_reads_only_what_is_new(tmp_path: Path) -> None:
    idx = _index(tmp_path)
    with serve(idx):
        first = _derive(idx, tmp_path / "cache")
        asked = len(idx.requests)
        second = _derive(idx, tmp_path / "cache")
    assert first.stats["metadata"] > 0 and first.stats["member"] > 0
    assert (second.stats["metadata"], second.stats["member"]) == (0, 0) and second.stats["cached"] > 0
    again = [p for p, _ in idx.requests[asked:]]
    assert not any(p.startswith("/files/") for p in again)  # no wheel, metadata or member read again
    assert idx.not_modified == 4  # torch, torchvision, tensorflow, jax: revalidated, 304 (the others are 404)
    assert second.rows == first.rows


def test_tested_configurations_are_read_from_tensorflows_docs() -> None:
    """Rows of the GPU table of https://github.com/tensorflow/docs/blob/7c3650212740204359d4ceae481abc79345541be/
    site/en/install/source.md (copied as they are)."""
    text = ("### Linux\n\n#### CPU\n\n<table>\n<tr><td>tensorflow-2.13.0</td><td>3.8-3.11</td><td>Clang 16.0.0</td>"
            "<td>Bazel 5.3.0</td></tr>\n</table>\n\n#### GPU\n\n<table>\n"
            "<tr><th>Version</th><th>Python version</th><th>Compiler</th><th>Build tools</th><th>cuDNN</th><th>CUDA</th></tr>\n"
            "<tr><td>tensorflow-2.13.0</td><td>3.8-3.11</td><td>Clang 16.0.0</td><td>Bazel 5.3.0</td><td>8.6</td><td>11.8</td></tr>\n"
            "<tr><td>tensorflow-2.2.0</td><td>3.5-3.8</td><td>GCC 7.3.1</td><td>Bazel 2.0.0</td><td>7.6</td><td>10.1</td></tr>\n"
            "<tr><td>tensorflow_gpu-1.15.0</td><td>2.7, 3.3-3.7</td><td>GCC 7.3.1</td><td>Bazel 0.26.1</td><td>7.4</td><td>10.0</td></tr>\n"
            "</table>\n")
    assert H.tested_configs(text) == [
        {"version": "2.13", "python_min": "3.8", "python_max": "3.11", "cuda": "11.8", "cudnn": "8.6"},
        {"version": "2.2", "python_min": "3.5", "python_max": "3.8", "cuda": "10.1", "cudnn": "7.6"}]


@pytest.mark.parametrize(("tag", "expected"), [
    ("manylinux_2_28_aarch64", (["linux-aarch64"], "2.28")), ("manylinux2014_x86_64", (["linux-x86_64"], "2.17")),
    ("manylinux1_x86_64", (["linux-x86_64"], "2.5")), ("macosx_14_0_arm64", (["macos-arm64"], "14.0")),
    ("macosx_11_0_universal2", (["macos-arm64", "macos-x86_64"], "11.0")), ("win_amd64", (["windows-x86_64"], None)),
    ("musllinux_1_2_x86_64", None),
])
def test_platform_tags_give_the_platform_and_its_minimum_os(tag: str, expected: object) -> None:
    assert H.platform_of(tag) == expected
