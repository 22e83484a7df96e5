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
from gpusetup.generate.facts import DeviceRef, fmt, mm, vt
from gpusetup.messages import msg, render
from gpusetup.model import Machine, Message, Rejected
from gpusetup.versions import ComputeCapability, Version, kernel_coverage

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
    gpus: list[DeviceRef] = field(default_factory=list)
    coverage: dict[int, str] = field(default_factory=dict)  # gpu index → sass / ptx / min_cc / unknown
    why: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    why_codes: list[Message] = field(default_factory=list)  # ``why`` as data, in the same order
    warning_codes: list[Message] = field(default_factory=list)  # ``warnings`` as data, in the same order
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
    """No image can work on this host: why, and what to change (as messages; ``reason``/``alternative`` are
    their English words)."""

    framework: str
    reason_code: Message
    alternative_code: Message
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warning_codes: list[Message] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return render(self.reason_code)

    @property
    def alternative(self) -> str:
        return render(self.alternative_code)


def add(texts: list[str], codes: list[Message], message: Message) -> None:
    """Append a reason or warning: its English words to ``texts``, the message to ``codes`` (kept parallel)."""
    texts.append(render(message))
    codes.append(message)


def _rejected(option: str, reason: Message) -> Rejected:
    return Rejected(option=option, reason=render(reason), code=reason.code, params=dict(reason.params))


def _text(v: Version | None) -> str | None:
    """A known version as the text message parameters carry."""
    return str(v) if v else None


def _unknown_version(v: Version | None) -> str | Message:
    return str(v) if v else msg("docker.word.version-unknown")


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


def _cc(g: DeviceRef) -> str:
    return str(g.cc) if g.cc else "unknown"


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
    warning_codes: list[Message] = []
    os_name = (machine.system.os or "").lower()
    windows = os_name == "windows"

    if os_name == "macos":
        return Refusal(framework, msg("docker.refuse.macos"), msg("docker.alt.macos"))
    if machine.system.is_jetson:
        return Refusal(framework, msg("docker.refuse.jetson"), msg("docker.alt.jetson"))
    gpus = facts.gpu_targets(machine)
    if not gpus:
        other = [g.name or g.vendor for g in machine.gpus]
        seen = msg("docker.word.found", gpus=", ".join(str(o) for o in other)) if other else ""
        return Refusal(framework, msg("docker.refuse.no-nvidia-gpu", seen=seen),
                       msg("docker.alt.no-nvidia-gpu", title=title))
    dcuda, dsrc = facts.driver_cuda(machine)
    if dcuda is None:
        return Refusal(framework, msg("docker.refuse.no-driver"), msg("docker.alt.no-driver"))
    if windows and framework == "tensorflow":
        rejected.append(_rejected("tensorflow GPU on native Windows", msg("docker.reject.tensorflow-windows")))
    if windows:
        add(warnings, warning_codes, msg("docker.warn.windows-wsl2"))
    for g in gpus:
        if g.cc is None:
            add(warnings, warning_codes, msg("docker.warn.cc-unknown", index=g.index, name=g.name))

    limit = dcuda
    forced = mm(cuda) if cuda else None
    if cuda and forced is None:
        raise ValueError(f"--cuda must look like 12.8, got {cuda!r}")
    if forced:
        if forced > dcuda:
            need = facts.toolkit_driver(forced, windows)
            return Refusal(
                framework,
                msg("docker.refuse.cuda-too-new", cuda=fmt(forced), driver=_unknown_version(machine.driver.version),
                    dcuda=fmt(dcuda), source=dsrc),
                msg("docker.alt.cuda-too-new", dcuda=fmt(dcuda),
                    upgrade=msg("docker.word.upgrade-to", need=need) if need
                    else msg("docker.word.upgrade-unknown", cuda=fmt(forced))),
                rejected)
        limit = forced

    if image_source == "cuda":
        result = _choose_pip(machine, framework, gpus, dcuda, limit, forced, flavour, allow_unverified, rejected)
    else:
        result = _choose_framework_image(machine, framework, image_source, gpus, dcuda, limit, forced, rejected)
    result.warnings[:0] = warnings
    result.warning_codes[:0] = warning_codes
    if isinstance(result, Selection):
        result.host_os = os_name or None
        first = msg("docker.why.driver-check", driver=_text(machine.driver.version) or msg("docker.word.version-unknown-parens"),
                    dcuda=fmt(dcuda), source=dsrc, icuda=fmt(result.image_cuda))
        result.why.insert(0, render(first))
        result.why_codes.insert(0, first)
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


def _gpu_cover(gpus: list[DeviceRef], kernels: list[str], ptx: list[str], min_cc: str | None) -> dict[int, str]:
    return {g.index: coverage(g.cc, kernels, ptx, min_cc) or "" for g in gpus}


def _image_supports(gpus: list[DeviceRef], image_cuda: tuple[int, int]) -> list[DeviceRef]:
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
    machine: Machine, framework: str, gpus: list[DeviceRef], dcuda: tuple[int, int], limit: tuple[int, int],
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
            rejected.append(_rejected(label, msg("docker.reject.no-arch-build", arch=arch)))
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
            rejected.append(_rejected(label, msg("docker.reject.no-kernels", gpus=ccs)))
            continue
        ok, need = _driver_ok_for_major(machine, bcuda[0], dcuda)
        if not ok:
            driver_needs.append(need)
            rejected.append(_rejected(label, msg("docker.reject.driver-family", major=bcuda[0], need=need,
                                                 have=_text(machine.driver.version) or msg("docker.word.older"))))
            continue
        base = _choose_base(gpus, bcuda, limit, forced, flavour, b, allow_unverified)
        plain = None
        if base is None and not forced and flavour in ("base", "runtime"):
            plain = _choose_plain(b)
        if base is None and plain is None:
            image_blocked += 1
            rejected.append(_rejected(label, msg("docker.reject.no-base-image", flavour=flavour, limit=fmt(limit),
                                                 pmin=b["python_min"], pmax=b["python_max"])))
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
            rejected.append(_rejected(f"{ob['packages'][0]} ({ob['variant']})", _why_lower(other, sel, dcuda)))
    sel.extra_packages = _pins(b, gpus)
    _explain_pip(sel, machine, bcuda, dcuda)
    return sel


def _why_lower(other: Selection, chosen: Selection, dcuda: tuple[int, int]) -> Message:
    """One plain sentence on why a working alternative was not the pick."""
    ob, cb = other.build or {}, chosen.build or {}
    ocuda, ccuda = mm(ob.get("cuda")), mm(cb.get("cuda"))
    if sum(1 for v in other.coverage.values() if v) < sum(1 for v in chosen.coverage.values() if v):
        return msg("docker.lower.not-every-gpu")
    if (vt(ob.get("version")) or ()) < (vt(cb.get("version")) or ()):
        return msg("docker.lower.older-release", version=cb["version"])
    if ocuda and ocuda > dcuda and ccuda and ccuda <= dcuda:
        return msg("docker.lower.minor-compat", cuda=fmt(ocuda), dcuda=fmt(dcuda))
    if other.source == "plain" and chosen.source != "plain":
        return msg("docker.lower.plain-image")
    return msg("docker.lower.older-cuda", cuda=fmt(ocuda))


def _choose_base(
    gpus: list[DeviceRef], bcuda: tuple[int, int], limit: tuple[int, int], forced: tuple[int, int] | None,
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


def _pins(build: dict[str, Any], gpus: list[DeviceRef]) -> list[str]:
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
    how = msg("docker.word.natively") if bcuda <= dcuda else msg("docker.word.minor-compat", dcuda=fmt(dcuda),
                                                                     bcuda=fmt(bcuda))
    package, variant = b["packages"][0], b["variant"]
    why, warn = sel.why, sel.warnings
    add(why, sel.why_codes, msg("docker.why.pip-build", package=package, variant=variant, how=how))
    for g in sel.gpus:
        how_g = sel.coverage.get(g.index)
        if how_g == "sass":
            add(why, sel.why_codes, msg("docker.why.gpu-sass", index=g.index, name=g.name, cc=_cc(g)))
        elif how_g == "ptx":
            add(why, sel.why_codes, msg("docker.why.gpu-ptx", index=g.index, name=g.name, cc=_cc(g)))
            add(warn, sel.warning_codes, msg("docker.warn.gpu-ptx", index=g.index))
        elif how_g == "min_cc":
            add(why, sel.why_codes, msg("docker.why.gpu-min-cc", index=g.index, name=g.name, cc=_cc(g),
                                        min_cc=b.get("min_cc")))
        elif how_g == "unknown":
            pass
        else:
            add(warn, sel.warning_codes, msg("docker.warn.gpu-no-kernels", index=g.index, name=g.name, cc=_cc(g),
                                             package=package, variant=variant))
    if sel.extra_packages:
        add(why, sel.why_codes, msg("docker.why.pinned", packages=", ".join(sel.extra_packages),
                                    cc=b["pins_if_cc_below"]["cc"]))
    if sel.source == "plain":
        add(why, sel.why_codes, msg("docker.why.plain-base", ref=sel.ref, python=fmt(sel.python), dcuda=fmt(dcuda)))
    else:
        add(why, sel.why_codes, msg("docker.why.cuda-base", tag=sel.tag, flavour=sel.flavour,
                                    python=fmt(sel.python), os=sel.os))
        if sel.flavour == "base":
            add(why, sel.why_codes, msg("docker.why.base-flavour"))
    if not sel.verified and sel.source == "cuda":
        add(warn, sel.warning_codes, msg("docker.warn.unverified-tag", tag=sel.tag))
    if sel.superseded_by:
        add(warn, sel.warning_codes, msg("docker.warn.superseded", tag=sel.tag, newer=sel.superseded_by))


def _choose_framework_image(
    machine: Machine, framework: str, source: str, gpus: list[DeviceRef], dcuda: tuple[int, int],
    limit: tuple[int, int], forced: tuple[int, int] | None, rejected: list[Rejected],
) -> Selection | Refusal:
    rows = [r for r in facts.table("framework_images")["rows"] if r["source"] == source]
    name = msg("docker.word.official") if source == "official" else msg("docker.word.ngc")
    if facts.host_arch(machine) != "x86_64":
        return Refusal(framework, msg("docker.refuse.image-list-x86", name=name, arch=machine.system.arch),
                       msg("docker.alt.default-base"), rejected)
    if not any(r["framework"] == framework for r in rows):
        return Refusal(framework, msg("docker.refuse.no-framework-image", name=name, framework=framework),
                       msg("docker.alt.default-pip"), rejected)
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
        forward: Message | None = None
        why_not: Message | None = None
        if icuda > limit and not forced and source == "ngc":
            forward, why_not = _forward_compat(machine, r, gpus)
        if forward is None and (icuda > limit or (forced and icuda != forced)):
            driver_needs.append(facts.toolkit_driver(icuda, windows))
            if icuda > dcuda:
                extra = msg("docker.word.parens", text=why_not) if source == "ngc" and why_not else ""
                reason = msg("docker.reject.image-needs-cuda", icuda=fmt(icuda), dcuda=fmt(dcuda), extra=extra)
            else:
                reason = msg("docker.reject.not-requested-cuda", icuda=fmt(icuda), forced=fmt(forced))
            rejected.append(_rejected(label, reason))
            continue
        bad = _image_supports(gpus, icuda)
        cover = _gpu_cover(gpus, r["kernels"], r["ptx"], r.get("min_cc"))
        for g in bad:
            cover[g.index] = ""
        if not any(cover.values()):
            kernel_blocked += 1
            rejected.append(_rejected(label, msg("docker.reject.no-kernels",
                                                 gpus=", ".join(f"{g.name} (CC {_cc(g)})" for g in gpus))))
            continue
        sel = Selection(
            framework=framework, source=source, repository=r["repository"], tag=r["tag"], digest=r.get("digest"),
            image_cuda=icuda, verified=False, framework_version=r.get("framework_version"), driver_cuda=dcuda,
            gpus=gpus, coverage=cover, rejected=rejected, size_note=r.get("size_note"),
        )
        if forward:
            add(sel.why, sel.why_codes, forward)
            add(sel.warnings, sel.warning_codes, msg("docker.warn.forward-compat", ref=sel.ref))
        key = (sum(1 for v in cover.values() if v), vt(r.get("framework_version") or r["tag"]) or (0,), icuda)
        candidates.append((key, sel))
    if not candidates:
        return _refuse(machine, framework, gpus, dcuda, rejected, driver_needs, kernel_blocked, 0)
    candidates.sort(key=lambda kv: kv[0], reverse=True)
    sel = candidates[0][1]
    fv = sel.framework_version or msg("docker.word.version-not-in-data")
    add(sel.why, sel.why_codes, msg("docker.why.framework-image", ref=sel.ref, title=_FRAMEWORK_TITLE[framework],
                                    version=fv, icuda=fmt(sel.image_cuda), name=name))
    for g in gpus:
        if not sel.coverage.get(g.index):
            add(sel.warnings, sel.warning_codes, msg("docker.warn.gpu-unsupported-image", index=g.index,
                                                     name=g.name, cc=_cc(g), ref=sel.ref))
    add(sel.warnings, sel.warning_codes, msg("docker.warn.secondary-sources", name=name))
    if sel.size_note:
        add(sel.warnings, sel.warning_codes, msg("docker.warn.large-image", ref=sel.ref, size=sel.size_note))
    return sel


def _forward_compat(machine: Machine, row: dict[str, Any], gpus: list[DeviceRef]) -> tuple[Message | None, Message | None]:
    """(why it runs through forward compatibility, or None; why not, when not).

    NGC images carry the CUDA forward-compatibility package, which lets a newer CUDA run on an older driver,
    but only on data-centre GPUs and only on the driver branches the image's release notes list (kept in
    the row's ``forward_compat``, with its source). Consumer and workstation GPUs need the full driver.
    """
    fc = row.get("forward_compat")
    # lazy: the self-test package (for its spec table) costs 16 ms (python -X importtime) of every `docker`
    from gpusetup.selftest.peaks import load_specs

    specs = load_specs()
    not_dc = [g for g in gpus if (spec := specs.find(g.name)) is None or spec.segment != "datacenter"]
    if not_dc:
        return None, msg("docker.fc.not-datacenter", gpus=", ".join(g.name for g in not_dc))
    if not fc:
        return None, msg("docker.fc.no-branches")
    dv = vt(machine.driver.version)
    branch = str(dv.major) if dv and dv.major is not None else ""
    for low in fc["min_drivers"]:
        if dv is not None and Version(low).major == dv.major and dv >= Version(low):
            return msg("docker.fc.bridges", cuda=row["cuda"], low=low, branch=branch,
                       driver=str(dv), source=fc["source"]), None
    listed = ", ".join(f"R{Version(x).major} from {x}" for x in fc["min_drivers"])
    return None, msg("docker.fc.branches-only", listed=listed,
                     driver=str(dv) if dv else msg("docker.word.unknown"))


def _refuse(
    machine: Machine, framework: str, gpus: list[DeviceRef], dcuda: tuple[int, int], rejected: list[Rejected],
    driver_needs: list[str | None], kernel_blocked: int, image_blocked: int,
) -> Refusal:
    title = _FRAMEWORK_TITLE[framework]
    if driver_needs:
        known = sorted((vt(n), n) for n in driver_needs if n and vt(n))
        need = known[0][1] if known else None
        return Refusal(framework, msg("docker.refuse.driver-too-old", driver=_unknown_version(machine.driver.version),
                                      dcuda=fmt(dcuda), title=title),
                       msg("docker.alt.upgrade-driver", need=need or msg("docker.word.current-release")), rejected)
    if kernel_blocked and not image_blocked:
        ccs = ", ".join(f"{g.name} (compute capability {_cc(g)})" for g in gpus)
        return Refusal(framework, msg("docker.refuse.gpu-too-old", title=title, gpus=ccs),
                       msg("docker.alt.gpu-too-old", title=title), rejected)
    first: Message | str = msg("docker.word.nothing-fits")
    if rejected:
        first = Message(rejected[0].code, dict(rejected[0].params)) if rejected[0].code else rejected[0].reason
    return Refusal(framework, msg("docker.refuse.nothing-fits", title=title, first=first),
                   msg("docker.alt.nothing-fits"), rejected)
