"""Markdown report to paste into an issue tracker: findings first, facts as tables, raw output collapsed."""

from __future__ import annotations

from gpusetup.model import Gpu, Report, Severity

_MARK = {Severity.ERROR: "🔴 **Error**", Severity.WARNING: "🟠 **Warning**", Severity.INFO: "🔵 Info", Severity.OK: "🟢 OK"}


def _cell(v: object) -> str:
    if v is None or v == "" or v == []:
        return "—"
    text = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[tuple[str, object]]) -> list[str]:
    rows = [(k, v) for k, v in rows if v not in (None, "", [])]
    if not rows:
        return []
    return ["| | |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows], ""]


def _gpu_rows(g: Gpu) -> list[tuple[str, object]]:
    mem = f"{g.memory_total_mib / 1024:.1f} GiB" if g.memory_total_mib else None
    link = None
    if g.pcie.gen_current or g.pcie.gen_max:
        link = f"Gen{g.pcie.gen_current or '?'} x{g.pcie.width_current or '?'} (max Gen{g.pcie.gen_max or '?'} x{g.pcie.width_max or '?'})"
    return [
        ("vendor", g.vendor),
        ("PCI", " ".join(x for x in [g.pci.address, g.pci.pci_id] if x)),
        ("kernel driver", g.pci.kernel_driver),
        ("architecture", " / ".join(x for x in [g.architecture, g.chip] if x)),
        ("compute capability", g.compute_capability),
        ("memory", mem),
        ("PCIe link", link),
        ("UUID", g.uuid),
        ("ECC", g.ecc.mode_current),
        ("throttle reasons", g.throttle_reasons),
        ("driver model", g.driver_model),
    ]


def render(report: Report) -> str:
    m = report.machine
    out: list[str] = [f"## gpusetup report ({m.tool_version or '?'}, {m.collected_at or 'time unknown'})", ""]
    problems = [f for f in report.findings if f.severity is not Severity.OK]
    out += [f"### Findings ({len(problems)})", ""]
    if not problems:
        out += ["No problems found.", ""]
    for f in report.findings:
        code = f" `{f.catalogue}`" if f.catalogue else ""
        out.append(f"- {_MARK[f.severity]}: {f.title}{code}")
        if f.detail:
            out.append(f"  {f.detail}")
        if f.fix:
            out += ["", "  **Fix:**", "", "  ```", *[f"  {line}" for line in f.fix.splitlines()], "  ```"]
        if f.evidence:
            out += ["  <details><summary>evidence</summary>", "", "  ```", *[f"  {e}" for e in f.evidence], "  ```", "  </details>"]
        out.append("")
    out += [f"### GPUs ({len(m.gpus)})", ""]
    for i, g in enumerate(m.gpus):
        out += [f"**{g.index if g.index is not None else i}: {g.name or g.pci.device_name or 'unknown'}**", "", *_table(_gpu_rows(g))]
    d = m.driver
    out += ["### Driver", "", *(_table([
        ("version", d.version),
        *[(f"via {r.source}", r.value or r.error) for r in d.versions],
        ("supports CUDA up to", d.cuda_driver_version),
        ("NVML", d.nvml_version or d.nvml_error),
        ("cuInit error", d.cuinit_error),
        *[(f"module {k.name}", " ".join(x for x in ["loaded" if k.loaded else "not loaded", k.version or "", k.flavour or ""] if x)) for k in d.modules],
    ]) or ["No NVIDIA driver found.", ""])]
    c = m.cuda
    out += ["### CUDA stack", "", *(_table([
        *[(f"toolkit {t.version or '?'}", t.path) for t in c.toolkits],
        *[(lib.name, " ".join(x for x in [lib.version or "", lib.path or ""] if x)) for lib in c.libraries],
        ("pip nvidia-* wheels", [f"{p.name} {p.version}" for p in c.nvidia_wheels]),
        *sorted(c.env.items()),
    ]) or ["Nothing found (framework wheels bring their own CUDA libraries).", ""])]
    out += ["### Python and frameworks", ""]
    for env in m.python_envs:
        out += _table([("python", f"{env.version} ({env.executable})"), *[
            (fw.name, "; ".join(x for x in [fw.version or "?", fw.build_cuda and f"CUDA {fw.build_cuda}", fw.gpu_available is not None and f"GPU available: {fw.gpu_available}", fw.error] if x))
            for fw in env.frameworks
        ]])
    s = m.system
    out += ["### System", "", *_table([
        ("OS", s.distro_name or s.os), ("kernel", s.kernel), ("arch", s.arch), ("WSL", s.wsl or None),
        ("container", s.container), ("Secure Boot", None if s.secure_boot is None else ("on" if s.secure_boot else "off")),
        ("CPU", s.cpu.model), ("CPU features", s.cpu.flags), ("RAM", f"{s.ram_total_mib / 1024:.1f} GiB" if s.ram_total_mib else None),
        ("python", s.python),
    ])]
    if report.plans:
        out += ["### Plan", ""]
        for p in report.plans:
            ch = p.choice
            out.append(f"- **{p.framework}**: " + (f"{ch.version} `{ch.variant}`" if ch else "no build possible") + ("" if p.ok else " (needs action first)"))
            for a in p.actions:
                out.append(f"  - first: {a.why}")
            if ch and ch.commands:
                out += ["", "  ```bash", *[f"  {cmd}" for cmd in ch.commands], "  ```"]
        out.append("")
    if report.selftest:
        out += ["### Self-test", "", "| test | result | rated | verdict |", "|---|---|---|---|"]
        for meas in report.selftest.measurements:
            val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
            rated = f"{meas.rated:.3g} ({meas.fraction:.0%})" if meas.rated and meas.fraction is not None else "—"
            out.append(f"| {meas.name} | {val} | {rated} | {meas.verdict}: {_cell(meas.reason)} |")
        out.append("")
    raw = [c for c in m.commands if c.stdout_tail or c.stderr_tail]
    if raw:
        out += ["<details><summary>Raw command output</summary>", ""]
        for cmd in raw:
            out += [f"`{' '.join(cmd.argv)}` → exit {cmd.returncode}{' (timed out)' if cmd.timed_out else ''}, {cmd.duration_ms:.0f} ms", "", "```", (cmd.stdout_tail + cmd.stderr_tail).rstrip()[-3000:], "```", ""]
        out += ["</details>", ""]
    return "\n".join(out).rstrip() + "\n"
