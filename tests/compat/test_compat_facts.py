"""One test per kind of compat fact the resolver applies, each citing the row (and its source) it rests on.

Row kinds: wheel GPU code read by cuobjdump (TensorFlow arch_lists), PTX JIT failures reported upstream,
the Jetson table (inferred from a Tegra-only compute capability), legacy driver branches, unverified rows
said in plain words, Python ranges read from the wheels, and `db info`'s age and verified share.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpusetup.compat import db as compat_db
from gpusetup.compat.db import get_db
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve


def _plan(framework: str, gpus: list[dict[str, Any]], **kw: Any):
    prof = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.95.05", "gpus": gpus}
    prof.update(kw)
    (plan,) = resolve(machine_from_data(prof), [framework])
    return plan


def nv(name: str, cc: str) -> dict[str, Any]:
    return {"vendor": "nvidia", "name": name, "compute_capability": cc}


def _rows(file: str, table: str) -> list[dict[str, Any]]:
    return get_db().rows(file, table)


# ----------------------------------------------------------------- wheel GPU code (cuobjdump on the wheel)


def test_tensorflow_floor_comes_from_the_wheels_cubins() -> None:
    """tensorflow/arch_lists: 2.17–2.21 wheels hold sm_60…sm_90 cubins, 2.16's also sm_50 (cuobjdump on
    libtensorflow_framework.so.2 of the PyPI wheels). Maxwell 5.2 thus runs 2.16 (the sm_50 cubin), not 2.17+."""
    rows = {r["tf_min"]: r for r in _rows("tensorflow", "arch_lists")}
    assert rows["2.21"]["cc"] == ["6.0", "7.0", "8.0", "8.9", "9.0"] and rows["2.21"]["ptx"] == "9.0"
    assert rows["2.16"]["cc"][0] == "5.0"
    assert rows["2.21"]["provenance"]["source"].startswith("https://files.pythonhosted.org/")
    plan = _plan("tensorflow", [nv("NVIDIA GeForce GTX 970", "5.2")], driver="550.54.15")
    assert plan.ok and plan.choice.version == "2.16"
    assert any(r.option == "and-cuda (tensorflow 2.17–2.21)" and "no kernels for compute capability 5.2" in r.reason
               and "cubins for 6.0, 7.0, 8.0, 8.9, 9.0 and PTX for 9.0" in r.reason for r in plan.rejected)


def test_tensorflow_gpu_newer_than_the_cubins_runs_through_ptx_with_a_note() -> None:
    """tensorflow/arch_lists 2.21: compute_90 PTX; no ptx_jit_failures row for 10.0 → offered, with the JIT said."""
    plan = _plan("tensorflow", [nv("NVIDIA B200", "10.0")])
    assert plan.ok and plan.choice.version == "2.21"
    assert any("JIT-compiling the 9.0 PTX" in n for n in plan.notes)


def test_tensorflow_ptx_jit_failures_reject_the_gpu_and_cite_the_issue() -> None:
    """tensorflow/ptx_jit_failures: CUDA_ERROR_INVALID_PTX on compute capability 12.0 (tensorflow#101746, #89272,
    #97387, #90291). The rows are users' reports (verified=false), and the rejection says so."""
    (row,) = _rows("tensorflow", "ptx_jit_failures")
    assert row["verified"] is False and "https://github.com/tensorflow/tensorflow/issues/101746" in row["sources"]
    plan = _plan("tensorflow", [nv("NVIDIA GeForce RTX 5090", "12.0")])
    assert not plan.ok and plan.choice.variant == "cpu" and plan.gpu_choice is None
    (rej,) = [r for r in plan.rejected if r.option == "and-cuda (tensorflow 2.16–2.21)"]
    assert "CUDA_ERROR_INVALID_PTX" in rej.reason and "issues/101746" in rej.reason
    assert "could not verify these reports" in rej.reason


def test_tensorflow_release_whose_pinned_cuda_predates_the_gpu_is_not_offered_through_its_ptx() -> None:
    """TF 2.15's wheel records its GPU code (tensorflow/wheels 2.15.1 builds: build_info.py sm_50…compute_80, so
    PTX 8.0), but its [and-cuda] pins CUDA 12.2 exactly (nvidia-cuda-runtime-cu12==12.2.140): CUDA 12.2's
    libraries know no GPU above 9.0 (cuda_arch/toolkit_targets), so a 12.0 GPU gets no build from it."""
    wheel = next(r for r in _rows("tensorflow", "wheels") if r["project"] == "tensorflow" and r["version"] == "2.15.1")
    assert wheel["builds"]["linux-x86_64"]["arch"][-1] == "compute_80" and wheel["and_cuda"]["cuda"] == "12.2.140"
    plan = _plan("tensorflow", [nv("NVIDIA GeForce RTX 5090", "12.0")], python="3.11")
    assert any(r.option.startswith("and-cuda (tensorflow 2.15") and r.code == "reason.ptx-libraries-too-old"
               for r in plan.rejected), plan.rejected


# ------------------------------------------------------------------------------------- Jetson table


def test_jetson_is_recognised_from_a_tegra_only_compute_capability() -> None:
    """pytorch/jetson: ccs 5.3/6.2/7.2/8.7 are Jetson-only (developer.nvidia.com/cuda-gpus), sbsa_wheels false:
    an Arm profile with an Orin (8.7) is a Jetson even without "jetson": true, so the SBSA wheels are refused."""
    plan = _plan("pytorch", [nv("Orin (nvgpu)", "8.7")], arch="aarch64", driver=None)
    assert not plan.ok and plan.choice.variant == "cpu"
    assert any("built for Arm servers (SBSA)" in r.reason for r in plan.rejected)
    assert any("only Jetson (Tegra) GPUs have" in n for n in plan.notes)
    jax = _plan("jax", [nv("Orin (nvgpu)", "8.7")], arch="aarch64", driver=None)
    assert not jax.ok and any("Jetson" in r.reason for r in jax.rejected)


def test_jetson_thor_keeps_the_sbsa_wheels() -> None:
    """pytorch/jetson Thor row (ccs 11.0) sbsa_wheels true; arch_lists aarch64 cu13x include 11.0."""
    plan = _plan("pytorch", [nv("NVIDIA Thor", "11.0")], arch="aarch64")
    assert plan.ok and plan.choice.variant.startswith("cu13")


def test_the_same_compute_capability_on_x86_64_is_not_a_jetson() -> None:
    plan = _plan("pytorch", [nv("NVIDIA A100-SXM4-40GB", "8.0")])
    assert plan.ok and not any("Jetson" in n for n in plan.notes)


# ---------------------------------------------------------------------------------- legacy branches


def test_legacy_driver_branch_caps_and_names_the_driver() -> None:
    """driver_branches/legacy_branches: Kepler's last branch is R470 (linux_below 471) — a K80 without a driver
    gets branch 470 and a build that runs on it (cu118 needs ≥ 450.80.02, cuda_drivers/family_minimums)."""
    kepler = next(r for r in _rows("driver_branches", "legacy_branches") if r["architecture"] == "Kepler")
    assert kepler["last_branch"] == 470
    plan = _plan("pytorch", [nv("Tesla K80", "3.7")], driver=None, python="3.10")
    assert not plan.ok and plan.gpu_choice is not None and plan.gpu_choice.variant == "cu118"
    (act,) = plan.actions
    assert act.kind == "install-driver" and "470 (the last driver branch for Kepler GPUs)" in act.branch


# --------------------------------------------------------------------------------- unverified rows


def test_a_decision_resting_on_an_unverified_row_says_so() -> None:
    """pytorch/arch_lists windows cu126 2.6–2.14 is verified=false ('later releases assumed unchanged [I]')."""
    row = next(r for r in _rows("pytorch", "arch_lists") if r["os"] == "windows" and r["variant"] == "cu126")
    assert row.get("verified") is False
    plan = _plan("pytorch", [nv("NVIDIA GeForce GTX 1080 Ti", "6.1")], os="windows", driver="560.94")
    assert plan.ok and plan.choice.variant == "cu126"
    assert any(n.startswith("Based on unverified data: arch list of torch") for n in plan.notes), plan.notes


# -------------------------------------------------------------------------- facts read from indexes


def test_python_ranges_include_published_experimental_wheels() -> None:
    """pytorch/releases python_max from the cpXY tags on PyPI: torch 2.2/2.3 published cp312 wheels and 2.5
    cp313 wheels (RELEASE.md calls them experimental), so those Pythons are not refused."""
    rel = {r["version"]: r for r in _rows("pytorch", "releases")}
    assert rel["2.2"]["python_max"] == "3.12" and rel["2.3"]["python_max"] == "3.12"
    assert rel["2.5"]["python_max"] == "3.13"
    assert rel["2.5"]["provenance"]["source"] == "https://pypi.org/simple/torch/"


def test_pypi_default_variants_come_from_the_wheels_requires_dist() -> None:
    """pytorch/releases pypi_default_linux / _aarch64: the CUDA pinned in Requires-Dist of the PyPI wheels."""
    rel = {r["version"]: r for r in _rows("pytorch", "releases")}
    assert rel["2.15"]["pypi_default_linux"] == "cu132" and rel["2.15"]["pypi_default_aarch64"] == "cu132"
    assert rel["2.9"]["pypi_default_linux"] == "cu128" and rel["2.9"]["pypi_default_aarch64"] == "cpu"
    assert rel["2.12"]["latest_known"] == "2.12.1"


# ------------------------------------------------------------------------------------------ db info


def test_db_info_gives_age_and_verified_share() -> None:
    info = get_db().info()
    assert info["rows"] > 100 and 0 < info["verified_rows"] <= info["rows"]
    assert compat_db._age_days("2026-11-22", dt.date(2026, 11, 24)) == 2
    assert compat_db._age_days("not a date") is None
    assert info["age_days"] == compat_db._age_days(info["checked"])


def test_unverified_legacy_branch_cudnn_pin_and_arch_minimum_are_said() -> None:
    """A plan that rests on an unverified row says so in its notes: Kepler's legacy row (its Windows cut-off has no
    primary source) and driver_branches/architecture_min_driver (inferred). cudnn/legacy_pins was read from the
    cuDNN wheels with cuobjdump on 2026-11-27 (9.11.0.98 has no pre-Turing kernels): no such note any more."""
    k80 = _plan("pytorch", [nv("Tesla K80", "3.7")], driver=None, python="3.10")
    assert any("Based on unverified data: that 470 is the last driver branch for Kepler GPUs" in n for n in k80.notes)
    pascal = _plan("tensorflow", [nv("NVIDIA GeForce GTX 1080 Ti", "6.1")], driver="550.54.15")
    assert "nvidia-cudnn-cu12==9.10.2.21" in pascal.choice.packages
    assert not any("Based on unverified data: that nvidia-cudnn-cu12" in n for n in pascal.notes)
    rtx5090 = _plan("pytorch", [nv("NVIDIA GeForce RTX 5090", "12.0")], os="windows", driver="572.16")
    assert rtx5090.ok and rtx5090.choice.variant == "cu128"  # needs 570.65 (Blackwell), above the 12.x family minimum
    assert any("the oldest driver that supports Blackwell GPUs (570.65) is inferred" in n for n in rtx5090.notes)


def test_db_info_cli_prints_age_and_verified_share(capsys) -> None:
    from gpusetup.cli import main

    assert main(["db", "info"]) == 0
    out = capsys.readouterr().out
    assert "Age: checked " in out and "Verified: " in out and "rows (" in out
