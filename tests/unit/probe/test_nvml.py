"""NVML facade and probe: FakeNvml fed by recorded XML, every init error, lost GPUs, unsupported functions,
and the real facade over a stub pynvml module (error classes, bytes, versioned fallbacks)."""

from __future__ import annotations

import inspect
import logging
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes.nvml import FakeNvml
from fakes.runner import FakeRunner, Reply

from gpusetup.model import Gpu, Machine, PciInfo
from gpusetup.probe import ProbeContext, detect
from gpusetup.probe.nvml import NVML_ERRORS, PYNVML_MISSING, Nvml, NvmlError
from gpusetup.probe.nvml import probe as nvml_probe
from gpusetup.probe.nvtypes import cuda_version_from_int, decode_throttle_reasons, encode_throttle_reasons
from gpusetup.probe.smi import parse_smi_xml

XML = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia-smi-xml"
T4 = XML / "tesla-t4__515.105.01__telegraf.xml"
A10G = XML / "a10g__515.105.01__telegraf.xml"
MIG = XML / "a100-sxm4-40gb-mig__510.47.03__netdata.xml"
WIN = XML / "geforce-rtx-2080-windows__516.59__netdata.xml"


def run(fake: FakeNvml, machine: Machine | None = None) -> Machine:
    machine = machine or Machine()
    nvml_probe(ProbeContext(nvml_factory=lambda: fake, only=("nvml",)), machine)
    return machine


def _public(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)} | {
        "__enter__",
        "__exit__",
    }


def test_fake_has_exactly_the_facade_interface() -> None:
    fake_only = {
        "from_snapshot",
        "from_smi_xml",
        "from_capture",
        "init_fails",
        "one_of_two_lost",
        "with_unsupported",
        "hangs_in",
    }
    assert _public(FakeNvml) - fake_only == _public(Nvml)
    for name in _public(Nvml) - {"__enter__", "__exit__"}:
        real = list(inspect.signature(getattr(Nvml, name)).parameters)
        fake = list(inspect.signature(getattr(FakeNvml, name)).parameters)
        assert real == fake, name


@pytest.mark.parametrize("path", sorted(XML.glob("*.xml")), ids=lambda p: p.name[:40])
def test_probe_over_every_xml_fixture(path: Path) -> None:
    snap = parse_smi_xml(path.read_text())
    fake = FakeNvml.from_smi_xml(path)
    m = run(fake)
    assert fake.init_calls == 1 and fake.shutdown_calls == 1 and not fake.started
    assert [r.value for r in m.driver.versions if r.source == "nvml"] == [snap.driver_version]
    assert m.driver.version == snap.driver_version
    assert m.driver.cuda_driver_version == snap.cuda_version
    assert m.driver.nvml_error is None
    (g,) = m.gpus
    src = snap.gpus[0]
    assert (g.index, g.name, g.uuid, g.pci.address) == (0, src.name, src.uuid, src.pci.address)
    assert (g.memory_total_mib, g.memory_used_mib, g.memory_free_mib) == (
        src.memory_total_mib,
        src.memory_used_mib,
        src.memory_free_mib,
    )
    assert g.pcie == src.pcie and g.clocks == src.clocks
    assert g.throttle_reasons == src.throttle_reasons
    assert (g.temperature_c, g.power_draw_w, g.power_limit_w) == (
        src.temperature_c,
        src.power_draw_w,
        src.power_limit_w,
    )
    assert (g.persistence_mode, g.display_active, g.processes, g.vbios) == (
        src.persistence_mode,
        src.display_active,
        src.processes,
        src.vbios,
    )
    assert g.evidence[-1].source == "nvml" and g.evidence[-1].ok
    assert g.compute_capability is None  # nvidia-smi XML does not carry it: the fake does not invent it
    assert g.architecture == src.architecture


def test_probe_values_tesla_t4() -> None:
    m = run(FakeNvml.from_smi_xml(T4, nvml_version="11.515.105.01"))
    g = m.gpus[0]
    assert g.name == "Tesla T4" and g.memory_total_mib == 15360
    assert (g.pci.vendor_id, g.pci.device_id) == ("10de", "1eb8")
    assert g.ecc.mode_current == "Enabled"
    assert (g.ecc.volatile_corrected, g.ecc.aggregate_uncorrected, g.ecc.retired_pages_dbe) == (0, 0, 0)
    assert g.ecc.retired_pages_pending is False
    assert (g.pcie.gen_current, g.pcie.width_current, g.pcie.width_max) == (3, 8, 16)
    assert m.driver.nvml_version == "11.515.105.01"
    assert m.driver.cuda_driver_version == "11.7" and m.driver.cuda_driver_version_source == "nvml"


def test_probe_compute_capability_when_nvml_has_it() -> None:
    fake = FakeNvml.from_smi_xml(T4)
    fake.devices[0].compute_capability = (7, 5)
    g = run(fake).gpus[0]
    assert g.compute_capability == "7.5" and g.compute_capability_source == "nvml"


CAPTURES = sorted((XML.parent / "nvidia-smi-text" / "full-captures").glob("*.txt"))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name[:40])
def test_probe_over_full_captures(path: Path) -> None:
    """Fake NVML from a whole real capture: -q for the GPU, the CSV for the compute capability."""
    fake = FakeNvml.from_capture(path)
    m = run(fake)
    (g,) = m.gpus
    driver = path.name.split("__")[2]
    assert m.driver.version == driver and m.driver.nvml_version == ".".join(driver.split(".")[:2])
    assert str(g.compute_capability) in {"7.5", "8.9", "9.0"} and g.compute_capability_source == "nvml"
    assert g.name and g.name.startswith("NVIDIA ") and g.memory_total_mib
    assert g.mig_mode == ("Enabled" if "-mig__" in path.name else ("Disabled" if "-h" in path.name else None))
    if "-mig__" in path.name:
        assert len(g.mig_devices) in (4, 5) and all(d.startswith("MIG ") for d in g.mig_devices)


def test_probe_mig_devices() -> None:
    g = run(FakeNvml.from_smi_xml(MIG)).gpus[0]
    assert g.mig_mode == "Enabled"
    assert g.mig_devices == ["MIG 0: GI 1, CI 0, 42 SMs, 19968 MiB", "MIG 1: GI 2, CI 0, 42 SMs, 19968 MiB"]


def test_probe_windows_driver_model() -> None:
    g = run(FakeNvml.from_smi_xml(WIN)).gpus[0]
    assert g.driver_model == "WDDM" and g.persistence_mode is None and g.display_active is True


def test_probe_enriches_pci_entry_instead_of_duplicating() -> None:
    m = Machine()
    pci_gpu = Gpu(
        vendor="nvidia",
        pci=PciInfo(address="0000:00:1e.0", vendor_id="10de", device_id="1eb8", kernel_driver="nvidia"),
    )
    m.gpus.append(pci_gpu)
    run(FakeNvml.from_smi_xml(T4), m)
    assert m.gpus == [pci_gpu] and pci_gpu.name == "Tesla T4" and pci_gpu.pci.kernel_driver == "nvidia"


@pytest.mark.parametrize("name", sorted({n for n, _ in NVML_ERRORS.values()}))
def test_init_fails_with_each_error_class(name: str) -> None:
    fake = FakeNvml.init_fails(name)
    m = run(fake)
    expected = NvmlError.named(name).message
    assert m.driver.nvml_error == expected
    (ev,) = m.driver.evidence
    assert (ev.source, ev.ok, ev.error, ev.detail) == ("nvml", False, expected, name)
    assert m.driver.versions[0].value is None and m.driver.versions[0].error == expected
    assert m.gpus == []


def test_plain_messages_for_the_common_init_failures() -> None:
    assert "not installed" in NvmlError.named("LIBRARY_NOT_FOUND").message
    assert "not loaded" in NvmlError.named("DRIVER_NOT_LOADED").message
    assert "permission" in NvmlError.named("NO_PERMISSION").message
    assert "fallen off the PCIe bus" in NvmlError.named("GPU_IS_LOST").message
    assert "power cables" in NvmlError.named("INSUFFICIENT_POWER").message
    assert "Reboot" in NvmlError.named("LIB_RM_VERSION_MISMATCH").message
    assert NvmlError.from_code(12345).name == "ERROR_12345"


def test_one_of_two_gpus_lost() -> None:
    fake = FakeNvml.one_of_two_lost(T4, A10G)
    m = run(fake)
    assert [g.index for g in m.gpus] == [0, 1]
    ok, lost = m.gpus
    assert ok.name == "Tesla T4" and ok.evidence[-1].ok
    assert lost.name is None and not lost.evidence[-1].ok
    assert "GPU is lost" in (lost.evidence[-1].error or "") and lost.evidence[-1].detail == "GPU_IS_LOST"
    assert fake.shutdown_calls == 1


def test_lost_gpu_lands_on_its_pci_entry_when_unambiguous() -> None:
    m = Machine()
    m.gpus.append(Gpu(vendor="nvidia", pci=PciInfo(address="0000:00:1e.0")))  # the T4
    m.gpus.append(
        Gpu(vendor="nvidia", pci=PciInfo(address="0000:3b:00.0", device_id="2236"))
    )  # fell off the bus
    run(FakeNvml.one_of_two_lost(T4, A10G), m)
    assert len(m.gpus) == 2
    assert m.gpus[1].index == 1 and m.gpus[1].evidence[-1].detail == "GPU_IS_LOST"


def test_gpu_lost_while_being_read_keeps_the_others() -> None:
    fake = FakeNvml.from_smi_xml(T4)
    second = FakeNvml.from_smi_xml(WIN).devices[0]
    second.lost_after_open = True
    fake.devices.append(second)
    m = run(fake)
    assert [g.name for g in m.gpus] == ["Tesla T4", None]
    assert m.gpus[1].pci.address == "0000:0a:00.0" and not m.gpus[1].evidence[-1].ok


def test_device_count_failure() -> None:
    fake = FakeNvml.from_smi_xml(T4, count_error="UNKNOWN")
    m = run(fake)
    assert m.gpus == [] and m.driver.nvml_error and "unknown error" in m.driver.nvml_error
    assert m.driver.version == "515.105.01"  # the driver answered before the count failed


def test_functions_not_supported_become_unknown() -> None:
    fake = FakeNvml.from_smi_xml(A10G).with_unsupported(
        "remapped_rows", "temperature", "power_draw_w", "ecc_mode"
    )
    g = run(fake).gpus[0]
    assert g.temperature_c is None and g.power_draw_w is None
    assert g.ecc.remapped_rows_pending is None and g.ecc.mode_current is None
    assert g.name == "NVIDIA A10G" and g.evidence[-1].ok


def test_smi_fallback_not_run_when_nvml_worked_but_run_when_it_failed() -> None:
    runner = FakeRunner().add(["nvidia-smi", "-q", "-x"], Reply.from_file(T4))
    ctx = ProbeContext(runner=runner, nvml_factory=lambda: FakeNvml.from_smi_xml(T4), only=("nvml", "smi"))
    m = detect(ctx)
    assert runner.calls == [] and len(m.gpus) == 1
    ctx = ProbeContext(
        runner=runner, nvml_factory=lambda: FakeNvml.init_fails("DRIVER_NOT_LOADED"), only=("nvml", "smi")
    )
    m = detect(ctx)
    assert runner.calls == [["nvidia-smi", "-q", "-x"]] and m.gpus[0].name == "Tesla T4"
    assert {r.source for r in m.driver.versions} == {"nvml", "nvidia-smi"}


@pytest.mark.parametrize("method", ["init", "temperature"])
def test_hung_nvml_times_out_and_the_report_goes_on(method: str) -> None:
    fake = FakeNvml.hangs_in(method, T4)
    runner = FakeRunner().add(["nvidia-smi"], Reply.hung(0.2))
    m = Machine()
    pci_gpu = Gpu(vendor="nvidia", pci=PciInfo(address="0000:00:1e.0"))
    m.gpus.append(pci_gpu)
    start = time.perf_counter()
    try:
        machine = m
        for name in ("nvml", "smi"):
            ctx = ProbeContext(runner=runner, nvml_factory=lambda: fake, timeout=0.1)
            __import__(f"gpusetup.probe.{name}", fromlist=["probe"]).probe(ctx, machine)
    finally:
        fake.release.set()
    assert time.perf_counter() - start < 2
    assert machine.driver.nvml_error and machine.driver.nvml_error.startswith("timed out")
    assert [e.source for e in machine.driver.evidence if not e.ok] == ["nvml", "nvidia-smi"]
    assert machine.gpus == [pci_gpu] and pci_gpu.name is None  # the half-read worker result is discarded


def test_probe_is_fast() -> None:
    fake = FakeNvml.from_smi_xml(MIG)
    start = time.perf_counter()
    run(fake)
    assert time.perf_counter() - start < 0.2


def test_factory_raising_is_recorded() -> None:
    def boom() -> FakeNvml:
        raise RuntimeError("broken binding")

    m = Machine()
    nvml_probe(ProbeContext(nvml_factory=boom), m)
    assert m.driver.nvml_error and "broken binding" in m.driver.nvml_error


# --------------------------------------------------------------- the real facade over a stub pynvml


class _NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value


def _stub(**overrides: object) -> SimpleNamespace:
    def raise_(code: int):
        def f(*a: object) -> None:
            raise _NVMLError(code)

        return f

    base = dict(
        nvmlInitWithFlags=lambda flags: None,
        nvmlShutdown=lambda: None,
        nvmlSystemGetDriverVersion=lambda: b"550.54.15",
        nvmlSystemGetCudaDriverVersion=lambda: 12040,
        nvmlSystemGetNVMLVersion=lambda: "12.550.54.15",
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: f"h{i}",
        nvmlDeviceGetName=lambda h: b"NVIDIA GeForce RTX 4090",
        nvmlDeviceGetUUID=lambda h: "GPU-1",
        nvmlDeviceGetPciInfo_v3=lambda h: SimpleNamespace(
            busId=b"00000000:01:00.0", pciDeviceId=0x268410DE, pciSubSystemId=0x16F310DE
        ),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(
            total=24564 * 2**20, used=2**20, free=24563 * 2**20
        ),
        nvmlDeviceGetCudaComputeCapability=lambda h: (8, 9),
        nvmlDeviceGetArchitecture=lambda h: 8,
        nvmlDeviceGetTemperature=lambda h, s: 40,
        nvmlDeviceGetPowerUsage=lambda h: 26840,
        nvmlDeviceGetEnforcedPowerLimit=lambda h: 450000,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: 0x1 | 0x4,
        nvmlDeviceGetRemappedRows=raise_(3),  # NOT_SUPPORTED
        nvmlDeviceGetMigMode=raise_(3),
        nvmlDeviceGetDriverModel_v2=raise_(13),  # FUNCTION_NOT_FOUND → falls back
        nvmlDeviceGetDriverModel=raise_(3),
        nvmlDeviceGetSerial=raise_(4),  # NO_PERMISSION → None, noted
    )
    base.update(overrides)
    return SimpleNamespace(**base)


def test_real_facade_maps_values_and_soft_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gpusetup.probe.nvml")
    nv = Nvml(lib=_stub())
    m = Machine()
    nvml_probe(ProbeContext(nvml_factory=lambda: nv), m)
    assert m.driver.version == "550.54.15" and m.driver.nvml_version == "12.550.54.15"
    assert m.driver.cuda_driver_version == "12.4"  # _v2 missing in the stub: fell back to the plain call
    (g,) = m.gpus
    assert (g.name, g.pci.address, g.pci.device_id, g.pci.subsystem_device_id) == (
        "NVIDIA GeForce RTX 4090",
        "0000:01:00.0",
        "2684",
        "16f3",
    )
    assert (g.memory_total_mib, g.memory_used_mib, g.compute_capability) == (24564, 1, "8.9")
    assert g.architecture == "Ada Lovelace"
    assert (g.power_draw_w, g.power_limit_w, g.temperature_c) == (26.84, 450.0, 40)
    assert g.throttle_reasons == ["gpu_idle", "sw_power_cap"]
    assert g.ecc.remapped_rows_pending is None and g.mig_mode is None and g.driver_model is None
    assert g.serial is None and any("nvmlDeviceGetSerial" in n for n in nv.notes)
    assert g.evidence[-1].ok
    missing = [r for r in caplog.records if "nvmlSystemGetCudaDriverVersion_v2" in r.getMessage()]
    assert len(missing) == 1  # logged once


def test_real_facade_logs_missing_function_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gpusetup.probe.nvml")
    nv = Nvml(lib=_stub())
    nv.init()
    for _ in range(3):
        assert nv.driver_model("h0") is None
    assert sum("nvmlDeviceGetDriverModel_v2" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize(
    "code, name",
    [(12, "LIBRARY_NOT_FOUND"), (9, "DRIVER_NOT_LOADED"), (18, "LIB_RM_VERSION_MISMATCH"), (999, "UNKNOWN")],
)
def test_real_facade_init_errors(code: int, name: str) -> None:
    def fail(flags: int) -> None:
        raise _NVMLError(code)

    nv = Nvml(lib=_stub(nvmlInitWithFlags=fail))
    with pytest.raises(NvmlError) as info:
        nv.init()
    assert info.value.name == name and info.value.message == NVML_ERRORS[code][1]


def test_real_facade_gpu_lost_is_fatal_for_that_gpu() -> None:
    def lost(h: object, s: int) -> int:
        raise _NVMLError(15)

    nv = Nvml(lib=_stub(nvmlDeviceGetTemperature=lost))
    nv.init()
    with pytest.raises(NvmlError) as info:
        nv.temperature("h0")
    assert info.value.name == "GPU_IS_LOST"
    m = Machine()
    nvml_probe(ProbeContext(nvml_factory=lambda: Nvml(lib=_stub(nvmlDeviceGetTemperature=lost))), m)
    assert m.gpus[0].evidence[-1].detail == "GPU_IS_LOST" and m.gpus[0].name == "NVIDIA GeForce RTX 4090"


def test_real_pynvml_error_classes_are_mapped() -> None:
    pynvml = pytest.importorskip("pynvml")
    for code, (name, message) in NVML_ERRORS.items():
        exc = pynvml.NVMLError(code)  # the binding turns the code into its NVMLError_* subclass
        err = Nvml(lib=pynvml)._error(exc)
        assert (err.code, err.name, err.message) == (code, name, message)


def test_missing_pynvml_is_a_plain_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(NvmlError) as info:
        Nvml().init()
    assert info.value is PYNVML_MISSING
    m = Machine()
    nvml_probe(ProbeContext(), m)
    assert m.driver.nvml_error == PYNVML_MISSING.message


def test_real_nvml_on_this_machine_fails_cleanly() -> None:
    """No GPU driver here: the real pynvml must fail with a plain message, never an exception."""
    m = Machine()
    nvml_probe(ProbeContext(), m)
    if m.driver.nvml_error is None:
        pytest.skip("this machine has a working NVIDIA driver")
    assert m.driver.evidence[0].detail in {
        "LIBRARY_NOT_FOUND",
        "DRIVER_NOT_LOADED",
        "PYNVML_MISSING",
        "NO_PERMISSION",
    }


def test_throttle_and_cuda_encoding() -> None:
    assert decode_throttle_reasons(0x1 | 0x40 | 0x800) == ["gpu_idle", "hw_thermal_slowdown", "unknown_0x800"]
    assert encode_throttle_reasons(["sw_power_cap", "hw_slowdown", "bogus"]) == 0xC
    assert decode_throttle_reasons(None) == []
    assert [cuda_version_from_int(v) for v in (12080, 11040, 13020, 0, None)] == [
        "12.8",
        "11.4",
        "13.2",
        None,
        None,
    ]


@pytest.mark.parametrize("path", sorted(XML.glob("*.xml")), ids=lambda p: p.name[:40])
def test_reports_from_every_fixture_render_and_validate(path: Path) -> None:
    """Both NVIDIA paths (NVML, and nvidia-smi after NVML failed) give a schema-valid, renderable report."""
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from gpusetup.model import Report
    from gpusetup.report import render
    from gpusetup.resources import resource

    validator = jsonschema.Draft202012Validator(
        json.loads(resource("schema", "report.schema.json").read_text())
    )
    runner = FakeRunner().add(["nvidia-smi", "-q", "-x"], Reply.from_file(path))
    for factory in (lambda: FakeNvml.from_smi_xml(path), lambda: FakeNvml.init_fails("DRIVER_NOT_LOADED")):
        ctx = ProbeContext(runner=runner, nvml_factory=factory, only=("nvml", "smi", "driver"))
        machine = detect(ctx)
        assert machine.nvidia_gpus and machine.nvidia_gpus[0].name
        report = Report(machine=machine)
        validator.validate(json.loads(render(report, "json")))
        assert machine.nvidia_gpus[0].name in render(report, "text")
