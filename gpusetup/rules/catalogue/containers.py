"""Catalogue E–G — containers (F29–F32), WSL2 (F33–F34) and multi-GPU peer-to-peer (F35)."""

from __future__ import annotations

import re

from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    driver_version,
    grep,
    has_nvidia_gpu,
    in_container,
    joined_text,
    make,
    packages,
    probed,
)
from gpusetup.rules.catalogue.data import first_wording, wording_rx

# ------------------------------------------------------------------------------------------- F29

_F29_TEXT = re.compile(
    r"could not select device driver \"[^\"]*\" with capabilities: \[\[gpu\]\]|"
    r"unknown or invalid runtime name: nvidia|Unknown runtime specified nvidia",
    re.IGNORECASE,
)


@rule("container-toolkit-missing", catalogue="F29")
def toolkit_missing(machine: Machine) -> list[Finding]:
    extra = wording_rx("F29")  # every tool's words for it (Docker, compose, the Kubernetes device plugin): data
    lines = grep(machine, extra or _F29_TEXT, 3)
    hit = first_wording(machine, "F29")
    k8s = hit is not None and hit[0].tool.startswith("k8s")
    c = machine.containers
    structured = bool(
        c.docker and c.docker_daemon_reachable and c.nvidia_runtime_registered is False and not c.cdi_specs
        and has_nvidia_gpu(machine) and not in_container(machine)
    )
    if not lines and not structured:
        return []
    ev = list(lines)
    if structured:
        ev.append(f"docker {c.docker}: no 'nvidia' runtime registered, no CDI specs")
    if c.toolkit_version:
        ev.append(f"NVIDIA Container Toolkit {c.toolkit_version} installed")
    snap = bool(re.search(r"/snap/|snap docker", joined_text(machine), re.IGNORECASE))
    snap_note = msg("fix.container-toolkit-missing.snap") if snap else None
    if k8s:
        fix = msg("fix.container-toolkit-missing.k8s")
    elif c.toolkit_version:
        fix = msg("fix.container-toolkit-missing.register", snap=snap_note)
    else:
        fix = msg("fix.container-toolkit-missing.install", snap=snap_note)
    return [
        make(
            "container-toolkit-missing",
            Severity.ERROR if lines else (Severity.WARNING if c.toolkit_version else Severity.INFO),
            "The Kubernetes device plugin cannot reach the GPU: the node's container runtime does not use the NVIDIA "
            "Container Toolkit" if k8s else
            "Docker cannot give containers the GPU: the NVIDIA Container Toolkit is missing or not registered",
            "`--gpus all` (and compose `capabilities: [gpu]`) need the NVIDIA Container Toolkit installed and "
            "registered as a Docker runtime; without it Docker answers 'could not select device driver'.",
            fix,
            ev,
            to_be_sure=None if (structured or c.docker) else msg("sure.container-toolkit-missing"),
        )
    ]


# ------------------------------------------------------------------------------------------- F30


@rule("container-toolkit-cannot-load-driver", catalogue="F30")
def toolkit_no_driver(machine: Machine) -> list[Finding]:
    lines = grep(machine, r"nvidia-container-cli: initialization error: load library failed: libnvidia-ml\.so\.1", 3)
    if not lines:
        return []
    wsl = machine.system.wsl if machine.system.wsl is not None else bool(
        re.search(r"\bWSL\b|docker desktop|for-win", joined_text(machine), re.I))
    first = msg("fix.container-toolkit-cannot-load-driver.wsl") if wsl else \
        msg("fix.container-toolkit-cannot-load-driver.no-driver") if not driver_version(machine) else None
    fix = msg("fix.container-toolkit-cannot-load-driver", first=first)
    return [
        make(
            "container-toolkit-cannot-load-driver",
            Severity.ERROR,
            "The NVIDIA Container Toolkit cannot find the host driver (libnvidia-ml.so.1)",
            "Before starting a GPU container, the toolkit loads the host's NVML library. It could not, so either "
            "the host has no working NVIDIA driver or its libraries are outside the loader cache the toolkit reads.",
            fix,
            lines,
        )
    ]


# ------------------------------------------------------------------------------------------- F31


@rule("container-lost-gpu", catalogue="F31")
def container_lost_gpu(machine: Machine) -> list[Finding]:
    lines = grep(machine, r"Failed to initialize NVML: Unknown Error", 2)
    nvml = (machine.driver.nvml_error or "").lower()
    structured = "unknown error" in nvml and in_container(machine)
    context = [] if probed(machine, "system") else grep(machine, r"daemon-reload|docker|container|kubernetes|"
                                                             r"\bpod\b|cgroup", 2)
    if not (structured or (lines and (context or in_container(machine)))):
        return []
    return [
        make(
            "container-lost-gpu",
            Severity.ERROR,
            "This running container has lost access to the GPU ('Failed to initialize NVML: Unknown Error')",
            "With systemd-managed cgroups, a `systemctl daemon-reload` on the host (also run by package updates) "
            "rewrites the container's device permissions and drops the GPU devices. New containers work; "
            "containers started before the reload do not.",
            msg("fix.container-lost-gpu"),
            lines + context + ([f"NVML: {machine.driver.nvml_error}"] if structured else []),
            to_be_sure=None if (structured or context) else msg("sure.container-lost-gpu"),
        )
    ]


# ------------------------------------------------------------------------------------------- F32


@rule("container-missing-compute-capability", catalogue="F32")
def container_capabilities(machine: Machine) -> list[Finding]:
    caps = machine.cuda.env.get("NVIDIA_DRIVER_CAPABILITIES")
    structured = False
    ev: list[str] = []
    if in_container(machine) and caps is not None:
        parts = {p.strip().lower() for p in caps.split(",")}
        if "compute" not in parts and "all" not in parts:
            structured = True
            ev.append(f"NVIDIA_DRIVER_CAPABILITIES={caps}")
    lines = grep(machine, r"Found no NVIDIA driver on your system", 2)
    context = [] if probed(machine, "system") else grep(machine, r"docker|compose|container|"
                                                             r"NVIDIA_DRIVER_CAPABILITIES", 2)
    if not structured and not (lines and (context or in_container(machine))):
        return []
    return [
        make(
            "container-missing-compute-capability",
            Severity.ERROR,
            "The container was started without the NVIDIA 'compute' capability, so CUDA is missing inside"
            if structured else
            "The container cannot reach the NVIDIA driver: it was started without a GPU or without the 'compute' "
            "capability",
            "The NVIDIA Container Toolkit mounts only the driver parts a container asks for: none when the container "
            "was not given a GPU (`docker run` without `--gpus`, a compose service without a device reservation), "
            "and no libcuda.so when it asks only for 'utility' (nvidia-smi works, CUDA does not). PyTorch then "
            "reports 'Found no NVIDIA driver on your system'.",
            msg("fix.container-missing-compute-capability.env") if structured else
            msg("fix.container-missing-compute-capability.gpus"),
            ev + lines + context,
            to_be_sure=None if structured else msg("sure.container-missing-compute-capability"),
        )
    ]


# ------------------------------------------------------------------------------------------- F33

_WSL_CONTEXT = re.compile(r"microsoft-standard|\bWSL2?\b|/usr/lib/wsl/", re.IGNORECASE)


def _wsl(machine: Machine) -> bool:
    """WSL as detected, or (pasted text, where it is unknown) as the text suggests."""
    if machine.system.wsl is not None:
        return machine.system.wsl
    return bool(grep(machine, _WSL_CONTEXT, 1))


@rule("wsl-libcuda-not-found", catalogue="F33")
def wsl_libcuda(machine: Machine) -> list[Finding]:
    wsl = _wsl(machine)
    if not wsl:
        return []
    symlink = grep(machine, r"libcuda\.so(?:\.1)? is not a symbolic link", 2)
    failed = grep(machine, r"Failed to dlopen libcuda\.so|libcuda\.so(?:\.1)?: cannot open shared object file", 3)
    ldconfig = [ln for ln in grep(machine, r"libcuda\.so", 6) if "=>" in ln]
    cache_lacks_so = bool(ldconfig) and not any(re.search(r"\blibcuda\.so \(", ln) for ln in ldconfig)
    structured = False
    if machine.system.wsl:
        ld = machine.cuda.env.get("LD_LIBRARY_PATH", "")
        found = [lib for lib in machine.cuda.libraries if lib.name.startswith("libcuda") and lib.path
                 and "/usr/lib/wsl/lib" in lib.path]
        structured = bool(machine.cuda.libraries) and not found and "/usr/lib/wsl/lib" not in ld
    if not (symlink or failed or structured or cache_lacks_so):
        return []
    if failed or structured:
        sev, title = Severity.ERROR, "WSL2: programs cannot find libcuda.so, the GPU driver library"
    elif cache_lacks_so:
        sev, title = Severity.WARNING, "WSL2: the loader cache has libcuda.so.1 but not libcuda.so"
    else:
        sev, title = Severity.INFO, "WSL2: the driver's libcuda.so files are copies, not symlinks (harmless warning)"
    return [
        make(
            "wsl-libcuda-not-found",
            sev,
            title,
            "In WSL2 the Windows NVIDIA driver provides its Linux libraries in /usr/lib/wsl/lib. The loader cache "
            "only lists libcuda.so.1 there, and the files are copies rather than symlinks, so tools that open "
            "plain 'libcuda.so' (Triton, bitsandbytes, some cuDNN builds) fail, and ldconfig prints "
            "'is not a symbolic link'.",
            msg("fix.wsl-libcuda-not-found"),
            symlink + failed + ldconfig[:3],
        )
    ]


# ------------------------------------------------------------------------------------------- F34


@rule("wsl-gpu-access-blocked", catalogue="F34")
def wsl_blocked(machine: Machine) -> list[Finding]:
    wsl = _wsl(machine)
    lines = grep(machine, r"GPU access blocked by the operating system", 2)
    if wsl:  # NVML's own wording of the same error (NVML_ERROR_OPERATING_SYSTEM)
        lines += grep(machine, r"operating system blocked the request to the GPU", 1)
    tcc_gpus = [g for g in machine.nvidia_gpus if (g.driver_model or "").upper() == "TCC"]
    if not lines and not (wsl and tcc_gpus):
        return []
    linux_driver = [f"{s}  {n}  {v}" for s, n, v in packages(machine)
                    if re.match(r"(nvidia-(driver|utils|compute-utils)-\d+|libnvidia-compute-\d+)", n)]
    text = joined_text(machine)
    installed_utils = re.findall(r"apt(?:-get)? install\s+(?:-y\s+)?(nvidia-(?:utils|driver)-\d+)", text)
    tcc = bool(tcc_gpus) or (bool(lines) and re.search(r"\bTCC\b", text) is not None)
    causes: list[Message] = []
    ev = list(lines) + linux_driver
    if linux_driver or installed_utils:
        causes.append(msg("fix.wsl-gpu-access-blocked.linux-driver"))
        ev += [f"installed inside WSL: {p}" for p in installed_utils]
    if tcc:
        causes.append(msg("fix.wsl-gpu-access-blocked.tcc"))
        ev += [f"{g.name or 'GPU'}: driver model TCC" for g in tcc_gpus] or grep(machine, r"\bTCC\b", 1)
    causes.append(msg("fix.wsl-gpu-access-blocked.old-windows"))
    numbered = [msg("fix.wsl-gpu-access-blocked.cause", n=i + 1, cause=c) for i, c in enumerate(causes)]
    return [
        make(
            "wsl-gpu-access-blocked",
            Severity.ERROR,
            "WSL2 blocks access to the GPU ('GPU access blocked by the operating system')" if lines else
            "The GPU is in TCC mode, which WSL2 cannot use",
            "Windows refused to give the WSL2 distribution access to the GPU." if lines else
            "WSL2 reaches the GPU through the Windows display driver model (WDDM); a GPU in TCC mode is invisible "
            "to it and nvidia-smi inside WSL fails with 'GPU access blocked by the operating system'.",
            msg("fix.wsl-gpu-access-blocked", causes=numbered),
            ev,
            to_be_sure=None if (linux_driver or installed_utils or tcc) else msg("sure.wsl-gpu-access-blocked"),
        )
    ]


# ------------------------------------------------------------------------------------------- F35

_P2P_HEADER = re.compile(r"(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth", re.IGNORECASE)


def _p2p_matrices(text: str) -> dict[tuple[str, str], list[float]]:
    """Off-diagonal values of p2pBandwidthLatencyTest matrices, keyed by (direction, Enabled/Disabled)."""
    out: dict[tuple[str, str], list[float]] = {}
    key = None
    for ln in text.splitlines():
        h = _P2P_HEADER.search(ln)
        if h:
            key = (h.group(1).lower(), h.group(2).lower())
            out.setdefault(key, [])
            continue
        if key is None:
            continue
        m = re.match(r"\s*(\d+)\s+((?:[\d.]+\s*)+)$", ln)
        if m and "D\\D" not in ln:
            row = int(m.group(1))
            vals = [float(v) for v in m.group(2).split()]
            out[key].extend(v for i, v in enumerate(vals) if i != row)
        elif ln.strip() and not ln.strip().startswith("D\\D"):
            key = None
    return out


@rule("p2p-broken", catalogue="F35")
def p2p_broken(machine: Machine) -> list[Finding]:
    text = joined_text(machine)
    ev: list[str] = []
    mats = _p2p_matrices(text)
    for direction in ("unidirectional", "bidirectional"):
        on, off = mats.get((direction, "enabled")), mats.get((direction, "disabled"))
        if on and off:
            avg_on, avg_off = sum(on) / len(on), sum(off) / len(off)
            if avg_on < 0.5 * avg_off:
                ev.append(f"{direction} P2P=Enabled averages {avg_on:.1f} GB/s vs {avg_off:.1f} GB/s with P2P "
                          "disabled")
    hang = grep(machine, r"NCCL_P2P_DISABLE\s*=\s*1", 2)
    if hang and grep(machine, r"hang|freez|stuck|deadlock", 1):
        ev += hang + grep(machine, r"hang|freez|stuck|deadlock", 1)
    if not ev:
        return []
    cmdline = machine.system.kernel_cmdline or ""
    iommu = re.findall(r"\b(?:intel_iommu|amd_iommu|iommu)=\S+", cmdline)
    if cmdline:
        ev.append("kernel command line IOMMU settings: " + (" ".join(iommu) if iommu else "none"))
    return [
        make(
            "p2p-broken",
            Severity.WARNING,
            "GPU-to-GPU (peer-to-peer) transfers are broken or slower than going through the CPU",
            "When PCIe ACS or the IOMMU redirects peer-to-peer traffic, direct GPU↔GPU copies crawl or hang, and "
            "multi-GPU training with NCCL freezes. Consumer GPUs (e.g. RTX 4090) may also advertise P2P that does "
            "not work.",
            msg("fix.p2p-broken"),
            ev,
            to_be_sure=None if mats else msg("sure.p2p-broken"),
        )
    ]

