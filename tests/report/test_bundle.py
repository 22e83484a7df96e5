"""Support bundles: nothing private inside, a manifest that lists every file and redaction kind, and a
support side that rejects truncated or tampered bundles."""

from __future__ import annotations

import json
import zipfile

import pytest
from fakes.runner import FakeRunner, Reply

from gpusetup.bundle import BundleError, build_bundle, read_bundle
from gpusetup.bundle.redact import Redactor
from gpusetup.cli import main

from .sample import A100_SERIAL, A100_UUID, FIX, sample_report

PLANTED = {
    "hf-token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "aws-key": "AKIAIOSFODNN7EXAMPLE",
    "aws-secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "proxy-password": "Sup3rS3cret!",
    "username": "alice",
    "hostname": "gpu-node-17",
    "ip": "10.20.30.40",
    "mac": "3c:ec:ef:12:34:56",
    "email": "alice.liddell@example.com",
    "uuid": A100_UUID,
    "serial": A100_SERIAL,
}


def _runner() -> FakeRunner:
    r = FakeRunner()
    r.add(["nvidia-smi", "-q"], Reply.from_file(FIX / "nvidia-smi-text" / "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-q.txt"))
    r.add(["nvidia-smi", "topo", "-m"], Reply.from_file(FIX / "nvidia-smi-text" / "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-topo-m.txt"))
    r.add(["lspci"], Reply.from_file(FIX / "lspci" / "lspci-vvnn__lenovo-legion5-15ach6h__rtx-3060-mobile-ga106m+amd-cezanne-igpu__fedora40__excerpt-4-devices__linuxhw-LsPCI.txt"))
    r.add(["docker", "info"], Reply(stdout=json.dumps({"ServerVersion": "27.3.1", "Name": "gpu-node-17", "Runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}, "DefaultRuntime": "runc", "HttpsProxy": "http://bob:Sup3rS3cret!@10.20.30.40:3128"})))
    r.add(["python3"], Reply(stdout='[{"name": "torch", "version": "2.9.1+cu126", "editable_project_location": "/home/alice/src/torch"}]'))
    r.on_path.add("python3")
    return r


@pytest.fixture
def planted(tmp_path, monkeypatch):
    home = tmp_path / "gshome"
    monkeypatch.setenv("GPUSETUP_HOME", str(home))
    journal = home / "state" / "journal" / "install-20261122.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(
        "\n".join([
            json.dumps({"step": "pip", "env": {"HF_TOKEN": PLANTED["hf-token"], "HTTPS_PROXY": f"http://bob:{PLANTED['proxy-password']}@proxy.corp:3128"}}),
            f"AWS_ACCESS_KEY_ID={PLANTED['aws-key']}",
            f"boto3 used the key {PLANTED['aws-key']} from the environment",
            f"export AWS_SECRET_ACCESS_KEY={PLANTED['aws-secret']}",
            f"created /home/{PLANTED['username']}/gpusetup-env on {PLANTED['hostname']} ({PLANTED['ip']}, mac {PLANTED['mac']})",
            f"questions to {PLANTED['email']}",
        ])
        + "\n"
    )
    report, ctx = sample_report(tmp_path, _runner())
    report.machine.system.hostname = f"{PLANTED['hostname']}.lab.example.org"
    ctx.env = {}
    ctx.runner = _runner()
    return report, ctx


def test_bundle_contains_nothing_private(tmp_path, planted):
    report, ctx = planted
    red = Redactor(usernames={PLANTED["username"]}, hostnames={f"{PLANTED['hostname']}.lab.example.org"})
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3", redactor=red)
    with zipfile.ZipFile(result.path) as zf:
        names = zf.namelist()
        blob = "\n".join(zf.read(n).decode("utf-8", "replace") for n in names)
    for what, secret in PLANTED.items():
        assert secret not in blob, f"{what} leaked into the bundle"
    kinds = result.manifest["redactions"]
    for kind in ("secret", "url-credentials", "aws-key", "username", "hostname", "ipv4-address", "mac-address", "email", "gpu-uuid"):
        assert kinds.get(kind), f"manifest does not list redaction kind {kind}: {kinds}"
    # what the support engineer needs is still there
    assert "NVIDIA A100-SXM4-80GB" in blob and "535.54.03" in blob and "GPU-masked-" in blob
    assert "raw/nvidia-smi-q.txt" in names and "report.html" in names and "manifest.json" in names
    assert any(n.startswith("logs/") for n in names)
    by_path = {e["path"]: e for e in result.manifest["files"]}
    assert by_path["raw/nvidia-smi-q.txt"]["command"] == ["nvidia-smi", "-q"]
    assert by_path["raw/nvidia-smi-q.txt"]["exit_code"] == 0
    assert "duration_ms" in by_path["raw/nvidia-smi-q.txt"]
    assert all(e["why"] for e in result.manifest["files"])
    docker = json.loads(zipfile.ZipFile(result.path).read("raw/docker-info.json"))
    assert set(docker) <= {"ServerVersion", "Runtimes", "DefaultRuntime", "HttpsProxy"} - {"HttpsProxy"}


def test_no_redact_keeps_everything(tmp_path, planted):
    report, ctx = planted
    result = build_bundle(tmp_path / "b.zip", report, ctx, redact=False, python="python3")
    blob = zipfile.ZipFile(result.path).read("report.json").decode()
    assert A100_UUID in blob
    assert result.manifest["redacted"] is False


def test_size_cap_records_what_was_cut(tmp_path, planted):
    report, ctx = planted
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3", size_cap=12_000)
    assert result.manifest["cut"], "something must be cut at 12 kB"
    total = sum(e["bytes"] for e in result.manifest["files"])
    assert total <= 12_000
    assert all(c["how"] for c in result.manifest["cut"])


def test_read_bundle_round_trip_and_rejections(tmp_path, planted):
    report, ctx = planted
    good = build_bundle(tmp_path / "b.zip", report, ctx, python="python3").path
    b = read_bundle(good)
    assert b.report is not None and b.report.machine.gpus[0].name == "NVIDIA A100-SXM4-80GB"
    assert {f.id for f in b.report.findings} == {"row-remap-pending", "persistence-off"}

    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(BundleError, match="not a complete zip"):
        read_bundle(truncated)

    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(tampered, "w") as dst:
        for n in src.namelist():
            data = src.read(n)
            if n == "findings.json":
                data = data.replace(b"row", b"ROW")
            dst.writestr(n, data)
    with pytest.raises(BundleError, match="findings.json does not match its checksum"):
        read_bundle(tampered)

    not_ours = tmp_path / "other.zip"
    with zipfile.ZipFile(not_ours, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(BundleError, match="no manifest.json"):
        read_bundle(not_ours)


def test_bundle_show_collects_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["bundle", "--show"]) == 0
    out = capsys.readouterr().out
    assert "raw/nvidia-smi-q.txt" in out and "nvidia-smi -q" in out and "Nothing was collected" in out
    assert list(tmp_path.iterdir()) == []


def test_bundle_cli_writes_a_readable_zip(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "h"))
    out = tmp_path / "support.zip"
    assert main(["bundle", "-o", str(out), "--no-plan"]) == 0
    assert "Wrote" in capsys.readouterr().out
    assert read_bundle(out).manifest["redacted"] is True


def test_index_configuration_is_collected_without_credentials(tmp_path, planted, monkeypatch):
    """Support needs the index/proxy set-up; not its passwords (issue 16: pip/conda/uv config, planted secrets)."""
    report, ctx = planted
    home = tmp_path / "userhome"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nindex-url = https://carol:PipConfPa55@pypi.mirror.corp/simple\ntimeout = 60\n")
    (home / ".config" / "uv").mkdir(parents=True)
    (home / ".config" / "uv" / "uv.toml").write_text(
        '[[index]]\nname = "corp"\nurl = "https://ghp_PlantedGithubToken0123456789abc@git.corp/simple"\n')
    (home / ".condarc").write_text("channel_alias: https://dave:CondaPa55w0rd@conda.corp\nproxy_servers:\n"
                                   "  https: http://erin:CondaProxyPa55@proxy.corp:3128\n")
    monkeypatch.setenv("GS_TEST_API_TOKEN", "NoKnownShapeButSecret987")  # a token only its name betrays
    ctx.env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CONFIG_DIRS": str(tmp_path / "x"),
               "PIP_EXTRA_INDEX_URL": "https://frank:EnvPa55word@extra.corp/simple",
               "HTTPS_PROXY": "http://bob:Sup3rS3cret!@proxy.corp:3128", "NO_PROXY": "localhost,.corp",
               "UV_INDEX_URL": "https://uvuser:UvPa55word1@uv.corp/simple"}
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3",
                          redactor=Redactor(usernames={"alice"}, hostnames={"gpu-node-17"}))
    with zipfile.ZipFile(result.path) as zf:
        blob = "\n".join(zf.read(n).decode("utf-8", "replace") for n in zf.namelist())
        cfg = zf.read("raw/package-index-config.txt").decode()
    for secret in ("PipConfPa55", "ghp_PlantedGithubToken0123456789abc", "CondaPa55w0rd", "CondaProxyPa55",
                   "EnvPa55word", "Sup3rS3cret!", "UvPa55word1", "NoKnownShapeButSecret987"):
        assert secret not in blob, secret
    for kept in ("pypi.mirror.corp/simple", "timeout = 60", "git.corp/simple", "conda.corp", "proxy.corp:3128",
                 "extra.corp/simple", "NO_PROXY=localhost,.corp", "uv.corp/simple"):
        assert kept in cfg, kept


@pytest.mark.parametrize("text, gone, kept", [
    ("[ 5.1] NVRM: GPU Serial number 1324021012345 is failing", "1324021012345", "GPU Serial number"),
    ("GPU0 X node17.cluster.example.org", "cluster.example.org", "GPU0"),
    ("alice@node17:~$ nvidia-smi topo -m", "node17", "nvidia-smi topo -m"),
    ("/home/alice/miniconda3/envs/x", "alice", "/miniconda3/envs/x"),
    ("machine id 3f1c2a9e-1b2c-4d5e-8f90-0123456789ab", "3f1c2a9e-1b2c-4d5e-8f90-0123456789ab", "machine id"),
    ("inet 192.168.1.4/24 brd 192.168.1.255", "192.168.1.4", "inet"),
    ("Connecting to 10.2.3.4 port 443", "10.2.3.4", "port 443"),
    ("link/ether 3c:ec:ef:12:34:56", "3c:ec:ef:12:34:56", "link/ether"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefgh", "eyJhbGciOiJIUzI1NiJ9abcdefgh", "Authorization"),
    ("token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token"),
    ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz01@github.com/o/r", "ghp_abcdefghij", "github.com/o/r"),
    ("pip install -i https://__token__:pypi-AgEIcHlwaS5vcmcCJGIxYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo@x/simple y",
     "pypi-AgEIcHlwaS5vcmc", "x/simple"),
    ("aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
])
def test_redaction_understands_context(text, gone, kept):
    out = Redactor(usernames={"alice"}, hostnames={"node17"}).redact(text)
    assert gone not in out and kept in out, out


@pytest.mark.parametrize("text", [
    "tensorrt 8.6.1.6", "jax 0.12.0.1", "nvidia-tensorrt==8.6.1.6", "ii  libnvinfer8  8.6.1.6-1+cuda12.0  amd64",
    "tensorrt                  8.6.1.6            pypi_0    pypi", "Version: 8.6.1.6", "cuDNN 9.1.0.70",
    "Driver Version: 535.104.05   CUDA Version: 12.2", "0000:01:00.0", "torch==2.9.1+cu126",
])
def test_redaction_never_touches_versions(text):
    assert Redactor(usernames={"alice"}, hostnames={"node17"}).redact(text) == text


def test_pip_list_of_this_python_is_read_in_process(tmp_path, planted):
    """For gpusetup's own interpreter the package list comes from the installed metadata, not a pip run."""
    from importlib import metadata

    report, ctx = planted
    result = build_bundle(tmp_path / "b.zip", report, ctx, redact=False)
    listed = {d["name"].lower(): d["version"] for d in json.loads(zipfile.ZipFile(result.path).read("raw/pip-list.json"))}
    assert listed["packaging"] == metadata.version("packaging")
    assert listed["jsonschema"] == metadata.version("jsonschema")
    entry = next(e for e in result.manifest["files"] if e["path"] == "raw/pip-list.json")
    assert "command" not in entry
    assert not any("pip" in " ".join(c) for c in ctx.runner.calls), "pip was started for this interpreter"
