"""Host machines for the generator tests, each built from the facts of a real recorded output.

Driver version, driver CUDA version and GPU names are copied from the fixture named in ``source``; the
compute capability is NVIDIA's published value for that GPU (compat.md section 4.2). Rows marked
``profile`` are hand-written machine profiles (no recorded output exists for that combination here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusetup.model import Containers, Driver, Gpu, Machine, System

READY = Containers(docker="28.1.1", docker_daemon_reachable=True, nvidia_runtime_registered=True,
                   default_runtime="runc", toolkit_version="1.19.1")


@dataclass
class Host:
    name: str
    source: str
    driver: str | None
    cuda: str | None
    gpus: list[tuple[str, str | None]]
    os: str = "linux"
    arch: str = "x86_64"
    distro: str = "ubuntu"
    containers: Containers = field(default_factory=lambda: READY)
    jetson: bool = False

    def machine(self) -> Machine:
        return Machine(
            collected_at="2026-11-22T08:00:00Z",
            system=System(os=self.os, arch=self.arch, distro_id=self.distro if self.os == "linux" else None,
                          distro_version="24.04" if self.os == "linux" else None, is_jetson=self.jetson),
            driver=Driver(version=self.driver, cuda_driver_version=self.cuda,
                          cuda_driver_version_source="nvidia-smi" if self.cuda else None),
            gpus=[Gpu(vendor="nvidia", name=n, index=i, compute_capability=cc,
                      compute_capability_source="nvml" if cc else None) for i, (n, cc) in enumerate(self.gpus)],
            containers=self.containers,
        )


HOSTS = {h.name: h for h in [
    Host("rtx3080-595", "nvidia-smi-xml/geforce-rtx-3080__595.58.03__telegraf.xml", "595.58.03", "13.2",
         [("NVIDIA GeForce RTX 3080", "8.6")]),
    Host("rtx4090-535", "nvidia-smi-xml/geforce-rtx-4090__535.86.05__netdata.xml", "535.86.05", "12.2",
         [("NVIDIA GeForce RTX 4090", "8.9")]),
    Host("p100-510", "nvidia-smi-xml/tesla-p100-pcie-16gb__510.47.03__netdata.xml", "510.47.03", "11.6",
         [("Tesla P100-PCIE-16GB", "6.0")]),
    Host("p2000-525", "nvidia-smi-xml/quadro-p2000__525.125.06__telegraf.xml", "525.125.06", "12.0",
         [("Quadro P2000", "6.1")]),
    Host("rtx3060-570", "nvidia-smi-xml/geforce-rtx-3060__570.124.04__telegraf.xml", "570.124.04", "12.8",
         [("NVIDIA GeForce RTX 3060", "8.6")]),
    Host("h100-590", "nvidia-smi-text/full-captures/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01__"
         "nvidia_gpu_exporter.txt", "590.48.01", "13.1", [("NVIDIA H100 80GB HBM3", "9.0")]),
    Host("rtx3080-win-536", "nvidia-smi-xml/geforce-rtx-3080-windows__536.40__telegraf.xml", "536.40", "12.2",
         [("NVIDIA GeForce RTX 3080", "8.6")], os="windows", distro="", containers=Containers(
             docker="27.3.1", docker_daemon_reachable=True)),
    Host("mixed-410", "collect-env/ubuntu-14.04__mixed-titan-v-titan-xp-rtx-2080-ti__driver-410.78__"
         "torch-1.1.0a0__pytorch-issue-19039.txt", "410.78", "10.0",
         [("TITAN V", "7.0"), ("TITAN Xp", "6.1"), ("GeForce RTX 2080 Ti", "7.5")]),
    Host("3x3090-515", "collect-env/ubuntu-22.04__3x-rtx-3090__driver-515.65.01__torch-1.12.1+cu116__"
         "pytorch-issue-86556.txt", "515.65.01", None,
         [("NVIDIA GeForce RTX 3090", "8.6")] * 3),
    Host("v100x8-450", "collect-env/debian-10__multi-v100-sxm2-32gb__driver-450.51.06__torch-1.9.0a0-cuda11.0__"
         "pytorch-issue-65480.txt", "450.51.06", "11.0", [("Tesla V100-SXM2-32GB", "7.0")] * 8),
    Host("gtx1660ti-418", "nvidia-smi-xml/geforce-gtx-1660-ti-graphics-device__418.43__telegraf.xml", "418.43",
         "10.1", [("Graphics Device", "7.5")]),
    Host("k80-470", "profile", "470.256.02", "11.4", [("Tesla K80", "3.7")]),
    Host("k20-470", "profile", "470.256.02", "11.4", [("Tesla K20m", "3.5")]),
    Host("rtx5090-570", "profile", "570.124.04", "12.8", [("NVIDIA GeForce RTX 5090", "12.0")]),
    Host("gtx1080ti-580", "profile (compat profile docs example)", "580.95.05", None,
         [("NVIDIA GeForce GTX 1080 Ti", "6.1")]),
    Host("no-driver", "profile", None, None, [("NVIDIA GeForce RTX 3060", None)]),
    Host("macos", "collect-env/macos-13.0-arm64__no-cuda__torch-1.14.0.dev__pytorch-issue-88820.txt", None, None,
         [], os="macos", arch="arm64"),
    Host("jetson", "profile", "540.4.0", "12.6", [("Orin", "8.7")], arch="aarch64", jetson=True),
    Host("grace-h100-580", "profile", "580.95.05", "13.0", [("NVIDIA GH200 480GB", "9.0")], arch="aarch64"),
]}
