"""A plan as a standalone script a support engineer can send (``gpusetup install --script FILE``).

The script does exactly the plan's steps, stops at the first failure (``set -euo pipefail`` /
``$ErrorActionPreference = 'Stop'`` plus an exit-code check per command), checks each package index first,
and carries the installer scripts inline so it needs nothing but itself.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from gpusetup import credentials
from gpusetup.install.plan import InstallPlan, installers_dir
from gpusetup.messages import lang_code, msg, render, render_notes, step_explain, step_title
from gpusetup.model import Message, Plan


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
    rest = _home_relative(arg)
    if rest is None:
        return shlex.quote(arg)
    return '"$HOME"' + (shlex.quote("/" + rest) if rest else "")


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
    return [f"{mark} {line}".rstrip() for line in text.splitlines()]


def _bash(plan: Plan, lang: str = "en") -> str:
    def w(message: Message) -> str:
        return render(message, lang)

    out = ["#!/usr/bin/env bash", "# " + w(msg("script.header")), "set -euo pipefail", ""]
    for note in render_notes(plan.notes, plan.note_codes, lang):
        out += _comment(note)
    embedded: dict[str, str] = {}
    for s in plan.steps:
        if s.kind == "script" and len(s.argv) > 1 and s.argv[0] == "bash":
            embedded[s.argv[1]] = Path(s.argv[1]).name
    if embedded:
        out += ['gpusetup_dir="$(mktemp -d)"', 'trap \'rm -rf "$gpusetup_dir"\' EXIT']
        for path, name in embedded.items():
            text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else \
                (installers_dir() / name).read_text(encoding="utf-8")
            out += [f"cat > \"$gpusetup_dir/{name}\" <<'GPUSETUP_EOF'", text.rstrip("\n"), "GPUSETUP_EOF"]
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
            out.append(f"gpusetup_reach {shlex.quote(page)} || "
                       f"{{ echo {shlex.quote(w(msg('script.cannot-reach', url=url)))} >&2; exit 1; }}")
    n = len(plan.steps)
    for i, s in enumerate(plan.steps, 1):
        step = w(msg("script.step", i=i, n=n, title=step_title(s, lang)))
        out += ["", f"# {step}"] + _comment(step_explain(s, lang))
        out.append(f"echo {shlex.quote(f'==> {step}')}")
        if s.kind == "reboot":
            out += [f"echo {shlex.quote(w(msg('script.restart-now')))}", "exit 0"]
            continue
        if not s.argv:
            continue
        argv = list(s.argv)
        if argv[0] == "bash" and len(argv) > 1 and argv[1] in embedded:
            words = ["bash", f'"$gpusetup_dir/{embedded[argv[1]]}"'] + [_sh_word(a) for a in argv[2:]]
        else:
            words = [_sh_word(a) for a in argv]
        prefix = "sudo " if s.needs_root else ""
        env = "".join(f"{k}={_sh_word(v)} " for k, v in s.env.items())
        out.append(prefix + env + " ".join(words))
        if s.undo:
            undo = " ".join(_sh_word(a).replace("\n", " ") for a in s.undo)[:300]
            out.append("# " + w(msg("script.undo", command=undo)))
    out += ["", f"echo {shlex.quote(w(msg('script.all-done')))}", ""]
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
        out += ["", f"# Step {i} of {n}: {s.title}"] + _comment(s.explain)
        out.append(f"Write-Host {_ps_quote(f'==> Step {i} of {n}: {s.title}')}")
        if s.kind == "reboot":
            out += ["Write-Host 'Restart Windows now, then run the remaining steps.'", "exit 0"]
            continue
        if not s.argv:
            continue
        if s.needs_root:
            out.append("# needs an Administrator PowerShell")
        out += [f"$env:{k} = {_ps_quote(v)}" for k, v in s.env.items()]
        out.append("& " + " ".join(_ps_word(a) for a in s.argv))
        out.append(f"if ($LASTEXITCODE -ne 0) {{ throw {_ps_quote(f'Step {i} ({s.title}) failed')} + \" (exit code $LASTEXITCODE)\" }}")
    out += ["", "Write-Host 'All steps finished.'", ""]
    return "\n".join(out)
