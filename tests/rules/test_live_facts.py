"""Live facts diagnose reads itself and the findings they feed (issue #15, "Live facts too").

Processes holding GPU memory (F36), persistence mode (F51), MIG mode current/pending and MIG without instances
(F47), Xid lines from the kernel log (F14/F42/F43) and the PRIME profile (F38). The fakes are fed real
recorded outputs: nvidia-smi XML and nvidia_gpu_exporter captures (tests/fixtures/nvidia-smi-*), the DCGM Xid
strings (tests/fixtures/dmesg). Where no recording shows a state, the test says so and changes one model fact
of a recorded GPU (model values, never tool output).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from types import SimpleNamespace

from fakes.nvml import FakeNvml
from fakes.runner import FakeRunner, Reply

from gpusetup.model import Gpu, GpuProcess, Machine, PciInfo, Report, Severity, from_dict, to_dict
from gpusetup.probe import ProbeContext, driver, kernel_log
from gpusetup.probe.nvml import Nvml
from gpusetup.probe.nvml import probe as nvml_probe
from gpusetup.probe.smi import parse_smi_q, split_capture_sections
from gpusetup.report.text import render_text
from gpusetup.rules import evaluate

FIX = Path(__file__).resolve().parents[1] / "fixtures"
XML = FIX / "nvidia-smi-xml"
CAPTURES = FIX / "nvidia-smi-text" / "full-captures"
H100 = CAPTURES / "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01__nvidia_gpu_exporter.txt"
H100_MIG = CAPTURES / "linux-x86_64__nvidia-h100-mig__590.48.01__nvidia_gpu_exporter.txt"
A10G = XML / "a10g__515.105.01__telegraf.xml"
T4 = XML / "tesla-t4__515.105.01__telegraf.xml"
MIG = XML / "a100-sxm4-40gb-mig__510.47.03__netdata.xml"
WIN = XML / "geforce-rtx-2080-windows__516.59__netdata.xml"
LAPTOP = XML / "geforce-rtx-3060-laptop__515.65.01__netdata.xml"
XIDS = FIX / "dmesg" / "nvrm-xid-lines-119-43-79__dcgm-unit-test-strings.txt"


def live(fake: FakeNvml, os_name: str = "linux") -> Machine:
    m = Machine()
    m.system.os = os_name
    nvml_probe(ProbeContext(nvml_factory=lambda: fake, only=("nvml",), os_name=os_name), m)
    return m


def by_code(m: Machine, code: str) -> list:
    return [f for f in evaluate(m) if f.catalogue == code]


# ------------------------------------------------------------------------------ processes (F36)


def test_processes_and_their_memory_from_the_recorded_h100_under_load() -> None:
    m = live(FakeNvml.from_capture(H100, state="load"))
    (g,) = m.nvidia_gpus
    # the capture's `nvidia-smi -q` Processes section: gpu_burn 15690 MiB, two memhog 2566 + 1542 MiB
    assert [(p.pid, p.name, p.used_mib, p.kind) for p in g.process_list] == [
        (11345, "./gpu_burn", 15690, "C"), (11327, "/root/tools/memhog", 2566, "C"),
        (11328, "/root/tools/memhog", 1542, "C")]
    assert g.processes == 3
    text = render_text(Report(machine=m))
    assert "processes              11345 ./gpu_burn 15.3 GiB, 11327 /root/tools/memhog 2.5 GiB" in text
    # 19.8 GiB of 79.6 GiB is a quarter of the card, not "most of it": no finding
    assert not [f for f in evaluate(m) if f.id == "gpu-memory-held-by-running-processes"]


def test_idle_capture_lists_no_process() -> None:
    g = live(FakeNvml.from_capture(H100, state="idle")).nvidia_gpus[0]
    assert g.process_list == [] and g.processes == 0


def test_xml_processes_keep_unknown_sizes_unknown() -> None:
    (g,) = live(FakeNvml.from_smi_xml(A10G)).nvidia_gpus
    assert [(p.pid, p.name, p.used_mib, p.kind) for p in g.process_list] == [(725, "/usr/lib/xorg/Xorg", 22, "G")]
    win = live(FakeNvml.from_smi_xml(WIN), os_name="windows").nvidia_gpus[0]
    assert win.process_list and all(p.used_mib is None for p in win.process_list)  # WDDM: used_memory N/A


def test_default_table_processes_are_read_too() -> None:
    # `nvidia-smi` default tables as users paste them (analyze): the recorded H100 load table and a Windows one
    from gpusetup.probe.smi import parse_smi_table

    text = (FIX / "nvidia-smi-text" / "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-load.txt").read_text(encoding="utf-8")
    (g,) = parse_smi_table(text).gpus
    assert [(p.pid, p.name, p.used_mib) for p in g.process_list] == [
        (11345, "./gpu_burn", 15690), (11327, "/root/tools/memhog", 2566), (11328, "/root/tools/memhog", 1542)]
    win = (FIX / "nvidia-smi-text" / "geforce-rtx-2080-super__591.86__windows__nvidia-smi-load.txt").read_text(encoding="utf-8")
    (w,) = parse_smi_table(win).gpus
    assert len(w.process_list) == w.processes and all(p.used_mib is None for p in w.process_list)
    assert ("C+G", r"C:\Windows\explorer.exe") in {(p.kind, p.name) for p in w.process_list}


def test_processes_holding_most_of_the_card_are_explained() -> None:
    # No recording shows another process holding most of a card (the heaviest, the H100 load capture, holds a
    # quarter), so the recorded H100 keeps its real processes and its memory total, and only the size of the
    # gpu_burn process is raised in the model.
    m = live(FakeNvml.from_capture(H100, state="load"))
    g = m.nvidia_gpus[0]
    g.process_list[0].used_mib = 60000
    g.memory_free_mib = 81559 - 60000 - 2566 - 1542 - 479
    (f,) = [f for f in evaluate(m) if f.id == "gpu-memory-held-by-running-processes"]
    assert f.catalogue == "F36" and f.severity == Severity.INFO  # 16.6 GiB still free: worth knowing only
    assert f.title == "Running programs hold most of GPU 0's memory right now (62.61 GiB of 79.65 GiB)"
    assert any("pid 11345 ./gpu_burn holds 60000 MiB" in e for e in f.evidence)
    assert "kill <pid>" in f.fix and "CUDA_VISIBLE_DEVICES" in f.fix
    g.memory_free_mib = 500  # and when almost nothing is left, a new program will fail: a warning
    (f,) = [f for f in evaluate(m) if f.id == "gpu-memory-held-by-running-processes"]
    assert f.severity == Severity.WARNING


def test_out_of_memory_message_names_the_processes_diagnose_saw() -> None:
    # the F36 excerpt (CycleGAN #962) analysed on a machine whose driver lists the recorded H100 processes
    m = live(FakeNvml.from_capture(H100, state="load"))
    m.messages = (FIX / "recorded-issues" / "F36__oom-2.75-of-10.76-gib-held-by-pytorch-rest-elsewhere__cyclegan-962.txt"
                  ).read_text(encoding="utf-8").splitlines()
    (f,) = [f for f in evaluate(m) if f.id == "gpu-memory-held-by-other-process"]
    assert any("pid 11345 ./gpu_burn holds 15690 MiB now" in e for e in f.evidence)


def test_real_facade_reads_processes_names_and_not_available_sizes() -> None:
    # a stub pynvml answering with the recorded H100 load processes (pid, bytes) and, as on Windows WDDM,
    # NVML_VALUE_NOT_AVAILABLE for a graphics process
    procs = [SimpleNamespace(pid=11327, usedGpuMemory=2566 * 2**20), SimpleNamespace(pid=11345, usedGpuMemory=15690 * 2**20)]
    names = {11327: b"/root/tools/memhog", 11345: b"./gpu_burn", 725: b"/usr/lib/xorg/Xorg"}
    lib = SimpleNamespace(
        nvmlDeviceGetComputeRunningProcesses_v3=lambda h: procs,
        nvmlDeviceGetGraphicsRunningProcesses_v3=lambda h: [SimpleNamespace(pid=725, usedGpuMemory=2**64 - 1),
                                                            SimpleNamespace(pid=11345, usedGpuMemory=15690 * 2**20)],
        nvmlSystemGetProcessName=lambda pid: names[pid],
        nvmlDeviceGetMigMode=lambda h: (0, 1),
    )
    nv = Nvml(lib=lib)
    got = nv.running_processes("h0")
    assert [(p.pid, p.name, p.used_mib, p.kind) for p in got or []] == [
        (11345, "./gpu_burn", 15690, "C+G"), (11327, "/root/tools/memhog", 2566, "C"), (725, "/usr/lib/xorg/Xorg", None, "G")]
    assert (nv.mig_mode("h0"), nv.mig_mode_pending("h0")) == (False, True)


def test_process_list_round_trips_through_the_report_json() -> None:
    m = live(FakeNvml.from_capture(H100, state="load"))
    back = from_dict(Machine, to_dict(m))
    assert back.nvidia_gpus[0].process_list[0] == GpuProcess(11345, "./gpu_burn", 15690, "C")


# ------------------------------------------------------------------------------ persistence (F51)


def test_container_toolkit_timeout_names_persistence_and_the_live_state() -> None:
    # nvidia-docker #723 (text) on a machine whose recorded A10G has persistence Disabled
    m = live(FakeNvml.from_smi_xml(A10G))
    m.messages = (FIX / "recorded-issues" / "F51__container-cli-driver-error-timed-out-persistence-disabled__"
                  "nvidia-docker-723.txt").read_text(encoding="utf-8").splitlines()
    (f,) = by_code(m, "F51")
    assert f.severity == Severity.ERROR
    assert any("nvidia-container-cli" in e for e in f.evidence)  # the quoted line (shortened in evidence)
    assert "GPU 0 (NVIDIA A10G): persistence mode Disabled" in f.evidence


def test_data_centre_gpu_without_persistence_gets_the_exact_fix() -> None:
    for path in (A10G, T4):  # both recordings: <persistence_mode>Disabled</persistence_mode>
        m = live(FakeNvml.from_smi_xml(path))
        (f,) = by_code(m, "F51")
        assert f.severity == Severity.INFO and f.id == "persistence-mode-off"
        assert "sudo systemctl enable --now nvidia-persistenced" in f.fix
        assert f.evidence == [f"GPU 0 ({m.nvidia_gpus[0].name}): persistence mode Disabled"]


def test_persistence_is_not_a_finding_where_it_does_not_matter() -> None:
    assert not by_code(live(FakeNvml.from_smi_xml(LAPTOP)), "F51")  # GeForce laptop, Disabled: fine
    assert not by_code(live(FakeNvml.from_capture(H100)), "F51")  # recorded Enabled
    assert not by_code(live(FakeNvml.from_smi_xml(WIN), os_name="windows"), "F51")  # N/A on Windows
    wsl = live(FakeNvml.from_smi_xml(T4))
    wsl.system.wsl = True
    assert not by_code(wsl, "F51")


# ------------------------------------------------------------------------------ MIG (F47)


def test_mig_current_and_pending_are_read_from_every_source() -> None:
    (g,) = live(FakeNvml.from_smi_xml(MIG)).nvidia_gpus
    assert (g.mig_mode, g.mig_mode_pending) == ("Enabled", "Enabled") and len(g.mig_devices) == 2
    q = split_capture_sections(H100_MIG.read_text(encoding="utf-8"))["idle :: query (-q)"]
    snap = parse_smi_q(q)
    assert (snap.gpus[0].mig_mode, snap.gpus[0].mig_mode_pending) == ("Enabled", "Enabled")
    # a recorded MIG GPU with instances and nothing pending: no F47 finding
    assert not by_code(live(FakeNvml.from_smi_xml(MIG)), "F47")


def test_pending_mig_change_says_reset() -> None:
    # No recording has current ≠ pending; the recorded A100 (MIG Enabled) gets pending "Disabled" in the model,
    # as after `nvidia-smi -i 0 -mig 0` without a reset.
    fake = FakeNvml.from_smi_xml(MIG)
    fake.devices[0].gpu.mig_mode_pending = "Disabled"
    m = live(fake)
    assert m.nvidia_gpus[0].mig_mode_pending == "Disabled"
    (f,) = by_code(m, "F47")
    assert f.id == "mig-mode-change-pending" and f.severity == Severity.WARNING
    assert "changed to Disabled but is still Enabled" in f.title
    assert "sudo nvidia-smi -i 0 -r" in f.fix
    assert f.evidence == ["GPU 0 (NVIDIA A100-SXM4-40GB): MIG mode current Enabled, pending Disabled"]
    assert "MIG after reset" in render_text(Report(machine=m))


def test_mig_enabled_without_instances_from_live_facts() -> None:
    # No recording shows MIG on with no instance; the recorded A100 keeps MIG Enabled with its instances removed.
    fake = FakeNvml.from_smi_xml(MIG)
    fake.devices[0].mig = []
    m = live(fake)
    (f,) = by_code(m, "F47")
    assert f.id == "mig-enabled-without-instances" and f.severity == Severity.WARNING
    assert f.evidence == ["GPU 0 (NVIDIA A100-SXM4-40GB): MIG mode Enabled, no MIG devices"]


def test_a_table_cut_before_its_mig_section_is_not_mig_without_instances() -> None:
    from gpusetup.probe.smi import parse_smi_table

    text = (FIX / "nvidia-smi-text" / "h100-mig__590.48.01__linux__nvidia-smi.txt").read_text(encoding="utf-8")
    head = text[: text.index("MIG devices")]  # the recorded table as a user might paste its first part
    m = Machine()
    m.gpus = parse_smi_table(head).gpus
    assert m.gpus[0].mig_mode == "Enabled" and not m.gpus[0].mig_devices
    assert not by_code(m, "F47")
    m.gpus = parse_smi_table(text).gpus  # the whole table lists the instances
    assert m.gpus[0].mig_devices and not by_code(m, "F47")


# ------------------------------------------------------------------------------ Xid (F14, F42, F43)


def test_xid_lines_read_live_become_their_findings_with_the_lines() -> None:
    text = XIDS.read_text(encoding="utf-8")
    runner = (FakeRunner()
              .add(["dmesg"], Reply("", "dmesg: read kernel buffer failed: Operation not permitted", 1))
              .add(["journalctl"], Reply(text)))
    m = Machine()
    kernel_log.probe(ProbeContext(runner=runner, root=Path("/nonexistent-root"), os_name="linux", timeout=5.0), m)
    assert runner.calls[-1][:4] == ["journalctl", "-k", "-b", "--no-pager"]
    found = {f.catalogue: f for f in evaluate(m)}
    lines = text.splitlines()
    assert lines[0] in found["F43"].evidence  # Xid 119: GSP timeout
    assert lines[1] in found["F42"].evidence  # Xid 43: a program's channel stopped
    assert lines[2] in found["F14"].evidence  # Xid 79: fallen off the bus
    assert found["F14"].severity == Severity.ERROR


# ------------------------------------------------------------------------------ PRIME (F38)


def _prime_root(tmp_path: Path, content: str | None, blacklist: bool = False) -> Path:
    # /etc/prime-discrete as canonical/nvidia-prime's prime-select writes it (PrimeSelect._write_profile:
    # "on" for nvidia, "on-demand", "off" for intel, each with a newline; _get_profile reads anything else as
    # intel), https://github.com/canonical/nvidia-prime/blob/587c5012be9dddcc17ab4d958f10a24fa3342b4d/prime-select
    if content is not None:
        (tmp_path / "etc").mkdir(parents=True, exist_ok=True)
        (tmp_path / "etc" / "prime-discrete").write_text(content, encoding="utf-8")
    if blacklist:
        (tmp_path / "lib" / "modprobe.d").mkdir(parents=True, exist_ok=True)
        (tmp_path / "lib" / "modprobe.d" / "blacklist-nvidia.conf").write_text("alias nvidia off\n", encoding="utf-8")
    return tmp_path


def _laptop(tmp_path: Path) -> Machine:
    m = Machine()
    m.system.os = "linux"
    # the GPU as the PCI probe sees it with no driver bound (tests/fixtures/lspci: Legion 5, GA106M 10de:2560)
    m.gpus.append(Gpu(vendor="nvidia", pci=PciInfo(address="0000:01:00.0", vendor_id="10de", device_id="2560")))
    driver.probe(ProbeContext(runner=FakeRunner(), root=tmp_path, os_name="linux"), m)
    return m


def test_prime_profile_is_read_as_prime_select_reads_it(tmp_path: Path) -> None:
    assert [driver.prime_profile(t) for t in ("on\n", "on-demand\n", "off\n", "garbage")] == [
        "nvidia", "on-demand", "intel", "intel"]
    m = _laptop(_prime_root(tmp_path, "on-demand\n"))
    assert m.system.prime_profile == "on-demand" and not by_code(m, "F38")
    assert "PRIME profile" in render_text(Report(machine=m))


def test_prime_intel_profile_is_f38_with_the_file_as_evidence(tmp_path: Path) -> None:
    m = _laptop(_prime_root(tmp_path, "off\n", blacklist=True))
    assert m.system.prime_profile == "intel"
    (f,) = by_code(m, "F38")
    assert f.severity == Severity.ERROR and "sudo prime-select on-demand" in f.fix
    assert any("/etc/prime-discrete: 'off'" in e and "blacklist-nvidia.conf present" in e for e in f.evidence)


def test_markdown_and_html_show_the_live_facts(tmp_path: Path) -> None:
    from gpusetup.report import render

    m = live(FakeNvml.from_capture(H100, state="load"))
    m.system.prime_profile = driver.prime_profile("on-demand\n")
    for fmt in ("markdown", "html"):
        out = render(Report(machine=m), fmt)
        assert "PRIME profile" in out and "on-demand" in out
        assert "11345 ./gpu_burn (15690 MiB)" in out


def test_no_prime_file_no_profile(tmp_path: Path) -> None:
    m = _laptop(_prime_root(tmp_path, None))
    assert m.system.prime_profile is None and not by_code(m, "F38")
    big = copy.deepcopy(m)
    big.gpus = []
    big.system.prime_profile = "intel"
    assert not by_code(big, "F38")  # intel profile on a machine with no NVIDIA GPU: nothing to say


# ------------------------------------------------------------------------------ speed


def test_live_checks_stay_fast() -> None:
    m = live(FakeNvml.from_capture(H100, state="load"))
    m.gpus = [copy.deepcopy(m.gpus[0]) for _ in range(8)]
    start = time.perf_counter()
    for _ in range(20):
        m.kernel_log = [f"line {_}"]  # new text each round, so the rules' text cache is rebuilt
        evaluate(m)
    assert (time.perf_counter() - start) / 20 < 0.25
