"""containers probe: docker/podman, NVIDIA runtime, CDI specs, container toolkit (recorded docker output)."""

from __future__ import annotations

import json

from fakes.fsroot import fixture, make_root
from fakes.runner import FakeRunner, Reply

from gpusetup.model import Gpu, Machine
from gpusetup.probe import ProbeContext
from gpusetup.probe.containers import parse_docker_info, parse_docker_version, parse_toolkit_version, probe

LOCAL = "recorded-local/"
INFO_DOWN = LOCAL + "docker-info-json__daemon-unreachable__28.2.2.stdout.txt"


def _ctx(root, runner) -> ProbeContext:
    return ProbeContext(runner=runner, root=root, env={}, os_name="linux")


def _docker(info_reply: Reply) -> FakeRunner:
    r = FakeRunner()
    r.add(["docker", "--version"], Reply(fixture(LOCAL + "docker-version__28.2.2.txt")))
    r.add(["docker", "info"], info_reply)
    return r


def test_recorded_daemon_unreachable_falls_back_to_daemon_json(tmp_path):
    make_root(
        tmp_path,
        {
            "/etc/docker/daemon.json": json.dumps(
                {
                    "runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}},
                    "default-runtime": "nvidia",
                }
            ),
            "/etc/cdi/nvidia.yaml": "cdiVersion: 0.5.0\n",
            "/var/run/cdi/readme.txt": "",
        },
    )
    reply = Reply(
        fixture(INFO_DOWN),
        fixture(LOCAL + "docker-info-json__daemon-unreachable__28.2.2.stderr.txt"),
        returncode=1,
    )
    m = Machine()
    probe(_ctx(tmp_path, _docker(reply)), m)
    c = m.containers
    assert c.docker == "28.2.2"
    assert c.docker_daemon_reachable is False
    assert c.nvidia_runtime_registered is True and c.default_runtime == "nvidia"  # from daemon.json
    assert c.cdi_specs == ["/etc/cdi/nvidia.yaml"]
    assert any(not e.ok and "Cannot connect to the Docker daemon" in e.error for e in c.evidence)


def test_reachable_daemon_with_runtimes(tmp_path):
    # The recorded JSON with the server fields a running daemon fills in.
    data = json.loads(fixture(INFO_DOWN))
    data.update(
        {
            "ServerVersion": "28.2.2",
            "Runtimes": {"runc": {"path": "runc"}, "nvidia": {"path": "nvidia-container-runtime"}},
            "DefaultRuntime": "runc",
        }
    )
    m = Machine()
    probe(_ctx(tmp_path, _docker(Reply(json.dumps(data)))), m)
    c = m.containers
    assert (c.docker_daemon_reachable, c.nvidia_runtime_registered, c.default_runtime) == (True, True, "runc")


def test_permission_denied_and_hung_docker(tmp_path):
    denied = Reply(
        "",
        "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock\n",
        1,
    )
    m = Machine()
    probe(_ctx(tmp_path, _docker(denied)), m)
    assert m.containers.docker_daemon_reachable is False
    assert "docker' group" in m.containers.evidence[0].error
    m = Machine()
    probe(_ctx(tmp_path, _docker(Reply.hung(3))), m)
    assert m.containers.docker_daemon_reachable is False and "timed out" in m.containers.evidence[0].error


def test_toolkit_versions_and_hook_error(tmp_path):
    r = FakeRunner()
    r.add(
        ["nvidia-ctk", "--version"],
        Reply("NVIDIA Container Toolkit CLI version 1.17.3\ncommit: 16f37fcafcf13b4e4b3e1fa3b7a8c2f4\n"),
    )
    r.add(
        ["nvidia-container-cli", "info"],
        Reply("", "nvidia-container-cli: initialization error: nvml error: driver not loaded\n", 1),
    )
    m = Machine()
    m.gpus.append(Gpu(vendor="nvidia"))
    probe(_ctx(tmp_path, r), m)
    c = m.containers
    assert c.docker is None and c.toolkit_version == "1.17.3"
    assert c.toolkit_error == "nvidia-container-cli: initialization error: nvml error: driver not loaded"
    assert parse_toolkit_version("cli-version: 1.14.6\nlib-version: 1.14.6\n") == "1.14.6"


def test_nothing_installed(tmp_path):
    m = Machine()
    probe(_ctx(tmp_path, FakeRunner()), m)
    c = m.containers
    assert (c.docker, c.podman, c.toolkit_version, c.cdi_specs, c.nvidia_runtime_registered) == (
        None,
        None,
        None,
        [],
        None,
    )


def test_parsers_on_bad_input():
    assert parse_docker_version(fixture(LOCAL + "docker-version__28.2.2.txt")) == "28.2.2"
    assert parse_docker_version("") is None
    assert parse_docker_info("not json") is None
    assert parse_docker_info(fixture(INFO_DOWN))["ServerVersion"] == ""
    assert parse_docker_info(fixture(INFO_DOWN)[:100]) is None
