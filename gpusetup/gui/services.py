"""The one adapter through which the wizard reaches the core.

The wizard decides nothing: it asks :class:`Services` and shows the answer. The core's parts are imported on
first use (:func:`_core`), so the first page paints before they load. Tests replace this class with a
``FakeServices`` fed by recorded real fixtures (which may also report a part :class:`Unavailable`). Nothing here
imports Qt, so it can run in worker threads.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup import paths
from gpusetup.cancel import CancelToken, Progress, SaidProgress
from gpusetup.i18n import output_language
from gpusetup.messages import add_note, msg
from gpusetup.model import (
    Finding,
    FrameworkPlan,
    Machine,
    Message,
    Plan,
    Report,
    SelfTestResult,
    from_dict,
    to_dict,
)
from gpusetup.runner import SubprocessRunner

log = logging.getLogger("gpusetup.gui.services")

LogFn = Callable[[str], None]

FRAMEWORKS: tuple[str, ...] = ("pytorch", "tensorflow", "jax")

# The core's parts the wizard uses (:func:`_core` imports each); the wizard loads them in the background after
# its first paint (gui/wizard.py ``_check_features``).
FEATURES: tuple[str, ...] = ("detect", "rules", "resolve", "install", "selftest", "docker", "report", "bundle")

_KEEP: Any = object()  # use_network: a setting the caller did not name stays as it was


class Unavailable(RuntimeError):
    """This part of gpusetup is not in this version (its module or function is missing)."""

    def __init__(self, feature: str, detail: str = "") -> None:
        self.feature = feature
        super().__init__(f"'{feature}' is not available in this version of gpusetup. {detail}".strip())


@dataclass
class InstallOutcome:
    """What the installer engine reported, in the shape the wizard shows (mirrors install.ExecResult)."""

    ok: bool
    cancelled: bool = False
    failed_step: str | None = None
    message: str = ""
    needs_reboot: bool = False
    raw: Any = None
    fix: str | None = None  # what the user can change: disk-space / network / python-mirror / repair (ExecResult.fix)
    said: Message | None = None  # ``message`` as data (ExecResult.said), to word it in the interface's language
    notes: list[Message] = field(default_factory=list)  # said beside the outcome (ExecResult.notes)
    stopped: bool = False  # stopped between steps as the user asked (ExecResult.stopped)
    ran: list[str] | None = None  # steps that started in this call (ExecResult.ran); None: not told


@dataclass
class DockerOutcome:
    """What the container generator wrote (or why it refused), for the Install page."""

    ok: bool
    out_dir: str
    files: list[str] = field(default_factory=list)
    image: str | None = None
    why: str = ""
    next_commands: list[str] = field(default_factory=list)
    refused: str | None = None
    alternative: str | None = None
    warnings: list[str] = field(default_factory=list)
    raw: Any = None
    host_findings: list[Finding] = field(default_factory=list)  # can this host run GPU containers (by finding id)
    # the generator's words as data (gpusetup.messages), so the page can show them in the interface's language
    why_codes: list[Message] = field(default_factory=list)
    warning_codes: list[Message] = field(default_factory=list)
    refused_code: Message | None = None
    alternative_code: Message | None = None


@dataclass
class Target:
    """Where the frameworks go: ``kind`` is venv / python / conda / docker; ``value`` a path or name."""

    kind: str
    value: str

    def spec(self) -> str:
        """The installer's target string (``venv:<path>``, ``python:<exe>``, ``conda:<name>``)."""
        return f"{self.kind}:{self.value}"


def _core(feature: str) -> Any:
    """The core function behind a wizard feature (one of :data:`FEATURES`)."""
    # lazy: importing all of them before the first page cost 198 ms (python -X importtime over
    # gpusetup.gui.services, 2 cores, load average 5.6): the wizard paints first and loads them afterwards.
    if feature == "detect":
        from gpusetup.probe import detect  # lazy: see above

        return detect
    if feature == "rules":
        from gpusetup.rules import evaluate  # lazy: see above

        return evaluate
    if feature == "resolve":
        from gpusetup.compat.resolver import resolve  # lazy: see above

        return resolve
    if feature == "install":
        from gpusetup.install import execute  # lazy: see above

        return execute
    if feature == "selftest":
        from gpusetup.selftest import run_selftest  # lazy: see above

        return run_selftest
    if feature == "docker":
        from gpusetup.generate import generate_setup  # lazy: see above

        return generate_setup
    if feature == "report":
        from gpusetup.report import render  # lazy: see above

        return render
    if feature == "bundle":
        from gpusetup.bundle import build_bundle  # lazy: see above

        return build_bundle
    raise KeyError(feature)


def default_log_dir() -> Path:
    """Our log folder (``gpusetup.paths.log_dir``: XDG state dir, %LOCALAPPDATA%, ~/Library/Logs)."""
    return paths.log_dir()


def default_journal_dir() -> Path | None:
    """The installer's own journal folder, shared with ``gpusetup install --resume`` (None: its default)."""
    return None


class _LineWriter:
    """A file-like ``log`` for the installer that hands each complete line to a callback."""

    def __init__(self, fn: LogFn) -> None:
        self._fn = fn
        self._buf = ""

    def write(self, text: str) -> int:
        self._buf += text
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self._fn(line)
        return len(text)

    def flush(self) -> None:
        if self._buf:
            self._fn(self._buf)
            self._buf = ""


class Services:
    """Calls into the core for the wizard. Methods run in worker threads; none touches Qt."""

    def __init__(self, state_dir: Path | None = None) -> None:
        # state_dir is injected by tests; by default each core part uses its own per-user folder
        self.state_dir = Path(state_dir) if state_dir else None
        # tests: the frameworks every proof checks instead of the chosen ones (their stand-in package, numpy);
        # None: the frameworks the user chose, else those installed in the checked environment
        self.selftest_frameworks: tuple[str, ...] | None = None
        # the mirrors the user set in the wizard: None: not set here (the configuration file's applies, else the
        # official index); "": set to none (the official index, even when the file names a mirror)
        self.index_url: str | None = None
        self.pytorch_mirror: str | None = None
        self.python_mirror: str | None = None
        self._proxy_before: dict[str, str | None] | None = None  # the environment's proxy before the wizard set one

    # ----------------------------------------------------------------------------- availability

    def available(self, feature: str) -> bool:
        try:
            _core(feature)
        except Exception:  # noqa: BLE001 - a part that cannot load (a broken dependency) is missing for the page
            log.exception("importing %s failed", feature)
            return False
        return True

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs" if self.state_dir else default_log_dir()

    @property
    def journal_dir(self) -> Path | None:
        return self.state_dir / "install" if self.state_dir else default_journal_dir()

    @property
    def wizard_dir(self) -> Path:
        """Where the wizard keeps its own small files (what was chosen, for resuming after a reboot)."""
        if self.state_dir:
            return self.state_dir
        return paths.state_dir()

    @property
    def demo(self) -> bool:
        """True for the demonstration services (nothing on this computer is changed)."""
        return False

    def demo_title(self, language: str = "en") -> str | None:
        """What the demonstration machine is, in words (None for the real one)."""
        return None

    # -------------------------------------------------------------------------------- detection

    def detect(self, progress: Progress | None = None, cancel: CancelToken | None = None) -> Machine:
        detect = _core("detect")
        return detect(None, progress=progress, cancel=cancel)

    def evaluate(self, machine: Machine) -> list[Finding]:
        evaluate = _core("rules")
        return list(evaluate(machine))

    def fix_plan(self, finding: Finding, machine: Machine) -> Plan | None:
        """A plan the installer can run to fix this finding ("do it for me"), or None when it cannot.

        The installer can install or update the NVIDIA driver and the container toolkit; findings about
        those get a plan built by ``install.build_plan`` (nothing else is fixed automatically).
        """
        module = self._install_module()
        own = getattr(module, "fix_plan", None)
        try:
            if own is not None:
                return own(finding, machine)
            options = fix_options(finding)
            if options is None:
                return None
            return module.build_plan([], machine, **options)
        except Exception:  # noqa: BLE001 - "cannot fix automatically" is a fine answer
            log.info("no automatic fix for %s", finding.id, exc_info=True)
            return None

    # ---------------------------------------------------------------------------------- resolve

    def resolve(
        self, machine: Machine, frameworks: Sequence[str] = FRAMEWORKS, python_version: str | None = None
    ) -> list[FrameworkPlan]:
        resolve = _core("resolve")
        plans = list(resolve(machine, tuple(frameworks), python_version=python_version))
        from gpusetup.compat import live  # lazy: see _core (the plan-time index check)

        if live.enabled() and not self.demo:  # a demonstration (and its screenshots) must not depend on the network
            pypi, pytorch = self.mirrors()
            live.apply(plans, live.check(plans, machine, pypi_mirror=pypi or None, pytorch_mirror=pytorch or None))
        return plans

    # ---------------------------------------------------------------------------------- mirrors

    def mirrors(self) -> tuple[str, str]:
        """The PyPI and PyTorch wheel mirrors this wizard uses ("" for the official index): the ones set here,
        else the configuration file's (a broken file names none here; the plan then says what is wrong)."""
        pypi, pytorch = self.index_url, self.pytorch_mirror
        if pypi is None or pytorch is None:
            from gpusetup.config import ConfigError, load_config  # lazy: see _core

            try:
                cfg = load_config()
            except ConfigError:
                cfg = None
            pypi = pypi if pypi is not None else (cfg.pypi_mirror if cfg else None)
            pytorch = pytorch if pytorch is not None else (cfg.pytorch_mirror if cfg else None)
        from gpusetup import credentials  # lazy: see _core

        return credentials.remember(pypi) or "", credentials.remember(pytorch) or ""

    def check_mirrors(self, pypi: str, pytorch: str, fplans: Sequence[FrameworkPlan] = (),
                      machine: Machine | None = None) -> list[Message]:
        """Ask each mirror the user chose, before it is used, for the page the install will ask it (the PyTorch
        mirror for the chosen build's variant, the PyPI mirror for a project the plan installs from it). The
        problems, as messages ([] when every mirror answered); an empty field is "no mirror" and not asked."""
        from gpusetup import credentials, mirrors  # lazy: see _core
        from gpusetup.compat.download_size import install_choice  # lazy: see _core
        from gpusetup.install.net import check_index  # lazy: see _core (the installer's own index check)

        wsl = bool(machine is not None and machine.system.wsl)
        builds = [b for b in (install_choice(fp, wsl=wsl) for fp in fplans) if b is not None]
        problems: list[Message] = []
        for kind, url in (("pypi", pypi.strip()), ("pytorch", pytorch.strip())):
            if not url:
                continue
            bad = mirrors.url_problem(url)
            fail = msg("wizard.mirror.pypi-failed", why="") if kind == "pypi" else msg("wizard.mirror.pytorch-failed", why="")
            if bad is not None:
                shown = credentials.mask_url(url) if "://" in url else url
                problems.append(Message(fail.code, {"why": msg("url.not-a-url", value=repr(shown), why=bad)}))
                continue
            credentials.remember(url)
            if kind == "pytorch":
                page, project = mirrors.pytorch_probe(url, [b.index_url for b in builds]), "torch"
            else:
                page = url
                project = next((_project(b.packages[0]) for b in builds if b.index_url is None and b.packages), "pip")
            res = check_index(page, project)
            if not res.ok:
                problems.append(Message(fail.code, {"why": res.said if res.said is not None else res.message}))
        return problems

    def remember_mirrors(self, pypi: str, pytorch: str) -> Path:
        """Keep the mirrors in the configuration file the command line reads too (gpusetup.config.save_mirrors;
        its ConfigError says why not, e.g. a mirror with a password)."""
        from gpusetup.config import save_mirrors  # lazy: see _core

        return save_mirrors(pypi, pytorch)

    def set_mirrors(self, pypi: str, pytorch: str) -> None:
        """The mirrors the user chose on the plan page, already checked: "" is "none" (the official index), also
        over a mirror in the configuration file — clearing a field really clears it."""
        from gpusetup import credentials  # lazy: see _core

        self.index_url = credentials.remember(pypi.strip()) or ""
        self.pytorch_mirror = credentials.remember(pytorch.strip()) or ""

    # ---------------------------------------------------------------------------------- install

    def _install_module(self) -> Any:
        from gpusetup import install  # lazy: see _core

        return install

    def build_plan(self, fplans: list[FrameworkPlan], machine: Machine, target: Target) -> Plan:
        module = self._install_module()
        kwargs: dict[str, Any] = {}
        if target.kind == "conda":
            kwargs["conda_envs"] = self.conda_envs()
        if self.index_url is not None:  # "" is "none": the planner then ignores the file's mirror too
            kwargs["index_url"] = self.index_url
        if self.pytorch_mirror is not None:
            kwargs["pytorch_mirror"] = self.pytorch_mirror
        if self.python_mirror:
            kwargs["python_mirror"] = self.python_mirror
        plan = module.build_plan(fplans, machine, target=target.spec(), **kwargs)
        from gpusetup.compat import live  # lazy: see _core

        if live.enabled() and not self.demo and hasattr(module, "add_download_size"):
            module.add_download_size(plan)  # what pip will download, from the index (this runs on the plan worker)
        from gpusetup.install.python import newer_python_offer  # lazy: see _core

        here = next((fp.choice.python for fp in fplans if fp.choice is not None and fp.choice.python), None)
        offer = newer_python_offer(machine, fplans, here or python_version_of(machine))  # from the Python planned for
        if offer is not None:  # shown with the plan's notes, in the interface's language
            add_note(plan, offer)
        return plan

    def use_network(self, index_url: object = _KEEP, proxy: object = _KEEP, python_mirror: object = _KEEP) -> None:
        """What the user entered after a network failure: a PyPI mirror, a proxy (for pip and uv, which this
        process starts), a mirror of the Python builds. A value given replaces the one set here before; an empty
        one (None or "") clears it — the configuration file's mirror and the environment's proxy apply again —,
        so a mistyped mirror can be taken back. A setting not named stays as it was."""
        if index_url is not _KEEP:
            self.index_url = str(index_url).strip() or None if index_url else None
        if python_mirror is not _KEEP:
            self.python_mirror = str(python_mirror).strip() or None if python_mirror else None
        if proxy is not _KEEP:
            self._use_proxy(str(proxy).strip() if proxy else "")

    def _use_proxy(self, proxy: str) -> None:
        names = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
        if self._proxy_before is None:
            self._proxy_before = {v: os.environ.get(v) for v in names}
        for var in names:
            before = self._proxy_before.get(var)
            if proxy:
                os.environ[var] = proxy
            elif before is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = before

    def conda_envs(self) -> list[str] | None:
        """Names of existing conda environments (so the plan creates a missing one), None if unknown."""
        runner = SubprocessRunner()
        if runner.which("conda") is None:
            return None
        res = runner.run(["conda", "env", "list", "--json"], timeout=30)
        if not res.ok:
            return None
        try:
            return [Path(p).name for p in json.loads(res.stdout).get("envs", [])] + ["base"]
        except (ValueError, AttributeError):
            return None

    def render_script(self, plan: Plan, shell: str = "bash") -> str:
        # its comments and the lines it echoes in the interface's language (the commands are the same)
        return self._install_module().render_script(plan, shell=shell, language=output_language())

    def _log_kwargs(self, log_line: LogFn | None) -> tuple[dict[str, Any], _LineWriter | None]:
        if log_line is None:
            return {}, None
        writer = _LineWriter(log_line)
        return {"log": writer}, writer

    def execute(
        self,
        plan: Plan,
        progress: SaidProgress | None = None,
        cancel: CancelToken | None = None,
        log_line: LogFn | None = None,
        stop_after: CancelToken | None = None,
    ) -> InstallOutcome:
        """Run ``plan``; ``cancel`` stops the running step at once, ``stop_after`` once it has finished."""
        module = self._install_module()
        kwargs, writer = self._log_kwargs(log_line)
        try:
            result = module.execute(plan, journal_dir=self.journal_dir, progress=progress, cancel=cancel,
                                    stop_after=stop_after, **kwargs)
        finally:
            if writer:
                writer.flush()
        return _outcome(result)

    def resume(
        self,
        progress: SaidProgress | None = None,
        cancel: CancelToken | None = None,
        log_line: LogFn | None = None,
        stop_after: CancelToken | None = None,
        repair: bool = False,
    ) -> InstallOutcome:
        """Continue the unfinished install (after a reboot, a failure or a cancel); done steps are skipped, a
        step that was interrupted is redone from scratch. ``repair``: also check a finished install again and
        reinstall what is broken (the Install page's Repair button)."""
        module = self._install_module()
        kwargs, writer = self._log_kwargs(log_line)
        try:
            result = module.resume(self.journal_dir, progress=progress, cancel=cancel, stop_after=stop_after,
                                   repair=repair, **kwargs)
        finally:
            if writer:
                writer.flush()
        return _outcome(result)

    def repair(self, progress: SaidProgress | None = None, cancel: CancelToken | None = None,
               log_line: LogFn | None = None) -> InstallOutcome:
        """Reinstall what the install's checks found broken, then check again (``gpusetup install --repair``)."""
        return self.resume(progress=progress, cancel=cancel, log_line=log_line, repair=True)

    def install_estimates(self, plan: Plan) -> dict[str, Message]:
        """"about 2 min" for each step measured here before (``install.step_estimates``), as messages."""
        from gpusetup.install.timing import about  # lazy: see _core

        try:
            return {sid: about(sec) for sid, sec in self._install_module().step_estimates(plan, self.journal_dir).items()}
        except Exception:  # noqa: BLE001 - an estimate is never worth a failure
            log.info("no step estimates", exc_info=True)
            return {}

    def rollback(self, progress: SaidProgress | None = None, log_line: LogFn | None = None) -> InstallOutcome:
        module = self._install_module()
        kwargs, writer = self._log_kwargs(log_line)
        try:
            result = module.rollback(self.journal_dir, progress=progress, **kwargs)
        finally:
            if writer:
                writer.flush()
        return _outcome(result)

    # resume after a reboot: the installer's journal says whether an install is unfinished; the wizard
    # keeps beside it which frameworks the user picked.
    @property
    def _pending_file(self) -> Path:
        return self.wizard_dir / "wizard-pending.json"

    def save_pending(self, plan: Plan, target: Target, frameworks: Sequence[str]) -> None:
        self.wizard_dir.mkdir(parents=True, exist_ok=True)
        data = {
            "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "target": {"kind": target.kind, "value": target.value},
            "frameworks": list(frameworks),
            "plan": to_dict(plan),
        }
        tmp = self._pending_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        tmp.replace(self._pending_file)

    def unfinished_install(self) -> bool:
        """True when the installer's journal holds an install that did not finish."""
        jdir = Path(self.journal_dir) if self.journal_dir else paths.install_state_dir()
        try:
            if not jdir.is_dir() or not any(jdir.iterdir()):
                # no journal at all (the usual case): said without importing the installer, which took
                # 0.4 s on the UI thread right after the first paint (benchmarks/gui_responsiveness.py)
                return False
        except OSError:
            return False
        # lazy: see _core
        from gpusetup.install.journal import Journal

        try:
            return Journal(jdir).status() == "unfinished"
        except OSError:
            return False

    def load_pending(self) -> tuple[Plan, Target, list[str]] | None:
        """The unfinished installation to continue, or None (also when the saved files are damaged).

        The plan comes from the wizard's own file, or, for an install started with ``gpusetup install``,
        from the installer's saved plan in its journal folder.
        """
        if not self.unfinished_install():
            return None
        try:
            data = json.loads(self._pending_file.read_text(encoding="utf-8"))
            plan = from_dict(Plan, data["plan"])
            target = Target(str(data["target"]["kind"]), str(data["target"]["value"]))
            return plan, target, [str(f) for f in data.get("frameworks", [])]
        except FileNotFoundError:
            return self._installer_pending()
        except Exception:  # noqa: BLE001 - a damaged resume file must not stop the wizard
            log.warning("ignoring unreadable %s", self._pending_file, exc_info=True)
            return self._installer_pending()

    def _installer_pending(self) -> tuple[Plan, Target, list[str]] | None:
        try:
            # lazy: see _core
            from gpusetup.install import InstallPlan, default_state_dir
            from gpusetup.install.journal import PLAN

            jdir = self.journal_dir or default_state_dir()
            iplan = from_dict(InstallPlan, json.loads((jdir / PLAN).read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 - nothing readable to resume
            log.info("no readable installer plan to resume", exc_info=True)
            return None
        kind, _, value = (iplan.target or "venv:").partition(":")
        return iplan, Target(kind or "venv", value), []

    def clear_pending(self) -> None:
        self._pending_file.unlink(missing_ok=True)
        self.resume_at_login(False)

    def resume_at_login(self, on: bool) -> Path | None:
        """Open the wizard at the next login to continue (on), or stop doing so; the entry's path when on
        and this system has an autostart folder, else None."""
        from gpusetup.install import autostart  # lazy: see _core

        try:
            if on:
                return autostart.enable()
            autostart.disable()
        except OSError:
            log.warning("autostart entry", exc_info=True)
        return None

    # ----------------------------------------------------------------------------------- docker

    def generate_setup(self, machine: Machine, framework: str, out_dir: Path) -> DockerOutcome:
        generate_setup = _core("docker")
        res = generate_setup(machine, framework, Path(out_dir))
        return _docker_outcome(res, Path(out_dir))

    def docker_refusals(self, machine: Machine, frameworks: Sequence[str]) -> dict[str, DockerOutcome]:
        """Which of ``frameworks`` no container image can serve on this host, and why — the generator's own
        choice, made before anything is offered (the plan page then never offers to write files that would be
        refused). Nothing is written."""
        _core("docker")
        from gpusetup.generate import select  # lazy: see _core

        out: dict[str, DockerOutcome] = {}
        for fw in frameworks:
            try:
                sel = select.choose(machine, fw)
            except ValueError:  # a framework the generator does not know: the install page says so
                continue
            if isinstance(sel, select.Refusal):
                out[fw] = DockerOutcome(ok=False, out_dir="", refused=sel.reason, alternative=sel.alternative,
                                        refused_code=sel.reason_code,
                                        alternative_code=sel.alternative_code, raw=sel)
        return out

    # --------------------------------------------------------------------------------- selftest

    def run_selftest(
        self,
        machine: Machine,
        mode: str = "quick",
        progress: Progress | None = None,
        cancel: CancelToken | None = None,
        python: str | None = None,
        frameworks: Sequence[str] | None = None,
    ) -> SelfTestResult:
        """Measure; the framework tier checks the environment of ``python`` (the one just installed, or the
        one the user picked), for ``frameworks`` (None: the usual ones)."""
        run_selftest = _core("selftest")
        from gpusetup.selftest import SelfTestEnv  # lazy: see _core

        env = SelfTestEnv(python=python)
        env.frameworks = self._checked_frameworks(frameworks)
        result = run_selftest(machine, mode=mode, progress=progress, cancel=cancel, env=env)
        if not self.demo:  # how long it took here, for the next run's announcement
            from gpusetup.selftest import timing  # lazy: see _core

            timing.record(self.wizard_dir, result, env.frameworks or ())
        return result

    def _checked_frameworks(self, frameworks: Sequence[str] | None) -> tuple[str, ...] | None:
        """What the proof checks: the tests' stand-in, else the frameworks chosen (None: those installed there)."""
        if self.selftest_frameworks is not None:
            return tuple(self.selftest_frameworks)
        return tuple(frameworks) if frameworks is not None else None

    def selftest_estimate(self, frameworks: Sequence[str] | None = None, mode: str = "quick") -> Message:
        """What to announce before the self-test: how long it took here before (measured), else its bound."""
        from gpusetup.selftest import timing  # lazy: see _core

        return timing.estimate(self.wizard_dir, mode, self._checked_frameworks(frameworks) or ())

    # "Check another Python environment…": what is on this computer, and whether the proof can run there
    def proof_frameworks(self) -> tuple[str, ...]:
        from gpusetup.install.environments import DEFAULT_FRAMEWORKS  # lazy: see _core

        return tuple(self.selftest_frameworks or DEFAULT_FRAMEWORKS)

    def installed_environments(self) -> list[Any]:
        """The environments gpusetup's installer made (``install.environments.Installed``), newest first, from its
        journal folder: what Verify proves after a resume, a reopened wizard or a restart of the app."""
        from gpusetup.install import environments  # lazy: see _core

        return environments.from_journal(self.journal_dir)

    def proof_environments(self, machine: Machine | None, installed: Sequence[str] = ()) -> list[Any]:
        """The environments found here (``install.environments.EnvCheck``), those the proof can run in first."""
        from gpusetup.install import environments  # lazy: see _core

        return environments.known(machine, installed, self.proof_frameworks())

    def check_environment(self, path: str) -> Any:
        """Whether the proof can run in the environment at ``path`` (a python program or its folder)."""
        from gpusetup.install import environments  # lazy: see _core

        return environments.check(path, self.proof_frameworks())

    # ---------------------------------------------------------------------------------- reports

    def render_report(self, report: Report, fmt: str) -> str:
        render = _core("report")
        return render(report, fmt)

    def create_bundle(self, report: Report, out_path: Path) -> Path:
        build_bundle = _core("bundle")
        result = build_bundle(Path(out_path), report)
        return Path(getattr(result, "path", out_path))


def _project(requirement: str) -> str:
    """The project a requirement names ('jax[cuda13]==0.10.2' → 'jax')."""
    return re.split(r"[\[=<>!~; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


# findings (by the rules' stable ids) that the installer can fix, and the build_plan options that do it
FIXABLE: dict[str, dict[str, Any]] = {
    "nvidia-driver-missing": {"driver": True},
    "driver-too-old-for-cuda": {"driver": True},
    "container-toolkit-missing": {"container_toolkit": True},
}


def fix_options(finding: Finding) -> dict[str, Any] | None:
    """``build_plan`` options for a finding the installer knows how to fix, or None."""
    return FIXABLE.get(finding.id)


def _outcome(result: Any) -> InstallOutcome:
    if isinstance(result, InstallOutcome):
        return result
    message = str(getattr(result, "message", "") or "")
    cancelled = bool(getattr(result, "cancelled", False))
    reboot = bool(getattr(result, "reboot_needed", False) or getattr(result, "needs_reboot", False))
    return InstallOutcome(
        # the installer pauses for a restart with ok=False (its command line exits 1 there); for the page that is
        # no failure but "restart now", as the demonstration says it (never "Step 'Restart' failed")
        ok=bool(getattr(result, "ok", False)) or (reboot and not cancelled),
        cancelled=cancelled,
        failed_step=getattr(result, "failed_step", None),
        message=message,
        needs_reboot=reboot,
        raw=result,
        fix=getattr(result, "fix", None),
        said=getattr(result, "said", None),  # the core's decision (worded for the wizard by its @wizard wording)
        notes=[n for n in (getattr(result, "notes", None) or []) if isinstance(n, Message)],
        stopped=bool(getattr(result, "stopped", False)),
        ran=list(getattr(result, "ran", None) or []) if hasattr(result, "ran") else None,
    )


def _docker_outcome(res: Any, out_dir: Path) -> DockerOutcome:
    if isinstance(res, DockerOutcome):
        return res

    def words(v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return "; ".join(str(x) for x in v)
        return str(v or "")

    refused = getattr(res, "refused", None)
    warnings = [str(w) for w in (getattr(res, "warnings", None) or [])]
    host = [f for f in (getattr(res, "host_findings", None) or []) if isinstance(f, Finding)]
    return DockerOutcome(
        ok=bool(getattr(res, "ok", not refused)),
        out_dir=str(getattr(res, "out_dir", None) or out_dir),
        files=[str(f) for f in (getattr(res, "files", None) or [])],
        image=getattr(res, "image", None),
        why=words(getattr(res, "why", "")),
        next_commands=[str(c) for c in (getattr(res, "next_commands", None) or [])],
        refused=words(refused) if refused else None,
        alternative=getattr(res, "alternative", None),
        warnings=warnings,
        raw=res,
        host_findings=host,
        why_codes=_codes(getattr(res, "why_codes", None), getattr(res, "why", None)),
        warning_codes=_codes(getattr(res, "warning_codes", None), warnings),
        refused_code=getattr(res, "reason_code", None) if refused else None,
        alternative_code=getattr(res, "alternative_code", None) if refused else None,
    )


def _codes(codes: Any, texts: Any) -> list[Message]:
    """The messages, when there is one per English line (else none: the page shows the English)."""
    codes = [c for c in (codes or []) if isinstance(c, Message)]
    return codes if isinstance(texts, (list, tuple)) and len(codes) == len(texts) else []


def proof_python(plan: Plan | None, target: Target | None, install: InstallOutcome | None) -> str | None:
    """The interpreter whose frameworks Verify checks: the environment that was just installed (or the
    Python the user picked); None when nothing was installed there (the self-test then says 'not proven')."""
    if target is None:
        return None
    if target.kind == "python":
        return target.value
    py = list(getattr(plan, "python", None) or [])
    if target.kind == "venv" and install is not None and install.ok and not install.needs_reboot and len(py) == 1:
        return py[0]
    return None


def python_version_of(machine: Machine) -> str | None:
    """The Python version the plan should target: the running interpreter, when it was detected."""
    if machine.system.python:
        return str(machine.system.python)
    return f"{sys.version_info.major}.{sys.version_info.minor}"
