"""Collect, redact and zip a support bundle."""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from gpusetup import __version__
from gpusetup.bundle.redact import Redactor
from gpusetup.credentials import scrub
from gpusetup.model import Machine, Report, to_dict
from gpusetup.paths import is_regular_target, log_dir, state_dir
from gpusetup.probe import ProbeContext
from gpusetup.report import available_formats, render

BUNDLE_KIND = "gpusetup-bundle"
BUNDLE_VERSION = "1"
DEFAULT_SIZE_CAP = 20 * 1024 * 1024  # uncompressed bytes, all files together
PER_FILE_CAP = 4 * 1024 * 1024
_GPU_MODULES = ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia_peermem", "nouveau", "nova_core", "amdgpu", "i915", "xe", "vfio_pci")
_DOCKER_KEYS = ("ServerVersion", "Runtimes", "DefaultRuntime", "CDISpecDirs", "DiscoveredDevices", "Driver", "OperatingSystem", "OSType", "KernelVersion", "Architecture", "Warnings")


@dataclass
class CollectItem:
    """One file of the bundle: how it is made and why we want it."""

    name: str  # path inside the zip
    why: str
    command: list[str] | None = None  # run through the runner; None for files/report parts
    source_path: str | None = None  # a file read (under ctx.root)
    produce: Callable[[], str | bytes] | None = None  # report parts and already-known facts
    optional: bool = True  # skip silently when the command/file does not exist
    transform: Callable[[str], str] | None = None  # applied to the command's stdout (keep only what matters)
    tail: bool = False  # a source file too large for PER_FILE_CAP keeps its end (logs), else its start
    from_root: bool = True  # source_path is under ctx.root (a probe's file), not one of gpusetup's own


@dataclass
class BundleResult:
    path: Path
    manifest: dict
    redacted: bool
    size: int = 0
    skipped: list[str] = field(default_factory=list)


def planned_items(
    machine: Machine, report: Report, ctx: ProbeContext, python: str | None = None, show_ids: bool = False
) -> list[CollectItem]:
    """Everything the bundle would contain, in priority order (what matters most first, for the size cap)."""
    items = [
        CollectItem("report.json", "the full diagnose report: every fact with where it came from", produce=lambda: render(report, "json", show_ids=show_ids), optional=False),
        CollectItem("findings.json", "the problems found and their fixes", produce=lambda: json.dumps([to_dict(f) for f in report.findings], indent=2), optional=False),
    ]
    if "html" in available_formats():
        items.append(CollectItem("report.html", "the same report for people to read", produce=lambda: render(report, "html", show_ids=show_ids)))
    if report.plans:
        items.append(CollectItem("plan.json", "the install plan that was resolved for this machine", produce=lambda: json.dumps([to_dict(p) for p in report.plans], indent=2)))
    if report.selftest:
        items.append(CollectItem("selftest.json", "self-test measurements against rated peaks", produce=lambda: json.dumps(to_dict(report.selftest), indent=2)))
    items += [
        CollectItem("raw/nvidia-smi-q.txt", "every GPU's state as the driver reports it", command=["nvidia-smi", "-q"]),
        CollectItem("raw/nvidia-smi-topo-m.txt", "how GPUs, CPUs and NICs are connected", command=["nvidia-smi", "topo", "-m"]),
    ]
    for gpu in machine.gpus:
        if gpu.pci.address:
            safe = gpu.pci.address.replace(":", "-")
            items.append(CollectItem(f"raw/lspci-{safe}.txt", "the PCI device: link speed/width, bound driver, errors", command=["lspci", "-nnvv", "-s", gpu.pci.address]))
    items += [
        CollectItem("raw/kernel-log-gpu.txt", "kernel messages from the GPU drivers (NVRM, Xid, nouveau) — not the whole log", produce=lambda: "\n".join(machine.kernel_log) + "\n" if machine.kernel_log else ""),
        CollectItem("raw/proc-driver-nvidia-version.txt", "the loaded NVIDIA kernel module's version", source_path="/proc/driver/nvidia/version"),
        CollectItem("raw/proc-driver-nvidia-params.txt", "the NVIDIA kernel module's parameters", source_path="/proc/driver/nvidia/params"),
    ]
    gpus_dir = ctx.path("/proc/driver/nvidia/gpus")
    try:
        for d in sorted(gpus_dir.iterdir()):
            items.append(CollectItem(f"raw/proc-driver-nvidia-gpus-{d.name.replace(':', '-')}-information.txt", "the kernel module's view of this GPU", source_path=f"/proc/driver/nvidia/gpus/{d.name}/information"))
    except OSError:
        pass
    items += [
        CollectItem("raw/proc-modules-gpu.txt", "which GPU kernel modules are loaded", produce=lambda: _gpu_modules(ctx)),
        CollectItem("raw/dkms-status.txt", "whether the driver module was built for each installed kernel", command=["dkms", "status"]),
        CollectItem("raw/secure-boot.txt", "Secure Boot blocks unsigned kernel modules", command=["mokutil", "--sb-state"]),
        # What NVIDIA support asks for on data-centre systems (HGX/DGX): the debug tool's device list, the
        # server model and firmware, and the persistence daemon's and NVSwitch fabric manager's journals.
        CollectItem("raw/nvidia-debugdump-list.txt", "the GPUs as NVIDIA's own debug tool (nvidia-debugdump) sees them", command=["nvidia-debugdump", "--list"]),
        CollectItem("raw/dmidecode.txt", "the server model and its firmware (BIOS) version; serial numbers and UUIDs removed", command=["dmidecode", "-t", "system", "-t", "bios", "-t", "baseboard"], transform=_dmidecode_safe),
        CollectItem("raw/journal-nvidia-persistenced.txt", "the NVIDIA persistence daemon's recent log", command=["journalctl", "-u", "nvidia-persistenced", "--no-pager", "-n", "300"]),
        CollectItem("raw/journal-nvidia-fabricmanager.txt", "the NVSwitch fabric manager's recent log (HGX/DGX systems)", command=["journalctl", "-u", "nvidia-fabricmanager", "--no-pager", "-n", "300"]),
        CollectItem("raw/packages.txt", "installed NVIDIA/CUDA packages (a half-finished upgrade shows here)", produce=lambda: "\n".join(machine.packages) + "\n" if machine.packages else ""),
        CollectItem("raw/docker-info.json", "Docker's GPU runtime configuration (GPU-related parts only)", command=["docker", "info", "--format", "{{json .}}"], transform=_docker_gpu_parts),
        _pip_list_item(python),
        CollectItem("raw/cuda-env.txt", "CUDA-related environment variables", produce=lambda: "".join(f"{k}={v}\n" for k, v in sorted(machine.cuda.env.items()))),
    ]
    items.append(CollectItem("raw/package-index-config.txt", "pip, uv and conda settings: which index, mirror and proxy "
                             "packages come from (passwords and tokens removed)", produce=lambda: _index_config(ctx)))
    conda = ctx.env.get("CONDA_PREFIX")
    if conda:
        items.append(CollectItem("raw/conda-list.txt", "packages of the active conda environment", command=["conda", "list", "--prefix", conda]))
    for d, why in ((state_dir(), "installer journal"), (log_dir(), "gpusetup's own log")):
        try:
            files = sorted((p for p in d.rglob("*") if p.suffix in (".log", ".jsonl", ".json", ".txt") and _regular(p)),
                           key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            files = []
        for p in files[:20]:
            rel = p.relative_to(d).as_posix()
            items.append(CollectItem(f"logs/{d.name}/{rel}", why, source_path=str(p), tail=True, from_root=False))
    return items


def _regular(p: Path) -> bool:
    """A regular file, not through a link (a link in the state folder could point at anything)."""
    try:
        return stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def read_capped(path: Path, cap: int = PER_FILE_CAP, *, tail: bool = False) -> tuple[bytes, int]:
    """(at most ``cap`` bytes of ``path``, its whole size). ``tail``: the last part (of a log, what matters is
    the end), starting at a line break. Never more than ``cap`` bytes in memory, however large the file:
    reading and redacting every state file before cutting it took 224 s and 1.27 GB for a 300 MB journal."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        size = st.st_size if stat.S_ISREG(st.st_mode) else -1
        if tail and size > cap:
            fh.seek(size - cap)
            data = fh.read(cap)
            nl = data.find(b"\n")
            return (data[nl + 1:] if 0 <= nl < len(data) // 2 else data), size
        data = fh.read(cap + 1)
    return data[:cap], max(size, len(data))


_CONFIG_ENV = re.compile(r"^(?:PIP_|UV_|CONDA_(?:CHANNEL|PKGS|ENVS)|PYTHONHTTPSVERIFY$|REQUESTS_CA_BUNDLE$|SSL_CERT_|"
                         r"(?:HTTPS?|ALL|NO|FTP)_PROXY$)", re.IGNORECASE)
_CONFIG_CAP = 64 * 1024


def _index_config(ctx: ProbeContext) -> str:
    """Where packages come from: pip/uv/conda configuration files and environment variables, as they are.

    Credentials are stripped twice: here (every URL's user-info, every secret this process knows) and by the
    bundle's redactor afterwards (secret-named keys, token shapes)."""
    env = ctx.env
    home = Path(env.get("HOME") or str(Path.home()))
    xdg = Path(env.get("XDG_CONFIG_HOME") or str(home / ".config"))
    system = [*(Path(d) / "pip" / "pip.conf" for d in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if d),
              Path("/etc/pip.conf"), Path("/etc/uv/uv.toml"), Path("/etc/conda/.condarc")]
    files = [ctx.path(f) for f in system] + [
        home / ".pip" / "pip.conf", xdg / "pip" / "pip.conf", xdg / "uv" / "uv.toml", home / ".condarc",
        xdg / "conda" / ".condarc"]
    appdata = env.get("APPDATA")
    if appdata:
        files += [Path(appdata) / "pip" / "pip.ini", Path(appdata) / "uv" / "uv.toml"]
    for var in ("PIP_CONFIG_FILE", "UV_CONFIG_FILE", "CONDARC"):
        if env.get(var):
            files.append(Path(env[var]))
    if env.get("CONDA_PREFIX"):
        files.append(Path(env["CONDA_PREFIX"]) / ".condarc")
    out: list[str] = []
    for f in dict.fromkeys(files):
        try:
            with open(f, "rb") as fh:
                data = fh.read(_CONFIG_CAP)
        except OSError:
            continue
        out.append(f"# {f}\n{data.decode('utf-8', errors='replace').rstrip()}\n")
    names = sorted(k for k in env if _CONFIG_ENV.match(k))
    if names:
        out.append("# environment\n" + "".join(f"{k}={env[k]}\n" for k in names))
    return scrub("\n".join(out))


_DMI_ID = re.compile(r"(?im)^(\s*(?:Serial Number|UUID|Asset Tag)\s*:\s*)(.+)$")


def _dmidecode_safe(text: str) -> str:
    """dmidecode without the machine's serial numbers, UUID and asset tag (support needs the model, not those)."""
    return _DMI_ID.sub(lambda m: m.group(1) + ("Not Specified" if m.group(2).strip() == "Not Specified" else "[removed]"), text)


def _pip_list_item(python: str | None) -> CollectItem:
    """The target environment's packages. For this interpreter they are read in-process from the installed
    distributions' metadata (what `pip list` reads, in pip's JSON shape) instead of starting pip, which was
    more than half of a bundle's time; another environment's Python is asked through pip."""
    why = "Python packages of the target environment"
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        return CollectItem("raw/pip-list.json", why, produce=_installed_distributions)
    return CollectItem("raw/pip-list.json", why, command=[python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"])


_HEADER_FIELD = re.compile(r"^(Name|Version):[ \t]*(\S.*?)\s*$", re.MULTILINE)


def _installed_distributions() -> str:
    seen: dict[str, dict[str, str]] = {}
    for dist in metadata.distributions():  # first on sys.path wins, as for imports
        # Only the two header fields: parsing each whole METADATA as e-mail (dist.metadata) took 0.35 s.
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
        fields = dict(_HEADER_FIELD.findall(text.split("\n\n", 1)[0]))
        name, version = fields.get("Name"), fields.get("Version")
        if name and version and name.lower() not in seen:
            seen[name.lower()] = {"name": name, "version": version}
    return json.dumps(sorted(seen.values(), key=lambda d: d["name"].lower()))


def _gpu_modules(ctx: ProbeContext) -> str:
    try:
        text = ctx.path("/proc/modules").read_text(errors="replace")
    except OSError:
        return ""
    return "".join(line + "\n" for line in text.splitlines() if line.split(" ", 1)[0] in _GPU_MODULES)


MAX_LINE = 1024 * 1024  # one line of a bundled file (a JSON list of packages is one line; a megabyte is not)


def _cap_lines(text: str, width: int = MAX_LINE) -> str:
    if len(text) <= width or all(len(line) <= width for line in text.split("\n")):
        return text
    return "\n".join(line if len(line) <= width else
                     f"{line[:width]} …[{len(line) - width} characters of this line left out]" for line in text.split("\n"))


def _docker_gpu_parts(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    return json.dumps({k: data[k] for k in _DOCKER_KEYS if k in data}, indent=2) + "\n"


def build_bundle(
    out: Path,
    report: Report,
    ctx: ProbeContext | None = None,
    *,
    redact: bool = True,
    python: str | None = None,
    size_cap: int = DEFAULT_SIZE_CAP,
    redactor: Redactor | None = None,
) -> BundleResult:
    """Collect everything, redact it (unless told not to), and write the zip atomically."""
    ctx = ctx or ProbeContext()
    machine = report.machine
    red = redactor or Redactor.for_this_machine(extra_hosts=[machine.system.hostname or ""])
    entries: list[dict] = []
    cut: list[dict] = []
    skipped: list[str] = []
    total = 0
    out = Path(out).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.is_dir():
        raise IsADirectoryError(21, "it is a folder; give a file name such as bundle.zip", str(out))
    regular = is_regular_target(out)  # -o /dev/stdout, a FIFO: the zip is written through, never renamed over it
    if regular and out.is_symlink():
        out = Path(os.path.realpath(out))
    # an unguessable private temporary file (O_EXCL): no link planted at a known name is followed
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent if regular else None)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for item in planned_items(machine, report, ctx, python, show_ids=not redact):
                data, meta = _collect(item, ctx)
                if data is None:
                    skipped.append(f"{item.name}: {meta.get('error', 'not available')}")
                    continue
                read_cut = meta.pop("read_cut", None)
                if read_cut:
                    cut.append({"file": item.name, **read_cut})
                text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
                text = _cap_lines(text)  # a megabyte on one line: cut before any redaction pattern scans it
                if redact:
                    text = scrub(red.redact(text))  # + any secret this process knows (e.g. *_TOKEN values)
                raw = text.encode("utf-8")
                if len(raw) > PER_FILE_CAP:
                    cut.append({"file": item.name, "original_bytes": len(raw), "kept_bytes": PER_FILE_CAP, "how": "kept the last part"})
                    raw = raw[-PER_FILE_CAP:]
                if total + len(raw) > size_cap:
                    cut.append({"file": item.name, "original_bytes": len(raw), "kept_bytes": 0, "how": "left out: the bundle reached its size cap"})
                    continue
                total += len(raw)
                zf.writestr(item.name, raw)
                entries.append({"path": item.name, "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "why": item.why, **meta})
            manifest = {
                "kind": BUNDLE_KIND,
                "bundle_version": BUNDLE_VERSION,
                "tool_version": __version__,
                "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                "redacted": redact,
                "redactions": red.kinds if redact else {},
                "size_cap_bytes": size_cap,
                "files": entries,
                "cut": cut,
                "not_collected": skipped,
            }
            zf.writestr("manifest.json", json.dumps(manifest, indent=2) + "\n")
        size = tmp.stat().st_size
        if regular:
            os.replace(tmp, out)
        else:
            with open(tmp, "rb") as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except BaseException:  # a failed or cancelled bundle leaves no half-written .partial file behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    finally:
        if not regular:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return BundleResult(out, manifest, redact, size, skipped)


def _collect(item: CollectItem, ctx: ProbeContext) -> tuple[str | bytes | None, dict]:
    if item.produce is not None:
        try:
            data = item.produce()
        except OSError as exc:
            return None, {"error": str(exc)}
        if not data and item.optional:
            return None, {"error": "nothing to collect"}
        return data, {}
    if item.source_path is not None:
        path = ctx.path(item.source_path) if item.from_root else Path(item.source_path)
        try:
            data, size = read_capped(path, PER_FILE_CAP, tail=item.tail)
        except OSError as exc:
            return None, {"error": exc.strerror or str(exc)}
        meta: dict = {"source": item.source_path} if item.from_root else {}
        if size > len(data):
            meta["read_cut"] = {"original_bytes": size, "kept_bytes": len(data),
                                "how": "kept the last part" if item.tail else "kept the first part"}
        return data, meta
    assert item.command is not None
    start = time.perf_counter()
    res = ctx.runner.run(item.command, timeout=ctx.timeout)
    meta = {"command": item.command, "exit_code": res.returncode, "duration_ms": round((time.perf_counter() - start) * 1000, 1)}
    if res.error and not res.timed_out:
        return None, {"error": res.error}
    if res.timed_out:
        meta["timed_out"] = True
    body = item.transform(res.stdout) if item.transform else res.stdout
    if res.stderr.strip():
        body += ("\n" if body and not body.endswith("\n") else "") + "--- stderr ---\n" + res.stderr
    return body, meta
