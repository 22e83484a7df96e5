"""Image choice over a table of real host machines: the chosen tag and build, or the refusal."""

from __future__ import annotations

import pytest

from gpusetup.enrich import enrich
from gpusetup.generate import facts
from gpusetup.generate.select import Refusal, Selection, choose, coverage
from gpusetup.model import Containers, Driver, Gpu, Machine, System
from gpusetup.versions import ComputeCapability, Version

from .hosts import HOSTS

# host, framework → (FROM reference, first pip requirement) or ("REFUSED", words the reason must contain)
EXPECT = {
    ("rtx3080-595", "pytorch"): ("nvidia/cuda:13.0.2-base-ubuntu24.04", "torch==2.14.1", "cu132"),
    ("rtx3080-595", "tensorflow"): ("nvidia/cuda:12.5.1-base-ubuntu24.04", "tensorflow[and-cuda]==2.21.0", "and-cuda"),
    ("rtx3080-595", "jax"): ("nvidia/cuda:13.0.2-base-ubuntu24.04", "jax[cuda13]==0.12.0.1", "cuda13"),
    # driver 535 = CUDA 12.2: the image must not be newer; the cu126 wheel runs by minor-version compatibility
    ("rtx4090-535", "pytorch"): ("nvidia/cuda:12.2.2-base-ubuntu22.04", "torch==2.14.1", "cu126"),
    ("rtx4090-535", "tensorflow"): ("nvidia/cuda:12.2.2-base-ubuntu22.04", "tensorflow[and-cuda]==2.21.0", "and-cuda"),
    # JAX needs Python 3.12: no nvidia/cuda image <= 12.2 has it, so a plain Ubuntu 24.04 (wheels bring CUDA)
    ("rtx4090-535", "jax"): ("ubuntu:24.04", "jax[cuda12]==0.12.0.1", "cuda12"),
    ("p100-510", "pytorch"): ("ubuntu:24.04", "torch==2.7.1", "cu118"),
    ("p100-510", "tensorflow"): ("ubuntu:22.04", "tensorflow[and-cuda]==2.14.1", "and-cuda"),
    ("p100-510", "jax"): ("REFUSED", "525.60.13"),
    ("p2000-525", "pytorch"): ("nvidia/cuda:12.0.1-base-ubuntu22.04", "torch==2.14.1", "cu126"),
    ("rtx3060-570", "pytorch"): ("nvidia/cuda:12.6.3-base-ubuntu24.04", "torch==2.14.1", "cu126"),
    ("h100-590", "pytorch"): ("nvidia/cuda:13.0.2-base-ubuntu24.04", "torch==2.14.1", "cu130"),
    ("h100-590", "jax"): ("nvidia/cuda:13.0.2-base-ubuntu24.04", "jax[cuda13]==0.12.0.1", "cuda13"),
    ("rtx3080-win-536", "pytorch"): ("nvidia/cuda:12.2.2-base-ubuntu22.04", "torch==2.14.1", "cu126"),
    ("mixed-410", "pytorch"): ("REFUSED", "450.80.02"),
    ("3x3090-515", "pytorch"): ("nvidia/cuda:11.7.1-base-ubuntu22.04", "torch==2.7.1", "cu118"),
    ("v100x8-450", "pytorch"): ("REFUSED", "450.80.02"),
    ("gtx1660ti-418", "tensorflow"): ("REFUSED", "too old"),
    ("k80-470", "pytorch"): ("ubuntu:24.04", "torch==2.7.1", "cu118"),
    # TensorFlow 2.14.1's wheels (build_info.py: sm_35 ...) and its cuDNN 8.7.0.84 (cuobjdump: sm_35 ...) run on
    # Kepler 3.5+; the data said min_cc 5.0 until 2026-11-27
    ("k80-470", "tensorflow"): ("ubuntu:22.04", "tensorflow[and-cuda]==2.14.1", "and-cuda"),
    ("k20-470", "pytorch"): ("REFUSED", "compute capability 3.5"),
    ("rtx5090-570", "pytorch"): ("nvidia/cuda:12.8.1-base-ubuntu24.04", "torch==2.11.0", "cu128"),
    ("gtx1080ti-580", "pytorch"): ("nvidia/cuda:12.6.3-base-ubuntu24.04", "torch==2.14.1", "cu126"),
    ("no-driver", "pytorch"): ("REFUSED", "No NVIDIA driver"),
    ("macos", "jax"): ("REFUSED", "macOS"),
    ("jetson", "pytorch"): ("REFUSED", "Jetson"),
    ("grace-h100-580", "pytorch"): ("nvidia/cuda:13.0.2-base-ubuntu24.04", "torch==2.14.1", "cu130"),
    ("grace-h100-580", "tensorflow"): ("REFUSED", "aarch64"),
}


@pytest.mark.parametrize(("host", "framework"), sorted(EXPECT))
def test_choice(host: str, framework: str) -> None:
    result = choose(HOSTS[host].machine(), framework)
    want = EXPECT[(host, framework)]
    if want[0] == "REFUSED":
        assert isinstance(result, Refusal), f"expected a refusal, got {getattr(result, 'ref', result)}"
        assert want[1] in result.reason + " " + result.alternative
        assert result.alternative
        return
    assert isinstance(result, Selection), getattr(result, "reason", result)
    assert result.ref == want[0]
    assert result.build is not None
    assert result.build["packages"][0] == want[1]
    assert result.build["variant"] == want[2]
    assert not result.gpus_left_out


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("framework", ["pytorch", "tensorflow", "jax"])
def test_never_an_image_newer_than_the_driver(host: str, framework: str) -> None:
    """The invariant of the whole feature, over every host: image CUDA <= driver CUDA, GPUs covered."""
    machine = HOSTS[host].machine()
    result = choose(machine, framework)
    if isinstance(result, Refusal):
        assert result.reason and result.alternative
        return
    dcuda, _ = facts.driver_cuda(machine)
    assert dcuda is not None
    assert result.image_cuda <= dcuda
    for g in result.gpus:
        assert result.coverage[g.index] in ("sass", "ptx", "min_cc", "unknown")
        if g.cc and result.source == "cuda":
            assert facts.cuda_supports_cc(result.image_cuda, g.cc)
    if result.build:
        bcuda = facts.mm(result.build["cuda"])
        need = facts.family_minimum(bcuda[0], machine.system.os == "windows")
        assert facts.vt(machine.driver.version) >= facts.vt(need)


def test_forced_cuda_newer_than_driver_is_refused_with_the_toolkit_error() -> None:
    result = choose(HOSTS["rtx4090-535"].machine(), "pytorch", cuda="12.8")
    assert isinstance(result, Refusal)
    assert "unsatisfied condition: cuda>=12.8" in result.reason
    assert "--cuda 12.2" in result.alternative and "570.26" in result.alternative


def test_forced_cuda_the_driver_supports_is_used() -> None:
    result = choose(HOSTS["rtx3080-595"].machine(), "pytorch", cuda="12.6")
    assert isinstance(result, Selection)
    assert result.tag == "12.6.3-base-ubuntu24.04"


def test_flavours_come_from_the_tag_list_not_a_formula() -> None:
    """12.3 spells cuDNN 'cudnn9', 12.2 'cudnn8', 12.4+ plain 'cudnn' (docker-gui-style.md 1.1)."""
    m = HOSTS["rtx4090-535"].machine()
    sel = choose(m, "pytorch", flavour="cudnn-devel", cuda="12.2")
    assert isinstance(sel, Selection) and sel.tag == "12.2.2-cudnn8-devel-ubuntu22.04"
    rows = {(r["cuda"], r["os"]): r for r in facts.table("nvidia_cuda")["rows"]}
    assert rows[("12.3.2", "ubuntu22.04")]["tags"]["cudnn-runtime"] == "12.3.2-cudnn9-runtime-ubuntu22.04"
    assert "cudnn-runtime" not in rows[("12.5.1", "ubuntu24.04")]["tags"]  # no cudnn tags for that set


def test_windows_tensorflow_goes_to_a_linux_container_and_says_why() -> None:
    sel = choose(HOSTS["rtx3080-win-536"].machine(), "tensorflow")
    assert isinstance(sel, Selection)
    assert any(r.option == "tensorflow GPU on native Windows" for r in sel.rejected)
    assert any("WSL2" in w for w in sel.warnings)


def test_old_gpu_gets_a_cudnn_pin() -> None:
    sel = choose(HOSTS["p2000-525"].machine(), "tensorflow")
    assert isinstance(sel, Selection)
    assert sel.extra_packages == ["nvidia-cudnn-cu12==9.10.2.21"]
    new = choose(HOSTS["rtx3080-595"].machine(), "tensorflow")
    assert isinstance(new, Selection) and new.extra_packages == []


def test_mixed_gpus_are_all_covered_or_named() -> None:
    m = Machine(system=System(os="linux", arch="x86_64"), driver=Driver(version="580.95.05", cuda_driver_version="13.0"),
                gpus=[Gpu(vendor="nvidia", name="Tesla K80", index=0, compute_capability="3.7"),
                      Gpu(vendor="nvidia", name="RTX 3090", index=1, compute_capability="8.6")],
                containers=Containers())
    sel = choose(m, "pytorch")
    assert isinstance(sel, Selection)
    # only cu118 builds still carry sm_37, so gpusetup picks one that covers both GPUs
    assert sel.build["variant"] == "cu118" and not sel.gpus_left_out


def test_official_and_ngc_images() -> None:
    sel = choose(HOSTS["rtx3060-570"].machine(), "pytorch", image_source="official")
    assert isinstance(sel, Selection) and sel.ref == "pytorch/pytorch:2.11.0-cuda12.8-cudnn9-runtime"
    old = choose(HOSTS["rtx4090-535"].machine(), "pytorch", image_source="official")
    assert isinstance(old, Refusal) and "12.2" in " ".join(r.reason for r in old.rejected)
    ngc = choose(HOSTS["h100-590"].machine(), "pytorch", image_source="ngc")
    assert isinstance(ngc, Selection) and ngc.ref == "nvcr.io/nvidia/pytorch:25.12-py3"
    assert choose(HOSTS["h100-590"].machine(), "jax", image_source="ngc").reason  # no NGC JAX in the list


def test_coverage_rules() -> None:
    assert coverage((8, 9), ["8.6"], [], None) == "sass"  # Ada runs the sm_86 cubin
    assert coverage((8, 0), ["8.6"], [], None) is None  # but not the other way round
    assert coverage((12, 0), ["9.0"], ["9.0"], None) == "ptx"
    assert coverage((6, 1), ["7.5"], ["12.0"], None) is None
    assert coverage((5, 0), [], [], "5.2") is None
    assert coverage(None, ["8.6"], [], None) == "unknown"


def test_bad_options_raise_value_error() -> None:
    m = HOSTS["rtx3080-595"].machine()
    for kwargs in ({"image_source": "quay"}, {"flavour": "slim"}, {"cuda": "twelve"}):
        with pytest.raises(ValueError):
            choose(m, "pytorch", **kwargs)
    with pytest.raises(ValueError):
        choose(m, "mxnet")


def test_driver_cuda_is_derived_from_the_driver_version_when_not_reported() -> None:
    cuda, src = facts.driver_cuda(HOSTS["3x3090-515"].machine())
    assert cuda == (11, 7) and "515.65.01" in src


@pytest.mark.parametrize(("fixture", "want_tag", "want_cc"), [
    ("geforce-rtx-3080__595.58.03__telegraf.xml", "13.0.2-base-ubuntu24.04", (8, 6)),
    ("tesla-p100-pcie-16gb__510.47.03__netdata.xml", "24.04", (6, 0)),
    ("geforce-rtx-4090__535.86.05__netdata.xml", "12.2.2-base-ubuntu22.04", (8, 9)),
])
def test_real_nvidia_smi_xml_end_to_end(fixtures, fixture: str, want_tag: str, want_cc: tuple[int, int]) -> None:
    """From a recorded `nvidia-smi -q -x` (no compute capability in it) to the chosen image: the GPU's
    compute capability then comes from the PCI id through the chip rule, applied once by the enrich step that
    runs after detection (the generator reads the Gpu it filled)."""
    from gpusetup.probe.smi import parse_smi_xml

    snap = parse_smi_xml((fixtures / "nvidia-smi-xml" / fixture).read_text(encoding="utf-8"))
    m = Machine(system=System(os="linux", arch="x86_64"), gpus=snap.gpus,
                driver=Driver(version=snap.driver_version, cuda_driver_version=snap.cuda_version))
    assert [t.cc for t in facts.gpu_targets(m)] == [None]  # not enriched: the generator does not classify
    enrich(m)
    targets = facts.gpu_targets(m)
    assert [t.cc for t in targets] == [want_cc]
    sel = choose(m, "pytorch")
    assert isinstance(sel, Selection) and sel.tag == want_tag


def test_ngc_on_a_data_centre_gpu_uses_forward_compatibility() -> None:
    """TensorFlow 23.01 (CUDA 12.0) on a Tesla P100 with driver 510.47.03 (CUDA 11.6): the release notes list
    510.47 (or later R510) for data-centre GPUs, so it runs; on a GeForce with the same driver age it does not."""
    sel = choose(HOSTS["p100-510"].machine(), "tensorflow", image_source="ngc")
    assert isinstance(sel, Selection) and sel.ref == "nvcr.io/nvidia/tensorflow:23.01-tf2-py3"
    assert any("forward-compatibility package" in w and "510.47" in w for w in sel.why)
    assert any("forward compatibility" in w for w in sel.warnings)
    m = HOSTS["p100-510"].machine()
    m.driver.version = Version("495.29.05")  # a branch the notes do not list (Linux R495 release)
    refused = choose(m, "tensorflow", image_source="ngc")
    assert isinstance(refused, Refusal)
    assert any("covers only driver branches" in r.reason for r in refused.rejected)
    g = HOSTS["p100-510"].machine()
    g.gpus[0].name = "NVIDIA GeForce GTX 1080"
    g.gpus[0].compute_capability = ComputeCapability(6, 1)
    refused = choose(g, "tensorflow", image_source="ngc")
    assert isinstance(refused, Refusal)
    assert any("data-centre GPUs only" in r.reason for r in refused.rejected)


_CJK = __import__("re").compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("source", ["cuda", "official", "ngc"])
def test_every_reason_and_warning_is_a_message_with_chinese_words(host: str, source: str) -> None:
    """The generator's words are data: each reason, warning and rejection has a code whose English rendering
    is exactly the text the CLI prints, and Chinese words for the wizard."""
    from gpusetup.messages import render
    from gpusetup.model import Message

    seen = 0
    for framework in ("pytorch", "tensorflow", "jax"):
        result = choose(HOSTS[host].machine(), framework, image_source=source)
        pairs: list[tuple[str, Message]] = []
        if isinstance(result, Refusal):
            pairs += [(result.reason, result.reason_code), (result.alternative, result.alternative_code)]
        else:
            assert len(result.why) == len(result.why_codes) and result.why
            pairs += list(zip(result.why, result.why_codes, strict=True))
        assert len(result.warnings) == len(result.warning_codes)
        pairs += list(zip(result.warnings, result.warning_codes, strict=True))
        pairs += [(r.reason, Message(r.code, r.params)) for r in result.rejected]
        for english, code in pairs:
            assert code.code.startswith("docker."), code
            assert render(code) == english
            zh = render(code, "zh_CN")
            assert _CJK.search(zh) and zh != english, (code, zh)
            seen += 1
    assert seen >= 3
