"""A verified `gpusetup db update` reaches the rules, the resolver and the container generator alike.

Before there was one reader of resources/compat, the rules read only the built-in data, so after an update
the findings and the plan could disagree. The bundle here is the shipped data with one synthetic change
(CUDA 12 made to need a driver 599.1 that no real release notes name), signed and served over HTTP like a
real update, so the test can see the change arrive everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpusetup.compat import db
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.generate import facts
from gpusetup.model import FrameworkInstall, Machine, PythonEnv
from gpusetup.rules import evaluate

from .test_update import publish, run_update, server  # noqa: F401 - the HTTP server fixture

SYNTHETIC = "599.1"


def _raise_cuda12_minimum(src: Path) -> None:
    path = src / "cuda_drivers.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    for row in doc["tables"]["family_minimums"]["rows"]:
        if row["major"] == 12:
            row["linux"] = SYNTHETIC
    for row in doc["tables"]["toolkit_drivers"]["rows"]:
        if str(row["cuda"]).startswith("12.") and row.get("linux"):
            row["linux"] = SYNTHETIC
    path.write_text(json.dumps(doc), encoding="utf-8")


def _machine() -> Machine:
    m = machine_from_data({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "550.54.14",
                           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3060", "compute_capability": "8.6"}]})
    m.python_envs.append(PythonEnv(executable="/usr/bin/python3", version="3.12.3",
                                   frameworks=[FrameworkInstall(name="torch", version="2.5.1+cu121", build_cuda="12.1")]))
    return m


def _driver_finding(m: Machine) -> list[str]:
    return [f.id for f in evaluate(m) if f.id == "driver-too-old-for-cuda"]


def test_verified_update_changes_findings_plan_and_generator_alike(server, _isolated_compat_dir: Path) -> None:  # noqa: F811
    url, bundle, _ = server
    m = _machine()
    before_plan = resolve(m, ["pytorch"])[0]
    assert before_plan.choice is not None and before_plan.choice.variant.startswith("cu12")
    assert _driver_finding(m) == []
    assert facts.family_minimum(12) != SYNTHETIC

    publish(bundle, "2099.01.01", edit=_raise_cuda12_minimum)
    r = run_update(url, _isolated_compat_dir)
    assert r.ok, r.message
    db.clear_cache()
    assert db.get_db().origin == str(_isolated_compat_dir)

    # The rules: the installed cu121 build now needs a newer driver than 550.
    m = _machine()
    assert _driver_finding(m) == ["driver-too-old-for-cuda"]
    # The resolver: no cu12 build is picked for driver 550 any more, and it says which driver it wants.
    after_plan = resolve(m, ["pytorch"])[0]
    assert after_plan.choice is None or not after_plan.choice.variant.startswith("cu12")
    said = " ".join([r.reason for r in after_plan.rejected] + [a.min_version or "" for a in after_plan.actions])
    assert SYNTHETIC in said
    # The container generator reads the same minimum.
    assert facts.family_minimum(12) == SYNTHETIC and facts.toolkit_driver((12, 8)) == SYNTHETIC
