"""The one place a resolver answer (:class:`~gpusetup.model.FrameworkPlan`) becomes words.

:func:`describe` turns a plan into a :class:`PlanText` — status, headline, the actions to do first, the
builds to install, notes and every rejected option with its reason — in English or 简体中文, from the
message catalogue (:mod:`gpusetup.messages`). The text report, Markdown, HTML, ``gpusetup plan`` and the
wizard only lay this out; none of them words a plan on its own. ``language=None`` means the language the
command line prints in (:func:`gpusetup.i18n.output_language`; English unless ``--lang`` or the locale say
otherwise); the wizard passes its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusetup.i18n import output_language
from gpusetup.messages import message_of, msg, render, render_notes
from gpusetup.model import Action, Choice, FrameworkPlan

FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}

# status codes, from best to worst
READY, ACTION_FIRST, CPU_ONLY, NOTHING = "ready", "action-first", "cpu-only", "nothing"


@dataclass
class ActionText:
    kind: str
    title: str  # "Install the NVIDIA driver (at least 580.65)"
    why: str
    commands: list[str] = field(default_factory=list)


@dataclass
class ChoiceText:
    role: str  # now / after-actions / cpu-now
    label: str  # "Install", "Then install the GPU build", "Works now without the GPU (CPU only)"
    version: str
    variant: str
    line: str  # "cu128 build, version 2.9, Python 3.12"
    commands: list[str] = field(default_factory=list)
    conda: list[str] = field(default_factory=list)


@dataclass
class PlanText:
    framework: str  # pytorch
    name: str  # PyTorch
    status: str  # ready / action-first / cpu-only / nothing
    status_text: str  # "ready", "needs action first" …
    headline: str  # "PyTorch: a GPU build works on this machine"
    summary: str  # "2.9 (cu128) — ready"
    actions: list[ActionText] = field(default_factory=list)
    choices: list[ChoiceText] = field(default_factory=list)
    gpus_left_out: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (option, reason)


def status(fp: FrameworkPlan) -> str:
    """ready (a GPU build works now) / action-first / cpu-only (nothing makes a GPU build work) / nothing."""
    if fp.ok:
        return READY
    if fp.actions or fp.gpu_choice is not None:
        return ACTION_FIRST
    return CPU_ONLY if fp.choice is not None else NOTHING


def status_text(fp: FrameworkPlan, language: str | None = None) -> str:
    language = output_language(language)
    words = {
        READY: msg("plan.status.ready"),
        ACTION_FIRST: msg("plan.status.action-first"),
        CPU_ONLY: msg("plan.status.cpu-only"),
        NOTHING: msg("plan.status.nothing"),
    }
    return render(words[status(fp)], language)


def action_title(a: Action, language: str | None = None) -> str:
    language = output_language(language)
    titles = {
        "install-driver": msg("plan.action.install-driver"),
        "upgrade-driver": msg("plan.action.upgrade-driver"),
        "check-driver": msg("plan.action.check-driver"),
        "use-wsl2": msg("plan.action.use-wsl2"),
        "change-python": msg("plan.action.change-python"),
        "reboot": msg("plan.action.reboot"),
        "install-rocm": msg("plan.action.install-rocm"),
    }
    title = render(titles[a.kind], language) if a.kind in titles else a.kind
    if a.min_version:
        title += render(msg("plan.action.at-least", version=a.min_version), language)
    return title


def action_why(a: Action, language: str | None = None) -> str:
    language = output_language(language)
    return render(message_of(a), language)


def rejected_reason(r: object, language: str | None = None) -> str:
    language = output_language(language)
    return render(message_of(r), language)


def choice_brief(c: Choice | None, language: str | None = None) -> str:
    """'2.9 (cu128)', or the words for "no build possible"."""
    language = output_language(language)
    return f"{c.version} ({c.variant})" if c else render(msg("plan.status.nothing"), language)


def _choice(role: str, c: Choice, language: str | None) -> ChoiceText:
    labels = {
        "now": msg("plan.choice.now"),
        "after-actions": msg("plan.choice.after-actions"),
        "cpu-now": msg("plan.choice.cpu-now"),
    }
    if c.python:
        line = msg("plan.choice.line-python", variant=c.variant, version=c.version, python=c.python)
    else:
        line = msg("plan.choice.line", variant=c.variant, version=c.version)
    return ChoiceText(role=role, label=render(labels[role], language), version=c.version, variant=c.variant,
                      line=render(line, language), commands=list(c.commands), conda=list(c.conda))


def describe(fp: FrameworkPlan, language: str | None = None) -> PlanText:
    """Everything a surface shows about one framework's plan, worded in ``language`` (None: the CLI's language)."""
    language = output_language(language)
    name = FRAMEWORK_NAMES.get(fp.framework, fp.framework)
    st = status(fp)
    headlines = {
        READY: msg("plan.headline.ready", framework=name),
        ACTION_FIRST: msg("plan.headline.action-first", framework=name),
        CPU_ONLY: msg("plan.headline.cpu-only", framework=name),
        NOTHING: msg("plan.headline.nothing", framework=name),
    }
    summary = choice_brief(fp.choice, language) if fp.choice else render(msg("plan.status.nothing"), language)
    if fp.choice:
        summary += " — " + status_text(fp, language)
    out = PlanText(
        framework=fp.framework, name=name, status=st, status_text=status_text(fp, language),
        headline=render(headlines[st], language), summary=summary, gpus_left_out=list(fp.gpus_left_out),
        notes=render_notes(fp.notes, fp.note_codes, language),
        rejected=[(r.option, rejected_reason(r, language)) for r in fp.rejected],
    )
    out.actions = [ActionText(a.kind, action_title(a, language), action_why(a, language), list(a.commands)) for a in fp.actions]
    if fp.ok and fp.choice:
        out.choices.append(_choice("now", fp.choice, language))
    else:
        if fp.gpu_choice:
            out.choices.append(_choice("after-actions", fp.gpu_choice, language))
        if fp.choice:
            out.choices.append(_choice("cpu-now", fp.choice, language))
    return out


def label(code: str, language: str | None = None, **params: object) -> str:
    """Words for the headings the surfaces share ("First do this:", "Not chosen, and why:" …)."""
    language = output_language(language)
    words = {
        "first": msg("plan.label.first"),
        "notes": msg("plan.label.notes"),
        "rejected": msg("plan.label.rejected"),
        "left-out": msg("plan.label.left-out", gpus=params.get("gpus", "")),
        "why": msg("plan.label.why", why=params.get("why", "")),
        "conda": msg("plan.label.conda"),
    }
    return render(words[code], language)
