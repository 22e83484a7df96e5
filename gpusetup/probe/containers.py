"""Container tooling: Docker/Podman present, NVIDIA runtime registered, CDI specs, container toolkit version.

``docker info`` talks to the daemon, so it runs with a short timeout; when the daemon is down or the user is
not allowed on its socket, the runtime registration is still read from ``/etc/docker/daemon.json``.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from gpusetup.model import Evidence

if TYPE_CHECKING:
    from gpusetup.model import Containers, Machine
    from gpusetup.probe import ProbeContext

CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
DOCKER_INFO_TIMEOUT = 3.0


def probe(ctx: ProbeContext, machine: Machine) -> None:
    c = machine.containers
    short = min(ctx.timeout, 3.0)
    if ctx.runner.which("docker"):
        res = ctx.runner.run(["docker", "--version"], timeout=short)
        c.docker = parse_docker_version(res.stdout)
        _docker_info(ctx, c)
    if c.nvidia_runtime_registered is None or c.default_runtime is None:
        _daemon_json(ctx, c)
    if ctx.runner.which("podman"):
        res = ctx.runner.run(["podman", "--version"], timeout=short)
        m = re.search(r"podman version (\S+)", res.stdout)
        c.podman = m.group(1) if m else None
    if c.docker is None and c.podman is None:
        # looked for and absent: a fact, so `docker --check` says "no container engine" instead of "not examined"
        c.evidence.append(Evidence("docker / podman", ok=False, error="neither is installed (not found on PATH)"))
    c.cdi_specs = cdi_specs(ctx)
    for tool in ("nvidia-ctk", "nvidia-container-cli"):
        if c.toolkit_version is None and ctx.runner.which(tool):
            res = ctx.runner.run([tool, "--version"], timeout=short)
            c.toolkit_version = parse_toolkit_version(res.stdout)
            c.evidence.append(
                Evidence(f"{tool} --version", ok=c.toolkit_version is not None, error=res.error)
            )
    if machine.nvidia_gpus and ctx.runner.which("nvidia-container-cli"):
        # What the container hook itself sees; its error text is the one users get from `docker run --gpus`.
        res = ctx.runner.run(["nvidia-container-cli", "info"], timeout=short)
        if not res.ok:
            c.toolkit_error = (res.stderr.strip() or res.error or res.stdout.strip())[:500] or None


def parse_docker_version(text: str) -> str | None:
    """``Docker version 28.2.2, build e6534b4`` → ``28.2.2``."""
    m = re.search(r"version\s+([0-9][\w.+~-]*?)(?:,|\s|$)", text or "")
    return m.group(1) if m else None


def parse_toolkit_version(text: str) -> str | None:
    """``NVIDIA Container Toolkit CLI version 1.17.3`` or ``cli-version: 1.14.6`` → the version."""
    m = re.search(r"(?:CLI version|cli-version:|version)\s+v?(\d+\.\d+\.\d+[\w.~-]*)", text or "", re.I)
    return m.group(1) if m else None


def parse_docker_info(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads((text or "").strip().splitlines()[-1]) if text and text.strip() else None
    except (ValueError, IndexError):
        return None
    return data if isinstance(data, dict) else None


def _docker_info(ctx: ProbeContext, c: Containers) -> None:
    res = ctx.runner.run(["docker", "info", "--format", "{{json .}}"], timeout=DOCKER_INFO_TIMEOUT)
    data = parse_docker_info(res.stdout)
    errors = []
    if data:
        errors = [str(e) for e in (data.get("ServerErrors") or []) if e]
    reachable = bool(data and data.get("ServerVersion")) and not errors
    c.docker_daemon_reachable = reachable
    if reachable and data:
        raw = data.get("Runtimes")
        runtimes: dict[str, Any] = raw if isinstance(raw, dict) else {}
        c.nvidia_runtime_registered = "nvidia" in runtimes
        c.default_runtime = data.get("DefaultRuntime") or None
        c.evidence.append(
            Evidence("docker info", detail=f"runtimes: {', '.join(sorted(runtimes)) or 'none'}")
        )
        return
    why = res.error or (res.stderr.strip().splitlines() or errors or ["no answer"])[-1]
    if "permission denied" in why.lower():
        why += " — your user may not be in the 'docker' group"
    c.evidence.append(Evidence("docker info", ok=False, error=why[:300]))


def _daemon_json(ctx: ProbeContext, c: Containers) -> None:
    """Runtime registration as configured (``nvidia-ctk runtime configure`` writes it here)."""
    try:
        data = json.loads(ctx.path("/etc/docker/daemon.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(data, dict):
        return
    raw = data.get("runtimes")
    runtimes: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if c.nvidia_runtime_registered is None:
        c.nvidia_runtime_registered = "nvidia" in runtimes
    if c.default_runtime is None and isinstance(data.get("default-runtime"), str):
        c.default_runtime = data["default-runtime"]
    c.evidence.append(
        Evidence("/etc/docker/daemon.json", detail=f"runtimes: {', '.join(sorted(runtimes)) or 'none'}")
    )


def cdi_specs(ctx: ProbeContext) -> list[str]:
    out = []
    for d in CDI_DIRS:
        try:
            names = sorted(os.listdir(ctx.path(d)))
        except OSError:
            continue
        out += [f"{d}/{n}" for n in names if n.endswith((".yaml", ".yml", ".json"))]
    return out
