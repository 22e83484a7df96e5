"""Human-readable text report: findings first (most severe first), then the facts, aligned.

Colour only when asked (the CLI asks on a TTY without ``NO_COLOR``). Words in the CLI's language
(:func:`gpusetup.i18n.output_language`, ``gpusetup --lang zh_CN diagnose``): headings, labels and the
sentences of this report from the message catalogue, findings' titles and meanings from the findings
catalogue, plans and self-test results from their codes. What a tool or a rule reports in its own words (a
finding's detail and fix with this machine's values, probe errors, evidence) is quoted as it is.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata

from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg, render
from gpusetup.model import Finding, Gpu, Machine, Message, Report, SelfTestResult, Severity
from gpusetup.report.plans import describe
from gpusetup.selftest import text as selftest_text
from gpusetup.selftest.proof import answers
from gpusetup.term import STYLES

# The labels of the facts (the English is the key the renderer passes).
KEYS: dict[str, Message] = {
    "PCI": msg("report.key.pci"), "kernel driver": msg("report.key.kernel-driver"),
    "architecture": msg("report.key.architecture"), "compute capability": msg("report.key.compute-capability"),
    "gfx target": msg("report.key.gfx-target"), "memory": msg("report.key.memory"), "SMs": msg("report.key.sms"),
    "UUID": msg("report.key.uuid"), "PCIe link": msg("report.key.pcie-link"), "clocks": msg("report.key.clocks"),
    "temperature/power": msg("report.key.temperature-power"), "ECC": msg("report.key.ecc"),
    "retired pages": msg("report.key.retired-pages"), "row remapping": msg("report.key.row-remapping"),
    "throttle reasons": msg("report.key.throttle-reasons"), "persistence mode": msg("report.key.persistence-mode"),
    "compute mode": msg("report.key.compute-mode"), "MIG": msg("report.key.mig"),
    "MIG after reset": msg("report.key.mig-after-reset"), "processes": msg("report.key.processes"),
    "driver model": msg("report.key.driver-model"), "problem": msg("report.key.problem"),
    "looked with": msg("report.key.looked-with"), "version": msg("report.key.version"),
    "supports CUDA up to": msg("report.key.supports-cuda"), "NVML": msg("report.key.nvml"),
    "cuInit": msg("report.key.cuinit"), "DKMS": msg("report.key.dkms"), "toolkit": msg("report.key.toolkit"),
    "pip nvidia-* wheels": msg("report.key.nvidia-wheels"), "python": msg("report.key.python"),
    "frameworks": msg("report.key.frameworks"), "OS": msg("report.key.os"), "kernel": msg("report.key.kernel"),
    "WSL": msg("report.key.wsl"), "container": msg("report.key.container"),
    "Secure Boot": msg("report.key.secure-boot"), "Jetson": msg("report.key.jetson"),
    "PRIME profile": msg("report.key.prime-profile"), "CPU": msg("report.key.cpu"),
    "CPU features": msg("report.key.cpu-features"), "docker": msg("report.key.docker"),
    "docker daemon reachable": msg("report.key.docker-daemon"), "podman": msg("report.key.podman"),
    "NVIDIA runtime": msg("report.key.nvidia-runtime"), "default runtime": msg("report.key.default-runtime"),
    "CDI specs": msg("report.key.cdi-specs"), "container toolkit": msg("report.key.container-toolkit"),
    "first": msg("report.key.first"), "then": msg("report.key.then"), "not chosen": msg("report.key.not-chosen"),
    "probes": msg("report.key.probes"), "slow command": msg("report.key.slow-command"),
}

_ICON = {Severity.ERROR: "ERROR", Severity.WARNING: "WARN ", Severity.INFO: "INFO ", Severity.OK: "OK   "}
# gpusetup's colours are defined once (gpusetup.term.STYLES): the only escape sequences a terminal gets from it
_COLOR = {s: STYLES[s.value] for s in (Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.OK)}
_BOLD, _DIM, _RESET = STYLES["bold"], STYLES["dim"], STYLES["reset"]
_WIDTH = 100
_KEY = 22


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal (Chinese characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_UNIT = re.compile(r"`[^`]*`|[!-~]+|\s|.")
_NO_LINE_START = "，。；：、）」』》？！…”"


def _units(text: str, columns: int) -> list[str]:
    """What a line may not be broken inside: a `command`, an English word, a path or a number; a Chinese
    character or a space alone. A command wider than a line is broken at its spaces (else anywhere)."""
    out: list[str] = []
    for unit in _UNIT.findall(text):
        if _width(unit) <= columns:
            out.append(unit)
            continue
        for piece in re.findall(r"\S+|\s", unit):
            out.extend([piece] if _width(piece) <= columns else list(piece))
    return out


def _cut(text: str, columns: int) -> list[str]:
    """``text`` in pieces of at most ``columns`` terminal columns, never breaking a command, an English word or
    a number, and never starting a line with closing punctuation (it stays at the end of the line before)."""
    parts, cur, used = [], "", 0
    for unit in _units(text, columns):
        w = _width(unit)
        if used + w > columns and cur and unit not in _NO_LINE_START:
            parts.append(cur.rstrip())
            cur, used = "", 0
            if unit.isspace():
                continue
        cur += unit
        used += w
    return [*parts, cur] if cur else parts


class _Out:
    def __init__(self, color: bool, language: str = "en") -> None:
        self.lines: list[str] = []
        self.color = color
        self.lang = language

    def w(self, message: Message) -> str:
        """A message in this report's language."""
        return render(message, self.lang)

    def key(self, key: str) -> str:
        """A fact's label in this report's language (indentation kept; labels without an entry stay as named)."""
        name = key.lstrip()
        words = KEYS.get(name)
        return key if words is None or self.lang == "en" else key[: len(key) - len(name)] + self.w(words)

    def yn(self, v: bool | None) -> str | None:
        return None if v is None else self.w(msg("report.yes") if v else msg("report.no"))

    def c(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def heading(self, text: str | Message) -> None:
        if not isinstance(text, str):
            text = self.w(text)
        if self.lines:
            self.lines.append("")
        self.lines.append(self.c(_BOLD, text))
        self.lines.append(self.c(_DIM, "─" * min(_width(text), _WIDTH)))

    def kv(self, key: str, value: object, indent: int = 2) -> None:
        if value is None or value == "" or value == []:
            return
        key = self.key(key)
        text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        pad = " " * indent
        wrapped = textwrap.wrap(text, _WIDTH - indent - _KEY - 1) or [""]
        self.lines.append(f"{pad}{key}{' ' * max(0, _KEY - _width(key))} {wrapped[0]}")
        for more in wrapped[1:]:
            self.lines.append(f"{pad}{'':<{_KEY}} {more}")

    def para(self, text: str, indent: int = 8) -> None:
        for raw in text.splitlines() or [""]:
            if raw.startswith(("  ", "$ ", "sudo ", "pip ", "python")) or _width(raw) < _WIDTH - indent:
                self.lines.append(" " * indent + raw)
            elif _width(raw) > len(raw):  # Chinese: few spaces to break at, two columns a character; keep commands whole
                self.lines.extend(" " * indent + part for part in _cut(raw, _WIDTH - indent))
            else:
                self.lines.extend(textwrap.wrap(raw, _WIDTH, initial_indent=" " * indent, subsequent_indent=" " * indent))


def _mib(v: int | None) -> str | None:
    if v is None:
        return None
    return f"{v / 1024:.1f} GiB" if v >= 1024 else f"{v} MiB"


def render_text(report: Report, color: bool = False, language: str | None = None) -> str:
    out = _Out(color, output_language(language))
    m = report.machine
    title = out.w(msg("report.title", version=m.tool_version or ""))
    out.lines.append(out.c(_BOLD, title))
    if m.collected_at:
        out.lines.append(out.c(_DIM, out.w(msg("report.collected", when=m.collected_at))))
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
    out.heading(msg("report.heading.findings-count", count=len(problems)) if problems else msg("report.heading.findings"))
    if not problems:
        out.lines.append("  " + out.c(_COLOR[Severity.OK], out.w(msg("report.no-problems"))))
        return
    for f in findings:
        code = f" [{f.catalogue}]" if f.catalogue else ""
        words = finding_words(f, out.lang)  # title, meaning and fix in this language; the detail has the values
        out.lines.append(f"  {out.c(_COLOR[f.severity], _ICON[f.severity])} {out.c(_BOLD, words.title)}{out.c(_DIM, code)}")
        if words.meaning:
            out.para(words.meaning)
        if words.translated and f.detail:  # the rule's own words, with this machine's values
            out.lines.append(" " * 8 + out.c(_DIM, out.w(msg("report.detail-english"))))
            out.para(f.detail, indent=10)
        if words.fix:
            out.lines.append(" " * 8 + out.c(_BOLD, out.w(msg("report.fix"))))
            out.para(words.fix, indent=10)
        if f.evidence:
            out.lines.append(" " * 8 + out.c(_DIM, out.w(msg("report.evidence"))))
            for e in f.evidence[:6]:
                out.lines.append(" " * 10 + out.c(_DIM, e[:_WIDTH]))
        out.lines.append("")
    if out.lines[-1] == "":
        out.lines.pop()


def _gpus(out: _Out, m: Machine) -> None:
    out.heading(msg("report.heading.gpus", count=len(m.gpus)))
    if not m.gpus:
        out.lines.append("  " + out.w(msg("report.no-gpus")))
        return
    for i, g in enumerate(m.gpus):
        _gpu(out, i, g)


def _gpu(out: _Out, i: int, g: Gpu) -> None:
    name = g.name or g.pci.device_name or out.w(msg("report.unknown-device"))
    idx = f"#{g.index}" if g.index is not None else f"[{i}]"
    out.lines.append(f"  {out.c(_BOLD, f'{idx} {name}')}  ({g.vendor})")
    out.kv("PCI", " ".join(x for x in [g.pci.address, g.pci.pci_id and f"[{g.pci.pci_id}]"] if x) or None, 4)
    out.kv("kernel driver", g.pci.kernel_driver or (out.w(msg("report.none-bound")) if g.pci.address else None), 4)
    arch = " / ".join(x for x in [g.architecture, g.chip] if x)
    out.kv("architecture", arch or None, 4)
    if g.compute_capability:
        src = out.w(msg("report.from", source=g.compute_capability_source)) if g.compute_capability_source else ""
        out.kv("compute capability", f"{g.compute_capability}{src}", 4)
    out.kv("gfx target", g.gfx_target, 4)
    if g.memory_total_mib is not None:
        used = out.w(msg("report.used", amount=_mib(g.memory_used_mib))) if g.memory_used_mib is not None else ""
        out.kv(out.w(msg("report.key.gpu-memory")), f"{_mib(g.memory_total_mib)}{used}", 4)
    out.kv("SMs", g.sm_count, 4)
    out.kv("UUID", g.uuid, 4)
    p = g.pcie
    if p.gen_current or p.gen_max:
        out.kv(
            "PCIe link",
            out.w(msg("report.pcie-link", gen=p.gen_current or "?", width=p.width_current or "?", gen_max=p.gen_max or "?",
                      width_max=p.width_max or "?",
                      idle=msg("report.pcie-idle") if (p.gen_current or 0) < (p.gen_max or 0) else "")),
            4,
        )
    c = g.clocks
    if c.graphics_mhz or c.sm_max_mhz:
        out.kv("clocks", out.w(msg("report.clocks", graphics=c.graphics_mhz or "?", graphics_max=c.graphics_max_mhz or "?",
                                   memory=c.memory_mhz or "?", memory_max=c.memory_max_mhz or "?")), 4)
    if g.temperature_c is not None or g.power_draw_w is not None:
        bits = []
        if g.temperature_c is not None:
            bits.append(f"{g.temperature_c} °C")
        if g.power_draw_w is not None:
            bits.append(f"{g.power_draw_w:.0f} W" + (out.w(msg("report.power-of", limit=f"{g.power_limit_w:.0f}"))
                                                      if g.power_limit_w else ""))
        out.kv("temperature/power", ", ".join(bits), 4)
    e = g.ecc
    if e.mode_current:
        counts = ""
        if e.volatile_uncorrected is not None or e.aggregate_uncorrected is not None:
            counts = out.w(msg("report.ecc-counts", volatile=e.volatile_uncorrected or 0, lifetime=e.aggregate_uncorrected or 0))
        out.kv("ECC", f"{e.mode_current}{counts}", 4)
    if e.retired_pages_pending or e.retired_pages_dbe:
        out.kv("retired pages", out.w(msg("report.retired-pages", sbe=e.retired_pages_sbe or 0, dbe=e.retired_pages_dbe or 0,
                                          pending=out.yn(e.retired_pages_pending))), 4)
    if e.remapped_rows_uncorrectable or e.remapped_rows_pending or e.remapped_rows_failure:
        out.kv("row remapping", out.w(msg("report.row-remapping", uncorrectable=e.remapped_rows_uncorrectable or 0,
                                          pending=out.yn(e.remapped_rows_pending), failure=out.yn(e.remapped_rows_failure))), 4)
    out.kv("throttle reasons", g.throttle_reasons or None, 4)
    out.kv("persistence mode", out.yn(g.persistence_mode), 4)
    if g.compute_mode and g.compute_mode != "Default":
        out.kv("compute mode", g.compute_mode, 4)
    if g.mig_mode and g.mig_mode not in ("N/A", "Disabled"):
        out.kv("MIG", out.w(msg("report.mig", mode=g.mig_mode, count=len(g.mig_devices))), 4)
    if g.mig_mode_pending and g.mig_mode and g.mig_mode_pending != g.mig_mode:
        out.kv("MIG after reset", out.w(msg("report.mig-pending", mode=g.mig_mode_pending)), 4)
    if g.process_list:
        out.kv("processes", [f"{p.pid} {p.name or '?'}"
                             + (f" {_mib(p.used_mib)}" if p.used_mib is not None else "") for p in g.process_list[:8]]
               + ([out.w(msg("report.more", count=len(g.process_list) - 8))] if len(g.process_list) > 8 else []), 4)
    out.kv("driver model", g.driver_model, 4)
    for ev in g.evidence:
        if not ev.ok:
            out.kv("problem", f"{ev.source}: {ev.error}", 4)


def _driver(out: _Out, m: Machine) -> None:
    d = m.driver
    out.heading(msg("report.heading.driver"))
    found = d.version or any(r.value for r in d.versions) or any(mod.loaded or mod.version for mod in d.modules)
    if not found:
        out.lines.append("  " + out.w(msg("report.no-driver") if m.nvidia_gpus else msg("report.no-driver-no-gpu")))
        if d.versions or d.evidence:
            checked = sorted({r.source.split(" (")[0] for r in d.versions} | {e.source.split(" (")[0] for e in d.evidence})
            out.kv("looked with", checked)
        if m.nvidia_gpus:
            for ev in d.evidence:
                if not ev.ok:
                    out.kv("problem", f"{ev.source}: {ev.error}")
        return
    out.kv("version", d.version or out.w(msg("report.unknown")))
    for r in d.versions:
        short = r.source.split(" (")[0]  # libcuda reports the CUDA version the driver supports: say so
        via = msg("report.key.cuda-via", source=short) if short.startswith("libcuda") else msg("report.key.via", source=short)
        out.kv(f"  {out.w(via)}", r.value if r.value else f"— ({r.error})" if r.error else "—")
    if d.cuda_driver_version:
        out.kv("supports CUDA up to", f"{d.cuda_driver_version}" + (out.w(msg("report.from", source=d.cuda_driver_version_source))
                                                                    if d.cuda_driver_version_source else ""))
    out.kv("NVML", d.nvml_version or (out.w(msg("report.not-working", error=d.nvml_error)) if d.nvml_error else None))
    out.kv("cuInit", out.w(msg("report.failed", error=d.cuinit_error)) if d.cuinit_error else None)
    for mod in d.modules:
        if mod.loaded is None and not mod.version:
            continue
        state = msg("report.module.loaded") if mod.loaded else msg("report.module.not-loaded") if mod.loaded is False \
            else msg("report.module.state-unknown")
        bits = [out.w(state)]
        if mod.version:
            bits.append(str(mod.version))
        if mod.flavour:
            bits.append(out.w(msg("report.module.flavour", flavour=mod.flavour)))
        if mod.available_for_running_kernel is False:
            bits.append(out.w(msg("report.module.not-built")))
        out.kv(out.w(msg("report.key.module", name=mod.name)), ", ".join(bits))
        out.kv("  DKMS", mod.dkms_status or None)
    shown = {(r.source, r.error) for r in d.versions}
    for ev in d.evidence:
        if not ev.ok and (ev.source, ev.error) not in shown:
            out.kv("problem", f"{ev.source}: {ev.error}")


def _cuda(out: _Out, m: Machine) -> None:
    c = m.cuda
    out.heading(msg("report.heading.cuda"))
    if not (c.toolkits or c.libraries or c.nvidia_wheels or c.env):
        out.lines.append("  " + out.w(msg("report.no-cuda")))
        out.lines.append("  " + out.w(msg("report.no-cuda-fine")))
        return
    for t in c.toolkits:
        out.kv("toolkit", out.w(msg("report.at", version=t.version or "?", path=t.path, source=t.source)))
    for lib in c.libraries:
        out.kv(lib.name, " ".join(x for x in [str(lib.version or ""), lib.path and f"({lib.path})", lib.source and f"[{lib.source}]"] if x))
    if c.nvidia_wheels:
        out.kv("pip nvidia-* wheels", [f"{p.name} {p.version}" for p in c.nvidia_wheels])
    for k, v in sorted(c.env.items()):
        out.kv(k, v if v != "" else out.w(msg("report.set-but-empty")))


def _frameworks(out: _Out, m: Machine) -> None:
    out.heading(msg("report.heading.python"))
    if not m.python_envs:
        out.lines.append("  " + out.w(msg("report.not-checked")))
        return
    for env in m.python_envs:
        kind = msg("report.env.conda") if env.is_conda else msg("report.env.venv") if env.is_venv else msg("report.env.system")
        out.kv("python", out.w(msg("report.at", version=env.version or "?", path=env.executable, source=kind)))
        if not env.frameworks:
            out.kv("frameworks", out.w(msg("report.no-frameworks")))
        for fw in env.frameworks:
            bits = [str(fw.version or "?")]
            if fw.build_cuda:
                bits.append(out.w(msg("report.fw.built-for", what=f"CUDA {fw.build_cuda}")))
            elif fw.build_rocm:
                bits.append(out.w(msg("report.fw.built-for", what=f"ROCm {fw.build_rocm}")))
            elif fw.version:
                bits.append(out.w(msg("report.fw.cpu-build")))
            if fw.gpu_available is not None:
                bits.append(out.w(msg("report.fw.gpu-available", yes=out.yn(fw.gpu_available),
                                      devices=msg("report.fw.devices", count=fw.device_count) if fw.device_count else "")))
            if fw.arch_list:
                bits.append("arch " + " ".join(fw.arch_list))
            if fw.error:
                bits.append(out.w(msg("report.fw.problem", error=fw.error)))
            out.kv(fw.name, "; ".join(b for b in bits if b))
        for ev in env.evidence:
            if not ev.ok:
                out.kv("problem", f"{ev.source}: {ev.error}")


def _system(out: _Out, m: Machine) -> None:
    s = m.system
    out.heading(msg("report.heading.system"))
    os_text = s.distro_name or " ".join(x for x in [s.os, s.os_version] if x) or None
    out.kv("OS", os_text)
    out.kv("kernel", s.kernel)
    out.kv("architecture", s.arch)
    if s.wsl:
        out.kv("WSL", out.w(msg("report.wsl", version=s.wsl_version or "?")))
    out.kv("container", s.container)
    out.kv("Secure Boot", None if s.secure_boot is None else out.w(msg("report.enabled") if s.secure_boot else msg("report.disabled")))
    out.kv("Jetson", out.yn(s.is_jetson) if s.is_jetson else None)
    out.kv("PRIME profile", s.prime_profile)
    cpu = s.cpu
    cores = None
    if cpu.cores_physical:
        cores = out.w(msg("report.cores-threads", cores=cpu.cores_physical, threads=cpu.cores_logical) if cpu.cores_logical
                      else msg("report.cores", cores=cpu.cores_physical))
    out.kv("CPU", " ".join(x for x in [cpu.model, cores] if x) or None)
    out.kv("CPU features", cpu.flags or None)
    if s.ram_total_mib:
        out.kv("memory", f"{_mib(s.ram_total_mib)}" + (out.w(msg("report.available", amount=_mib(s.ram_available_mib)))
                                                       if s.ram_available_mib else ""))
    for path, free in s.disk_free_mib.items():
        out.kv(out.w(msg("report.key.free-disk", path=path)), _mib(free))
    out.kv("python", s.python)
    for ev in s.evidence:
        if not ev.ok:
            out.kv("problem", f"{ev.source}: {ev.error}")


def _containers(out: _Out, m: Machine) -> None:
    c = m.containers
    out.heading(msg("report.heading.containers"))
    if not (c.docker or c.podman):
        out.lines.append("  " + out.w(msg("report.no-containers")))
        return
    out.kv("docker", c.docker)
    out.kv("docker daemon reachable", out.yn(c.docker_daemon_reachable))
    out.kv("podman", c.podman)
    out.kv("NVIDIA runtime", out.yn(c.nvidia_runtime_registered))
    out.kv("default runtime", c.default_runtime)
    out.kv("CDI specs", c.cdi_specs or None)
    out.kv("container toolkit", c.toolkit_version)


def _plans(out: _Out, report: Report) -> None:
    out.heading(msg("report.heading.plan"))
    for p in report.plans:
        t = describe(p, out.lang)
        out.kv(p.framework, t.summary)
        for a in t.actions:
            out.kv("  first", a.why)
        for c in t.choices:
            if c.role == "after-actions":
                out.kv("  then", f"{c.version} ({c.variant})")
        for option, reason in t.rejected:
            out.kv("  not chosen", f"{option}: {reason}")


def _selftest(out: _Out, st: SelfTestResult) -> None:
    mode: Message | str = st.mode
    if st.mode in ("quick", "full"):
        mode = msg("selftest.mode.full") if st.mode == "full" else msg("selftest.mode.quick")
    out.heading(msg("report.heading.selftest", mode=mode))
    for a in answers(st):  # the answer per framework first, as the CLI and the wizard give it
        out.lines.append(f"  {selftest_text.MARKS.get(a.kind, '·')} {out.w(a.sentence)}")
    for meas in st.measurements:
        val = "—" if meas.value is None else f"{meas.value:.3g} {meas.unit}"
        rated = out.w(msg("report.of-rated", rated=f"{meas.rated:.3g}", pct=f"{meas.fraction:.0%}")) \
            if meas.rated and meas.fraction is not None else ""
        reason = selftest_text.reason(meas, out.lang)
        out.kv(meas.name, f"{val}{rated} — {selftest_text.verdict_word(meas.verdict, out.lang)}" + (f": {reason}" if reason else ""))
    for n in selftest_text.notes(st, out.lang):
        out.lines.append(f"  {n}")


def _probes(out: _Out, m: Machine) -> None:
    failed = [p for p in m.probes if not p.ok]
    total = sum(p.duration_ms for p in m.probes)
    out.heading(msg("report.heading.collected"))
    out.kv("probes", out.w(msg("report.probes", count=len(m.probes), ms=f"{total:.0f}", commands=len(m.commands))))
    for p in failed:
        out.kv(out.w(msg("report.key.probe", name=p.name)), out.w(msg("report.failed", error=p.error)))
    slow = [c for c in m.commands if c.timed_out or c.duration_ms > 1000]
    for c in slow:
        out.kv("slow command", f"{' '.join(c.argv)}: {c.error or f'{c.duration_ms:.0f} ms'}")
