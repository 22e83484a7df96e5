"""The first findings every report needs: is there a GPU, is its driver there, does it answer.

Also the two catalogue entries that are about the same basic questions: a kernel module that does not
match the user-space driver (F09, the half-done upgrade) and ``CUDA_VISIBLE_DEVICES`` hiding the GPUs (F28).
"""

from __future__ import annotations

import re

from gpusetup.driver_readings import driver_mismatch, same_version
from gpusetup.messages import msg
from gpusetup.model import Finding, Machine, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    driver_version,
    gpu_label,
    grep,
    joined_text,
    make,
    nvidia_module,
    package_driver_versions,
    packages,
    probed,
    search,
    vmajor,
)
from gpusetup.versions import Version

_COMPUTE_VENDORS = {"nvidia", "amd", "intel", "apple"}


@rule("no-gpu")
def no_gpu(machine: Machine) -> list[Finding]:
    """No display/3D device on the bus at all (only when the PCI scan itself worked)."""
    compute = [g for g in machine.gpus if g.vendor in _COMPUTE_VENDORS]
    if compute or not probed(machine, "pci"):
        return []
    others = [g.name or g.pci.device_name or g.pci.pci_id or "unknown adapter" for g in machine.gpus]
    seen = (
        f"The only display adapter is {', '.join(others)}: a virtual or server-management display that cannot run compute work, "
        if others
        else "The PCI bus shows no display or 3D controller, "
    )
    return [
        make(
            "no-gpu",
            Severity.WARNING,
            "No graphics card (GPU) was found on this machine",
            seen + "so GPU deep learning is not possible here. "
            "CPU builds of PyTorch, TensorFlow and JAX still work (slower).",
            msg("fix.no-gpu"),
            [f"PCI display adapter: {o}" for o in others] or ["PCI scan: no display/3D controller"],
        )
    ]


_OTHER_OWNERS = {"nouveau", "nova_core", "nova", "vfio-pci", "pci-stub"}


@rule("nvidia-driver-missing")
def nvidia_driver_missing(machine: Machine) -> list[Finding]:
    """NVIDIA GPU on the bus, no NVIDIA driver anywhere (no module, no library, no package)."""
    gpus = [g for g in machine.nvidia_gpus if g.pci.vendor_id == "10de" or probed(machine, "pci")]
    if not gpus or machine.system.wsl:
        return []
    if driver_version(machine) or any((g.pci.kernel_driver or "") == "nvidia" for g in gpus):
        return []
    mod = nvidia_module(machine)
    if mod is not None and (mod.loaded or mod.version or mod.available_for_running_kernel or mod.dkms_status):
        return []  # installed but not loading: F06/F07/F10/F11 explain that
    if package_driver_versions(machine):
        return []
    out = []
    passthrough = [g for g in gpus if (g.pci.kernel_driver or "") in ("vfio-pci", "pci-stub")]
    for g in passthrough:
        out.append(
            make(
                "gpu-reserved-for-vm",
                Severity.INFO,
                f"{gpu_label(g)} is reserved for a virtual machine (bound to {g.pci.kernel_driver})",
                "This GPU is handed to a virtual machine and cannot be used by programs on this host.",
                msg("fix.gpu-reserved-for-vm"),
                [f"{g.pci.address}: driver in use {g.pci.kernel_driver}"],
                gpu_index=g.index,
            )
        )
    left = [g for g in gpus if g not in passthrough and (g.pci.kernel_driver or "") not in _OTHER_OWNERS]
    if left:
        names = ", ".join(gpu_label(g) for g in left)
        out.append(
            make(
                "nvidia-driver-missing",
                Severity.ERROR,
                "An NVIDIA GPU is installed, but the NVIDIA driver is not",
                f"{names} is on the PCI bus, but no NVIDIA kernel module, driver library or driver package was "
                "found. Without the driver, CUDA programs and frameworks cannot use the GPU.",
                msg("fix.nvidia-driver-missing"),
                [
                    f"{g.pci.address or '?'} {g.pci.pci_id or ''} {g.pci.device_name or g.name or ''}"
                    f" driver in use: {g.pci.kernel_driver or 'none'}"
                    for g in left
                ],
            )
        )
    return out


def _nvml_explained(msg: str, machine: Machine) -> bool:
    """NVML errors that a more specific rule explains (so the generic finding stays quiet)."""
    low = msg.lower()
    if "unknown error" in low and not machine.system.container:
        return False  # F31 explains "Unknown Error" only inside containers
    return any(
        k in low
        for k in (
            "version mismatch",
            "librmversionmismatch",
            "blocked by the operating system",
            "operating system blocked",
            "timed out",
            "gpu is lost",
            "unknown error",
            "driver not loaded",
            "driver is not loaded",
            "drivernotloaded",
            "library not found",
            "librarynotfound",
        )
    )


@rule("nvml-failed")
def nvml_failed(machine: Machine) -> list[Finding]:
    """The driver is loaded (kernel module answers) but NVML, the management library, cannot start."""
    err = machine.driver.nvml_error
    if not err or _nvml_explained(err, machine):
        return []
    mod = nvidia_module(machine)
    kernel_reading = [r for r in machine.driver.versions if r.value and _is_kernel_source(r.source)]
    if not ((mod is not None and mod.loaded) or kernel_reading):
        return []
    return [
        make(
            "nvml-failed",
            Severity.ERROR,
            "The NVIDIA driver is loaded, but its management library (NVML) does not start",
            f"NVML said: {err}. nvidia-smi, monitoring tools and most frameworks need NVML, so the GPU will "
            "look absent to them.",
            msg("fix.nvml-failed", version=str(kernel_reading[0].value) if kernel_reading
                else msg("fix.nvml-failed.see-proc")),
            [f"NVML: {err}", *(f"{r.source}: {r.value}" for r in kernel_reading)],
        )
    ]


# ------------------------------------------------------------------------------------------- F09

_KERNEL_SOURCES = ("/proc/driver/nvidia", "/sys/module", "kernel", "modinfo", "module")
_USER_SOURCES = ("nvml", "nvidia-smi", "libnvidia-ml", "nvml library", "user")


def _is_kernel_source(source: str) -> bool:
    s = source.lower()
    return any(k in s for k in _KERNEL_SOURCES)


def _is_user_source(source: str) -> bool:
    s = source.lower()
    return not _is_kernel_source(s) and any(k in s for k in _USER_SOURCES)


def _flat(text: str) -> str:
    """Kernel log text with timestamps, NVRM prefixes, syslog escapes and line breaks removed."""
    text = re.sub(r"#012", " ", text)
    text = re.sub(r"\[\s*\d+\.\d+\]", " ", text)
    text = re.sub(r"NVRM:", " ", text)
    return re.sub(r"\s+", " ", text)


_API_MISMATCH = re.compile(
    r"API mismatch: the client (?:'[^']*' \(pid \d+\) )?has the version (\d+(?:\.\d+)+), but this kernel module has "
    r"the version (\d+(?:\.\d+)+)",
    re.IGNORECASE,
)


@rule("driver-version-mismatch", catalogue="F09")
def driver_version_mismatch(machine: Machine) -> list[Finding]:
    """Kernel module ≠ user-space driver: an upgrade that was not followed by a reboot, or left half-done."""
    if machine.system.wsl:
        return []
    evidence: list[str] = []
    kernel_v: Version | None = None
    user_v: Version | None = None
    runtime = False
    mm = driver_mismatch(machine)  # the same comparison the driver probe makes
    if mm:
        kernel_v, user_v = mm
        runtime = True
        evidence.append(f"kernel module {kernel_v}, driver libraries {user_v}")
    else:
        for r in machine.driver.versions:
            if not r.value:
                continue
            if _is_kernel_source(r.source) and kernel_v is None:
                kernel_v = r.value
            elif _is_user_source(r.source) and user_v is None:
                user_v = r.value
        if kernel_v and user_v and not same_version(kernel_v, user_v):
            runtime = True
            evidence.append(f"kernel module {kernel_v}, driver libraries {user_v}")
    m = _API_MISMATCH.search(_flat(joined_text(machine)))
    if m:
        user_v, kernel_v = Version(m.group(1)), Version(m.group(2))
        runtime = True
        evidence[:0] = grep(machine, r"API mismatch|this kernel module has", 3)
    lines = grep(machine, r"Driver/library version mismatch|LibRmVersionMismatch|NVML library version|"
                 r"unsupported display driver / cuda driver combination|cudaErrorSystemDriverMismatch", 3)
    if (machine.driver.cuinit_error or "").upper() == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH":
        lines.append(f"cuInit: {machine.driver.cuinit_error} (libcuda and the kernel module differ)")
    if lines:
        runtime = True
        evidence.extend(lines)
        lib = search(machine, r"NVML library version:\s*([\d.]+)")
        if lib and not user_v:
            user_v = Version(lib.group(1))
    # Package state: several driver versions installed, or a package left half-configured.
    half = [f"{s}  {n}  {v}" for s, n, v in packages(machine) if s in ("iF", "iU", "iH", "iW", "it")
            and "nvidia" in n]
    versions = package_driver_versions(machine)
    mixed = len({vmajor(v) for v in versions}) > 1 or len(versions) > 1
    history = [ln for ln in machine.package_history if re.search(r"unattended-upgrade", ln, re.I)]
    history_nvidia = [ln for ln in machine.package_history if re.search(r"nvidia", ln, re.I)
                      and re.search(r"upgrade|install", ln, re.I)]
    symptom = runtime or bool(grep(machine, r"couldn't communicate with the NVIDIA driver|Failed to initialize NVML", 1))
    if not runtime and not half and not (mixed and symptom) and not (history and history_nvidia and symptom):
        return []
    if half:
        evidence.extend(half[:3])
    if mixed:
        evidence.extend(f"installed packages for driver {v}: {', '.join(sorted(n)[:3])}" for v, n in versions.items())
    if history and history_nvidia:
        evidence.extend(history[:1] + history_nvidia[:2])
    old = ", ".join(sorted(v for v in versions if v != user_v)) if user_v and len(versions) > 1 else ""
    finish = (msg("fix.driver-version-mismatch.finish-old", old=old) if old else
              msg("fix.driver-version-mismatch.finish")) if half or mixed else None
    fix = msg("fix.driver-version-mismatch", finish=finish,
              reboot=msg("fix.driver-version-mismatch.reboot-to", version=str(user_v)) if user_v else None,
              unattended=msg("fix.driver-version-mismatch.unattended") if history else None)
    if history and history_nvidia and not runtime and not half:
        title = "unattended-upgrades changed the NVIDIA driver packages and the driver stopped working"
    elif runtime and kernel_v and user_v:
        title = f"The loaded NVIDIA kernel module ({kernel_v}) does not match the driver libraries ({user_v})"
    elif runtime:
        title = "The loaded NVIDIA kernel module does not match the driver libraries"
    else:
        title = "The NVIDIA driver packages are half-upgraded"
    detail = (
        "The driver was upgraded but the old kernel module is still running (no reboot yet), or the upgrade "
        "stopped half-way and left packages of two versions. Until they match, nvidia-smi and CUDA fail."
    )
    return [
        make(
            "driver-version-mismatch",
            Severity.ERROR if (runtime or half or symptom) else Severity.WARNING,
            title,
            detail,
            fix,
            evidence,
            to_be_sure=None if (kernel_v and user_v) else msg("sure.driver-version-mismatch"),
            params={"kernel": kernel_v, "libs": user_v} if runtime and kernel_v and user_v else None,
        )
    ]


# ------------------------------------------------------------------------------------------- F28


def parse_visible_devices(value: str, count: int | None, uuids: list[str]) -> tuple[int, str | None]:
    """How many GPUs ``CUDA_VISIBLE_DEVICES`` leaves visible, and the first token CUDA stops at.

    CUDA reads the list left to right and stops at the first invalid entry (negative, out of range, a word
    such as ``all``, an unknown UUID); everything after it is ignored.
    """
    if value.strip() == "":
        return 0, "(empty)"
    seen: set[str] = set()
    for tok in value.split(","):
        t = tok.strip()
        if re.fullmatch(r"-?\d+", t):
            i = int(t)
            if i < 0 or (count is not None and i >= count):
                return len(seen), t
            seen.add(str(i))
            continue
        if t.upper().startswith(("GPU-", "MIG-")):
            if uuids and not any(u.lower().startswith(t.lower()) for u in uuids):
                return len(seen), t
            seen.add(t.lower())
            continue
        return len(seen), t or "(empty entry)"
    return len(seen), None


_NO_DEVICE = re.compile(
    r"No CUDA GPUs are available|no CUDA-capable device is detected|invalid device ordinal|cudaErrorNoDevice",
    re.IGNORECASE,
)
_CVD_SET = re.compile(r"CUDA_VISIBLE_DEVICES\s*[\"']?\s*\]?\s*[=:]", re.IGNORECASE)


@rule("cuda-visible-devices-hides-gpus", catalogue="F28")
def cuda_visible_devices(machine: Machine) -> list[Finding]:
    value = machine.cuda.env.get("CUDA_VISIBLE_DEVICES")
    nv = machine.nvidia_gpus
    count = len(nv) if nv else None
    uuids = [g.uuid for g in nv if g.uuid] + [m for g in nv for m in g.mig_devices if m.upper().startswith("MIG-")]
    if value is not None:
        visible, bad = parse_visible_devices(value, count, uuids)
        if bad is None:
            return []
        if visible == 0 and (count or bad in ("(empty)",) or not re.fullmatch(r"\d+", bad)):
            if count:
                sev = Severity.ERROR
            elif probed(machine, "pci") or probed(machine, "nvml"):
                sev = Severity.INFO  # no NVIDIA GPU here anyway (CI runners set it on purpose)
            else:
                sev = Severity.WARNING
            return [
                make(
                    "cuda-visible-devices-hides-gpus",
                    sev,
                    "CUDA_VISIBLE_DEVICES hides every GPU from CUDA programs",
                    f"CUDA_VISIBLE_DEVICES is set to '{value}'. CUDA stops reading it at '{bad}', so programs see "
                    "no GPU and report 'no CUDA-capable device' or 'No CUDA GPUs are available'. "
                    "('all' is only valid for NVIDIA_VISIBLE_DEVICES in containers.)",
                    msg("fix.cuda-visible-devices-hides-gpus.unset-range", last=count - 1) if count else
                    msg("fix.cuda-visible-devices-hides-gpus.unset"),
                    [f"CUDA_VISIBLE_DEVICES={value!r}"] + ([f"NVIDIA GPUs found: {count}"] if count else []),
                )
            ]
        if count:
            return [
                make(
                    "cuda-visible-devices-hides-gpus",
                    Severity.WARNING,
                    f"CUDA_VISIBLE_DEVICES hides some GPUs (CUDA stops at '{bad}')",
                    f"CUDA_VISIBLE_DEVICES is '{value}': only {visible} of {count} GPUs are visible, because CUDA "
                    f"ignores everything from the invalid entry '{bad}' on.",
                    msg("fix.cuda-visible-devices-hides-gpus.some", last=count - 1),
                    [f"CUDA_VISIBLE_DEVICES={value!r}", f"NVIDIA GPUs found: {count}"],
                )
            ]
        return []
    # Pasted text: the error plus a line that sets the variable.
    errors = grep(machine, _NO_DEVICE, 2)
    sets = [ln for ln in grep(machine, _CVD_SET, 4) if "changing env variable" not in ln.lower()]
    if errors and sets:
        return [
            make(
                "cuda-visible-devices-hides-gpus",
                Severity.WARNING,
                "CUDA_VISIBLE_DEVICES probably hides the GPU",
                "The program sets CUDA_VISIBLE_DEVICES and then finds no GPU. An index that does not exist on "
                "this machine (e.g. '1' on a one-GPU machine), an empty value, '-1' or 'all' hide every GPU.",
                msg("fix.cuda-visible-devices-hides-gpus.pasted"),
                errors + sets,
                to_be_sure=msg("sure.cuda-visible-devices-hides-gpus"),
            )
        ]
    return []


# ---------------------------------------------------------------------------------- nvidia-smi hang


@rule("nvidia-smi-hung")
def nvidia_smi_hung(machine: Machine) -> list[Finding]:
    hits = [e for e in machine.driver.evidence if e.source.startswith(("nvidia-smi", "nvml")) and e.error
            and "timed out" in e.error.lower()]
    if not hits:
        return []
    what = "nvidia-smi" if any(e.source.startswith("nvidia-smi") for e in hits) else "The NVIDIA driver (NVML)"
    return [
        make(
            "nvidia-smi-hung",
            Severity.ERROR,
            f"{what} stopped answering",
            f"{what} did not answer in time and was stopped. This happens when a GPU has fallen off the bus, the "
            "driver is stuck, or the GPU is in a bad state; the rest of this report was still collected.",
            msg("fix.nvidia-smi-hung"),
            [f"{e.source}: {e.error}" for e in hits],
        )
    ]
