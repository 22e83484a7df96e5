"""Never a crash on a machine: generated machine profiles across OS, architecture, Python (3.6-3.16, free-threaded),
macOS release, driver (none, branches 300-600), GPU mixes (NVIDIA of every compute capability, AMD gfx targets,
Intel, Apple) and frameworks, each planned and checked against invariants read from the data itself:

1. planning never raises, and every framework gets a plan with a build to install;
2. the chosen build (and the GPU build an action enables) has a wheel in the data for that Python and platform;
3. a CUDA build's family minimum driver is at or below the machine's driver, or a driver action raises it;
4. every GPU the plan says it uses has kernels in the chosen build (cubins/PTX, gfx targets, JAX's minimum);
5. a rejection reason that states a comparison (Python, driver, macOS, compute capability) states a true one.

CI runs ``GPUSETUP_PROPERTY_EXAMPLES`` examples (default 1500, derandomized, about a minute on one core);
``benchmarks/resolver_properties.py`` runs many more with fresh seeds.
"""

from __future__ import annotations

import os
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusetup.compat import wheels as W
from gpusetup.compat.builds import cuda_of_variant
from gpusetup.compat.db import get_db
from gpusetup.compat.profile import machine_from_data
from gpusetup.compat.resolver import resolve
from gpusetup.model import Message
from gpusetup.versions import ComputeCapability, PythonVersion, Version, kernel_coverage, planned_python

EXAMPLES = int(os.environ.get("GPUSETUP_PROPERTY_EXAMPLES", "1500"))
RANDOM = os.environ.get("GPUSETUP_PROPERTY_RANDOM") == "1"  # benchmarks: fresh seeds instead of a fixed run

CCS = ["1.0", "1.3", "2.0", "2.1", "3.0", "3.2", "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2",
       "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"]
GFX = ["gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1031", "gfx1032",
       "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201"]
MACOS = ["10.15.7", "11.7", "12.6", "13.6.1", "14.5", "15.1", "26.0"]

nvidia = st.builds(lambda cc: {"vendor": "nvidia", "name": f"NVIDIA GPU sm_{cc}", "compute_capability": cc},
                   st.sampled_from(CCS))
nvidia_unknown = st.just({"vendor": "nvidia", "name": "NVIDIA Graphics Device"})
amd = st.builds(lambda gfx: {"vendor": "amd", "name": f"AMD {gfx}", "gfx": gfx}, st.sampled_from(GFX))
intel = st.just({"vendor": "intel", "name": "Intel Arc A770"})
apple = st.just({"vendor": "apple", "name": "Apple M3"})
gpu = st.one_of(nvidia, nvidia, nvidia, nvidia_unknown, amd, amd, intel, apple)

python = st.one_of(
    st.none(),
    st.builds(lambda minor, patch, ft: f"3.{minor}" + (f".{patch}" if patch is not None else "") + ("t" if ft else ""),
              st.integers(6, 16), st.one_of(st.none(), st.integers(0, 12)), st.booleans()),
)
driver = st.one_of(st.none(), st.builds(lambda b, m, p: f"{b}.{m}" + (f".{p:02d}" if p is not None else ""),
                                        st.integers(300, 600), st.integers(0, 199), st.one_of(st.none(), st.integers(0, 99))))


@st.composite
def machines(draw: Any) -> tuple[dict[str, Any], list[str], int | None]:
    os_name = draw(st.sampled_from(["linux", "linux", "windows", "macos"]))
    prof: dict[str, Any] = {"os": os_name}
    if os_name == "linux":
        prof["arch"] = draw(st.sampled_from(["x86_64", "x86_64", "aarch64"]))
        prof["wsl"] = prof["arch"] == "x86_64" and draw(st.booleans())
        prof["jetson"] = prof["arch"] == "aarch64" and draw(st.integers(0, 5)) == 0
    elif os_name == "windows":
        prof["arch"] = draw(st.sampled_from(["x86_64", "x86_64", "arm64"]))
    else:
        prof["arch"] = draw(st.sampled_from(["arm64", "x86_64"]))
        mac = draw(st.one_of(st.none(), st.sampled_from(MACOS)))
        if mac:
            prof["macos"] = mac
    py = draw(python)
    if py:
        prof["python"] = py
    drv = draw(driver)
    if drv:
        prof["driver"] = drv
    prof["gpus"] = draw(st.lists(gpu, max_size=4))
    frameworks = draw(st.lists(st.sampled_from(["pytorch", "tensorflow", "jax"]), min_size=1, max_size=3, unique=True))
    index = draw(st.one_of(st.none(), st.integers(0, len(prof["gpus"]) - 1))) if prof["gpus"] else None
    return prof, frameworks, index


# ----------------------------------------------------------------------------------- invariants


def _platform(machine: Any) -> str:
    s = machine.system
    arch = (s.arch or "x86_64").lower()
    if s.wsl or s.os == "linux":
        return f"linux-{'aarch64' if arch in ('aarch64', 'arm64') else 'x86_64'}"
    if s.os == "windows":
        return f"windows-{'x86_64' if arch in ('x86_64', 'amd64') else 'arm64'}"
    return f"macos-{'arm64' if arch in ('arm64', 'aarch64') else 'x86_64'}"


def _target(machine: Any, python: str | None) -> W.Target:
    s = machine.system
    mac = Version.parse(s.os_version) if s.os == "macos" else None
    return W.Target(_platform(machine), planned_python(python) if python else None, mac)


def _pin(spec: str) -> tuple[str, str, bool]:
    m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?==([0-9][0-9a-zA-Z.]*?)(\.\*)?$", spec)
    assert m, spec
    return m.group(1), m.group(3), bool(m.group(4))


def _exists(choice: Any, machine: Any, any_python: bool) -> None:
    """Invariant 2: a release the pin admits has a wheel for this platform (and this Python)."""
    if choice.variant == "directml":
        return
    wh = W.get(get_db())
    project, version, prefix = _pin(choice.packages[0])
    python = None if any_python or not choice.python or not PythonVersion.parse(choice.python) else choice.python
    target = _target(machine, python)
    if project == "jax":
        project = "jaxlib"
    rows = [r for r in wh.releases(project)
            if (W.series_of(r["version"]) == version if prefix else Version(r["version"]) == Version(version))]
    assert rows, f"{choice.packages[0]}: no release in the data"
    assert any(W.fits(r, target) for r in rows), f"{choice.packages[0]}: no wheel for {target}"


def _cuda_of(framework: str, choice: Any) -> str | None:
    v = choice.variant
    if framework == "pytorch" and re.fullmatch(r"cu\d{3}", v):
        return cuda_of_variant(v)
    if framework == "jax" and re.fullmatch(r"cuda\d+", v):
        return f"{v[4:]}.0"
    if framework == "tensorflow" and (v == "and-cuda" or v.startswith("cuda")):
        table = "tested_configs_windows" if v.startswith("cuda") and choice.conda and "11.2" in v else "tested_configs"
        row = next((r for r in get_db().rows("tensorflow", table) if r["version"] == choice.version), None)
        return row["cuda"] if row else None
    return None


def _family_min(cuda: str, driver_os: str) -> str | None:
    db = get_db()
    major = Version(cuda).major or 0
    return db.family_minimum(major, driver_os) if major >= 11 else db.min_driver_for_cuda(cuda, driver_os)


def _driver(plan: Any, machine: Any) -> None:
    """Invariant 3."""
    s = machine.system
    if s.is_jetson or any(n.code == "note.jetson-inferred" for n in plan.note_codes):
        return  # a Jetson's driver comes with JetPack (the resolver infers one from a Tegra-only compute capability)
    driver_os = "windows" if (s.wsl or s.os == "windows") else "linux"
    have = machine.driver.version
    if plan.ok and plan.choice is not None:
        cuda = _cuda_of(plan.framework, plan.choice)
        need = _family_min(cuda, driver_os) if cuda else None
        if need:
            assert have is not None and have >= Version(need), (plan.choice, need, have)
    if not plan.ok and plan.gpu_choice is not None:
        wsl = any(a.kind == "use-wsl2" for a in plan.actions)
        cuda = _cuda_of(plan.framework, plan.gpu_choice)
        need = _family_min(cuda, "windows" if wsl else driver_os) if cuda else None
        if need and (have is None or have < Version(need)):
            raises = [a for a in plan.actions if a.kind in ("install-driver", "upgrade-driver")]
            assert raises and Version(raises[0].min_version) >= Version(need), (plan.actions, need)


def _kernels(plan: Any, machine: Any) -> None:
    """Invariant 4: every GPU the plan uses has kernels in the build it uses."""
    choice = plan.choice if plan.ok else plan.gpu_choice
    if choice is None or choice.variant in ("cpu", "directml", "mps", "xpu"):
        return
    db = get_db()
    s = machine.system
    os_name = "linux" if (s.wsl or s.os == "linux") else s.os
    arch = "aarch64" if (s.arch or "").lower() in ("aarch64", "arm64") else "x86_64"
    for i in plan.gpus_covered:
        g = machine.gpus[i]
        if g.vendor == "nvidia" and g.compute_capability is not None:
            cc = g.compute_capability
            if plan.framework == "pytorch":
                row = next(r for r in db.rows("pytorch", "arch_lists")
                           if r["variant"] == choice.variant and r["os"] == os_name and r["machine"] == arch
                           and Version(r["torch_min"]) <= Version(choice.version) <= Version(r["torch_max"]))
                assert kernel_coverage(cc, row["cc"], row["ptx"]), (choice, cc)
            elif plan.framework == "jax":
                ex = next(r for r in db.rows("jax", "extras") if r["extra"] == choice.variant)
                assert cc >= ComputeCapability.parse(ex["min_cc"]), (choice, cc)
            else:
                rows = W.get(db).series("tensorflow", choice.version)
                arch_row = next((r for r in db.rows("tensorflow", "arch_lists") if r["os"] == os_name
                                 and Version(r["tf_min"]) <= Version(choice.version) <= Version(r.get("tf_max") or "99")),
                                None)
                codes = [a for r in rows for a in ((r.get("builds") or {}).get(f"{os_name}-{arch}") or {}).get("arch", [])]
                if arch_row:
                    assert kernel_coverage(cc, arch_row["cc"], arch_row["ptx"]), (choice, cc)
                elif codes:
                    assert kernel_coverage(cc, [c for c in codes], [c for c in codes if c.startswith("compute")]), (choice, cc)
        if g.vendor == "amd":
            assert g.gfx_target, plan
            gfx_rows = db.rows("rocm", "index_gfx")
            if plan.framework == "pytorch":
                row = next(r for r in gfx_rows if r["index"] == choice.variant)
            else:  # JAX: the ROCm major of the plugin the extra pulls (jax-rocm7-plugin → the newest rocm7.x list)
                rel = W.get(db).release("jax", choice.version)
                plugin = next(s for s in rel["extras"][choice.variant] if s.startswith("jax-rocm"))
                major = "6" if plugin.startswith("jax-rocm60") else re.match(r"jax-rocm(\d+)", plugin).group(1)
                row = max((r for r in gfx_rows if r["index"].startswith(f"rocm{major}.")),
                          key=lambda r: Version(r["index"][4:]))
            assert g.gfx_target in row["gfx"] or choice.env.get("HSA_OVERRIDE_GFX_VERSION") == "10.3.0", (choice, g)


def _reasons(msg: Message | Any, machine: Any) -> None:
    """Invariant 5: comparisons stated in rejection reasons hold for this machine."""
    if not isinstance(msg, Message):
        return
    p = msg.params
    if msg.code == "reason.several":
        for m in p["reasons"]:
            _reasons(m, machine)
    elif msg.code == "reason.python-too-old":
        assert Version(PythonVersion.parse(p["have"]).release) < Version(p["min"].rstrip("t")), p
    elif msg.code == "reason.python-too-new":
        assert Version(PythonVersion.parse(p["have"]).release) > Version(p["max"].rstrip("t")), p
    elif msg.code == "reason.driver-too-old":
        assert Version(p["have"]) < Version(p["need"]) and machine.driver.version == Version(p["have"]), p
    elif msg.code == "reason.driver-missing":
        assert machine.driver.version is None
    elif msg.code == "reason.needs-newer-macos":
        assert Version(p["have"]) < Version(p["need"]) and Version(machine.system.os_version) == Version(p["have"]), p
    elif msg.code in ("reason.cc-too-low", "reason.cc-too-low-inferred"):
        assert ComputeCapability.parse(p["cc"]) < ComputeCapability.parse(p["min"]), p
    elif msg.code in ("reason.no-kernels-cc", "reason.tf-no-kernels-cc"):
        assert any(g.compute_capability == ComputeCapability.parse(p["cc"]) for g in machine.gpus), p


def check(profile: dict[str, Any], frameworks: list[str], index: int | None) -> None:
    machine = machine_from_data(profile)
    plans = resolve(machine, frameworks, gpu_index=index)
    assert [p.framework for p in plans] == frameworks
    for plan in plans:
        if plan.choice is not None:
            other_python = any(n.startswith(("No ", "没有")) and "CPU build shown needs another Python" in n
                               for n in plan.notes)
            _exists(plan.choice, machine, any_python=other_python or plan.choice.variant == "cpu" and not plan.ok)
        else:
            # only where the data has no wheel at all for this platform and OS release (Windows on Arm; a Mac older
            # than every wheel), whatever the Python
            project = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jaxlib"}[plan.framework]
            target = _target(machine, None)
            assert not any(W.fits(r, target) for r in W.get(get_db()).releases(project)), plan
        if plan.gpu_choice is not None:
            _exists(plan.gpu_choice, machine, any_python=True)
        _driver(plan, machine)
        _kernels(plan, machine)
        for r in plan.rejected:
            _reasons(Message(r.code, dict(r.params)), machine)
        for a in plan.actions:
            _reasons(Message(a.code, dict(a.params)), machine)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(machines())
def test_every_generated_machine_is_planned_within_the_invariants(case: tuple[dict[str, Any], list[str], int | None]) -> None:
    check(*case)


def test_the_invariants_catch_a_false_fact() -> None:
    """The checks can fail: a Python reason that claims 3.12 is older than 3.10 is caught."""
    import pytest

    m = machine_from_data({"os": "linux", "python": "3.12"})
    with pytest.raises(AssertionError):
        _reasons(Message("reason.python-too-old", {"min": "3.10", "have": "3.12"}), m)
    with pytest.raises(AssertionError):
        _exists(type("C", (), {"variant": "cu130", "packages": ["torch==1.0.*"], "python": "3.12"})(), m, False)
