"""`gpusetup plan` end to end: --for with both input kinds, live mode, text and JSON, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpusetup.cli import main
from gpusetup.commands.plan import plan_document
from gpusetup.compat.db import get_db
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.model import Driver, Gpu, Machine, Report, System, to_dict
from gpusetup.resources import resource

from .test_resolver_table import CASES

SCHEMA = json.loads(resource("schema", "plan.schema.json").read_text(encoding="utf-8"))
PASCAL = {
    "os": "linux",
    "arch": "x86_64",
    "python": "3.12",
    "driver": "535.104.05",
    "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1", "pci_id": "10de:1b06"}],
}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_schema_is_valid_and_every_table_case_matches_it() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    info = get_db().info()
    for case in CASES:
        machine = machine_from_data(case.machine)
        plans = resolve(machine, ["pytorch", "tensorflow", "jax"], gpu_index=case.gpu, python_version=case.python)
        doc = plan_document(plans, machine, source="test", gpu_index=case.gpu, data=info)
        validator.validate(doc)


def test_for_profile_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps(PASCAL))
    code, out, _ = run(["plan", "--for", str(f), "--json", "-f", "pytorch", "-f", "jax"], capsys)
    assert code == 0
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    torch, jax = doc["plans"]
    assert (torch["framework"], torch["ok"], torch["choice"]["variant"]) == ("pytorch", True, "cu126")
    assert torch["choice"]["index_url"] == "https://download.pytorch.org/whl/cu126"
    assert any(r["option"].startswith("cu130") and "compute capability 6.1" in r["reason"] for r in torch["rejected"])
    assert jax["choice"]["variant"] == "cuda12"
    assert doc["machine"]["source"] == str(f)


def test_for_diagnose_report_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    machine = Machine(
        system=System(os="linux", arch="x86_64", python="3.12"),
        driver=Driver(version=None),
        gpus=[Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090", compute_capability="8.6")],
    )
    f = tmp_path / "report.json"
    f.write_text(json.dumps(to_dict(Report(machine=machine))))
    code, out, _ = run(["plan", "--for", str(f)], capsys)
    assert code == 1  # an action is needed first
    assert "PyTorch: no GPU build works on this machine as it is" in out
    assert "Install the NVIDIA driver (at least 580.65.06)" in out
    assert "Then install the GPU build: cu132 build" in out
    assert "Works now without the GPU (CPU only): cpu build" in out
    assert "--index-url https://download.pytorch.org/whl/cu132" in out
    assert "Not chosen, and why:" in out


def test_live_mode_uses_detect(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    machine = Machine(
        system=System(os="linux", arch="x86_64", python="3.12"),
        driver=Driver(version="580.95.05"),
        gpus=[Gpu(vendor="nvidia", name="NVIDIA H100", compute_capability="9.0")],
    )
    calls = []

    def fake_detect(*a: object, **k: object) -> Machine:
        calls.append(1)
        return machine

    monkeypatch.setattr("gpusetup.commands.plan.detect", fake_detect)
    code, out, _ = run(["plan", "--json", "--framework", "tensorflow"], capsys)
    assert calls and code == 0
    doc = json.loads(out)
    assert doc["machine"]["source"] == "live"
    assert doc["plans"][0]["choice"]["packages"] == ["tensorflow[and-cuda]==2.21.*"]


def test_gpu_and_python_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mixed.json"
    f.write_text(json.dumps({**PASCAL, "gpus": PASCAL["gpus"] + [{"vendor": "amd", "name": "RX 7900 XTX", "gfx": "gfx1100"}]}))
    code, out, _ = run(["plan", "--for", str(f), "--gpu", "1", "--python", "3.11", "--json"], capsys)
    doc = json.loads(out)
    assert doc["gpu_index"] == 1 and doc["machine"]["python"] == "3.11"
    assert doc["plans"][0]["choice"]["variant"] == "rocm7.2"
    assert doc["plans"][0]["gpus_left_out"] == [0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "7"], "there is no GPU 7"),
        (["--python", "three"], "--python must look like 3.12"),
    ],
)
def test_bad_options_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps(PASCAL))
    code, _, err = run(["plan", "--for", str(f), *args], capsys)
    assert code == 3 and message in err


@pytest.mark.parametrize("content", ["{broken", json.dumps({"os": "linux", "gpus": [{"vendor": "nvidia"}]})])
def test_malformed_file_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    code, out, err = run(["plan", "--for", str(f)], capsys)
    assert code == 3 and "bad.json" in err and not out


def test_missing_file_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["plan", "--for", str(tmp_path / "nope.json")], capsys)
    assert code == 3 and "no such file" in err


def test_db_info_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["db", "info"], capsys)
    assert code == 0 and "Compatibility data version" in out and "pytorch/arch_lists" in out
    code, out, _ = run(["db", "info", "--json"], capsys)
    assert code == 0 and json.loads(out)["origin"] == "embedded"
