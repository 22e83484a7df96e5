"""Every vendor honestly: AMD and Intel GPUs on native Windows get a GPU plan where one exists (DirectML
when no native build does, with its source); the runtime variables a build needs (HSA_OVERRIDE_GFX_VERSION
for consumer RDNA2 cards, PYTORCH_ENABLE_MPS_FALLBACK on Apple GPUs) travel with the choice, are explained,
and are written into the environment's activation scripts by the installer and into pixi/conda files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tomllib
import yaml

from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.generate.project import Target, emit_project
from gpusetup.install import build_plan
from gpusetup.install.snippets import ACTIVATE_ENV


def _plan(profile: dict, python: str | None = None):
    return resolve(machine_from_data(profile), ["pytorch"], python_version=python)[0]


WIN_AMD = {"os": "windows", "arch": "x86_64", "python": "3.12",
           "gpus": [{"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "pci_id": "1002:744c", "gfx": "gfx1100"}]}
WIN_INTEL = {"os": "windows", "arch": "x86_64", "python": "3.12",
             "gpus": [{"vendor": "intel", "name": "Intel(R) Arc(TM) A770 Graphics", "pci_id": "8086:56a0"}]}
RDNA2 = {"os": "linux", "arch": "x86_64", "python": "3.12",
         "gpus": [{"vendor": "amd", "name": "AMD Radeon RX 6700 XT", "pci_id": "1002:73df", "gfx": "gfx1031"}]}


def test_amd_on_native_windows_gets_directml_with_its_source() -> None:
    p = _plan(WIN_AMD)
    assert p.ok and p.choice.variant == "directml"
    assert p.choice.packages == ["torch-directml==0.2.5.dev240914"] and p.choice.index_url is None
    notes = " ".join(p.notes)
    assert "torch_directml.device()" in notes and "https://pypi.org/project/torch-directml/0.2.5.dev240914/" in notes
    assert "rocm.docs.amd.com" in notes  # AMD's own Windows preview builds are named, not hidden
    assert any("native Windows" in r.reason for r in p.rejected)  # why the ROCm wheels were not chosen
    assert p.gpus_covered == [0]


def test_directml_respects_its_python_range() -> None:
    p = _plan(WIN_AMD, python="3.13")
    assert not p.ok and p.choice.variant == "cpu"
    assert any(r.option.startswith("torch-directml") and "3.8–3.12" in r.reason for r in p.rejected)


def test_intel_on_windows_keeps_the_native_xpu_build() -> None:
    p = _plan(WIN_INTEL)
    assert p.ok and p.choice.variant == "xpu" and p.choice.env == {}


def test_consumer_rdna2_gets_the_gfx_override_explained() -> None:
    p = _plan(RDNA2)
    assert p.ok and p.choice.variant.startswith("rocm")
    assert p.choice.env == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in n and "github.com/ROCm/ROCm/issues/2353" in n for n in p.notes)
    # the override is process-wide: with an RDNA3 card beside it, no override (it would break the RDNA3 card)
    mixed = _plan({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": [
        {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100"},
        {"vendor": "amd", "name": "AMD Radeon RX 6700 XT", "gfx": "gfx1031"}]})
    assert "HSA_OVERRIDE_GFX_VERSION" not in (mixed.choice.env if mixed.choice else {})
    assert 1 in mixed.gpus_left_out


def test_apple_gpu_gets_the_mps_fallback() -> None:
    p = _plan({"os": "macos", "arch": "arm64", "python": "3.12", "gpus": [{"vendor": "apple", "name": "Apple M2"}]})
    assert p.ok and p.choice.variant == "mps" and p.choice.env == {"PYTORCH_ENABLE_MPS_FALLBACK": "1"}
    assert any("PYTORCH_ENABLE_MPS_FALLBACK=1" in n for n in p.notes)
    target = Target("macos", "arm64", "3.12", env=dict(p.choice.env))
    pixi = tomllib.loads(emit_project([p], target, "pixi").text)
    assert pixi["activation"]["env"] == {"PYTORCH_ENABLE_MPS_FALLBACK": "1"}
    conda = yaml.safe_load(emit_project([p], target, "conda").text)
    assert conda["variables"] == {"PYTORCH_ENABLE_MPS_FALLBACK": "1"}


def test_cli_emit_carries_the_runtime_variables(tmp_path: Path, capsys) -> None:
    from gpusetup.cli import main

    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RDNA2))
    assert main(["plan", "--for", str(prof), "--emit", "conda", "--offline"]) == 0
    env = yaml.safe_load(capsys.readouterr().out)
    assert env["variables"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_installer_writes_the_variables_into_a_real_venv_and_undoes_it(tmp_path: Path) -> None:
    p = _plan(RDNA2)
    venv = tmp_path / "env"
    plan = build_plan([p], machine_from_data({"os": "linux", "arch": "x86_64", "python": "3.12"}), f"venv:{venv}",
                      base_python=sys.executable)
    step = next(s for s in plan.steps if s.id == "runtime-env")
    assert step.argv[-1] == "HSA_OVERRIDE_GFX_VERSION=10.3.0" and step.undo[-1] == ACTIVATE_ENV
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = str(venv / "bin" / "python")
    for _ in range(2):  # twice: the block is replaced, not repeated
        subprocess.run([py, *step.argv[1:]], check=True, capture_output=True, timeout=60)
    text = (venv / "bin" / "activate").read_text()
    assert text.count('export HSA_OVERRIDE_GFX_VERSION="10.3.0"') == 1
    env = {k: v for k, v in os.environ.items() if k != "HSA_OVERRIDE_GFX_VERSION"}
    out = subprocess.run(["bash", "-c", f". {venv}/bin/activate && echo $HSA_OVERRIDE_GFX_VERSION"],
                         capture_output=True, text=True, env=env, timeout=30)
    assert out.stdout.strip() == "10.3.0"
    subprocess.run([py, *step.undo[1:]], check=True, capture_output=True, timeout=60)
    assert "HSA_OVERRIDE_GFX_VERSION" not in (venv / "bin" / "activate").read_text()
