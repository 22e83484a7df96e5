"""Catalogue B — kernel module / OS layer (F06–F08, F10–F13; F09 lives in ``rules/basic.py``)."""

from __future__ import annotations

import re
from typing import Any

from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    classify_pci_id,
    driver_branch,
    driver_version,
    gpu_label,
    grep,
    host_compiler_limit,
    is_windows,
    joined_text,
    kernel_modules,
    legacy_branch_for_cc,
    make,
    nvidia_module,
    oldest_toolkit_accepting,
    package_driver_versions,
    parse_compiler,
    search,
    vmajor,
)
from gpusetup.rules.basic import nvidia_driver_missing
from gpusetup.rules.catalogue.data import first_wording
from gpusetup.versions import Version


def _flat(text: str) -> str:
    text = re.sub(r"#012", " ", text)
    text = re.sub(r"\[\s*\d+\.\d+\]", " ", text)
    text = re.sub(r"^\w{3} \d+ [\d:]+ \S+ kernel:", " ", text, flags=re.M)
    text = re.sub(r"NVRM:", " ", text)
    return re.sub(r"\s+", " ", text)


def _distro_family(machine: Machine) -> str:
    ids = {(machine.system.distro_id or "").lower(), *(d.lower() for d in machine.system.distro_like)}
    if ids & {"fedora", "rhel", "centos", "rocky", "almalinux"}:
        return "fedora"
    if ids & {"arch", "manjaro", "endeavouros", "cachyos"}:
        return "arch"
    if ids & {"opensuse", "suse", "opensuse-tumbleweed", "opensuse-leap", "sles"}:
        return "suse"
    return "debian"


def _initramfs_cmd(machine: Machine) -> str:
    return {
        "fedora": "sudo dracut --force",
        "arch": "sudo mkinitcpio -P",
        "suse": "sudo dracut --force",
    }.get(_distro_family(machine), "sudo update-initramfs -u")


# ------------------------------------------------------------------------------------------- F07

_F07_TEXT = re.compile(
    r"could not insert '?nvidia[\w-]*'?: (?:Key was rejected by service|Required key not available)|"
    r"Loading of unsigned module is rejected|Loading of module with unavailable key is rejected|"
    r"Lockdown: .*unsigned module loading is restricted",
    re.IGNORECASE,
)


def _secure_boot_signals(machine: Machine) -> list[str]:
    lines = [ln for ln in grep(machine, _F07_TEXT, 4)
             if "nvidia" in ln.lower() or "could not insert" not in ln.lower()]
    hit = first_wording(machine, "F07")  # other tools' words (data): the installer's, with Secure Boot named
    if hit is not None and hit[2].strip() not in lines:
        lines.append(hit[2].strip())
    if machine.system.secure_boot:
        lines += grep(machine, r"nvidia\S*: module verification failed", 2)
    return lines


@rule("secure-boot-blocks-module", catalogue="F07")
def secure_boot(machine: Machine) -> list[Finding]:
    lines = _secure_boot_signals(machine)
    mod = nvidia_module(machine)
    installed = mod is not None and (mod.version or mod.available_for_running_kernel or mod.dkms_status)
    installed = installed or bool(package_driver_versions(machine))
    structured = bool(machine.system.secure_boot and installed and mod is not None and mod.loaded is False)
    if not lines and not structured:
        return []
    ev = list(lines)
    if machine.system.secure_boot:
        ev.append(f"Secure Boot: enabled ({machine.system.secure_boot_source or 'detected'})")
    if mod is not None and mod.loaded is False:
        ev.append("nvidia kernel module: installed but not loaded")
    fam = _distro_family(machine)
    key = "/etc/pki/akmods/certs/public_key.der" if fam == "fedora" else "/var/lib/dkms/mok.pub"
    return [
        make(
            "secure-boot-blocks-module",
            Severity.ERROR,
            "Secure Boot refuses to load the NVIDIA kernel module",
            "With UEFI Secure Boot on, Linux only loads kernel modules signed by a key the firmware trusts. The "
            "NVIDIA module was built on this machine and signed with a local key that was never enrolled, so the "
            "kernel rejects it and the GPU has no driver.",
            msg("fix.secure-boot-blocks-module", key=key),
            ev,
            to_be_sure=None if machine.system.secure_boot is not None else msg("sure.secure-boot-blocks-module"),
        )
    ]


# ------------------------------------------------------------------------------------------- F08

_F08_TEXT = re.compile(
    r"probe routine was not called|obtained ownership of the NVIDIA device|"
    r"Nouveau kernel driver is currently in use|already bound to NovaCore|No NVIDIA devices probed",
    re.IGNORECASE,
)
# The in-tree driver attached to a PCI device, as the kernel log prints it ("nouveau 0000:01:00.0: NVIDIA GA106").
_NOUVEAU_DEV = re.compile(r"\b(nouveau|nova_core|NovaCore) [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d: .*"
                          r"(NVIDIA|\bDRM\b|fb:|bios:)", re.IGNORECASE)


@rule("nouveau-owns-gpu", catalogue="F08")
def nouveau_owns(machine: Machine) -> list[Finding]:
    bound = [g for g in machine.nvidia_gpus if (g.pci.kernel_driver or "") in ("nouveau", "nova_core", "nova")]
    lines = grep(machine, _F08_TEXT, 4)
    driving = grep(machine, _NOUVEAU_DEV, 2)
    if not bound and not lines and not driving:
        return []
    conflict = bool(lines) or bool(package_driver_versions(machine)) or nvidia_module(machine) is not None
    ev = [f"{gpu_label(g)} at {g.pci.address}: driver in use {g.pci.kernel_driver}" for g in bound] + lines + driving
    owner = (bound[0].pci.kernel_driver if bound else None) or ("nova_core" if "nova" in " ".join(lines).lower()
                                                                 else "nouveau")
    blacklist = "printf 'blacklist nouveau\\noptions nouveau modeset=0\\nblacklist nova_core\\nblacklist nova_drm\\n' | " \
                "sudo tee /etc/modprobe.d/blacklist-nouveau.conf"
    fix = msg("fix.nouveau-owns-gpu", owner=owner, blacklist=blacklist, initramfs=_initramfs_cmd(machine),
              then=None if conflict else msg("fix.nouveau-owns-gpu.then-install"))
    return [
        make(
            "nouveau-owns-gpu",
            Severity.ERROR if conflict else Severity.WARNING,
            f"The open-source {owner} driver has taken the NVIDIA GPU, so CUDA cannot use it",
            f"{owner} is the kernel's built-in driver for NVIDIA cards: fine for a desktop, but it has no CUDA. "
            "While it holds the GPU, the NVIDIA driver cannot attach to it"
            + (" (the kernel log shows the NVIDIA module being refused)." if lines else "."),
            fix,
            ev,
            params={"owner": owner},
        )
    ]


# ------------------------------------------------------------------------------------------- F10

_F10 = re.compile(
    r"The NVIDIA GPU (\S+) \(PCI ID: ([0-9a-fA-F]{4}:[0-9a-fA-F]{4})\) installed in this system is not supported by "
    r"open nvidia\.ko because it does not include the required GPU System Processor",
    re.IGNORECASE,
)


@rule("open-module-on-pre-turing", catalogue="F10")
def open_module_pre_turing(machine: Machine) -> list[Finding]:
    ev: list[str] = []
    arch = None
    m = _F10.search(_flat(joined_text(machine)))
    if m:
        ev += grep(machine, r"not supported by open|System Processor \(GSP\)|\(PCI ID:", 3)
        chip = classify_pci_id(m.group(2))
        if chip is not None:
            arch = f"{chip.architecture} ({chip.chip}, compute capability {chip.compute_capability})"
            ev.append(f"PCI ID {m.group(2)}: {arch}")
    mod = nvidia_module(machine)
    if mod is not None and (mod.flavour or "").lower() == "open":
        for g in machine.nvidia_gpus:
            cc = g.compute_capability
            if kernel_modules(cc) == "proprietary":
                ev.append(f"{gpu_label(g)}: compute capability {g.compute_capability} (needs GSP: 7.5+)")
                ev.append("nvidia kernel module flavour: open")
                arch = arch or g.architecture
    if not ev:
        return []
    branch = driver_branch(machine)
    return [
        make(
            "open-module-on-pre-turing",
            Severity.ERROR,
            "The open NVIDIA kernel module cannot drive this GPU (it is older than Turing)",
            "NVIDIA's open kernel modules only support GPUs with a GSP co-processor: GTX 16xx / RTX 20xx (Turing) "
            "and newer. Maxwell, Pascal and Volta cards" + (f" such as this {arch}" if arch else "")
            + " need the proprietary module flavour, which many distributions stopped installing by default "
            "from driver 560 on.",
            msg("fix.open-module-on-pre-turing", branch=str(branch) if branch else "<branch>"),
            ev,
        )
    ]


# ------------------------------------------------------------------------------------------- F11

_F11_LEGACY = re.compile(
    r"The NVIDIA (.+?) GPU installed in this system is supported through the NVIDIA ([\w.]+) Legacy drivers.*?"
    r"The ([\d.]+) NVIDIA driver will ignore this GPU",
    re.IGNORECASE,
)
_F11_TOO_NEW = re.compile(
    r"The NVIDIA (.+?) GPU installed in this system is not supported by the ([\d.]+) NVIDIA Linux graphics driver "
    r"release",
    re.IGNORECASE,
)


@rule("gpu-dropped-by-driver-branch", catalogue="F11")
def legacy_gpu(machine: Machine) -> list[Finding]:
    flat = _flat(joined_text(machine))
    out = []
    m = _F11_LEGACY.search(flat)
    if m:
        gpu, legacy, current = m.group(1).strip(), m.group(2), m.group(3)
        legacy_branch = str(Version(legacy).major)
        out.append(
            make(
                "gpu-dropped-by-driver-branch",
                Severity.ERROR,
                f"The installed driver {current} no longer supports the {gpu}",
                f"Each NVIDIA driver branch drops old GPU generations. This GPU is only supported by the {legacy} "
                f"legacy driver, so driver {current} ignores it and no NVIDIA GPU is available.",
                msg("fix.gpu-dropped-by-driver-branch.legacy", branch=legacy_branch),
                grep(machine, r"Legacy drivers|will ignore|No NVIDIA GPU found|GPU installed in this system", 4),
                params={"driver": current, "gpu": gpu},
            )
        )
    m = _F11_TOO_NEW.search(flat)
    if m:
        out.append(
            make(
                "gpu-dropped-by-driver-branch",
                Severity.ERROR,
                f"The installed driver {m.group(2)} is too old for the {m.group(1).strip()}",
                "This GPU is newer than the installed driver branch, so the driver ignores it.",
                msg("fix.gpu-dropped-by-driver-branch.too-new"),
                grep(machine, r"is not supported by the [\d.]+ NVIDIA", 2),
                params={"driver": m.group(2), "gpu": m.group(1).strip()},
            )
        )
    if out:
        return out
    branch = driver_branch(machine)
    if branch is None:
        return []
    for g in machine.nvidia_gpus:
        legacy = legacy_branch_for_cc(g.compute_capability)
        if legacy and branch > legacy[0]:
            out.append(
                make(
                    "gpu-dropped-by-driver-branch",
                    Severity.ERROR,
                    f"Driver {driver_version(machine)} no longer supports {gpu_label(g)}",
                    f"{legacy[1]} GPUs (compute capability {g.compute_capability}) are supported up to driver branch "
                    f"{legacy[0]}; newer branches ignore them.",
                    msg("fix.gpu-dropped-by-driver-branch.facts", branch=legacy[0]),
                    [f"{gpu_label(g)}: compute capability {g.compute_capability}",
                     f"driver {driver_version(machine)}"],
                    gpu_index=g.index,
                    params={"driver": driver_version(machine), "gpu": gpu_label(g)},
                )
            )
    return out


# ------------------------------------------------------------------------------------------- F12


@rule("rm-init-adapter-failed", catalogue="F12")
def rm_init_adapter(machine: Machine) -> list[Finding]:
    lines = grep(machine, r"RmInitAdapter failed|rm_init_adapter failed", 3)
    if not lines:
        return []
    extra = grep(machine, r"Chipset not recognized|not been qualified on this platform|BAR\d? .*(?:no space|failed)", 2)
    arm = (machine.system.arch or "").lower() in ("aarch64", "arm64") or bool(extra)
    return [
        make(
            "rm-init-adapter-failed",
            Severity.ERROR,
            "The NVIDIA driver loads but cannot start the GPU (RmInitAdapter failed)",
            "The driver reached the card but could not initialise it. This is a platform or hardware problem, "
            "not a packaging one: the host cannot map the card's memory (BAR), the card lacks power, its firmware "
            "failed, or the host platform is not supported"
            + (" (the log says this ARM platform is not qualified for the driver)." if arm else "."),
            msg("fix.rm-init-adapter-failed"),
            lines + extra,
        )
    ]


# ------------------------------------------------------------------------------------------- F13

_F13 = re.compile(r"unsupported GNU version! gcc versions later than (\d+) are not supported", re.IGNORECASE)
_F13_OTHER = re.compile(r"unsupported (?:clang|Microsoft Visual Studio) version", re.IGNORECASE)


@rule("host-compiler-unsupported", catalogue="F13")
def host_compiler(machine: Machine) -> list[Finding]:
    m = search(machine, _F13)
    other = grep(machine, _F13_OTHER, 2)
    refused = _refusing_toolkits(machine)
    if not m and not other and not refused:
        return []
    lines = grep(machine, _F13, 2) + other
    comp = parse_compiler(machine.cuda.host_compiler)
    facts = [f"CUDA {tk.version} at {tk.path}: nvcc accepts {kind.upper() if kind == 'gcc' else kind} up to "
             f"{limit}" for tk, kind, limit, _ in refused]
    if machine.cuda.host_compiler and (refused or m):
        facts.append(f"host compiler: {machine.cuda.host_compiler}")
    if m:
        n = m.group(1)
        fix = _gcc_fix(machine, int(n), comp[1] if comp and comp[0] == "gcc" else None)
        title = f"nvcc refuses your C++ compiler (this CUDA toolkit supports GCC up to {n})"
    elif other:
        fix = msg("fix.host-compiler-unsupported.other")
        title = "nvcc refuses your C++ compiler version"
    else:
        tk, kind, limit, row = refused[0]
        have = comp[1] if comp else 0
        title = (f"Your C++ compiler ({kind.upper() if kind == 'gcc' else kind} {have}) is newer than CUDA "
                 f"{tk.version}'s nvcc accepts ({kind.upper() if kind == 'gcc' else kind} {limit} at most)")
        fix = _gcc_fix(machine, limit, have) if kind == "gcc" else msg("fix.host-compiler-unsupported.clang", limit=limit)
        accepting = [t for t in machine.cuda.toolkits if t.version and not any(t is r[0] for r in refused)]
        if accepting:
            fix = msg("fix.host-compiler-unsupported.also-installed", fix=fix, cuda=str(accepting[0].version),
                      path=accepting[0].path)
    toolkit = machine.cuda.toolkits[0].version if machine.cuda.toolkits else None
    sure = None
    if refused and not m and not all(r[3].get("verified") for r in refused):
        sure = msg("sure.host-compiler-unsupported")
    return [
        make(
            "host-compiler-unsupported",
            Severity.WARNING,
            title,
            "Each CUDA toolkit only accepts host compilers up to a certain version. This matters only when you "
            "build CUDA code (extensions such as flash-attn, samples, your own kernels), not for pip wheels."
            + (f" Installed toolkit: CUDA {toolkit}; compiler: {machine.cuda.host_compiler}." if toolkit and
               machine.cuda.host_compiler and not refused else ""),
            fix,
            lines + facts,
            to_be_sure=sure,
        )
    ]


def _refusing_toolkits(machine: Machine) -> list[tuple[Any, str, int, dict[str, Any]]]:
    """Installed toolkits whose nvcc refuses ``machine.cuda.host_compiler`` (from the host_compilers table).

    The toolkit nvcc on PATH / CUDA_HOME uses comes first. Unknown compiler or toolkit → nothing (no guess).
    """
    comp = parse_compiler(machine.cuda.host_compiler)
    if comp is None or is_windows(machine):
        return []
    kind, major = comp
    out = []
    for tk in machine.cuda.toolkits:
        row = host_compiler_limit(tk.version)
        limit = row.get("clang_max" if kind == "clang" else "gcc_max") if row else None
        if row is not None and isinstance(limit, int) and major > limit:
            out.append((tk, kind, limit, row))
    out.sort(key=lambda r: not any(k in (r[0].source or "") for k in ("nvcc on PATH", "CUDA_HOME")))
    return out


def _gcc_fix(machine: Machine, n: int, have: int | None) -> Message:
    """Install GCC n next to the current one and point nvcc at it; or a toolkit that accepts the current GCC."""
    family = _distro_family(machine)
    if family == "debian":
        install = msg("fix.host-compiler-unsupported.apt", n=n)
    else:
        install = msg("fix.host-compiler-unsupported.other-distro", n=n)
    newer = oldest_toolkit_accepting("gcc", have) if have else None
    return msg("fix.host-compiler-unsupported.gcc", n=n, install=install,
               newer=msg("fix.host-compiler-unsupported.newer-cuda", cuda=newer, have=have) if newer else
               msg("fix.host-compiler-unsupported.newer-toolkit"))


# ------------------------------------------------------------------------------------------- F06

_F06_SPECIFIC = re.compile(
    r"Bad return status for module build|Module nvidia(?:[-_]\w+)? not found|"
    r"nvidia\.ko.*(?:not found|No such file)|DKMS make\.log.*error|dkms: .*nvidia.*(?:failed|error)|"
    r"/var/lib/dkms/nvidia\S*.*\bError \d",
    re.IGNORECASE,
)
_SMI_NO_DRIVER = re.compile(r"couldn't communicate with the NVIDIA driver|NVIDIA driver is not loaded", re.IGNORECASE)
_EXPLAINED_ELSEWHERE = re.compile(
    r"Key was rejected|Required key not available|unsigned module|probe routine was not called|"
    r"obtained ownership|NovaCore|API mismatch|version mismatch|not supported by open|Legacy drivers|"
    r"will ignore|fallen off the bus|RmInitAdapter|GPU access blocked|unattended-upgrade",
    re.IGNORECASE,
)


@rule("no-module-for-running-kernel", catalogue="F06")
def no_module_for_kernel(machine: Machine) -> list[Finding]:
    if machine.system.wsl:
        return []
    specific = grep(machine, _F06_SPECIFIC, 3)
    hit = first_wording(machine, "F06")  # DKMS, make and akmods words for a failed module build (data)
    if hit is not None and hit[2].strip() not in specific:
        specific.append(hit[2].strip())
    mod = nvidia_module(machine)
    kernel = machine.system.kernel
    ev = list(specific)
    structured = False
    # Only a driver that is installed somewhere can be "missing for this kernel" (else: driver missing).
    installed = mod is not None and bool(mod.version or mod.dkms_status or mod.signer)
    installed = installed or bool(package_driver_versions(machine)) or any(
        r.value and "libnvidia-ml" in r.source for r in machine.driver.versions)
    if installed and mod is not None and mod.loaded is False and mod.available_for_running_kernel is False:
        structured = True
        ev.append(f"no nvidia module for the running kernel {kernel or ''}".rstrip())
        ev.extend(mod.dkms_status[:3])
    elif installed and mod is not None and mod.loaded is False and mod.dkms_status and kernel and not any(
        kernel in s and "installed" in s for s in mod.dkms_status
    ):
        structured = True
        ev.append(f"DKMS has no installed nvidia module for the running kernel {kernel}")
        ev.extend(mod.dkms_status[:3])
    generic = grep(machine, _SMI_NO_DRIVER, 1)
    explained = bool(_EXPLAINED_ELSEWHERE.search(joined_text(machine))) or bool(
        machine.system.secure_boot and mod is not None and mod.loaded is False
    ) or any((g.pci.kernel_driver or "") in ("nouveau", "nova_core") for g in machine.nvidia_gpus)
    if not specific and not structured:
        # nvidia-smi's "couldn't communicate" alone, with no driver installed anywhere, is the missing driver
        # (nvidia-driver-missing says so): "rebuild it for this kernel" beside it would contradict it (issue 21)
        if not generic or explained or (not installed and nvidia_driver_missing(machine)):
            return []
        ev.extend(generic)
        sure = msg("sure.no-module-for-running-kernel")
    else:
        ev.extend(generic)
        sure = None
    versions = sorted(package_driver_versions(machine))
    branch = vmajor(versions[-1]) if versions else driver_branch(machine)
    fam = _distro_family(machine)
    if fam == "fedora":
        rebuild = msg("fix.no-module-for-running-kernel.dnf")
    elif fam == "arch":
        rebuild = msg("fix.no-module-for-running-kernel.arch")
    else:
        rebuild = msg("fix.no-module-for-running-kernel.apt-or", branch=branch) if branch else \
            msg("fix.no-module-for-running-kernel.apt")
    return [
        make(
            "no-module-for-running-kernel",
            Severity.ERROR,
            "The NVIDIA kernel module is missing for the running kernel",
            "The driver's kernel module has to be built for each kernel. After a kernel update it was not "
            "rebuilt (DKMS missing, kernel headers missing, or the build failed), so nvidia-smi cannot talk to "
            "the driver. Booting the previous kernel usually still works.",
            msg("fix.no-module-for-running-kernel", rebuild=rebuild),
            ev,
            to_be_sure=sure,
        )
    ]
