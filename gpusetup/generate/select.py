"""Choose a container image the host can run: the rules, with no I/O besides reading the shipped data.

Two facts decide it (docker-gui-style.md 1.2):

* the image's CUDA major.minor must not be newer than what the host driver supports — official images set
  ``NVIDIA_REQUIRE_CUDA=cuda>=X.Y`` and the container toolkit refuses to start them otherwise. Minor-version
  compatibility does not loosen this check; it only governs the pip wheels *inside* the image, which run on
  any driver of their CUDA major's family minimum (e.g. a cu132 wheel on a 580 driver);
* the framework build must carry kernels (SASS for the GPU's major with a minor ≤ the GPU's, or PTX ≤ the
  GPU's compute capability) for every GPU, and the image's CUDA libraries must support the GPU at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpusetup.generate import facts
from gpusetup.generate.facts import GpuTarget, fmt, mm, vt
from gpusetup.model import Machine, Rejected
from gpusetup.versions import ComputeCapability, kernel_coverage

FRAMEWORKS = ("pytorch", "tensorflow", "jax")
IMAGE_SOURCES = ("cuda", "official", "ngc")
FLAVOURS = ("base", "runtime", "devel", "cudnn-runtime", "cudnn-devel")
_OS_RANK = {"ubuntu24.04": 3, "ubuntu22.04": 2, "ubuntu20.04": 1}
_FRAMEWORK_TITLE = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


@dataclass
class Selection:
    """The image (and, for ``nvidia/cuda`` bases, the pip build) chosen for this host, with the reasons."""

    framework: str
    source: str  # cuda / official / ngc
    repository: str
    tag: str
    digest: str | None
    image_cuda: tuple[int, int]
    os: str | None = None
    flavour: str | None = None
    verified: bool = True
    build: dict[str, Any] | None = None  # pip_builds row when the framework is pip-installed
    framework_version: str | None = None
    extra_packages: list[str] = field(default_factory=list)
    python: tuple[int, int] | None = None
    driver_cuda: tuple[int, int] | None = None
    gpus: list[GpuTarget] = field(default_factory=list)
    coverage: dict[int, str] = field(default_factory=dict)  # gpu index → sass / ptx / min_cc / unknown
    why: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    superseded_by: str | None = None
    size_note: str | None = None
    host_os: str | None = None  # linux / windows (the driver numbering differs)

    @property
    def ref(self) -> str:
        """Pinned reference for FROM / image: (tag, plus digest when the data has one)."""
        ref = f"{self.repository}:{self.tag}"
        return f"{ref}@{self.digest}" if self.digest else ref

    @property
    def gpus_covered(self) -> list[int]:
        return [i for i, how in self.coverage.items() if how]

    @property
    def gpus_left_out(self) -> list[int]:
        return [g.index for g in self.gpus if not self.coverage.get(g.index)]


@dataclass
class Refusal:
    """No image can work on this host: why, and what to change."""

    framework: str
    reason: str
    alternative: str
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------- coverage


def coverage(cc: tuple[int, int] | None, kernels: list[str], ptx: list[str], min_cc: str | None) -> str | None:
    """How a build runs on a GPU: 'sass' (native), 'ptx' (JIT at first start), 'min_cc', 'unknown', or None."""
    if cc is None:
        return "unknown"
    if kernels or ptx:
        return kernel_coverage(cc, kernels, ptx)
    if min_cc:
        need = ComputeCapability.parse(min_cc)
        return "min_cc" if need and cc >= need else None
    return "unknown"


def _cc(g: GpuTarget) -> str:
    return f"{g.cc[0]}.{g.cc[1]}" if g.cc else "unknown"


# --------------------------------------------------------------------------------------- choosing


def choose(
    machine: Machine,
    framework: str,
    *,
    image_source: str = "cuda",
    flavour: str = "base",
    cuda: str | None = None,
    allow_unverified: bool = False,
) -> Selection | Refusal:
    """Pick the newest image + build that this host's driver and GPUs can run, or say why none can."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; choose one of {', '.join(FRAMEWORKS)}")
    if image_source not in IMAGE_SOURCES:
        raise ValueError(f"unknown image source {image_source!r}; choose one of {', '.join(IMAGE_SOURCES)}")
    if flavour not in FLAVOURS:
        raise ValueError(f"unknown flavour {flavour!r}; choose one of {', '.join(FLAVOURS)}")
    title = _FRAMEWORK_TITLE[framework]
    rejected: list[Rejected] = []
    warnings: list[str] = []
    os_name = (machine.system.os or "").lower()
    windows = os_name == "windows"

    if os_name == "macos":
        return Refusal(framework, "Docker on macOS cannot pass an NVIDIA GPU into a container (macOS has no "
                       "CUDA driver), so a GPU container set-up would not run here.",
                       "Generate the set-up for the Linux machine that has the GPU: run `gpusetup diagnose "
                       "--json > report.json` there and `gpusetup docker --for report.json` here.")
    if machine.system.is_jetson:
        return Refusal(framework, "This is a Jetson board: its GPU driver comes with JetPack/L4T and desktop "
                       "CUDA images (nvidia/cuda, pytorch/pytorch) do not run on it.",
                       "Use NVIDIA's L4T/JetPack containers for Jetson (nvcr.io/nvidia/l4t-*), which match "
                       "your JetPack release.")
    gpus = facts.gpu_targets(machine)
    if not gpus:
        other = [g.name or g.vendor for g in machine.gpus]
        seen = f" (found: {', '.join(str(o) for o in other)})" if other else ""
        return Refusal(framework, f"No NVIDIA GPU was found on this machine{seen}; the NVIDIA container "
                       "toolkit can only pass NVIDIA GPUs into containers.",
                       "If the report is from another machine, pass the GPU machine's report with --for. "
                       f"For a CPU-only container, install the CPU build of {title} on a plain python image.")
    dcuda, dsrc = facts.driver_cuda(machine)
    if dcuda is None:
        return Refusal(framework, "No NVIDIA driver is working on this machine. Containers bring their own "
                       "CUDA libraries but always use the host's driver, so nothing can run on the GPU yet.",
                       "Install the NVIDIA driver on the host first (`gpusetup plan` shows which one, "
                       "`gpusetup install --driver` installs it), then generate again.")
    if windows and framework == "tensorflow":
        rejected.append(Rejected("tensorflow GPU on native Windows",
                                 "TensorFlow 2.11 and later have no GPU build for native Windows; the "
                                 "container below is a Linux container (Docker Desktop's WSL2 back end), "
                                 "which is the supported way."))
    if windows:
        warnings.append("Windows: these are Linux containers. GPU access needs Docker Desktop with the WSL2 "
                        "back end (Settings → General → 'Use the WSL 2 based engine') and an up-to-date "
                        "Windows NVIDIA driver; do not install a Linux driver inside WSL.")
    for g in gpus:
        if g.cc is None:
            warnings.append(f"GPU {g.index} ({g.name}): its compute capability is unknown, so gpusetup "
                            "could not check that the build has kernels for it.")

    limit = dcuda
    forced = mm(cuda) if cuda else None
    if cuda and forced is None:
        raise ValueError(f"--cuda must look like 12.8, got {cuda!r}")
    if forced:
        if forced > dcuda:
            need = facts.toolkit_driver(forced, windows)
            return Refusal(
                framework,
                f"An image with CUDA {fmt(forced)} needs a driver that supports CUDA {fmt(forced)}, but this "
                f"driver ({machine.driver.version or 'version unknown'}) supports CUDA {fmt(dcuda)} "
                f"({dsrc}). The container would not start: 'unsatisfied condition: cuda>={fmt(forced)}'.",
                f"Use --cuda {fmt(dcuda)} (or leave --cuda out and let gpusetup pick), or upgrade the driver "
                + (f"to {need} or later." if need else f"to one that supports CUDA {fmt(forced)} (gpusetup knows no "
                   "driver for that CUDA version: check that it exists)."),
                rejected)
        limit = forced

    if image_source == "cuda":
        result = _choose_pip(machine, framework, gpus, dcuda, limit, forced, flavour, allow_unverified, rejected)
    else:
        result = _choose_framework_image(machine, framework, image_source, gpus, dcuda, limit, forced, rejected)
    result.warnings[:0] = warnings
    if isinstance(result, Selection):
        result.host_os = os_name or None
        result.why.insert(0, f"Host driver {machine.driver.version or '(version unknown)'} supports CUDA "
                          f"{fmt(dcuda)} ({dsrc}); the image's CUDA {fmt(result.image_cuda)} is not newer, so "
                          f"the container toolkit's 'cuda>={fmt(result.image_cuda)}' check passes.")
    return result


def _driver_ok_for_major(machine: Machine, major: int, dcuda: tuple[int, int]) -> tuple[bool, str | None]:
    """Minor-version compatibility: any CUDA ``major``.x build runs on a driver ≥ that major's family minimum."""
    windows = (machine.system.os or "").lower() == "windows"
    need = facts.family_minimum(major, windows)
    dv = vt(machine.driver.version)
    need_v = vt(need)
    if dv and need and need_v:
        return dv >= need_v, need
    return dcuda[0] >= major, need


def _gpu_cover(gpus: list[GpuTarget], kernels: list[str], ptx: list[str], min_cc: str | None) -> dict[int, str]:
    return {g.index: coverage(g.cc, kernels, ptx, min_cc) or "" for g in gpus}


def _image_supports(gpus: list[GpuTarget], image_cuda: tuple[int, int]) -> list[GpuTarget]:
    """GPUs the image's CUDA libraries do NOT support."""
    return [g for g in gpus if g.cc is not None and not facts.cuda_supports_cc(image_cuda, g.cc)]


def _cuda_rows(allow_unverified: bool) -> list[tuple[dict[str, Any], bool]]:
    rows = [(r, True) for r in facts.table("nvidia_cuda")["rows"]]
    if allow_unverified:
        rows += [(r, False) for r in facts.table("nvidia_cuda_newer")["rows"]]
    return rows


def _superseded(row: dict[str, Any], flavour: str) -> str | None:
    """A newer patch of the same X.Y in the unverified list: NVIDIA deletes the older tag six months later."""
    cuda = mm(row["cuda"])
    best = None
    for r in facts.table("nvidia_cuda_newer")["rows"]:
        if r["os"] == row["os"] and mm(r["cuda"]) == cuda and vt(r["cuda"]) > vt(row["cuda"]):  # type: ignore[operator]
            tag = r["tags"].get(flavour)
            if tag and (best is None or vt(r["cuda"]) > vt(best[0])):  # type: ignore[operator]
                best = (r["cuda"], tag)
    return f"nvidia/cuda:{best[1]}" if best else None


def _choose_pip(
    machine: Machine, framework: str, gpus: list[GpuTarget], dcuda: tuple[int, int], limit: tuple[int, int],
    forced: tuple[int, int] | None, flavour: str, allow_unverified: bool, rejected: list[Rejected],
) -> Selection | Refusal:
    arch = facts.host_arch(machine)
    builds = [r for r in facts.table("pip_builds")["rows"] if r["framework"] == framework]
    candidates: list[tuple[tuple[Any, ...], Selection]] = []
    driver_needs: list[str | None] = []
    kernel_blocked = image_blocked = 0
    for b in builds:
        label = f"{b['packages'][0]} ({b['variant']}, CUDA {b['cuda']})"
        if arch not in b["platforms"]:
            rejected.append(Rejected(label, f"no {arch} GPU build"))
            continue
        bcuda = mm(b["cuda"])
        assert bcuda is not None
        native = bcuda <= dcuda
        cover = _gpu_cover(gpus, b["kernels"].get(arch, []), b["ptx"].get(arch, []), b.get("min_cc"))
        if not native:  # PTX from a newer toolkit cannot be JIT-compiled by an older driver
            cover = {i: ("" if how == "ptx" else how) for i, how in cover.items()}
        if not any(cover.values()):
            kernel_blocked += 1
            ccs = ", ".join(f"{g.name} (CC {_cc(g)})" for g in gpus)
            rejected.append(Rejected(label, f"has no kernels for {ccs}"))
            continue
        ok, need = _driver_ok_for_major(machine, bcuda[0], dcuda)
        if not ok:
            driver_needs.append(need)
            rejected.append(Rejected(label, f"CUDA {bcuda[0]} builds need driver {need} or later; this one is "
                                            f"{machine.driver.version or 'older'}"))
            continue
        base = _choose_base(gpus, bcuda, limit, forced, flavour, b, allow_unverified)
        plain = None
        if base is None and not forced and flavour in ("base", "runtime"):
            plain = _choose_plain(b)
        if base is None and plain is None:
            image_blocked += 1
            rejected.append(Rejected(label, f"no nvidia/cuda '{flavour}' image with CUDA ≤ {fmt(limit)} and "
                                            f"Python {b['python_min']}–{b['python_max']} supports all the GPUs"))
            continue
        ptx_only = any(v == "ptx" for v in cover.values())
        n_cov = sum(1 for v in cover.values() if v)
        if plain is not None:
            repo, _, tag = plain["plain_image"].partition(":")
            sel = Selection(
                framework=framework, source="plain", repository=repo, tag=tag, digest=None, image_cuda=(0, 0),
                os=plain["os"], flavour=None, verified=False, build=b, framework_version=b["version"],
                python=mm(plain["python"]), driver_cuda=dcuda, gpus=gpus, coverage=cover, rejected=rejected,
            )
            candidates.append(((n_cov, not ptx_only, vt(b["version"]), False, False, native, bcuda), sel))
            continue
        assert base is not None
        row, verified = base
        icuda = mm(row["cuda"])
        assert icuda is not None
        sel = Selection(
            framework=framework, source="cuda", repository="nvidia/cuda", tag=row["tags"][flavour],
            digest=(row.get("digests") or {}).get(flavour), image_cuda=icuda, os=row["os"], flavour=flavour,
            verified=verified, build=b, framework_version=b["version"], python=facts.os_python(row["os"]),
            driver_cuda=dcuda, gpus=gpus, coverage=cover, rejected=rejected,
            superseded_by=_superseded(row, flavour) if verified else None,
        )
        key = (n_cov, not ptx_only, vt(b["version"]), True, verified, native, bcuda)
        candidates.append((key, sel))
    if not candidates:
        return _refuse(machine, framework, gpus, dcuda, rejected, driver_needs, kernel_blocked, image_blocked)
    candidates.sort(key=lambda kv: kv[0], reverse=True)
    sel = candidates[0][1]
    b = sel.build
    assert b is not None
    bcuda = mm(b["cuda"])
    assert bcuda is not None
    for _key, other in candidates[1:]:
        ob = other.build or {}
        if (ob.get("packages"), ob.get("variant")) != (b["packages"], b["variant"]):
            rejected.append(Rejected(f"{ob['packages'][0]} ({ob['variant']})", _why_lower(other, sel, dcuda)))
    sel.extra_packages = _pins(b, gpus)
    _explain_pip(sel, machine, bcuda, dcuda)
    return sel


def _why_lower(other: Selection, chosen: Selection, dcuda: tuple[int, int]) -> str:
    """One plain sentence on why a working alternative was not the pick."""
    ob, cb = other.build or {}, chosen.build or {}
    ocuda, ccuda = mm(ob.get("cuda")), mm(cb.get("cuda"))
    if sum(1 for v in other.coverage.values() if v) < sum(1 for v in chosen.coverage.values() if v):
        return "works, but not on every GPU here"
    if (vt(ob.get("version")) or ()) < (vt(cb.get("version")) or ()):
        return f"works too, but is an older release than {cb['version']}"
    if ocuda and ocuda > dcuda and ccuda and ccuda <= dcuda:
        return (f"works too (minor-version compatibility), but its CUDA {fmt(ocuda)} is newer than the driver's "
                f"{fmt(dcuda)}; the chosen build runs natively")
    if other.source == "plain" and chosen.source != "plain":
        return "works too on a plain Ubuntu image; an nvidia/cuda base is preferred"
    return f"works too, but is built for an older CUDA ({fmt(ocuda)})"


def _choose_base(
    gpus: list[GpuTarget], bcuda: tuple[int, int], limit: tuple[int, int], forced: tuple[int, int] | None,
    flavour: str, build: dict[str, Any], allow_unverified: bool,
) -> tuple[dict[str, Any], bool] | None:
    pmin, pmax = mm(build["python_min"]), mm(build["python_max"])
    best: tuple[tuple[Any, ...], tuple[dict[str, Any], bool]] | None = None
    for row, verified in _cuda_rows(allow_unverified):
        icuda = mm(row["cuda"])
        py = facts.os_python(row["os"])
        if icuda is None or py is None or flavour not in row["tags"]:
            continue
        if icuda > limit or (forced and icuda != forced):
            continue
        if not (pmin and pmax and pmin <= py <= pmax):
            continue
        if _image_supports(gpus, icuda):
            continue
        key = (verified, icuda[0] == bcuda[0], icuda <= bcuda, icuda, _OS_RANK.get(row["os"], 0))
        if best is None or key > best[0]:
            best = (key, (row, verified))
    return best[1] if best else None


def _choose_plain(build: dict[str, Any]) -> dict[str, Any] | None:
    """A plain Ubuntu image whose Python fits the build: pip wheels bring CUDA, the toolkit brings the driver."""
    pmin, pmax = mm(build["python_min"]), mm(build["python_max"])
    best = None
    for row in facts.table("os_python")["rows"]:
        py = mm(row["python"])
        if py and pmin and pmax and pmin <= py <= pmax and (
                best is None or _OS_RANK.get(row["os"], 0) > _OS_RANK.get(best["os"], 0)):
            best = row
    return best


def _pins(build: dict[str, Any], gpus: list[GpuTarget]) -> list[str]:
    pins = build.get("pins_if_cc_below")
    if not pins:
        return []
    limit = mm(pins["cc"])
    if limit and any(g.cc is not None and g.cc < limit for g in gpus):
        return list(pins["packages"])
    return []


def _explain_pip(sel: Selection, machine: Machine, bcuda: tuple[int, int], dcuda: tuple[int, int]) -> None:
    b = sel.build
    assert b is not None
    how = "natively" if bcuda <= dcuda else (
        f"through CUDA minor-version compatibility (driver supports {fmt(dcuda)}, the wheels are built "
        f"for {fmt(bcuda)}; same major, so it runs, though features newer than {fmt(dcuda)} are unavailable)")
    sel.why.append(f"{b['packages'][0]} ({b['variant']}) is the newest build in gpusetup's list that this "
                   f"driver runs {how}. Its wheels bring their own CUDA libraries, so the image only needs "
                   f"the driver from the host.")
    for g in sel.gpus:
        how_g = sel.coverage.get(g.index)
        if how_g == "sass":
            sel.why.append(f"GPU {g.index} {g.name} (compute capability {_cc(g)}): the build has native kernels.")
        elif how_g == "ptx":
            sel.why.append(f"GPU {g.index} {g.name} (compute capability {_cc(g)}): runs through PTX "
                           "(compiled just-in-time on first start, which can take minutes).")
            sel.warnings.append(f"GPU {g.index} runs this build only through PTX JIT compilation; the first "
                                "start is slow and the driver must be at least as new as the build's CUDA.")
        elif how_g == "min_cc":
            sel.why.append(f"GPU {g.index} {g.name} (compute capability {_cc(g)}) meets the build's "
                           f"minimum compute capability {b.get('min_cc')}.")
        elif how_g == "unknown":
            pass
        else:
            sel.warnings.append(f"GPU {g.index} {g.name} (compute capability {_cc(g)}) has no kernels in "
                                f"{b['packages'][0]} ({b['variant']}) and will be unusable in this container.")
    if sel.extra_packages:
        sel.why.append(f"Pinned {', '.join(sel.extra_packages)}: newer cuDNN releases dropped GPUs older "
                       f"than compute capability {b['pins_if_cc_below']['cc']}.")
    if sel.source == "plain":
        sel.why.append(f"Base image {sel.ref} (Python {fmt(sel.python)}): no nvidia/cuda image with CUDA ≤ "
                       f"{fmt(dcuda)} has a Python this build supports, and none is needed — the wheels bring "
                       "CUDA and the container toolkit brings the driver (NVIDIA_* variables set in the "
                       "Dockerfile).")
    else:
        sel.why.append(f"Base image nvidia/cuda:{sel.tag} ('{sel.flavour}' flavour, Python {fmt(sel.python)} "
                       f"from {sel.os}); its CUDA libraries support every GPU here.")
        if sel.flavour == "base":
            sel.why.append("The 'base' flavour, not 'runtime': the wheels already bring cuBLAS, cuDNN and the "
                           "other CUDA libraries, and 'runtime' would add a second copy at a different CUDA "
                           "version (larger image, two libraries of one name). Use --flavour devel for nvcc.")
    if not sel.verified and sel.source == "cuda":
        sel.warnings.append(f"The tag nvidia/cuda:{sel.tag} comes from an unverified list; if `docker pull` "
                            "cannot find it, regenerate without --allow-unverified.")
    if sel.superseded_by:
        sel.warnings.append(f"NVIDIA deletes a tag six months after a newer patch of the same CUDA version; "
                            f"if nvidia/cuda:{sel.tag} can no longer be pulled, use {sel.superseded_by} "
                            "(seen in an unverified list).")


def _choose_framework_image(
    machine: Machine, framework: str, source: str, gpus: list[GpuTarget], dcuda: tuple[int, int],
    limit: tuple[int, int], forced: tuple[int, int] | None, rejected: list[Rejected],
) -> Selection | Refusal:
    rows = [r for r in facts.table("framework_images")["rows"] if r["source"] == source]
    name = "official framework" if source == "official" else "NGC"
    if facts.host_arch(machine) != "x86_64":
        return Refusal(framework, f"gpusetup's {name} image list covers x86_64 only; this host is "
                       f"{machine.system.arch}.", "Use the default nvidia/cuda base (leave out --image-source).",
                       rejected)
    if not any(r["framework"] == framework for r in rows):
        return Refusal(framework, f"gpusetup's image list has no {name} image for {framework}.",
                       "Use the default nvidia/cuda base with a pip-installed build (leave out --image-source).",
                       rejected)
    candidates: list[tuple[tuple[Any, ...], Selection]] = []
    driver_needs: list[str | None] = []
    kernel_blocked = 0
    windows = (machine.system.os or "").lower() == "windows"
    for r in rows:
        if r["framework"] != framework:
            continue
        label = f"{r['repository']}:{r['tag']}"
        icuda = mm(r["cuda"])
        assert icuda is not None
        forward = None
        if icuda > limit and not forced and source == "ngc":
            forward, why_not = _forward_compat(machine, r, gpus)
        if forward is None and (icuda > limit or (forced and icuda != forced)):
            driver_needs.append(facts.toolkit_driver(icuda, windows))
            reason = (f"needs CUDA {fmt(icuda)}; the driver supports {fmt(dcuda)}" if icuda > dcuda
                      else f"CUDA {fmt(icuda)} is not the requested {fmt(forced)}")
            if icuda > dcuda and source == "ngc" and why_not:
                reason += f" ({why_not})"
            rejected.append(Rejected(label, reason))
            continue
        bad = _image_supports(gpus, icuda)
        cover = _gpu_cover(gpus, r["kernels"], r["ptx"], r.get("min_cc"))
        for g in bad:
            cover[g.index] = ""
        if not any(cover.values()):
            kernel_blocked += 1
            rejected.append(Rejected(label, "has no kernels for " + ", ".join(f"{g.name} (CC {_cc(g)})" for g in gpus)))
            continue
        sel = Selection(
            framework=framework, source=source, repository=r["repository"], tag=r["tag"], digest=r.get("digest"),
            image_cuda=icuda, verified=False, framework_version=r.get("framework_version"), driver_cuda=dcuda,
            gpus=gpus, coverage=cover, rejected=rejected, size_note=r.get("size_note"),
        )
        if forward:
            sel.why.append(forward)
            sel.warnings.append(f"{sel.ref} runs here only through CUDA forward compatibility: keep the driver on "
                                "its current branch, and expect the container to say so when it starts.")
        key = (sum(1 for v in cover.values() if v), vt(r.get("framework_version") or r["tag"]) or (0,), icuda)
        candidates.append((key, sel))
    if not candidates:
        return _refuse(machine, framework, gpus, dcuda, rejected, driver_needs, kernel_blocked, 0)
    candidates.sort(key=lambda kv: kv[0], reverse=True)
    sel = candidates[0][1]
    fv = sel.framework_version or "(version not in our data)"
    sel.why.append(f"{sel.ref} has {_FRAMEWORK_TITLE[framework]} {fv} preinstalled, built on CUDA "
                   f"{fmt(sel.image_cuda)}; it is the newest {name} image in gpusetup's list this host can run.")
    for g in gpus:
        if not sel.coverage.get(g.index):
            sel.warnings.append(f"GPU {g.index} {g.name} (compute capability {_cc(g)}) is not supported by "
                                f"{sel.ref} and will be unusable in this container.")
    sel.warnings.append(f"{name} image facts (kernels, CUDA) come from secondary sources in gpusetup's "
                        "list (unverified); the default nvidia/cuda + pip set-up is checked more strictly.")
    if sel.size_note:
        sel.warnings.append(f"{sel.ref} is large ({sel.size_note}); the first pull takes a while.")
    return sel


def _forward_compat(machine: Machine, row: dict[str, Any], gpus: list[GpuTarget]) -> tuple[str | None, str]:
    """(why it runs through forward compatibility, or None; why not, when not).

    NGC images carry the CUDA forward-compatibility package, which lets a newer CUDA run on an older driver,
    but only on data-centre GPUs and only on the driver branches the image's release notes list (kept in
    the row's ``forward_compat``, with its source). Consumer and workstation GPUs need the full driver.
    """
    from gpusetup.selftest.peaks import load_specs

    fc = row.get("forward_compat")
    specs = load_specs()
    not_dc = [g for g in gpus if (spec := specs.find(g.name)) is None or spec.segment != "datacenter"]
    if not_dc:
        return None, ("CUDA forward compatibility, which could bridge that, works on data-centre GPUs only, "
                      f"not on {', '.join(g.name for g in not_dc)}")
    if not fc:
        return None, "its release notes in gpusetup's list name no forward-compatible driver branches"
    dv = vt(machine.driver.version)
    branch = (machine.driver.version or "").split(".")[0]
    for low in fc["min_drivers"]:
        if low.split(".")[0] == branch and dv is not None and dv >= (vt(low) or ()):
            return (f"CUDA {row['cuda']} is newer than this driver supports, but on data-centre GPUs the "
                    f"image's CUDA forward-compatibility package bridges it: its release notes list driver "
                    f"{low} (or later R{branch}), and this is {machine.driver.version} ({fc['source']})."), ""
    listed = ", ".join(f"R{x.split('.')[0]} from {x}" for x in fc["min_drivers"])
    return None, (f"CUDA forward compatibility covers only driver branches {listed}; this driver is "
                  f"{machine.driver.version or 'unknown'}")


def _refuse(
    machine: Machine, framework: str, gpus: list[GpuTarget], dcuda: tuple[int, int], rejected: list[Rejected],
    driver_needs: list[str | None], kernel_blocked: int, image_blocked: int,
) -> Refusal:
    title = _FRAMEWORK_TITLE[framework]
    if driver_needs:
        known = sorted((vt(n), n) for n in driver_needs if n and vt(n))
        need = known[0][1] if known else None
        return Refusal(framework, f"This driver ({machine.driver.version or 'version unknown'}, CUDA "
                       f"{fmt(dcuda)}) is too old for every {title} build in gpusetup's list that has kernels "
                       "for this GPU.",
                       f"Upgrade the NVIDIA driver to {need or 'a current release'} or later "
                       "(`gpusetup plan` names the branch for your GPU), then generate again.", rejected)
    if kernel_blocked and not image_blocked:
        ccs = ", ".join(f"{g.name} (compute capability {_cc(g)})" for g in gpus)
        return Refusal(framework, f"None of the {title} builds in gpusetup's list has kernels for {ccs}: "
                       "the GPU is older than what current builds are compiled for, and the framework would "
                       "fail with 'no kernel image is available for execution on the device'.",
                       f"Run {title} on the CPU, build it from source for this GPU, or use a newer GPU "
                       "(compute capability 7.5 or later is supported by every current build).", rejected)
    first = rejected[0].reason if rejected else "no image in gpusetup's list fits"
    return Refusal(framework, f"No {title} image in gpusetup's list fits this host: {first}.",
                   "Upgrade the NVIDIA driver (`gpusetup plan` shows which), or try another --image-source.",
                   rejected)
