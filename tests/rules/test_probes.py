"""The two probes the rules needed: kernel log lines and distribution package state (fake runner, fake root)."""

from __future__ import annotations

from pathlib import Path

from fakes.runner import FakeRunner, Reply

from gpusetup.model import KernelModule, Machine
from gpusetup.probe import ProbeContext, kernel_log, packages
from gpusetup.rules import evaluate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DMESG = FIXTURES / "dmesg"


def ctx(runner: FakeRunner, root: Path | None = None) -> ProbeContext:
    return ProbeContext(runner=runner, root=root or Path("/nonexistent-root"), os_name="linux", timeout=5.0)


def test_kernel_log_keeps_only_gpu_lines_from_real_dmesg() -> None:
    text = (DMESG / "dmesg-grep-excerpt__legion5-rtx-3060-mobile-nouveau-d3cold-resume-failure__fedora38-6.2.13__"
            "linuxhw-Dmesg.txt").read_text(encoding="utf-8")
    m = Machine()
    kernel_log.probe(ctx(FakeRunner().add(["dmesg"], Reply(text))), m)
    assert m.kernel_log and all(kernel_log.PATTERN.search(ln) for ln in m.kernel_log)
    assert not any("ACPI Warning" in ln for ln in m.kernel_log)  # unrelated lines are dropped
    assert m.system.evidence[-1].ok


def test_kernel_log_falls_back_to_journalctl_and_feeds_the_rules() -> None:
    xid = (DMESG / "xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt").read_text(encoding="utf-8")
    runner = (FakeRunner()
              .add(["dmesg"], Reply("", "dmesg: read kernel buffer failed: Operation not permitted", 1))
              .add(["journalctl"], Reply(xid)))
    m = Machine()
    kernel_log.probe(ctx(runner), m)
    assert [c[0] for c in runner.calls] == ["dmesg", "journalctl"]
    assert [f.catalogue for f in evaluate(m)] == ["F14"]


def test_kernel_log_unreadable_is_evidence_not_an_exception() -> None:
    m = Machine()
    kernel_log.probe(ctx(FakeRunner().add(["dmesg"], Reply.hung(5.0))), m)
    ev = m.system.evidence[-1]
    assert not ev.ok and "sudo" in (ev.error or "") and m.kernel_log == []


def test_kernel_log_is_bounded() -> None:
    lines = "\n".join(f"[{i}.0] NVRM: Xid (PCI:0000:01:00): 13, pid={i}, Graphics Exception" for i in range(1000))
    kept = kernel_log.filter_lines(lines)
    assert len(kept) == kernel_log.MAX_LINES and "pid=0," in kept[0] and "pid=999," in kept[-1]


def test_packages_from_real_dpkg_output_and_apt_history(tmp_path: Path) -> None:
    dpkg = (FIXTURES / "linux-packages" /
            "dpkg-l-grep-nvidia__ubuntu-24.04__580-open-half-configured-iF-iU__mxochicale-code.txt").read_text()
    # The apt history entry quoted in the recorded report of lyulyul/shine-cluster#50.
    hist_src = (FIXTURES / "recorded-issues" / "F09__unattended-upgrade-apt-history__shine-cluster-50.txt").read_text()
    entry = "\n".join(ln for ln in hist_src.splitlines() if ln.startswith(("Start-Date", "Commandline", "Upgrade",
                                                                            "End-Date")))
    (tmp_path / "var/log/apt").mkdir(parents=True)
    (tmp_path / "var/log/apt/history.log").write_text("Start-Date: 2021-06-01  06:00:00\nCommandline: apt upgrade\n"
                                                      "Upgrade: bash:amd64 (5.0-6, 5.0-7)\nEnd-Date: x\n\n" + entry)
    runner = FakeRunner().add(["dpkg", "-l"], Reply(dpkg))
    m = Machine()
    packages.probe(ctx(runner, tmp_path), m)
    assert "iF  nvidia-dkms-580-open  580.95.05-0ubuntu1" in m.packages
    assert not any("screen-resolution-extra" in p for p in m.packages)  # not part of the NVIDIA/CUDA stack
    assert any("unattended-upgrade" in ln for ln in m.package_history)
    assert not any("bash" in ln for ln in m.package_history)
    assert any(f.catalogue == "F09" for f in evaluate(m))


def test_dkms_build_errors_only_when_the_module_is_not_loaded(tmp_path: Path) -> None:
    log = tmp_path / "var/lib/dkms/nvidia/470.57.02/build/make.log"
    log.parent.mkdir(parents=True)
    log.write_text((FIXTURES / "recorded-issues" / "F06__dkms-make-log-errors-kernel-5.x__linux-surface-573.txt")
                   .read_text(encoding="utf-8"))
    m = Machine()
    m.driver.modules.append(KernelModule("nvidia", loaded=False, available_for_running_kernel=False))
    packages.probe(ctx(FakeRunner(), tmp_path), m)
    assert m.messages and all(x.startswith("DKMS make.log") for x in m.messages)
    assert [f.catalogue for f in evaluate(m)] == ["F06"]
    loaded = Machine()
    loaded.driver.modules.append(KernelModule("nvidia", loaded=True))
    packages.probe(ctx(FakeRunner(), tmp_path), loaded)
    assert loaded.messages == []


def test_probes_do_nothing_off_linux() -> None:
    m = Machine()
    runner = FakeRunner().add(["dmesg"], Reply("NVRM: Xid (PCI:0000:01:00): 79"))
    c = ProbeContext(runner=runner, os_name="windows")
    kernel_log.probe(c, m)
    packages.probe(c, m)
    assert runner.calls == [] and m.kernel_log == []


def test_journal_host_name_is_dropped() -> None:
    kept = kernel_log.filter_lines("[  846.012345] myhost kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed!")
    assert kept == ["[  846.012345] NVRM: GPU 0000:01:00.0: RmInitAdapter failed!"]
