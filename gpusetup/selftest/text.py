"""Plain-text rendering of a :class:`~gpusetup.model.SelfTestResult` (CLI; the wizard can reuse it).

Words come from the message catalogue in ``language`` (default: the language the CLI prints in,
:func:`gpusetup.i18n.output_language`); the measurements' reasons and the notes are rendered from their
codes, so ``gpusetup --lang zh_CN selftest`` is Chinese throughout. Measurement names, units and numbers
read the same in every language.
"""

from __future__ import annotations

import unicodedata

from gpusetup.i18n import output_language
from gpusetup.messages import msg, render, render_notes, render_parts
from gpusetup.model import Measurement, Message, SelfTestResult
from gpusetup.selftest.proof import Answer, answers, offer_command, summary

LABELS: dict[str, Message] = {
    "h2d_pinned": msg("selftest.label.h2d-pinned"),
    "d2h_pinned": msg("selftest.label.d2h-pinned"),
    "h2d_pageable": msg("selftest.label.h2d-pageable"),
    "d2h_pageable": msg("selftest.label.d2h-pageable"),
    "d2d": msg("selftest.label.d2d"),
    "copy_integrity": msg("selftest.label.copy-integrity"),
    "matmul_fp32_correct": msg("selftest.label.matmul-correct"),
    "matmul_fp32_ptx": msg("selftest.label.matmul-ptx"),
    "matmul_repeat_bitexact": msg("selftest.label.repeat-bitexact"),
    "cublas_fp32": msg("selftest.label.cublas-fp32"),
    "cublas_tf32": msg("selftest.label.cublas-tf32"),
    "cublas_fp16": msg("selftest.label.cublas-fp16"),
    "cublas_bf16": msg("selftest.label.cublas-bf16"),
    "cpu_matmul_fp32": msg("selftest.label.cpu-matmul"),
    "cpu_copy": msg("selftest.label.cpu-copy"),
    "cpu_triad_2pass": msg("selftest.label.cpu-triad"),
    "gpu_cpu_speedup": msg("selftest.label.speedup"),
    "framework_check": msg("selftest.label.framework-check"),
    "gpu_select": msg("selftest.label.gpu-select"),
    "gpu_error": msg("selftest.label.gpu-error"),
}
TIERS: list[tuple[str, Message]] = [
    ("driver", msg("selftest.tier.driver")), ("cublas", msg("selftest.tier.cublas")),
    ("framework", msg("selftest.tier.framework")), ("cpu", msg("selftest.tier.cpu")),
]
VERDICTS: dict[str, Message] = {
    "pass": msg("selftest.verdict.pass"), "warn": msg("selftest.verdict.warn"), "fail": msg("selftest.verdict.fail"),
    "info": msg("selftest.verdict.info"), "skipped": msg("selftest.verdict.skipped"),
}
RESULTS: dict[str, Message] = {
    "pass": msg("selftest.result.pass"), "warn": msg("selftest.result.warn"), "fail": msg("selftest.result.fail"),
    "info": msg("selftest.result.info"), "skipped": msg("selftest.result.skipped"),
}


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal (Chinese characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _num(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}" if abs(v) >= 100 else f"{v:.3g}"


def label(name: str, language: str | None = None) -> str:
    """A measurement's name in words ("h2d_pinned" → "host→GPU copy, pinned memory")."""
    if name in LABELS:
        return render(LABELS[name], output_language(language))
    return name[10:] if name.startswith("framework_") else name.replace("_", " ")


def reason(m: Measurement, language: str | None = None) -> str:
    """A measurement's reason in ``language`` (its English text when it carries no code: an older report)."""
    return render_parts(m.code, m.params, m.reason, output_language(language))


def verdict_word(verdict: str, language: str | None = None) -> str:
    return render(VERDICTS[verdict], output_language(language)) if verdict in VERDICTS else verdict


def notes(r: SelfTestResult, language: str | None = None) -> list[str]:
    """The result's notes in ``language`` (English when they carry no codes: an older report)."""
    return render_notes(r.notes, r.note_codes, output_language(language))


def line(m: Measurement, language: str | None = None) -> list[str]:
    lang = output_language(language)
    if m.value is None:
        value = "—"
    elif m.unit == "errors":
        value = render(msg("selftest.value.no-errors"), lang) if m.value == 0 else \
            render(msg("selftest.value.errors", count=f"{m.value:g}"), lang)
    else:
        value = f"{_num(m.value)} {m.unit}"
    if m.rated and m.fraction is not None:
        value += "  " + render(msg("selftest.value.of-rated", rated=_num(m.rated), pct=f"{m.fraction:.0%}"), lang)
        if m.datasheet and m.rated_basis not in (None, "datasheet") and abs(m.datasheet - m.rated) > 1e-9:
            value += render(msg("selftest.value.datasheet", datasheet=_num(m.datasheet)), lang)
    if m.spread is not None and len(m.samples) > 1:
        value += f"  ±{m.spread / 2:.1%}"
    name = label(m.name, lang)
    name += " " * max(0, 34 - _width(name))  # columns, not characters: 中文 takes two
    out = [f"  {name} {value}  [{verdict_word(m.verdict, lang).upper()}]"]
    words = reason(m, lang)
    if words:
        out.append(f"  {'':<34} {words}")
    return out


def format_text(r: SelfTestResult, language: str | None = None) -> str:
    lang = output_language(language)
    mode: Message | str = r.mode
    if r.mode in ("quick", "full"):
        mode = msg("selftest.mode.full") if r.mode == "full" else msg("selftest.mode.quick")
    if r.gpu_name:
        head = render(msg("selftest.head.gpu", mode=mode, gpu=r.gpu_name, device=r.device), lang)
    elif not r.gpu_tested:
        head = render(msg("selftest.head.no-gpu", mode=mode), lang)
    else:
        head = render(msg("selftest.head", mode=mode), lang)
    lines = [head, "=" * _width(head)]
    said = answer_lines(r, lang)  # the answer first; how it was measured below
    if said:
        lines.extend(said)
        lines.append(render(msg("selftest.cli.details"), lang))
    lines.extend(f"  - {n}" for n in notes(r, lang))
    for tier, title in TIERS:
        ms = [m for m in r.measurements if m.tier == tier]
        if not ms:
            continue
        lines.append("")
        lines.append(render(title, lang))
        for m in ms:
            lines.extend(line(m, lang))
    lines.append("")
    verdict = render(RESULTS[r.verdict], lang) if r.verdict in RESULTS else r.verdict
    if r.cancelled:
        verdict = render(msg("selftest.result.cancelled", verdict=verdict), lang)
    took = f" ({r.duration_s:.1f} s)" if r.duration_s is not None else ""
    lines.append(render(msg("selftest.result", verdict=verdict, took=took), lang))
    return "\n".join(lines) + "\n"


MARKS = {"pass": "✓", "warn": "!", "fail": "✗"}


def answer_lines(r: SelfTestResult | None, language: str | None = None, chosen: list[str] | None = None,
                 details: bool = False) -> list[str]:
    """One sentence per framework (:func:`.proof.answers`) with its mark, the measurements behind it indented
    under it, and the command that repairs or installs it; when no framework was answered, why. Empty when
    the framework tier did not run."""
    lang = output_language(language)
    if r is None or not any(m.tier == "framework" for m in r.measurements) and chosen is None:
        return []
    said = answers(r, chosen)
    if not said:
        why = summary(r)
        named = why is not None and why.code == "selftest.fw.none-installed"  # it names the environment itself
        where = render(msg("selftest.proof.where", python=r.framework_python), lang) \
            if r.framework_python and not named else ""
        return [render(msg("selftest.proof.line-not-proven", where=where, why=why or ""), lang), ""]
    out: list[str] = []
    for a in said:
        out.extend(answer_text(a, lang, details))
    return out + [""]


def answer_text(a: Answer, language: str | None = None, details: bool = True) -> list[str]:
    """The answer's mark and sentence, its details (when asked: the self-test's text shows its measurements
    below the answers anyway) and the command that repairs or installs it."""
    lang = output_language(language)
    out = [f"{MARKS.get(a.kind, '·')} {render(a.sentence, lang)}"]
    if details:
        out.extend(f"    {render(d, lang)}" for d in a.details)
    command = offer_command(a)
    if command:
        out.append("    " + render(msg("proof.offer.repair-cli" if a.offer == "repair" else "proof.offer.install-cli",
                                       command=command), lang))
    return out
