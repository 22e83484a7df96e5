"""The resolver: which PyTorch / TensorFlow / JAX build works on this machine, how to install it, and why
every other option does not.

It reads only facts from the compat data (``resources/compat/*.json`` via :mod:`gpusetup.compat.db`); the
code holds the *rules* (how a cubin runs on a GPU, how minor-version compatibility works), not version
numbers. Each framework family enumerates its published builds (release × variant) behind one interface
(:class:`gpusetup.compat.builds.Family`: :mod:`.torch_builds`, :mod:`.tensorflow_builds`, :mod:`.jax_builds`),
each checked against the derived release history (a wheel for this Python — free-threaded included — OS,
architecture and OS release), the GPUs' kernels (compute capability / gfx target) and the driver. This module
picks the newest build that works on every selected GPU. When none works as the machine is, it says so — never
a silent CPU fallback — and searches for the smallest set of actions (driver install/upgrade, Python change,
WSL2) that would make a GPU build work, returning the CPU build as the choice for *now* and the GPU build as
``gpu_choice``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import combinations, takewhile
from typing import Any

from gpusetup.compat import branches, jax_builds, tensorflow_builds, torch_builds
from gpusetup.compat import builds as B
from gpusetup.compat.builds import Cand, Env, GpuRef
from gpusetup.compat.db import CompatDB, get_db
from gpusetup.messages import add_note, msg, render
from gpusetup.model import Action, Choice, FrameworkPlan, Machine, Message, Rejected
from gpusetup.versions import ComputeCapability
from gpusetup.versions import version_key as vkey


class RequestError(ValueError):
    """The request cannot be planned as asked (a GPU number this machine does not have, an unknown
    framework); ``message`` is the same as data, ``str()`` the English."""

    def __init__(self, message: Message) -> None:
        super().__init__(render(message))
        self.message = message


FRAMEWORKS = ("pytorch", "tensorflow", "jax")
_ALIASES = {"torch": "pytorch", "pytorch": "pytorch", "tensorflow": "tensorflow", "tf": "tensorflow", "jax": "jax"}
FAMILIES: dict[str, B.Family] = {
    "pytorch": torch_builds.FAMILY,
    "tensorflow": tensorflow_builds.FAMILY,
    "jax": jax_builds.FAMILY,
}

# Relaxations tried, least intrusive first, when no GPU build works as the machine is.
_RELAXATIONS: tuple[frozenset[str], ...] = tuple(
    frozenset(r)
    for r in (
        (),
        ("driver",),
        ("wsl",),
        ("wsl", "driver"),
        ("python",),
        ("driver", "python"),
        ("wsl", "python"),
        ("wsl", "driver", "python"),
    )
)


def family(framework: str) -> B.Family:
    return FAMILIES[framework]


class _Lazy:
    """Candidates made as they are asked for (families yield them newest first), kept once made."""

    def __init__(self, made: Iterable[Cand]) -> None:
        self._it: Iterator[Cand] | None = iter(made)
        self._seen: list[Cand] = []

    def __iter__(self) -> Iterator[Cand]:
        i = 0
        while True:
            if i < len(self._seen):
                yield self._seen[i]
                i += 1
                continue
            if self._it is None:
                return
            nxt = next(self._it, None)
            if nxt is None:
                self._it = None
                return
            self._seen.append(nxt)

    def until(self, keep: Callable[[Cand], bool]) -> list[Cand]:
        """The candidates from the first while ``keep`` holds (every one when it always does)."""
        return list(takewhile(keep, self))


def _gpus(machine: Machine) -> list[GpuRef]:
    return [GpuRef(i, g) for i, g in enumerate(machine.gpus)]


# ------------------------------------------------------------------------------------------- search


@dataclass
class _Found:
    cand: Cand
    relax: frozenset[str]
    gpus: list[GpuRef]
    env: Env


def _search(
    make: Callable[[Env, Sequence[GpuRef]], Iterable[Cand]],
    db: CompatDB,
    env: Env,
    gpus: list[GpuRef],
    relaxations: Sequence[frozenset[str]],
) -> _Found | None:
    """First (relaxation, GPU subset) for which some build works; the newest build wins within it."""
    subsets: list[list[GpuRef]] = [gpus]
    if len(gpus) > 1:
        # Keep the newest GPUs first when not all can be served by one build.
        newest_first = sorted(gpus, key=lambda g: (g.cc or (0, 0), g.gfx or ""), reverse=True)
        for drop in range(1, len(gpus)):
            for keep in combinations(newest_first, len(gpus) - drop):
                subsets.append(sorted(keep, key=lambda g: g.index))
    nvidia = bool(gpus) and all(g.vendor == "nvidia" for g in gpus)
    cache: dict[tuple[bool, tuple[int, ...]], _Lazy] = {}
    for relax in relaxations:
        if "wsl" in relax and not (env.os == "windows" and not env.wsl and nvidia):
            continue  # WSL2 is offered for NVIDIA GPUs on native Windows only (CUDA on WSL)
        if "wsl" in relax and env.machine != "x86_64":
            continue
        e = replace(env, wsl=env.wsl or "wsl" in relax)
        for subset in subsets:
            es = replace(e, driver_cap=B.ceiling(db, subset, e.driver_os))
            key = ("wsl" in relax, tuple(g.index for g in subset))
            if key not in cache:
                cache[key] = _Lazy(make(es, subset))
            for c in cache[key]:
                if not B.problems(c, es, subset, relax):
                    return _Found(c, relax, subset, es)
    return None


def _group_rejections(cands: Sequence[Cand], env: Env, gpus: Sequence[GpuRef], newer_than: Cand | None) -> list[Rejected]:
    """Every build that does not work, grouped by variant and reason: 'cu130 (torch 2.9–2.15)': why.

    With a choice, only builds at least as new as the choice are listed (the older ones are not better);
    builds that fail on Python alone are grouped per release range, whatever their variant.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    reasons: dict[str, Message] = {}
    for c in cands:
        if newer_than is not None and (
            vkey(c.version) < vkey(newer_than.version) or (c.version, c.variant) == (newer_than.version, newer_than.variant)
        ):
            continue
        problems = B.problems(c, env, gpus, frozenset())
        if not problems:
            continue
        variant = c.variant
        if c.python_bad and not c.platform_bad:
            variant, problems = "*", [c.python_bad]
        unique = list({render(p): p for p in problems}.values())
        reason = unique[0] if len(unique) == 1 else msg("reason.several", reasons=unique)
        text = render(reason)
        reasons.setdefault(text, reason)
        groups.setdefault((variant, text), []).append(c.version)
    fw = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}[cands[0].framework] if cands else ""
    out = []
    for (variant, text), versions in groups.items():
        option = f"{fw} {B.span(versions)} (every build)" if variant == "*" else f"{variant} ({fw} {B.span(versions)})"
        out.append(rejected(option, reasons[text]))
    return out


def rejected(option: str, reason: Message) -> Rejected:
    """A rejected option with its reason as data (code, params) and in English words."""
    return Rejected(option=option, reason=render(reason), code=reason.code, params=dict(reason.params))


def action(kind: str, why: Message, **fields: Any) -> Action:
    """An action with its reason as data (code, params) and in English words."""
    return Action(kind=kind, why=render(why), code=why.code, params=dict(why.params), **fields)


# --------------------------------------------------------------------------------------- assembling


def _choice(c: Cand, env: Env) -> Choice:
    quoted = " ".join(f'"{p}"' for p in c.packages)
    cmd = f"python -m pip install {quoted}"
    if c.index_url:
        cmd += f" --index-url {c.index_url}"
    return Choice(
        version=c.version,
        variant=c.variant,
        index_url=c.index_url,
        packages=list(c.packages),
        commands=[cmd],
        conda=list(c.conda),
        python=c.python or (str(env.python) if env.python else None),
        env=dict(c.env),
    )


def _cpu_choice(db: CompatDB, framework: str, env: Env) -> tuple[Choice | None, list[Message]]:
    """The newest CPU build for this Python (or, failing that, for any Python) — never chosen silently."""
    cand, notes = family(framework).cpu_choice(db, env)
    return (_choice(cand, env) if cand is not None else None), notes


def _driver_branch(db: CompatDB, gpus: Sequence[GpuRef], need: str | None, driver_os: str) -> Message:
    """The driver branch to install for these GPUs (gpusetup.compat.branches, as `install --driver` chooses it)."""
    choice = branches.driver_branch(db, [g.cc for g in gpus], need)
    if choice.legacy:
        text = msg("branch.legacy", branch=choice.branch, architecture=choice.architecture)
    else:
        text = msg("branch.at-least", branch=choice.branch) if choice.branch else msg("branch.newest")
    modules = choice.modules if driver_os == "linux" else None
    if modules == "open":
        return msg("branch.with-open-modules", branch=text)
    if modules == "proprietary":
        return msg("branch.with-proprietary-modules", branch=text)
    return text


def _actions(db: CompatDB, found: _Found, env: Env, framework: str) -> list[Action]:
    c, relax = found.cand, found.relax
    acts: list[Action] = []
    fw_name = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}[framework]
    if "wsl" in relax:
        acts.append(action("use-wsl2", msg("action.use-wsl2", framework=fw_name), commands=["wsl --install -d Ubuntu"]))
    if "driver" in relax and c.need_driver and B.driver_problem(c, found.env, frozenset()):
        # a driver whose version was not read is checked first, never replaced unasked ("check-driver")
        kind = "upgrade-driver" if env.driver else ("check-driver" if env.driver_present else "install-driver")
        branch = _driver_branch(db, found.gpus, c.need_driver, found.env.driver_os)
        fields = dict(option=c.option, need=c.need_driver, why=c.driver_why, branch=branch)
        if env.driver:
            why = msg("action.driver-upgrade-wsl" if found.env.wsl else "action.driver-upgrade", have=env.driver_words,
                      **fields)
        elif env.driver_present:
            why = msg("action.driver-check", **fields)
        else:
            why = msg("action.driver-install-wsl" if found.env.wsl else "action.driver-install", **fields)
        acts.append(action(kind, why, min_version=c.need_driver, branch=render(branch)))
    if "python" in relax and c.python_bad:
        lo, hi = c.python_range
        rng = msg("range.between", min=lo, max=hi) if hi else msg("range.at-least", min=lo)
        acts.append(
            action("change-python", msg("action.change-python", option=c.option, reason=c.python_bad, range=rng), min_version=lo)
        )
    return acts


def _plan_for(
    db: CompatDB, framework: str, env: Env, all_gpus: list[GpuRef], selected: list[GpuRef], left: dict[int, Message],
    base_notes: list[Message],
) -> FrameworkPlan:
    plan = FrameworkPlan(framework=framework, ok=False)
    notes = _decide(plan, db, framework, env, all_gpus, selected, left, base_notes)
    for note in notes:
        add_note(plan, note)
    return plan


def _legacy_unverified(db: CompatDB, gpus: Sequence[GpuRef], actions: Sequence[Action]) -> list[Message]:
    """A driver action naming a legacy branch rests on driver_branches/legacy_branches; say when it is unverified."""
    if not any(a.kind in ("install-driver", "upgrade-driver") for a in actions):
        return []
    rows = [r for r in (B.legacy_row(db, g) for g in gpus) if r]
    if not rows:
        return []
    row = min(rows, key=lambda r: r["last_branch"])
    if row.get("verified", db.table("driver_branches", "legacy_branches").verified) is not False:
        return []
    detail = msg("unverified.legacy-branch", branch=row["last_branch"], architecture=row["architecture"])
    return [msg("note.unverified-data", detail=detail)]


def _unverified(c: Cand) -> list[Message]:
    return [msg("note.unverified-data", detail=u) for u in c.unverified]


def _decide(
    plan: FrameworkPlan, db: CompatDB, framework: str, env: Env, all_gpus: list[GpuRef], selected: list[GpuRef],
    left: dict[int, Message], base_notes: list[Message],
) -> list[Message]:
    """Fill ``plan``'s choice, actions and rejections; return its notes, in order."""
    notes = list(base_notes)
    kind = _backend_kind(selected)
    fw_name = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}[framework]

    make = _maker(db, framework, kind)
    if make is None:
        cpu, cnotes = _cpu_choice(db, framework, env)
        plan.choice = cpu
        notes += cnotes
        plan.gpus_left_out = sorted(set(left) | {g.index for g in selected})
        why = _no_backend_reason(framework, kind, selected, env)
        if selected or all_gpus:
            plan.rejected.append(rejected(f"{fw_name} GPU build", why))
        notes.insert(0, msg("note.no-gpu-build-cpu-shown", framework=fw_name, reason=why))
        for i, r in sorted(left.items()):
            notes.append(msg("note.gpu-left-out", index=i, reason=r))
        return notes

    now = _search(make, db, env, selected, _RELAXATIONS[:1])
    made = _Lazy(make(env, selected))
    if now is not None:  # only the builds at least as new as the choice are listed against it
        newest_first = vkey(now.cand.version)
        full_cands = made.until(lambda c: vkey(c.version) >= newest_first)
    else:
        full_cands = list(made)
    dml = torch_builds.directml(db, kind, env) if framework == "pytorch" and now is None else None
    if now is not None:
        plan.ok = True
        plan.choice = _choice(now.cand, env)
        notes += now.cand.notes + _unverified(now.cand)
        notes += family(framework).backend_notes(db, now.cand)
        plan.gpus_covered = [g.index for g in now.gpus]
        dropped = [g for g in selected if g not in now.gpus]
        for g in dropped:
            left[g.index] = _why_left_out(full_cands, now.cand, g, env)
        plan.rejected = _group_rejections(full_cands, env, selected, now.cand)
        better = _search(make, db, env, now.gpus, _RELAXATIONS[1:2])
        if better is not None and better.cand.order < now.cand.order:
            notes.append(msg("note.newer-driver-better-build", need=better.cand.need_driver, option=better.cand.option))
    elif isinstance(dml, Choice):
        plan.ok = True
        plan.choice = dml
        plan.gpus_covered = [g.index for g in selected]
        plan.rejected = _group_rejections(full_cands, env, selected, None)
        vendor = {"rocm": "AMD", "xpu": "Intel"}[kind]
        row = db.rows("pytorch", "directml")[0]
        notes.insert(len(base_notes), msg("note.directml", vendor=vendor, version=row["version"], torch=row["torch"],
                                           source=db.table("pytorch", "directml").source[0]))
        if kind == "rocm":
            notes.append(msg("note.rocm-windows-preview", source=torch_builds.ROCM_WINDOWS_DOCS))
    else:
        cpu, cnotes = _cpu_choice(db, framework, env)
        plan.choice = cpu
        notes += cnotes
        plan.rejected = _group_rejections(full_cands, env, selected, None)
        if isinstance(dml, Rejected):
            plan.rejected.append(dml)
        later = _search(make, db, env, selected, _RELAXATIONS[1:])
        if later is not None:
            plan.gpu_choice = _choice(later.cand, later.env)
            if "python" in later.relax and later.cand.python_bad:
                lo, hi = later.cand.python_range
                plan.gpu_choice.python = f"{lo}–{hi}" if hi and hi != lo else (lo if hi else f"≥ {lo}")
            plan.actions = _actions(db, later, env, framework)
            notes += _legacy_unverified(db, later.gpus, plan.actions)
            plan.gpus_covered = [g.index for g in later.gpus]
            for g in selected:
                if g not in later.gpus:
                    left[g.index] = _why_left_out(full_cands, later.cand, g, env)
            notes += later.cand.notes + _unverified(later.cand)
            notes.insert(
                len(base_notes),
                msg(
                    "note.gpu-build-after-actions",
                    framework=fw_name,
                    actions=[_action_word(a.kind) for a in plan.actions],
                    option=later.cand.option,
                ),
            )
        else:
            notes.insert(len(base_notes), msg("note.no-gpu-build-possible", framework=fw_name))
            plan.gpus_left_out = [g.index for g in selected]
    plan.gpus_left_out = sorted(set(plan.gpus_left_out) | set(left))
    for i in sorted(left):
        notes.append(msg("note.gpu-not-used", index=i, reason=left[i]))
    return notes


def _action_word(kind: str) -> Message | str:
    words = {
        "install-driver": msg("word.action.install-driver"),
        "upgrade-driver": msg("word.action.upgrade-driver"),
        "check-driver": msg("word.action.check-driver"),
        "use-wsl2": msg("word.action.use-wsl2"),
        "change-python": msg("word.action.change-python"),
    }
    return words.get(kind, kind)


def _why_left_out(cands: Sequence[Cand], chosen: Cand, g: GpuRef, env: Env) -> Message:
    for c in cands:
        if c.version == chosen.version and c.variant == chosen.variant:
            if g.index in c.gpu_bad:
                return msg("left.build-lacks-gpu", option=c.option, reason=c.gpu_bad[g.index])
            probs = B.problems(c, env, [g], frozenset())
            if probs:
                return msg("left.build-problem-on-gpu", option=c.option, gpu=g.label, reason=probs[0])
    return msg("left.no-single-build")


def _backend_kind(selected: Sequence[GpuRef]) -> str:
    if not selected:
        return "none"
    return {"nvidia": "cuda", "amd": "rocm", "intel": "xpu", "apple": "mps"}.get(selected[0].vendor, "none")


def _maker(db: CompatDB, framework: str, kind: str) -> Callable[[Env, Sequence[GpuRef]], Iterable[Cand]] | None:
    fam = family(framework)
    if kind not in fam.kinds:
        return None
    return lambda e, g: fam.candidates(db, e, g, kind)


def _no_backend_reason(framework: str, kind: str, selected: Sequence[GpuRef], env: Env) -> Message:
    if not selected:
        return msg("reason.no-usable-gpu")
    vendor = {"rocm": "AMD", "xpu": "Intel", "mps": "Apple"}.get(kind, selected[0].vendor)
    if framework == "tensorflow":
        return msg("reason.tf-vendor-unplanned", vendor=vendor)
    if framework == "jax":
        return msg("reason.jax-vendor-unplanned", vendor=vendor)
    return msg("reason.torch-vendor-unknown", vendor=vendor)


# ------------------------------------------------------------------------------------------- public


def _select(gpus: list[GpuRef], gpu_index: int | None) -> tuple[list[GpuRef], dict[int, Message], list[Message]]:
    """Which GPUs to plan for: the one asked for, else the vendor with usable GPUs (NVIDIA first)."""
    left: dict[int, Message] = {}
    notes: list[Message] = []
    usable: list[GpuRef] = []
    for g in gpus:
        if g.vendor == "nvidia" and g.gpu.cuda_supported is False:
            left[g.index] = msg("left.gpu-too-old-for-cuda", architecture=g.architecture or "pre-Kepler")
        elif g.vendor == "nvidia" and not g.cc:
            usable.append(g)
            notes.append(msg("note.cc-unknown", gpu=g.label))
        elif g.vendor in ("nvidia", "amd", "intel", "apple"):
            usable.append(g)
        else:
            left[g.index] = msg("left.vendor-no-build", vendor=g.vendor)
    if gpu_index is not None:
        chosen = [g for g in gpus if g.index == gpu_index]
        if not chosen:
            if not gpus:
                raise RequestError(msg("request.no-gpu-found", index=gpu_index))
            if len(gpus) == 1:
                raise RequestError(msg("request.no-such-gpu-one", index=gpu_index))
            raise RequestError(msg("request.no-such-gpu", index=gpu_index, last=len(gpus) - 1))
        for g in gpus:
            if g.index != gpu_index:
                left.setdefault(g.index, msg("left.not-selected"))
        return [g for g in chosen if g in usable], left, notes
    for vendor in ("nvidia", "amd", "intel", "apple"):
        group = [g for g in usable if g.vendor == vendor]
        if group:
            for g in usable:
                if g.vendor != vendor:
                    left[g.index] = msg(
                        "left.other-vendor", vendor=vendor.upper() if vendor != "nvidia" else "NVIDIA", index=g.index
                    )
            return group, left, notes
    return [], left, notes


def resolve(
    machine: Machine,
    frameworks: Sequence[str] = ("pytorch",),
    *,
    gpu_index: int | None = None,
    python_version: str | None = None,
) -> list[FrameworkPlan]:
    """Plan each framework for this machine: the newest build that works on every selected GPU, or the CPU
    build plus the actions that would enable the GPU, with a plain reason for every rejected option.

    Raises ValueError for an unknown framework name or a GPU index the machine does not have.
    """
    db = get_db()
    env, env_notes = B.machine_env(machine, python_version)
    B.machine_driver(db, machine, env, env_notes)
    gpus = _gpus(machine)
    selected, left, sel_notes = _select(gpus, gpu_index)
    nvidia_sel = [g for g in selected if g.vendor == "nvidia"]
    if nvidia_sel and not env.driver and env.jetson:
        env_notes.append(msg("note.jetson-driver"))
    if env.os == "macos" and nvidia_sel:
        env_notes.append(msg("note.macos-no-cuda"))
        selected = [g for g in selected if g.vendor != "nvidia"]
        for g in nvidia_sel:
            left[g.index] = msg("left.macos-no-cuda")
    if not env.jetson and env.machine == "aarch64":
        tegra = {ComputeCapability.parse(cc) for r in B.opt_rows(db, "pytorch", "jetson") for cc in r.get("ccs", [])}
        jetson_gpu = next((g for g in nvidia_sel if g.cc in tegra), None)
        if jetson_gpu is not None:
            env.jetson = True
            env_notes.append(msg("note.jetson-inferred", gpu=jetson_gpu.label, cc=str(jetson_gpu.cc)))
    for g in gpus:
        if g.classified_from and g in selected:
            env_notes.append(msg("note.cc-classified", gpu=g.label, cc=str(g.cc), architecture=g.architecture, source=g.classified_from))
    plans = []
    for name in frameworks:
        fw = _ALIASES.get(name.lower())
        if fw is None:
            raise RequestError(msg("request.unknown-framework", name=name))
        plans.append(_plan_for(db, fw, env, gpus, selected, dict(left), env_notes + sel_notes))
    return plans
