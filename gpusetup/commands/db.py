"""``gpusetup db info`` / ``gpusetup db update``: which compatibility data is in use, and refreshing it.

Exit codes: 0 fine, 2 the update failed (the data in use is unchanged), 3 bad arguments.
"""

from __future__ import annotations

import argparse
import json

from gpusetup.commands import carried, positive_number
from gpusetup.compat.db import DataError, get_db
from gpusetup.compat.update import UpdateError, check_url, update
from gpusetup.errors import ToolError
from gpusetup.messages import msg


def register(p: argparse.ArgumentParser) -> None:
    p.description = "The resolver's knowledge base: show its version and sources, or download a newer signed bundle."
    sub = p.add_subparsers(dest="db_command", metavar="ACTION")
    info = sub.add_parser("info", help="version, date and sources of the data in use")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(handler=run_info)
    upd = sub.add_parser("update", help="download a newer data bundle (signed, checksummed)")
    upd.add_argument("--url", help="bundle location (https://…/); default: $GPUSETUP_DB_URL")
    upd.add_argument("--timeout", type=positive_number, default=20.0, help="seconds per download (default 20)")
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
    origin = "built into gpusetup" if info["origin"] == "embedded" else f"updated copy in {info['origin']}"
    print(f"Compatibility data version {info['version']}, last checked {info['checked']} ({origin}).")
    age = info.get("age_days")
    if age is not None:
        when = "today" if age == 0 else ("1 day ago" if age == 1 else f"{age} days ago")
        print(f"Age: checked {when}; newer framework releases may exist (gpusetup plan checks the index live).")
    if info.get("rows"):
        share = 100 * info["verified_rows"] / info["rows"]
        print(f"Verified: {info['verified_rows']} of {info['rows']} rows ({share:.0f}%) come from the artifacts or a "
              "primary source; the rest are secondary or inferred, and plans that rest on them say so.")
    if info["fallback_reason"]:
        print(f"Note: {info['fallback_reason']}")
    print()
    width = max(len(t["table"]) for t in info["tables"])
    print(f"{'table':<{width}}  checked     verified  rows")
    for t in info["tables"]:
        ver = "yes" if t["verified"] else "no"
        extra = f" ({t['unverified_rows']} unverified)" if t["unverified_rows"] else ""
        print(f"{t['table']:<{width}}  {t['checked']}  {ver:<8}  {t['rows']}{extra}")
    print("\n'verified: no' marks facts from secondary sources or inferred; see each table's note and sources (--json).")
    return 0


def run_update(args: argparse.Namespace) -> int:
    if args.url:
        try:
            check_url(args.url)
        except UpdateError as exc:
            raise ToolError(msg("cli.error.detail", detail=carried(exc))) from exc
    result = update(args.url, timeout=args.timeout)
    print(result.message)
    return 0 if result.ok else 2
