"""``gpusetup config path|show|init``: the one configuration file the CLI and the wizard share."""

from __future__ import annotations

import argparse
import sys

from gpusetup import term
from gpusetup.bundle.redact import Redactor
from gpusetup.commands import carried
from gpusetup.config import TEMPLATE, ConfigError, config_path, load_config
from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "gpusetup reads mirrors, a proxy and defaults from one file (GPUSETUP_CONFIG, else "
        "$GPUSETUP_HOME/config/config.toml, else the user's config folder). Options on the command line win."
    )
    p.add_argument("action", choices=("path", "show", "init"), help="path: print where it is; show: print it "
                   "with passwords and tokens hidden; init: write a commented example (never overwrites)")
    p.set_defaults(handler=run, config_stops=lambda a: a.action == "show")


def run(args: argparse.Namespace) -> int:
    path = config_path()
    if args.action == "path":
        print(path)
        return 0
    if args.action == "init":
        if path.exists():
            raise ToolError(msg("cli.error.config-exists", path=str(path)))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as fh:
                fh.write(TEMPLATE)
            path.chmod(0o600)  # it may come to hold a proxy password
        except OSError as exc:
            raise ToolError(msg("cli.error.cannot-write-here", path=str(path), reason=exc.strerror or str(exc))) from exc
        print(render(msg("config.out.written", path=str(path)), output_language()))
        return 0
    try:
        cfg = load_config(path)
    except ConfigError as exc:
        raise ToolError(msg("cli.error.config", detail=carried(exc))) from exc
    red = Redactor()
    lang = output_language()
    print(render(msg("config.out.file" if cfg.exists else "config.out.file-missing", path=str(path)), lang))
    rows = [("mirrors.pypi", cfg.pypi_mirror), ("mirrors.pytorch", cfg.pytorch_mirror),
            ("network.proxy", cfg.proxy), ("defaults.frameworks", ", ".join(cfg.frameworks) or None),
            ("defaults.target", cfg.target)]
    for key, value in rows:
        shown = red.redact(value) if value else render(msg("config.out.not-set"), lang)
        sys.stdout.write(f"  {term.paint('bold', f'{key:<20}')} {shown}\n")
    return 0
