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
