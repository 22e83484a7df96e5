"""``gpusetup db info`` / ``gpusetup db update``: which compatibility data is in use, and refreshing it.

Exit codes: 0 fine, 2 the update failed (the data in use is unchanged), 3 bad arguments.
"""

from __future__ import annotations

import argparse
import json

from gpusetup import term
from gpusetup.commands import carried, positive_number
from gpusetup.compat.db import DataError, get_db
from gpusetup.compat.update import UpdateError, check_url, update
from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import Message


def register(p: argparse.ArgumentParser) -> None:
    p.description = "The resolver's knowledge base: show its version and sources, or download a newer signed bundle."
    sub = p.add_subparsers(dest="db_command", metavar="ACTION")
    info = sub.add_parser("info", help="version, date and sources of the data in use")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(handler=run_info)
    upd = sub.add_parser("update", help="download a newer data bundle (signed, checksummed)")
    upd.add_argument("--url", help="bundle location (https://…/); default: $GPUSETUP_DB_URL")
    upd.add_argument("--timeout", type=positive_number, default=20.0,
                     help="seconds one download may take, start to end (default 20); the whole update stops after "
                          "three times that")
    upd.set_defaults(handler=run_update)
    p.set_defaults(handler=run_info, json=False)


def run_info(args: argparse.Namespace) -> int:
    try:
        info = get_db().info()
    except DataError as exc:
        raise ToolError(msg("cli.error.data-unreadable", reason=str(exc))) from exc
    if getattr(args, "json", False):
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    lang = output_language()

    def say(message: Message) -> None:
        print(render(message, lang))

    origin = msg("db.out.built-in") if info["origin"] == "embedded" else msg("db.out.updated-copy", path=info["origin"])
    say(msg("db.out.version", version=info["version"], checked=info["checked"], origin=origin))
    age = info.get("age_days")
    if age is not None:
        when = msg("db.out.today") if age == 0 else (msg("db.out.one-day") if age == 1 else msg("db.out.days", days=age))
        say(msg("db.out.age", when=when))
    if info.get("rows"):
        share = 100 * info["verified_rows"] / info["rows"]
        say(msg("db.out.verified", verified=info["verified_rows"], rows=info["rows"], share=f"{share:.0f}"))
    if info["fallback_reason"]:
        say(msg("db.out.note", note=info["fallback_reason"]))
    print()
    head = [render(m, lang) for m in (msg("db.out.col.table"), msg("db.out.col.checked"), msg("db.out.col.verified"),
                                      msg("db.out.col.rows"))]
    width = max(_cells(h) for h in [head[0], *(t["table"] for t in info["tables"])])
    print(term.paint("bold", f"{_pad(head[0], width)}  {_pad(head[1], 10)}  {_pad(head[2], 8)}  {head[3]}"))
    for t in info["tables"]:
        ver = render(msg("db.out.yes") if t["verified"] else msg("db.out.no"), lang)
        ver = term.paint("ok" if t["verified"] else "warning", ver) + " " * max(0, 8 - _cells(ver))
        extra = render(msg("db.out.unverified", count=t["unverified_rows"]), lang) if t["unverified_rows"] else ""
        print(f"{_pad(t['table'], width)}  {t['checked']}  {ver}  {t['rows']}{extra}")
    print()
    say(msg("db.out.legend"))
    return 0


def _cells(text: str) -> int:
    """Columns ``text`` takes in a terminal: a CJK character takes two."""
    return sum(2 if "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _cells(text))


def run_update(args: argparse.Namespace) -> int:
    if args.url:
        try:
            check_url(args.url)
        except UpdateError as exc:
            raise ToolError(msg("cli.error.detail", detail=carried(exc))) from exc
    result = update(args.url, timeout=args.timeout)
    print(render(result.said, output_language()) if result.said is not None else result.message)
    return 0 if result.ok else 2
