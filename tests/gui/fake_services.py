"""FakeServices: the wizard's core adapter with scripted answers, for driving the wizard in tests.

Machines are the demonstration machines in ``resources/demo`` (values read from the recorded real outputs
in ``tests/fixtures``, each file names its sources). Findings, resolver answers, plans and self-test
results are set per test; every call is recorded so tests can assert what the wizard asked for.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from gpusetup.cancel import Cancelled, CancelToken, Progress
from gpusetup.gui.demo import demo_machine
from gpusetup.gui.services import DockerOutcome, InstallOutcome, LogFn, Services, Target, Unavailable
from gpusetup.messages import msg, worded_step
from gpusetup.model import (
    Action,
    Choice,
    Finding,
    FrameworkPlan,
    Machine,
    Measurement,
    Message,
    Plan,
    Rejected,
    Report,
    SelfTestResult,
    Severity,
    Step,
    to_dict,
)


def torch_plan(ok: bool = True) -> FrameworkPlan:
    c = Choice(version="2.9.1", variant="cu128", index_url="https://download.pytorch.org/whl/cu128", packages=["torch==2.9.1"])
    return FrameworkPlan(
        framework="pytorch",
        ok=ok,
        choice=c if ok else Choice(version="2.9.1", variant="cpu", packages=["torch==2.9.1"]),
        gpu_choice=None if ok else c,
        actions=[] if ok else [Action(kind="install-driver", why="No NVIDIA driver is working.", min_version="570", commands=["sudo ubuntu-drivers install"])],
        rejected=[Rejected("cu130", "needs driver 580 or newer; you have 570.124.04"), Rejected("rocm6.4", "no AMD GPU")],
        gpus_covered=[0],
    )


def tf_plan() -> FrameworkPlan:
    return FrameworkPlan(framework="tensorflow", ok=True, choice=Choice(version="2.20.0", variant="and-cuda", packages=["tensorflow[and-cuda]==2.20.0"]))


def jax_impossible() -> FrameworkPlan:
    return FrameworkPlan(framework="jax", ok=False, rejected=[Rejected("jax cuda12", "JAX has no builds for this Python version")])


def install_steps() -> list[Step]:
    return [
        worded_step("create-venv", msg("step.title.create-venv", venv="/x"), msg("step.explain.create-venv"),
                    argv=["python3", "-m", "venv", "/x"], kind="venv"),
        # a step without codes (a plan saved by an older version): shown with its English title
        Step(id="pip-torch", title="Install torch", argv=["/x/bin/python", "-m", "pip", "install", "torch==2.9.1"], kind="pip"),
        worded_step("verify", msg("step.title.verify"), msg("step.explain.verify"), argv=["/x/bin/python", "-c", "pass"]),
    ]


def driver_finding() -> Finding:
    return Finding(
        id="driver-missing",
        severity=Severity.ERROR,
        title="The NVIDIA driver is not working",
        detail="nvidia-smi could not talk to the driver, so no program can use the graphics card.",
        fix="sudo ubuntu-drivers install",
    )


class FakeServices(Services):
    def __init__(self, kind: str = "rtx3060", state_dir: Path | None = None) -> None:
        super().__init__(state_dir)
        self.machine: Machine = demo_machine(kind)
        self.findings: list[Finding] = []
        self.fplans: list[FrameworkPlan] = [torch_plan(), tf_plan(), jax_impossible()]
        self.steps = install_steps()
        self.fail_at: str | None = None  # step id that fails
        self.block_install = False  # execute waits until cancelled
        self.reboot_after: str | None = None
        self.step_delay = 0.01
        self.detect_delay = 0.01
        self.selftest = SelfTestResult(
            mode="quick",
            gpu_tested=True,
            verdict="pass",
            measurements=[
                Measurement(name="h2d_pinned", value=12.3, unit="GB/s", rated=15.75, fraction=0.78, verdict="pass", tier="driver"),
                Measurement(name="cublas_fp32", value=11.0, unit="TFLOP/s", rated=12.7, fraction=0.87, verdict="pass", tier="cublas"),
                Measurement(name="cpu_matmul_fp32", value=200.0, unit="GFLOP/s", verdict="info", tier="cpu"),
                Measurement(name="gpu_cpu_speedup", value=55.0, unit="x", verdict="info", tier="cpu", reason="FP32 matrix multiply, both measured on this machine"),
            ],
        )
        self.unavailable: set[str] = set()
        self.fixable: set[str] = set()
        self.calls: list[tuple[str, Any]] = []
        self.install_started = threading.Event()
        self.release_install = threading.Event()  # a blocked install goes on (it "finishes on its own")
        self.finish_on_stop_after = True  # a blocked step ends when asked to stop after it
        self.estimates: dict[str, int] = {}  # step id → minutes measured "here before"
        self.pending: tuple[Plan, Target, list[str]] | None = None

    def _check(self, feature: str) -> None:
        if feature in self.unavailable:
            raise Unavailable(feature)

    def available(self, feature: str) -> bool:
        return feature not in self.unavailable

    def detect(self, progress: Progress | None = None, cancel: CancelToken | None = None) -> Machine:
        self._check("detect")
        self.calls.append(("detect", None))
        for i, name in enumerate(("system", "pci", "nvml", "smi")):
            if progress:
                progress(name, i / 4)
            time.sleep(self.detect_delay)
        return self.machine

    def evaluate(self, machine: Machine) -> list[Finding]:
        self._check("rules")
        return list(self.findings)

    def fix_plan(self, finding: Finding, machine: Machine) -> Plan | None:
        if finding.id in self.fixable:
            return Plan(steps=[Step(id="driver", title="Install the NVIDIA driver", argv=["bash", "nvidia-driver.sh"], needs_root=True)])
        return None

    def resolve(self, machine: Machine, frameworks: Any = (), python_version: str | None = None) -> list[FrameworkPlan]:
        self._check("resolve")
        self.calls.append(("resolve", tuple(frameworks)))
        return list(self.fplans)

    def build_plan(self, fplans: list[FrameworkPlan], machine: Machine, target: Target) -> Plan:
        self._check("install")
        self.calls.append(("build_plan", (tuple(p.framework for p in fplans), target.spec())))
        return Plan(steps=list(self.steps), notes=["Packages come from download.pytorch.org."])

    def render_script(self, plan: Plan, shell: str = "bash") -> str:
        return "#!/usr/bin/env bash\nset -euo pipefail\n" + "\n".join(" ".join(s.argv) for s in plan.steps) + "\n"

    def _run(self, plan: Plan, start: int, progress: Progress | None, cancel: CancelToken | None, log_line: LogFn | None,
             stop_after: CancelToken | None = None) -> InstallOutcome:
        self.install_started.set()
        ran: list[str] = []
        for step in plan.steps[start:]:
            if stop_after is not None and stop_after.cancelled:
                return InstallOutcome(ok=False, cancelled=True, stopped=True, failed_step=step.id, message="stopped", ran=ran)
            ran.append(step.id)
            if progress:
                progress(step.title, plan.steps.index(step) / len(plan.steps))
            if log_line:
                log_line(f"$ {' '.join(step.argv)}")
            if self.block_install and step.id == "pip-torch":
                while cancel is not None and not cancel.wait(0.01):
                    if stop_after is not None and stop_after.cancelled and self.finish_on_stop_after:
                        break
                    if self.release_install.is_set():
                        break
            if cancel is not None and cancel.cancelled:
                return InstallOutcome(ok=False, cancelled=True, failed_step=step.id, message="cancelled", ran=ran)
            time.sleep(self.step_delay)
            if step.id == self.fail_at:
                if log_line:
                    log_line("ERROR: No matching distribution found for torch==2.9.1")
                return InstallOutcome(ok=False, failed_step=step.id, message="pip could not find torch==2.9.1 for this Python.")
            if step.id == self.reboot_after:
                return InstallOutcome(ok=True, needs_reboot=True)
        return InstallOutcome(ok=True, ran=ran)

    def execute(self, plan: Plan, progress: Progress | None = None, cancel: CancelToken | None = None, log_line: LogFn | None = None,
                stop_after: CancelToken | None = None) -> InstallOutcome:
        self._check("install")
        self.calls.append(("execute", [s.id for s in plan.steps]))
        return self._run(plan, 0, progress, cancel, log_line, stop_after)

    def resume(self, progress: Progress | None = None, cancel: CancelToken | None = None, log_line: LogFn | None = None,
               stop_after: CancelToken | None = None, repair: bool = False) -> InstallOutcome:
        self.calls.append(("resume", "repair" if repair else None))
        self.fail_at = None
        return self._run(Plan(steps=list(self.steps)), 1, progress, cancel, log_line, stop_after)

    def install_estimates(self, plan: Plan) -> dict[str, Message]:
        return {sid: msg("install.time.about", time=msg("duration.minutes", n=n)) for sid, n in self.estimates.items()}

    def rollback(self, progress: Progress | None = None, log_line: LogFn | None = None) -> InstallOutcome:
        self.calls.append(("rollback", None))
        self.pending = None
        if log_line:
            log_line("undo: removed /x")
        return InstallOutcome(ok=True)

    def save_pending(self, plan: Plan, target: Target, frameworks: Any) -> None:
        self.calls.append(("save_pending", target.spec()))

    def load_pending(self) -> tuple[Plan, Target, list[str]] | None:
        return self.pending

    def unfinished_install(self) -> bool:
        return self.pending is not None

    def clear_pending(self) -> None:
        self.calls.append(("clear_pending", None))
        self.pending = None

    def resume_at_login(self, on: bool) -> Path | None:
        self.calls.append(("resume_at_login", on))
        return Path("/home/user/.config/autostart/gpusetup-resume.desktop") if on else None

    def generate_setup(self, machine: Machine, framework: str, out_dir: Path) -> DockerOutcome:
        self._check("docker")
        self.calls.append(("generate_setup", (framework, str(out_dir))))
        return DockerOutcome(
            ok=True,
            out_dir=str(out_dir),
            files=["Dockerfile", "compose.yaml"],
            image="pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
            why="the newest image your driver (CUDA 12.8) can run",
            next_commands=[f"cd {out_dir}", "docker compose up --build"],
        )

    def run_selftest(self, machine: Machine, mode: str = "quick", progress: Progress | None = None, cancel: CancelToken | None = None, python: str | None = None, frameworks: Any = None) -> SelfTestResult:
        self._check("selftest")
        self.calls.append(("selftest", mode))
        self.selftest_python = python
        for i, m in enumerate(self.selftest.measurements):
            if cancel is not None and cancel.cancelled:
                raise Cancelled()
            if progress:
                progress(m.name, i / len(self.selftest.measurements))
            time.sleep(self.step_delay)
        return self.selftest

    def render_report(self, report: Report, fmt: str) -> str:
        import json

        self.calls.append(("render_report", fmt))
        if fmt == "json":
            return json.dumps(to_dict(report))
        if fmt == "text":
            return "gpusetup report\n" + "\n".join(g.name or "?" for g in report.machine.gpus)
        return "<html><body>report</body></html>"

    def create_bundle(self, report: Report, out_path: Path) -> Path:
        self.calls.append(("create_bundle", str(out_path)))
        Path(out_path).write_bytes(b"PK\x05\x06" + b"\0" * 18)
        return Path(out_path)

    def called(self, name: str) -> list[Any]:
        return [arg for n, arg in self.calls if n == name]
