"""Demonstration services for ``gpusetup gui --fake-machine KIND`` and the screenshots.

The machine comes from ``resources/demo/<kind>.json``: values read from the recorded real outputs in
``tests/fixtures`` (each file names its sources). Rules, resolver, plan builder and report renderers are
the real core, run on that machine. Nothing on this computer is changed: installing only walks the plan
and logs what would run, the Docker files go to a temporary folder, and the self-test shows the recorded
results when the fixture has them (otherwise the real self-test runs, on this computer).
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpusetup.cancel import CancelToken, Progress, SaidProgress
from gpusetup.gui.services import DockerOutcome, InstallOutcome, LogFn, Services, Target
from gpusetup.messages import add_note, msg
from gpusetup.mirrors import url_problem
from gpusetup.model import FrameworkPlan, Machine, Message, Plan, SelfTestResult, from_dict
from gpusetup.resources import resource

PROBES = ("system", "pci", "nvml", "smi", "libcuda", "driver", "toolkit", "frameworks", "containers", "packages")


DEMO_SELFTEST_NOTE = msg("selftest.note.demo")


class DemoError(ValueError):
    """Unknown demo machine kind."""


def demo_kinds() -> list[str]:
    return sorted(p.stem for p in resource("demo").glob("*.json"))


def load_demo(kind: str) -> dict[str, Any]:
    path = resource("demo", f"{kind}.json")
    if not path.exists():
        raise DemoError(f"unknown demo machine {kind!r}; choose one of: {', '.join(demo_kinds())}")
    return json.loads(path.read_text(encoding="utf-8"))


def demo_machine(kind: str) -> Machine:
    return from_dict(Machine, load_demo(kind)["machine"])


class DemoServices(Services):
    """Real core decisions on a recorded machine; no changes to this computer."""

    _selftest_cache: dict[str, SelfTestResult] = {}  # the real self-test of this computer, run once

    def __init__(self, kind: str, state_dir: Path | None = None, step_delay: float = 0.12) -> None:
        # never the real state folder: its own temporary one (log, choices) unless a test gives one
        super().__init__(state_dir or Path(tempfile.mkdtemp(prefix="gpusetup-demo-")))
        self.kind = kind
        self.data = load_demo(kind)
        self.machine = from_dict(Machine, self.data["machine"])
        self.step_delay = step_delay
        self._done_steps: list[str] = []  # the steps the walk got through (a pending restart is not one)
        self._paused_at: str | None = None  # the restart step the last walk stopped at

    @property
    def demo(self) -> bool:
        return True

    def demo_title(self, language: str = "en") -> str | None:
        return str(self.data.get(f"title_{language}") or self.data.get("title") or self.kind)

    def detect(self, progress: Progress | None = None, cancel: CancelToken | None = None) -> Machine:
        for i, name in enumerate(PROBES):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if progress:
                progress(name, i / len(PROBES))
            time.sleep(self.step_delay / 2)
        if progress:
            progress("done", 1.0)
        return copy.deepcopy(self.machine)

    def _walk(self, plan: Plan, progress: SaidProgress | None, cancel: CancelToken | None, log_line: LogFn | None,
              stop_after: CancelToken | None = None) -> InstallOutcome:
        # lazy: gpusetup.install costs 151 ms before the first paint (python -X importtime over gpusetup.gui.app;
        # tests/gui/test_first_paint.py keeps the core out until then)
        from gpusetup.install import display_argv

        steps = plan.steps
        for i, step in enumerate(steps):
            if step.id in self._done_steps:
                continue
            if cancel is not None and cancel.cancelled:
                return InstallOutcome(ok=False, cancelled=True, message="cancelled")
            if stop_after is not None and stop_after.cancelled:  # asked to stop after the step before
                return InstallOutcome(ok=False, cancelled=True, stopped=True, failed_step=step.id, message="stopped")
            if progress:  # worded as the installer words it (gpusetup.install.execute)
                progress(msg("install.progress.step", i=i + 1, n=len(steps),
                             title=step.title_code if step.title_code is not None else step.title), i / max(1, len(steps)))
            if log_line:
                log_line(f"[demo] step {i + 1}/{len(steps)}: {step.title}")
                if step.argv:
                    log_line("[demo] would run: " + display_argv(step.argv, step.needs_root))
            time.sleep(self.step_delay)
            if step.kind == "reboot":  # the install pauses here, as the installer does: the restart has not happened
                if log_line:
                    log_line("[demo] a restart would be needed here")
                self._paused_at = step.id
                return InstallOutcome(ok=True, needs_reboot=True, failed_step=step.id, message="restart needed",
                                      said=msg("install.exec.restart-now"))
            self._done_steps.append(step.id)
        if progress:
            progress(msg("install.progress.done"), 1.0)
        return InstallOutcome(ok=True, message="demonstration: nothing was changed")

    def build_plan(self, fplans: list[FrameworkPlan], machine: Machine, target: Target) -> Plan:
        """The recorded machine's plan, shown and walked, never run here: its venv is made by *that* machine's
        Python (``python3.9`` for a 3.9 machine), named rather than looked up on this computer's PATH. Portable:
        it looks at nothing on this computer (no existing environment, no interpreters, no conda)."""
        if target.kind != "venv":
            return super().build_plan(fplans, machine, target)
        version = machine.system.python or (machine.python_envs[0].version if machine.python_envs else None)
        m = re.match(r"(\d+)\.(\d+)", str(version or ""))
        kwargs: dict[str, Any] = {"base_python": f"python{m.group(1)}.{m.group(2)}"} if m else {}
        if self.index_url is not None:  # the mirrors set on the plan page ("" is "none"), as the real services do
            kwargs["index_url"] = self.index_url
        if self.pytorch_mirror is not None:
            kwargs["pytorch_mirror"] = self.pytorch_mirror
        return self._install_module().build_plan(fplans, machine, target=target.spec(), portable=True, **kwargs)

    def check_mirrors(self, pypi: str, pytorch: str, fplans: Sequence[FrameworkPlan] = (),
                      machine: Machine | None = None) -> list[Message]:
        """A demonstration asks no network (its screenshots must not depend on one): the URLs are checked as
        URLs, and the plan shows them; nothing is downloaded anyway."""
        problems: list[Message] = []
        for url, code in ((pypi.strip(), "pypi"), (pytorch.strip(), "pytorch")):
            bad = url_problem(url) if url else None
            if bad is not None:
                why = msg("url.not-a-url", value=repr(url), why=bad)
                problems.append(msg("wizard.mirror.pypi-failed", why=why) if code == "pypi"
                                else msg("wizard.mirror.pytorch-failed", why=why))
        return problems

    def execute(self, plan: Plan, progress: SaidProgress | None = None, cancel: CancelToken | None = None, log_line: LogFn | None = None,
                stop_after: CancelToken | None = None) -> InstallOutcome:
        self._done_steps = []
        self._paused_at = None
        self._last_plan = plan
        return self._walk(plan, progress, cancel, log_line, stop_after)

    def resume(self, progress: SaidProgress | None = None, cancel: CancelToken | None = None, log_line: LogFn | None = None,
               stop_after: CancelToken | None = None, repair: bool = False) -> InstallOutcome:
        plan = getattr(self, "_last_plan", None)
        if plan is None:
            return InstallOutcome(ok=False, message="nothing to resume")
        if self._paused_at is not None:  # continuing after the restart: the restart is what happened in between
            self._done_steps.append(self._paused_at)
            self._paused_at = None
        return self._walk(plan, progress, cancel, log_line, stop_after)

    def install_estimates(self, plan: Plan) -> dict[str, Any]:
        """No estimates in a demonstration: nothing was measured on the recorded machine."""
        return {}

    def rollback(self, progress: SaidProgress | None = None, log_line: LogFn | None = None) -> InstallOutcome:
        for sid in reversed(self._done_steps):
            if log_line:
                log_line(f"[demo] would undo: {sid}")
            time.sleep(self.step_delay / 2)
        self._done_steps = []
        return InstallOutcome(ok=True, message="demonstration: nothing to undo")

    def unfinished_install(self) -> bool:
        return False

    def conda_envs(self) -> list[str] | None:
        return None

    def save_pending(self, plan: Plan, target: Target, frameworks: Sequence[str]) -> None:
        """The demonstration keeps nothing for a resume."""

    def clear_pending(self) -> None:
        """The demonstration keeps nothing for a resume."""

    def generate_setup(self, machine: Machine, framework: str, out_dir: Path) -> DockerOutcome:
        tmp = Path(tempfile.mkdtemp(prefix="gpusetup-demo-docker-")) / Path(out_dir).name
        return super().generate_setup(machine, framework, tmp)

    def run_selftest(self, machine: Machine, mode: str = "quick", progress: Progress | None = None, cancel: CancelToken | None = None, python: str | None = None, frameworks: Sequence[str] | None = None) -> SelfTestResult:
        recorded = self.data.get("selftest")
        if recorded is None:
            cached = DemoServices._selftest_cache.get(mode)
            if cached is None:
                cached = super().run_selftest(machine, mode=mode, progress=progress, cancel=cancel)
                if not cached.cancelled:
                    add_note(cached, DEMO_SELFTEST_NOTE, index=0)
                    DemoServices._selftest_cache[mode] = cached
            return copy.deepcopy(cached)
        from gpusetup.selftest.recorded import rate_recorded  # lazy: 19 ms before the first paint (as above)

        result = rate_recorded(from_dict(SelfTestResult, recorded), self.machine)
        for i, m in enumerate(result.measurements):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if progress:
                progress(m.name, i / max(1, len(result.measurements)))
            time.sleep(self.step_delay)
        return result
