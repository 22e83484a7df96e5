"""``gpusetup install``: show the plan, ask, then run it step by step with progress, a log and a journal.

Exit codes: 0 done (or dry-run / script written), 1 paused for a reboot, 2 a step failed or was cancelled,
3 nothing could be done as asked (bad input, no confirmation possible, unfinished earlier install).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gpusetup import credentials, term
from gpusetup.cancel import CancelToken
from gpusetup.commands import carried, gpu_number, index_url, load_for_file, write_atomic
from gpusetup.commands.plan import live_check
from gpusetup.compat.resolver import resolve
from gpusetup.config import ConfigError, load_config
from gpusetup.credentials import scrub
from gpusetup.errors import EXIT_ERROR, EXIT_OK, EXIT_TOOL, EXIT_WARN, ToolError
from gpusetup.i18n import output_language
from gpusetup.install import (
    PlanError,
    add_download_size,
    build_plan,
    default_state_dir,
    display_argv,
    execute,
    render_script,
    repair,
    resume,
    rollback,
    step_estimates,
)
from gpusetup.install.execute import MOK_PASSWORD
from gpusetup.install.journal import Journal
from gpusetup.install.python import find_uv, newer_python_offer
from gpusetup.install.timing import about
from gpusetup.messages import add_note, msg, render, render_notes, step_explain, step_title
from gpusetup.model import Message
from gpusetup.paths import state_folder
from gpusetup.probe import detect
from gpusetup.runner import SubprocessRunner

FRAMEWORK_CHOICES = ("pytorch", "tensorflow", "jax")
DEFAULT_TARGET = "venv:~/gpu-env"


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Install the PyTorch/TensorFlow/JAX build that `gpusetup plan` chooses: shows every step "
        "first, asks, then runs it with progress, a full log and a journal that --resume and --rollback use. "
        "Every install ends with checks (the installed files against their RECORD hashes, the versions, an "
        "import of each framework); a step interrupted by a crash, a kill or a power cut is redone from scratch by "
        "--resume. Exit code: 0 done and checked, 1 restart needed, 2 a step or check failed or was cancelled, "
        "3 nothing was done."
    )
    p.add_argument("--framework", "-f", action="append", choices=FRAMEWORK_CHOICES,
                   help="framework to install (repeat for several; default pytorch)")
    p.add_argument("--target", default=None, metavar="venv:PATH|conda:NAME",
                   help=f"where to install: a new or existing venv, or a conda env (default {DEFAULT_TARGET})")
    p.add_argument("--dry-run", action="store_true", help="print every command and change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--for", dest="for_file", metavar="REPORT.json",
                   help="plan for the machine in this diagnose report or profile (use with --dry-run, --script "
                        "or --download-only)")
    p.add_argument("--gpu", type=gpu_number, metavar="N", help="plan for GPU N only")
    p.add_argument("--python", metavar="X.Y", help="plan for this Python version")
    p.add_argument("--script", metavar="FILE", help="write the plan as a standalone script instead of running it")
    p.add_argument("--force", action="store_true", help="with --script: replace FILE if it exists")
    p.add_argument("--shell", choices=["bash", "powershell"], help="script language (default: by the target OS)")
    p.add_argument("--resume", action="store_true", help="continue an install that stopped (crash, failure, reboot)")
    p.add_argument("--rollback", action="store_true", help="undo the last install (only what it created)")
    p.add_argument("--repair", action="store_true",
                   help="check the last install again (its files against their RECORD hashes, an import of each "
                        "framework) and reinstall what is broken; also finishes an install whose check failed")
    p.add_argument("--download-only", metavar="DIR", help="download the wheels into DIR for an offline install")
    p.add_argument("--wheelhouse", metavar="DIR", help="install offline from wheels in DIR (see --download-only)")
    p.add_argument("--index-url", metavar="URL", type=index_url, help="a PyPI mirror for packages that come from PyPI (a password "
                   "in it is used, never saved: with --resume, give it again or answer the question)")
    p.add_argument("--pytorch-mirror", metavar="URL", type=index_url,
                   help="a mirror of https://download.pytorch.org/whl (e.g. https://mirror.example/pytorch/whl; "
                        "default: mirrors.pytorch in the configuration file)")
    p.add_argument("--uv", action="store_true", help="install with uv instead of pip (uv must be on PATH)")
    p.add_argument("--python-mirror", metavar="URL", type=index_url,
                   help="where uv downloads a Python from when this computer has none of the needed version "
                        "(a mirror of the python-build-standalone releases; also GPUSETUP_PYTHON_MIRROR)")
    drv = p.add_mutually_exclusive_group()
    drv.add_argument("--driver", dest="driver", action="store_true", default=None,
                     help="include the NVIDIA driver step even if the plan does not require it")
    drv.add_argument("--no-driver", dest="driver", action="store_false",
                     help="never install a driver (install the build that works now)")
    p.add_argument("--container-toolkit", action="store_true", help="also install the NVIDIA Container Toolkit")
    p.add_argument("--cuda-toolkit", metavar="X.Y", help="also install the CUDA toolkit X.Y (to compile CUDA code)")
    p.add_argument("--cudnn", action="store_true", help="with --cuda-toolkit: also install cuDNN")
    p.add_argument("--state-dir", metavar="DIR", help="journal, log and lock folder (default: per-user state dir)")
    p.add_argument("--no-network-check", action="store_true", help="skip the index reachability check")
    p.add_argument("--offline", action="store_true",
                   help="do not check the package index while planning (also: GPUSETUP_LIVE=off); "
                        "implied by --wheelhouse")
    p.add_argument("--live-index", metavar="URL", type=index_url,
                   help="check the plan against this package index (a mirror) instead of PyPI")
    # a broken configuration file stops a new install (it names the mirrors) with one error line; resume and
    # rollback go on without it (cli._apply_config then warns)
    p.set_defaults(handler=run, config_stops=lambda a: not (a.resume or a.rollback))


# ------------------------------------------------------------------------------------------ helpers


def _confirm(question: Message, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin or not sys.stdin.isatty():
        return False
    try:
        answer = input(f"{render(question, output_language())} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _framed(text: str) -> str:
    """``text`` between two rules, with blank lines around: what must not scroll by unnoticed."""
    rule = "=" * 72
    return f"\n{rule}\n{text}\n{rule}\n"


class _Printer:
    """Progress on stderr: one updating line on a terminal, one line per change otherwise. What the installer
    says for the screen only (the Secure Boot key's one-time password) is printed framed, on lines of its own,
    and kept to be shown again under the outcome."""

    def __init__(self, kept: list[Message] | None = None) -> None:
        self.tty = sys.stderr.isatty()
        self.last = ""
        self._key = ""
        self._at = 0.0
        self.kept = kept if kept is not None else []

    def __call__(self, said: str | Message, fraction: float | None) -> None:
        if isinstance(said, Message) and said.code == MOK_PASSWORD:  # on screen, never in a file of ours
            self.kept.append(said)
            if self.tty and self.last:
                sys.stderr.write("\n")
            self.last = ""
            print(_framed(render(said, output_language())), file=sys.stderr, flush=True)
            return
        label = render(said, output_language())  # the installer says its progress as data: words here
        pct = f"{fraction:4.0%} " if fraction is not None else "     "
        line = scrub(f"{pct}{label}")
        if line == self.last:
            return
        self.last = line
        if self.tty:
            width = 119
            term.rewrite_line(sys.stderr, line[:width])
            return
        # logs and CI: a line per phase, and at most one progress line every 5 s within a download
        key = re.sub(r"\s*\d+%$", "", label)
        now = time.monotonic()
        if key != self._key or now - self._at >= 5:
            self._key, self._at = key, now
            print(line, file=sys.stderr)

    def done(self) -> None:
        if self.tty and self.last:
            sys.stderr.write("\n")


def _run_job(job: Any, kept: list[Message] | None = None) -> Any:
    """Run ``job(token, printer)`` with Ctrl-C mapped to a clean cancel (a second Ctrl-C aborts); what the
    installer said for the screen only is added to ``kept`` (shown again under the outcome)."""
    token = CancelToken()
    printer = _Printer(kept)

    def on_sigint(signum: int, frame: Any) -> None:
        if token.cancelled:
            raise KeyboardInterrupt
        print("\n" + render(msg("install.cli.cancelling"), output_language()), file=sys.stderr)
        token.cancel()

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        return job(token, printer)
    finally:
        signal.signal(signal.SIGINT, old)
        printer.done()


def _ask_secret(masked_url: str) -> str | None:
    """--resume on a terminal: ask for the password gpusetup did not save (not echoed, never stored)."""
    if not sys.stdin or not sys.stdin.isatty():
        return None
    try:
        return getpass.getpass(f"Password for {masked_url} (not saved): ") or None
    except (EOFError, KeyboardInterrupt):
        return None


def _os_release_for(machine: Any) -> str | None:
    """The os-release the installer scripts will read on that machine: the fields its report recorded, else what
    the distribution fields say. Values are quoted as os-release quotes them (shell-style, no expansion)."""
    s = machine.system
    rel = dict(s.os_release or {})
    if not rel.get("ID"):
        if not s.distro_id:
            return None
        rel = {"ID": s.distro_id, "VERSION_ID": s.distro_version or "", "ID_LIKE": " ".join(s.distro_like)}
    return "".join(f'{k}="{_osr_value(v)}"\n' for k, v in rel.items() if v)


def _osr_value(value: str) -> str:
    return "".join(ch for ch in value if ch.isprintable() and ch not in '"\\$`')


def _script_preview(step: Any, machine: Any, foreign: bool) -> list[str]:
    """For an installer-script step, what the script itself says it would do (its --dry-run)."""
    if not (step.kind == "script" and step.argv[:1] == ["bash"]) or os.name == "nt":
        return []
    argv = [*step.argv, "--dry-run"]
    tmp = None
    if foreign or not Path("/etc/os-release").exists():
        text = _os_release_for(machine)
        if text is None:
            return []
        tmp = tempfile.NamedTemporaryFile("w", suffix="-os-release", delete=False)  # noqa: SIM115
        tmp.write(text)
        tmp.close()
        argv += ["--os-release", tmp.name, "--assume-fresh"]
        if machine.system.wsl:
            argv += ["--wsl", "yes"]
    try:
        res = SubprocessRunner().run(argv, timeout=30)
        out = (res.stdout + res.stderr).rstrip().splitlines()
        if res.error and not out:
            out = [f"(could not preview the script: {res.error})"]
    finally:
        if tmp:
            os.unlink(tmp.name)
    return out


def render_plan(plan: Any, machine: Any, *, state_dir: Path, foreign: bool = False) -> str:
    lang = output_language()
    n = len(plan.steps)
    out = [render(msg("install.cli.plan-head-one" if n == 1 else "install.cli.plan-head", target=plan.target or msg("install.cli.this-machine"), count=n), lang)]
    for note in render_notes(plan.notes, plan.note_codes, lang):
        out.append("  " + render(msg("install.cli.note", note=note), lang))
    sizes = getattr(plan, "size_messages", None)
    for m in sizes() if sizes is not None else []:  # exact from the index, or the estimate labelled as one
        out.append("  " + render(m, lang))
    checks: list[Message] = []
    if plan.indexes and not plan.offline:
        checks.append(msg("install.cli.check-reach", indexes=", ".join(plan.indexes)))
    need = plan.download_mib + plan.installed_mib
    if need and plan.space_path:
        checks.append(msg("install.cli.check-space", need=f"{need / 1024:.1f}", path=plan.space_path))
    if checks:
        out.append("  " + render(msg("install.cli.before", checks=checks), lang))
    estimates = step_estimates(plan, state_dir) if not foreign else {}
    for i, s in enumerate(plan.steps, 1):
        root = render(msg("install.cli.needs-root"), lang) if s.needs_root else ""
        took = f" ({render(about(estimates[s.id]), lang)})" if s.id in estimates else ""
        out.append(f"  {i}. {step_title(s, lang)}{root}{took}")
        if s.argv:
            out.append(f"     $ {display_argv(s.argv, s.needs_root)}")
        for line in _script_preview(s, machine, foreign):
            out.append(f"       | {line}")
        if s.explain:
            out.append("     " + render(msg("install.cli.why", why=step_explain(s, lang)), lang))
        if s.undo:
            out.append("     " + render(msg("install.cli.undo", command=display_argv(s.undo, s.needs_root)), lang))
    out.append("  " + render(msg("install.cli.journal", path=str(state_dir)), lang))
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------------------------------- main


def run(args: argparse.Namespace) -> int:
    state_dir = state_folder(args.state_dir) if args.state_dir else default_state_dir()
    if args.state_dir and state_dir != Path(args.state_dir).expanduser():  # /tmp, ~: never chmod-ed, a subfolder
        print(render(msg("install.cli.state-subfolder", folder=args.state_dir, path=str(state_dir)),
                     output_language()), file=sys.stderr)
    if sum(bool(x) for x in (args.resume, args.rollback, getattr(args, "repair", False))) > 1:
        raise ToolError(msg("cli.error.one-of-resume-rollback-repair"))

    kept: list[Message] = []  # what the installer said for the screen only (shown again under the outcome)
    if args.rollback or args.resume or args.repair:
        question = (msg("install.cli.confirm-rollback") if args.rollback else
                    msg("install.cli.confirm-repair") if args.repair else msg("install.cli.confirm-resume"))
        if not _confirm(question, args.yes):
            print(render(msg("install.cli.not-confirmed-resume"), output_language()), file=sys.stderr)
            return EXIT_TOOL
        if args.rollback:
            res = _run_job(lambda tok, pr: rollback(state_dir, progress=pr, cancel=tok))
        else:
            credentials.remember(args.index_url)  # the password of a saved plan's mirror, given again
            credentials.remember(args.pytorch_mirror)
            again = repair if args.repair else resume
            res = _run_job(lambda tok, pr: again(state_dir, progress=pr, cancel=tok,
                                                 check_network=not args.no_network_check, ask_secret=_ask_secret),
                           kept)
        return _report(res, args, state_dir, EXIT_OK, EXIT_WARN, EXIT_ERROR, EXIT_TOOL, kept=kept)

    machine, foreign = _machine(args)
    plan = _build(args, machine, foreign)

    if args.script:
        shell = args.shell or ("powershell" if (machine.system.os or "") == "windows" else "bash")
        text = render_script(plan, shell, language=output_language())
        path = Path(args.script)
        if (path.is_file() or path.is_symlink()) and not getattr(args, "force", False):
            raise ToolError(msg("cli.error.script-exists", path=str(path)))
        write_atomic(path, text, mode=0o755 if shell == "bash" else None)
        print(render(msg("install.cli.script-written", shell=shell, path=str(path), count=len(plan.steps)), output_language()))
        return EXIT_OK

    sys.stdout.write(scrub(render_plan(plan, machine, state_dir=state_dir, foreign=foreign)))
    if args.dry_run:
        print(render(msg("install.cli.dry-run"), output_language()))
        return EXIT_OK
    if foreign and not args.download_only:
        raise ToolError(msg("cli.error.for-not-here"))
    if not _confirm(msg("install.cli.confirm-run"), args.yes):
        print(render(msg("install.cli.not-confirmed"), output_language()), file=sys.stderr)
        return EXIT_TOOL
    res = _run_job(lambda tok, pr: execute(plan, journal_dir=state_dir, progress=pr, cancel=tok,
                                           check_network=not args.no_network_check), kept)
    return _report(res, args, state_dir, EXIT_OK, EXIT_WARN, EXIT_ERROR, EXIT_TOOL, plan=plan, kept=kept)


def _machine(args: argparse.Namespace) -> tuple[Any, bool]:
    if args.for_file:
        return load_for_file(args.for_file), True
    print(render(msg("install.cli.detecting"), output_language()), file=sys.stderr)
    return detect(), False


def _conda_envs() -> list[str]:
    res = SubprocessRunner().run(["conda", "env", "list", "--json"], timeout=60)
    if not res.ok:
        raise ToolError(msg("cli.error.conda-list-failed", reason=res.error or res.stderr.strip()[-200:]))
    try:
        return [Path(p).name for p in json.loads(res.stdout).get("envs", [])]
    except (ValueError, AttributeError) as exc:
        raise ToolError(msg("cli.error.conda-list-unreadable", reason=str(exc))) from exc


def _build(args: argparse.Namespace, machine: Any, foreign: bool) -> Any:
    try:
        cfg = load_config()  # defaults from the shared configuration file; options on the command line win
    except ConfigError as exc:
        raise ToolError(msg("cli.error.config", detail=carried(exc))) from exc
    frameworks = list(dict.fromkeys(args.framework or cfg.frameworks or ["pytorch"]))
    args.index_url = args.index_url or cfg.pypi_mirror  # the plan, its check of the index and the install agree
    args.pytorch_mirror = args.pytorch_mirror or cfg.pytorch_mirror
    if args.target is None:
        args.target = cfg.target or DEFAULT_TARGET
    try:
        fplans = resolve(machine, frameworks, gpu_index=args.gpu, python_version=args.python)
    except ValueError as exc:
        raise ToolError(msg("cli.error.detail", detail=carried(exc))) from exc
    uv = None
    if args.uv:
        uv = find_uv() or shutil.which("uv")
        if not uv:
            raise ToolError(msg("cli.error.no-uv"))
    conda_envs = _conda_envs() if args.target.startswith("conda:") and not foreign else None
    portable = bool(args.script) or (foreign and not args.download_only)
    try:
        plan = build_plan(
            fplans, machine, args.target, index_url=args.index_url, pytorch_mirror=args.pytorch_mirror,
            wheelhouse=args.wheelhouse, download_only=args.download_only, portable=portable, foreign=foreign,
            driver=args.driver, container_toolkit=args.container_toolkit, cuda_toolkit=args.cuda_toolkit,
            cudnn=args.cudnn, conda_envs=conda_envs, uv=uv, python_mirror=args.python_mirror,
        )
    except PlanError as exc:
        raise ToolError(exc.message) from exc
    _add_live_notes(args, fplans, machine, plan)
    if not args.python:  # the Python this plan is for holds a framework back: say so, and how to get the newer
        offer = newer_python_offer(machine, fplans, machine.system.python)
        if offer is not None:
            add_note(plan, offer)
    return plan


def _add_live_notes(args: argparse.Namespace, fplans: list[Any], machine: Any, plan: Any) -> None:
    """Like ``gpusetup plan``: check the chosen wheels on the live index (short timeout, cached, never fatal)
    and put what it found into the plan's notes. Not for an install from a local wheelhouse."""
    offline = bool(getattr(args, "offline", False) or args.wheelhouse)
    result = live_check(fplans, machine, offline=offline, index=getattr(args, "live_index", None),
                        pypi_mirror=args.index_url, pytorch_mirror=args.pytorch_mirror)
    if result is None:
        return
    add_download_size(plan, index=getattr(args, "live_index", None))  # the exact download, from the index
    for fp in fplans:
        for m in result.framework_notes.get(fp.framework, []):
            add_note(plan, m)
    for m in result.notes:
        add_note(plan, m)


def _report(res: Any, args: argparse.Namespace, state_dir: Path, ok: int, warn: int, err: int, tool: int,
            plan: Any = None, kept: list[Message] | None = None) -> int:
    lang = output_language()
    stream = sys.stdout if res.ok else sys.stderr
    words = render(res.said, lang) if getattr(res, "said", None) is not None else res.message
    print(scrub(words), file=stream)
    for said in kept or []:  # the Secure Boot password again, where the restart instructions are read
        print(_framed(render(said, lang)), file=stream)
    for note in getattr(res, "notes", None) or []:
        print(scrub(render(msg("install.cli.note", note=note), lang)), file=stream)
    if res.log_path and res.log_path not in res.message:
        print(render(msg("install.cli.log", path=res.log_path), lang), file=stream)
    if res.ok:
        if plan is not None and plan.target.startswith("venv:") and plan.python:
            py = Path(plan.python[0])
            act = py.parent / ("activate" if os.name != "nt" else "Activate.ps1")
            print(render(msg("install.cli.use-it", activate=str(act), python=str(py)), lang))
            cons = Path(str(py)).parent.parent / "gpusetup-constraints.txt"
            left = {str(n.params.get("path")) for n in getattr(res, "notes", None) or [] if isinstance(n, Message)}
            if any(st.id == "protect" for st in plan.steps) and str(cons) not in left:
                print(render(msg("install.cli.protected", file=str(cons)), lang))
            print(render(msg("install.cli.then-selftest"), lang))
        return ok
    if res.reboot_needed:
        return warn
    if getattr(res, "rollback", False):  # --resume finished an interrupted rollback: nothing is installed
        return tool if res.failed_step is None else err
    if res.failed_step in (None, "preflight") and not res.cancelled:
        return tool if res.failed_step is None else err
    if getattr(res, "fix", None) == "repair" and res.journal_dir:
        if _confirm(msg("install.cli.confirm-repair-now"), False):
            fixed = _run_job(lambda tok, pr: repair(Path(res.journal_dir), progress=pr, cancel=tok,
                                                    check_network=not args.no_network_check))
            return _report(fixed, args, state_dir, ok, warn, err, tool, plan=plan)
        return err
    if res.cancelled and res.failed_step is None:  # cancelled before any step started: nothing to undo
        return err
    ran = res.journal_dir and any(r["event"] == "start" for r in Journal(Path(res.journal_dir)).read())
    if not args.rollback and ran and _confirm(msg("install.cli.confirm-undo-so-far"), False):
        back = _run_job(lambda tok, pr: rollback(Path(res.journal_dir), progress=pr, cancel=tok))
        print(render(back.said, lang) if back.said is not None else back.message,
              file=sys.stdout if back.ok else sys.stderr)
    return err
