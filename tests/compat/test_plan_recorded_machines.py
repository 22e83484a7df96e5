"""Plans for whole fake machines built from real recorded nvidia-smi outputs (tests/fixtures), end to end:
detect() → resolve() → plan JSON schema. The expected answers follow from the driver version recorded in the
fixture name and the GPU's compute capability (cuda_drivers/family_minimums, pytorch/arch_lists)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from fakes.scenarios import XML_FIXTURES, scenario

from gpusetup.commands.plan import plan_document
from gpusetup.compat.db import get_db
from gpusetup.compat.resolver import resolve
from gpusetup.probe import detect
from gpusetup.resources import resource

VALIDATOR = jsonschema.Draft202012Validator(json.loads(resource("schema", "plan.schema.json").read_text(encoding="utf-8")))

# fixture name prefix → (ok, torch variant chosen now or after the action, first action kind or None, because)
EXPECT = {
    "geforce-rtx-3090__525.147.05": (True, "cu126", None, "family_minimums 12 linux 525.60.13 ≤ 525.147; cu13x needs 580.65.06"),
    "geforce-rtx-4090__535.86.05": (True, "cu126", None, "same: R535 runs CUDA 12.x builds only"),
    "geforce-rtx-3080__595.58.03": (True, "cu132", None, "R595 ≥ 580.65.06: the newest CUDA 13 build"),
    "quadro-p400__418.43": (False, "cu126", "upgrade-driver", "R418 < 450.80.02; Pascal needs cu126 (cu13x start at 7.5)"),
    "geforce-gtx-1070-ti__partial-no-driver": (False, "cu126", "install-driver", "no driver; Pascal → cu126 on the 580 legacy branch"),
}


@pytest.mark.parametrize("fixture", XML_FIXTURES)
def test_recorded_machine_plans(tmp_path, fixture: str) -> None:
    machine = detect(scenario(tmp_path, f"xml:{fixture}"))
    plans = resolve(machine, ["pytorch", "tensorflow", "jax"], python_version="3.12")
    doc = plan_document(plans, machine, source=fixture, gpu_index=None, data=get_db().info(), python="3.12")
    VALIDATOR.validate(doc)
    torch = plans[0]
    assert torch.choice is not None
    assert torch.ok or torch.actions or any("No GPU build" in n for n in torch.notes)
    for prefix, (ok, variant, action, because) in EXPECT.items():
        if fixture.startswith(prefix):
            assert torch.ok is ok, because
            chosen = torch.choice if ok else torch.gpu_choice
            assert chosen is not None and chosen.variant == variant, because
            assert (torch.actions[0].kind if torch.actions else None) == action, because


def test_expectations_match_existing_fixtures() -> None:
    for prefix in EXPECT:
        assert any(f.startswith(prefix) for f in XML_FIXTURES), prefix
