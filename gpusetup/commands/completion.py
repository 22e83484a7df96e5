"""``gpusetup completion SHELL``: print a shell completion script generated from the argparse tree."""

from __future__ import annotations

import argparse
import sys

from gpusetup.completion import SHELLS, script


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Print the completion script for SHELL. Load it for this session with "
        "`source <(gpusetup completion bash)` (zsh: the same with zsh, after compinit), "
        "`gpusetup completion fish | source`, or in PowerShell "
        "`gpusetup completion powershell | Out-String | Invoke-Expression`."
    )
    p.add_argument("shell", choices=SHELLS, help="the shell")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.root_parser, args.shell))
    return 0
