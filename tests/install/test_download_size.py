"""The plan's download size, read from a real package index on 127.0.0.1 (tests/install/stand_ins.py): exact
when the index serves PEP 691 JSON with PEP 700 sizes (and PEP 658 metadata for the dependencies), the
table estimate labelled as one when it does not or cannot be reached, and the exact figure is what real pip
then downloads for that install."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.parse
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from gpusetup.compat import download_size as ds
from gpusetup.install import add_download_size, build_plan, execute
from gpusetup.messages import render
from gpusetup.versions import Version

from .stand_ins import PLENTY, Index, _handler, build_wheel, machine, torch_plan

pytestmark = pytest.mark.network
PY = f"{sys.version_info.major}.{sys.version_info.minor}"




@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory):
    """torch (cpu) → tinydep>=1.0 (1.0 and 0.9 offered) → leaf; plus requirements whose markers exclude them."""
    root = tmp_path_factory.mktemp("sized-index")
    torch = build_wheel(root, "torch", "2.9.1+cpu", payload=300_000, requires=(
        "tinydep>=1.0", "notforus; python_version < '3.0'", "onlyextra; extra == 'opt'"))
    dep = build_wheel(root, "tinydep", "1.0", payload=40_000, requires=("leaf>=2",))
    old = build_wheel(root, "tinydep", "0.9", payload=90_000)
    leaf = build_wheel(root, "leaf", "2.0", payload=7_000)
    leaf1 = build_wheel(root, "leaf", "1.0", payload=5_000)
    excluded = build_wheel(root, "notforus", "1.0", payload=1_000_000)
    idx = Index(root)
    idx.slow = False
    idx.json = True
    newer_leaf = build_wheel(root, "leaf", "3.0", payload=3_000)  # only on the extra index
    idx.layouts = {"cpu": [torch, dep, old, leaf, leaf1, excluded], "extra": [newer_leaf]}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield idx, {"torch": torch, "tinydep": dep, "leaf": leaf}
    server.shutdown()
    server.server_close()


def _plan(url: str, tmp_path: Path):
    m = machine()
    m.system.python = Version(f"{PY}.0")
    return build_plan(torch_plan(f"{url}/whl/cpu", ["torch==2.9.1+cpu"], "cpu"), m, f"venv:{tmp_path / 'env'}",
                      with_pip=False, host_pip=True)  # the host's pip: no pip update (from PyPI) in the plan


def test_json_index_gives_the_exact_size_of_what_pip_needs(sized, tmp_path: Path) -> None:
    idx, wheels = sized
    plan = _plan(idx.url, tmp_path)
    assert plan.download["source"] == "estimate" and plan.download["reason"] == "offline"  # before the index is asked
    add_download_size(plan)
    want = sum(w.stat().st_size for w in wheels.values())
    assert plan.download["source"] == "index", plan.download
    assert (plan.download["bytes"], plan.download["files"]) == (want, 3)
    en = [render(m, "en") for m in plan.size_messages()]
    zh = [render(m, "zh_CN") for m in plan.size_messages()]
    assert en[0] == f"Download: {ds.human(want)}, from the package index (3 files)."
    assert zh[0] == f"下载大小：{ds.human(want)}，由软件包索引提供（3 个文件）。"
    assert "estimate" in en[1] and "估计" in zh[1]  # the unpacked size is still the table's estimate


def test_html_index_without_sizes_keeps_the_estimate_and_says_so(sized, tmp_path: Path) -> None:
    idx, _ = sized
    plan = _plan(idx.url, tmp_path)
    idx.json = False
    try:
        add_download_size(plan)
    finally:
        idx.json = True
    assert (plan.download["source"], plan.download["reason"]) == ("estimate", "no-sizes")
    assert plan.download["bytes"] is None
    text = render(plan.size_messages()[0], "en")
    assert text.startswith(f"Download: about {ds.human(plan.download_mib << 20)} (an estimate")
    assert "没有给出文件大小" in render(plan.size_messages()[0], "zh_CN")


def test_html_index_sized_by_head_requests_like_download_pytorch_org(sized, tmp_path: Path) -> None:
    """A PEP 503 HTML index with PEP 658 metadata (no sizes on the page): each chosen file's size comes from its
    server's Content-Length (HEAD), and the figure is the same as from the JSON sizes."""
    idx, wheels = sized
    plan = _plan(idx.url, tmp_path)
    idx.json, idx.pep658, idx.head = False, True, True
    try:
        add_download_size(plan)
    finally:
        idx.json, idx.pep658, idx.head = True, False, False
    assert plan.download["source"] == "index", plan.download
    assert (plan.download["bytes"], plan.download["files"]) == (sum(w.stat().st_size for w in wheels.values()), 3)


def test_unreachable_index_keeps_the_estimate(tmp_path: Path, closed_port: int) -> None:
    plan = _plan(f"http://127.0.0.1:{closed_port}", tmp_path)
    add_download_size(plan, timeout=2, deadline=5)
    assert (plan.download["source"], plan.download["reason"]) == ("estimate", "unreachable")
    assert "could not be reached" in render(plan.size_messages()[0], "en")


def test_what_is_installed_is_not_counted(sized) -> None:
    idx, wheels = sized
    target = ds.Target(python=PY)
    got = ds.measure([(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"])], target, estimate_mib=300,
                     installed={"TinyDep": "1.0"})
    assert got.source == "index" and [f["project"] for f in got.files] == ["torch"]
    assert got.bytes == wheels["torch"].stat().st_size
    # an installed version the specifier rules out is replaced, so it is downloaded
    got = ds.measure([(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"])], target, estimate_mib=300,
                     installed={"tinydep": "0.9"})
    assert sorted(f["file"] for f in got.files) == sorted(w.name for w in wheels.values())


def test_the_figure_is_what_real_pip_downloads(sized, tmp_path: Path) -> None:
    """Real pip installs the plan's requirement from the same index into an empty target; its --report names
    every file it downloaded, and their sizes add up to the plan's figure."""
    idx, _ = sized
    plan = _plan(idx.url, tmp_path)
    add_download_size(plan)
    report = tmp_path / "report.json"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir",
                          "--isolated", "--target", str(tmp_path / "t"), "--report", str(report),
                          "--index-url", f"{idx.url}/whl/cpu", *plan.packages],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    items = json.loads(report.read_text())["install"]
    names = sorted(urllib.parse.unquote(i["download_info"]["url"].rsplit("/", 1)[-1].split("#")[0]) for i in items)
    assert names == sorted(f["file"] for f in ds.measure(
        [(f"{idx.url}/whl/cpu", plan.packages)], ds.Target(python=PY), estimate_mib=0).files)
    pip_bytes = sum((idx.root / n).stat().st_size for n in names)
    assert plan.download["bytes"] == pip_bytes


def test_the_figure_is_what_the_real_install_downloads(sized, tmp_path: Path) -> None:
    """The executor installs the plan with real pip into a new environment: the wheels the index sent add up to
    the figure the plan showed, file for file."""
    idx, wheels = sized
    plan = _plan(idx.url, tmp_path)
    add_download_size(plan)
    idx.served.clear()
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY)
    assert res.ok, res.message
    assert sorted(name for name, _ in idx.served) == sorted(w.name for w in wheels.values())
    assert (plan.download["bytes"], plan.download["files"]) == (sum(n for _, n in idx.served), len(idx.served))


PASCAL = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "535.104.05",
          "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1"}]}


def test_gpusetup_plan_says_the_size_in_text_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``gpusetup plan --live-index`` (a mirror on 127.0.0.1 with the builds the resolver picks): the JSON has
    the exact bytes per framework, the text says it; ``--offline`` says it is an estimate."""
    import jsonschema

    from gpusetup.cli import main
    from gpusetup.compat.profile import machine_from_data
    from gpusetup.compat.resolver import resolve
    from gpusetup.resources import resource

    (fp,) = resolve(machine_from_data(PASCAL), ["pytorch"])
    assert fp.choice is not None and fp.choice.index_url is not None
    variant = fp.choice.index_url.rstrip("/").rsplit("/", 1)[-1]  # the index path the install uses: /whl/cu126/
    root = tmp_path / "wheels"
    root.mkdir()
    wheels = [build_wheel(root, "tinydep", "1.0", payload=10_000)]
    for req in fp.choice.packages:  # "torch==2.14.*" → torch-2.14.0+cu126, needing tinydep
        name, _, ver = req.partition("==")
        wheels.append(build_wheel(root, name, ver.replace(".*", ".0") + f"+{variant}", payload=50_000,
                                  requires=("tinydep",)))
    idx = Index(root)
    idx.json = True
    idx.layouts = {variant: wheels}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idx))
    server.daemon_threads = True
    idx.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps(PASCAL))
    monkeypatch.setenv("GPUSETUP_LIVE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    try:
        main(["plan", "--for", str(profile), "--json", "-f", "pytorch", "--live-index", f"{idx.url}/simple/"])
        doc = json.loads(capsys.readouterr().out)
        main(["plan", "--for", str(profile), "-f", "pytorch", "--live-index", f"{idx.url}/simple/"])
        text = capsys.readouterr().out
    finally:
        server.shutdown()
        server.server_close()
    jsonschema.validate(doc, json.loads(resource("schema", "plan.schema.json").read_text(encoding="utf-8")))
    size = doc["download"]["pytorch"]
    total = sum(w.stat().st_size for w in wheels)
    assert (size["source"], size["bytes"], size["files"]) == ("index", total, len(wheels)), size
    assert f"Download: {ds.human(total)}, from the package index ({len(wheels)} files)." in text
    main(["plan", "--for", str(profile), "-f", "pytorch", "--offline"])
    assert "(an estimate: the package index was not asked)" in capsys.readouterr().out


def test_install_shows_the_size_with_its_plan_in_both_languages(sized, tmp_path: Path) -> None:
    """``gpusetup install``'s shown plan (commands.install.render_plan) carries the same size lines."""
    from gpusetup.commands.install import render_plan
    from gpusetup.i18n import set_output_language

    idx, wheels = sized
    plan = _plan(idx.url, tmp_path)
    add_download_size(plan)
    size = ds.human(sum(w.stat().st_size for w in wheels.values()))
    try:
        en = render_plan(plan, machine(), state_dir=tmp_path / "state")
        set_output_language("zh_CN")
        zh = render_plan(plan, machine(), state_dir=tmp_path / "state")
    finally:
        set_output_language("en")
    assert f"  Download: {size}, from the package index (3 files).\n" in en
    assert f"  下载大小：{size}，由软件包索引提供（3 个文件）。\n" in zh
    assert "Space needed on the disk: about" in en and "需要的磁盘空间：约" in zh


def test_an_existing_environment_downloads_only_what_it_lacks(sized, tmp_path: Path) -> None:
    """Into an existing venv that already has tinydep 1.0 and leaf 2.0 (installed by real pip from the same
    index): only torch is downloaded, and the disk check before Install counts that exact download."""
    idx, wheels = sized
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    got = subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "-q",
                          "--disable-pip-version-check", "--index-url", f"{idx.url}/whl/cpu", "tinydep==1.0"],
                         capture_output=True, text=True, timeout=180)
    assert got.returncode == 0, got.stderr[-2000:]
    plan = _plan(idx.url, tmp_path)
    assert not any(s.id == "create-venv" for s in plan.steps)
    add_download_size(plan)
    torch = wheels["torch"].stat().st_size
    assert (plan.download["source"], plan.download["bytes"], plan.download["files"]) == ("index", torch, 1)
    assert plan.download_mib == -(-torch // (1 << 20))  # the free-space check uses the real download
    assert render(plan.size_messages()[0], "en") == f"Download: {ds.human(torch)}, from the package index (1 file)."


def test_download_only_plan_is_sized_like_what_pip_download_writes(sized, tmp_path: Path) -> None:
    idx, _ = sized
    m = machine()
    m.system.python = Version(f"{PY}.0")
    house = tmp_path / "house"
    plan = build_plan(torch_plan(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"], "cpu"), m, download_only=house)
    add_download_size(plan)
    res = execute(plan, journal_dir=tmp_path / "state", free_space=PLENTY)
    assert res.ok, res.message
    written = sorted(house.iterdir())
    assert plan.download["files"] == len(written) and plan.download["bytes"] == sum(f.stat().st_size for f in written)


def test_planning_again_does_not_read_the_index_again(sized) -> None:
    """Back and Next in the wizard plan again: the pages and metadata read a moment ago are not fetched twice."""
    from gpusetup.compat.refresh import Http

    idx, _ = sized
    http = Http(timeout=5)
    first = ds.measure([(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"])], ds.Target(python=PY), estimate_mib=1, http=http)
    asked = http.requests
    again = ds.measure([(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"])], ds.Target(python=PY), estimate_mib=1, http=http)
    assert asked == 6 and http.requests == asked  # 3 pages + 3 metadata files, once
    assert (again.bytes, again.files) == (first.bytes, first.files)


def test_pips_extra_index_is_read_like_pip_reads_it(sized, tmp_path: Path) -> None:
    """pip's configured extra-index-url is read beside the plan's index: a newer leaf there is what pip takes
    (real pip --dry-run --report says so) and what is sized."""
    idx, _ = sized
    got = ds.measure([(f"{idx.url}/whl/cpu", ["torch==2.9.1+cpu"])], ds.Target(python=PY), estimate_mib=1,
                     extra_indexes=[f"{idx.url}/whl/extra", "file:///nowhere/simple"])
    report = tmp_path / "r.json"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed",
                          "--disable-pip-version-check", "--no-cache-dir", "--report", str(report), "--index-url",
                          f"{idx.url}/whl/cpu", "--extra-index-url", f"{idx.url}/whl/extra", "torch==2.9.1+cpu"],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    pip_files = sorted(urllib.parse.unquote(i["download_info"]["url"].rsplit("/", 1)[-1])
                       for i in json.loads(report.read_text())["install"])
    assert "leaf-3.0-py3-none-any.whl" in pip_files
    assert sorted(f["file"] for f in got.files) == pip_files


def test_a_mirror_password_never_lands_in_the_plan(tmp_path: Path, closed_port: int) -> None:
    from gpusetup.model import to_dict

    m = machine()
    m.system.python = Version(f"{PY}.0")
    plan = build_plan(torch_plan(None, ["torch==2.9.1+cpu"], "cpu"), m, f"venv:{tmp_path / 'env'}", with_pip=False,
                      host_pip=True, index_url=f"http://user:s3cret-pw@127.0.0.1:{closed_port}/simple")
    add_download_size(plan, timeout=2, deadline=5)
    assert plan.download["reason"] == "unreachable" and "127.0.0.1" in plan.download["detail"]
    assert "s3cret-pw" not in json.dumps(to_dict(plan))


def test_offline_estimate_uses_a_frameworks_measured_row() -> None:
    """sizes.json rows for one framework (read from the index on a date, with the note) win over the variant's
    generic row; the unpacked size still comes from the generic row."""
    from gpusetup import resources
    from gpusetup.compat.profile import machine_from_data
    from gpusetup.compat.resolver import resolve
    from gpusetup.install.plan import framework_download_sizes

    rows = resources.read_json("install", "sizes.json")["tables"]["disk"]["rows"]
    measured = {(r["framework"], r["variant_prefix"]): r for r in rows if "framework" in r}
    assert measured and all(r["measured"][:4].isdigit() and "files" in r["measured"] for r in measured.values())
    m = machine_from_data({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": []})
    fplans = resolve(m, ["pytorch", "jax", "tensorflow"])
    sizes = framework_download_sizes(fplans, m, ask_index=False)
    used = 0
    for fp in fplans:
        assert fp.choice is not None
        row = next((r for (fw, prefix), r in measured.items() if fw == fp.framework and fp.choice.variant.startswith(prefix)),
                   None)
        generic = next(r for r in rows if "framework" not in r and fp.choice.variant.startswith(r["variant_prefix"]))
        assert sizes[fp.framework].estimate_mib == (row or generic)["download_mib"]
        assert sizes[fp.framework].reason == "offline"
        used += row is not None
    assert used, "a CPU-only machine's JAX or TensorFlow plan uses its measured row"
