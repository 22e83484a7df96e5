"""Run an :class:`InstallPlan` step by step with a journal; resume it after a crash or reboot; roll it back.

Order of business for every run: take the locks (the state folder's and the target environment's), check
disk and network *before* changing anything, then for each step write a ``start`` record (command, planned
undo, what was there before, the packages it installs), run it, and write an ``end`` record (exit code, output
tail, the real undo, what it changed). A failed step stops the plan with the command, the exit code and its
last lines. Rollback walks the journal backwards and removes only what this install created: a venv it made,
packages that were not there before, files it wrote (recognised by the hash of what it wrote).

Nothing is trusted from metadata: a step that started and did not end well (closed window, cancel, kill -9,
power cut) is redone from scratch on resume — the distributions it had touched are reinstalled with
``--force-reinstall --no-deps`` (a half-unpacked wheel's ``.dist-info`` makes pip say "already satisfied"), or
the environment this install created is rebuilt when its own pip no longer runs. Every install ends with
checks that are steps of the plan: the installed files against their RECORD hashes, the versions, and an
import of each framework in the target environment; a failed check is a failed step that ``--repair`` (or
``--resume``) repairs by reinstalling what it found broken.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpusetup import credentials
from gpusetup.cancel import CancelToken, SaidProgress
from gpusetup.install import snippets
from gpusetup.install.journal import LOG, PLAN, InstallLock, Journal, LockBusy, default_state_dir
from gpusetup.install.net import check_index, pip_config_value
from gpusetup.install.plan import CHECK_STEPS, PYPI_SIMPLE, InstallPlan
from gpusetup.install.progress import PipProgress, duration
from gpusetup.install.stream import StreamResult, run_streaming
from gpusetup.install.timing import StepClock, Times, about
from gpusetup.messages import msg, render
from gpusetup.model import Message, Plan, Step, from_dict, to_dict
from gpusetup.paths import open_private, write_private

STEP_TIMEOUT = 3 * 3600.0  # a multi-GB download on a slow line; cancel is always available
SNAPSHOT_TIMEOUT = 60.0
# the checks after an install, bounded: the file check (its snippet stops itself at its own deadline, given in
# the plan's argv) and the imports (each in a fresh interpreter, its own timeout in argv) get a little more
CHECK_TIMEOUT = {"check-files": 1800.0, "import": 1200.0, "verify": 300.0}
WRITTEN = "written.json"  # files gpusetup wrote (path → sha256 of what it wrote), across installs
# checks whose failure a repair can fix (reinstalling what is broken); a version that is not the planned one
# ("verify": a mirror serving another build) is not fixed by installing the same again
REPAIRABLE = ("check-files", "import")
MIB = 1024 * 1024

FreeSpace = Callable[[str], int]  # path → free bytes

# the driver installer's Secure Boot key enrolment (installers/gpusetup-common.sh, enrol_key) prints the
# one-time password the MokManager screen asks for at the restart, for the screen only (issue 26)
MOK_PASSWORD_LINE = re.compile(r"^gpusetup: mok-password (\S+)\s*$")
MOK_PASSWORD = "install.secure-boot.mok-password"  # the message code the progress callback gets it as


class _OneTimePassword:
    """Keeps the MOK one-time password out of the log, the output tail and the journal: its own line is
    dropped, and the password is masked in any line after it (the installer's note repeats it)."""

    def __init__(self) -> None:
        self.value: str | None = None

    def private(self, line: str) -> str | None:
        m = MOK_PASSWORD_LINE.match(line.strip("\r\n"))
        if m:
            self.value = m.group(1)
            return None
        if self.value and self.value in line:
            return line.replace(self.value, "********")
        return line

    @staticmethod
    def said(line: str) -> Message | None:
        """The message for the screen when ``line`` is the installer's password line."""
        m = MOK_PASSWORD_LINE.match(line.strip("\r\n"))
        return msg("install.secure-boot.mok-password", password=m.group(1)) if m else None


@dataclass
class ExecResult:
    ok: bool
    failed_step: str | None = None
    message: str = ""  # English (the log, older readers); ``said`` words it in any language
    cancelled: bool = False
    reboot_needed: bool = False
    log_path: str | None = None
    journal_dir: str | None = None
    done: list[str] = field(default_factory=list)  # ids of steps completed in this call
    # what the user can change to get past this failure: "disk-space" (another folder), "network" (a package
    # mirror or a proxy), "python-mirror" (where Python builds come from), "repair" (a check found the install
    # broken: `gpusetup install --repair`, the wizard's Repair button); None when nothing specific helps
    fix: str | None = None
    said: Message | None = None  # ``message`` as data (a gpusetup.messages code and its parameters)
    notes: list[Message] = field(default_factory=list)  # what the user should know beside the outcome
    stopped: bool = False  # the user asked to stop after a step: it finished, nothing after it ran
    ran: list[str] = field(default_factory=list)  # ids of steps that started in this call (done or not)
    rollback: bool = False  # this call finished (or tried to finish) an interrupted rollback

    def __post_init__(self) -> None:
        if self.said is not None and not self.message:
            self.message = render(self.said)


_SNIPPET_NAMES = {
    snippets.VERIFY: "<gpusetup: compare installed versions with the plan>",
    snippets.LIST: "<gpusetup: list installed packages>",
    snippets.PROTECT: "<gpusetup: write the constraints file>",
    snippets.REMOVE_OURS: "<gpusetup: remove files gpusetup wrote>",
    snippets.RMTREE_VENV: "<gpusetup: delete the virtual environment>",
    snippets.CHECK_FILES: "<gpusetup: check installed files against their RECORD hashes>",
    snippets.IMPORT: "<gpusetup: import each framework>",
    snippets.CLEAR_BROKEN: "<gpusetup: remove unfinished .dist-info folders>",
}


def display_argv(argv: list[str], needs_root: bool = False, elevation: str | None = "sudo") -> str:
    """A command as the user reads it: inline Python programs are named rather than printed in full."""
    shown = [_SNIPPET_NAMES.get(a, a) for a in argv]
    text = credentials.scrub(" ".join(a if a.startswith("<gpusetup:") else shlex.quote(a) for a in shown))
    return f"{elevation} {text}" if needs_root and elevation else text


def _existing_parent(path: str) -> Path:
    """``path`` itself when it exists, else its nearest existing parent (where it would be created)."""
    p = Path(path).expanduser().absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _where_hint(plan: InstallPlan) -> Message | str:
    """How the user picks another place, by the kind of target (the flag differs)."""
    if plan.target.startswith("download:"):
        return msg("install.exec.hint-download-dir")
    if plan.target.startswith("venv:"):
        return msg("install.exec.hint-venv-path")
    return ""


def free_bytes(path: str) -> int:
    """Free space where ``path`` is (or would be created): the nearest existing parent's filesystem."""
    return shutil.disk_usage(_existing_parent(path)).free


def _elevation(mode: str) -> list[str]:
    if mode == "none" or (hasattr(os, "geteuid") and os.geteuid() == 0) or os.name == "nt":
        return []
    if mode == "auto":
        gui = os.environ.get("GPUSETUP_GUI") == "1"
        mode = "pkexec" if gui and shutil.which("pkexec") else "sudo"
    return [mode]


class _Run:
    """One execute/resume/rollback call: journal, log file, progress and cancel in one place."""

    def __init__(self, plan: InstallPlan, jdir: Path, progress: SaidProgress | None, cancel: CancelToken | None,
                 log: IO[str] | None, elevate: str, timeout: float, stop_after: CancelToken | None = None) -> None:
        self.plan = plan
        self.jdir = jdir
        self.journal = Journal(jdir)
        self.progress = progress or (lambda label, frac: None)
        self.cancel = cancel or CancelToken()
        self.stop_after = stop_after or CancelToken()
        self.log_path = jdir / LOG
        self.log_fh = log or open_private(self.log_path, "a")
        self._own_log = log is None
        self.elevate = elevate
        self.timeout = timeout
        self.fix: str | None = None  # set by a check that failed (see ExecResult.fix)
        self.notes: list[Message] = []  # said beside the outcome (a skipped pip update, a file left alone)
        self.times = Times(jdir)
        self.ran: list[str] = []

    def close(self) -> None:
        if self._own_log:
            self.log_fh.close()

    def result(self, ok: bool, **kw: Any) -> ExecResult:
        return ExecResult(ok=ok, log_path=str(self.log_path), journal_dir=str(self.jdir), notes=list(self.notes),
                          ran=list(self.ran), **kw)

    def note(self, said: Message) -> None:
        """A note for the outcome, the log and the progress line."""
        self.notes.append(said)
        self.log_fh.write(f"note: {render(said)}\n")
        self.log_fh.flush()
        self.progress(said, None)

    def run(self, argv: list[str], needs_root: bool = False, on_line: Callable[[str], None] | None = None,
            timeout: float | None = None, env: dict[str, str] | None = None,
            private: Callable[[str], str | None] | None = None) -> StreamResult:
        prefix = _elevation(self.elevate) if needs_root else []
        full = [*prefix, *argv]
        shown_env = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items() if k != "GPUSETUP_WRITTEN")
        self.log_fh.write(f"\n$ {shown_env}{display_argv(full)}\n")
        self.log_fh.flush()
        try:  # masked index URLs: the secret goes to pip/uv in their environment, never on the command line
            real, secret_env = credentials.for_child(full)
        except credentials.MissingCredential as exc:
            self.log_fh.write(f"[not started: {exc}]\n")
            return StreamResult(full, None, error=str(exc))
        child_env = {**(env or {}), **(secret_env or {})}
        res = run_streaming(real, timeout=timeout or self.timeout, cancel=self.cancel, on_line=on_line,
                            log=self.log_fh, own_session=not prefix, env=child_env or None, private=private)
        res.argv = full
        status = (res.error or ("timed out" if res.timed_out else "cancelled" if res.cancelled
                                else f"exit code {res.returncode}"))
        self.log_fh.write(f"[{status}, {res.duration_s:.1f} s]\n")
        self.log_fh.flush()
        return res

    def snapshot(self) -> dict[str, str] | None:
        """{package: version} of the target environment, or None when it cannot be read (yet)."""
        if not self.plan.python:
            return None
        # one JSON line of every installed package: longer than a log line may be (stream.MAX_LINE)
        res = run_streaming([*self.plan.python, "-I", "-c", snippets.LIST], timeout=SNAPSHOT_TIMEOUT,
                            max_line=8 << 20)
        if not res.ok:
            return None
        try:
            return json.loads(res.tail[-1])
        except (json.JSONDecodeError, IndexError):
            return None

    # files gpusetup wrote, recognised by the hash of what it wrote (snippets.PROTECT / REMOVE_OURS)
    def written(self) -> dict[str, list[str]]:
        """path → the sha256 of each content gpusetup wrote there: this journal's and earlier installs'."""
        known: dict[str, list[str]] = {}
        try:
            data = json.loads((self.jdir / WRITTEN).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        for path, shas in (data.items() if isinstance(data, dict) else []):
            known[str(path)] = [str(x) for x in shas] if isinstance(shas, list) else []
        for rec in self.journal.read():
            for path, sha in (rec.get("wrote") or {}).items():
                known.setdefault(path, [])
                if sha not in known[path]:
                    known[path].append(sha)
        return known

    def remember_written(self, wrote: dict[str, str], removed: Sequence[str] = ()) -> None:
        known = self.written()
        for path, sha in wrote.items():
            known[path] = [*[x for x in known.get(path, []) if x != sha], sha][-5:]
        for path in removed:
            known.pop(path, None)
        with contextlib.suppress(OSError):
            write_private(self.jdir / WRITTEN, json.dumps(known, indent=1, sort_keys=True))

    def written_env(self) -> dict[str, str]:
        return {"GPUSETUP_WRITTEN": json.dumps(self.written(), sort_keys=True)}


def _files_said(lines: list[str]) -> tuple[dict[str, str], list[str], list[Message]]:
    """What a snippet that writes or removes gpusetup's files said: (path → sha256 written, paths removed,
    notes for the files it left alone)."""
    wrote: dict[str, str] = {}
    removed: list[str] = []
    notes: list[Message] = []
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("gpusetup: wrote "):
            sha, _, path = line[len("gpusetup: wrote "):].partition(" ")
            wrote[path] = sha
        elif line.startswith("gpusetup: left "):
            why, _, path = line[len("gpusetup: left "):].partition(" ")
            notes.append(msg("install.exec.left-changed" if why == "changed" else "install.exec.left-existing",
                             path=path))
        elif line.startswith("removed "):
            removed.append(line[len("removed "):])
    return wrote, removed, notes


# ------------------------------------------------------------------------------------------ execute


class _Both:
    """The state folder's lock, then the target environment's: both held, or neither."""

    def __init__(self, jdir: Path, target: str) -> None:
        self.state = InstallLock(jdir)
        self.target = InstallLock(target=target) if target else None

    def __enter__(self) -> InstallLock:
        self.state.__enter__()
        if self.target is not None:
            try:
                self.target.__enter__()
            except BaseException:
                self.state.__exit__(None, None, None)
                raise
        return self.state

    def __exit__(self, *exc: object) -> None:
        try:
            if self.target is not None:
                self.target.__exit__(*exc)
        finally:
            self.state.__exit__(*exc)


def _busy(exc: LockBusy, jdir: Path) -> ExecResult:
    if exc.target:
        return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.busy-target", owner=exc.owner,
                                                                    target=exc.target))
    return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.busy", owner=exc.owner))


def execute(
    plan: Plan,
    *,
    journal_dir: Path | None = None,
    progress: SaidProgress | None = None,
    cancel: CancelToken | None = None,
    log: IO[str] | None = None,
    free_space: FreeSpace | None = None,
    check_network: bool = True,
    elevate: str = "auto",
    step_timeout: float = STEP_TIMEOUT,
    boot_id: Callable[[], str | None] | None = None,
    stop_after: CancelToken | None = None,
) -> ExecResult:
    """Run ``plan`` from the start. Refuses while an earlier install is unfinished (resume or roll it back).

    ``cancel`` stops the running step at once (its whole process group); ``stop_after`` lets the running step
    finish and starts no other (what the user chose when asked how to stop)."""
    iplan = plan if isinstance(plan, InstallPlan) else InstallPlan(steps=plan.steps, notes=plan.notes)
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    try:
        with _Both(jdir, iplan.target) as lock:
            journal = Journal(jdir)
            status = journal.status()
            if status == "unfinished":
                return ExecResult(ok=False, journal_dir=str(jdir), said=_unfinished_message(journal))
            if status != "none":
                journal.archive()
            # the plan holds masked URLs (credentials.remember); scrub is the belt to those braces
            write_private(jdir / PLAN, credentials.scrub(json.dumps(to_dict(iplan), indent=1)))
            journal.append("plan", target=iplan.target, steps=[s.id for s in iplan.steps])
            run = _Run(iplan, jdir, progress, cancel, log, elevate, step_timeout, stop_after)
            _lock_note(run, lock)
            try:
                failure = _preflight(run, free_space or free_bytes, check_network, 0)
                if failure:
                    journal.append("finished", ok=False, reason="preflight", message=render(failure))
                    return run.result(False, failed_step="preflight", said=failure, fix=run.fix)
                return _run_steps(run, 0, {}, boot_id or read_boot_id)
            finally:
                run.close()
    except LockBusy as exc:
        return _busy(exc, jdir)


def _remember_configured() -> None:
    """Secrets where the user configured them (pip's settings and environment): --resume finds them there."""
    for key in ("index-url", "extra-index-url", "proxy"):
        for url in (pip_config_value(key) or "").split():
            credentials.remember(url)
    credentials.scrub("")  # reads the environment (PIP_INDEX_URL, HTTPS_PROXY, ...)


def _lock_note(run: _Run, lock: InstallLock) -> None:
    """A lock left by a process that died was taken over: say so in the log, the journal and on screen."""
    if lock.note:
        run.log_fh.write(f"note: {lock.note}\n")
        run.journal.append("note", message=lock.note)
        run.progress(lock.said if lock.said is not None else lock.note, None)


def _unfinished_message(journal: Journal) -> Message:
    last = [r for r in journal.read() if r["event"] in ("start", "end", "paused")]
    where = msg("install.exec.stopped-at", step=last[-1].get("step")) if last else ""
    return msg("install.exec.unfinished", where=where)


def _step_index_url(step: Step) -> str:
    """The index a pip step installs from: its ``--index-url``, else pip's configured one, else PyPI."""
    argv = step.argv
    for i, a in enumerate(argv[:-1]):
        if a in ("--index-url", "-i"):
            return argv[i + 1]
    return credentials.remember(pip_config_value("index-url")) or PYPI_SIMPLE


def _preflight(run: _Run, free_space: FreeSpace | None, check_network: bool, start: int = 0) -> Message | None:
    plan = run.plan
    need = plan.download_mib + plan.installed_mib
    if plan.space_path and free_space is not None:
        where = _existing_parent(plan.space_path)
        if not os.access(where, os.W_OK):
            run.fix = "disk-space"
            return msg("install.exec.cannot-write", where=str(where), path=plan.space_path, hint=_where_hint(plan))
    if need and plan.space_path and free_space is not None:
        run.progress(msg("install.progress.disk"), None)
        free = free_space(plan.space_path) // MIB
        run.log_fh.write(f"disk: {free} MiB free at {plan.space_path}, about {need} MiB needed\n")
        if free < need:
            run.fix = "disk-space"
            return msg("install.exec.no-space", path=plan.space_path, free=f"{free / 1024:.1f}",
                       need=f"{need / 1024:.1f}", hint=_where_hint(plan))
    if not (check_network and plan.indexes and not plan.offline):
        return None
    remaining = plan.steps[start:]
    upgrade = next((s for s in remaining if s.id == "upgrade-pip"), None)
    pip_url = _step_index_url(upgrade) if upgrade is not None else None
    # the indexes the framework's own steps use (the pip update is optional: an index without pip is fine)
    used = {_step_index_url(s) for s in remaining if s.kind == "pip" and s.id != "upgrade-pip"}
    for url in plan.indexes:
        probe = plan.probes.get(url) or plan.probe_package or "pip"
        if upgrade is not None and url == pip_url:
            run.progress(msg("install.progress.reach", url=url), None)
            chk = check_index(url, "pip")
            run.log_fh.write(credentials.scrub(f"network: {url} (pip): {'ok' if chk.ok else chk.message}\n"))
            if not chk.ok and chk.said is not None and chk.said.code == "install.net.no-project":
                _skip_pip_update(run, upgrade, url)
                upgrade = None
            elif not chk.ok:
                run.fix = "network"
                return msg("install.exec.network", error=chk.said if chk.said is not None else credentials.scrub(chk.message))
            if probe == "pip":  # the saved plan probed the framework's index for pip: ask for the framework
                if url not in used or plan.probe_package in ("", "pip"):
                    continue
                probe = plan.probe_package
            elif url not in used:
                continue
        run.progress(msg("install.progress.reach", url=url), None)
        chk = check_index(url, probe)
        run.log_fh.write(credentials.scrub(f"network: {url}: {'ok' if chk.ok else chk.message}\n"))
        if not chk.ok:
            run.fix = "network"
            return msg("install.exec.network", error=chk.said if chk.said is not None else credentials.scrub(chk.message))
    return None


def _skip_pip_update(run: _Run, step: Step, url: str) -> None:
    """The index answers but has no pip: the environment keeps the pip it was created with, the framework's
    steps lose ``--progress-bar raw`` (an older pip does not know it), the saved plan says the same."""
    plan = run.plan
    plan.steps.remove(step)
    for s in plan.steps:
        if s.kind == "pip" and "--progress-bar" in s.argv:
            i = s.argv.index("--progress-bar")
            del s.argv[i:i + 2]
    write_private(run.jdir / PLAN, credentials.scrub(json.dumps(to_dict(plan), indent=1)))
    said = msg("install.exec.pip-update-skipped", url=credentials.mask_url(url),
               pip=plan.base_pip or msg("step.explain.pip-version-unknown"))
    run.journal.append("skipped", step=step.id, notes=[to_dict(said)])
    run.note(said)


def _pre_state(run: _Run, step: Step) -> dict[str, Any]:
    if step.kind == "venv" and (step.argv[1:3] == ["-m", "venv"] or step.argv[1:2] == ["venv"]):
        return {"existed": Path(_venv_path(step)).exists()}
    if step.kind == "pip" and "install" in step.argv:
        return {"packages": run.snapshot()}
    return {}


def _venv_path(step: Step) -> str:
    return [a for a in step.argv[2:] if not a.startswith("--")][-1]


def _touched(before: dict[str, str] | None, after: dict[str, str] | None) -> dict[str, str]:
    """Distributions a pip step put there or changed: {name: version now}."""
    if after is None:
        return {}
    return {n: v for n, v in sorted(after.items()) if before is None or before.get(n) != v}


def _actual_undo(run: _Run, step: Step, pre: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], dict[str, str]]:
    """(undo argv, notes as data — {"code", "params"}, kept in the journal — and the distributions it touched)
    for a step that ran (fully or partly), from what was there before it."""
    if step.kind == "venv":
        return ([] if pre.get("existed") else list(step.undo)), [], {}
    if step.kind == "pip" and "install" in step.argv:
        before = pre.get("packages")
        after = run.snapshot()
        if before is None or after is None:
            return list(step.undo), [to_dict(msg("install.exec.undo-plan-list"))], _touched(before, after)
        new = sorted(set(after) - set(before))
        changed = [to_dict(msg("install.exec.was-before", name=n, before=before[n], now=after[n]))
                   for n in sorted(set(after) & set(before)) if after[n] != before[n]]
        return ([*run.plan.pip, "uninstall", "-y", *new] if new else []), changed, _touched(before, after)
    return list(step.undo), [], {}


def read_boot_id() -> str | None:
    """Changes at every boot (Linux); lets --resume tell whether the machine was restarted."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


# ------------------------------------------------------------------------------- estimates


def _download_share(plan: InstallPlan, step: Step) -> int:
    """The bytes ``step`` downloads, as far as the plan knows (exact from the index, else the table's
    estimate), shared among the steps that install the frameworks; 0 for any other step."""
    installs = [s for s in plan.steps if s.kind == "pip" and s.id != "upgrade-pip"]
    if step not in installs or plan.offline:
        return 0
    total = int(plan.download.get("bytes") or 0) if plan.download.get("source") == "index" else plan.download_mib * MIB
    return total // max(1, len(installs))


def step_estimates(plan: Plan, journal_dir: Path | None = None) -> dict[str, float]:
    """Seconds each step is expected to take on this computer (only those with a measurement behind them):
    the download size over the speed measured here, plus unpacking; else what the same kind of step took
    here before. What ``--dry-run``, the progress line and the wizard's step list show."""
    iplan = plan if isinstance(plan, InstallPlan) else InstallPlan(steps=plan.steps)
    times = Times(Path(journal_dir) if journal_dir else default_state_dir())
    out: dict[str, float] = {}
    for s in iplan.steps:
        if s.kind in ("reboot", "manual"):
            continue
        sec = times.seconds(s, _download_share(iplan, s))
        if sec is not None:
            out[s.id] = sec
    return out


def _left_detail(clock: StepClock, parser: PipProgress | None) -> Message | None:
    """"about 2 min left" for the running step, or "longer than the … it took before", or None (unknown)."""
    left = clock.left(parser.downloaded if parser else 0, parser.speed() if parser else None)
    if left is None:
        return None
    if left <= 0:
        return msg("install.progress.longer", estimate=duration(clock.estimate or clock.elapsed()))
    return msg("install.progress.left", left=duration(left))


# ------------------------------------------------------------------------------------- steps


def _run_steps(run: _Run, start: int, carried: dict[str, dict[str, Any]],
               boot_id: Callable[[], str | None], redo: set[str] | None = None,
               repair: bool = False) -> ExecResult:
    """Run the plan's steps from ``start``. ``redo``: steps that were in flight when the last run stopped
    (redone from scratch); ``repair``: a failed check repairs what it found and checks again, once."""
    steps = run.plan.steps
    redo = set(redo or ())
    done: list[str] = []
    i = start
    while i < len(steps):
        n = len(steps)
        step = steps[i]
        label = msg("install.progress.step", i=i + 1, n=n, title=_title(step))
        if run.cancel.cancelled or run.stop_after.cancelled:
            return _stopped(run, step, done)
        if step.kind == "reboot":
            asked = any(r.get("reboot_needed") for r in run.journal.read() if r["event"] == "end")
            if not asked:  # the driver step found the driver already installed: nothing to restart for
                run.journal.append("end", step=step.id, rc=0, ok=True, undo=[],
                                   notes=[to_dict(msg("install.exec.no-restart-needed"))])
                done.append(step.id)
                i += 1
                continue
            run.journal.append("paused", step=step.id, reason="reboot", boot_id=boot_id())
            return run.result(False, reboot_needed=True, failed_step=step.id, done=done,
                              said=msg("install.exec.restart-now"))
        if step.kind == "manual" or not step.argv:
            run.journal.append("end", step=step.id, rc=0, ok=True, undo=[],
                               notes=[to_dict(step.explain_code) if step.explain_code is not None else step.explain])
            done.append(step.id)
            i += 1
            continue
        pre = carried.get(step.id) or _pre_state(run, step)
        download = _download_share(run.plan, step)
        estimate = run.times.seconds(step, download)
        run.progress(msg("install.progress.with", what=label, detail=about(estimate)) if estimate else label, i / n)
        if step.id in redo:
            redo.discard(step.id)
            outcome = _redo(run, step, pre, label, i / n)
            if outcome == "rebuild":
                restart = next((k for k, s in enumerate(steps) if s.kind == "venv"), 0)
                carried.pop(steps[restart].id, None)
                done = [d for d in done if steps.index(next(s for s in steps if s.id == d)) < restart]
                i = restart
                continue
            if isinstance(outcome, ExecResult):
                return outcome
        res, info = _run_one(run, step, pre, label, i, n, estimate, download)
        if (not res.ok and not res.cancelled and repair and step.id in REPAIRABLE
                and not info.get("repaired")):
            run.journal.append("end", step=step.id, rc=res.returncode, ok=False, tail=res.tail[-15:],
                               **{k: v for k, v in info.items() if k in ("broken", "missing")})
            failure = _repair(run, step, info, label, i / n)
            if failure is not None:
                return failure
            res, info = _run_one(run, step, pre, label, i, n, estimate, download)
            info["repaired"] = True
        if res.cancelled:
            run.journal.append("stopped", step=step.id, reason="cancelled")
            return run.result(False, cancelled=True, failed_step=step.id, done=done,
                              said=_cancel_message(step, run))
        if not res.ok:
            run.journal.append("stopped", step=step.id, reason="failed")
            fix = {"python": "python-mirror", "download": "network"}.get(step.kind)
            if step.id in REPAIRABLE:
                fix = None if info.get("repaired") else "repair"
            return run.result(False, failed_step=step.id, done=done, fix=fix,
                              said=_failure_message(step, res, run, info))
        done.append(step.id)
        i += 1
    run.progress(msg("install.progress.done"), 1.0)
    run.journal.append("finished", ok=True)
    return run.result(True, done=done, said=msg("install.exec.finished", count=len(steps), log=str(run.log_path)))


def _stopped(run: _Run, step: Step, done: list[str]) -> ExecResult:
    """Cancelled or asked to stop before ``step`` started: nothing of it ran. A journal in which no step ever
    started is closed as finished (there is nothing to resume or undo)."""
    started = any(r["event"] == "start" for r in run.journal.read())
    if not started:
        run.journal.append("finished", ok=False, reason="cancelled")
        return run.result(False, cancelled=True, failed_step=None, done=done,
                          said=msg("install.exec.cancelled-before-start"))
    if run.stop_after.cancelled and not run.cancel.cancelled:
        run.journal.append("stopped", step=step.id, reason="stopped-by-user")
        return run.result(False, cancelled=True, stopped=True, failed_step=step.id, done=done,
                          said=msg("install.exec.stopped-between", step=step_title(step), log=str(run.log_path)))
    run.journal.append("stopped", step=step.id, reason="cancelled")
    return run.result(False, cancelled=True, failed_step=step.id, done=done,
                      said=msg("install.exec.cancelled-between", step=step_title(step), log=str(run.log_path)))


def _run_one(run: _Run, step: Step, pre: dict[str, Any], label: Message, i: int, n: int,
             estimate: float | None, download: int) -> tuple[StreamResult, dict[str, Any]]:
    """Run one step with its journal records, progress and time left; (its result, what it reported)."""
    run.journal.append("start", step=step.id, argv=step.argv, needs_root=step.needs_root, undo=step.undo, pre=pre,
                       installs=_requirements(step) if step.kind == "pip" else [])
    if step.id not in run.ran:
        run.ran.append(step.id)
    parser = PipProgress() if step.kind in ("pip", "download") else None  # download: uvfetch speaks pip's format
    times = run.times
    speed = times.speed()
    unpack = max(0.0, estimate - download / speed) if download and speed and estimate is not None else 0.0
    clock = StepClock(estimate, download, unpack)
    reboot_flag: list[bool] = []
    said: list[str] = []  # lines a snippet says to the executor ("gpusetup: …", "gpusetup-check: …")
    secret = _OneTimePassword()

    def on_line(line: str) -> None:
        if "gpusetup: reboot-needed" in line:
            reboot_flag.append(True)
        password = secret.said(line)
        if password is not None:  # for the screen only: not kept in ``said`` (nor the log: ``private``)
            run.progress(password, None)
            return
        if line.startswith(("gpusetup: ", "gpusetup-check: ", "removed ")):
            said.append(line.rstrip("\n"))
        if parser is not None and parser.feed(line):
            frac = parser.fraction or 0.0
            left = _left_detail(clock, parser) if download else None
            detail = parser.message if left is None else msg("install.progress.step-left", detail=parser.message,
                                                              left=left)
            run.progress(msg("install.progress.with", what=label, detail=detail), (i + frac) / n)

    beat = _Heartbeat(run, label, i / n, clock) if parser is None else None  # a silent step still shows time passing
    env = dict(step.env)
    if step.kind == "constraints":
        env.update(run.written_env())
    try:
        res = run.run(step.argv, step.needs_root, on_line, env=env or None,
                      timeout=min(run.timeout, CHECK_TIMEOUT[step.id]) if step.id in CHECK_TIMEOUT else None,
                      private=secret.private)
    finally:
        if beat is not None:
            beat.stop()
    undo, notes, touched = _actual_undo(run, step, pre)
    info: dict[str, Any] = {}
    wrote, _, left_alone = _files_said(said)
    for line in said:
        if line.startswith("gpusetup-check: "):
            with contextlib.suppress(ValueError):
                info.update(json.loads(line[len("gpusetup-check: "):]))
    for note in left_alone:
        notes.append(to_dict(note))
        if res.ok:
            run.note(note)
    if wrote:
        run.remember_written(wrote)
    extra: dict[str, Any] = {k: v for k, v in info.items() if k in ("broken", "missing", "timeout")}
    run.journal.append("end", step=step.id, rc=res.returncode, ok=res.ok, cancelled=res.cancelled,
                       timed_out=res.timed_out, error=res.error, tail=res.tail[-15:], undo=undo,
                       notes=notes, reboot_needed=bool(reboot_flag), touched=touched, wrote=wrote, **extra)
    if res.ok:
        times.record(step, res.duration_s, parser.downloaded if parser else 0, parser.download_seconds if parser else 0)
    return res, info


_VALUE_OPTIONS = {"--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--progress-bar", "--python",
                  "--dest", "-d", "-c", "--constraint", "--platform", "--python-version", "--trusted-host",
                  "--abi", "--implementation", "--target", "-t", "--prefix", "--root", "-r", "--requirement"}
_SOURCE_OPTIONS = {"--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--trusted-host"}


def _requirements(step: Step) -> list[str]:
    """The requirements a pip/uv install step names (its trailing arguments that are not options)."""
    argv = step.argv
    if "install" not in argv:
        return []
    out: list[str] = []
    k = len(argv) - 1
    while k > argv.index("install"):
        a = argv[k]
        if a.startswith("-") or argv[k - 1] in _VALUE_OPTIONS:
            break
        out.insert(0, a)
        k -= 1
    return out


def _source_args(step: Step) -> list[str]:
    """Where a pip/uv step installs from (``--index-url X``, ``--no-index --find-links DIR`` …), for a repair."""
    out: list[str] = []
    argv = step.argv
    for k, a in enumerate(argv):
        if a in _SOURCE_OPTIONS and k + 1 < len(argv):
            out += [a, argv[k + 1]]
        elif a == "--no-index":
            out.append(a)
    return out


def _reinstall_argv(run: _Run, step: Step, pins: list[str]) -> list[str]:
    """``pip install --force-reinstall --no-deps`` (uv: ``--reinstall``) of exactly ``pins``, from where ``step``
    installs from."""
    argv = step.argv
    if len(argv) > 2 and argv[1:3] == ["pip", "install"]:  # uv pip install --python PY …
        py = argv[argv.index("--python") + 1] if "--python" in argv else (run.plan.python or ["python"])[0]
        return [argv[0], "pip", "install", "--python", py, "--reinstall", "--no-deps", *_source_args(step), *pins]
    return [*run.plan.pip, "install", "--disable-pip-version-check", "--force-reinstall", "--no-deps",
            *_source_args(step), *pins]


def _redo_step(run: _Run, step: Step, pins: dict[str, str], label: Message, fraction: float,
               why: str) -> ExecResult | None:
    """Reinstall ``pins`` from scratch: remove the unfinished ``.dist-info`` folders among them (pip stopped
    before writing their RECORD), then ``--force-reinstall --no-deps``. Journalled as a ``redo``."""
    if not pins:
        return None
    names = sorted(pins)
    run.progress(msg("install.progress.with", what=label, detail=msg("install.progress.redo", names=", ".join(names))),
                 fraction)
    for argv in ([*run.plan.python, "-I", "-c", snippets.CLEAR_BROKEN, *names],
                 _reinstall_argv(run, step, [f"{n}=={v}" for n, v in sorted(pins.items())])):
        res = run.run(argv)
        run.journal.append("redo", step=step.id, why=why, argv=argv, rc=res.returncode, ok=res.ok,
                           tail=res.tail[-10:])
        if res.cancelled:
            run.journal.append("stopped", step=step.id, reason="cancelled")
            return run.result(False, cancelled=True, failed_step=step.id, said=_cancel_message(step, run))
        if not res.ok:
            run.journal.append("stopped", step=step.id, reason="failed")
            return run.result(False, failed_step=step.id, said=_failure_message(step, res, run, {}, argv=argv))
    return None


def _pip_runs(run: _Run) -> bool:
    if not run.plan.pip:
        return False
    return run_streaming([*run.plan.pip, "--version"], timeout=SNAPSHOT_TIMEOUT).ok


def _created_venv(run: _Run) -> Step | None:
    """The plan's step that created the environment, when this install created it (it was not there)."""
    starts = [r for r in run.journal.read() if r["event"] == "start"]
    for s in run.plan.steps:
        if s.kind == "venv":
            first = next((r for r in starts if r["step"] == s.id), None)
            if first is not None and not (first.get("pre") or {}).get("existed"):
                return s
    return None


def _redo(run: _Run, step: Step, pre: dict[str, Any], label: Message, fraction: float) -> ExecResult | str | None:
    """Before running again a step that was in flight: undo its unknown half. A venv it was creating is
    removed; the distributions a pip step had touched are reinstalled from scratch; an environment this install
    created whose pip no longer runs is rebuilt ("rebuild"). Steps that only read or rewrite run again."""
    run.journal.append("redo-start", step=step.id)
    if step.kind == "venv":
        if not pre.get("existed") and Path(_venv_path(step)).exists() and step.undo:
            res = run.run([*step.undo, "--interrupted"] if snippets.RMTREE_VENV in step.undo else step.undo)
            run.journal.append("redo", step=step.id, why="in-flight", argv=step.undo, rc=res.returncode, ok=res.ok)
            if not res.ok:
                return run.result(False, failed_step=step.id, said=_failure_message(step, res, run, {}, argv=step.undo))
        return None
    if step.kind != "pip" or "install" not in step.argv:
        return None
    own_pip = run.plan.pip[:1] == run.plan.python[:1] and step.argv[:len(run.plan.pip)] == run.plan.pip
    if own_pip and not _pip_runs(run):
        created = _created_venv(run)
        if created is None:
            return run.result(False, failed_step=step.id, said=msg("install.exec.pip-broken",
                                                                   python=" ".join(run.plan.python)))
        run.note(msg("install.exec.rebuilding", venv=_venv_path(created)))
        res = run.run([*created.undo, "--interrupted"] if snippets.RMTREE_VENV in created.undo else created.undo)
        run.journal.append("rebuild", step=created.id, argv=created.undo, rc=res.returncode, ok=res.ok)
        if not res.ok:
            return run.result(False, failed_step=step.id, said=_failure_message(created, res, run, {}, argv=created.undo))
        return "rebuild"
    touched = _touched(pre.get("packages"), run.snapshot())
    run.log_fh.write(f"redo {step.id}: in flight when the last run stopped; reinstalling {sorted(touched) or 'nothing'}\n")
    return _redo_step(run, step, touched, label, fraction, "in-flight")


def _repair(run: _Run, step: Step, info: dict[str, Any], label: Message, fraction: float) -> ExecResult | None:
    """A check failed: reinstall from scratch what it found broken (the file check), or everything this install
    put there (an import that fails over files that match), then run the install steps again for what is
    missing. The check then runs once more."""
    run.journal.append("repair", step=step.id, broken=info.get("broken") or {}, missing=info.get("missing") or {})
    installs = [s for s in run.plan.steps if s.kind == "pip" and s.id != "upgrade-pip" and "install" in s.argv]
    if not installs:
        return None
    touched_by: dict[str, str] = {}
    for rec in run.journal.read():
        if rec["event"] == "end" and rec.get("step") in {s.id for s in installs}:
            for name in rec.get("touched") or {}:
                touched_by[name] = rec["step"]
    broken: dict[str, str] = dict(info.get("broken") or {})
    if step.id != "check-files" or not (broken or info.get("missing")):
        now = run.snapshot() or {}
        broken = {n: now[n] for n in touched_by if n in now} or broken
    for s in installs:
        pins = {n: v for n, v in broken.items() if touched_by.get(n, installs[-1].id) == s.id}
        failure = _redo_step(run, s, pins, label, fraction, "repair")
        if failure is not None:
            return failure
        res = run.run(s.argv, s.needs_root, env=dict(s.env) or None)  # what is missing, with its dependencies
        run.journal.append("redo", step=s.id, why="repair", argv=s.argv, rc=res.returncode, ok=res.ok, tail=res.tail[-10:])
        if not res.ok:
            return run.result(False, failed_step=step.id, said=_failure_message(s, res, run, {}))
    return None


class _Heartbeat:
    """Every second, "<step> — 7 s, about 13 s left" for a step that prints no progress of its own (creating
    an environment takes 10 s or more and says nothing meanwhile), so a progress display never looks frozen."""

    def __init__(self, run: _Run, label: Message, fraction: float, clock: StepClock | None = None,
                 interval: float = 1.0) -> None:
        self._stop = threading.Event()
        clock = clock or StepClock(None)

        def beat() -> None:
            while not self._stop.wait(interval):
                elapsed = msg("duration.seconds", n=f"{clock.elapsed():.0f}")
                left = _left_detail(clock, None)
                detail = elapsed if left is None else msg("install.progress.elapsed", elapsed=elapsed, left=left)
                run.progress(msg("install.progress.with", what=label, detail=detail), fraction)

        self._thread = threading.Thread(target=beat, name="gpusetup-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def step_title(step: Step) -> Message | str:
    """A step's title as data when the planner worded it so (a plan saved by an older version: its English)."""
    return step.title_code if step.title_code is not None else step.title


def _title(step: Step) -> Message | str:
    """A step's title for a progress message: its code when it has one (each UI words it in its language),
    else its English title (a plan saved by an older version)."""
    return step.title_code if step.title_code is not None else step.title


def _cancel_message(step: Step, run: _Run) -> Message:
    return msg("install.exec.cancelled", step=step_title(step), log=str(run.log_path))


def _failure_message(step: Step, res: StreamResult, run: _Run, info: dict[str, Any] | None = None,
                     argv: list[str] | None = None) -> Message:
    what: Message | str
    if res.error:
        what = res.error
    elif res.timed_out:
        what = msg("install.exec.timed-out", seconds=f"{res.duration_s:.0f}")
    else:
        what = msg("install.exec.exit-code", code=res.returncode)
    tail = "\n".join("    " + line for line in res.tail[-12:] if not line.startswith("gpusetup-check: ")) \
        or "    " + render(msg("install.exec.no-output"))
    hint = msg("install.exec.python-download-hint") if step.kind == "python" else ""
    command = display_argv(argv or step.argv, step.needs_root)
    if step.id in REPAIRABLE:
        return msg("install.exec.check-failed-repaired" if (info or {}).get("repaired") else "install.exec.check-failed",
                   step=step_title(step), what=what, command=command, tail=tail, log=str(run.log_path))
    return msg("install.exec.step-failed", step=step_title(step), what=what, command=command, tail=tail, hint=hint,
               log=str(run.log_path))


def _lines(items: list[Any]) -> Message | str:
    """Messages one per indented line, in whatever language the whole is rendered."""
    return msg("install.exec.line", text=items[0], more=_lines(items[1:])) if items else ""


# ------------------------------------------------------------------------------------------- resume


def _load(jdir: Path) -> InstallPlan | None:
    try:
        return from_dict(InstallPlan, json.loads((jdir / PLAN).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def resume(
    journal_dir: Path | None = None,
    *,
    progress: SaidProgress | None = None,
    cancel: CancelToken | None = None,
    log: IO[str] | None = None,
    check_network: bool = True,
    elevate: str = "auto",
    step_timeout: float = STEP_TIMEOUT,
    boot_id: Callable[[], str | None] | None = None,
    ask_secret: Callable[[str], str | None] | None = None,
    stop_after: CancelToken | None = None,
    repair: bool = False,
) -> ExecResult:
    """Continue an unfinished install: after a crash, a failed or cancelled step, or the driver's reboot.

    Steps that ended well are skipped. A step that started and did not end well (a crash, a kill, a cancel, a
    failure) is redone from scratch (see :func:`_redo`) and keeps its original "what was there before" record
    for rollback. A check that failed repairs what it found broken, then checks again. An interrupted
    rollback is finished instead (never an install over a half-removed environment). ``repair``: also for an
    install that finished — its checks run again and repair what they find.
    """
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    boot = boot_id or read_boot_id
    journal = Journal(jdir)
    if journal.rollback_interrupted():  # the install is not resumed: it is undone (never ✓ for it)
        out = rollback(jdir, progress=progress, cancel=cancel, log=log, elevate=elevate)
        said = msg("install.exec.rollback-finished-instead", result=out.said if out.said is not None else out.message)
        return ExecResult(ok=False, rollback=True, failed_step=out.failed_step, log_path=out.log_path,
                          journal_dir=out.journal_dir, notes=out.notes, said=said, fix=None if out.ok else out.fix)
    plan = _load(jdir)
    try:
        with _Both(jdir, plan.target if plan is not None else "") as lock:
            status = journal.status()
            if status == "finished" and repair and plan is not None and any(s.id in CHECK_STEPS for s in plan.steps):
                journal.append("repair-start", steps=[s.id for s in plan.steps if s.id in CHECK_STEPS])
                first_check = next(k for k, s in enumerate(plan.steps) if s.id in CHECK_STEPS)
                run = _Run(plan, jdir, progress, cancel, log, elevate, step_timeout, stop_after)
                try:
                    return _run_steps(run, first_check, {}, boot, repair=True)
                finally:
                    run.close()
            if status != "unfinished":
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.nothing-to-resume"))
            if plan is None:
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.plan-damaged", dir=str(jdir)))
            recs = journal.read()
            last: dict[str, dict[str, Any]] = {}  # each step's last start or end: ok only when it ended well since
            for r in recs:
                if r["event"] in ("start", "end") and r.get("step"):
                    last[r["step"]] = r
            ok_ids = {sid for sid, r in last.items() if r["event"] == "end" and r.get("ok")}
            carried: dict[str, dict[str, Any]] = {}
            for r in recs:
                if r["event"] == "start" and r["step"] not in carried:
                    carried[r["step"]] = r.get("pre") or {}
            paused = [r for r in recs if r["event"] in ("paused", "reboot-done")]
            if paused and paused[-1]["event"] == "paused":
                now = boot()
                if now is not None and now == paused[-1].get("boot_id"):
                    return ExecResult(ok=False, reboot_needed=True, journal_dir=str(jdir),
                                      failed_step=paused[-1]["step"], said=msg("install.exec.not-restarted"))
                journal.append("reboot-done", step=paused[-1]["step"], boot_id=now)
                ok_ids.add(paused[-1]["step"])
            for r in recs:
                if r["event"] == "reboot-done":
                    ok_ids.add(r["step"])
            start = next((i for i, s in enumerate(plan.steps) if s.id not in ok_ids), len(plan.steps))
            in_flight = set(journal.in_flight()) - ok_ids
            _remember_configured()
            missing = credentials.unknown([a for s in plan.steps[start:] for a in s.argv]
                                          + (plan.indexes if check_network else []))
            if missing and ask_secret is not None:
                for url in missing:
                    credentials.supply(url, ask_secret(url))
                missing = credentials.unknown([a for s in plan.steps[start:] for a in s.argv])
            if missing:
                return ExecResult(ok=False, journal_dir=str(jdir), failed_step="preflight",
                                  said=msg("install.exec.missing-credentials", urls=", ".join(missing),
                                           first=missing[0].replace(credentials.MASK, "PASSWORD")))
            journal.append("resume", from_step=plan.steps[start].id if start < len(plan.steps) else None,
                           redo=sorted(in_flight))
            run = _Run(plan, jdir, progress, cancel, log, elevate, step_timeout, stop_after)
            _lock_note(run, lock)
            try:
                remaining = plan.steps[start:]
                if check_network and any(s.kind == "pip" for s in remaining):
                    failure = _preflight(run, None, True, start)
                    if failure:
                        journal.append("stopped", step=remaining[0].id, reason="preflight")
                        return run.result(False, failed_step="preflight", said=failure, fix=run.fix)
                    start = next((i for i, s in enumerate(plan.steps) if s.id not in ok_ids), len(plan.steps))
                return _run_steps(run, start, carried, boot, redo=in_flight, repair=True)
            finally:
                run.close()
    except LockBusy as exc:
        return _busy(exc, jdir)


def repair(journal_dir: Path | None = None, **kw: Any) -> ExecResult:
    """``gpusetup install --repair``: finish an install whose check failed by repairing what it found (as
    :func:`resume` does), or check a finished install again and repair what is broken now."""
    return resume(journal_dir, repair=True, **kw)


# ----------------------------------------------------------------------------------------- rollback


def rollback(
    journal_dir: Path | None = None,
    *,
    progress: SaidProgress | None = None,
    cancel: CancelToken | None = None,
    log: IO[str] | None = None,
    elevate: str = "auto",
    step_timeout: float = 600.0,
) -> ExecResult:
    """Undo the last install (finished or not), newest step first, touching only what it created.

    Journalled as a rollback (``rollback-start``; ``rollback-step`` before each undo, ``rollback-end`` after)
    so an interrupted one is finished by the next ``--rollback`` or ``--resume``: undos that ended well are not
    run again, and the removal of an environment that was interrupted goes on even where its pyvenv.cfg is
    already gone (the journal, not the folder, says it is ours)."""
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    plan = _load(jdir) or InstallPlan()
    try:
        with _Both(jdir, plan.target) as lock:
            journal = Journal(jdir)
            status = journal.status()
            if status in ("none", "rolled-back"):
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg(
                    "install.exec.nothing-to-undo-again" if status == "rolled-back" else "install.exec.nothing-to-undo"))
            by_id = {s.id: s for s in plan.steps}
            recs = journal.read()
            starts: dict[str, dict[str, Any]] = {}
            ends: dict[str, dict[str, Any]] = {}
            order: list[str] = []
            undone: set[str] = set()  # undos that ended well in an earlier, interrupted rollback
            undo_started: set[str] = set()
            for r in recs:
                if r["event"] == "start":
                    if r["step"] not in starts:
                        starts[r["step"]] = r
                        order.append(r["step"])
                elif r["event"] == "end":
                    ends[r["step"]] = r
                elif r["event"] == "rollback-step":
                    undo_started.add(r["step"])
                elif r["event"] == "rollback-end" and r.get("ok"):
                    undone.add(r["step"])
            again = journal.rollback_interrupted()
            run = _Run(plan, jdir, progress, cancel, log, elevate, step_timeout)
            _lock_note(run, lock)
            try:
                journal.append("rollback-start", steps=list(reversed(order)), again=again)
                removed_env = any(
                    by_id.get(sid) is not None and by_id[sid].kind == "venv"
                    and not (starts[sid].get("pre") or {}).get("existed") for sid in order
                )
                failures: list[Message] = []
                notes: list[Any] = []  # English strings (older journals) or messages as {"code", "params"}
                todo = list(reversed(order))
                for k, sid in enumerate(todo):
                    step = by_id.get(sid) or Step(id=sid, title=sid, argv=starts[sid].get("argv", []),
                                                  undo=starts[sid].get("undo", []))
                    run.progress(msg("install.progress.undoing", title=_title(step)), k / max(1, len(todo)))
                    if removed_env and step.kind in ("pip", "constraints", "command"):
                        continue  # the whole environment we created goes below
                    if sid in undone:
                        continue
                    finished = sid in ends and ends[sid].get("ok")
                    if sid in ends and sid not in undo_started:
                        undo = ends[sid].get("undo") or []
                        notes.extend(ends[sid].get("notes") or [])
                        touched = ends[sid].get("touched") or {}
                    else:  # crashed mid-step (or mid-undo): work out the undo from what is there now
                        undo, extra, touched = _actual_undo(run, step, starts[sid].get("pre") or {})
                        notes.extend(extra)
                    if not undo:
                        continue
                    if snippets.RMTREE_VENV in undo and sid in undo_started:
                        undo = [*undo, "--interrupted"]  # our own removal was cut short: pyvenv.cfg may be gone
                    if step.kind == "pip" and not finished and touched:  # pip stopped before writing a RECORD
                        run.run([*plan.python, "-I", "-c", snippets.CLEAR_BROKEN, *sorted(touched)])
                    journal.append("rollback-step", step=sid, argv=undo)
                    said: list[str] = []
                    env = run.written_env() if snippets.REMOVE_OURS in undo else None
                    res = run.run(undo, step.needs_root, on_line=said.append, env=env)
                    _, removed, left = _files_said(said)
                    notes.extend(to_dict(n) for n in left)
                    if removed:
                        run.remember_written({}, removed)
                    journal.append("rollback-end", step=sid, argv=undo, rc=res.returncode, ok=res.ok,
                                   tail=res.tail[-10:])
                    if not res.ok:
                        failures.append(msg("install.exec.undo-failed", step=step_title(step),
                                            command=display_argv(undo, step.needs_root),
                                            error=res.error or res.returncode,
                                            last=res.tail[-1] if res.tail else msg("install.exec.no-output")))
                    if res.cancelled:
                        break
                if failures:
                    journal.append("stopped", reason="rollback-failed")
                    return run.result(False, failed_step="rollback", said=msg(
                        "install.exec.undo-failures", failures=_lines(failures), log=str(run.log_path)))
                journal.append("rolled-back", ok=True, notes=notes)
                run.progress(msg("install.progress.rolled-back"), 1.0)
                return run.result(True, said=msg("install.exec.rolled-back", notes=_lines(notes)))
            finally:
                run.close()
    except LockBusy as exc:
        return _busy(exc, jdir)
