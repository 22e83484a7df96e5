"""F23 read right: packed cuDNN versions (7103 = 7.1.3, 8907 = 8.9.7, 90100 = 9.1.0) parsed and compared, and
advice true to the versions in the evidence (cuDNN 7 on TensorFlow 1.x is not a pip nvidia-cudnn-cu12 fix)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpusetup.analyze import analyze_paths, analyze_text
from gpusetup.rules._util import cudnn_version
from gpusetup.versions import Version

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded-issues"
F23 = sorted(RECORDED.glob("F23__*.txt"))


def _f23(path: Path):  # noqa: ANN202
    return next(f for f in analyze_paths([str(path)]).findings if f.catalogue == "F23")


def test_packed_versions() -> None:
    assert cudnn_version("7103") == "7.1.3" and cudnn_version("7005") == "7.0.5"
    assert cudnn_version("8907") == "8.9.7" and cudnn_version("9100") == "9.1.0"
    assert cudnn_version("90100") == "9.1.0" and cudnn_version("5110") == "5.1.10"
    assert cudnn_version("(8, 9, 2)") == "8.9.2"


def test_tf1_newer_minor_is_not_called_older_and_gets_no_pip_fix() -> None:
    f = _f23(RECORDED / "F23__tf-1.4-conda-cudnn-7103-vs-7005__voxelnet-50.txt")
    assert "7.1.3" in f.title and "7.0.5" in f.title and "older" not in f.title.lower()
    assert "7.0.x" in f.title
    assert "nvidia-cudnn-cu12" not in f.fix and "7005" not in f.fix
    assert "conda install cudnn=7.0.5" in f.fix  # the evidence shows a conda environment


def test_jax_outdated_cudnn_in_packed_numbers() -> None:
    f = _f23(RECORDED / "F23__jax-outdated-cudnn-8907-min-9100-conda__jax-feedstock-149.txt")
    assert "8.9.7" in f.title and "9.1.0" in f.title and "JAX" in f.title
    assert "conda-forge" in f.fix and "9.1" in f.fix


def test_two_digit_minor_compared_as_numbers() -> None:
    f = _f23(RECORDED / "F23__jaxlib-conda-cudnn-9.10.1-vs-9.13.1__jaxlib-feedstock-329.txt")
    assert f.title.startswith("An older cuDNN (9.10.1)") and "JAX" in f.title


def test_pytorch_bundled_cudnn_points_at_ld_library_path() -> None:
    f = _f23(RECORDED / "F23__torch-cudnn-850-vs-841-ld-library-path__gladia-928.txt")
    assert "8.4.1" in f.title and "8.5.0" in f.title and "LD_LIBRARY_PATH" in f.fix


@pytest.mark.parametrize("path", F23, ids=lambda p: p.name[:60])
def test_advice_agrees_with_the_versions_in_the_evidence(path: Path) -> None:
    f = _f23(path)
    versions = re.findall(r"\b\d+\.\d+\.\d+\b", f.title)
    assert len(versions) >= 2, f.title
    loaded, needed = Version(versions[0]), Version(versions[1])
    if "older" in f.title.lower():
        assert loaded < needed, f.title
    if (needed.major or 0) < 8:
        assert "nvidia-cudnn-cu" not in f.fix, f.fix
    for packed in re.findall(r"\b\d{4,5}\b", f.title + f.fix):
        assert not packed.startswith(("5", "7", "8", "9")) or len(packed) != 4, f"packed version in advice: {packed}"


def test_same_major_minor_newer_patch_is_not_reported_as_older() -> None:
    text = ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7.6.5 but source "
            "was compiled with: 7.6.4.")
    fs = [f for f in analyze_text(text).findings if f.catalogue == "F23"]
    assert fs and "older" not in fs[0].title.lower()
