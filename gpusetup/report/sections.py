"""The facts of a report as (label, value) rows, shared by the Markdown and HTML renderers.

Each renderer only decides how a row looks; which facts are shown, and in which words, is decided once here.
Empty values (None, "", []) are left for the renderer to skip.
"""

from __future__ import annotations

from gpusetup.model import CudaStack, Driver, Gpu, PythonEnv, System

Row = tuple[str, object]


def _gib(mib: int | None) -> str | None:
    return f"{mib / 1024:.1f} GiB" if mib else None


def gpu_title(i: int, g: Gpu) -> str:
    idx = g.index if g.index is not None else i
    return f"{idx}: {g.name or g.pci.device_name or 'unknown device'}"


def gpu_rows(g: Gpu) -> list[Row]:
    link = None
    if g.pcie.gen_current or g.pcie.gen_max:
        link = f"Gen{g.pcie.gen_current or '?'} x{g.pcie.width_current or '?'} (max Gen{g.pcie.gen_max or '?'} x{g.pcie.width_max or '?'})"
    return [
        ("vendor", g.vendor),
        ("architecture", " / ".join(x for x in [g.architecture, g.chip] if x)),
        ("compute capability", g.compute_capability),
        ("memory", _gib(g.memory_total_mib)),
        ("PCI", " ".join(x for x in [g.pci.address, g.pci.pci_id] if x)),
        ("kernel driver", g.pci.kernel_driver),
        ("PCIe link", link),
        ("temperature", f"{g.temperature_c} °C" if g.temperature_c is not None else None),
        ("power", f"{g.power_draw_w:.0f} W" if g.power_draw_w is not None else None),
        ("ECC", g.ecc.mode_current),
        ("throttle reasons", g.throttle_reasons),
        ("MIG", g.mig_mode),
        ("compute mode", g.compute_mode if g.compute_mode != "Default" else None),
        ("processes", [f"{p.pid} {p.name or '?'}" + (f" ({p.used_mib} MiB)" if p.used_mib is not None else "")
                       for p in g.process_list[:8]] or None),
        ("driver model", g.driver_model),
        ("UUID", g.uuid),
    ]


def reading_label(source: str) -> str:
    """libcuda reports the CUDA version the driver supports, not the driver version: say so."""
    short = source.split(" (")[0]
    return f"CUDA via {short}" if short.startswith("libcuda") else f"via {short}"


def driver_rows(d: Driver) -> list[Row]:
    return [
        ("version", d.version),
        *[(reading_label(r.source), r.value or r.error) for r in d.versions],
        ("supports CUDA up to", d.cuda_driver_version),
        ("NVML", d.nvml_version or d.nvml_error),
        ("cuInit error", d.cuinit_error),
        *[
            (f"module {k.name}", " ".join(x for x in ["loaded" if k.loaded else "not loaded", str(k.version or ""), k.flavour or ""] if x))
            for k in d.modules
            if k.loaded is not None or k.version
        ],
    ]


def cuda_rows(c: CudaStack) -> list[Row]:
    return [
        *[(f"toolkit {t.version or '?'}", t.path) for t in c.toolkits],
        *[(lib.name, " ".join(x for x in [str(lib.version or ""), lib.path or ""] if x)) for lib in c.libraries],
        ("pip nvidia-* wheels", [f"{p.name} {p.version}" for p in c.nvidia_wheels]),
        *sorted(c.env.items()),
    ]


def framework_rows(env: PythonEnv) -> list[Row]:
    return [
        ("python", f"{env.version} ({env.executable})"),
        *[
            (
                fw.name,
                "; ".join(
                    x
                    for x in [
                        fw.version or "?",
                        fw.build_cuda and f"built for CUDA {fw.build_cuda}",
                        fw.gpu_available is not None and f"GPU available: {fw.gpu_available}",
                        fw.error,
                    ]
                    if x
                ),
            )
            for fw in env.frameworks
        ],
    ]


def system_rows(s: System) -> list[Row]:
    return [
        ("OS", s.distro_name or s.os),
        ("kernel", s.kernel),
        ("architecture", s.arch),
        ("WSL", "yes" if s.wsl else None),
        ("container", s.container),
        ("Secure Boot", None if s.secure_boot is None else ("enabled" if s.secure_boot else "disabled")),
        ("PRIME profile", s.prime_profile),
        ("CPU", s.cpu.model),
        ("CPU features", s.cpu.flags),
        ("RAM", _gib(s.ram_total_mib)),
        ("python", s.python),
    ]
