"""Golden files for each generator over a table of hosts, and every generated file through a real validator.

Regenerate the golden files after an intended change with ``GPUSETUP_UPDATE_GOLDEN=1 pytest tests/generate``
and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpusetup.generate import GeneratedSetup, generate_setup
from gpusetup.resources import resource

from .hosts import HOSTS
from .validators import (
    compose_errors,
    devcontainer_errors,
    hadolint,
    kubernetes_errors,
    shell_errors,
    validate_tree,
    yaml,
)

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("GPUSETUP_UPDATE_GOLDEN") == "1"
# copied verbatim from resources/ (checked separately)
NOT_GOLDEN = {"gpu_check.py", "data/.keep", "kubernetes/prometheus-rules.yml"}

CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "pytorch-rtx3080-595": ("rtx3080-595", "pytorch", {}),
    "tensorflow-rtx4090-535-apptainer-2gpus": ("rtx4090-535", "tensorflow", {"runtime": "apptainer", "gpus": 2}),
    "jax-h100-590-registry": ("h100-590", "jax", {"registry": "harbor.lab.example/ml"}),
    "pytorch-p100-510-plain-base": ("p100-510", "pytorch", {}),
    "pytorch-rtx3060-570-official": ("rtx3060-570", "pytorch", {"image_source": "official"}),
    "tensorflow-windows-rtx3080-536": ("rtx3080-win-536", "tensorflow", {}),
    "pytorch-mixed-3x3090-515-devel": ("3x3090-515", "pytorch", {"flavour": "devel"}),
    "pytorch-h100-590-healthcheck-runtimeclass": ("h100-590", "pytorch", {"healthcheck": True,
                                                                          "runtime_class": "nvidia-cdi"}),
}
EXPECTED_FROM = {
    "pytorch-rtx3080-595": "nvidia/cuda:13.0.2-base-ubuntu24.04",
    "tensorflow-rtx4090-535-apptainer-2gpus": "nvidia/cuda:12.2.2-base-ubuntu22.04",
    "jax-h100-590-registry": "nvidia/cuda:13.0.2-base-ubuntu24.04",
    "pytorch-p100-510-plain-base": "ubuntu:24.04",
    "pytorch-rtx3060-570-official": "pytorch/pytorch:2.11.0-cuda12.8-cudnn9-runtime",
    "tensorflow-windows-rtx3080-536": "nvidia/cuda:12.2.2-base-ubuntu22.04",
    "pytorch-mixed-3x3090-515-devel": "nvidia/cuda:11.7.1-devel-ubuntu22.04",
    "pytorch-h100-590-healthcheck-runtimeclass": "nvidia/cuda:13.0.2-base-ubuntu24.04",
}


def _generate(case: str, out: Path) -> GeneratedSetup:
    host, framework, opts = CASES[case]
    return generate_setup(HOSTS[host].machine(), framework, out, generated_on="2026-11-22",
                          command=f"gpusetup docker --framework {framework}", **opts)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, GeneratedSetup]]:
    out = {}
    for case in CASES:
        root = tmp_path_factory.mktemp(case)
        out[case] = (root, _generate(case, root))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, generated: dict[str, tuple[Path, GeneratedSetup]]) -> None:
    root, result = generated[case]
    assert result.ok, result.reason
    assert result.image == EXPECTED_FROM[case]
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in result.files if rel not in NOT_GOLDEN}
    gold = GOLDEN / case
    if UPDATE:
        for rel, text in texts.items():
            (gold / rel).parent.mkdir(parents=True, exist_ok=True)
            (gold / rel).write_text(text, encoding="utf-8", newline="\n")
    missing = [rel for rel in texts if not (gold / rel).is_file()]
    assert not missing, f"no golden file for {missing}; run with GPUSETUP_UPDATE_GOLDEN=1 and review"
    for rel, text in texts.items():
        assert text == (gold / rel).read_text(encoding="utf-8"), f"{case}/{rel} differs from the golden file"
    stale = {p.relative_to(gold).as_posix() for p in gold.rglob("*") if p.is_file()} - set(texts)
    assert not stale, f"golden files no longer generated: {stale}"
    assert (root / "gpu_check.py").read_text(encoding="utf-8") == resource("generate", "gpu_check.py").read_text(
        encoding="utf-8")
    assert f"ARG BASE_IMAGE={EXPECTED_FROM[case]}" in texts["Dockerfile"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_generated_file_passes_its_validator(case: str, generated: dict[str, tuple[Path, GeneratedSetup]]) -> None:
    validate_tree(generated[case][0])


def test_generated_text_has_what_the_issue_asks_for(generated: dict[str, tuple[Path, GeneratedSetup]]) -> None:
    root, result = generated["tensorflow-rtx4090-535-apptainer-2gpus"]
    dockerfile = (root / "Dockerfile").read_text()
    assert "USER 1000:1000" in dockerfile and "--mount=type=cache,target=/home/app/.cache/pip" in dockerfile
    assert "HEALTHCHECK --" not in dockerfile and "gpu_check.py" in dockerfile  # opt-in only
    assert "FROM ${BASE_IMAGE}" in dockerfile and "-base-ubuntu" in dockerfile  # the wheels bring CUDA
    compose = yaml.safe_load((root / "compose.yaml").read_text())
    dev = compose["services"]["app"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert dev == {"driver": "nvidia", "count": 2, "capabilities": ["gpu"]}
    assert "./data:/workspace/data" in compose["services"]["app"]["volumes"]
    devc = json.loads((root / ".devcontainer/devcontainer.json").read_text())
    assert devc["hostRequirements"]["gpu"] is True and devc["runArgs"][:2] == ["--gpus", "2"]
    job = yaml.safe_load((root / "kubernetes/job.yaml").read_text())
    res = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "16", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": 2, "memory": "64Gi"}}
    assert "runtimeClassName" not in job["spec"]["template"]["spec"]  # only where the cluster uses one
    ds = yaml.safe_load((root / "kubernetes/diagnose-daemonset.yaml").read_text())
    pod = ds["spec"]["template"]["spec"]
    assert "gpusetup diagnose --json" in pod["containers"][0]["command"][2]
    assert pod["nodeSelector"] and pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert "nvidia.com/gpu" not in json.dumps(pod["containers"][0]["resources"])  # never takes GPUs from jobs
    # root without capabilities: the image's USER is nobody, but the root-owned hostPath must be writable
    assert pod["containers"][0]["securityContext"]["runAsUser"] == 0
    assert pod["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    slurm = (root / "slurm/job.sbatch").read_text()
    assert "#SBATCH --gpus-per-node=2" in slurm and "apptainer exec --nv" in slurm
    assert "#SBATCH --cpus-per-gpu=8" in slurm and "#SBATCH --mem-per-gpu=32G" in slurm and "--gres" not in slurm
    assert "docker://registry.example.com/gpu-tensorflow:2.21.0-and-cuda" in slurm
    readme = (root / "README.md").read_text()
    assert "## What was chosen and why" in readme and "## What the host needs" in readme
    assert "minor-version compatibility" in readme  # wheel CUDA 12.5 on a 12.2 driver
    enroot = (generated["pytorch-rtx3080-595"][0] / "slurm/job.sbatch").read_text()
    assert 'srun --container-image="${IMAGE}"' in enroot and "registry.example.com#gpu-pytorch" in enroot
    jax = (generated["jax-h100-590-registry"][0] / "kubernetes/job.yaml").read_text()
    assert "harbor.lab.example/ml/gpu-jax:0.12.0.1-cuda13" in jax
    opted = generated["pytorch-h100-590-healthcheck-runtimeclass"][0]
    assert 'HEALTHCHECK --interval=10m' in (opted / "Dockerfile").read_text()
    job = yaml.safe_load((opted / "kubernetes/job.yaml").read_text())
    assert job["spec"]["template"]["spec"]["runtimeClassName"] == "nvidia-cdi"
    ds = yaml.safe_load((opted / "kubernetes/diagnose-daemonset.yaml").read_text())
    assert ds["spec"]["template"]["spec"]["runtimeClassName"] == "nvidia-cdi"


# ---------------------------------------------------------------- the validators do reject broken files


def test_validators_reject_broken_files(tmp_path: Path) -> None:
    bad_df = tmp_path / "Dockerfile"
    bad_df.write_text("FROM ubuntu\nRUN pip install torch\n")
    cfg = tmp_path / ".hadolint.yaml"
    cfg.write_text("ignored: []\n")
    codes = {p["code"] for p in hadolint(bad_df, cfg)}
    assert {"DL3006", "DL3013"} <= codes
    no_caps = {"services": {"app": {"image": "x:1", "deploy": {"resources": {"reservations": {
        "devices": [{"driver": "nvidia", "count": 1}]}}}}}}
    assert compose_errors(no_caps)
    assert devcontainer_errors({"image": "x:1", "hostRequirements": {"gpu": "sometimes"}})
    assert devcontainer_errors({"image": "x:1", "runargs": ["--gpus", "all"]})  # typo'd property
    assert kubernetes_errors({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
                              "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x:1",
                                                                             "gpus": 1}]}}}})
    script = tmp_path / "s.sh"
    script.write_text("#!/bin/bash\nrm -rf $DIR/*\n")
    assert shell_errors(script)
