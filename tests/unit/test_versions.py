"""The typed values every layer compares with: Version, ComputeCapability and the one kernel-coverage rule."""

from __future__ import annotations

import operator

import pytest

from gpusetup.versions import (
    ComputeCapability,
    Version,
    arch_list_coverage,
    as_version,
    cubin_runs,
    kernel_coverage,
    ptx_runs,
    version_key,
)


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("2.9.0rc1", "2.9.0"),  # a release candidate comes before its release
        ("2.9.0.dev20250101", "2.9.0rc1"),
        ("535.104.05", "535.104.12"),
        ("12.8", "12.10"),  # numeric, not text, order
        ("550.120-0ubuntu1", "560.35.03"),  # a distribution suffix is not part of the version
        ("2.4.0", "2.4.0+cu121"),  # a local label sorts after the plain release
        ("", "0.1"),  # unknown first
    ],
)
def test_order(lower: str, higher: str) -> None:
    assert Version(lower) < Version(higher)
    assert not Version(higher) < Version(lower)
    assert sorted([higher, lower], key=version_key) == [lower, higher]


def test_trailing_zeros_are_equal_and_text_is_kept() -> None:
    assert Version("12.8") == Version("12.8.0") and hash(Version("12.8")) == hash(Version("12.8.0"))
    assert Version("580.65.06") == Version("580.65.6")
    assert str(Version("580.65.06")) == "580.65.06"  # printed as NVIDIA writes it
    assert Version("13").major_minor == (13, 0) and Version("12.8.1").major_minor == (12, 8)
    assert Version("v12.4").release == (12, 4)
    assert Version("12.4.r12.4/compiler.34097967_0").release == (12, 4)


def test_unknown_version_is_falsy_and_compares_with_tuples() -> None:
    assert not Version(None) and not Version("n/a") and Version.parse("junk") is None
    assert Version("3.12") > (3, 9) and Version("25.0.1") >= (25,)
    assert Version.of((3, 12)) == Version("3.12.0")
    assert Version("12.8").same_series("12.8.1") and not Version("12.8").same_series("12.9")
    assert Version("2.9.0rc1").is_prerelease and not Version("2.9.0").is_prerelease


@pytest.mark.parametrize(
    ("text", "cc"),
    [("8.6", (8, 6)), ("sm_86", (8, 6)), ("compute_90", (9, 0)), ("sm_90a", (9, 0)), ("86", (8, 6)),
     ("120", (12, 0)), ("12.0", (12, 0)), ("sm_100f", (10, 0)), (" 7.5 ", (7, 5))],
)
def test_cc_parse_and_serialise(text: str, cc: tuple[int, int]) -> None:
    parsed = ComputeCapability.parse(text)
    assert parsed == cc
    assert str(parsed) == f"{cc[0]}.{cc[1]}"
    assert ComputeCapability.parse(str(parsed)) == parsed


def test_cc_is_an_ordered_tuple() -> None:
    assert ComputeCapability.parse("12.0") > ComputeCapability.parse("8.9")  # not text order
    assert ComputeCapability.parse("7.0") < (7, 5)
    assert ComputeCapability.parse("8.6").sm == "sm_86"
    for bad in (None, "", "x", "8", "sm_"):
        assert ComputeCapability.parse(bad) is None


@pytest.mark.parametrize(
    ("cc", "sass", "ptx", "expected"),
    [
        ("8.6", ["8.0"], [], "sass"),  # same major, newer minor: the sm_80 cubin runs
        ("8.0", ["8.6"], [], None),  # a cubin never runs on an older minor
        ("9.0", ["8.0", "8.6"], [], None),  # nor on another major
        ("9.0", ["8.0", "8.6"], ["8.6"], "ptx"),  # PTX JIT-compiles for any newer GPU
        ("12.0", ["9.0"], ["9.0"], "ptx"),
        ("7.5", ["8.0"], ["8.0"], None),  # PTX never runs on an older GPU
        ("8.9", ["8.9"], ["8.0"], "sass"),  # native wins over PTX
        (None, ["8.0"], ["8.0"], None),
    ],
)
def test_kernel_coverage_table(cc: str | None, sass: list[str], ptx: list[str], expected: str | None) -> None:
    assert kernel_coverage(cc, sass, ptx) == expected


def test_arch_list_coverage_reads_compiler_names() -> None:
    torch_cu118 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert arch_list_coverage((8, 9), torch_cu118) == "sass"
    assert arch_list_coverage((12, 0), torch_cu118) is None
    assert arch_list_coverage((12, 0), [*torch_cu118, "compute_90"]) == "ptx"
    assert arch_list_coverage((3, 7), torch_cu118) is None


def test_every_surface_uses_the_one_rule() -> None:
    """The rules, the resolver and the container generator answer coverage from the same function."""
    from gpusetup.generate.select import coverage
    from gpusetup.rules._util import arch_supports

    for cc, sass, ptx in [((8, 6), ["8.0"], []), ((9, 0), ["8.6"], ["8.6"]), ((7, 5), ["8.0"], ["8.0"])]:
        want = kernel_coverage(cc, sass, ptx)
        assert coverage(cc, sass, ptx, None) == want
        arches = [f"sm_{s.replace('.', '')}" for s in sass] + [f"compute_{p.replace('.', '')}" for p in ptx]
        assert arch_supports(cc, arches) is (want is not None)


def test_a_compute_capability_equals_its_text_and_hashes_as_its_tuple() -> None:
    cc = ComputeCapability(8, 6)
    assert cc == "8.6" and operator.eq("8.6", cc) and cc != "8.9" and cc == (8, 6) and cc == ComputeCapability.parse("sm_86")
    assert hash(cc) == hash((8, 6)) and {cc: 1}[(8, 6)] == 1
    assert str(cc) == "8.6" and cc.sm == "sm_86" and ComputeCapability(12, 0) > cc


def test_as_version_keeps_unknown_as_none_and_the_text_as_written() -> None:
    assert as_version(None) is None
    v = as_version("580.65.06")
    assert type(v) is Version and str(v) == "580.65.06" and v == "580.65.6"
    odd = as_version("n/a")  # no version in it: falsy, but written back unchanged
    assert odd is not None and not odd and str(odd) == "n/a"
    assert Version("2.4.0+cu121").packaging is not None and Version("junk").packaging is None


def test_the_sass_and_ptx_rules_that_kernel_coverage_rests_on() -> None:
    assert cubin_runs(ComputeCapability(8, 0), ComputeCapability(8, 6))
    assert not cubin_runs(ComputeCapability(8, 6), ComputeCapability(8, 0))
    assert not cubin_runs(ComputeCapability(8, 0), ComputeCapability(9, 0))  # SASS never crosses a major
    assert ptx_runs(ComputeCapability(8, 0), ComputeCapability(9, 0)) and not ptx_runs((9, 0), (8, 6))


@pytest.mark.parametrize(("text", "expected", "abi"), [
    ("3.13", "3.13", "cp313"), ("3.13.1", "3.13", "cp313"), ("3.13t", "3.13t", "cp313t"),
    ("3.13.0t", "3.13t", "cp313t"), ("cp314t", "3.14t", "cp314t"), ("cp37", "3.7", "cp37m"),
    ("3.14.0 experimental free-threading build", "3.14t", "cp314t"), ("3.12.0rc1", "3.12", "cp312"),
])
def test_python_version_reads_free_threaded_builds(text: str, expected: str, abi: str) -> None:
    from gpusetup.versions import PythonVersion

    py = PythonVersion.parse(text)
    assert py is not None and str(py) == expected and py.abi == abi
    assert py.release == expected.rstrip("t")


def test_planned_python_reads_ranges_as_their_lowest_release() -> None:
    from gpusetup.versions import PythonVersion, planned_python

    assert str(planned_python("3.10–3.13")) == "3.10" and str(planned_python("≥ 3.12")) == "3.12"
    assert planned_python("any") is None and PythonVersion.parse("3.10–3.13") is None
    assert PythonVersion.parse("3.13") < PythonVersion.parse("3.13t") < PythonVersion.parse("3.14")
