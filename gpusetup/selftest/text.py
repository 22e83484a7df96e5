"""Plain-text rendering of a :class:`~gpusetup.model.SelfTestResult` (CLI; the wizard can reuse it)."""

from __future__ import annotations

from gpusetup.model import Measurement, SelfTestResult

LABELS = {
    "h2d_pinned": "host→GPU copy, pinned memory",
    "d2h_pinned": "GPU→host copy, pinned memory",
    "h2d_pageable": "host→GPU copy, pageable memory",
    "d2h_pageable": "GPU→host copy, pageable memory",
    "d2d": "GPU memory copy (read + write)",
    "copy_integrity": "copied data intact",
    "matmul_fp32_correct": "FP32 matmul correct vs CPU",
    "matmul_fp32_ptx": "FP32 matmul, own PTX kernel",
    "matmul_repeat_bitexact": "repeat-and-compare, bit-exact",
    "cublas_fp32": "cuBLAS FP32 GEMM",
    "cublas_tf32": "cuBLAS TF32 GEMM",
    "cublas_fp16": "cuBLAS FP16 GEMM (tensor cores)",
    "cublas_bf16": "cuBLAS BF16 GEMM (tensor cores)",
    "cpu_matmul_fp32": "CPU FP32 matmul (numpy)",
    "cpu_copy": "CPU memory copy",
    "cpu_triad_2pass": "CPU triad (numpy, 2-pass)",
    "gpu_cpu_speedup": "GPU/CPU speed-up (FP32 matmul)",
}
TIERS = [("driver", "Driver tier: CUDA driver + shipped PTX kernels"), ("cublas", "cuBLAS tier"),
         ("framework", "Framework tier (in the target Python)"), ("cpu", "CPU baseline")]


def _num(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}" if abs(v) >= 100 else f"{v:.3g}"


def line(m: Measurement) -> list[str]:
    label = LABELS.get(m.name) or (m.name[10:] if m.name.startswith("framework_")
                                   else m.name.replace("_", " "))
    if m.value is None:
        value = "—"
    elif m.unit == "errors":
        value = "none" if m.value == 0 else f"{m.value:g} errors"
    else:
        value = f"{_num(m.value)} {m.unit}"
    if m.rated and m.fraction is not None:
        value += f"  of {_num(m.rated)} rated ({m.fraction:.0%})"
        if m.datasheet and m.rated_basis not in (None, "datasheet") and abs(m.datasheet - m.rated) > 1e-9:
            value += f", datasheet {_num(m.datasheet)}"
    if m.spread is not None and len(m.samples) > 1:
        value += f"  ±{m.spread / 2:.1%}"
    out = [f"  {label:<34} {value}  [{m.verdict.upper()}]"]
    if m.reason:
        out.append(f"  {'':<34} {m.reason}")
    return out


def format_text(r: SelfTestResult) -> str:
    head = f"gpusetup self-test ({r.mode})"
    if r.gpu_name:
        head += f" — {r.gpu_name} (GPU {r.device})"
    elif not r.gpu_tested:
        head += " — no NVIDIA GPU tested"
    lines = [head, "=" * len(head)]
    if r.notes:
        lines.extend(f"  - {n}" for n in r.notes)
    for tier, title in TIERS:
        ms = [m for m in r.measurements if m.tier == tier]
        if not ms:
            continue
        lines.append("")
        lines.append(title)
        for m in ms:
            lines.extend(line(m))
    lines.append("")
    if any(m.tier == "framework" for m in r.measurements):
        lines.append(proof_line(r))
    verdict = {"pass": "PASS: everything measured is healthy.",
               "warn": "WARNING: some results are below the usual range; see the reasons above.",
               "fail": "FAIL: at least one result points to a problem; see the reasons above.",
               "info": "Measured; nothing to judge against.",
               "skipped": "Nothing could be measured."}.get(r.verdict, r.verdict)
    if r.cancelled:
        verdict = "CANCELLED — partial results. " + verdict
    took = f" ({r.duration_s:.1f} s)" if r.duration_s is not None else ""
    lines.append(f"Result: {verdict}{took}")
    return "\n".join(lines) + "\n"


def proof_line(r: SelfTestResult) -> str:
    """One sentence: is the framework proven in the environment that was checked?"""
    from gpusetup.selftest.proof import framework_proof

    p = framework_proof(r)
    names = ", ".join(p.frameworks)
    where = f" in {p.python}" if p.python else ""
    return {
        "gpu": f"Framework: PROVEN — {names}{where} sees the GPU and computes correctly on it.",
        "cpu": f"Framework: PROVEN on the CPU — {names}{where} computes correctly (no GPU for it to use).",
        "failed": f"Framework: FAILED — {names}{where}: {p.reason}",
    }.get(p.status, f"Framework: NOT PROVEN{where} — {p.reason}")
