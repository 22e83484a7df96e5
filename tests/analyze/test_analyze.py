"""`gpusetup analyze`: recognising real inputs, extracting their facts, merging several inputs, the bundle
hook, the CLI's JSON shape and exit codes. Inputs are the real recorded outputs in tests/fixtures."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

from gpusetup.analyze import InputPart, analyze_parts, analyze_paths, analyze_text, register_reader
from gpusetup.analyze import readers as readers_mod
from gpusetup.cli import main
from gpusetup.model import Driver, Gpu, Machine, Reading, Report, to_dict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CE = FIXTURES / "collect-env"
RI = FIXTURES / "recorded-issues"
RTX3090 = CE / "ubuntu-22.04__3x-rtx-3090__driver-515.65.01__torch-1.12.1+cu116__pytorch-issue-86556.txt"


def test_collect_env_facts() -> None:
    a = analyze_paths([str(RTX3090)])
    m = a.machine
    assert a.inputs[0].kinds[0] == "collect-env"
    assert m.driver.version == "515.65.01"
    assert [g.name for g in m.gpus] == ["NVIDIA GeForce RTX 3090"] * 3
    torch = m.python_envs[0].frameworks[0]
    assert (torch.name, torch.version, torch.build_cuda, torch.gpu_available) == ("torch", "1.12.1+cu116", "11.6",
                                                                                   True)
    assert m.system.os == "linux" and m.system.distro_id == "ubuntu"
    assert m.cuda.toolkits[0].version == "11.6.124"
    assert a.findings == []


def test_windows_collect_env_with_garbled_os_name() -> None:
    path = CE / ("windows10-pro-mojibake-os-name__gtx-1080-ti__driver-411.31__torch-1.3.0a0-cuda10.0__"
                 "pytorch-issue-28360.txt")
    m = analyze_paths([str(path)]).machine
    assert m.system.os == "windows" and m.driver.version == "411.31"
    assert m.gpus[0].name == "GeForce GTX 1080 Ti"


@pytest.mark.parametrize(
    ("rel", "kind", "driver"),
    [
        ("nvidia-smi-xml/geforce-rtx-4090__535.86.05__netdata.xml", "nvidia-smi-xml", "535.86.05"),
        ("nvidia-smi-text/tesla-t4__535.86.10__linux__nvidia-smi__old-table-layout__nvidia-cloud-native-docs.txt",
         "nvidia-smi-table", "535.86.10"),
        ("nvidia-smi-text/h100-80gb-hbm3__590.48.01__linux__nvidia-smi-q.txt", "nvidia-smi-q", "590.48.01"),
    ],
)
def test_nvidia_smi_formats_reuse_the_probe_parsers(rel: str, kind: str, driver: str) -> None:
    a = analyze_paths([str(FIXTURES / rel)])
    assert kind in a.inputs[0].kinds
    assert a.machine.driver.version == driver
    assert a.machine.gpus and a.machine.gpus[0].vendor == "nvidia"


def test_message_mixing_prose_table_and_error() -> None:
    a = analyze_paths([str(RI / "F01__smi-515-plus-cudaErrorInsufficientDriver__bladebit-431.txt")])
    assert "nvidia-smi-table" in a.inputs[0].kinds
    f = a.findings[0]
    assert f.catalogue == "F01"
    assert any("cudaErrorInsufficientDriver" in e for e in f.evidence)
    assert any("515.48.07" in e for e in f.evidence)


def test_several_inputs_are_merged_into_one_machine() -> None:
    a = analyze_paths([str(RTX3090), str(FIXTURES / "dmesg" / "xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt")])
    assert len(a.inputs) == 2
    assert [f.catalogue for f in a.findings] == ["F14"]
    assert len(a.machine.gpus) == 3 and a.machine.driver.version == "515.65.01"


def test_our_own_json_report_is_read_as_a_machine(tmp_path: Path) -> None:
    machine = Machine(gpus=[Gpu(vendor="nvidia", index=0, name="NVIDIA GeForce RTX 3090")],
                      driver=Driver(versions=[Reading("550.120", "/proc/driver/nvidia/version"),
                                              Reading("580.95.05", "nvml")]))
    path = tmp_path / "report.json"
    path.write_text(json.dumps(to_dict(Report(machine=machine))), encoding="utf-8")
    a = analyze_paths([str(path)])
    assert "gpusetup-report" in a.inputs[0].kinds
    assert a.findings[0].catalogue == "F09"


def test_broken_json_is_analysed_as_text_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"machine": {"gpus": "not a list"}}', encoding="utf-8")
    a = analyze_paths([str(path)])
    assert a.inputs[0].error is None and a.inputs[0].notes


def test_zip_members_are_analysed(tmp_path: Path) -> None:
    z = tmp_path / "from-user.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(RTX3090, "collect_env.txt")
        zf.write(FIXTURES / "dmesg" / "xid-63-row-remapper__a100__ml-engineering.txt", "logs/dmesg.txt")
        zf.writestr("screenshot.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    a = analyze_paths([str(z)])
    assert [i.name for i in a.inputs] == ["from-user.zip:collect_env.txt", "from-user.zip:logs/dmesg.txt"]
    assert a.findings[0].catalogue == "F16"


def test_bundle_hook_lets_a_reader_hand_over_a_machine(tmp_path: Path) -> None:
    def read(name: str, data: bytes) -> list[InputPart]:
        m = Machine(driver=Driver(nvml_error="GPU access blocked by the operating system"))
        m.system.wsl = True
        return [InputPart(f"{name}:machine.json", machine=m, kinds=["support-bundle"])]

    register_reader("test-bundle", lambda name, data: data.startswith(b"TESTBUNDLE"), read)
    try:
        p = tmp_path / "b.bin"
        p.write_bytes(b"TESTBUNDLE\x00\x01")
        a = analyze_paths([str(p)])
        assert a.inputs[0].kinds[0] == "support-bundle" and a.findings[0].catalogue == "F34"
    finally:
        readers_mod._READERS[:] = [r for r in readers_mod._READERS if r.name != "test-bundle"]


def test_utf16_powershell_output_is_decoded(tmp_path: Path) -> None:
    p = tmp_path / "ps.txt"
    p.write_bytes(b"\xff\xfe" + (RI / "F34__wsl-nvidia-utils-510-gpu-access-blocked__wsl-9166.txt").read_text()
                  .encode("utf-16-le"))
    assert analyze_paths([str(p)]).findings[0].catalogue == "F34"


def test_partial_facts_say_what_is_missing() -> None:
    a = analyze_text("RuntimeError: CUDA error: uncorrectable ECC error encountered\n")
    d = a.to_dict()
    assert d["findings"][0]["catalogue"] == "F16"
    assert any("nvidia-smi" in x for x in d["missing"])


def test_truncated_and_garbled_inputs_never_raise() -> None:
    for path in sorted(RI.glob("F*.txt"))[::3] + [RTX3090]:
        text = path.read_text(encoding="utf-8")
        for cut in (len(text) // 3, len(text) // 2, len(text) - 7):
            analyze_parts([InputPart("cut", text[:cut])])
            analyze_parts([InputPart("garbled", text[cut:] + "\x00\ufffd<nvidia_smi_log><gpu" + text[:cut])])


# ----------------------------------------------------------------------------------------------- CLI

FINDING_KEYS = {"id", "catalogue", "severity", "title", "detail", "fix", "evidence"}


def test_cli_json_shape_and_error_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["analyze", str(RI / "F14__fallen-off-bus-without-xid__nvsentinel-155.txt"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 2
    assert set(out) >= {"inputs", "facts", "findings"}
    assert set(out["findings"][0]) >= FINDING_KEYS and out["findings"][0]["catalogue"] == "F14"


def test_cli_text_quotes_evidence_and_warning_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["analyze", str(RI / "F13__gcc-later-than-8-unsupported__tkdnn-134.txt")])
    text = capsys.readouterr().out
    assert rc == 1
    assert "F13" in text and "Evidence:" in text and "> /usr/local/cuda/include/crt/host_config.h" in text
    assert "Not in the input" in text


def test_cli_healthy_input_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(RTX3090)]) == 0
    assert "No known problem" in capsys.readouterr().out


def test_cli_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = (RI / "F03__cuda-runtime-error-802__pytorch-35710.txt").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["analyze", "-", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"][0]["name"] == "stdin" and out["findings"][0]["catalogue"] == "F03"


@pytest.mark.parametrize("kind", ["missing", "directory", "binary"])
def test_cli_unreadable_input_exits_3_and_keeps_the_rest(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    if kind == "directory":
        bad.mkdir()
    elif kind == "binary":
        bad.write_bytes(bytes(range(256)) * 64)
    rc = main(["analyze", str(bad), str(RI / "F12__rminitadapter-failed-raspberry-pi__raspberry-pi-pcie-devices-26.txt")])
    cap = capsys.readouterr()
    assert rc == 3
    assert "F12" in cap.out  # the readable input was still analysed
    assert "gpusetup analyze:" in cap.err and str(bad) in cap.err


def test_cli_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "result.json"
    rc = main(["analyze", str(RI / "F30__nvidia-container-cli-libnvidia-ml-rocky9__libnvidia-container-231.txt"),
               "--json", "-o", str(out)])
    assert rc == 2 and json.loads(out.read_text())["findings"][0]["catalogue"] == "F30"


def test_gzip_input_such_as_nvidia_bug_report(tmp_path: Path) -> None:
    import gzip

    p = tmp_path / "nvidia-bug-report.log.gz"
    p.write_bytes(gzip.compress((FIXTURES / "dmesg" / "xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt")
                                .read_bytes()))
    a = analyze_paths([str(p)])
    assert a.inputs[0].name == "nvidia-bug-report.log" and a.findings[0].catalogue == "F14"
    bad = tmp_path / "broken.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    assert analyze_paths([str(bad)]).inputs[0].error


def test_kernel_module_load_line_against_smi_driver_version() -> None:
    """The module version from the kernel log and the user-space version from nvidia-smi, pasted together."""
    dmesg = (RI / "F14__fallen-off-bus-without-xid__nvsentinel-155.txt").read_text(encoding="utf-8")
    loaded = [ln for ln in dmesg.splitlines() if "NVRM: loading" in ln]  # module 570.158.01
    smi = (FIXTURES / "nvidia-smi-xml" / "geforce-rtx-3060__570.124.04__telegraf.xml").read_text(encoding="utf-8")
    a = analyze_parts([InputPart("dmesg.txt", "\n".join(loaded)), InputPart("nvidia-smi.xml", smi)])
    f9 = [f for f in a.findings if f.catalogue == "F09"]
    assert f9 and "570.158.01" in f9[0].title and "570.124.04" in f9[0].title


def test_any_text_is_analysed_without_raising() -> None:
    """Property: whatever text arrives (random, or slices and splices of real reports), analyze returns."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    corpus = [p.read_text(encoding="utf-8") for p in sorted(RI.glob("F*.txt"))] + [RTX3090.read_text()]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(0, len(corpus) - 1), st.integers(0, 4000), st.integers(0, 4000), st.text(max_size=200))
    def check(i: int, a: int, b: int, noise: str) -> None:
        text = corpus[i]
        lo, hi = sorted((a % (len(text) + 1), b % (len(text) + 1)))
        result = analyze_parts([InputPart("x", text[lo:hi] + noise + text[:lo])])
        assert result.to_dict()["inputs"][0]["name"] == "x"

    check()


def test_own_report_text_is_not_grepped_as_a_log(tmp_path: Path) -> None:
    """A report's evidence names places searched ("/usr/lib/wsl/lib") — that must not read as WSL symptoms."""
    from gpusetup.model import Evidence, Library

    m = Machine()
    m.system.os = "linux"
    m.cuda.libraries.append(Library("libcudart", "13", "/usr/local/cuda-13.0/lib/libcudart.so.13", "ldconfig"))
    m.driver.evidence.append(Evidence("libcuda", ok=False, error="libcuda.so.1 not found in /usr/lib/wsl/lib, "
                                      "/usr/lib/x86_64-linux-gnu"))
    p = tmp_path / "r.json"
    p.write_text(json.dumps(to_dict(Report(machine=m))), encoding="utf-8")
    a = analyze_paths([str(p)])
    assert a.inputs[0].kinds == ["gpusetup-report"] and a.findings == []
