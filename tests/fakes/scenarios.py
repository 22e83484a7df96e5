"""Whole fake machines for end-to-end tests: a filesystem root, a runner and an NVML fake, all fed by the
real recorded outputs in tests/fixtures. ``scenario(tmp_path, name)`` returns a ready ProbeContext.

Sysfs PCI entries are written from the ids the recorded nvidia-smi XML itself reports (bus id, device id,
subsystem id), so the PCI view and the driver view of each machine agree the way they do on real hardware.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from fakes.nvml import FakeNvml
from fakes.runner import FakeRunner, Reply
from gpusetup.probe import ProbeContext, normalize_pci_address
from gpusetup.probe.smi import parse_smi_xml

FIX = Path(__file__).resolve().parent.parent / "fixtures"
XML_DIR = FIX / "nvidia-smi-xml"
XML_FIXTURES = sorted(p.name for p in XML_DIR.glob("*.xml"))

OS_RELEASE_UBUNTU = 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n'


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def add_pci_device(root: Path, address: str, vendor: str, device: str, driver: str | None, subsys: str | None = None, cls: str = "0x030000") -> None:
    d = root / "sys/bus/pci/devices" / address
    d.mkdir(parents=True, exist_ok=True)
    (d / "vendor").write_text(f"0x{vendor}\n")
    (d / "device").write_text(f"0x{device}\n")
    (d / "class").write_text(f"{cls}\n")
    if subsys and len(subsys) == 8:
        (d / "subsystem_device").write_text(f"0x{subsys[:4]}\n")
        (d / "subsystem_vendor").write_text(f"0x{subsys[4:]}\n")
    if driver:
        drv = root / "sys/bus/pci/drivers" / driver
        drv.mkdir(parents=True, exist_ok=True)
        (d / "driver").symlink_to(drv)


def base_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir(parents=True, exist_ok=True)
    _write(root, "/etc/os-release", OS_RELEASE_UBUNTU)
    _write(root, "/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
    _write(root, "/proc/version", "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) (x86_64-linux-gnu-gcc-13) #45-Ubuntu SMP\n")
    (root / "sys/bus/pci/devices").mkdir(parents=True, exist_ok=True)
    return root


def _ctx(root: Path, runner: FakeRunner, nvml: FakeNvml | None, **kw) -> ProbeContext:
    return ProbeContext(
        runner=runner,
        root=root,
        env=kw.pop("env", {}),
        os_name="linux",
        nvml_factory=(lambda: nvml) if nvml is not None else (lambda: FakeNvml.init_fails("LIBRARY_NOT_FOUND")),
        library_loader=_no_library,
        **kw,
    )


def _no_library(name: str):
    raise OSError(f"{name}: cannot open shared object file: No such file or directory")


def from_smi_xml(tmp_path: Path, fixture: str, **kw) -> ProbeContext:
    """A Linux machine whose GPUs and driver are those of one recorded `nvidia-smi -q -x`."""
    path = XML_DIR / fixture
    root = base_root(tmp_path)
    snap = parse_smi_xml(path.read_text(errors="replace"))
    for gpu in snap.gpus:
        addr = normalize_pci_address(gpu.pci.address)
        if addr and gpu.pci.vendor_id and gpu.pci.device_id:
            add_pci_device(root, addr, gpu.pci.vendor_id, gpu.pci.device_id, "nvidia", subsys=None)
    runner = FakeRunner()
    runner.add(["nvidia-smi", "-q", "-x"], Reply.from_file(path))
    return _ctx(root, runner, FakeNvml.from_smi_xml(path), **kw)


def no_gpu(tmp_path: Path) -> ProbeContext:
    return _ctx(base_root(tmp_path), FakeRunner(), None)


def nvidia_without_driver(tmp_path: Path) -> ProbeContext:
    """A GTX 1660 SUPER (10de:21c4, from the recorded lspci output) driven by nouveau: no NVIDIA driver."""
    root = base_root(tmp_path)
    add_pci_device(root, "0000:01:00.0", "10de", "21c4", "nouveau")
    _write(root, "/proc/modules", "nouveau 2367488 1 - Live 0x0000000000000000\n")
    return _ctx(root, FakeRunner(), None)


def hung_nvidia_smi(tmp_path: Path) -> ProbeContext:
    """A GPU that fell off the bus: NVML cannot reach it and nvidia-smi hangs until it is killed."""
    root = base_root(tmp_path)
    add_pci_device(root, "0000:3b:00.0", "10de", "20b2", "nvidia")
    runner = FakeRunner().add(["nvidia-smi"], Reply.hung(8.0))
    return _ctx(root, runner, FakeNvml.init_fails("GPU_IS_LOST"))


def amd_and_intel(tmp_path: Path) -> ProbeContext:
    """The recorded sysfs tree of an AMD Vega 10 (amdgpu) next to an Intel iGPU (i915)."""
    root = base_root(tmp_path)
    src = FIX / "sysfs" / "expanded__prometheus-procfs-amdgpu" / "sys"
    shutil.copytree(src, root / "sys", dirs_exist_ok=True)
    # As on a real system, /sys/bus/pci/devices/<slot> and /sys/class/drm/cardN/device are the same device.
    for card in sorted((root / "sys/class/drm").glob("card*")):
        uevent = (card / "device" / "uevent").read_text()
        slot = dict(line.split("=", 1) for line in uevent.splitlines() if "=" in line)["PCI_SLOT_NAME"]
        (root / "sys/bus/pci/devices" / slot).symlink_to(card / "device")
    return _ctx(root, FakeRunner(), None)


SCENARIOS = {
    "no-gpu": no_gpu,
    "nvidia-no-driver": nvidia_without_driver,
    "hung-nvidia-smi": hung_nvidia_smi,
    "amd-and-intel": amd_and_intel,
}


def scenario(tmp_path: Path, name: str) -> ProbeContext:
    if name.startswith("xml:"):
        return from_smi_xml(tmp_path, name[4:])
    return SCENARIOS[name](tmp_path)
