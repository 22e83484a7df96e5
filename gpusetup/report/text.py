"""Human-readable text report: findings first (most severe first), then the facts, aligned.

Colour only when asked (the CLI asks on a TTY without ``NO_COLOR``).
"""

from __future__ import annotations

import textwrap

from gpusetup.model import Finding, Gpu, Machine, Report, SelfTestResult, Severity
from gpusetup.report.plans import describe
from gpusetup.report.sections import reading_label

_ICON = {Severity.ERROR: "ERROR", Severity.WARNING: "WARN ", Severity.INFO: "INFO ", Severity.OK: "OK   "}
_COLOR = {Severity.ERROR: "\x1b[31;1m", Severity.WARNING: "\x1b[33;1m", Severity.INFO: "\x1b[36m", Severity.OK: "\x1b[32m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
_WIDTH = 100
_KEY = 22


class _Out:
    def __init__(self, color: bool) -> None:
        self.lines: list[str] = []
        self.color = color

    def c(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def heading(self, text: str) -> None:
        if self.lines:
            self.lines.append("")
        self.lines.append(self.c(_BOLD, text))
        self.lines.append(self.c(_DIM, "─" * min(len(text), _WIDTH)))

    def kv(self, key: str, value: object, indent: int = 2) -> None:
        if value is None or value == "" or value == []:
            return
        text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        pad = " " * indent
        wrapped = textwrap.wrap(text, _WIDTH - indent - _KEY - 1) or [""]
        self.lines.append(f"{pad}{key:<{_KEY}} {wrapped[0]}")
        for more in wrapped[1:]:
            self.lines.append(f"{pad}{'':<{_KEY}} {more}")

    def para(self, text: str, indent: int = 8) -> None:
        for raw in text.splitlines() or [""]:
            if raw.startswith(("  ", "$ ", "sudo ", "pip ", "python")) or len(raw) < _WIDTH - indent:
                self.lines.append(" " * indent + raw)
            else:
                self.lines.extend(textwrap.wrap(raw, _WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent))


def _yn(v: bool | None) -> str | None:
    return None if v is None else ("yes" if v else "no")


def _mib(v: int | None) -> str | None:
    if v is None:
        return None
    return f"{v / 1024:.1f} GiB" if v >= 1024 else f"{v} MiB"


def render_text(report: Report, color: bool = False) -> str:
    out = _Out(color)
    m = report.machine
    title = f"gpusetup {m.tool_version or ''} — diagnose report"
    out.lines.append(out.c(_BOLD, title))
    if m.collected_at:
        out.lines.append(out.c(_DIM, f"collected {m.collected_at}"))
    _findings(out, report.findings)
    _gpus(out, m)
    _driver(out, m)
    _cuda(out, m)
    _frameworks(out, m)
    _system(out, m)
    _containers(out, m)
    if report.plans:
        _plans(out, report)
    if report.selftest:
        _selftest(out, report.selftest)
    _probes(out, m)
    return "\n".join(out.lines) + "\n"


def _findings(out: _Out, findings: list[Finding]) -> None:
    problems = [f for f in findings if f.severity is not Severity.OK]
    out.heading(f"Findings ({len(problems)})" if problems else "Findings")
    if not problems:
        out.lines.append("  " + out.c(_COLOR[Severity.OK], "No problems found."))
        return
    for f in findings:
        code = f" [{f.catalogue}]" if f.catalogue else ""
        out.lines.append(f"  {out.c(_COLOR[f.severity], _ICON[f.severity])} {out.c(_BOLD, f.title)}{out.c(_DIM, code)}")
        if f.detail:
            out.para(f.detail)
        if f.fix:
            out.lines.append(" " * 8 + out.c(_BOLD, "Fix:"))
            out.para(f.fix, indent=10)
        if f.evidence:
            out.lines.append(" " * 8 + out.c(_DIM, "Evidence:"))
            for e in f.evidence[:6]:
                out.lines.append(" " * 10 + out.c(_DIM, e[:_WIDTH]))
        out.lines.append("")
    if out.lines[-1] == "":
        out.lines.pop()


def _gpus(out: _Out, m: Machine) -> None:
    out.heading(f"GPUs ({len(m.gpus)})")
    if not m.gpus:
        out.lines.append("  No display or 3D controller found on the PCI bus.")
        return
    for i, g in enumerate(m.gpus):
        _gpu(out, i, g)


def _gpu(out: _Out, i: int, g: Gpu) -> None:
    name = g.name or g.pci.device_name or "unknown device"
    idx = f"#{g.index}" if g.index is not None else f"[{i}]"
    out.lines.append(f"  {out.c(_BOLD, f'{idx} {name}')}  ({g.vendor})")
    out.kv("PCI", " ".join(x for x in [g.pci.address, g.pci.pci_id and f"[{g.pci.pci_id}]"] if x) or None, 4)
    out.kv("kernel driver", g.pci.kernel_driver or ("none bound" if g.pci.address else None), 4)
    arch = " / ".join(x for x in [g.architecture, g.chip] if x)
    out.kv("architecture", arch or None, 4)
    if g.compute_capability:
        src = f" (from {g.compute_capability_source})" if g.compute_capability_source else ""
        out.kv("compute capability", f"{g.compute_capability}{src}", 4)
    out.kv("gfx target", g.gfx_target, 4)
    if g.memory_total_mib is not None:
        used = f", {_mib(g.memory_used_mib)} used" if g.memory_used_mib is not None else ""
        out.kv("memory", f"{_mib(g.memory_total_mib)}{used}", 4)
    out.kv("SMs", g.sm_count, 4)
    out.kv("UUID", g.uuid, 4)
    p = g.pcie
    if p.gen_current or p.gen_max:
        out.kv(
            "PCIe link",
            f"Gen{p.gen_current or '?'} x{p.width_current or '?'} now, max Gen{p.gen_max or '?'} x{p.width_max or '?'}"
            + (" (an idle GPU lowers its link to save power; that is normal)" if (p.gen_current or 0) < (p.gen_max or 0) else ""),
            4,
        )
    c = g.clocks
    if c.graphics_mhz or c.sm_max_mhz:
        out.kv("clocks", f"graphics {c.graphics_mhz or '?'} MHz (max {c.graphics_max_mhz or '?'}), memory {c.memory_mhz or '?'} MHz (max {c.memory_max_mhz or '?'})", 4)
    if g.temperature_c is not None or g.power_draw_w is not None:
        bits = []
        if g.temperature_c is not None:
            bits.append(f"{g.temperature_c} °C")
        if g.power_draw_w is not None:
            bits.append(f"{g.power_draw_w:.0f} W" + (f" of {g.power_limit_w:.0f} W" if g.power_limit_w else ""))
        out.kv("temperature/power", ", ".join(bits), 4)
    e = g.ecc
    if e.mode_current:
        counts = ""
        if e.volatile_uncorrected is not None or e.aggregate_uncorrected is not None:
            counts = f"; uncorrected errors: {e.volatile_uncorrected or 0} (volatile), {e.aggregate_uncorrected or 0} (lifetime)"
        out.kv("ECC", f"{e.mode_current}{counts}", 4)
    if e.retired_pages_pending or e.retired_pages_dbe:
        out.kv("retired pages", f"sbe {e.retired_pages_sbe or 0}, dbe {e.retired_pages_dbe or 0}, pending {_yn(e.retired_pages_pending)}", 4)
    if e.remapped_rows_uncorrectable or e.remapped_rows_pending or e.remapped_rows_failure:
        out.kv("row remapping", f"uncorrectable {e.remapped_rows_uncorrectable or 0}, pending {_yn(e.remapped_rows_pending)}, failure {_yn(e.remapped_rows_failure)}", 4)
    out.kv("throttle reasons", g.throttle_reasons or None, 4)
    out.kv("persistence mode", _yn(g.persistence_mode), 4)
    if g.compute_mode and g.compute_mode != "Default":
        out.kv("compute mode", g.compute_mode, 4)
    if g.mig_mode and g.mig_mode not in ("N/A", "Disabled"):
        out.kv("MIG", f"{g.mig_mode}; {len(g.mig_devices)} MIG devices", 4)
    if g.mig_mode_pending and g.mig_mode and g.mig_mode_pending != g.mig_mode:
        out.kv("MIG after reset", f"{g.mig_mode_pending} (pending until the GPU is reset)", 4)
    if g.process_list:
        out.kv("processes", [f"{p.pid} {p.name or '?'}"
                             + (f" {_mib(p.used_mib)}" if p.used_mib is not None else "") for p in g.process_list[:8]]
               + ([f"… {len(g.process_list) - 8} more"] if len(g.process_list) > 8 else []), 4)
    out.kv("driver model", g.driver_model, 4)
    for ev in g.evidence:
        if not ev.ok:
            out.kv("problem", f"{ev.source}: {ev.error}", 4)


def _driver(out: _Out, m: Machine) -> None:
    d = m.driver
    out.heading("NVIDIA driver")
    found = d.version or any(r.value for r in d.versions) or any(mod.loaded or mod.version for mod in d.modules)
    if not found:
        out.lines.append("  No NVIDIA driver found" + ("." if m.nvidia_gpus else " (and no NVIDIA GPU on this machine)."))
        if d.versions or d.evidence:
            checked = sorted({r.source.split(" (")[0] for r in d.versions} | {e.source.split(" (")[0] for e in d.evidence})
            out.kv("looked with", checked)
        if m.nvidia_gpus:
            for ev in d.evidence:
                if not ev.ok:
                    out.kv("problem", f"{ev.source}: {ev.error}")
        return
    out.kv("version", d.version or "unknown")
    for r in d.versions:
        out.kv(f"  {reading_label(r.source)}", r.value if r.value else f"— ({r.error})" if r.error else "—")
    if d.cuda_driver_version:
        out.kv("supports CUDA up to", f"{d.cuda_driver_version}" + (f" (from {d.cuda_driver_version_source})" if d.cuda_driver_version_source else ""))
    out.kv("NVML", d.nvml_version or (f"not working: {d.nvml_error}" if d.nvml_error else None))
    out.kv("cuInit", f"failed: {d.cuinit_error}" if d.cuinit_error else None)
    for mod in d.modules:
        if mod.loaded is None and not mod.version:
            continue
        state = "loaded" if mod.loaded else "not loaded" if mod.loaded is False else "state unknown"
        bits = [state]
        if mod.version:
            bits.append(str(mod.version))
        if mod.flavour:
            bits.append(f"{mod.flavour} flavour")
        if mod.available_for_running_kernel is False:
            bits.append("NOT built for the running kernel")
        out.kv(f"module {mod.name}", ", ".join(bits))
        out.kv("  DKMS", mod.dkms_status or None)
    shown = {(r.source, r.error) for r in d.versions}
    for ev in d.evidence:
        if not ev.ok and (ev.source, ev.error) not in shown:
            out.kv("problem", f"{ev.source}: {ev.error}")


def _cuda(out: _Out, m: Machine) -> None:
    c = m.cuda
    out.heading("CUDA stack")
    if not (c.toolkits or c.libraries or c.nvidia_wheels or c.env):
        out.lines.append("  No CUDA toolkit, CUDA libraries or CUDA environment variables found.")
        out.lines.append("  (That is fine: PyTorch, TensorFlow and JAX wheels bring their own CUDA libraries.)")
        return
    for t in c.toolkits:
        out.kv("toolkit", f"{t.version or '?'} at {t.path} ({t.source})")
    for lib in c.libraries:
        out.kv(lib.name, " ".join(x for x in [str(lib.version or ""), lib.path and f"({lib.path})", lib.source and f"[{lib.source}]"] if x))
    if c.nvidia_wheels:
        out.kv("pip nvidia-* wheels", [f"{p.name} {p.version}" for p in c.nvidia_wheels])
    for k, v in sorted(c.env.items()):
        out.kv(k, v if v != "" else '"" (set but empty)')


def _frameworks(out: _Out, m: Machine) -> None:
    out.heading("Python and frameworks")
    if not m.python_envs:
        out.lines.append("  Not checked.")
        return
    for env in m.python_envs:
        kind = "conda env" if env.is_conda else "virtual env" if env.is_venv else "system Python"
        out.kv("python", f"{env.version or '?'} at {env.executable} ({kind})")
        if not env.frameworks:
            out.kv("frameworks", "none of torch, tensorflow, jax, cupy, onnxruntime installed")
        for fw in env.frameworks:
            bits = [str(fw.version or "?")]
            if fw.build_cuda:
                bits.append(f"built for CUDA {fw.build_cuda}")
            elif fw.build_rocm:
                bits.append(f"built for ROCm {fw.build_rocm}")
            elif fw.version:
                bits.append("CPU build" if not fw.build_cuda else "")
            if fw.gpu_available is not None:
                bits.append(f"GPU available: {_yn(fw.gpu_available)}" + (f" ({fw.device_count} devices)" if fw.device_count else ""))
            if fw.arch_list:
                bits.append("arch " + " ".join(fw.arch_list))
            if fw.error:
                bits.append(f"problem: {fw.error}")
            out.kv(fw.name, "; ".join(b for b in bits if b))
        for ev in env.evidence:
            if not ev.ok:
                out.kv("problem", f"{ev.source}: {ev.error}")


def _system(out: _Out, m: Machine) -> None:
    s = m.system
    out.heading("System")
    os_text = s.distro_name or " ".join(x for x in [s.os, s.os_version] if x) or None
    out.kv("OS", os_text)
    out.kv("kernel", s.kernel)
    out.kv("architecture", s.arch)
    if s.wsl:
        out.kv("WSL", f"yes (WSL{s.wsl_version or '?'}): the GPU driver comes from Windows")
    out.kv("container", s.container)
    out.kv("Secure Boot", None if s.secure_boot is None else ("enabled" if s.secure_boot else "disabled"))
    out.kv("Jetson", _yn(s.is_jetson) if s.is_jetson else None)
    out.kv("PRIME profile", s.prime_profile)
    cpu = s.cpu
    out.kv("CPU", " ".join(x for x in [cpu.model, cpu.cores_physical and f"({cpu.cores_physical} cores" + (f", {cpu.cores_logical} threads)" if cpu.cores_logical else ")")] if x) or None)
    out.kv("CPU features", cpu.flags or None)
    if s.ram_total_mib:
        out.kv("memory", f"{_mib(s.ram_total_mib)}" + (f", {_mib(s.ram_available_mib)} available" if s.ram_available_mib else ""))
    for path, free in s.disk_free_mib.items():
        out.kv(f"free disk {path}", _mib(free))
    out.kv("python", s.python)
    for ev in s.evidence:
        if not ev.ok:
            out.kv("problem", f"{ev.source}: {ev.error}")


def _containers(out: _Out, m: Machine) -> None:
    c = m.containers
    out.heading("Containers")
    if not (c.docker or c.podman):
        out.lines.append("  Neither Docker nor Podman is installed.")
        return
    out.kv("docker", c.docker)
    out.kv("docker daemon reachable", _yn(c.docker_daemon_reachable))
    out.kv("podman", c.podman)
    out.kv("NVIDIA runtime", _yn(c.nvidia_runtime_registered))
    out.kv("default runtime", c.default_runtime)
    out.kv("CDI specs", c.cdi_specs or None)
    out.kv("container toolkit", c.toolkit_version)


def _plans(out: _Out, report: Report) -> None:
    out.heading("Plan")
    for p in report.plans:
        t = describe(p)
        out.kv(p.framework, t.summary)
        for a in t.actions:
            out.kv("  first", a.why)
        for c in t.choices:
            if c.role == "after-actions":
                out.kv("  then", f"{c.version} ({c.variant})")
        for option, reason in t.rejected:
            out.kv("  not chosen", f"{option}: {reason}")


def _selftest(out: _Out, st: SelfTestResult) -> None:
    out.heading(f"Self-test ({st.mode})")
    for meas in st.measurements:
        val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
        rated = f" of {meas.rated:.3g} rated ({meas.fraction:.0%})" if meas.rated and meas.fraction is not None else ""
        out.kv(meas.name, f"{val}{rated} — {meas.verdict}" + (f": {meas.reason}" if meas.reason else ""))
    for n in st.notes:
        out.lines.append(f"  {n}")


def _probes(out: _Out, m: Machine) -> None:
    failed = [p for p in m.probes if not p.ok and p.error != "not available in this version"]
    total = sum(p.duration_ms for p in m.probes)
    out.heading("How this was collected")
    out.kv("probes", f"{len(m.probes)} run in {total:.0f} ms; {len(m.commands)} commands")
    for p in failed:
        out.kv(f"probe {p.name}", f"failed: {p.error}")
    slow = [c for c in m.commands if c.timed_out or c.duration_ms > 1000]
    for c in slow:
        out.kv("slow command", f"{' '.join(c.argv)}: {c.error or f'{c.duration_ms:.0f} ms'}")
