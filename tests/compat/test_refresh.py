"""The maintainers' refresh tool against a local index on 127.0.0.1 (tests/compat/index_server.py).

The wheels carry a shared library with REAL GPU code: compiled here by nvcc (sm_75 + sm_86 cubins and
compute_90 PTX) when nvcc is on PATH, else the committed copy built by tests/compat/fixtures/make_gpu_library.sh.
cuobjdump comes from the nvidia-cuda-cuobjdump wheel in the test extra; these tests are never skipped.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from gpusetup.compat import derive
from gpusetup.compat import refresh as R
from gpusetup.runner import SubprocessRunner
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def gpu_library(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A shared library with real cubins for sm_75 and sm_86 and compute_90 PTX."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return (FIXTURES / "libgs_kernels.so").read_bytes()
    out = tmp_path_factory.mktemp("nvcc") / "libgs_kernels.so"
    subprocess.run(["sh", str(FIXTURES / "make_gpu_library.sh"), str(out)], check=True, timeout=300)
    return out.read_bytes()


@pytest.fixture(scope="module")
def cuobjdump() -> str:
    tool = R.find_cuobjdump(SubprocessRunner())
    assert tool, "cuobjdump is missing: the test extra installs nvidia-cuda-cuobjdump (pip install -e .[test])"
    return tool


TORCH_REQS = (
    'cuda-toolkit[cublas,cudart]==13.0.2; platform_system == "Linux"',
    'nvidia-cudnn-cu13==9.20.0.48; platform_system == "Linux"',
    'filelock',
    'sympy>=1.13.3',
)


def _torch_index(tmp_path: Path, lib: bytes) -> LocalIndex:
    idx = LocalIndex(tmp_path)
    for py in ("cp311", "cp312", "cp313", "cp313t"):
        for plat in ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64"):
            reqs = TORCH_REQS if "linux" in plat else TORCH_REQS[2:]
            members = {"torch/__init__.py": b"", "torch/lib/libtorch_cuda.so": lib} if "linux" in plat else {}
            abi = py
            w = build_wheel(tmp_path, f"torch-2.99.1-{py.rstrip('t')}-{abi}-{plat}.whl",
                            metadata("torch", "2.99.1", ">=3.11", reqs), members)
            idx.add("torch", w, ">=3.11")
    # an older point release of the same series, and an older series with a Python the newer one lacks
    idx.add("torch", build_wheel(tmp_path, "torch-2.99.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                 metadata("torch", "2.99.0", ">=3.11", TORCH_REQS)), ">=3.11")
    idx.add("torch", build_wheel(tmp_path, "torch-2.98.0-cp310-cp310-manylinux_2_28_x86_64.whl",
                                 metadata("torch", "2.98.0", ">=3.10", ('nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"',)),
                                 ), ">=3.10")
    return idx


def _ctx(index: LocalIndex, **kw: object) -> derive.Context:
    return derive.Context(R.Http(timeout=10), SubprocessRunner(), derive.Options(index_url=index.url, today="2026-11-24", **kw))


# ------------------------------------------------------------------------------------------ index


@pytest.mark.parametrize("form", ["json", "html"])
def test_index_pages_pep691_and_pep503_give_the_same_files(tmp_path: Path, form: str) -> None:
    idx = _torch_index(tmp_path, b"\0")
    idx.force = form
    idx.pep658 = True
    with serve(idx):
        files, page = R.list_files(R.Http(), idx.url, "torch")
    assert page.endswith("/simple/torch/")
    assert len(files) == 14
    f = next(f for f in files if f.filename == "torch-2.99.1-cp313-cp313t-manylinux_2_28_aarch64.whl")
    assert f.requires_python == ">=3.11"
    assert f.metadata_url and f.metadata_url.endswith(".whl.metadata")
    assert f.url.startswith("http://127.0.0.1:")


def test_wheel_names_give_version_variant_python_and_platform() -> None:
    w = R.parse_wheel(R.IndexFile("torch-2.15.0+cu132-cp313-cp313t-manylinux_2_28_aarch64.whl", "u"))
    assert w is not None
    assert (w.version, w.local, w.pythons, w.platforms, w.series) == ("2.15.0", "cu132", ("3.13t",), ("linux-aarch64",), "2.15")
    w = R.parse_wheel(R.IndexFile("jax_cuda13_pjrt-0.12.0.1-py3-none-manylinux_2_27_x86_64.whl", "u"))
    assert w is not None and w.pythons == ("py3",) and w.platforms == ("linux-x86_64",)
    w = R.parse_wheel(R.IndexFile("torch-2.9.1-cp314-cp314-win_amd64.whl", "u"))
    assert w is not None and w.platforms == ("windows-x86_64",) and w.local is None
    assert R.parse_wheel(R.IndexFile("torch-2.9.1.tar.gz", "u")) is None


# ------------------------------------------------------------------------------------- metadata


def test_metadata_is_read_by_range_requests_without_downloading_the_wheel(tmp_path: Path) -> None:
    big = random.Random(1).randbytes(3 << 20)  # incompressible: the wheel is > 3 MiB
    idx = LocalIndex(tmp_path)
    w = build_wheel(tmp_path, "torch-2.99.1-cp312-cp312-manylinux_2_28_x86_64.whl",
                    metadata("torch", "2.99.1", ">=3.11", TORCH_REQS), {"torch/lib/big.so": big})
    idx.add("torch", w)
    http = R.Http()
    with serve(idx):
        files, _ = R.list_files(http, idx.url, "torch")
        meta = R.wheel_metadata(http, files[0])
    assert meta.how.startswith("METADATA read from the wheel by HTTP range")
    assert meta.requires_python == ">=3.11"
    assert http.bytes < 200_000 < w.stat().st_size
    assert all(rng for path, rng in idx.requests if path.startswith("/files/"))
    pins = R.cuda_pins(R.requirements_for(meta))
    assert (pins.cuda, pins.variant, pins.cudnn) == ("13.0.2", "cu130", "==9.20.0.48")


def test_pep658_metadata_file_is_used_when_the_index_offers_it(tmp_path: Path) -> None:
    idx = _torch_index(tmp_path, b"\0")
    idx.pep658 = True
    http = R.Http()
    with serve(idx):
        files, _ = R.list_files(http, idx.url, "torch")
        meta = R.wheel_metadata(http, files[0])
    assert meta.how == "PEP 658 .metadata file"
    assert not [p for p, rng in idx.requests if rng]


def test_requires_dist_markers_and_cuda_pins() -> None:
    meta = R.parse_metadata(metadata("x", "1", None, (
        'nvidia-cuda-runtime-cu12==12.4.127; platform_system == "Linux" and platform_machine == "x86_64"',
        'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"',
        'nvidia-cuda-runtime-cu12>=12.5.82,<13; extra == "and-cuda"',
    )), "test")
    assert R.cuda_pins(R.requirements_for(meta)).variant == "cu124"
    assert R.cuda_pins(R.requirements_for(meta, machine="aarch64")).evidence == []  # CPU-only on aarch64
    assert R.cuda_pins(R.requirements_for(meta, system="Windows")).cuda is None
    tf = R.parse_metadata(metadata("tensorflow", "2.21.0", ">=3.10", (
        'nvidia-cuda-runtime-cu12<13.0,>=12.5.82; extra == "and-cuda"',)), "test")
    assert R.cuda_pins(R.requirements_for(tf)).cuda is None
    pins = R.cuda_pins(R.requirements_for(tf, extras=["and-cuda"]))
    assert (pins.cuda, pins.cuda_major, pins.variant) == (">=12.5.82", 12, None)


# ------------------------------------------------------------------------------------ GPU code


def test_cuobjdump_lists_the_real_cubins_and_ptx(tmp_path: Path, gpu_library: bytes, cuobjdump: str) -> None:
    lib = tmp_path / "libgs_kernels.so"
    lib.write_bytes(gpu_library)
    code = R.gpu_code(SubprocessRunner(), cuobjdump, lib)
    assert code.sass == ["7.5", "8.6"]
    assert code.ptx == ["9.0"] and code.ptx_max == "9.0"
    assert code.specific == []


def test_cuobjdump_on_a_library_without_gpu_code(tmp_path: Path, cuobjdump: str) -> None:
    plain = tmp_path / "plain.so"
    plain.write_bytes(Path(R.__file__).read_bytes())  # not even ELF: cuobjdump says so, no arch is invented
    code = R.gpu_code(SubprocessRunner(), cuobjdump, plain)
    assert (code.sass, code.ptx) == ([], [])


def test_parse_cuobjdump_keeps_arch_specific_cubins_apart() -> None:
    elf = "ELF file    1: libtorch_cuda.1.sm_90.cubin\nELF file    2: libtorch_cuda.2.sm_90a.cubin\n" \
          "ELF file    3: libtorch_cuda.3.sm_120.cubin\nELF file    4: x.4.sm_100f.cubin\n"
    code = R.parse_cuobjdump(elf, "PTX file    1: libtorch_cuda.1.sm_120.ptx\n")
    assert code.sass == ["9.0", "12.0"] and code.specific == ["9.0a", "10.0f"] and code.ptx == ["12.0"]


# ---------------------------------------------------------------------------------- derive + diff


def test_derive_torch_from_the_local_index(tmp_path: Path, gpu_library: bytes, cuobjdump: str) -> None:
    idx = _torch_index(tmp_path, gpu_library)
    with serve(idx):
        ctx = _ctx(idx, gpu_code=True)
        facts = derive.derive_torch(ctx)
    assert ctx.problems == []
    rel = {f.key["version"]: f for f in facts if f.table == "releases"}
    f = rel["2.99"]
    assert f.values["latest_known"] == "2.99.1"
    assert (f.values["python_min"], f.values["python_max"]) == ("3.11", "3.13")  # 3.13t is not a stable Python
    assert f.values["pypi_default_linux"] == "cu130" and f.values["pypi_default_aarch64"] == "cu130"
    assert f.source == idx.url + "torch/" and f.date == "2026-11-24"
    assert "cuda-toolkit[cublas,cudart]==13.0.2" in f.how
    assert rel["2.98"].values["pypi_default_linux"] == "cu128"
    arch = [f for f in facts if f.table == "arch_lists"]
    assert {f.key["machine"] for f in arch} == {"x86_64", "aarch64"}
    for f in arch:
        assert f.key["variant"] == "cu130" and f.key["torch_min"] == f.key["torch_max"] == "2.99"
        assert f.values["cc"] == ["7.5", "8.6"] and f.values["ptx"] == "9.0"
        assert f.source.endswith(".whl") and "cuobjdump" in f.how


def test_a_library_above_the_size_limit_is_not_fetched(tmp_path: Path, gpu_library: bytes, cuobjdump: str) -> None:
    idx = _torch_index(tmp_path, gpu_library)
    with serve(idx):
        ctx = _ctx(idx, gpu_code=True, max_library_bytes=1024)
        facts = derive.derive_torch(ctx)
    assert not [f for f in facts if f.table == "arch_lists"]
    assert any("above --max-library-mb" in p for p in ctx.problems)


def test_propose_marks_rows_verified_with_provenance_and_shows_a_diff() -> None:
    files = {"pytorch": json.loads((ROOT / "resources/compat/pytorch.json").read_text(encoding="utf-8"))}
    snapshot = json.dumps(files, sort_keys=True)
    facts = [
        derive.Fact("pytorch", "releases", {"version": "2.15"}, {"python_max": "3.16", "latest_known": "2.15.0"},
                    "https://pypi.org/simple/torch/", "python tags", "2026-11-24"),
        derive.Fact("pytorch", "arch_lists", {"torch_min": "2.15", "torch_max": "2.15", "variant": "cu132", "os": "linux",
                                              "machine": "x86_64"}, {"cc": ["7.5", "12.0"], "ptx": None, "note": "n"},
                    "https://files.example/torch.whl", "cuobjdump", "2026-11-24"),
    ]
    after, changes = derive.propose(files, facts)
    row = next(r for r in after["pytorch"]["tables"]["releases"]["rows"] if r["version"] == "2.15")
    assert row["python_max"] == "3.16" and row["verified"] is True
    assert row["provenance"] == {"source": "https://pypi.org/simple/torch/", "how": "python tags", "date": "2026-11-24",
                                 "fields": ["latest_known", "python_max"]}
    assert json.dumps(files, sort_keys=True) == snapshot  # the input is not edited
    arch = next(r for r in after["pytorch"]["tables"]["arch_lists"]["rows"] if r["variant"] == "cu132"
                and r["torch_min"] == "2.15" and r["machine"] == "x86_64")
    assert arch["cc"] == ["7.5", "12.0"] and arch["ptx"] is None
    assert any(c.startswith("changed pytorch/releases version=2.15") for c in changes)
    diff = derive.unified_diff(files, after)
    assert diff.startswith("--- a/resources/compat/pytorch.json")
    assert '+     "python_max": "3.16",' in diff


def test_the_script_writes_a_diff_and_never_edits_the_data(tmp_path: Path, gpu_library: bytes, cuobjdump: str) -> None:
    spec = importlib.util.spec_from_file_location("refresh_compat", ROOT / "scripts" / "refresh_compat.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    data = tmp_path / "data"
    shutil.copytree(ROOT / "resources" / "compat", data)
    snapshot = {p.name: p.read_bytes() for p in data.iterdir()}
    idx = _torch_index(tmp_path, gpu_library)
    out = tmp_path / "out"
    with serve(idx):
        rc = mod.main(["--index-url", idx.url, "--project", "torch", "--gpu-code", "--gpu-code-series", "2.99",
                       "--data", str(data), "--out", str(out), "--cuobjdump", cuobjdump])
    assert rc == 0
    assert {p.name: p.read_bytes() for p in data.iterdir()} == snapshot
    diff = (out / "compat.diff").read_text(encoding="utf-8")
    assert '"version": "2.99"' in diff and '"pypi_default_linux": "cu130"' in diff
    report = json.loads((out / "facts.json").read_text(encoding="utf-8"))
    assert report["index"] == idx.url and report["problems"] == []
    assert all(f["source"] and f["how"] and f["date"] for f in report["facts"])
    proposed = json.loads((out / "proposed" / "pytorch.json").read_text(encoding="utf-8"))
    rows = [r for r in proposed["tables"]["arch_lists"]["rows"] if r["torch_min"] == "2.99"]
    assert {(r["machine"], tuple(r["cc"]), r["ptx"]) for r in rows} == {("x86_64", ("7.5", "8.6"), "9.0"),
                                                                        ("aarch64", ("7.5", "8.6"), "9.0")}


def test_a_fact_covering_part_of_a_row_does_not_make_it_verified() -> None:
    """The index confirms a release's Python range, not its download.pytorch.org variants: an unverified
    row stays unverified, and the change summary says what was confirmed."""
    files = {"pytorch": json.loads((ROOT / "resources/compat/pytorch.json").read_text(encoding="utf-8"))}
    fact = derive.Fact("pytorch", "releases", {"version": "2.15"}, {"python_max": "3.15"}, "https://pypi.org/simple/torch/",
                       "python tags", "2026-11-24", complete=False)
    after, changes = derive.propose(files, [fact])
    row = next(r for r in after["pytorch"]["tables"]["releases"]["rows"] if r["version"] == "2.15")
    assert row["verified"] is False and row["provenance"]["fields"] == ["python_max"]
    assert any("still verified=false: the index confirms only python_max" in c for c in changes)
    new = derive.Fact("pytorch", "releases", {"version": "2.99"}, {"python_max": "3.15"}, "https://pypi.org/simple/torch/",
                      "python tags", "2026-11-24", complete=False, new_row={"cuda_variants": []})
    old = derive.Fact("pytorch", "releases", {"version": "1.13"}, {"python_max": "3.11"}, "https://pypi.org/simple/torch/",
                      "python tags", "2026-11-24", complete=False, new_row={"cuda_variants": []})
    after, _ = derive.propose(files, [new, old])
    rows = after["pytorch"]["tables"]["releases"]["rows"]
    assert rows[0]["version"] == "2.99" and rows[0]["verified"] is False  # newest first: the resolver's order
    assert rows[-1]["version"] == "1.13"


# ------------------------------------------------------------- older torch wheels, big libraries, the cache


def test_a_library_is_streamed_to_disk_in_ranges_and_checked(tmp_path: Path) -> None:
    """torch 1.4-2.6's CUDA library is 0.6-1.25 GB: it is written to disk range by range as it inflates (the
    whole member and its compressed bytes no longer sit in memory), and its CRC-32 is checked."""
    data = random.Random(7).randbytes(1 << 20) * 3  # 3 MiB, compressible
    idx = LocalIndex(tmp_path)
    idx.add("torch", build_wheel(tmp_path, "torch-1.13.1-cp310-cp310-manylinux1_x86_64.whl",
                                 metadata("torch", "1.13.1"), {"torch/lib/libtorch_cuda_cu.so": data}))
    http = R.Http(timeout=10)
    with serve(idx):
        files, _ = R.list_files(http, idx.url, "torch")
        z = R.RemoteZip(http, files[0].url, files[0].size)
        m = z.find(lambda n: n.endswith(".so"))[0]
        out = z.extract(m, tmp_path / "lib.so", limit=8 << 20, chunk=256 << 10)
        with pytest.raises(R.RefreshError, match="larger than the limit"):
            z.extract(m, tmp_path / "small.so", limit=1 << 20)
    assert out.read_bytes() == data
    ranges = [rng for path, rng in idx.requests if path.startswith("/files/") and rng]
    sizes = [int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for r in ranges)]
    assert len(sizes) > 4 and max(sizes) <= 256 << 10


def _old_torch_index(tmp_path: Path, lib: bytes) -> LocalIndex:
    """torch 1.13 and 1.12 as PyPI serves them: no nvidia-* dependencies, the CUDA version in torch/version.py,
    1.13's CUDA code split in libtorch_cuda_cu.so + libtorch_cuda_cpp.so (the member names of
    torch-1.13.1-cp310-cp310-manylinux1_x86_64.whl and torch-1.12.1-…, read by range from PyPI on 2026-11-27)."""
    idx = LocalIndex(tmp_path)
    split = {"torch/version.py": b"__version__ = '1.13.1'\ndebug = False\ncuda = '11.7'\ngit_version = 'x'\nhip = None\n",
             "torch/lib/libtorch_cuda_cu.so": lib, "torch/lib/libtorch_cuda_cpp.so": b"\0" * 64}
    idx.add("torch", build_wheel(tmp_path, "torch-1.13.1-cp310-cp310-manylinux1_x86_64.whl",
                                 metadata("torch", "1.13.1", ">=3.7", ("filelock",)), split))
    single = {"torch/version.py": b"__version__ = '1.12.1'\ncuda = '10.2'\nhip = None\n",
              "torch/lib/libtorch_cuda.so": lib}
    idx.add("torch", build_wheel(tmp_path, "torch-1.12.1-cp310-cp310-manylinux1_x86_64.whl",
                                 metadata("torch", "1.12.1", ">=3.7", ("typing-extensions",)), single))
    return idx


def test_gpu_code_of_torch_1x_wheels_below_the_releases_floor(tmp_path: Path, gpu_library: bytes,
                                                               cuobjdump: str) -> None:
    """PyPI's torch 1.x wheels bundle CUDA (no nvidia-* Requires-Dist to name the variant): the variant comes from
    torch/version.py, the GPU code from libtorch_cuda.so or, for 1.13, the two halves read together. Only their
    arch_lists rows are proposed: the releases table (download.pytorch.org variants) starts at 2.0."""
    from gpusetup.compat.indexcache import IndexCache

    idx = _old_torch_index(tmp_path, gpu_library)
    cache = tmp_path / "cache"
    with serve(idx):
        ctx = derive.Context(R.Http(timeout=10), SubprocessRunner(),
                             derive.Options(index_url=idx.url, today="2026-11-27", gpu_code=True,
                                            gpu_code_series=["1.12", "1.13"], min_series={"torch": "2.0"}),
                             cache=IndexCache(R.Http(timeout=10), cache))
        facts = derive.derive_torch(ctx)
        first = len(idx.requests)
        again = derive.Context(R.Http(timeout=10), SubprocessRunner(), ctx.options,
                               cache=IndexCache(R.Http(timeout=10), cache))
        facts_again = derive.derive_torch(again)
    assert ctx.problems == []
    arch = {f.key["torch_min"]: f for f in facts if f.table == "arch_lists"}
    assert not [f for f in facts if f.table == "releases"]
    assert arch["1.12"].key["variant"] == "cu102" and arch["1.13"].key["variant"] == "cu117"
    assert arch["1.12"].values["cc"] == arch["1.13"].values["cc"] == ["7.5", "8.6"]
    assert "libtorch_cuda_cu.so + torch/lib/libtorch_cuda_cpp.so" in arch["1.13"].values["note"]
    # a second refresh reads no library again: what cuobjdump said is kept with the wheel's URL
    assert again.reads["libraries"] == 0 and again.reads["cached"] >= 3
    assert not [p for p, rng in idx.requests[first:] if rng and p.startswith("/files/")]
    assert [f.values for f in facts_again if f.table == "arch_lists"] == [f.values for f in facts if f.table == "arch_lists"]


# The #error lines of crt/host_config.h in nvidia_cuda_nvcc_cu12-12.4.131-py3-none-manylinux2014_x86_64.whl
# (https://pypi.org/project/nvidia-cuda-nvcc-cu12/12.4.131/), read by range on 2026-11-27.
HOST_CONFIG_12_4 = """\
#if __GNUC__ > 13

#error -- unsupported GNU version! gcc versions later than 13 are not supported! The nvcc flag \
'-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host \
compiler may cause compilation failure or incorrect run time execution. Use at your own risk.

#endif /* __GNUC__ > 13 */
#if (__clang_major__ >= 18) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported HOS clang version! The version must be must be less than 18 and greater than 3.2 .
#endif
#if (__clang_major__ >= 18) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported clang version! clang version must be less than 18 and greater than 3.2 . The nvcc flag \
'-allow-unsupported-compiler' can be used to override this version check.
#endif
#if _MSC_VER < 1910 || _MSC_VER >= 1950
#error -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) are \
supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check.
"""


def test_host_compiler_limits_are_read_from_nvccs_own_header() -> None:
    assert derive.parse_host_config(HOST_CONFIG_12_4) == {"gcc_max": 13, "clang_max": 17, "msvc": "2017-2022"}
    assert derive.parse_host_config("#if __GNUC__ > 9\n") == {"gcc_max": 9, "clang_max": None, "msvc": None}


def test_derive_host_compilers_from_the_nvcc_wheels(tmp_path: Path) -> None:
    idx = LocalIndex(tmp_path)
    for version, header in (("12.4.131", HOST_CONFIG_12_4), ("12.4.99", HOST_CONFIG_12_4.replace("> 13", "> 12")
                                                            .replace("later than 13", "later than 12"))):
        idx.add("nvidia-cuda-nvcc-cu12", build_wheel(
            tmp_path, f"nvidia_cuda_nvcc_cu12-{version}-py3-none-manylinux2014_x86_64.whl",
            metadata("nvidia-cuda-nvcc-cu12", version), {"nvidia/cuda_nvcc/include/crt/host_config.h": header.encode()}))
    with serve(idx):
        facts = derive.derive_host_compilers(_ctx(idx))
    assert len(facts) == 1
    f = facts[0]
    assert f.key == {"cuda": "12.4"} and (f.values["gcc_max"], f.values["clang_max"], f.values["msvc"]) == (13, 17, "2017-2022")
    assert "12.4.99: gcc 12" in f.values["evidence"] and "most permissive is kept" in f.values["evidence"]
    assert f.source.endswith("nvidia_cuda_nvcc_cu12-12.4.131-py3-none-manylinux2014_x86_64.whl")
    files = {"host_compilers": json.loads((ROOT / "resources/compat/host_compilers.json").read_text(encoding="utf-8"))}
    after, _ = derive.propose(files, facts + [derive.Fact("host_compilers", "nvcc_host_compilers", {"cuda": "14.0"},
                                                          {"gcc_max": 16}, "u", "h", "2026-11-27", new_row={"cuda": "14.0"})])
    rows = after["host_compilers"]["tables"]["nvcc_host_compilers"]["rows"]
    row = next(r for r in rows if r["cuda"] == "12.4")
    assert row["verified"] is True and row["provenance"]["source"] == f.source
    assert rows[-1]["cuda"] == "14.0"  # a new toolkit goes last: the table is oldest first


def test_a_library_the_current_cuobjdump_refuses_is_read_with_the_older_one(tmp_path: Path, gpu_library: bytes,
                                                                           cuobjdump: str) -> None:
    """CUDA 13's cuobjdump refuses torch 1.x-2.0's libtorch_cuda.so; its message (recorded on 2026-11-27 on
    torch-1.12.1-cp310-cp310-manylinux1_x86_64.whl) is "cuobjdump fatal   : Support for 'sm_37' has been removed.
    Please use CUDA toolkit 11.8 or earlier." With --cuobjdump-legacy the library is read again with that tool
    and the row says so. (The stand-in below prints that recorded message; the legacy tool is the real one.)"""
    refusing = tmp_path / "cuobjdump-13"
    refusing.write_text("#!/bin/sh\necho \"cuobjdump fatal   : Support for 'sm_37' has been removed. "
                        "Please use CUDA toolkit 11.8 or earlier.\" >&2\nexit 1\n")
    refusing.chmod(0o755)
    idx = _old_torch_index(tmp_path, gpu_library)
    with serve(idx):
        opts = dict(index_url=idx.url, today="2026-11-27", gpu_code=True, gpu_code_series=["1.12"],
                    min_series={"torch": "2.0"}, cuobjdump=str(refusing))
        without = derive.Context(R.Http(timeout=10), SubprocessRunner(), derive.Options(**opts))
        assert not [f for f in derive.derive_torch(without) if f.table == "arch_lists"]
        ctx = derive.Context(R.Http(timeout=10), SubprocessRunner(), derive.Options(**opts, cuobjdump_legacy=cuobjdump))
        facts = [f for f in derive.derive_torch(ctx) if f.table == "arch_lists"]
    assert any("has been removed" in p for p in without.problems)
    assert [f.values["cc"] for f in facts] == [["7.5", "8.6"]]
    assert "read with cuobjdump 1" in facts[0].values["note"] and "has been removed" in facts[0].values["note"]
