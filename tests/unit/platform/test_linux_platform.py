"""Linux platform on fake roots built from real recordings (sysfs, /proc, lspci)."""

from __future__ import annotations

from pathlib import Path

from fakes.fsroot import add_amd_sysfs, fixture, make_root
from fakes.runner import FakeRunner, Reply
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusetup.probe import ProbeContext
from gpusetup.probe.platform import get_platform
from gpusetup.probe.platform.linux import (
    SECURE_BOOT_VAR,
    LinuxPlatform,
    detect_container,
    detect_wsl,
    parse_cpuinfo,
    parse_link_speed,
    parse_lspci,
    parse_meminfo,
    parse_os_release,
    parse_proc_modules,
)
from gpusetup.probe.platform.wsl import WslPlatform, is_wsl

LSPCI_VVNN = "lspci/lspci-vvnn__lenovo-legion5-15ach6h__rtx-3060-mobile-ga106m+amd-cezanne-igpu__fedora40__excerpt-4-devices__linuxhw-LsPCI.txt"
LSPCI_V_NONROOT = "lspci/lspci-v__gtx-1660-super__non-root-access-denied__tabs-as-spaces__lutris-tests.txt"
LOCAL = "recorded-local/"


def ctx_for(root: Path, runner: FakeRunner | None = None, env: dict | None = None) -> ProbeContext:
    return ProbeContext(runner=runner or FakeRunner(), root=root, env=env or {}, os_name="linux")


# ----------------------------------------------------------------------------------------- system


def test_system_from_recorded_local_files(tmp_path):
    root = make_root(
        tmp_path,
        {
            "/etc/os-release": fixture(LOCAL + "etc-os-release__debian-12-bookworm.txt"),
            "/proc/cpuinfo": fixture(LOCAL + "proc-cpuinfo__xeon-2-vcpu-avx512__vm.txt"),
            "/proc/meminfo": fixture(LOCAL + "proc-meminfo__24gib__vm.txt"),
            "/proc/version": fixture(LOCAL + "proc-version__linux-6.18-vm.txt"),
            "/proc/sys/kernel/osrelease": "6.18.44-fc-v657\n",
            "/proc/sys/kernel/hostname": "vm\n",
            "/proc/cmdline": "console=ttyS0 reboot=k panic=1\n",
            "/.dockerenv": "",
            "/sys/firmware/acpi/x": "",
        },
    )
    s = LinuxPlatform().system(ctx_for(root))
    assert (s.os, s.distro_id, s.distro_version) == ("linux", "debian", "12")
    assert s.distro_name == "Debian GNU/Linux 12 (bookworm)"
    assert s.kernel == "6.18.44-fc-v657" and s.hostname == "vm"
    assert s.wsl is False and s.container == "docker"
    assert s.secure_boot is None  # in a container the firmware view is not ours to judge
    assert s.cpu.model == "Intel(R) Xeon(R) Processor" and s.cpu.vendor == "GenuineIntel"
    assert s.cpu.cores_logical == 2
    assert {"avx2", "avx512f", "avx512bw", "avx512vl", "fma", "f16c"} <= set(s.cpu.flags)
    assert 20_000 < s.ram_total_mib < 30_000 and s.ram_available_mib <= s.ram_total_mib
    assert s.kernel_cmdline.startswith("console=ttyS0")
    assert s.is_jetson is False


def test_jetson_and_legacy_bios(tmp_path):
    root = make_root(
        tmp_path, {"/etc/nv_tegra_release": "# R36 (release), REVISION: 4.0\n", "/sys/firmware/acpi/t": ""}
    )
    s = LinuxPlatform().system(ctx_for(root))
    assert s.is_jetson is True
    assert s.secure_boot is False and "legacy BIOS" in s.secure_boot_source


def test_secure_boot_from_efi_variable_and_mokutil(tmp_path):
    on = make_root(tmp_path / "on", {SECURE_BOOT_VAR: b"\x06\x00\x00\x00\x01"})
    assert LinuxPlatform().secure_boot(ctx_for(on)) == (True, "EFI variable SecureBoot")
    off = make_root(tmp_path / "off", {SECURE_BOOT_VAR: b"\x06\x00\x00\x00\x00"})
    assert LinuxPlatform().secure_boot(ctx_for(off))[0] is False
    efi = make_root(tmp_path / "mok", {"/sys/firmware/efi/x": ""})
    runner = FakeRunner().add(["mokutil", "--sb-state"], Reply("SecureBoot enabled\n"))
    assert LinuxPlatform().secure_boot(ctx_for(efi, runner)) == (True, "mokutil --sb-state")
    runner = FakeRunner().add(
        ["mokutil", "--sb-state"], Reply("", "EFI variables are not supported on this system\n", 1)
    )
    assert LinuxPlatform().secure_boot(ctx_for(efi, runner))[0] is False
    assert LinuxPlatform().secure_boot(ctx_for(efi)) == (None, None)  # no mokutil: unknown, not a guess


def test_wsl_detection_and_platform_choice(tmp_path):
    wsl2 = make_root(
        tmp_path / "w2",
        {
            "/proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc) #1 SMP\n"
        },
    )
    assert detect_wsl(ctx_for(wsl2)) == (True, 2)
    assert is_wsl(ctx_for(wsl2))
    assert isinstance(get_platform(ctx_for(wsl2)), WslPlatform)
    wsl1 = make_root(
        tmp_path / "w1", {"/proc/version": "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)\n"}
    )
    assert detect_wsl(ctx_for(wsl1)) == (True, 1)
    plain = make_root(tmp_path / "p", {"/proc/version": fixture(LOCAL + "proc-version__linux-6.18-vm.txt")})
    assert detect_wsl(ctx_for(plain)) == (False, None)
    assert type(get_platform(ctx_for(plain))) is LinuxPlatform
    assert is_wsl(ctx_for(plain, env={"WSL_DISTRO_NAME": "Ubuntu"}))


def test_wsl_platform_libcuda_and_modules(tmp_path):
    root = make_root(tmp_path, {"/dev/dxg": "", "/usr/lib/wsl/drivers/nvmii.inf_amd64_1/libcuda.so.1.1": ""})
    p = WslPlatform()
    c = ctx_for(root)
    assert p.libcuda_candidates(c)[:2] == [
        "/usr/lib/wsl/lib/libcuda.so.1",
        "/usr/lib/wsl/drivers/nvmii.inf_amd64_1/libcuda.so.1.1",
    ]
    mods = p.kernel_modules(c)
    assert mods[0].name == "dxgkrnl" and mods[0].loaded is True


def test_container_detection(tmp_path):
    assert detect_container(ctx_for(make_root(tmp_path / "a", {"/run/.containerenv": ""}))) == "podman"
    assert detect_container(ctx_for(tmp_path, env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})) == "kubernetes"
    cg = make_root(tmp_path / "c", {"/proc/1/cgroup": "12:pids:/kubepods/besteffort/pod1/abc\n"})
    assert detect_container(ctx_for(cg)) == "kubernetes"
    cg = make_root(tmp_path / "d", {"/proc/1/cgroup": "0::/system.slice/docker-0123.scope\n"})
    assert detect_container(ctx_for(cg)) == "docker"
    host = make_root(tmp_path / "h", {"/proc/1/cgroup": "0::/init.scope\n"})
    assert detect_container(ctx_for(host)) is None


# -------------------------------------------------------------------------------------------- PCI


def test_sysfs_display_devices_from_the_amdgpu_fixture(tmp_path):
    root = add_amd_sysfs(tmp_path)
    make_root(root, {"/sys/bus/pci/devices/0000:00:00.0/class": "0x060000\n"})  # a host bridge: skipped
    devs = LinuxPlatform().pci_display_devices(ctx_for(root))
    by_addr = {d.address: d for d in devs}
    assert set(by_addr) == {"0000:09:00.0", "0000:00:02.0"}
    amd = by_addr["0000:09:00.0"]
    assert (amd.vendor_id, amd.device_id, amd.revision, amd.class_code) == ("1002", "687f", "c1", "030000")
    assert (amd.subsystem_vendor_id, amd.subsystem_device_id) == ("1043", "04c4")
    assert amd.kernel_driver == "amdgpu"  # from the uevent: the fixture has no driver symlink
    intel = by_addr["0000:00:02.0"]  # only a uevent file was recorded for card1
    assert (intel.vendor_id, intel.device_id, intel.kernel_driver) == ("8086", "5917", "i915")
    assert (intel.subsystem_vendor_id, intel.subsystem_device_id) == ("17aa", "2258")


def test_driver_symlink_wins_over_uevent(tmp_path):
    root = make_root(
        tmp_path,
        {
            "/sys/bus/pci/devices/0000:01:00.0/class": "0x030200\n",
            "/sys/bus/pci/devices/0000:01:00.0/vendor": "0x10de\n",
            "/sys/bus/pci/devices/0000:01:00.0/device": "0x20b0\n",
            "/sys/bus/pci/drivers/vfio-pci/x": "",
        },
        {"/sys/bus/pci/devices/0000:01:00.0/driver": str(tmp_path / "sys/bus/pci/drivers/vfio-pci")},
    )
    (dev,) = LinuxPlatform().pci_display_devices(ctx_for(root))
    assert dev.kernel_driver == "vfio-pci" and dev.class_code == "030200"


def test_pcie_link_from_sysfs(tmp_path):
    link = LinuxPlatform().pcie_link(ctx_for(add_amd_sysfs(tmp_path)), "09:00.0")
    assert (link.gen_current, link.gen_device_max, link.width_current, link.width_max) == (3, 3, 16, 16)
    assert parse_link_speed("2.5 GT/s PCIe") == 1 and parse_link_speed("32.0 GT/s PCIe") == 5
    assert parse_link_speed("Unknown") is None


def test_lspci_fallback_when_sysfs_is_unreadable(tmp_path):
    runner = FakeRunner().add(["lspci", "-nn", "-D", "-k"], Reply(fixture(LSPCI_VVNN)))
    devs = LinuxPlatform().pci_display_devices(ctx_for(tmp_path, runner))
    assert runner.calls == [["lspci", "-nn", "-D", "-k"]]
    assert [d.address for d in devs] == ["0000:01:00.0", "0000:05:00.0"]  # bridge and HDMI audio left out
    nv = devs[0]
    assert (nv.vendor_id, nv.device_id, nv.revision, nv.kernel_driver) == ("10de", "2560", "a1", "nvidia")
    assert (nv.subsystem_vendor_id, nv.subsystem_device_id) == ("17aa", "3a80")
    assert nv.vendor_name == "NVIDIA Corporation"
    assert nv.device_name == "GA106M [GeForce RTX 3060 Mobile / Max-Q]"
    amd = devs[1]
    assert amd.vendor_id == "1002" and amd.kernel_driver == "amdgpu"


def test_lspci_non_root_without_numeric_ids():
    (dev,) = parse_lspci(fixture(LSPCI_V_NONROOT))
    assert dev.address == "0000:01:00.0"
    assert dev.vendor_id == "10de"  # found from the vendor name in pci.ids
    assert dev.device_id is None
    assert dev.device_name == "TU116 [GeForce GTX 1660 SUPER]"
    assert (dev.revision, dev.kernel_driver, dev.class_code) == ("a1", "nvidia", "030000")


def test_no_sysfs_and_no_lspci_is_empty_not_an_error(tmp_path):
    assert LinuxPlatform().pci_display_devices(ctx_for(tmp_path)) == []


# ---------------------------------------------------------------------------------- kernel modules


def _nvidia_root(tmp_path, version_fixture: str, dep: str) -> Path:
    return make_root(
        tmp_path,
        {
            "/proc/modules": fixture(
                "proc-driver/proc-modules__nvidia-loaded-addresses-zeroed__lutris-tests.txt"
            ),
            "/proc/driver/nvidia/version": fixture("proc-driver/" + version_fixture),
            "/proc/sys/kernel/osrelease": "6.8.0-45-generic\n",
            "/lib/modules/6.8.0-45-generic/modules.dep": dep,
            "/lib/modules/6.8.0-45-generic/modules.builtin": "kernel/drivers/gpu/drm/drm.ko\n",
        },
    )


def test_kernel_modules_open_flavour_and_available(tmp_path):
    dep = (
        "updates/dkms/nvidia.ko.zst: kernel/drivers/video/fbdev/core/fb.ko.zst\n"
        "updates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\n"
        "kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n"
    )
    root = _nvidia_root(
        tmp_path,
        "proc-driver-nvidia-version__open-kernel-module__515.43.04__archlinux__lutris-tests.txt",
        dep,
    )
    mods = {m.name: m for m in LinuxPlatform().kernel_modules(ctx_for(root))}
    nv = mods["nvidia"]
    assert nv.loaded is True and nv.available_for_running_kernel is True
    assert nv.flavour == "open" and nv.version == "515.43.04"
    assert mods["nvidia_uvm"].loaded and mods["nvidia_uvm"].available_for_running_kernel
    assert mods["nvidia_drm"].loaded and mods["nvidia_modeset"].loaded
    assert mods["nouveau"].loaded is False and mods["nouveau"].available_for_running_kernel is True
    assert "amdgpu" not in mods


def test_kernel_modules_proprietary_not_built_for_this_kernel(tmp_path):
    root = _nvidia_root(
        tmp_path,
        "proc-driver-nvidia-version__proprietary__525.105.17__ubuntu-22.04__lutris-tests.txt",
        "kernel/drivers/gpu/drm/nouveau/nouveau.ko: \n",
    )
    runner = FakeRunner().add(
        ["dkms", "status"], Reply("nvidia/525.105.17, 6.2.0-26-generic, x86_64: installed\n")
    )
    nv = next(m for m in LinuxPlatform().kernel_modules(ctx_for(root, runner)) if m.name == "nvidia")
    assert nv.flavour == "proprietary" and nv.version == "525.105.17"
    assert nv.available_for_running_kernel is False
    assert nv.dkms_status == ["nvidia/525.105.17, 6.2.0-26-generic, x86_64: installed"]


def test_kernel_modules_licence_from_modinfo(tmp_path):
    root = make_root(
        tmp_path,
        {
            "/proc/modules": "",
            "/proc/sys/kernel/osrelease": "6.8.0\n",
            "/lib/modules/6.8.0/modules.dep": "kernel/drivers/video/nvidia.ko: \n",
        },
    )
    runner = FakeRunner().add(
        ["modinfo"],
        Reply(
            "filename: /lib/modules/6.8.0/kernel/drivers/video/nvidia.ko\nversion: 580.95.05\nlicense: NVIDIA\nsigner: Build time autogenerated kernel key\n"
        ),
    )
    nv = LinuxPlatform().kernel_modules(ctx_for(root, runner))[0]
    assert runner.calls[0] == ["modinfo", "-k", "6.8.0", "nvidia"]
    assert (nv.loaded, nv.available_for_running_kernel, nv.flavour, nv.version) == (
        False,
        True,
        "proprietary",
        "580.95.05",
    )
    assert nv.signer == "Build time autogenerated kernel key"


def test_no_module_support_reports_unknown(tmp_path):
    mods = LinuxPlatform().kernel_modules(ctx_for(tmp_path))
    assert [(m.name, m.loaded, m.available_for_running_kernel) for m in mods] == [("nvidia", None, None)]


def test_libcuda_candidates(tmp_path):
    root = make_root(tmp_path, {"/usr/lib/x86_64-linux-gnu/libcuda.so.1": ""})
    assert LinuxPlatform().libcuda_candidates(ctx_for(root)) == [
        "libcuda.so.1",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    ]


# ------------------------------------------------------------------------------------------ parsers


def test_small_parsers():
    rel = parse_os_release(
        'ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\nID_LIKE=debian\n#x\nbad line\n'
    )
    assert rel == {
        "ID": "ubuntu",
        "VERSION_ID": "24.04",
        "PRETTY_NAME": "Ubuntu 24.04.1 LTS",
        "ID_LIKE": "debian",
    }
    assert parse_meminfo("MemTotal:       16384000 kB\nMemFree: 1024 kB\n") == (16000, 1)
    mods = parse_proc_modules(
        fixture("proc-driver/proc-modules__nvidia-loaded-addresses-zeroed__lutris-tests.txt")
    )
    assert mods["nvidia"]["used_by"] == ["nvidia_uvm", "nvidia_modeset"] and mods["nvidia"]["taint"] == "POE"
    arm = parse_cpuinfo(
        "processor\t: 0\nFeatures\t: fp asimd sve2 bf16\nCPU implementer\t: 0x41\n\nprocessor\t: 1\n"
    )
    assert arm.vendor == "ARM" and arm.flags == ["asimd", "sve2", "bf16"] and arm.cores_logical == 2


_TEXTS = [
    fixture(LOCAL + "proc-cpuinfo__xeon-2-vcpu-avx512__vm.txt"),
    fixture(LOCAL + "etc-os-release__debian-12-bookworm.txt"),
    fixture(LOCAL + "proc-meminfo__24gib__vm.txt"),
    fixture(LSPCI_VVNN),
    fixture(LSPCI_V_NONROOT),
    fixture("proc-driver/proc-modules__nvidia-loaded-addresses-zeroed__lutris-tests.txt"),
]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(_TEXTS), st.data())
def test_garbled_inputs_never_raise(text, data):
    cut = data.draw(st.integers(0, len(text)))
    noise = data.draw(st.text(max_size=60))
    at = data.draw(st.integers(0, cut))
    garbled = text[:at] + noise + text[at:cut]
    parse_cpuinfo(garbled)
    parse_os_release(garbled)
    parse_meminfo(garbled)
    parse_proc_modules(garbled)
    for dev in parse_lspci(garbled):
        assert dev.vendor_id is None or len(dev.vendor_id) == 4


def test_wsl_system(tmp_path):
    root = make_root(
        tmp_path,
        {
            "/proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@host) #1 SMP\n",
            "/etc/os-release": 'ID=ubuntu\nVERSION_ID="24.04"\n',
            "/dev/dxg": "",
        },
    )
    s = WslPlatform().system(ctx_for(root))
    assert (s.wsl, s.wsl_version, s.distro_id) == (True, 2, "ubuntu")
    assert s.secure_boot is None and "Windows host" in s.secure_boot_source
