"""Similar solved reports (gpusetup/analyze/similar.py): the index is searched by normalised error lines with BM25,
the closest threads are shown below the findings with cause, fix (both languages), link and closeness, and
nothing is searched for inputs without problem lines (the fleet of whole-machine reports never loads it)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gpusetup.analyze import analyze_text
from gpusetup.analyze import similar as sim
from gpusetup.cli import main

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
si: Any = importlib.import_module("solved_index")


def test_normalising_is_the_curators_normalising() -> None:
    """One normaliser for index and input: scripts/solved_index.py uses the core's, not a copy of it."""
    assert si.normalise_signature is sim.normalise_signature


def test_words_keep_error_codes_and_split_names() -> None:
    w = sim.words(sim.normalise_signature("CUDA error: cudaErrorNoKernelImageForDevice (error 209) on sm_120"))
    assert {"cudaerrornokernelimagefordevice", "kernel", "image", "209", "sm_120", "120"} <= set(w)
    assert "v" not in sim.words(sim.normalise_signature("torch 2.3.1 failed"))


def test_an_input_no_rule_knows_gets_similar_reports_with_links() -> None:
    """A TensorRT engine built on another GPU (the verbatim line of https://github.com/NVIDIA/TensorRT/issues/3130,
    a dev thread): no rule knows it; another solved thread of its family is shown, the thread itself left out."""
    text = ("The engine plan file is generated on an incompatible device, expecting compute 7.5 got compute 8.6, "
            "please rebuild\n")
    a = analyze_text(text, exclude_similar={"https://github.com/NVIDIA/TensorRT/issues/3130"})
    assert not [f for f in a.findings if f.severity.rank >= 2], "a rule knows it: pick another input"
    assert a.similar, "no similar report"
    best = a.similar[0]
    assert best.report.family == "tensorrt" and best.report.url.startswith("https://")
    assert 0 < best.closeness <= 1 and best.report.cause["en"] and best.report.cause["zh_CN"]
    d = a.to_dict()["similar"][0]
    assert set(d) >= {"url", "title", "family", "family_name", "closeness", "cause", "fix", "matched", "same_cause"}
    assert d["family_name"]["zh_CN"] and d["fix"]["zh_CN"]


def test_an_extension_abi_error_gets_a_rule_and_similar_reports() -> None:
    """The verbatim line of https://github.com/Dao-AILab/flash-attention/issues/931 (dev): the rule names it and
    other solved threads of its family are shown below it."""
    text = "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    a = analyze_text(text, exclude_similar={"https://github.com/Dao-AILab/flash-attention/issues/931"})
    assert a.findings[0].id == "extension-built-for-other-torch"
    assert a.similar and a.similar[0].report.family == "extension-abi"


def test_a_thread_is_never_found_by_itself_when_left_out() -> None:
    idx = sim.solved_index()
    r = next(r for r in idx.reports if r.family == "no-kernel-image")
    shown = sim.similar_reports(list(r.signature), exclude={r.url})
    assert r.url not in {s.report.url for s in shown}


def test_healthy_text_loads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("the index was searched")

    monkeypatch.setattr("gpusetup.analyze.similar_reports", boom)
    a = analyze_text("Thu Nov 27 09:00:00 2026\nall jobs finished in 3 minutes\n")
    assert a.similar == []


def test_similar_reports_in_every_format_and_both_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "err.txt"
    src.write_text("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. "
                   "PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8.\n", encoding="utf-8")
    main(["analyze", str(src)])
    en = capsys.readouterr().out
    assert "Similar solved reports — similar, not certain" in en and "https://" in en and "Cause there:" in en
    main(["--lang", "zh_CN", "analyze", str(src)])
    zh = capsys.readouterr().out
    assert "相似的已解决报告" in zh and "当时的原因：" in zh
    main(["analyze", "--format", "markdown", str(src)])
    md = capsys.readouterr().out
    assert "### Similar solved reports" in md and "](<https://" in md
    main(["analyze", "--format", "html", str(src)])
    html = capsys.readouterr().out
    assert 'class="similar"' in html and 'href="https://' in html
    main(["analyze", "--json", str(src)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["similar"] and doc["similar"][0]["closeness"] > 0


def test_a_damaged_index_gives_no_similar_reports_not_a_failure(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "solved").mkdir()
    (tmp_path / "solved" / "families.json").write_text('{"families": {}}', encoding="utf-8")
    (tmp_path / "solved" / "x.jsonl").write_text('{"url": 1}\nnot json\n', encoding="utf-8")
    monkeypatch.setenv("GPUSETUP_RESOURCES", str(tmp_path))
    idx = sim.load_index()
    assert idx.reports == [] and sim.similar_reports(["RuntimeError: CUDA error"], index=idx) == []


def test_the_evaluation_reads_only_the_part_it_is_asked_for() -> None:
    """benchmarks/analyze_eval.py: tuning runs on dev and never sees an evaluation thread (and the reverse)."""
    spec = importlib.util.spec_from_file_location("analyze_eval", ROOT / "benchmarks" / "analyze_eval.py")
    assert spec is not None and spec.loader is not None
    ev: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    result = ev.evaluate("dev", with_title=False, dev_index_only=False)
    assert result["rows"] and {r["part"] for r in result["rows"]} == {"dev"}
    assert {t["part"] for t in result["traps"]} <= {"dev", "fixture"}
    s = ev.summary(result)
    assert 0 < s["named"] <= s["reports"] and s["false_alarms"] == 0


def test_without_the_search_package_the_analysis_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged app leaves numpy out (packaging/gpusetup.spec): analysis goes on and says why nothing similar
    is shown."""
    monkeypatch.setitem(sys.modules, "bm25s", None)  # import bm25s → ImportError
    idx = sim.SolvedIndex(sim.solved_index().reports, {})
    monkeypatch.setattr(sim, "solved_index", lambda: idx)
    a = analyze_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert a.similar == [] and a.findings
    assert any("not available in this installation" in n for i in a.inputs for n in i.notes)


def test_a_fleet_of_whole_machine_reports_never_loads_the_index(tmp_path: Path) -> None:
    """The per-report cost of a fleet stays the rules' (benchmarks/analyze_fleet_bench.py): reports without error
    text import neither bm25s nor numpy."""
    import subprocess

    from gpusetup.model import Machine, Report, from_dict, to_dict
    from gpusetup.resources import resource
    from gpusetup.rules import evaluate

    paths = []
    for demo in sorted(resource("demo").glob("*.json"))[:3]:
        m = from_dict(Machine, json.loads(demo.read_text(encoding="utf-8"))["machine"])
        p = tmp_path / demo.name
        p.write_text(json.dumps(to_dict(Report(machine=m, findings=evaluate(m)))), encoding="utf-8")
        paths.append(str(p))
    code = ("import sys, io, contextlib\nfrom gpusetup.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['analyze', '--json', *{paths!r}])\n"
            "print([m for m in ('bm25s', 'numpy') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
