"""Shell completion scripts (bash, zsh, fish, PowerShell) generated from the argparse tree.

``gpusetup completion SHELL`` prints one; the words come from the same parser the CLI uses, so a new
option or sub-command completes without editing anything here. Options with fixed choices complete those
choices (also as ``--opt=value``); options and positionals whose value is a file or folder (metavar FILE,
DIR, PATH, …: ``analyze FILE...``) complete paths — with spaces, and folders without a trailing space (bash
``-o filenames -o default``) — and commands that take no file (``diagnose``) are offered none.
tests/cli/test_completion_shells.py loads each script in the real bash, zsh and fish and completes.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish", "powershell")
_PATHY = re.compile(r"(FILE|DIR|PATH|\.json|\.prom|REPORT|OUT)", re.I)


@dataclass
class Opt:
    flags: list[str]
    help: str
    takes_value: bool
    choices: list[str] = field(default_factory=list)
    path: bool = False


@dataclass
class Cmd:
    name: str
    help: str
    opts: list[Opt]
    positional_choices: list[str] = field(default_factory=list)
    positional_path: bool = False  # a positional file argument (analyze FILE...)


def _opts(parser: argparse.ArgumentParser) -> tuple[list[Opt], list[str], bool]:
    opts: list[Opt] = []
    pos: list[str] = []
    pos_path = False
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            continue
        if not a.option_strings:
            if a.choices:
                pos += [str(c) for c in a.choices]
            elif _PATHY.search(str(a.metavar or a.dest or "")):
                pos_path = True
            continue
        if a.help == argparse.SUPPRESS:
            continue
        takes = a.nargs != 0
        metavar = str(a.metavar or a.dest or "")
        opts.append(Opt(list(a.option_strings), _one_line(a.help or ""), takes,
                        [str(c) for c in a.choices] if a.choices else [],
                        bool(takes and not a.choices and _PATHY.search(metavar))))
    return opts, pos, pos_path


def _one_line(text: str) -> str:
    text = re.sub(r"\s+", " ", text.replace("%(default)s", "")).strip()
    return text if len(text) <= 70 else text[:67].rstrip() + "..."


def tree(parser: argparse.ArgumentParser) -> tuple[list[Opt], list[Cmd]]:
    top, _, _ = _opts(parser)
    cmds: list[Cmd] = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help or "" for c in a._choices_actions}
            for name, sub in a.choices.items():
                opts, pos, pos_path = _opts(sub)
                cmds.append(Cmd(name, _one_line(helps.get(name, "")), opts, pos, pos_path))
    return top, cmds


def script(parser: argparse.ArgumentParser, shell: str, prog: str = "gpusetup") -> str:
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r}; choose one of {', '.join(SHELLS)}")
    top, cmds = tree(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish, "powershell": _powershell}[shell](prog, top, cmds)


def _fn(prog: str) -> str:
    return "_" + re.sub(r"\W", "_", prog)


# ------------------------------------------------------------------------------------------------ bash


def _bash(prog: str, top: list[Opt], cmds: list[Cmd]) -> str:
    fn = _fn(prog)
    lines = [f"# {prog} completion for bash. Load it: source <({prog} completion bash)",
             f"# or save it as ~/.local/share/bash-completion/completions/{prog}",
             f"{fn}_files() {{  # files and folders, one per line: a name with spaces stays one word",
             "    local IFS=$'\\n'",
             '    COMPREPLY=($(compgen -f -- "$1"))',
             "}",
             f"{fn}_words() {{  # the words have no spaces",
             '    COMPREPLY=($(compgen -W "$1" -- "$2"))',
             "    compopt +o default +o filenames 2>/dev/null",
             "}",
             f"{fn}() {{",
             "    local cur prev cmd i",
             '    cur="${COMP_WORDS[COMP_CWORD]}"',
             '    prev="${COMP_WORDS[COMP_CWORD-1]}"',
             "    # --opt=value: bash splits the word at '=' (COMP_WORDBREAKS), or not, when that was changed",
             '    if [[ "$cur" == "=" && "$prev" == -* ]]; then cur=""',
             '    elif [[ "$prev" == "=" ]] && ((COMP_CWORD >= 2)); then prev="${COMP_WORDS[COMP_CWORD-2]}"',
             '    elif [[ "$cur" == --*=* ]]; then prev="${cur%%=*}"; cur="${cur#*=}"',
             "    fi",
             '    cmd=""',
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             '        case "${COMP_WORDS[i]}" in',
             "            -*) ;;",
             f"            {'|'.join(c.name for c in cmds)}) cmd=\"${{COMP_WORDS[i]}}\"; break ;;",
             "        esac",
             "    done",
             '    case "$cmd" in']
    for c in [Cmd("", "", top), *cmds]:
        lines.append(f'        "{c.name}")')
        lines.append('            case "$prev" in')
        for o in c.opts:
            if o.choices:
                lines.append(f"                {'|'.join(o.flags)}) {fn}_words \"{' '.join(o.choices)}\" \"$cur\"; return 0 ;;")
            elif o.path:
                lines.append(f"                {'|'.join(o.flags)}) {fn}_files \"$cur\"; return 0 ;;")
            elif o.takes_value:
                lines.append(f"                {'|'.join(o.flags)}) COMPREPLY=(); compopt +o default 2>/dev/null; return 0 ;;")
        lines.append("            esac")
        flags = [f for o in c.opts for f in o.flags]
        words = c.positional_choices + ([x.name for x in cmds] if c.name == "" else [])
        lines.append(f'            if [[ "$cur" == -* ]]; then {fn}_words "{" ".join(flags)}" "$cur"')
        if c.positional_path:
            lines.append(f'            else {fn}_files "$cur"; fi')
        elif words:
            lines.append(f'            else {fn}_words "{" ".join(words)}" "$cur"; fi')
        else:
            lines.append('            else COMPREPLY=(); compopt +o default 2>/dev/null; fi')
        lines.append("            ;;")
    lines += ["    esac", "    return 0", "}",
              "# -o filenames: folders complete with a slash and no space, names with spaces are quoted;",
              "# -o default: bash's own file completion where the script offers nothing.",
              f"complete -o filenames -o default -F {fn} {prog}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- zsh


def _zq(text: str) -> str:
    """Text inside a single-quoted zsh word, with _arguments' special characters escaped."""
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _zsh_spec(o: Opt) -> str:
    action = ""
    if o.choices:
        action = f":value:({' '.join(o.choices)})"
    elif o.path:
        action = ":file:_files"
    elif o.takes_value:
        action = ":value: "
    excl = " ".join(o.flags)
    # a long option's value may follow '=' or come as the next word (_arguments' "--opt=" form)
    flags = [f"{f}=" if o.takes_value and f.startswith("--") else f for f in o.flags]
    if len(flags) == 1:
        return f"'{flags[0]}[{_zq(o.help)}]{action}'"
    return f"'({excl})'{{{','.join(flags)}}}'[{_zq(o.help)}]{action}'"


def _zsh(prog: str, top: list[Opt], cmds: list[Cmd]) -> str:
    fn = _fn(prog)
    lines = [f"#compdef {prog}",
             f"# {prog} completion for zsh. Load it: source <({prog} completion zsh)  (after compinit),",
             f"# or save it as _{prog} in a folder on $fpath.",
             f"{fn}() {{",
             "    local -a commands",
             "    commands=("]
    lines += [f"        '{c.name}:{_zq(c.help)}'" for c in cmds]
    lines += ["    )",
              "    local curcontext=\"$curcontext\" state line",
              "    typeset -A opt_args",
              "    _arguments -C \\"]
    lines += [f"        {_zsh_spec(o)} \\" for o in top]
    lines += ["        '1: :->command' \\",
              "        '*:: :->args'",
              "    case $state in",
              "        command) _describe -t commands 'gpusetup command' commands ;;",
              "        args)",
              "            case $line[1] in"]
    for c in cmds:
        specs = [_zsh_spec(o) for o in c.opts]
        if c.positional_choices:
            specs.append(f"'*:value:({' '.join(c.positional_choices)})'")
        elif c.positional_path:
            specs.append("'*:file:_files'")
        if not specs:
            lines.append(f"                {c.name}) _arguments ;;")
            continue
        lines.append(f"                {c.name}) _arguments \\")
        lines += [f"                    {s} \\" for s in specs[:-1]]
        lines.append(f"                    {specs[-1]} ;;")
    lines += ["            esac ;;",
              "    esac",
              "}",
              f'if [[ "$funcstack[1]" == "{fn}" ]]; then',
              f'    {fn} "$@"',
              "else",
              f"    compdef {fn} {prog}",
              "fi",
              ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ fish


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_opt(prog: str, cond: str, o: Opt) -> str:
    parts = [f"complete -c {prog} -n {_fq(cond)}"]
    for f in o.flags:
        parts.append(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}")
    if o.choices:
        parts.append(f"-x -a {_fq(' '.join(o.choices))}")
    elif o.path:
        parts.append("-r -F")
    elif o.takes_value:
        parts.append("-x")
    if o.help:
        parts.append(f"-d {_fq(o.help)}")
    return " ".join(parts)


def _fish(prog: str, top: list[Opt], cmds: list[Cmd]) -> str:
    lines = [f"# {prog} completion for fish. Load it: {prog} completion fish | source",
             f"# or save it as ~/.config/fish/completions/{prog}.fish",
             f"complete -c {prog} -f"]
    names = " ".join(c.name for c in cmds)
    for c in cmds:
        lines.append(f"complete -c {prog} -n '__fish_use_subcommand' -a {c.name} -d {_fq(c.help)}")
    lines += [_fish_opt(prog, "__fish_use_subcommand", o) for o in top]
    for c in cmds:
        cond = f"__fish_seen_subcommand_from {c.name}"
        lines += [_fish_opt(prog, cond, o) for o in c.opts]
        if c.positional_choices:
            lines.append(f"complete -c {prog} -n {_fq(cond)} -a {_fq(' '.join(c.positional_choices))}")
        elif c.positional_path:
            lines.append(f"complete -c {prog} -n {_fq(cond)} -F")  # files and folders (analyze FILE...)
    lines.append(f"# sub-commands: {names}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ PowerShell


def _pq(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _powershell(prog: str, top: list[Opt], cmds: list[Cmd]) -> str:
    lines = [f"# {prog} completion for PowerShell. Load it: {prog} completion powershell | Out-String | "
             "Invoke-Expression",
             "# or add that line to your $PROFILE.",
             "$gpusetupCommands = @{"]
    for c in [Cmd("", "", top), *cmds]:
        words = [f for o in c.opts for f in o.flags] + c.positional_choices
        if c.name == "":
            words += [x.name for x in cmds]
        lines.append(f"    {_pq(c.name)} = @({', '.join(_pq(w) for w in words)})")
    lines.append("}")
    lines.append("$gpusetupChoices = @{")
    for c in [Cmd("", "", top), *cmds]:
        for o in c.opts:
            if o.choices:
                for f in o.flags:
                    lines.append(f"    {_pq(c.name + ' ' + f)} = @({', '.join(_pq(x) for x in o.choices)})")
    lines += ["}",
              f"Register-ArgumentCompleter -Native -CommandName {_pq(prog)} -ScriptBlock {{",
              "    param($wordToComplete, $commandAst, $cursorPosition)",
              "    $words = @($commandAst.CommandElements | ForEach-Object { $_.ToString() })",
              "    $cmd = ''",
              "    foreach ($w in $words[1..($words.Count - 1)]) {",
              "        if ($gpusetupCommands.ContainsKey($w) -and $w -ne '') { $cmd = $w; break }",
              "    }",
              "    $prev = if ($wordToComplete -eq '') { $words[-1] } else { $words[-2] }",
              "    $key = \"$cmd $prev\"",
              "    $candidates = if ($gpusetupChoices.ContainsKey($key)) { $gpusetupChoices[$key] } "
              "else { $gpusetupCommands[$cmd] }",
              "    $candidates | Where-Object { $_ -like \"$wordToComplete*\" } | ForEach-Object {",
              "        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)",
              "    }",
              "}",
              ""]
    return "\n".join(lines)
