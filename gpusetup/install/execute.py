"""Run an :class:`InstallPlan` step by step with a journal; resume it after a crash or reboot; roll it back.

Order of business for every run: take the lock, check disk and network *before* changing anything, then
for each step write a ``start`` record (command, planned undo, what was there before), run it, and write an
``end`` record (exit code, output tail, the real undo). A failed step stops the plan with the command, the
exit code and its last lines. Rollback walks the journal backwards and removes only what this install
created: a venv it made, packages that were not there before, files it wrote.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpusetup import credentials
from gpusetup.cancel import CancelToken, SaidProgress
from gpusetup.install import snippets
from gpusetup.install.journal import LOG, PLAN, InstallLock, Journal, LockBusy, default_state_dir
from gpusetup.install.net import check_index, pip_config_value
from gpusetup.install.plan import InstallPlan
from gpusetup.install.progress import PipProgress
from gpusetup.install.stream import StreamResult, run_streaming
from gpusetup.messages import msg, render
from gpusetup.model import Message, Plan, Step, from_dict, to_dict
from gpusetup.paths import open_private, write_private

STEP_TIMEOUT = 3 * 3600.0  # a multi-GB download on a slow line; cancel is always available
SNAPSHOT_TIMEOUT = 60.0
MIB = 1024 * 1024

FreeSpace = Callable[[str], int]  # path → free bytes


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
    # mirror or a proxy), "python-mirror" (where Python builds come from); None when nothing specific helps
    fix: str | None = None
    said: Message | None = None  # ``message`` as data (a gpusetup.messages code and its parameters)

    def __post_init__(self) -> None:
        if self.said is not None and not self.message:
            self.message = render(self.said)


_SNIPPET_NAMES = {
    snippets.VERIFY: "<gpusetup: compare installed versions with the plan>",
    snippets.LIST: "<gpusetup: list installed packages>",
    snippets.PROTECT: "<gpusetup: write the constraints file>",
    snippets.REMOVE_OURS: "<gpusetup: remove files gpusetup wrote>",
    snippets.RMTREE_VENV: "<gpusetup: delete the virtual environment>",
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
                 log: IO[str] | None, elevate: str, timeout: float) -> None:
        self.plan = plan
        self.jdir = jdir
        self.journal = Journal(jdir)
        self.progress = progress or (lambda label, frac: None)
        self.cancel = cancel or CancelToken()
        self.log_path = jdir / LOG
        self.log_fh = log or open_private(self.log_path, "a")
        self._own_log = log is None
        self.elevate = elevate
        self.timeout = timeout
        self.fix: str | None = None  # set by a check that failed (see ExecResult.fix)

    def close(self) -> None:
        if self._own_log:
            self.log_fh.close()

    def result(self, ok: bool, **kw: Any) -> ExecResult:
        return ExecResult(ok=ok, log_path=str(self.log_path), journal_dir=str(self.jdir), **kw)

    def run(self, argv: list[str], needs_root: bool = False, on_line: Callable[[str], None] | None = None,
            timeout: float | None = None, env: dict[str, str] | None = None) -> StreamResult:
        prefix = _elevation(self.elevate) if needs_root else []
        full = [*prefix, *argv]
        shown_env = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
        self.log_fh.write(f"\n$ {shown_env}{display_argv(full)}\n")
        self.log_fh.flush()
        try:  # masked index URLs: the secret goes to pip/uv in their environment, never on the command line
            real, secret_env = credentials.for_child(full)
        except credentials.MissingCredential as exc:
            self.log_fh.write(f"[not started: {exc}]\n")
            return StreamResult(full, None, error=str(exc))
        child_env = {**(env or {}), **(secret_env or {})}
        res = run_streaming(real, timeout=timeout or self.timeout, cancel=self.cancel, on_line=on_line,
                            log=self.log_fh, own_session=not prefix, env=child_env or None)
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


# ------------------------------------------------------------------------------------------ execute


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
) -> ExecResult:
    """Run ``plan`` from the start. Refuses while an earlier install is unfinished (resume or roll it back)."""
    iplan = plan if isinstance(plan, InstallPlan) else InstallPlan(steps=plan.steps, notes=plan.notes)
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    try:
        with InstallLock(jdir) as lock:
            journal = Journal(jdir)
            status = journal.status()
            if status == "unfinished":
                return ExecResult(ok=False, journal_dir=str(jdir), said=_unfinished_message(journal))
            if status != "none":
                journal.archive()
            # the plan holds masked URLs (credentials.remember); scrub is the belt to those braces
            write_private(jdir / PLAN, credentials.scrub(json.dumps(to_dict(iplan), indent=1)))
            journal.append("plan", target=iplan.target, steps=[s.id for s in iplan.steps])
            run = _Run(iplan, jdir, progress, cancel, log, elevate, step_timeout)
            _lock_note(run, lock)
            try:
                failure = _preflight(run, free_space or free_bytes, check_network)
                if failure:
                    journal.append("finished", ok=False, reason="preflight", message=render(failure))
                    return run.result(False, failed_step="preflight", said=failure, fix=run.fix)
                return _run_steps(run, 0, {}, boot_id or read_boot_id)
            finally:
                run.close()
    except LockBusy as exc:
        return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.busy", owner=exc.owner))


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


def _preflight(run: _Run, free_space: FreeSpace, check_network: bool) -> Message | None:
    plan = run.plan
    need = plan.download_mib + plan.installed_mib
    if plan.space_path:
        where = _existing_parent(plan.space_path)
        if not os.access(where, os.W_OK):
            run.fix = "disk-space"
            return msg("install.exec.cannot-write", where=str(where), path=plan.space_path, hint=_where_hint(plan))
    if need and plan.space_path:
        run.progress(msg("install.progress.disk"), None)
        free = free_space(plan.space_path) // MIB
        run.log_fh.write(f"disk: {free} MiB free at {plan.space_path}, about {need} MiB needed\n")
        if free < need:
            run.fix = "disk-space"
            return msg("install.exec.no-space", path=plan.space_path, free=f"{free / 1024:.1f}",
                       need=f"{need / 1024:.1f}", hint=_where_hint(plan))
    if check_network and plan.indexes and not plan.offline:
        for url in plan.indexes:
            run.progress(msg("install.progress.reach", url=url), None)
            chk = check_index(url, plan.probes.get(url) or plan.probe_package or "pip")
            run.log_fh.write(credentials.scrub(f"network: {url}: {'ok' if chk.ok else chk.message}\n"))
            if not chk.ok:
                run.fix = "network"
                return msg("install.exec.network", error=chk.said if chk.said is not None else credentials.scrub(chk.message))
    return None


def _pre_state(run: _Run, step: Step) -> dict[str, Any]:
    if step.kind == "venv" and (step.argv[1:3] == ["-m", "venv"] or step.argv[1:2] == ["venv"]):
        target = [a for a in step.argv[2:] if not a.startswith("--")][-1]
        return {"existed": Path(target).exists()}
    if step.kind == "pip" and "install" in step.argv:
        return {"packages": run.snapshot()}
    return {}


def _actual_undo(run: _Run, step: Step, pre: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(undo argv, notes as data — {"code", "params"}, kept in the journal) for a step that ran (fully or
    partly), from what was there before it."""
    if step.kind == "venv":
        return ([] if pre.get("existed") else list(step.undo)), []
    if step.kind == "pip" and "install" in step.argv:
        before = pre.get("packages")
        after = run.snapshot()
        if before is None or after is None:
            return list(step.undo), [to_dict(msg("install.exec.undo-plan-list"))]
        new = sorted(set(after) - set(before))
        changed = [to_dict(msg("install.exec.was-before", name=n, before=before[n], now=after[n]))
                   for n in sorted(set(after) & set(before)) if after[n] != before[n]]
        return ([*run.plan.pip, "uninstall", "-y", *new] if new else []), changed
    return list(step.undo), []


def read_boot_id() -> str | None:
    """Changes at every boot (Linux); lets --resume tell whether the machine was restarted."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _run_steps(run: _Run, start: int, carried: dict[str, dict[str, Any]],
               boot_id: Callable[[], str | None]) -> ExecResult:
    steps = run.plan.steps
    n = len(steps)
    done: list[str] = []
    for i in range(start, n):
        step = steps[i]
        label = msg("install.progress.step", i=i + 1, n=n, title=_title(step))
        if run.cancel.cancelled:
            run.journal.append("stopped", step=step.id, reason="cancelled")
            return run.result(False, cancelled=True, failed_step=step.id, done=done,
                              said=_cancel_message(step, run))
        run.progress(label, i / n)
        if step.kind == "reboot":
            asked = any(r.get("reboot_needed") for r in run.journal.read() if r["event"] == "end")
            if not asked:  # the driver step found the driver already installed: nothing to restart for
                run.journal.append("end", step=step.id, rc=0, ok=True, undo=[],
                                   notes=[to_dict(msg("install.exec.no-restart-needed"))])
                done.append(step.id)
                continue
            run.journal.append("paused", step=step.id, reason="reboot", boot_id=boot_id())
            return run.result(False, reboot_needed=True, failed_step=step.id, done=done,
                              said=msg("install.exec.restart-now"))
        if step.kind == "manual" or not step.argv:
            run.journal.append("end", step=step.id, rc=0, ok=True, undo=[],
                               notes=[to_dict(step.explain_code) if step.explain_code is not None else step.explain])
            done.append(step.id)
            continue
        pre = carried.get(step.id) or _pre_state(run, step)
        run.journal.append("start", step=step.id, argv=step.argv, needs_root=step.needs_root,
                           undo=step.undo, pre=pre)
        parser = PipProgress() if step.kind in ("pip", "download") else None  # download: uvfetch speaks pip's format
        reboot_flag: list[bool] = []

        def on_line(line: str, i: int = i, label: Message = label, parser: PipProgress | None = parser,
                    reboot_flag: list[bool] = reboot_flag) -> None:
            if "gpusetup: reboot-needed" in line:
                reboot_flag.append(True)
            if parser is not None and parser.feed(line):
                frac = parser.fraction or 0.0
                run.progress(msg("install.progress.with", what=label, detail=parser.message), (i + frac) / n)

        beat = _Heartbeat(run, label, i / n) if parser is None else None  # a silent step still shows time passing
        try:
            res = run.run(step.argv, step.needs_root, on_line, env=step.env)
        finally:
            if beat is not None:
                beat.stop()
        undo, notes = _actual_undo(run, step, pre)
        run.journal.append("end", step=step.id, rc=res.returncode, ok=res.ok, cancelled=res.cancelled,
                           timed_out=res.timed_out, error=res.error, tail=res.tail[-15:], undo=undo,
                           notes=notes, reboot_needed=bool(reboot_flag))
        if res.cancelled:
            run.journal.append("stopped", step=step.id, reason="cancelled")
            return run.result(False, cancelled=True, failed_step=step.id, done=done,
                              said=_cancel_message(step, run))
        if not res.ok:
            run.journal.append("stopped", step=step.id, reason="failed")
            return run.result(False, failed_step=step.id, done=done, said=_failure_message(step, res, run),
                              fix={"python": "python-mirror", "download": "network"}.get(step.kind))
        done.append(step.id)
    run.progress(msg("install.progress.done"), 1.0)
    run.journal.append("finished", ok=True)
    return run.result(True, done=done, said=msg("install.exec.finished", count=n, log=str(run.log_path)))


class _Heartbeat:
    """Every second, "<step> — 7 s" for a step that prints no progress of its own (creating an environment
    takes 10 s or more and says nothing meanwhile), so a progress display never looks frozen."""

    def __init__(self, run: _Run, label: Message, fraction: float, interval: float = 1.0) -> None:
        self._stop = threading.Event()
        t0 = time.monotonic()

        def beat() -> None:
            while not self._stop.wait(interval):
                run.progress(msg("install.progress.with", what=label,
                                 detail=msg("duration.seconds", n=f"{time.monotonic() - t0:.0f}")), fraction)

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


def _failure_message(step: Step, res: StreamResult, run: _Run) -> Message:
    what: Message | str
    if res.error:
        what = res.error
    elif res.timed_out:
        what = msg("install.exec.timed-out", seconds=f"{run.timeout:g}")
    else:
        what = msg("install.exec.exit-code", code=res.returncode)
    tail = "\n".join("    " + line for line in res.tail[-12:]) or "    " + render(msg("install.exec.no-output"))
    hint = msg("install.exec.python-download-hint") if step.kind == "python" else ""
    return msg("install.exec.step-failed", step=step_title(step), what=what,
               command=display_argv(step.argv, step.needs_root), tail=tail, hint=hint, log=str(run.log_path))


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
) -> ExecResult:
    """Continue an unfinished install: after a crash, a failed or cancelled step, or the driver's reboot.

    Steps that ended well are skipped; a step that started but has no end record (a crash) is run again
    (every step is idempotent) and keeps its original "what was there before" record for rollback.
    """
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    boot = boot_id or read_boot_id
    try:
        with InstallLock(jdir) as lock:
            journal = Journal(jdir)
            if journal.status() != "unfinished":
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.nothing-to-resume"))
            plan = _load(jdir)
            if plan is None:
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.plan-damaged", dir=str(jdir)))
            recs = journal.read()
            ok_ids = {r["step"] for r in recs if r["event"] == "end" and r.get("ok")}
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
            journal.append("resume", from_step=plan.steps[start].id if start < len(plan.steps) else None)
            run = _Run(plan, jdir, progress, cancel, log, elevate, step_timeout)
            _lock_note(run, lock)
            try:
                remaining = plan.steps[start:]
                if check_network and any(s.kind == "pip" for s in remaining):
                    failure = _preflight(run, lambda p: sys.maxsize, True)
                    if failure:
                        journal.append("stopped", step=remaining[0].id, reason="preflight")
                        return run.result(False, failed_step="preflight", said=failure, fix=run.fix)
                return _run_steps(run, start, carried, boot)
            finally:
                run.close()
    except LockBusy as exc:
        return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.busy", owner=exc.owner))


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
    """Undo the last install (finished or not), newest step first, touching only what it created."""
    jdir = Path(journal_dir) if journal_dir else default_state_dir()
    try:
        with InstallLock(jdir) as lock:
            journal = Journal(jdir)
            status = journal.status()
            if status in ("none", "rolled-back"):
                return ExecResult(ok=False, journal_dir=str(jdir), said=msg(
                    "install.exec.nothing-to-undo-again" if status == "rolled-back" else "install.exec.nothing-to-undo"))
            plan = _load(jdir) or InstallPlan()
            by_id = {s.id: s for s in plan.steps}
            recs = journal.read()
            starts: dict[str, dict[str, Any]] = {}
            ends: dict[str, dict[str, Any]] = {}
            order: list[str] = []
            for r in recs:
                if r["event"] == "start":
                    if r["step"] not in starts:
                        starts[r["step"]] = r
                        order.append(r["step"])
                elif r["event"] == "end":
                    ends[r["step"]] = r
            run = _Run(plan, jdir, progress, cancel, log, elevate, step_timeout)
            _lock_note(run, lock)
            try:
                journal.append("rollback-start", steps=list(reversed(order)))
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
                    if removed_env and step.kind in ("pip", "constraints"):
                        continue  # the whole environment we created goes below
                    if sid in ends:
                        undo = ends[sid].get("undo") or []
                        notes.extend(ends[sid].get("notes") or [])
                    else:  # crashed mid-step: work out the undo from what is there now
                        undo, extra = _actual_undo(run, step, starts[sid].get("pre") or {})
                        notes.extend(extra)
                    if not undo:
                        continue
                    res = run.run(undo, step.needs_root)
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
        return ExecResult(ok=False, journal_dir=str(jdir), said=msg("install.exec.busy", owner=exc.owner))
