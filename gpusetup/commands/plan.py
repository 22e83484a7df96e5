"""``gpusetup plan``: which framework builds work on this machine (or on the machine in a file), and why.

Exit codes: 0 a GPU build works now for every framework asked for, 1 some framework needs an action first
(or has no GPU build), 3 bad input (unreadable --for file, unknown GPU index).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpusetup import __version__, credentials, mirrors, term
from gpusetup.commands import carried, gpu_number, index_url, load_for_file, plan_emit
from gpusetup.compat import download_size, live
from gpusetup.compat.db import DataError, get_db
from gpusetup.compat.resolver import resolve
from gpusetup.errors import ToolError
from gpusetup.i18n import output_language
from gpusetup.messages import msg, render
from gpusetup.model import FrameworkPlan, from_dict, to_dict
from gpusetup.probe import detect
from gpusetup.report.plans import ChoiceText, PlanText, describe, label

FRAMEWORK_CHOICES = ("pytorch", "tensorflow", "jax")


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Say which framework build works on this machine (or the one described in --for FILE), "
        "the exact install commands, what to do first, and why every other option does not work."
    )
    p.add_argument(
        "--framework",
        "-f",
        action="append",
        choices=FRAMEWORK_CHOICES,
        help="framework to plan for (repeat for several; default pytorch)",
    )
    p.add_argument("--for", dest="for_file", metavar="FILE", help="plan for the machine in this diagnose report or profile")
    p.add_argument("--gpu", type=gpu_number, metavar="N", help="plan for GPU N only (see gpusetup diagnose)")
    p.add_argument("--python", metavar="X.Y", help="plan for this Python version instead of the detected one")
    p.add_argument("--json", action="store_true", help="machine-readable output (resources/schema/plan.schema.json)")
    p.add_argument("--offline", action="store_true",
                   help="do not check the package index; plan from the built-in data only (also: GPUSETUP_LIVE=off)")
    p.add_argument("--live-index", metavar="URL", type=index_url,
                   help="check against this package index (a mirror) instead of PyPI")
    p.add_argument("--index-url", metavar="URL", type=index_url,
                   help="a PyPI mirror: the plan's commands, its check of the index and --emit use it instead of PyPI "
                        "(default: mirrors.pypi in the configuration file)")
    p.add_argument("--pytorch-mirror", metavar="URL", type=index_url,
                   help="a mirror of https://download.pytorch.org/whl (e.g. https://mirror.example/pytorch/whl): the "
                        "plan's commands, its check of the index and --emit use it (default: mirrors.pytorch in the "
                        "configuration file)")
    plan_emit.add_arguments(p)
    p.set_defaults(handler=run, config_stops=True)


def run(args: argparse.Namespace) -> int:
    plan_emit.check_arguments(args)
    cfg = plan_emit.config()
    frameworks = list(dict.fromkeys(args.framework or cfg.frameworks or ["pytorch"]))
    # the mirrors: the command line's, else the configuration file's; a password in one stays in this process
    pypi_mirror = credentials.remember(args.index_url or cfg.pypi_mirror)
    pytorch_mirror = credentials.remember(args.pytorch_mirror or cfg.pytorch_mirror)
    if args.python is not None and not _python_ok(args.python):
        raise ToolError(msg("cli.error.python-version", value=repr(args.python)))
    if args.for_file:
        machine = load_for_file(args.for_file)
        source = args.for_file
    else:
        machine = detect()
        source = "live"
    try:
        plans = resolve(machine, frameworks, gpu_index=args.gpu, python_version=args.python)
        db = get_db()
    except ValueError as exc:
        raise ToolError(msg("cli.error.detail", detail=carried(exc))) from exc
    except DataError as exc:
        raise ToolError(msg("cli.error.data-unreadable", reason=str(exc))) from exc
    live = _live(plans, machine, args, pypi_mirror, pytorch_mirror)
    mirrors.apply(plans, pypi_mirror, pytorch_mirror)  # the commands shown are the ones that work here
    doc = plan_document(plans, machine, source=source, gpu_index=args.gpu, data=db.info(), python=args.python)
    doc["live"] = live
    doc["download"] = _download(plans, machine, args, asked=live["status"] != "off", index_url=pypi_mirror)
    if args.emit:
        plan_emit.run_emit(args, plans, machine, doc, index_url=pypi_mirror, pytorch_mirror=pytorch_mirror)
    elif args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_text(doc))
    return 0 if all(p.ok for p in plans) else 1


def _live(plans: list[Any], machine: Any, args: argparse.Namespace, pypi_mirror: str | None,
          pytorch_mirror: str | None) -> dict[str, Any]:
    """The plan-time index check (gpusetup.compat.live), through the mirrors; its words go into each plan's notes."""
    result = live_check(plans, machine, offline=getattr(args, "offline", False), index=getattr(args, "live_index", None),
                        pypi_mirror=pypi_mirror, pytorch_mirror=pytorch_mirror)
    if result is None:
        return {"status": "off", "index": None, "notes": [], "newer": {}, "framework_notes": {}}
    live.apply(plans, result)
    return dict(result.to_dict())


def _download(plans: list[Any], machine: Any, args: argparse.Namespace, *, asked: bool,
              index_url: str | None) -> dict[str, Any]:
    """Per framework, what its install downloads: from the index when the live check ran, else the labelled
    estimate (gpusetup.install.plan.framework_download_sizes)."""
    if asked:
        # lazy: the installer (and with it http.client, ssl, email, importlib.metadata) is needed only to ask
        # the index; importing it made every `plan --offline` ~0.1 s slower (benchmarks/resolver_bench.py)
        from gpusetup.install.plan import framework_download_sizes

        sizes = framework_download_sizes(plans, machine, args.python, ask_index=True,
                                         index=getattr(args, "live_index", None), index_url=index_url)
    else:
        sizes = download_size.estimates(plans)
    return {fw: {**s.to_dict(), "message": to_dict(s.message()), "words": render(s.message())}
            for fw, s in sizes.items()}


def live_check(plans: list[Any], machine: Any, *, offline: bool, index: str | None, pypi_mirror: str | None = None,
               pytorch_mirror: str | None = None) -> Any:
    """The live index check of ``plans`` (a gpusetup.compat.live.LiveCheck) through the mirrors, or None when it
    is off (``--offline`` or GPUSETUP_LIVE=off, which the test suite sets). ``gpusetup plan`` and ``install``
    share it."""
    if offline or not live.enabled():
        return None
    return live.check(plans, machine, index=index, pypi_mirror=pypi_mirror, pytorch_mirror=pytorch_mirror)


def _python_ok(v: str) -> bool:
    """"3.12", "3.12.1", or a free-threaded build "3.13t"."""
    parts = v.removesuffix("t").split(".")
    return len(parts) in (2, 3) and all(x.isdigit() for x in parts) and parts[0] == "3"


def plan_document(
    plans: list[Any], machine: Any, *, source: str, gpu_index: int | None, data: dict[str, Any], python: str | None = None
) -> dict[str, Any]:
    """The ``--json`` document (schema: resources/schema/plan.schema.json)."""
    gpus = [
        {
            "index": i,
            "vendor": g.vendor,
            "name": g.name or g.pci.device_name,
            "compute_capability": to_dict(g.compute_capability),
            "gfx": g.gfx_target,
            "pci_id": g.pci.pci_id,
        }
        for i, g in enumerate(machine.gpus)
    ]
    return {
        "tool_version": __version__,
        "data": {"version": data["version"], "checked": data["checked"], "origin": data["origin"]},
        "machine": {
            "source": source,
            "os": machine.system.os,
            "wsl": bool(machine.system.wsl),
            "arch": machine.system.arch,
            "python": python or to_dict(machine.system.python),
            "driver": to_dict(machine.driver.version),
            "gpus": gpus,
        },
        "gpu_index": gpu_index,
        "plans": [to_dict(p) for p in plans],
    }


def render_text(doc: dict[str, Any]) -> str:
    """Beginner-readable text: what works, what to do first, what was ruled out and why."""
    lang = output_language()
    m = doc["machine"]
    out: list[str] = []
    where = "WSL2" if m["wsl"] else (m["os"] or render(msg("plan.cli.unknown-os"), lang))
    if m["arch"]:
        where += f" {m['arch']}"
    gpu_line = ", ".join(f"{g['index']}: {g['name'] or g['vendor']}" for g in m["gpus"]) or render(msg("plan.cli.no-gpu"), lang)
    has_nvidia = m["driver"] or any(g["vendor"] == "nvidia" for g in m["gpus"])
    python = m["python"] or render(msg("plan.cli.unknown"), lang)
    out.append(render(msg("plan.cli.machine-driver", where=where, python=python,
                          driver=m["driver"] or msg("plan.cli.no-driver")) if has_nvidia
                      else msg("plan.cli.machine", where=where, python=python), lang))
    out.append(render(msg("plan.cli.gpus", gpus=gpu_line), lang))
    out.append(render(msg("plan.cli.data", version=doc["data"]["version"], checked=doc["data"]["checked"]), lang))
    live = doc.get("live") or {}
    if live.get("status") == "checked":
        out.append(render(msg("plan.cli.index-checked", index=live["index"]), lang))
    elif live.get("status") in ("offline", "partial"):
        out.append(render(msg("plan.cli.index-offline") if live["status"] == "offline" else msg("plan.cli.index-partial"), lang))
    names = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}
    for newer_fw, newer_v in (live.get("newer") or {}).items():
        out.append(render(msg("plan.cli.newer", framework=names.get(newer_fw, newer_fw), version=newer_v), lang))
    sizes = doc.get("download") or {}
    for fp in _plans_of(doc):
        out.append("")
        out += plan_lines(describe(fp))
        size = sizes.get(fp.framework)
        if size and size.get("message"):
            out.append("  " + render(size["message"], lang))
    return "\n".join(out) + "\n"


def _plans_of(doc: dict[str, Any]) -> list[FrameworkPlan]:
    return [from_dict(FrameworkPlan, p, f"$.plans[{i}]") for i, p in enumerate(doc["plans"])]


def plan_lines(t: PlanText, language: str | None = None) -> list[str]:
    """One framework's plan as indented text lines (the words come from gpusetup.report.plans)."""
    style = {"ready": "ok", "action-first": "warning", "cpu-only": "warning"}.get(t.status, "error")
    out = [term.paint(style, f"== {t.headline} ==")]  # kept or dropped by gpusetup.term where it is printed
    if t.actions:
        out.append("  " + label("first", language))
        for i, a in enumerate(t.actions, 1):
            out.append(f"    {i}. {a.title}")
            out.append("       " + label("why", language, why=a.why))
            out += [f"       $ {c}" for c in a.commands]
    for c in t.choices:
        out += _choice_lines(c, language)
    if t.gpus_left_out:
        out.append("  " + label("left-out", language, gpus=", ".join(str(i) for i in t.gpus_left_out)))
    if t.notes:
        out.append("  " + label("notes", language))
        out += [f"    - {n}" for n in t.notes]
    if t.rejected:
        out.append("  " + label("rejected", language))
        out += ["    - " + render(msg("plan.cli.option", option=option, reason=reason), output_language(language))
                for option, reason in t.rejected]
    return out


def _choice_lines(c: ChoiceText, language: str | None = None) -> list[str]:
    lines = ["  " + render(msg("plan.cli.choice", label=c.label, line=c.line), output_language(language))]
    lines += [f"    $ {cmd}" for cmd in c.commands]
    if c.conda:
        lines.append("    " + label("conda", language))
        lines += [f"    $ {cmd}" for cmd in c.conda]
    return lines
