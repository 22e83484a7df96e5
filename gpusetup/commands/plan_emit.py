"""``gpusetup plan --emit uv|pixi|conda|requirements``: write the plan down for the user's project tool."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gpusetup import credentials
from gpusetup.commands import carried
from gpusetup.config import Config, ConfigError, load_config
from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import EMIT_KINDS  # from model, not generate.project (see run_emit)
from gpusetup.paths import is_regular_target, write_output


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("project files (--emit)")
    g.add_argument("--emit", choices=EMIT_KINDS,
                   help="write the chosen builds as a uv pyproject.toml, pixi.toml, conda environment.yml or "
                        "requirements.txt instead of the explanation")
    g.add_argument("-o", "--output", metavar="FILE", help="with --emit: write to FILE (default: standard output)")
    g.add_argument("--force", action="store_true", help="with --emit -o: overwrite FILE if it exists")
    g.add_argument("--name", default="gpu-project", help="with --emit: the project/environment name")


def config() -> Config:
    """The shared configuration file (a broken file is an error that names it: the one line about it, see
    cli._apply_config)."""
    try:
        return load_config()
    except ConfigError as exc:
        raise ToolError(msg("cli.error.config", detail=carried(exc))) from exc


def check_arguments(args: argparse.Namespace) -> None:
    if not getattr(args, "emit", None) and (args.output or args.force):
        raise ToolError(msg("cli.error.output-needs-emit"))
    if getattr(args, "emit", None) and args.json:
        raise ToolError(msg("cli.error.json-or-emit"))


def run_emit(args: argparse.Namespace, plans: list[Any], machine: Any, doc: dict[str, Any], *,
             index_url: str | None, pytorch_mirror: str | None) -> None:
    """Write the project file (or print it) with these mirrors (the command line's, else the configuration
    file's); raise ToolError when it cannot be written."""
    # lazy: generate.project brings all of generate, the installer and the self-test's spec table: 146 ms of
    # every `gpusetup plan` (python -X importtime, 2 cores, load average 7.5), needed only with --emit.
    from gpusetup.generate.facts import driver_cuda
    from gpusetup.generate.project import EmitError, Target, emit_project

    m = doc["machine"]
    target = Target(os=m["os"], arch=m["arch"], python=m["python"], wsl=m["wsl"])
    if machine is not None and getattr(machine, "driver", None) is not None and machine.driver.version:
        # what the driver provides (reported, else derived from the toolkit → driver table): pixi's __cuda
        cuda, source = driver_cuda(machine)
        target.driver = str(machine.driver.version)
        target.driver_cuda = f"{cuda[0]}.{cuda[1]}" if cuda else None
        target.driver_cuda_source = source
    for p in plans:
        ch = p.choice if p.ok else (p.gpu_choice or p.choice)
        if ch is not None:
            target.env.update(ch.env)
    header = [f"Written by gpusetup {doc['tool_version']} from `gpusetup plan --emit {args.emit}` "
              f"(compatibility data {doc['data']['version']}, checked {doc['data']['checked']})."]
    try:
        emitted = emit_project(plans, target, args.emit, name=args.name,
                               index_url=index_url, pytorch_mirror=pytorch_mirror, header=header)
    except EmitError as exc:
        raise ToolError(exc.message) from exc
    text = credentials.scrub(emitted.text)  # a project file is committed and shared: never with a password
    if text != emitted.text:
        emitted.text = text
        emitted.notes.append("The mirror's password is not written into the file (it shows ****): give it to "
                             "the tool through its configuration or environment (pip: PIP_INDEX_URL or `pip "
                             "config set global.index-url URL`; uv: UV_INDEX_URL), or a keyring/.netrc.")
    if not args.output:
        sys.stdout.write(emitted.text)
        return
    path = Path(args.output).expanduser()
    if path.exists() and is_regular_target(path) and not args.force:  # a device or /dev/stdout is written through
        raise ToolError(msg("cli.error.emit-exists", path=str(path)))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(path, emitted.text)
    except OSError as exc:
        raise ToolError(msg("cli.error.cannot-write-here", path=str(path), reason=exc.strerror or str(exc))) from exc
    print(render(msg("emit.out.wrote", path=str(path), kind=emitted.kind), output_language()))
    for note in emitted.notes:
        print(f"  - {note}")
