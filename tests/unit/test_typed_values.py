"""Issue 13, "one concept, one place": the model stores versions and compute capabilities typed, JSON keeps the
texts it was read from, and a compute-capability rule changed in gpusetup.versions reaches every surface —
the resolver (plan), the rules (findings) and the container generator alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpusetup import versions
from gpusetup.compat.resolver import resolve
from gpusetup.generate.select import Refusal, Selection, choose
from gpusetup.model import FrameworkInstall, Gpu, Machine, PythonEnv, from_dict, to_dict
from gpusetup.resources import resource
from gpusetup.rules import evaluate
from gpusetup.versions import ComputeCapability, Version
from tests.generate.hosts import HOSTS

DEMOS = sorted(resource("demo").glob("*.json"))  # machines recorded by `gpusetup diagnose --json`


def _same_where_recorded(written: Any, recorded: Any) -> bool:
    """``written`` holds every value of ``recorded`` unchanged (fields added by a newer minor version aside)."""
    if isinstance(recorded, dict):
        return isinstance(written, dict) and all(k in written and _same_where_recorded(written[k], v)
                                                 for k, v in recorded.items())
    if isinstance(recorded, list):
        return isinstance(written, list) and len(written) == len(recorded) and all(
            _same_where_recorded(w, r) for w, r in zip(written, recorded, strict=True))
    return type(written) is type(recorded) and written == recorded


@pytest.mark.parametrize("demo", DEMOS, ids=lambda p: p.stem)
def test_recorded_machines_load_typed_and_write_back_the_same_texts(demo) -> None:
    recorded = json.loads(demo.read_text(encoding="utf-8"))["machine"]
    m = from_dict(Machine, recorded)
    for g in m.nvidia_gpus:
        assert g.compute_capability is None or type(g.compute_capability) is ComputeCapability
    typed = [m.driver.version, m.driver.cuda_driver_version, m.driver.nvml_version, m.system.python,
             *(r.value for r in m.driver.versions), *(k.version for k in m.driver.modules),
             *(t.version for t in m.cuda.toolkits), *(lib.version for lib in m.cuda.libraries),
             *(e.version for e in m.python_envs),
             *(v for e in m.python_envs for fw in e.frameworks for v in (fw.version, fw.build_cuda, fw.cudnn))]
    assert all(v is None or type(v) is Version for v in typed)
    written = to_dict(m)
    assert _same_where_recorded(written, recorded)
    assert json.loads(json.dumps(written)) == written  # plain JSON: texts, not objects
    assert from_dict(Machine, written) == m


def test_typed_values_in_the_recorded_rtx3060() -> None:
    m = from_dict(Machine, json.loads(resource("demo", "rtx3060.json").read_text(encoding="utf-8"))["machine"])
    g = m.nvidia_gpus[0]
    assert g.compute_capability == ComputeCapability(8, 6) and g.compute_capability.sm == "sm_86"
    assert m.driver.version is not None and m.driver.version.release == (570, 124, 4)
    assert str(m.driver.version) == "570.124.04"  # written back as it was read, not "570.124.4"
    assert to_dict(m)["gpus"][0]["compute_capability"] == "8.6"


def test_constructors_accept_texts_and_store_typed_values() -> None:
    fw = FrameworkInstall("torch", "2.4.0+cu124", build_cuda="12.4", cudnn="90100")
    assert type(fw.version) is Version and fw.version.local == "cu124" and fw.build_cuda == Version("12.4.0")
    env = PythonEnv(executable="/usr/bin/python3", version="3.12.3")
    assert type(env.version) is Version and env.version > Version("3.9")
    assert to_dict(fw)["version"] == "2.4.0+cu124" and to_dict(env)["version"] == "3.12.3"


def test_assigning_a_text_stores_the_typed_value() -> None:
    m = Machine(gpus=[Gpu(vendor="nvidia")])
    m.driver.version = "470.82.01"  # type: ignore[assignment]  # what a test or an older tool may write
    m.gpus[0].compute_capability = "3.7"  # type: ignore[assignment]
    assert type(m.driver.version) is Version and m.driver.version < Version("470.103")
    assert m.gpus[0].compute_capability == ComputeCapability(3, 7) and m.gpus[0].compute_capability < (5, 0)
    assert to_dict(m)["driver"]["version"] == "470.82.01" and to_dict(m)["gpus"][0]["compute_capability"] == "3.7"


# PyTorch 2.4's published TORCH_CUDA_ARCH_LIST for its cu124 wheels (as in tests/rules/test_catalogue.py)
ARCH_124 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def _rtx4090_with_torch() -> Machine:
    m = HOSTS["rtx4090-535"].machine()  # driver, CUDA and GPU from a recorded nvidia-smi -q -x
    m.python_envs = [PythonEnv(executable="/usr/bin/python3", version="3.12.3", frameworks=[
        FrameworkInstall("torch", "2.4.0+cu124", build_cuda="12.4", arch_list=list(ARCH_124), probed=True)])]
    m.system.python = Version("3.12.3")
    return m


def _surfaces(m: Machine) -> tuple[bool, list[str], bool]:
    plan = resolve(m, ["pytorch"])[0]
    findings = [f.catalogue or "" for f in evaluate(m) if f.catalogue in ("F04", "F05")]
    sel = choose(m, "pytorch")
    assert isinstance(sel, (Selection, Refusal))
    return plan.ok, findings, isinstance(sel, Selection)


def test_a_compute_capability_rule_changed_in_one_place_changes_every_surface(monkeypatch) -> None:
    m = _rtx4090_with_torch()
    assert _surfaces(m) == (True, [], True)  # Ada (8.9) runs the sm_86 cubins: plan, findings and image agree

    # The one rule "which kernels run on which GPU" lives in gpusetup.versions: change it there only.
    monkeypatch.setattr(versions, "cubin_runs", lambda cubin, gpu: False)
    monkeypatch.setattr(versions, "ptx_runs", lambda ptx, gpu: False)
    plan_ok, findings, image = _surfaces(m)
    assert plan_ok is False  # the resolver finds no GPU build with kernels for 8.9
    assert findings == ["F05"]  # the rules say the installed torch has no kernels for this (newer) GPU
    assert image is False  # the container generator refuses every image
    plan = resolve(m, ["pytorch"])[0]
    assert any(r.code.startswith("reason.no-kernels") for r in plan.rejected)


def test_the_rule_is_the_same_in_every_surface_for_a_ptx_only_build(monkeypatch) -> None:
    """A stricter SASS rule (a cubin runs only on its own compute capability) is followed everywhere too:
    8.9 then needs an sm_89 cubin or PTX, and the findings and the plan agree on it."""
    m = _rtx4090_with_torch()
    monkeypatch.setattr(versions, "cubin_runs", lambda cubin, gpu: cubin == gpu)
    assert versions.arch_list_coverage((8, 9), ARCH_124) is None
    assert versions.arch_list_coverage((8, 6), ARCH_124) == "sass"
    _plan_ok, findings, _image = _surfaces(m)
    assert findings == ["F05"]
