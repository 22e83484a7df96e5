"""Diagnosis rules: small pure functions ``Machine -> list[Finding]``, listed in one registry.

A rule module registers its functions with :func:`rule`; :func:`evaluate` runs them all over a machine's
facts (from live detection, a saved report, or text pasted by a user) and returns the findings, most
severe first. A failing rule becomes an ``info`` finding about itself, never a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from gpusetup.messages import msg, render
from gpusetup.model import Finding, Machine, Severity
from gpusetup.rules import _util

log = logging.getLogger("gpusetup.rules")

RuleFn = Callable[[Machine], list[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str  # stable slug of the rule (findings it emits may use this id or a more specific one)
    fn: RuleFn
    catalogue: str | None = None  # F01…F35


_REGISTRY: dict[str, Rule] = {}



def rule(rule_id: str, catalogue: str | None = None) -> Callable[[RuleFn], RuleFn]:
    def deco(fn: RuleFn) -> RuleFn:
        if rule_id in _REGISTRY and _REGISTRY[rule_id].fn is not fn:
            raise ValueError(f"duplicate rule id {rule_id}")
        _REGISTRY[rule_id] = Rule(rule_id, fn, catalogue)
        return fn

    return deco


def all_rules() -> list[Rule]:
    return list(_REGISTRY.values())


def evaluate(machine: Machine, only: set[str] | None = None) -> list[Finding]:
    with _util.text_frozen(machine):
        return _evaluate(machine, only)


def _evaluate(machine: Machine, only: set[str] | None) -> list[Finding]:
    findings: list[Finding] = []
    for r in all_rules():
        if only is not None and r.id not in only:
            continue
        try:
            out = r.fn(machine) or []
        except Exception as exc:  # noqa: BLE001 - a rule bug must not hide the report
            log.exception("rule %s failed", r.id)
            out = [
                Finding(
                    id="rule-crashed",
                    severity=Severity.INFO,
                    title=f"gpusetup's check '{r.id}' could not run",
                    detail=f"{type(exc).__name__}: {exc}. This is a bug in gpusetup, not a problem with your machine.",
                    fix=render(msg("fix.rule-crashed")),
                    fix_code=msg("fix.rule-crashed"),
                )
            ]
        for f in out:
            if f.catalogue is None and r.catalogue:
                f.catalogue = r.catalogue
        findings.extend(out)
    return sort_findings(findings)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (-f.severity.rank, f.catalogue or "~", f.id))


# The rule modules register their rules with rule() above when imported, so they come last.
from gpusetup.rules import basic as _basic  # noqa: E402, F401
from gpusetup.rules import catalogue as _catalogue  # noqa: E402, F401
