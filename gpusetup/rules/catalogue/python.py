"""Catalogue D — Python / framework packaging (F19–F27; F28 lives in ``rules/basic.py``)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from packaging.specifiers import SpecifierSet

from gpusetup.messages import msg
from gpusetup.model import Finding, FrameworkInstall, Machine, Message, PythonEnv, Severity
from gpusetup.rules import rule
from gpusetup.rules._util import (
    build_cuda,
    compat_table,
    cudnn_version,
    driver_version,
    frameworks,
    grep,
    has_nvidia_gpu,
    is_cpu_build,
    is_macos,
    is_windows,
    joined_text,
    make,
    min_driver_for_cuda,
    nvml_ok,
    requirement_parts,
    search,
    torch_installs,
    ver,
)
from gpusetup.rules.catalogue.data import first_wording
from gpusetup.rules.catalogue.ecosystem import as_text
from gpusetup.versions import Version

_NOT_COMPILED = re.compile(r"Torch not compiled with CUDA enabled", re.IGNORECASE)
_CONDA_CPU = re.compile(
    r"^\s*(?:\[conda\]\s*)?(?:pytorch|torch)\s+\d[\w.+-]*\s+(?!pypi)\S*(?:_cpu_\d*|\bcpu\b)\S*|"
    r"^\s*(?:\[conda\]\s*)?cpuonly\s+\d|\[cpuonly\]|pytorch-mutex\s+\S+\s+cpu\b",
    re.IGNORECASE,
)
_REPLACED = re.compile(r"(?:Uninstalling|Successfully uninstalled) torch-([\w.]+\+cu\d+)", re.IGNORECASE)


def _gpu_evident(machine: Machine) -> bool:
    return has_nvidia_gpu(machine) or driver_version(machine) is not None


def _torch_install(machine: Machine) -> Message:
    """The resolver's PyTorch install command for this machine when it can give one; else where to get it."""
    try:
        # lazy: the resolver costs `diagnose` 23-48 ms (python -X importtime) and is needed only when this finding fires
        from gpusetup.compat.resolver import resolve

        for plan in resolve(machine, ("pytorch",)):
            choice = plan.choice or plan.gpu_choice
            if choice is not None and choice.variant != "cpu" and (choice.commands or choice.index_url):
                cmd = choice.commands[0] if choice.commands else (
                    f"pip install {' '.join(choice.packages) or 'torch'} --index-url {choice.index_url}")
                dv = driver_version(machine)
                return msg("fix.torch-install.for-driver", cmd=cmd, variant=choice.variant, driver=str(dv)) if dv \
                    else msg("fix.torch-install.command", cmd=cmd, variant=choice.variant)
    except Exception:  # noqa: BLE001 - the resolver is optional here; the fix text falls back to a pointer
        pass
    return msg("fix.torch-install.pointer")


# ------------------------------------------------------------------------------------------- F19


@rule("torch-cpu-build", catalogue="F19")
def torch_cpu(machine: Machine) -> list[Finding]:
    if is_macos(machine):
        return []
    if grep(machine, _CONDA_CPU, 1) or grep(machine, _REPLACED, 1) or _replaced_candidate(machine):
        return []  # F20 / F21 explain the CPU build more precisely
    cpu = [fw for fw in torch_installs(machine)
           if (is_cpu_build(fw) or (fw.probed and not fw.build_cuda and not fw.build_rocm))
           and (fw.installer or "").lower() != "conda"]
    text = grep(machine, _NOT_COMPILED, 2)
    win_default = [fw for fw in torch_installs(machine) if is_windows(machine) and fw.version and not fw.version.local
                   and not fw.probed and not fw.build_cuda]
    if not text and not (cpu and _gpu_evident(machine)) and not (win_default and _gpu_evident(machine)):
        return []
    ev = text + [f"{fw.name} {fw.version} ({'CPU-only build' if is_cpu_build(fw) else 'no CUDA in this build'})"
                 for fw in cpu]
    gpus = [g.name for g in machine.nvidia_gpus if g.name]
    if gpus:
        ev.append("GPU: " + ", ".join(gpus[:3]))
    if driver_version(machine):
        ev.append(f"NVIDIA driver {driver_version(machine)}")
    sure = None
    if not (cpu or win_default):
        sure = msg("sure.torch-cpu-build")
    elif win_default and not cpu:
        ev.append(f"{win_default[0].name} {win_default[0].version}: the default PyPI wheel on Windows is CPU-only")
        sure = msg("sure.torch-cpu-build.windows")
    return [
        make(
            "torch-cpu-build",
            Severity.ERROR,
            "PyTorch is the CPU-only build, so it cannot use the GPU",
            "The installed torch package was built without CUDA ('Torch not compiled with CUDA enabled'). This is "
            "what plain `pip install torch` gives on Windows, and what the '+cpu' wheels are everywhere.",
            msg("fix.torch-cpu-build", install=_torch_install(machine)),
            ev,
            to_be_sure=sure,
        )
    ]


# ------------------------------------------------------------------------------------------- F20


@rule("conda-picked-cpu-build", catalogue="F20")
def conda_cpu(machine: Machine) -> list[Finding]:
    lines = grep(machine, _CONDA_CPU, 4)
    cpu = [fw for fw in torch_installs(machine) if (fw.installer or "").lower() == "conda" and is_cpu_build(fw)]
    if not lines and not cpu:
        return []
    ev = lines + [f"{fw.name} {fw.version} conda build {fw.build}" for fw in cpu]
    severe = _gpu_evident(machine) or bool(grep(machine, _NOT_COMPILED, 1)) or bool(
        grep(machine, r"is_available\(\)\s*==\s*False|Is CUDA available: (False|No)", 1))
    return [
        make(
            "conda-picked-cpu-build",
            Severity.ERROR if severe else Severity.WARNING,
            "conda installed the CPU-only build of PyTorch",
            "conda found no CUDA build of PyTorch that fits everything else in the environment (Python version, "
            "cudatoolkit, a package pinning 'cpuonly'), so it silently chose the CPU build. Having cudatoolkit "
            "installed does not mean torch uses it.",
            msg("fix.conda-picked-cpu-build", install=_torch_install(machine)),
            ev,
        )
    ]


# ------------------------------------------------------------------------------------------- F21


@rule("cuda-build-replaced", catalogue="F21")
def build_replaced(machine: Machine) -> list[Finding]:
    m = search(machine, _REPLACED)
    if not m:
        return _replaced_from_facts(machine)
    old = m.group(1)
    version, tag = old.split("+", 1)
    ev = grep(machine, _REPLACED, 3) + grep(machine, _NOT_COMPILED, 1)
    return [
        make(
            "cuda-build-replaced",
            Severity.ERROR,
            f"Installing something else replaced your CUDA build of PyTorch ({old})",
            "A later `pip install` (a plugin, custom node or requirements.txt) asked for torch and pip swapped the "
            f"CUDA build {old} for another one — on Windows and with plain PyPI that is the CPU-only build.",
            msg("fix.cuda-build-replaced.text", version=version, tag=tag),
            ev,
            params={"version": version},
        )
    ]


def _gpu_usable(machine: Machine) -> bool:
    """An NVIDIA GPU with a working driver: a CUDA build of torch would have used it."""
    return has_nvidia_gpu(machine) and (driver_version(machine) is not None or nvml_ok(machine))


def replacement_signs(machine: Machine, env: PythonEnv, fw: FrameworkInstall) -> list[str]:
    """Dist-info facts showing that a CPU torch took the place of a CUDA one (not chosen from the start).

    A CPU torch never brings ``nvidia-*-cu*`` wheels and is never paired with ``torchvision+cuXXX``; both are
    left behind when pip swaps only torch.
    """
    signs = [f"{c.name} {c.version} is still the CUDA build" for c in env.companions
             if re.match(r"cu\d+", c.version.local or "")]
    others = {f.name.lower() for f in env.frameworks} - {"torch", "pytorch"}
    wheels = [w for w in machine.cuda.nvidia_wheels if re.match(r"nvidia-(cudnn|cublas|cuda-runtime)-cu\d+", w.name.lower())]
    if wheels and not others and not is_windows(machine):
        signs.append("CUDA libraries a CUDA build of torch installed are still here: "
                     + ", ".join(f"{w.name} {w.version}" for w in wheels[:3]))
    return signs


def _later(a: str | None, b: str | None, minutes: int = 10) -> bool:
    try:
        ta = datetime.strptime(a or "", "%Y-%m-%dT%H:%M:%SZ")
        tb = datetime.strptime(b or "", "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return (ta - tb).total_seconds() > minutes * 60


def _replaced_candidate(machine: Machine) -> tuple[PythonEnv, FrameworkInstall, list[str]] | None:
    """The environment whose CPU torch replaced a CUDA one on a machine with a usable GPU (else None)."""
    if is_macos(machine) or not _gpu_usable(machine):
        return None
    for env in machine.python_envs:
        for fw in env.frameworks:
            if fw.name.lower() not in ("torch", "pytorch") or not is_cpu_build(fw) or \
                    (fw.installer or "").lower() == "conda":
                continue
            signs = replacement_signs(machine, env, fw)
            if signs:
                return env, fw, signs
    return None


def _replaced_from_facts(machine: Machine) -> list[Finding]:
    found = _replaced_candidate(machine)
    if found is None:
        return []
    env, fw, signs = found
    ev = [f"{fw.name} {fw.version} is the CPU-only build"
          + (f" (installed {fw.installed_at.replace('T', ' ').rstrip('Z')} UTC)" if fw.installed_at else "")]
    ev += signs
    ev += [f"{c.name} was installed earlier, {c.installed_at.replace('T', ' ').rstrip('Z')} UTC"
           for c in env.companions if c.installed_at and _later(fw.installed_at, c.installed_at)][:1]
    ev += [g for g in (f"GPU: {machine.nvidia_gpus[0].name}" if machine.nvidia_gpus[0].name else "",
                       f"NVIDIA driver {driver_version(machine)}" if driver_version(machine) else "") if g]
    plan = "gpusetup plan --framework pytorch" + (f" --python {'.'.join(map(str, env.version.release[:2]))}"
                                                if env.version else "")
    target = ""
    exe = Path(env.executable or "")
    if env.is_conda and env.executable:
        target = f" --target conda:{(exe.parent.parent if exe.parent.name == 'bin' else exe.parent).name}"
    elif env.is_venv and env.executable:
        target = f" --target venv:{exe.parent.parent}"
    return [
        make(
            "cuda-build-replaced",
            Severity.ERROR,
            f"A CPU-only PyTorch ({fw.version}) replaced the CUDA build in {env.executable}",
            "This environment had the CUDA build of PyTorch (its companions and CUDA libraries are still "
            "installed), but a later `pip install` of another package (a plugin, custom node or "
            "requirements.txt) pulled plain `torch` again and pip swapped in the CPU-only build. PyTorch "
            "now ignores your GPU.",
            msg("fix.cuda-build-replaced.facts", plan=plan, install=_torch_install(machine), target=target),
            ev,
        )
    ]


# ------------------------------------------------------------------------------------------- F22

_MISSING = re.compile(r"(lib[\w.+-]+?\.so(?:\.\d+)*): cannot open shared object file", re.IGNORECASE)
_COULD_NOT_LOAD = re.compile(r"Could not load (?:dynamic )?library '?(lib[\w.+-]+?\.so(?:\.\d+)*)'?", re.IGNORECASE)
_DRIVER_LIBS = ("libcuda.so", "libnvidia-ml", "libnvcuvid")
# TensorFlow looks for TensorRT at import and only warns when it is absent ("TF-TRT Warning: Cannot dlopen some
# TensorRT libraries"): the GPU works without it (https://github.com/DeepLabCut/DeepLabCut/issues/2115).
_TF_TRT = re.compile(r"TF-TRT Warning|Cannot dlopen some TensorRT libraries", re.IGNORECASE)
_TENSORRT_LIBS = ("libnvinfer", "libnvonnxparser", "libnvparsers")
# NCCL looks for an optional network plugin and logs "Unable to load libnccl-net.so" at INFO level when there is
# none, then uses its own transports (https://github.com/NVIDIA/nccl/issues/162): never a missing library
_OPTIONAL_PLUGINS = ("libnccl-net",)
_WHEELS = {
    "libcudnn": "nvidia-cudnn-cu{cu}",
    "libcublas": "nvidia-cublas-cu{cu}",
    "libcusolver": "nvidia-cusolver-cu{cu}",
    "libcusparse": "nvidia-cusparse-cu{cu}",
    "libcufft": "nvidia-cufft-cu{cu}",
    "libcurand": "nvidia-curand-cu{cu}",
    "libcudart": "nvidia-cuda-runtime-cu{cu}",
    "libnvrtc": "nvidia-cuda-nvrtc-cu{cu}",
    "libnvjitlink": "nvidia-nvjitlink-cu{cu}",
    "libnccl": "nvidia-nccl-cu{cu}",
}


def missing_cuda_libs(machine: Machine) -> list[str]:
    found: list[str] = []
    optional = _DRIVER_LIBS + _OPTIONAL_PLUGINS + (_TENSORRT_LIBS if search(machine, _TF_TRT) else ())
    for rx in (_MISSING, _COULD_NOT_LOAD):
        for ln in grep(machine, rx, 40):
            for m in rx.finditer(ln):
                lib = m.group(1)
                if rx is _COULD_NOT_LOAD and _MISSING.search(ln):
                    continue  # the dlerror part names the library that is really missing
                if not lib.lower().startswith(optional) and lib not in found:
                    found.append(lib)
    return found


@rule("cuda-libraries-not-found", catalogue="F22")
def libs_missing(machine: Machine) -> list[Finding]:
    missing = missing_cuda_libs(machine)
    if not missing:
        return []
    ev = grep(machine, _MISSING, 3) + grep(machine, r"Cannot dlopen some GPU libraries|Skipping registering GPU", 2)
    ev += [ln for ln in grep(machine, _COULD_NOT_LOAD, 3) if ln not in ev]
    tf = "tensorflow" in joined_text(machine).lower() or bool(frameworks(machine, "tensorflow"))
    cu = None
    for lib in missing:
        m = re.match(r"lib(?:cudart|cublas|cublasLt|cusolver|cufft|nvJitLink|nvrtc)\.so\.(\d+)", lib, re.IGNORECASE)
        if m:
            cu = m.group(1)
            break
    wheels = []
    for lib in missing:
        base = lib.split(".so")[0].lower()
        for prefix, wheel in _WHEELS.items():
            if base.startswith(prefix):
                w = wheel.format(cu=cu or "12")
                so = re.search(r"\.so\.(\d+)", lib)
                if prefix == "libcudnn" and so:
                    # the soname names cuDNN's major version: libcudnn.so.8 needs cuDNN 8, not the newest wheel
                    w = f'"{w}=={so.group(1)}.*"'
                if w not in wheels:
                    wheels.append(w)
    if tf:
        fix = msg("fix.cuda-libraries-not-found.tensorflow")
    else:
        fix = msg("fix.cuda-libraries-not-found.wheels", wheels=" ".join(wheels)) if wheels else \
            msg("fix.cuda-libraries-not-found")
    return [
        make(
            "cuda-libraries-not-found",
            Severity.ERROR,
            "CUDA libraries the framework needs cannot be found: " + ", ".join(missing[:4]),
            "The framework expects specific versions of CUDA/cuDNN libraries and the loader cannot find them (not "
            "installed, wrong major version, or not on the library path), so it skips the GPU.",
            fix,
            ev,
            params={"libs": "、".join(missing[:4])},
        )
    ]


# ------------------------------------------------------------------------------------------- F23

_CUDNN_OLD = re.compile(r"Loaded runtime CuDNN library: (\d+(?:\.\d+)*).*?compiled with:? (\d+(?:\.\d+)*)",
                        re.IGNORECASE)  # kept for other modules; the wordings of every tool are data (F23)


@rule("cudnn-too-old", catalogue="F23")
def cudnn_old(machine: Machine) -> list[Finding]:
    hit = first_wording(machine, "F23")
    copies = sorted({lib.version for lib in machine.cuda.libraries
                     if lib.name.lower().startswith("libcudnn") and lib.version})
    if not hit:
        structured = _cudnn_from_facts(machine)
        if structured:
            return structured
        majors = {v.release[:2] for v in copies}
        where = {lib.version: lib.path or lib.source for lib in reversed(machine.cuda.libraries)
                 if lib.name.lower().startswith("libcudnn") and lib.version}
        if len(majors) > 1:
            return [
                make(
                    "cudnn-several-copies",
                    Severity.INFO,
                    "Several different cuDNN versions are installed",
                    "Which one a program loads depends on the library search order; a stale copy can win and "
                    "make the framework refuse it.",
                    msg("fix.cudnn-several-copies"),
                    [f"cuDNN {v}: {where[v]}" for v in copies],
                )
            ]
        return []
    wording, m, matched = hit
    groups = m.groupdict()
    loaded, needed = cudnn_version(groups.get("loaded")), cudnn_version(groups.get("needed"))
    if not loaded or not needed:
        return []
    evidence = [ln.strip() for ln in matched.splitlines() if ln.strip()][:4]
    return [_cudnn_text_finding(machine, wording.tool, loaded, needed, cudnn_version(groups.get("built")),
                                wording.strict, evidence)]


def _cudnn_text_finding(machine: Machine, tool: str, loaded: Version, needed: Version, built: Version | None,
                        same_minor: bool, evidence: list[str]) -> Finding:
    """The framework's own words, read with the versions compared (packed 7103 is 7.1.3, 90100 is 9.1.0)."""
    lv, nv = loaded, needed  # typed: 8.6 == 8.6.0, 9.10.1 > 9.9
    lt, nt = lv.release or (0,), nv.release or (0,)
    text = joined_text(machine)
    if tool == "tensorflow" and re.search(r"\bjax(?:lib)?\b|external/xla/|XlaRuntimeError", text, re.IGNORECASE):
        tool = "jax"  # XLA's stream executor prints the same words in JAX
    tool_name = {"tensorflow": "TensorFlow", "jax": "JAX", "pytorch": "PyTorch"}.get(tool, tool)
    conda = bool(re.search(r"conda install|conda (?:env|environment)\b|# packages in environment at|conda-forge|"
                           r"\banaconda3?\b|miniconda",
                           text, re.IGNORECASE))
    want = f"{nt[0]}.{nt[1] if len(nt) > 1 else 0}"
    if lt[0] != nt[0]:
        title = (f"The cuDNN loaded ({loaded}) is a different major version than {tool_name} was built with "
                 f"({needed})")
        why = (f"cuDNN {lt[0]} and cuDNN {nt[0]} are not interchangeable: {tool_name} needs cuDNN {nt[0]}.x, and "
               "the loader found another major version first.")
        verb_fix = msg("fix.cudnn-too-old.major", major=nt[0], needed=str(needed))
    elif (lv.major_minor or (0, 0)) > (nv.major_minor or (0, 0)) and same_minor:
        title = (f"cuDNN {loaded} was loaded, but this {tool_name} was built with {needed} and accepts only "
                 f"{want}.x")
        why = (f"This {tool_name} build (TensorFlow 1.x and other builds of that time) compares cuDNN's major and "
               f"minor version exactly: the newer {lt[0]}.{lt[1]} is refused just like an older one would be.")
        verb_fix = msg("fix.cudnn-too-old.exact-newer", want=want, needed=str(needed), tool=tool_name,
                       loaded=f"{lt[0]}.{lt[1]}")
    elif lv < nv and same_minor:
        title = f"An older cuDNN ({loaded}) was loaded than {tool_name} was built with ({needed})"
        why = (f"This {tool_name} build compares cuDNN's major and minor version exactly, so it needs {want}.x; "
               "another, older copy of cuDNN was found first on the library path.")
        verb_fix = msg("fix.cudnn-too-old.exact-older", want=want, needed=str(needed))
    elif lv < nv:
        title = f"An older cuDNN ({loaded}) was loaded than {tool_name} needs ({needed})"
        why = ("The framework needs cuDNN of the same major version and an equal or higher minor version. "
               "Another copy of cuDNN earlier on the library path (system install, an old conda package, a wheel "
               "such as cupy bundling its own) was picked instead.")
        if built and built != needed:
            why += f" ({tool_name} was built against {built}; {needed} is the oldest it accepts.)"
        verb_fix = msg("fix.cudnn-too-old.older", major=nt[0], needed=str(needed))
    else:
        title = f"{tool_name} refused the cuDNN it loaded ({loaded}; built with {needed})"
        why = ("The loaded cuDNN is not older than the build's, yet the framework refused it: usually two copies "
               "are on the library path and a different one is loaded at run time than the one you checked.")
        verb_fix = msg("fix.cudnn-too-old.single", major=nt[0], tool=tool_name)
    if tool == "pytorch" and not same_minor and nt[0] >= 8:
        how = msg("fix.cudnn-too-old.how-pytorch")
    elif conda:
        how = msg("fix.cudnn-too-old.how-conda", version=str(needed)) if nt[0] < 9 else \
            msg("fix.cudnn-too-old.how-conda-forge", want=want)
    elif nt[0] >= 9:
        how = msg("fix.cudnn-too-old.how-pip", needed=str(needed))
    elif nt[0] == 8:
        how = msg("fix.cudnn-too-old.how-pip8", want=want)
    else:
        how = msg("fix.cudnn-too-old.how-archive", major=nt[0], needed=str(needed))
    fix = msg("fix.cudnn-too-old", loaded=str(loaded), verb=verb_fix, how=how)
    return make("cudnn-too-old", Severity.ERROR, title, why, fix, evidence)


def _cudnn_finding(loaded: Version, needed: Version, evidence: list[str], why: str = "", fix: Message | None = None,
                   verb: str = "was loaded") -> Finding:
    major = needed.major
    return make(
        "cudnn-too-old",
        Severity.ERROR,
        f"An older cuDNN ({loaded}) {verb} than the framework was built with ({needed})",
        why or ("The framework needs cuDNN of the same major version and an equal or higher minor version. "
                "Another copy of cuDNN earlier on the library path (system install, an old conda package, a wheel "
                "such as cupy bundling its own) was picked instead."),
        fix or (msg("fix.cudnn-too-old.facts", loaded=str(loaded), needed=str(needed)) if major != 8 else
                msg("fix.cudnn-too-old.facts8", loaded=str(loaded), needed=str(needed))),
        evidence,
    )


def _min_version(specs: SpecifierSet) -> Version | None:
    """The lowest version a requirement accepts, from its lower bounds ("==9.1.0.70", ">=9.3,<10")."""
    lows = [Version(s.version) for s in specs if s.operator in ("==", ">=", "~=", ">")]
    return max(lows) if lows else None


def _older(have: Version, want: Version) -> bool:
    """Lower than needed, compared on the parts both give (libcudnn.so.9 names only the major; a newer major is a
    missing library: F22)."""
    n = min(len(have.release), len(want.release), 3)
    return have.release[:n] < want.release[:n]


def _cudnn_from_facts(machine: Machine) -> list[Finding]:
    """cuDNN the framework needs (its wheel's Requires-Dist, or TensorFlow's tested table) vs the copy it gets."""
    if is_windows(machine) or is_macos(machine):
        return []
    wheels = {w.name.lower(): w.version for w in machine.cuda.nvidia_wheels if w.name.lower().startswith("nvidia-cudnn-cu")}
    ld = [lib for lib in machine.cuda.libraries
          if lib.name.lower().startswith("libcudnn") and lib.source == "LD_LIBRARY_PATH" and lib.version]
    for fw in [f for env in machine.python_envs for f in env.frameworks]:
        parts = requirement_parts(fw.cudnn_requirement)
        want = _min_version(parts[1]) if parts else None
        label = f"{fw.name} {fw.version}"
        if parts and want:
            pkg = parts[0]
            need = want
            ev = [f"{label} requires {fw.cudnn_requirement}"]
            have = wheels.get(pkg)
            ht = have or None
            if ht and _older(ht, want):
                return [_cudnn_finding(
                    ht, need, [*ev, f"installed: {pkg} {have}"],
                    "The framework's wheel names the cuDNN it was built with, and the pip cuDNN in this environment "
                    "is older (usually another package's install pinned or downgraded it). The framework refuses "
                    "it or fails in convolution layers.",
                    msg("fix.cudnn-too-old.requirement", requirement=fw.cudnn_requirement), verb="is installed")]
            shadow = [lib for lib in ld if lib.version and lib.version.major == want.major
                      and len(lib.version.release) > 1 and _older(lib.version, want)]
            if shadow and (ht is None or not _older(ht, want)):
                lib = shadow[0]
                return [_cudnn_finding(
                    lib.version or Version(), need,
                    [*ev, *([f"installed: {pkg} {have}"] if have else []),
                     f"LD_LIBRARY_PATH puts cuDNN {lib.version} first: {lib.path}"],
                    "LD_LIBRARY_PATH is searched before the framework's own pip cuDNN, so an older system copy of "
                    "the same major version is loaded instead of the one the framework was built with.",
                    msg("fix.cudnn-too-old.ld-path", folder=str(Path(lib.path or '').parent)) if lib.path else
                    msg("fix.cudnn-too-old.ld-path-unknown"), verb="comes first on the library path")]
            loaded = cudnn_version(fw.cudnn) if fw.probed and fw.name.lower() in ("torch", "pytorch") else None
            if loaded and len(loaded.release) > 1 and _older(loaded, want):
                return [_cudnn_finding(loaded, need, [*ev, f"{fw.name} loaded cuDNN {loaded} (--deep)"])]
        elif fw.name.lower() == "tensorflow" and not wheels:
            tested = _tf_tested_cudnn(fw.version)
            if not tested:
                continue
            order = ld + [lib for lib in machine.cuda.libraries if lib.name.lower().startswith("libcudnn")
                          and lib.source == "ldconfig" and lib.version]
            same = [lib for lib in order if lib.version and lib.version.major == tested.major
                    and len(lib.version.release) > 1]
            if same and same[0].version and _older(same[0].version, tested):
                lib = same[0]
                return [_cudnn_finding(lib.version or Version(), tested, [
                    f"{label} was tested with cuDNN {tested}",
                    f"first cuDNN {tested.major} the loader finds ({lib.source}): {lib.version} at {lib.path}"],
                    verb="is the one the loader finds")]
    return []


def _tf_tested_cudnn(version: Version | None) -> Version | None:
    if not version or len(version.release) < 2:
        return None
    for row in compat_table("tensorflow", "tested_configs"):
        if row.get("cudnn") and version.same_series(str(row.get("version") or "")):
            return Version.parse(str(row["cudnn"]))
    return None


# ------------------------------------------------------------------------------------------- F24


@rule("tensorflow-no-gpu-on-windows", catalogue="F24")
def tf_windows(machine: Machine) -> list[Finding]:
    if not is_windows(machine):
        return []
    tfs = [fw for fw in frameworks(machine, "tensorflow", "tensorflow-gpu") if fw.version and fw.version >= Version("2.11")]
    if not tfs:
        return []
    tf = tfs[0]
    return [
        make(
            "tensorflow-no-gpu-on-windows",
            Severity.WARNING if not _gpu_evident(machine) else Severity.ERROR,
            f"TensorFlow {tf.version} has no GPU support on native Windows",
            "TensorFlow 2.10 was the last release that supported the GPU on native Windows. Newer versions run on "
            "the CPU there, whatever CUDA and cuDNN are installed.",
            msg("fix.tensorflow-no-gpu-on-windows"),
            [f"tensorflow {tf.version}", f"OS: {machine.system.os_version or machine.system.os}"]
            + grep(machine, r"is_built?_with_cuda|list_physical_devices\('GPU'\)", 2),
            params={"version": tf.version},
        )
    ]


# ------------------------------------------------------------------------------------------- F25


@rule("jax-without-cuda-plugin", catalogue="F25")
def jax_plugin(machine: Machine) -> list[Finding]:
    lines = grep(machine, r"CUDA-enabled jaxlib is not installed", 2)
    jaxes = frameworks(machine, "jax", "jaxlib")
    plugin_names = {fw.name.lower() for env in machine.python_envs for fw in env.frameworks}
    plugin_names |= {w.name.lower() for w in machine.cuda.nvidia_wheels}
    has_plugin = any("jax-cuda" in n or "jax_cuda" in n for n in plugin_names) or any(
        fw.build_cuda for fw in jaxes)
    structured = bool(jaxes) and not has_plugin and _gpu_evident(machine) and not is_macos(machine)
    if not lines and not structured:
        return []
    dv = driver_version(machine)
    cu13 = ver(min_driver_for_cuda("13.0"))
    extra = "cuda13" if dv and cu13 and dv >= cu13 else "cuda12"
    if is_windows(machine):
        fix = msg("fix.jax-without-cuda-plugin.windows")
    else:
        fix = msg("fix.jax-without-cuda-plugin.driver", extra=extra, driver=str(dv)) if dv else \
            msg("fix.jax-without-cuda-plugin", extra=extra)
    # The notice alone, with nothing else about JAX, is often printed by a library the program imports but does not
    # use (a PyTorch program): then it says nothing about the program's GPU (resources/solved benign-log threads).
    used = bool(jaxes) or bool(grep(machine, _JAX_USED, 1))
    return [
        make(
            "jax-without-cuda-plugin",
            Severity.WARNING if used else Severity.INFO,
            "JAX is installed without its CUDA plugin, so it runs on the CPU",
            "`pip install jax` installs the CPU jaxlib only; the GPU support is a separate plugin package."
            + ("" if used else " If the program does not use JAX itself (a PyTorch program whose libraries import "
                               "JAX, for example), this notice is harmless and can be ignored."),
            fix,
            lines + [f"{fw.name} {fw.version}" for fw in jaxes],
            to_be_sure=None if used else as_text(msg("sure.jax-used")),
        )
    ]


# signs that the program itself runs JAX (beyond the fallback notice)
_JAX_USED = re.compile(r"\bimport jax\b|\bjax\.(?:numpy|devices|jit|random|lax)\b|jaxlib\.xla_extension|"
                       r"XlaRuntimeError|jax\.errors|\bjax_cuda\d*_plugin|/site-packages/jax/", re.IGNORECASE)


# ------------------------------------------------------------------------------------------- F26

_DUP_TEXT = re.compile(
    r"undefined symbol: \w+, version libcublasLt\.so\.\d+|not defined in file libcublasLt\.so\.\d+ with link time "
    r"reference|site-packages/nvidia/\w+/lib/lib\w+\.so[\d.]*: undefined symbol",
    re.IGNORECASE,
)


@rule("duplicate-cuda-libraries", catalogue="F26")
def duplicate_libs(machine: Machine) -> list[Finding]:
    lines = grep(machine, _DUP_TEXT, 3)
    ld = machine.cuda.env.get("LD_LIBRARY_PATH", "")
    toolkit_dirs = [d for d in ld.split(":") if re.search(r"/cuda[\w.-]*/(lib64|lib|targets)", d)]
    wheels = machine.cuda.nvidia_wheels
    if lines:
        return [
            make(
                "duplicate-cuda-libraries",
                Severity.ERROR,
                "Two copies of the CUDA libraries are mixed (pip's nvidia-* wheels and a system CUDA)",
                "A library from the pip `nvidia-*` wheels loaded its partner library (libcublasLt) from another "
                "CUDA installation, usually because LD_LIBRARY_PATH or the system loader cache points at "
                "/usr/local/cuda. The versions do not fit together ('undefined symbol').",
                msg("fix.duplicate-cuda-libraries"),
                lines + ([f"LD_LIBRARY_PATH={ld}"] if ld else []),
                to_be_sure=None if ld else msg("sure.duplicate-cuda-libraries"),
            )
        ]
    if toolkit_dirs and wheels:
        return [
            make(
                "duplicate-cuda-libraries",
                Severity.INFO,
                "A system CUDA is on LD_LIBRARY_PATH while pip's NVIDIA libraries are installed",
                "This often works, but it is the setup in which pip's CUDA libraries pick up the wrong partner "
                "library and fail with 'undefined symbol'.",
                msg("fix.duplicate-cuda-libraries.info", dirs=", ".join(toolkit_dirs)),
                [f"LD_LIBRARY_PATH contains {', '.join(toolkit_dirs)}",
                 "pip wheels: " + ", ".join(f"{w.name} {w.version}" for w in wheels[:4])],
            )
        ]
    return []


# ------------------------------------------------------------------------------------------- F27

_MISMATCH_27 = re.compile(
    r"The detected CUDA version \(([\d.]+)\) mismatches the version that was used to compile PyTorch \(([\d.]+)\)",
    re.IGNORECASE,
)


def _active_toolkit(machine: Machine):  # noqa: ANN202 - Toolkit | None
    tks = machine.cuda.toolkits
    for key in ("cuda_home", "CUDA_HOME", "path", "PATH", "nvcc"):
        for tk in tks:
            if key in (tk.source or ""):
                return tk
    return tks[0] if tks else None


@rule("toolkit-differs-from-torch-cuda", catalogue="F27")
def toolkit_mismatch(machine: Machine) -> list[Finding]:
    flat = re.sub(r"\s+", " ", joined_text(machine))
    m = _MISMATCH_27.search(flat)
    torch = [fw for fw in torch_installs(machine) if build_cuda(fw)]
    tk = _active_toolkit(machine)
    if m:
        found, built = Version(m.group(1)), Version(m.group(2))
        sev = Severity.WARNING
        ev = grep(machine, r"detected CUDA version|mismatches the version", 2)
    elif torch and tk and tk.version:
        built, found = build_cuda(torch[0]) or Version(), tk.version
        if not built or not found or built.same_series(found):
            return []
        sev = Severity.INFO  # only matters when building extensions; the literal error (above) is the warning
        ev = [f"{torch[0].name} {torch[0].version} built with CUDA {built}",
              f"CUDA toolkit {found} at {tk.path} ({tk.source})"]
    else:
        return []
    want = ".".join(map(str, built.release[:2]))
    match = [t for t in machine.cuda.toolkits if t.version and t.version.same_series(built)]
    if match:
        fix = msg("fix.toolkit-differs-from-torch-cuda.point", path=match[0].path)
    else:
        fix = msg("fix.toolkit-differs-from-torch-cuda.install", want=want, package=want.replace(".", "-"),
                  found=".".join(map(str, found.release[:2])))
    return [
        make(
            "toolkit-differs-from-torch-cuda",
            sev,
            f"The CUDA toolkit on this machine ({found}) differs from the CUDA PyTorch was built with ({built})",
            "This only matters when compiling CUDA code against PyTorch (C++/CUDA extensions such as flash-attn, "
            "apex, detectron2): the build uses CUDA_HOME or the nvcc on PATH, and PyTorch refuses a different "
            "major version. (collect_env's 'CUDA runtime version' line is this nvcc, not the CUDA torch uses.)",
            fix,
            ev,
        )
    ]
