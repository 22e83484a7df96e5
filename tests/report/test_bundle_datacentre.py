"""What NVIDIA support asks for on data-centre systems goes into the bundle: nvidia-debugdump's device list,
dmidecode (model and firmware; serial numbers and UUIDs removed), the persistence daemon's and the fabric
manager's journals."""

from __future__ import annotations

import zipfile
from pathlib import Path

from fakes.runner import Reply

from gpusetup.bundle import build_bundle
from gpusetup.bundle.redact import Redactor

from .test_bundle import PLANTED, _runner, planted  # noqa: F401 - planted is a fixture

DMI = Path(__file__).resolve().parents[1] / "fixtures" / "recorded-dmidecode" / "dmidecode-q__openstack-nova-vm__language-demo.txt"


def test_bundle_has_datacentre_items_without_machine_identifiers(tmp_path, planted):  # noqa: F811
    report, ctx = planted
    runner = _runner()
    runner.add(["dmidecode"], Reply.from_file(DMI))
    ctx.runner = runner
    red = Redactor(usernames={PLANTED["username"]}, hostnames={f"{PLANTED['hostname']}.lab.example.org"})
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3", redactor=red)
    by_path = {e["path"]: e for e in result.manifest["files"]}
    with zipfile.ZipFile(result.path) as zf:
        dmi = zf.read("raw/dmidecode.txt").decode()
    assert by_path["raw/dmidecode.txt"]["command"] == ["dmidecode", "-t", "system", "-t", "bios", "-t", "baseboard"]
    assert "Product Name: OpenStack Nova" in dmi and "Family: Virtual Machine" in dmi
    assert "762931C8-6808-4C55-9817-3B0F3288213F" not in dmi and "a661eca5-bb1e-5d42-6ef0-ec974dca4c9c" not in dmi
    assert "UUID: [removed]" in dmi and "Asset Tag: Not Specified" in dmi
    # Tools this fake machine does not have are listed as not collected, with the reason, never dropped silently.
    not_collected = {line.split(":", 1)[0] for line in result.manifest["not_collected"]}
    for path in ("raw/nvidia-debugdump-list.txt", "raw/journal-nvidia-persistenced.txt",
                 "raw/journal-nvidia-fabricmanager.txt"):
        assert path in by_path or path in not_collected, path
