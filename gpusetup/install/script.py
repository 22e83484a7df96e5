"""A plan as a standalone script a support engineer can send (``gpusetup install --script FILE``).

The script does exactly the plan's steps, stops at the first failure (``set -euo pipefail`` /
``$ErrorActionPreference = 'Stop'`` plus an exit-code check per command), checks each package index first,
and carries the installer scripts inline so it needs nothing but itself.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpusetup import credentials, escape
from gpusetup.install.plan import InstallPlan, installers_dir
from gpusetup.messages import lang_code, msg, render, render_notes, step_explain, step_title
from gpusetup.model import Message, Plan

COMMON = "gpusetup-common.sh"  # sourced by every installer script


def _ps_quote(arg: str) -> str:
    return "'" + arg.replace("'", "''") + "'"


def _home_relative(arg: str) -> str | None:
    """The rest of a ``~/…`` (or ``~\\…``) path, or None: quoting would stop the shell expanding ``~``, and the
    script runs in the home of whoever runs it, not of the machine that wrote it."""
    if arg == "~":
        return ""
    if arg.startswith(("~/", "~\\")):
        return arg[2:]
    return None


def _sh_word(arg: str) -> str:
    """One bash word on one line (:func:`gpusetup.escape.sh`), ``~/`` kept as the runner's home."""
    rest = _home_relative(arg)
    if rest is None:
        return escape.sh(arg)
    return '"$HOME"' + (escape.sh("/" + rest) if rest else "")


def _ps_word(arg: str) -> str:
    rest = _home_relative(arg)
    if rest is None:
        return _ps_quote(arg)
    return f"(Join-Path $HOME {_ps_quote(rest)})" if rest else "$HOME"


def render_script(plan: Plan, shell: str = "bash", language: str | None = None) -> str:
    """The plan as a script. ``language`` words the comments and the lines a bash script echoes (the commands
    are the same in every language); a PowerShell script stays English (Windows PowerShell 5 reads a UTF-8
    file without a byte-order mark as ANSI, so its Chinese would print garbled)."""
    lang = lang_code(language)
    if shell in ("bash", "sh"):
        text = _bash(plan, lang)
        mark = "#"
    elif shell in ("powershell", "pwsh", "ps1"):
        text = _powershell(plan)
        mark = "#"
    else:
        raise ValueError(f"unknown shell {shell!r}: use bash or powershell")
    text = credentials.scrub(text)  # a script is a file that is sent around: never with a secret in it
    if credentials.MASK + "@" in text:
        first, _, rest = text.partition("\n")
        no_password = render(msg("script.no-password"), lang if shell in ("bash", "sh") else None)
        text = "\n".join([first, *_comment(no_password, mark), rest])
    return text


def _comment(text: str, mark: str = "#") -> list[str]:
    """Comment lines: one per line of ``text``; nothing in a line can end its comment (escape.comment)."""
    return escape.comments(text.rstrip("\n").split("\n"), mark)


def _bash(plan: Plan, lang: str = "en") -> str:
    def w(message: Message) -> str:
        return render(message, lang)

    out = ["#!/usr/bin/env bash", *_comment(w(msg("script.header"))), "set -euo pipefail", ""]
    for note in render_notes(plan.notes, plan.note_codes, lang):
        out += _comment(note)
    embedded: dict[str, str] = {}
    for s in plan.steps:
        if s.kind == "script" and len(s.argv) > 1 and s.argv[0] == "bash":
            embedded[s.argv[1]] = Path(s.argv[1]).name
    if embedded:
        out += ['gpusetup_dir="$(mktemp -d)"', 'trap \'rm -rf "$gpusetup_dir"\' EXIT']
        files = dict(embedded)
        files[str(installers_dir() / COMMON)] = COMMON  # what the installer scripts source from their folder
        for path, name in files.items():
            text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else \
                (installers_dir() / name).read_text(encoding="utf-8")
            out += [f"cat > \"$gpusetup_dir/{name}\" <<'GPUSETUP_EOF'", text.rstrip("\n"), "GPUSETUP_EOF"]
    # Which steps are done, kept between runs: the recipient has no gpusetup to resume with, so running the same
    # script again (after the restart a driver needs) continues after the last finished step.
    plan_id = hashlib.sha256(json.dumps([[s.id, s.argv] for s in plan.steps]).encode()).hexdigest()[:16]
    out += ["", *_comment(w(msg("script.state"))),
            f'gpusetup_state="${{XDG_STATE_HOME:-$HOME/.local/state}}/gpusetup-script/{plan_id}"',
            'mkdir -p "$gpusetup_state"',
            'gpusetup_done() { [ -e "$gpusetup_state/step-$1.done" ]; }',
            'gpusetup_mark() { : >"$gpusetup_state/step-$1.done"; }',
            'gpusetup_boot() { cat "${GPUSETUP_BOOT_ID_FILE:-/proc/sys/kernel/random/boot_id}" 2>/dev/null || echo unknown; }']
    if any(s.kind == "reboot" for s in plan.steps):
        out += [*_comment(w(msg("script.restart-file"))),
                'gpusetup_restart_file="${GPUSETUP_REBOOT_FILE:-/var/lib/gpusetup/reboot-needed}"']
    if isinstance(plan, InstallPlan) and plan.indexes and not plan.offline:
        out += ["", *_comment(w(msg("script.check-indexes"))),
                "gpusetup_reach() {",
                "  if command -v curl >/dev/null 2>&1; then curl -fsS --max-time 20 -o /dev/null \"$1\"",
                "  elif command -v wget >/dev/null 2>&1; then wget -q -T 20 -O /dev/null \"$1\"",
                "  else python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' "
                "\"$1\" 2>/dev/null",
                "  fi",
                "}"]
        for url in plan.indexes:
            page = url.rstrip("/") + "/" + (plan.probes.get(url) or plan.probe_package or "pip") + "/"
            out.append(f"gpusetup_reach {escape.sh(page)} || "
                       f"{{ echo {escape.sh(w(msg('script.cannot-reach', url=url)))} >&2; exit 1; }}")
    n = len(plan.steps)
    for i, s in enumerate(plan.steps, 1):
        step = w(msg("script.step", i=i, n=n, title=step_title(s, lang)))
        explain = w(msg("step.explain.reboot-script")) if s.kind == "reboot" else step_explain(s, lang)
        out += ["", escape.comment(step)] + _comment(explain)
        head = f"==> {step}"
        out += [f"if gpusetup_done {i}; then",
                f"  echo {escape.sh(head + ' ' + w(msg('script.done-earlier')))}",
                "else",
                f"  echo {escape.sh(head)}"]
        if s.kind == "reboot":
            # only when the driver step asked for a restart (its reboot-needed file), and only until it happened
            out += ['  if [ ! -f "$gpusetup_restart_file" ]; then',
                    f"    echo {escape.sh(w(msg('script.no-restart-needed')))}",
                    '  elif [ -f "$gpusetup_state/restart-asked" ] && [ "$(cat "$gpusetup_state/restart-asked")" != "$(gpusetup_boot)" ]; then',
                    f"    echo {escape.sh(w(msg('script.restarted')))}",
                    "  else",
                    '    gpusetup_boot >"$gpusetup_state/restart-asked"',
                    f"    echo {escape.sh(w(msg('script.restart-now')))}",
                    "    exit 0",
                    "  fi",
                    f"  gpusetup_mark {i}",
                    "fi"]
            continue
        if s.argv:
            argv = list(s.argv)
            if argv[0] == "bash" and len(argv) > 1 and argv[1] in embedded:
                words = ["bash", f'"$gpusetup_dir/{embedded[argv[1]]}"'] + [_sh_word(a) for a in argv[2:]]
            else:
                words = [_sh_word(a) for a in argv]
            prefix = "sudo " if s.needs_root else ""
            env = "".join(f"{k}={_sh_word(v)} " for k, v in s.env.items())
            out.append("  " + prefix + env + " ".join(words))
            if s.undo:
                undo = " ".join(_sh_word(a) for a in s.undo)[:300]
                out.append("  " + escape.comment(w(msg("script.undo", command=undo))))
        out += [f"  gpusetup_mark {i}", "fi"]
    out += ["", f"echo {escape.sh(w(msg('script.all-done')))}",
            f"echo {escape.sh(w(msg('script.run-again')))}\"$gpusetup_state\"", ""]
    return "\n".join(out)


def _powershell(plan: Plan) -> str:
    out = ["# Generated by gpusetup: installs exactly the plan below, stops at the first error.",
           "$ErrorActionPreference = 'Stop'", ""]
    for note in plan.notes:
        out += _comment(note)
    if isinstance(plan, InstallPlan) and plan.indexes and not plan.offline:
        for url in plan.indexes:
            page = url.rstrip("/") + "/" + (plan.probes.get(url) or plan.probe_package or "pip") + "/"
            out.append(f"try {{ Invoke-WebRequest -UseBasicParsing -TimeoutSec 20 -Uri {_ps_quote(page)} | "
                       f"Out-Null }} catch {{ throw {_ps_quote('Cannot reach ' + url + ': check the network or proxy.')} }}")
    n = len(plan.steps)
    for i, s in enumerate(plan.steps, 1):
        out += ["", escape.comment(f"Step {i} of {n}: {s.title}")] + _comment(s.explain)
        out.append(f"Write-Host {_ps_quote(escape.one_line(f'==> Step {i} of {n}: {s.title}'))}")
        if s.kind == "reboot":
            out += ["Write-Host 'Restart Windows now, then run the remaining steps.'", "exit 0"]
            continue
        if not s.argv:
            continue
        if s.needs_root:
            out.append("# needs an Administrator PowerShell")
        out += [f"$env:{k} = {_ps_quote(v)}" for k, v in s.env.items()]
        out.append("& " + " ".join(_ps_word(a) for a in s.argv))
        out.append(f"if ($LASTEXITCODE -ne 0) {{ throw {_ps_quote(escape.one_line(f'Step {i} ({s.title}) failed'))} + \" (exit code $LASTEXITCODE)\" }}")
    out += ["", "Write-Host 'All steps finished.'", ""]
    return "\n".join(out)
