"""nvidia-smi parsers on every recorded fixture, the fallback probe, and garbage in → clean error out."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fakes.runner import FakeRunner, Reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusetup.model import Evidence, Gpu, Machine, PciInfo
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.smi import (
    SmiSnapshot,
    SmiVersion,
    gpus_from_csv,
    parse_nvml_library_version,
    parse_smi_csv,
    parse_smi_failure,
    parse_smi_list,
    parse_smi_q,
    parse_smi_table,
    parse_smi_version,
    parse_smi_xml,
    split_capture_sections,
    split_pci_device_id,
)
from gpusetup.probe.smi import probe as smi_probe

FIX = Path(__file__).resolve().parents[2] / "fixtures"
XML = FIX / "nvidia-smi-xml"
TXT = FIX / "nvidia-smi-text"


def read(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace")


# ------------------------------------------------------------------------------------------- XML

# file → (dtd, driver, cuda, name, bus, memory MiB, pcie (gen cur, gen max, width cur, width max))
XML_EXPECTED = {
    "a100-sxm4-40gb-mig__510.47.03__netdata.xml": ("v11", "510.47.03", "11.6", "NVIDIA A100-SXM4-40GB", "0000:00:04.0", 40960, (4, 4, 16, 16)),
    "a100-sxm4-80gb__535.54.03__telegraf.xml": ("v12", "535.54.03", "12.2", "NVIDIA A100-SXM4-80GB", "0000:01:00.0", 81920, (4, 4, 16, 16)),
    "a10g__515.105.01__telegraf.xml": ("v11", "515.105.01", "11.7", "NVIDIA A10G", "0000:00:1e.0", 23028, (1, 4, 8, 16)),
    "geforce-gtx-1070-ti__partial-no-driver__telegraf.xml": ("v10", None, None, "GeForce GTX 1070 Ti", "0000:01:00.0", 4096, (1, None, 16, None)),
    "geforce-gtx-1660-ti-graphics-device__418.43__telegraf.xml": (None, "418.43", "10.1", "Graphics Device", "0000:43:00.0", 5912, (1, 3, 16, 16)),
    "geforce-rtx-2080-windows__516.59__netdata.xml": ("v11", "516.59", "11.7", "NVIDIA GeForce RTX 2080", "0000:0a:00.0", 8192, (3, 3, 8, 16)),
    "geforce-rtx-3060-laptop__515.65.01__netdata.xml": ("v11", "515.65.01", "11.7", "NVIDIA GeForce RTX 3060 Laptop GPU", "0000:01:00.0", 6144, (1, 4, 8, 16)),
    "geforce-rtx-3060__570.124.04__telegraf.xml": ("v12", "570.124.04", "12.8", "NVIDIA GeForce RTX 3060", "0000:2d:00.0", 12288, (1, 4, 16, 16)),
    "geforce-rtx-3080-windows__536.40__telegraf.xml": ("v12", "536.40", "12.2", "NVIDIA GeForce RTX 3080", "0000:04:00.0", 10240, (4, 4, 16, 16)),
    "geforce-rtx-3080__595.58.03__telegraf.xml": ("v13", "595.58.03", "13.2", "NVIDIA GeForce RTX 3080", "0000:0c:00.0", 10240, (4, 4, 16, 16)),
    "geforce-rtx-3090__525.147.05__telegraf.xml": ("v12", "525.147.05", "12.0", "NVIDIA GeForce RTX 3090", "0000:00:10.0", 24576, (1, 4, 16, 16)),
    "geforce-rtx-4090__535.86.05__netdata.xml": ("v12", "535.86.05", "12.2", "NVIDIA GeForce RTX 4090", "0000:84:00.0", 24564, (1, 3, 16, 16)),
    "quadro-p2000__525.125.06__telegraf.xml": ("v12", "525.125.06", "12.0", "Quadro P2000", "0000:17:00.0", 5120, (1, 3, 8, 16)),
    "quadro-p400__418.43__telegraf.xml": (None, "418.43", "10.1", "Quadro P400", "0000:43:00.0", 1998, (1, 3, 16, 16)),
    "rtx-4000-sff-ada__595.84__telegraf.xml": ("v13", "595.84", "13.2", "NVIDIA RTX 4000 SFF Ada Generation", "0000:06:00.0", 20475, (1, 4, 16, 16)),
    "tesla-p100-pcie-16gb__510.47.03__netdata.xml": ("v11", "510.47.03", "11.6", "Tesla P100-PCIE-16GB", "0000:00:04.0", 16384, (3, 3, 16, 16)),
    "tesla-t4__515.105.01__telegraf.xml": ("v11", "515.105.01", "11.7", "Tesla T4", "0000:00:1e.0", 15360, (3, 3, 8, 16)),
}  # fmt: skip


def test_every_xml_fixture_is_listed() -> None:
    assert sorted(p.name for p in XML.glob("*.xml")) == sorted(XML_EXPECTED)


@pytest.mark.parametrize("name", sorted(XML_EXPECTED))
def test_parse_xml_fixture(name: str) -> None:
    dtd, driver, cuda, gpu_name, bus, mem, link = XML_EXPECTED[name]
    snap = parse_smi_xml(read(XML / name))
    assert snap.error is None and not snap.partial
    assert (snap.dtd_version, snap.driver_version, snap.cuda_version) == (dtd, driver, cuda)
    assert len(snap.gpus) == 1
    g = snap.gpus[0]
    assert (g.vendor, g.index, g.name, g.pci.address, g.memory_total_mib) == ("nvidia", 0, gpu_name, bus, mem)
    assert (g.pcie.gen_current, g.pcie.gen_max, g.pcie.width_current, g.pcie.width_max) == link
    assert g.evidence and g.evidence[0].source == "nvidia-smi"
    if g.memory_used_mib is not None and g.memory_free_mib is not None:
        assert g.memory_used_mib + g.memory_free_mib <= g.memory_total_mib


def test_xml_mig_a100() -> None:
    snap = parse_smi_xml(read(XML / "a100-sxm4-40gb-mig__510.47.03__netdata.xml"))
    g = snap.gpus[0]
    assert g.mig_mode == "Enabled"
    assert g.mig_devices == ["MIG 0: GI 1, CI 0, 42 SMs, 19968 MiB", "MIG 1: GI 2, CI 0, 42 SMs, 19968 MiB"]
    assert [m.gpu_instance_id for m in snap.mig[0]] == [1, 2]
    assert (g.pci.vendor_id, g.pci.device_id) == ("10de", "20b0")
    assert g.ecc.mode_current == "Enabled" and g.ecc.aggregate_uncorrected == 0
    assert g.power_draw_w == pytest.approx(66.92) and g.power_limit_w == 400.0


def test_xml_windows_wddm() -> None:
    g = parse_smi_xml(read(XML / "geforce-rtx-2080-windows__516.59__netdata.xml")).gpus[0]
    assert g.driver_model == "WDDM"
    assert g.persistence_mode is None  # N/A on Windows
    assert g.display_active is True
    assert g.processes == 26
    assert g.throttle_reasons == ["gpu_idle"]
    assert (g.clocks.graphics_max_mhz, g.clocks.memory_max_mhz) == (3060, 7560)


def test_xml_partial_no_driver_document() -> None:
    snap = parse_smi_xml(read(XML / "geforce-gtx-1070-ti__partial-no-driver__telegraf.xml"))
    g = snap.gpus[0]
    assert snap.driver_version is None and snap.attached_gpus is None
    assert g.uuid == "GPU-f9ba66fc-a7f5-94c5-da19-019ef2f9c665"
    assert g.power_draw_w is None  # "N/A"
    assert (g.temperature_c, g.clocks.graphics_mhz, g.clocks.memory_mhz) == (39, 135, 405)


def test_xml_graphics_device_name_kept_and_pci_id() -> None:
    g = parse_smi_xml(read(XML / "geforce-gtx-1660-ti-graphics-device__418.43__telegraf.xml")).gpus[0]
    assert g.name == "Graphics Device"  # the chip rule (platform) classifies it from the PCI id
    assert (g.pci.vendor_id, g.pci.device_id) == ("10de", "2184")
    assert (g.pci.subsystem_vendor_id, g.pci.subsystem_device_id) == ("1458", "3fc8")


def test_xml_ecc_retired_pages_and_remapped_rows() -> None:
    p100 = parse_smi_xml(read(XML / "tesla-p100-pcie-16gb__510.47.03__netdata.xml")).gpus[0].ecc
    assert (
        p100.mode_current,
        p100.volatile_corrected,
        p100.aggregate_corrected,
        p100.aggregate_uncorrected,
    ) == (
        "Enabled",
        0,
        3,
        0,
    )
    assert (p100.retired_pages_sbe, p100.retired_pages_dbe, p100.retired_pages_pending) == (0, 0, False)
    a10g = parse_smi_xml(read(XML / "a10g__515.105.01__telegraf.xml")).gpus[0]
    assert (a10g.ecc.remapped_rows_correctable, a10g.ecc.remapped_rows_uncorrectable) == (0, 0)
    assert (a10g.ecc.remapped_rows_pending, a10g.ecc.remapped_rows_failure) == (False, False)
    assert a10g.pci.vendor_id is None  # the file's id is masked ("000000DE"): not used


def test_xml_v13_power_and_no_throttle() -> None:
    g = parse_smi_xml(read(XML / "geforce-rtx-3080__595.58.03__telegraf.xml")).gpus[0]
    assert g.power_draw_w == pytest.approx(142.33)  # instant_power_draw (v13)
    assert g.power_limit_w == 320.0
    assert g.throttle_reasons == []
    assert g.utilization_gpu_pct == 65


def test_xml_truncated_keeps_what_was_read() -> None:
    text = read(XML / "tesla-t4__515.105.01__telegraf.xml")
    cut = text[: text.index("<temperature>")]
    snap = parse_smi_xml(cut)
    assert snap.partial and snap.error and "cut off" in snap.error
    assert snap.driver_version == "515.105.01"
    assert snap.gpus[0].name == "Tesla T4" and snap.gpus[0].memory_total_mib == 15360
    assert snap.gpus[0].temperature_c is None


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "printed nothing"),
        ("some garbage", "no nvidia-smi XML"),
        ("Failed to initialize NVML: Unknown Error", "could not start NVML"),
        ("<html><body>hi</body></html>", "not an nvidia-smi log"),
        ('<!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log>&a;</nvidia_smi_log>', "entities"),
    ],
)
def test_xml_bad_input_is_a_clean_error(text: str, fragment: str) -> None:
    snap = parse_smi_xml(text)
    assert snap.error and fragment in snap.error and snap.gpus == []


# ----------------------------------------------------------------------------------- -q (text)

Q_EXPECTED = {
    # file → (driver, cuda, name, bus, vbios, driver model, mig mode, #mig, power draw, power limit)
    "geforce-rtx-2080-super__591.86__windows__nvidia-smi-q.txt": ("591.86", "13.1", "NVIDIA GeForce RTX 2080 SUPER", "0000:0c:00.0", "90.04.7a.40.73", "WDDM", None, 0, 38.92, 250.0),
    "geforce-rtx-2080-super__595.71.05__linux__nvidia-smi-q.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 2080 SUPER", "0000:0c:00.0", "90.04.7A.40.73", None, None, 0, 37.62, 250.0),
    "geforce-rtx-2080-super__610.57.04__linux__nvidia-smi-q.txt": ("610.57.04", "13.3", "NVIDIA GeForce RTX 2080 SUPER", "0000:0c:00.0", "90.04.7A.40.73", None, None, 0, 38.89, 250.0),
    "geforce-rtx-2080-super__610.62__windows__nvidia-smi-q.txt": ("610.62", "13.3", "NVIDIA GeForce RTX 2080 SUPER", "0000:0c:00.0", "90.04.7a.40.73", "WDDM", None, 0, 37.21, 250.0),
    "geforce-rtx-4080-super__595.71.05__linux__nvidia-smi-q.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 4080 SUPER", "0000:01:00.0", "95.03.44.00.B2", None, None, 0, 27.74, 320.0),
    "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-q.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", "96.00.A5.00.01", None, "Disabled", 0, 69.62, 700.0),
    "h100-mig__590.48.01__linux__nvidia-smi-q.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", "96.00.A5.00.01", None, "Enabled", 4, 72.63, 700.0),
    "h200-mig__590.48.01__linux__nvidia-smi-q.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", "96.00.A5.00.03", None, "Enabled", 5, 77.88, 700.0),
    "h200__590.48.01__linux__nvidia-smi-q.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", "96.00.A5.00.03", None, "Disabled", 0, 77.88, 700.0),
    "l40s__595.80__linux__nvidia-smi-q.txt": ("595.80", "13.2", "NVIDIA L40S", "0000:01:00.0", "95.02.66.00.02", None, None, 0, 119.88, 350.0),
}  # fmt: skip


def test_every_q_fixture_is_listed() -> None:
    assert sorted(p.name for p in TXT.glob("*__nvidia-smi-q.txt")) == sorted(Q_EXPECTED)


@pytest.mark.parametrize("name", sorted(Q_EXPECTED))
def test_parse_q_fixture(name: str) -> None:
    driver, cuda, gpu_name, bus, vbios, dm, mig, nmig, draw, limit = Q_EXPECTED[name]
    snap = parse_smi_q(read(TXT / name))
    assert snap.error is None
    assert (snap.driver_version, snap.cuda_version, snap.attached_gpus) == (driver, cuda, 1)
    g = snap.gpus[0]
    assert (g.name, g.pci.address, g.vbios, g.driver_model, g.mig_mode) == (gpu_name, bus, vbios, dm, mig)
    assert g.uuid == "GPU-00000000-0000-0000-0000-000000000000"
    assert len(g.mig_devices) == nmig
    assert (g.power_draw_w, g.power_limit_w) == (pytest.approx(draw), limit)
    assert g.pci.vendor_id == "10de"


def test_q_h100_details() -> None:
    g = parse_smi_q(read(TXT / "h100-mig__590.48.01__linux__nvidia-smi-q.txt")).gpus[0]
    assert (g.pci.device_id, g.pci.subsystem_device_id) == ("2330", "16c1")
    assert (g.pcie.gen_current, g.pcie.gen_max, g.pcie.gen_device_max, g.pcie.width_max) == (5, 5, 5, 16)
    assert g.pcie.replay_counter == 9
    assert g.throttle_reasons == ["gpu_idle"]
    assert g.ecc.mode_current == "Enabled" and g.ecc.volatile_uncorrected == 0
    assert g.mig_devices[0] == "MIG 0: GI 2, CI 0, 60 SMs, 40448 MiB"
    assert g.persistence_mode is True and g.processes == 0


def test_q_abridged_a100_remapped_rows_pending() -> None:
    snap = parse_smi_q(
        read(
            TXT
            / "a100-sxm4-80gb__510.73.08__linux__nvidia-smi-q__ecc-remapped-rows__abridged__ml-engineering.txt"
        )
    )
    assert (snap.driver_version, snap.cuda_version, snap.attached_gpus) == ("510.73.08", "11.6", 8)
    g = snap.gpus[0]
    assert g.name == "NVIDIA A100-SXM4-80GB" and g.pci.address == "0000:10:1c.0"
    assert (g.ecc.volatile_corrected, g.ecc.volatile_uncorrected, g.ecc.aggregate_corrected) == (177, 0, 177)
    assert (g.ecc.remapped_rows_correctable, g.ecc.remapped_rows_uncorrectable) == (1, 0)
    assert g.ecc.remapped_rows_pending is True and g.ecc.remapped_rows_failure is False
    assert g.ecc.retired_pages_sbe is None  # N/A


def test_q_r610_deprecated_header_lines() -> None:
    snap = parse_smi_q(read(TXT / "geforce-rtx-2080-super__610.57.04__linux__nvidia-smi-q.txt"))
    assert snap.driver_version == "610.57.04" and snap.cuda_version == "13.3"


def test_q_processes_counted() -> None:
    g = parse_smi_q(read(TXT / "geforce-rtx-2080-super__595.71.05__linux__nvidia-smi-q.txt")).gpus[0]
    assert g.processes == 2


# ------------------------------------------------------------------------------------- tables

TABLE_EXPECTED = {
    # file → (driver, cuda, name, bus, used, total, temp, draw, cap, util, persistence, driver model, procs)
    "a100-80gb-pcie__550.90.12__linux__nvidia-smi__truncated__ml-engineering.txt": ("550.90.12", "12.4", "NVIDIA A100 80GB PCIe", "0000:01:00.0", 437, 81920, 32, 69.0, 300.0, 100, False, None, None),
    "geforce-16gb-laptop-name-truncated__470.63.01__linux__nvidia-smi__old-table-layout__mxochicale-code.txt": ("470.63.01", "11.4", "NVIDIA GeForce ...", "0000:01:00.0", 393, 16116, 55, 21.0, None, 3, False, None, 6),
    "geforce-rtx-2070-laptop__440.100__linux__nvidia-smi__old-table-layout__mxochicale-code.txt": ("440.100", "10.2", "GeForce RTX 207...", "0000:01:00.0", 246, 7973, 48, 6.0, None, 6, False, None, 4),
    "geforce-rtx-2070-laptop__460.39__linux__nvidia-smi__old-table-layout__mxochicale-code.txt": ("460.39", "11.2", "GeForce RTX 2070", "0000:01:00.0", 259, 7973, 46, 7.0, None, 1, False, None, 5),
    "geforce-rtx-2080-super__591.86__windows__nvidia-smi.txt": ("591.86", "13.1", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 702, 8192, 40, 38.0, 250.0, 0, None, "WDDM", 10),
    "geforce-rtx-2080-super__591.86__windows__nvidia-smi-load.txt": ("591.86", "13.1", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 1296, 8192, 45, 97.0, 250.0, 7, None, "WDDM", 12),
    "geforce-rtx-2080-super__595.71.05__linux__nvidia-smi.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 214, 8192, 40, 37.0, 250.0, 0, False, None, 2),
    "geforce-rtx-2080-super__595.71.05__linux__nvidia-smi-load.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 819, 8192, 45, 98.0, 250.0, 8, False, None, 4),
    "geforce-rtx-2080-super__610.57.04__linux__nvidia-smi.txt": ("610.57.04", "13.3", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 211, 8192, 33, 38.0, 250.0, 0, False, None, 2),
    "geforce-rtx-2080-super__610.57.04__linux__nvidia-smi-load.txt": ("610.57.04", "13.3", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 815, 8192, 38, 97.0, 250.0, 8, False, None, 4),
    "geforce-rtx-2080-super__610.62__windows__nvidia-smi.txt": ("610.62", "13.3", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 797, 8192, 39, 37.0, 250.0, 0, None, "WDDM", 19),
    "geforce-rtx-2080-super__610.62__windows__nvidia-smi-load.txt": ("610.62", "13.3", "NVIDIA GeForce RTX 2080 ...", "0000:0c:00.0", 1366, 8192, 44, 97.0, 250.0, 7, None, "WDDM", 21),
    "geforce-rtx-4080-super__595.71.05__linux__nvidia-smi.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 4080 ...", "0000:01:00.0", 596, 16376, 43, 25.0, 320.0, 0, False, None, 5),
    "geforce-rtx-4080-super__595.71.05__linux__nvidia-smi-load.txt": ("595.71.05", "13.2", "NVIDIA GeForce RTX 4080 ...", "0000:01:00.0", 1474, 16376, 45, 83.0, 320.0, 7, False, None, 7),
    "h100-80gb-hbm3__590.48.01__linux__nvidia-smi.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", 0, 81559, 41, 69.0, 700.0, 0, True, None, 0),
    "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-load.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", 19818, 81559, 59, 629.0, 700.0, 100, True, None, 3),
    "h100-mig__590.48.01__linux__nvidia-smi.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", 59, 81559, 42, 98.0, 700.0, None, True, None, 0),
    "h100-mig__590.48.01__linux__nvidia-smi-load.txt": ("590.48.01", "13.1", "NVIDIA H100 80GB HBM3", "0000:00:09.0", 11125, 81559, 52, 432.0, 700.0, None, True, None, 3),
    "h200-mig__590.48.01__linux__nvidia-smi.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", 55, 143771, 28, 78.0, 700.0, None, True, None, 0),
    "h200-mig__590.48.01__linux__nvidia-smi-load.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", 16959, 143771, 36, 295.0, 700.0, None, True, None, 3),
    "h200__590.48.01__linux__nvidia-smi.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", 0, 143771, 28, 77.0, 700.0, 0, True, None, 0),
    "h200__590.48.01__linux__nvidia-smi-load.txt": ("590.48.01", "13.1", "NVIDIA H200", "0000:83:00.0", 32362, 143771, 52, 628.0, 700.0, 100, True, None, 3),
    "l40s__595.80__linux__nvidia-smi.txt": ("595.80", "13.2", "NVIDIA L40S", "0000:01:00.0", 0, 46068, 64, 242.0, 350.0, 100, False, None, 0),
    "l40s__595.80__linux__nvidia-smi-load.txt": ("595.80", "13.2", "NVIDIA L40S", "0000:01:00.0", 1235, 46068, 54, 110.0, 350.0, 9, False, None, 2),
    "rtx-2000-ada-laptop-odd-power-588W__550.120__linux__nvidia-smi__new-table-layout__mxochicale-code.txt": ("550.120", "12.4", "NVIDIA RTX 2000 Ada Gene...", "0000:01:00.0", 9, 8188, 35, 588.0, 35.0, 0, False, None, 1),
    "rtx-2000-ada-laptop__580.95.05__linux__nvidia-smi__new-table-layout__mxochicale-code.txt": ("580.95.05", "13.0", "NVIDIA RTX 2000 Ada Gene...", "0000:01:00.0", 15, 8188, 38, 1.0, 35.0, 0, True, None, 1),
    "rtx-a2000-8gb-laptop__520.61.05__linux__nvidia-smi__old-table-layout__mxochicale-code.txt": ("520.61.05", "11.8", "NVIDIA RTX A200...", "0000:01:00.0", 4, 8192, 47, 3.0, None, 0, True, None, 1),
    "rtx-a2000-8gb-laptop__525.147.05__linux__nvidia-smi__old-table-layout__mxochicale-code.txt": ("525.147.05", "12.0", "NVIDIA RTX A200...", "0000:01:00.0", 5, 8192, 41, None, 35.0, 0, False, None, 1),
    "rtx-a2000-8gb-laptop__560.28.03__linux__nvidia-smi__new-table-layout__mxochicale-code.txt": ("560.28.03", "12.6", "NVIDIA RTX A2000 8GB Lap...", "0000:01:00.0", 14, 8192, 40, 7.0, 35.0, 5, False, None, 1),
    "tesla-t4__535.86.10__linux__nvidia-smi__old-table-layout__nvidia-cloud-native-docs.txt": ("535.86.10", "12.2", "Tesla T4", "0000:00:1e.0", 0, 15109, 34, 9.0, 70.0, 0, True, None, 0),
}  # fmt: skip


def test_every_table_fixture_is_listed() -> None:
    tables = [
        p.name
        for p in TXT.glob("*.txt")
        if ("__nvidia-smi.txt" in p.name or "__nvidia-smi-load.txt" in p.name or "__nvidia-smi__" in p.name)
    ]
    assert sorted(tables) == sorted(TABLE_EXPECTED)


@pytest.mark.parametrize("name", sorted(TABLE_EXPECTED))
def test_parse_table_fixture(name: str) -> None:
    driver, cuda, gpu_name, bus, used, total, temp, draw, cap, util, pers, dm, procs = TABLE_EXPECTED[name]
    snap = parse_smi_table(read(TXT / name))
    assert (snap.driver_version, snap.cuda_version) == (driver, cuda)
    assert len(snap.gpus) == 1
    g = snap.gpus[0]
    assert (g.index, g.name, g.pci.address) == (0, gpu_name, bus)
    assert (g.memory_used_mib, g.memory_total_mib, g.temperature_c) == (used, total, temp)
    assert (g.power_draw_w, g.power_limit_w, g.utilization_gpu_pct) == (draw, cap, util)
    assert (g.persistence_mode, g.driver_model, g.processes) == (pers, dm, procs)


def test_table_truncated_source_is_partial() -> None:
    snap = parse_smi_table(
        read(TXT / "a100-80gb-pcie__550.90.12__linux__nvidia-smi__truncated__ml-engineering.txt")
    )
    assert snap.partial and snap.error and "stops early" in snap.error
    assert snap.gpus[0].mig_mode == "Disabled" and snap.gpus[0].ecc.volatile_uncorrected == 0


def test_table_mig_devices() -> None:
    g = parse_smi_table(read(TXT / "h200-mig__590.48.01__linux__nvidia-smi.txt")).gpus[0]
    assert g.mig_mode == "Enabled"
    assert g.mig_devices == [
        "MIG 0: GI 2, CI 0, 16 SMs, 71424 MiB",
        "MIG 1: GI 2, CI 1, 32 SMs, 71424 MiB",
        "MIG 2: GI 3, CI 0, 32 SMs, 33280 MiB",
        "MIG 3: GI 9, CI 0, 16 SMs, 16384 MiB",
        "MIG 4: GI 10, CI 0, 16 SMs, 16384 MiB",
    ]


def test_table_driver_failure_message() -> None:
    snap = parse_smi_table(
        read(TXT / "nvidia-smi-failed-couldnt-communicate-with-driver__mxochicale-code.txt")
    )
    assert snap.gpus == [] and snap.error and "could not talk to the NVIDIA driver" in snap.error


# ------------------------------------------------------------------------------- small outputs

VERSION_EXPECTED = {
    "geforce-rtx-2080-super__591.86__windows__nvidia-smi-version.txt": ("591.86", "591.86", "591.86", "13.1"),
    "geforce-rtx-2080-super__595.71.05__linux__nvidia-smi-version.txt": (
        "595.71.05",
        "595.71",
        "595.71.05",
        "13.2",
    ),
    "geforce-rtx-2080-super__610.57.04__linux__nvidia-smi-version.txt": (
        "610.57.04",
        "610.57",
        "610.57.04",
        "13.3",
    ),
    "geforce-rtx-2080-super__610.62__windows__nvidia-smi-version.txt": ("610.62", "610.62", "610.62", "13.3"),
    "geforce-rtx-4080-super__595.71.05__linux__nvidia-smi-version.txt": (
        "595.71.05",
        "595.71",
        "595.71.05",
        "13.2",
    ),
    "h100-80gb-hbm3__590.48.01__linux__nvidia-smi-version.txt": ("590.48.01", "590.48", "590.48.01", "13.1"),
    "h100-mig__590.48.01__linux__nvidia-smi-version.txt": ("590.48.01", "590.48", "590.48.01", "13.1"),
    "h200-mig__590.48.01__linux__nvidia-smi-version.txt": ("590.48.01", "590.48", "590.48.01", "13.1"),
    "h200__590.48.01__linux__nvidia-smi-version.txt": ("590.48.01", "590.48", "590.48.01", "13.1"),
    "l40s__595.80__linux__nvidia-smi-version.txt": ("595.80", "595.80", "595.80", "13.2"),
}


@pytest.mark.parametrize("name", sorted(VERSION_EXPECTED))
def test_parse_version_fixture(name: str) -> None:
    v = parse_smi_version(read(TXT / name))
    assert (v.smi, v.nvml, v.driver, v.cuda) == VERSION_EXPECTED[name]
    assert v.error is None


def test_every_version_fixture_is_listed() -> None:
    assert sorted(p.name for p in TXT.glob("*-version.txt")) == sorted(VERSION_EXPECTED)


def test_version_failure() -> None:
    v = parse_smi_version(
        read(TXT / "nvidia-smi-failed-couldnt-communicate-with-driver__mxochicale-code.txt")
    )
    assert v == SmiVersion(error=v.error) and "NVIDIA driver" in (v.error or "")


@pytest.mark.parametrize("path", sorted(TXT.glob("*-L.txt")), ids=lambda p: p.name)
def test_parse_list_fixture(path: Path) -> None:
    entries = parse_smi_list(read(path))
    assert len(entries) == 1
    e = entries[0]
    assert (
        e.index == 0 and e.name.startswith("NVIDIA ") and e.uuid == "GPU-00000000-0000-0000-0000-000000000000"
    )
    expected_mig = {"h100-mig": 4, "h200-mig": 5}.get(path.name.split("__")[0], 0)
    assert len(e.mig_devices) == expected_mig


def test_list_mig_entries() -> None:
    e = parse_smi_list(read(TXT / "h100-mig__590.48.01__linux__nvidia-smi-L.txt"))[0]
    assert e.name == "NVIDIA H100 80GB HBM3"
    assert e.mig_devices[0] == "MIG 3g.40gb Device 0 (MIG-00000000-0000-0000-0000-000000000000)"
    assert e.mig_devices[3] == "MIG 1g.10gb Device 3 (MIG-00000003-0000-0000-0000-000000000003)"


def test_parse_csv_p100() -> None:
    rows = parse_smi_csv(read(TXT / "tesla-p100-pcie-16gb__510.47.03__query-gpu-csv__netdata.csv"))
    assert len(rows) == 1
    r = rows[0]
    assert r["name"] == "Tesla P100-PCIE-16GB" and r["uuid"] == "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6"
    assert r["fan.speed"] is None  # [N/A]
    assert (r["memory.free"], r["power.draw"], r["clocks.current.video"]) == ("16280", "28.16", "835")


def test_parse_csv_abridged_vbios() -> None:
    rows = parse_smi_csv(read(TXT / "h100-80gb-hbm3__query-gpu-vbios-csv__abridged__ml-engineering.txt"))
    assert [(r["pci.bus_id"], r["vbios_version"]) for r in rows] == [
        ("00000000:04:00.0", "96.00.89.00.01"),
        ("00000000:8B:00.0", "96.00.89.00.01"),
    ]


def test_failure_messages() -> None:
    assert "not installed" in (
        parse_smi_failure(
            read(TXT / "nvidia-smi-failed-couldnt-communicate-with-driver__mxochicale-code.txt")
        )
        or ""
    )
    assert "Reboot" in (parse_smi_failure("Failed to initialize NVML: Driver/library version mismatch") or "")
    assert parse_smi_failure(read(TXT / "h200__590.48.01__linux__nvidia-smi.txt")) is None


def test_nvml_library_version_from_the_mismatch_message() -> None:
    text = read(
        FIX / "recorded-issues" / "F09__nvml-driver-library-mismatch__tinygrad-open-gpu-kernel-modules-47.txt"
    )
    assert parse_nvml_library_version(text) == "570.124"
    assert "version mismatch" not in (parse_smi_failure(text) or "") and "Reboot" in (
        parse_smi_failure(text) or ""
    )
    assert parse_nvml_library_version(read(TXT / "h200__590.48.01__linux__nvidia-smi.txt")) is None


def test_split_pci_device_id() -> None:
    assert split_pci_device_id("0x233010DE") == ("10de", "2330")
    assert split_pci_device_id("[REDACTED]") == (None, None)
    assert split_pci_device_id(None) == (None, None)


FULL = sorted((TXT / "full-captures").glob("*.txt"))


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.name[:40])
def test_full_captures_sections_agree(path: Path) -> None:
    """Each whole capture holds --version, -L, the tables and -q (idle and load) of one GPU and driver."""
    driver = path.name.split("__")[2]
    text = read(path)
    assert parse_smi_version(text).driver == driver
    table = parse_smi_table(text)
    assert table.driver_version == driver and len(table.gpus) == 1
    q = parse_smi_q(text)
    assert q.driver_version == driver
    assert len(q.gpus) == 2 and q.gpus[0].name == q.gpus[1].name  # idle and load sections
    names = {e.name for e in parse_smi_list(text)}
    assert names == {q.gpus[0].name}
    assert table.gpus[0].name and (
        table.gpus[0].name == q.gpus[0].name
        or q.gpus[0].name.startswith(table.gpus[0].name.removesuffix("..."))
    )


CAPTURE_CC = {
    "nvidia-geforce-rtx-2080-super": ("7.5", "1e81"),
    "nvidia-geforce-rtx-4080-super": ("8.9", "2702"),
    "nvidia-h100-80gb-hbm3": ("9.0", "2330"),
    "nvidia-h100-mig": ("9.0", "2330"),
    "nvidia-h200-mig": ("9.0", "2335"),
    "nvidia-h200": ("9.0", "2335"),
    "nvidia-l40s": ("8.9", "26b9"),
}


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.name[:40])
def test_capture_sections_and_query_gpu_csv(path: Path) -> None:
    sections = split_capture_sections(read(path))
    assert {"capabilities :: version", "idle :: query (-q)", "load :: nvidia-smi (default table)"} <= set(
        sections
    )
    assert sections["capabilities :: version"].startswith("NVIDIA-SMI version")
    for state in ("idle", "load"):
        rows = parse_smi_csv(sections[f"{state} :: query-gpu (csv, what the exporter parses)"])
        (g,) = gpus_from_csv(rows)
        cc, device = CAPTURE_CC[path.name.split("__")[1]]
        assert (g.compute_capability, g.compute_capability_source, g.pci.device_id) == (
            cc,
            "nvidia-smi",
            device,
        )
        assert rows[0]["driver_version"] == path.name.split("__")[2]
        q = parse_smi_q(sections[f"{state} :: query (-q)"]).gpus[0]
        assert (g.name, g.memory_total_mib, g.pcie.gen_max, g.mig_mode) == (
            q.name,
            q.memory_total_mib,
            q.pcie.gen_max,
            q.mig_mode,
        )
        assert g.driver_model == ("WDDM" if path.name.startswith("windows") else None)


def test_csv_to_gpu_p100() -> None:
    (g,) = gpus_from_csv(
        parse_smi_csv(read(TXT / "tesla-p100-pcie-16gb__510.47.03__query-gpu-csv__netdata.csv"))
    )
    assert (g.index, g.name, g.memory_used_mib, g.memory_free_mib, g.temperature_c) == (
        0,
        "Tesla P100-PCIE-16GB",
        0,
        16280,
        37,
    )
    assert (g.power_draw_w, g.clocks.memory_mhz, g.compute_capability) == (28.16, 715, None)


def test_capture_sections_of_plain_text() -> None:
    assert split_capture_sections(read(TXT / "h200__590.48.01__linux__nvidia-smi.txt")) == {}


# ------------------------------------------------------------------------- garbage never raises

ALL_TEXT = sorted(p for p in TXT.glob("*") if p.is_file()) + sorted(XML.glob("*.xml"))
PARSERS = [
    parse_smi_xml,
    parse_smi_q,
    parse_smi_table,
    parse_smi_version,
    parse_smi_list,
    parse_smi_csv,
    parse_smi_failure,
]
_TEXTS = [read(p) for p in ALL_TEXT]


def _check_result(result: object) -> None:
    """The documented clean values: a snapshot/version object (error str or None), a list, or str/None."""
    if isinstance(result, (SmiSnapshot, SmiVersion)):
        assert result.error is None or isinstance(result.error, str)
        if isinstance(result, SmiSnapshot):
            assert all(isinstance(g, Gpu) for g in result.gpus)
    else:
        assert isinstance(result, (list, dict, str)) or result is None


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(idx=st.integers(0, len(_TEXTS) - 1), cut=st.floats(0, 1), parser=st.sampled_from(PARSERS))
def test_truncated_fixtures_never_raise(idx: int, cut: float, parser) -> None:
    text = _TEXTS[idx]
    _check_result(parser(text[: int(len(text) * cut)]))


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    idx=st.integers(0, len(_TEXTS) - 1),
    edits=st.lists(st.tuples(st.floats(0, 1), st.text(max_size=8)), max_size=6),
    parser=st.sampled_from(PARSERS),
)
def test_garbled_fixtures_never_raise(idx: int, edits: list[tuple[float, str]], parser) -> None:
    text = _TEXTS[idx]
    for pos, junk in edits:
        i = int(len(text) * pos)
        text = text[:i] + junk + text[i + len(junk) // 2 :]
    _check_result(parser(text))


@settings(max_examples=40, deadline=None, database=None)
@given(st.text(max_size=300))
def test_random_text_never_raises(text: str) -> None:
    for parser in PARSERS:
        _check_result(parser(text))


# ------------------------------------------------------------------------------------ the probe


def _ctx(runner: FakeRunner) -> ProbeContext:
    return ProbeContext(runner=runner, only=("smi",), timeout=5.0)


def test_probe_runs_smi_xml_when_nvml_gave_nothing() -> None:
    runner = FakeRunner().add(
        ["nvidia-smi", "-q", "-x"], Reply.from_file(XML / "tesla-t4__515.105.01__telegraf.xml")
    )
    m = Machine()
    pci_gpu = Gpu(
        vendor="nvidia",
        pci=PciInfo(address="0000:00:1e.0", vendor_id="10de", device_id="1eb8", kernel_driver="nvidia"),
    )
    m.gpus.append(pci_gpu)
    smi_probe(_ctx(runner), m)
    assert runner.calls == [["nvidia-smi", "-q", "-x"]]
    assert len(m.gpus) == 1 and m.gpus[0] is pci_gpu  # enriched the PCI entry, no duplicate
    assert (
        pci_gpu.name == "Tesla T4"
        and pci_gpu.pci.kernel_driver == "nvidia"
        and pci_gpu.memory_total_mib == 15360
    )
    assert [r.value for r in m.driver.versions if r.source == "nvidia-smi"] == ["515.105.01"]
    assert m.driver.cuda_driver_version == "11.7" and m.driver.cuda_driver_version_source == "nvidia-smi"


def test_probe_skipped_when_nvml_worked() -> None:
    runner = FakeRunner().add(["nvidia-smi"], Reply(stdout="should not run"))
    m = Machine(gpus=[Gpu(vendor="nvidia", name="x", evidence=[Evidence("nvml")])])
    smi_probe(_ctx(runner), m)
    assert runner.calls == []


def test_hung_nvidia_smi_still_gives_a_report() -> None:
    runner = FakeRunner().add(["nvidia-smi"], Reply.hung(5.0))
    machine = detect(ProbeContext(runner=runner, only=("smi", "driver"), timeout=5.0))
    ev = [e for e in machine.driver.evidence if e.source == "nvidia-smi"]
    assert len(ev) == 1 and not ev[0].ok and ev[0].error.startswith("timed out")
    assert all(p.ok for p in machine.probes)  # the probe recorded the hang; nothing crashed
    assert [p.name for p in machine.probes] == ["smi", "driver"]


def test_hung_nvidia_smi_keeps_what_it_printed_before_hanging() -> None:
    text = read(XML / "tesla-t4__515.105.01__telegraf.xml")
    partial = text[: text.index("<ecc_mode>")]
    runner = FakeRunner().add(
        ["nvidia-smi"],
        Reply(stdout=partial, returncode=None, timed_out=True, error="timed out after 5 s (stopped)"),
    )
    m = Machine()
    smi_probe(_ctx(runner), m)
    ev = [e for e in m.driver.evidence if e.source == "nvidia-smi"]
    assert ev[0].error.startswith("timed out") and not ev[1].ok and "cut off" in (ev[1].error or "")
    (g,) = m.gpus
    assert g.name == "Tesla T4" and g.ecc.mode_current is None
    assert m.driver.versions[0].value == "515.105.01" and m.driver.versions[0].error


def test_probe_failure_output_becomes_evidence() -> None:
    text = read(TXT / "nvidia-smi-failed-couldnt-communicate-with-driver__mxochicale-code.txt")
    runner = FakeRunner().add(["nvidia-smi"], Reply(stdout=text, returncode=9))
    m = Machine()
    smi_probe(_ctx(runner), m)
    (ev,) = m.driver.evidence
    assert not ev.ok and "could not talk to the NVIDIA driver" in (ev.error or "")
    assert m.gpus == []


def test_probe_not_installed() -> None:
    m = Machine()
    smi_probe(_ctx(FakeRunner()), m)
    assert m.driver.evidence[0].error == "nvidia-smi is not installed (not on PATH)"


def test_probe_merges_windows_xml_into_new_gpu() -> None:
    runner = FakeRunner().add(
        ["nvidia-smi", "-q", "-x"], Reply.from_file(XML / "geforce-rtx-3080-windows__536.40__telegraf.xml")
    )
    m = Machine()
    smi_probe(_ctx(runner), m)
    (g,) = m.gpus
    assert dataclasses.asdict(g.pci)["address"] == "0000:04:00.0"
    assert g.driver_model == "WDDM" and g.name == "NVIDIA GeForce RTX 3080"
