"""Can this host run GPU containers? Each gap as a Finding with the exact fix.

Reads only ``Machine.containers`` (filled by the platform probe: docker/podman versions, daemon reachability,
the nvidia runtime in Docker's config, CDI specs, the toolkit version) and the driver facts. Two paths make
``--gpus`` work (docker-gui-style.md 1.4/1.5): the nvidia runtime registered with Docker, or CDI specs that
Docker 25+ / Podman 4.1+ read. A registered runtime does not prove a GPU exists, so the driver is checked too.
"""

from __future__ import annotations

from gpusetup.generate.facts import vt
from gpusetup.messages import msg, render
from gpusetup.model import Finding, Machine, Message, Severity
from gpusetup.resources import installers_dir

_TOOLKIT_APT = (
    "curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o "
    "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg\n"
    "curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list | "
    "sed 's#deb https://#deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://#g' | "
    "sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list\n"
    "sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit"
)
_TOOLKIT_DNF = (
    "curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo | "
    "sudo tee /etc/yum.repos.d/nvidia-container-toolkit.repo\n"
    "sudo dnf install -y nvidia-container-toolkit"
)
_TOOLKIT_ZYPPER = (
    "sudo zypper ar https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo\n"
    "sudo zypper --gpg-auto-import-keys install -y nvidia-container-toolkit"
)
_CONFIGURE_DOCKER = "sudo nvidia-ctk runtime configure --runtime=docker\nsudo systemctl restart docker"
_CDI_GENERATE = "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml\nnvidia-ctk cdi list"


def _family(machine: Machine) -> str:
    ids = {(machine.system.distro_id or "").lower(), *(d.lower() for d in machine.system.distro_like)}
    if ids & {"debian", "ubuntu"}:
        return "apt"
    if ids & {"fedora", "rhel", "centos", "rocky", "almalinux", "amzn"}:
        return "dnf"
    if ids & {"opensuse", "suse", "sles", "opensuse-leap", "opensuse-tumbleweed"}:
        return "zypper"
    return "unknown"


def toolkit_install_commands(machine: Machine) -> str | Message:
    """Exact commands that install the NVIDIA container toolkit on this distribution (where NVIDIA's guide is
    the only answer, a message pointing at it)."""
    fam = _family(machine)
    if fam == "apt":
        return _TOOLKIT_APT
    if fam == "dnf":
        return _TOOLKIT_DNF
    if fam == "zypper":
        return _TOOLKIT_ZYPPER
    return msg("fix.container-toolkit.guide")


def _installer_hint() -> Message | None:
    """Point at gpusetup's own installer step (installers/nvidia-container-toolkit.sh)."""
    if (installers_dir() / "nvidia-container-toolkit.sh").is_file():
        return msg("fix.container-toolkit.installer-hint")
    return None


def _finding(fid: str, severity: Severity, title: str, detail: str, fix: Message, evidence: list[str] | None = None
             ) -> Finding:
    """A host-check finding whose fix is a message: its English words, and the message to word it in any language."""
    return Finding(fid, severity, title, detail, render(fix), evidence=list(evidence or []), fix_code=fix)


def _start_docker(machine: Machine) -> Message:
    """How to start the Docker daemon where this runs: through systemd only when systemd is PID 1 (issue 26)."""
    init = machine.system.init_system
    if init == "systemd" or init is None:
        return msg("fix.docker-daemon-unreachable")
    if machine.system.container:
        return msg("fix.docker-daemon-unreachable.container", container=machine.system.container, init=init)
    return msg("fix.docker-daemon-unreachable.no-systemd", init=init)


def _evidence(machine: Machine) -> list[str]:
    out = []
    for ev in machine.containers.evidence:
        line = ev.source + (f": {ev.error}" if ev.error else "") + (f" ({ev.detail})" if ev.detail else "")
        out.append(line)
    return out


def _permission_denied(machine: Machine) -> bool:
    return any("permission denied" in (ev.error or "").lower() for ev in machine.containers.evidence)


def host_check(machine: Machine) -> list[Finding]:
    """Container-readiness findings for this host, most severe first."""
    c = machine.containers
    os_name = (machine.system.os or "").lower()
    ev = _evidence(machine)
    findings: list[Finding] = []
    hint = _installer_hint()

    if os_name == "macos":
        return [_finding("container-gpu-macos", Severity.ERROR, "GPU containers are not possible on macOS",
                         "Docker on macOS runs a Linux VM without access to any NVIDIA GPU.",
                         msg("fix.container-gpu-macos"))]
    windows = os_name == "windows" or bool(machine.system.wsl)
    probed = any(x is not None for x in (c.docker, c.podman, c.docker_daemon_reachable,
                                         c.nvidia_runtime_registered, c.toolkit_version)) or bool(c.cdi_specs)
    if not probed and not c.evidence:
        findings.append(_finding(
            "container-state-unknown", Severity.INFO, "Container set-up was not examined",
            "This report has no container facts (Docker/Podman, NVIDIA runtime, CDI), so gpusetup cannot say "
            "whether GPU containers will start here.",
            msg("fix.container-state-unknown")))
        return findings

    if not machine.driver.version and not machine.driver.cuda_driver_version:
        findings.append(_finding(
            "container-no-driver", Severity.ERROR, "No NVIDIA driver: containers cannot use the GPU",
            "Containers bring CUDA libraries but always use the host's NVIDIA driver.",
            msg("fix.container-no-driver")))

    if not c.docker and not c.podman:
        if windows:
            fix = msg("fix.container-engine-missing.windows")
        elif _family(machine) == "apt":
            fix = msg("fix.container-engine-missing.apt")
        elif _family(machine) == "dnf":
            fix = msg("fix.container-engine-missing.dnf")
        else:
            fix = msg("fix.container-engine-missing")
        findings.append(_finding("container-engine-missing", Severity.ERROR, "No container engine (Docker or Podman)",
                                 "Neither docker nor podman was found, so the generated set-up cannot run here.",
                                 fix, ev))
        return findings

    if c.docker and c.docker_daemon_reachable is False:
        if _permission_denied(machine):
            findings.append(_finding(
                "docker-permission", Severity.ERROR, "Docker is installed but you may not use it",
                "The Docker daemon refused this user (permission denied on /var/run/docker.sock).",
                msg("fix.docker-permission"), ev))
        else:
            findings.append(_finding(
                "docker-daemon-unreachable", Severity.ERROR, "The Docker daemon is not running",
                f"docker {c.docker} is installed but its daemon did not answer.",
                msg("fix.docker-daemon-unreachable.windows") if windows else _start_docker(machine), ev))

    runtime = bool(c.nvidia_runtime_registered)
    cdi = bool(c.cdi_specs)
    docker_v = vt(c.docker)
    docker_cdi = bool(docker_v and docker_v >= (25,))
    gpus_ok_docker = bool(c.docker) and c.docker_daemon_reachable is not False and (runtime or (cdi and docker_cdi))

    if c.docker and not windows:
        if not runtime and not cdi:
            findings.append(_finding(
                "container-gpu-runtime-missing", Severity.ERROR,
                "Docker cannot give containers the GPU (no NVIDIA runtime, no CDI specs)",
                "`docker run --gpus all` would fail with 'could not select device driver \"\" with "
                "capabilities: [[gpu]]'. The NVIDIA Container Toolkit provides the runtime.",
                msg("fix.container-gpu-runtime-missing", install=toolkit_install_commands(machine),
                    configure=_CONFIGURE_DOCKER, hint=hint), ev))
        elif not runtime and cdi and not docker_cdi:
            findings.append(_finding(
                "docker-cdi-too-old", Severity.WARNING, "CDI specs exist but this Docker cannot use them",
                f"Docker {c.docker} predates CDI support (Docker 25+), and the nvidia runtime is not registered.",
                msg("fix.docker-cdi-too-old", configure=_CONFIGURE_DOCKER, hint=hint), ev))
        if runtime and not c.toolkit_version:
            findings.append(_finding(
                "container-toolkit-missing", Severity.WARNING,
                "The nvidia runtime is registered but the NVIDIA Container Toolkit was not found",
                "Docker's configuration names nvidia-container-runtime, but the toolkit's tools are missing "
                "(removed, or not on PATH), so GPU containers would fail to start.",
                msg("fix.container-toolkit.reinstall", install=toolkit_install_commands(machine), hint=hint), ev))

    if c.podman and not c.docker:
        pv = vt(c.podman)
        if not cdi:
            findings.append(_finding(
                "container-cdi-missing", Severity.ERROR, "Podman has no CDI specs for the GPU",
                "Podman reaches NVIDIA GPUs only through CDI specs (nvidia.com/gpu=all).",
                msg("fix.container-cdi-missing", generate=_CDI_GENERATE) if c.toolkit_version else
                msg("fix.container-cdi-missing.install", install=toolkit_install_commands(machine),
                    generate=_CDI_GENERATE), ev))
        if pv and pv < (4, 1):
            findings.append(_finding(
                "podman-too-old", Severity.WARNING, f"Podman {c.podman} is too old for CDI devices",
                "`--device nvidia.com/gpu=all` needs Podman 4.1 or newer.",
                msg("fix.podman-too-old"), ev))

    if not any(f.severity in (Severity.ERROR, Severity.WARNING) for f in findings):
        if windows:
            how = "docker run --rm --gpus all ubuntu nvidia-smi"
            findings.append(_finding(
                "container-gpu-ok", Severity.OK, "Docker is ready for GPU containers (Docker Desktop / WSL2)",
                "GPU support comes from Docker Desktop's WSL2 back end and the Windows driver.",
                msg("fix.container-gpu-ok", command=how), ev))
        elif gpus_ok_docker:
            path = "the nvidia runtime" if runtime else "CDI specs (" + ", ".join(c.cdi_specs) + ")"
            tk = f", NVIDIA Container Toolkit {c.toolkit_version}" if c.toolkit_version else ""
            findings.append(_finding(
                "container-gpu-ok", Severity.OK, "Docker can give containers the GPU",
                f"docker {c.docker} reaches the GPU through {path}{tk}.",
                msg("fix.container-gpu-ok", command="docker run --rm --gpus all ubuntu nvidia-smi"), ev))
        elif c.podman and cdi:
            findings.append(_finding(
                "container-gpu-ok", Severity.OK, "Podman can give containers the GPU (CDI)",
                f"podman {c.podman} with CDI specs {', '.join(c.cdi_specs)}.",
                msg("fix.container-gpu-ok", command="podman run --rm --device nvidia.com/gpu=all "
                    "--security-opt=label=disable ubuntu nvidia-smi -L"), ev))
    findings.sort(key=lambda f: f.severity.rank, reverse=True)
    return findings
