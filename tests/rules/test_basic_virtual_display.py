"""A VM whose only display is a virtual adapter has no GPU for compute (platform helper's report)."""

from gpusetup.model import Gpu, Machine, PciInfo, ProbeRun, Severity
from gpusetup.rules import evaluate


def _m(*gpus: Gpu) -> Machine:
    return Machine(gpus=list(gpus), probes=[ProbeRun("pci", 1.0)])


def test_virtual_display_only_counts_as_no_gpu():
    qxl = Gpu(vendor="other", name="Red Hat, Inc. QXL paravirtual graphic card", pci=PciInfo(vendor_id="1b36", device_id="0100"))
    (f,) = [f for f in evaluate(_m(qxl)) if f.id == "no-gpu"]
    assert f.severity is Severity.WARNING
    assert "QXL" in f.detail and "cannot run compute" in f.detail


def test_real_gpu_silences_it():
    gpu = Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 3090")
    assert not [f for f in evaluate(_m(gpu)) if f.id == "no-gpu"]
