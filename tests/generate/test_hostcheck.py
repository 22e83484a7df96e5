"""host_check: every gap in the container set-up as a finding with the exact fix."""

from __future__ import annotations

from pathlib import Path

from gpusetup.generate import host_check
from gpusetup.model import Containers, Driver, Evidence, Machine, Severity, System


def _machine(containers: Containers, distro: str = "ubuntu", os: str = "linux", driver: str | None = "580.95.05") -> Machine:
    return Machine(system=System(os=os, distro_id=distro), driver=Driver(version=driver), containers=containers)


def ids(findings) -> list[str]:
    return [f.id for f in findings]


def test_ready_host_is_ok_with_a_smoke_test() -> None:
    f = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=True, nvidia_runtime_registered=True,
                                       toolkit_version="1.19.1")))
    assert ids(f) == ["container-gpu-ok"]
    assert f[0].severity is Severity.OK and "--gpus all" in f[0].fix and "1.19.1" in f[0].detail


def test_cdi_only_works_on_docker_25_and_newer() -> None:
    ok = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=True,
                                        cdi_specs=["/var/run/cdi/nvidia.yaml"], toolkit_version="1.19.1")))
    assert ids(ok) == ["container-gpu-ok"] and "CDI" in ok[0].detail
    old = host_check(_machine(Containers(docker="24.0.7", docker_daemon_reachable=True,
                                         cdi_specs=["/etc/cdi/nvidia.yaml"], toolkit_version="1.19.1")))
    assert ids(old) == ["docker-cdi-too-old"]
    assert "nvidia-ctk runtime configure --runtime=docker" in old[0].fix


def test_no_runtime_no_cdi_gives_distro_specific_install_commands() -> None:
    apt = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=True)))
    assert ids(apt) == ["container-gpu-runtime-missing"] and apt[0].severity is Severity.ERROR
    assert "apt-get install -y nvidia-container-toolkit" in apt[0].fix
    assert "could not select device driver" in apt[0].detail
    from gpusetup.install.plan import installers_dir

    if (installers_dir() / "nvidia-container-toolkit.sh").is_file():  # the installer step, once it ships
        assert "gpusetup install --container-toolkit" in apt[0].fix
    dnf = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=True), distro="fedora"))
    assert "dnf install -y nvidia-container-toolkit" in dnf[0].fix


def test_daemon_down_and_permission_denied_are_told_apart() -> None:
    down = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=False,
                                          nvidia_runtime_registered=True, toolkit_version="1.19.1")))
    assert ids(down) == ["docker-daemon-unreachable"] and "systemctl enable --now docker" in down[0].fix
    denied = host_check(_machine(Containers(
        docker="28.1.1", docker_daemon_reachable=False, nvidia_runtime_registered=True, toolkit_version="1.19.1",
        evidence=[Evidence("docker version", ok=False, error="permission denied while trying to connect to the "
                                                                 "Docker daemon socket at unix:///var/run/docker.sock")])))
    assert ids(denied) == ["docker-permission"] and "usermod -aG docker" in denied[0].fix
    assert denied[0].evidence


def test_no_engine_and_no_driver() -> None:
    f = host_check(_machine(Containers(toolkit_version=None, evidence=[Evidence("docker", ok=False, error="not found")]),
                            driver=None))
    assert ids(f) == ["container-no-driver", "container-engine-missing"]
    assert "apt-get install -y docker.io" in f[1].fix


def test_runtime_registered_but_toolkit_gone() -> None:
    f = host_check(_machine(Containers(docker="28.1.1", docker_daemon_reachable=True, nvidia_runtime_registered=True)))
    assert ids(f) == ["container-toolkit-missing"] and f[0].severity is Severity.WARNING


def test_podman_needs_cdi_specs() -> None:
    f = host_check(_machine(Containers(podman="4.9.3", toolkit_version="1.19.1"), distro="fedora"))
    assert ids(f) == ["container-cdi-missing"] and "nvidia-ctk cdi generate" in f[0].fix
    ok = host_check(_machine(Containers(podman="5.2.0", cdi_specs=["/etc/cdi/nvidia.yaml"], toolkit_version="1.19.1")))
    assert ids(ok) == ["container-gpu-ok"] and "nvidia.com/gpu=all" in ok[0].fix
    old = host_check(_machine(Containers(podman="3.4.4", cdi_specs=["/etc/cdi/nvidia.yaml"])))
    assert "podman-too-old" in ids(old)


def test_windows_uses_docker_desktop() -> None:
    f = host_check(_machine(Containers(docker="27.3.1", docker_daemon_reachable=True), os="windows", distro=""))
    assert ids(f) == ["container-gpu-ok"] and "WSL2" in f[0].title
    missing = host_check(_machine(Containers(evidence=[Evidence("docker", ok=False, error="not found")]), os="windows"))
    assert "Docker Desktop" in missing[0].fix


def test_macos_and_unprobed_reports() -> None:
    assert ids(host_check(_machine(Containers(), os="macos"))) == ["container-gpu-macos"]
    f = host_check(_machine(Containers()))
    assert ids(f) == ["container-state-unknown"] and f[0].severity is Severity.INFO
    assert "docker --check` on that machine" in f[0].fix


def test_a_live_check_with_no_engine_says_so_instead_of_recommending_itself() -> None:
    """`gpusetup docker --check` on a machine without docker or podman (issue 26): the probe records that it looked."""
    from fakes.runner import FakeRunner

    from gpusetup.probe import ProbeContext, containers

    m = Machine(system=System(os="linux", distro_id="debian"), driver=Driver(version="580.95.05"))
    ctx = ProbeContext(runner=FakeRunner({}), root=Path("/nonexistent-root"))
    containers.probe(ctx, m)
    f = host_check(m)
    assert ids(f) == ["container-engine-missing"], [x.title for x in f]
    assert not any("docker --check" in x.fix for x in f)


def test_starting_docker_follows_the_init_system() -> None:
    down = Containers(docker="28.1.1", docker_daemon_reachable=False, nvidia_runtime_registered=True,
                      toolkit_version="1.19.1")
    for init, container, expected in (("systemd", None, "systemctl enable --now docker"),
                                      ("init", None, "sudo service docker start"),
                                      ("tini", "docker", "/var/run/docker.sock")):
        m = _machine(down)
        m.system.init_system, m.system.container = init, container
        f = host_check(m)
        assert ids(f) == ["docker-daemon-unreachable"] and expected in f[0].fix
        if init != "systemd":
            assert "systemctl" not in f[0].fix
