"""What the self-test proved, as data every surface words the same way: one answer per framework, and one
line about the graphics card.

:func:`answers` turns the framework tier's measurements into one :class:`Answer` per framework the user chose:
a sentence a beginner understands ("JAX works. It ran on the processor (this computer has no NVIDIA GPU):
48 GFLOP/s." / "PyTorch works on your NVIDIA GeForce RTX 4090: 81% of its rated speed." / "TensorFlow is
installed but does not start: …"), the measurements behind it as details, and what to offer (repair, install).
The CLI (:mod:`.text`), the reports and the wizard's Verify and Done pages all render these answers; none of
them decides anything of its own.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpusetup.messages import msg
from gpusetup.model import Measurement, Message, SelfTestResult

TITLES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "numpy": "numpy"}
PLAN_NAMES = {"torch": "pytorch", "tensorflow": "tensorflow", "jax": "jax"}  # import name → `gpusetup install --framework`
_KINDS = {"gpu": "pass", "cpu": "pass", "gpu-slow": "warn", "no-gpu-use": "fail", "broken": "fail", "wrong": "fail",
          "not-installed": "warn", "not-checked": "warn"}


@dataclass
class Answer:
    """One framework, proven or not, in the checked environment."""

    framework: str  # import name: torch / tensorflow / jax / numpy
    status: str  # gpu / gpu-slow / cpu / no-gpu-use / broken / wrong / not-installed / not-checked
    sentence: Message  # the one sentence for a beginner
    details: list[Message] = field(default_factory=list)  # the measurements behind it
    python: str | None = None  # the interpreter of the checked environment
    offer: str = ""  # repair / install / "" (nothing to offer)

    @property
    def name(self) -> str:
        return TITLES.get(self.framework, self.framework)

    @property
    def proven(self) -> bool:
        return self.status in ("gpu", "gpu-slow", "cpu")

    @property
    def kind(self) -> str:
        """pass / warn / fail: the mark every surface shows beside the sentence."""
        return _KINDS.get(self.status, "warn")


def answers(result: SelfTestResult | None, chosen: Sequence[str] | None = None) -> list[Answer]:
    """One answer per framework checked, in the order checked; with ``chosen`` (the frameworks the user picked,
    in any naming: "pytorch" or "torch"), exactly those, a framework the check did not reach (the test was
    stopped or has not run) answered as not checked. A framework that was not chosen is never answered."""
    from gpusetup.selftest.framework import import_names  # lazy: the tier's module is not needed to word it

    want = import_names(chosen) if chosen is not None else None
    found: dict[str, Answer] = {}
    for m in (result.measurements if result is not None else []):
        if m.tier != "framework" or not m.name.startswith("framework_") or m.name == "framework_check":
            continue
        fw = m.name.removeprefix("framework_")
        if want is None or fw in want:
            found[fw] = _answer(fw, m, result)  # type: ignore[arg-type]
    if want is None:
        return list(found.values())
    why = (msg("selftest.proof.stopped") if result is not None and result.cancelled
           else msg("selftest.proof.not-run") if result is None else _why_none(result))
    return [found.get(fw) or Answer(fw, "not-checked", msg("proof.not-checked", name=TITLES.get(fw, fw), why=why),
                                    python=result.framework_python if result is not None else None)
            for fw in want]


def summary(result: SelfTestResult | None) -> Message | None:
    """When no framework was answered: why (nothing installed there, no environment named, stopped)."""
    if result is None:
        return msg("selftest.proof.not-run")
    if answers(result):
        return None
    return _why_none(result)


def _why_none(result: SelfTestResult) -> Message:
    check = next((m for m in result.measurements if m.name == "framework_check"), None)
    if check is not None and check.code:
        return Message(code=check.code, params=dict(check.params))
    return msg("selftest.proof.stopped") if result.cancelled else msg("selftest.proof.nothing-checked")


def reason_of(m: Measurement) -> Message | str:
    """A measurement's reason as a message (its English text when it carries no code: an older report)."""
    return Message(code=m.code, params=dict(m.params)) if m.code else m.reason


def _clause(text: object) -> str:
    """An error as the end of a sentence (its own final full stop dropped: the sentence has one)."""
    return str(text or "?").strip().rstrip(".").strip() or "?"


def _pct(m: Measurement) -> int:
    return round((m.fraction or 0.0) * 100)


def _answer(fw: str, m: Measurement, result: SelfTestResult) -> Answer:
    name = TITLES.get(fw, fw)
    details: list[Message] = []
    reason = reason_of(m)
    if isinstance(reason, Message):
        details.append(reason)
    elif reason:
        details.append(msg("proof.detail.text", text=reason))
    py = result.framework_python
    if py:
        details.append(msg("proof.detail.where", python=py))
    p = m.params
    code = m.code
    out = Answer(fw, "not-checked", msg("proof.not-checked", name=name, why=reason), details, py)
    if m.verdict in ("pass", "warn") and m.device is not None:
        gpu = str(p.get("device") or result.gpu_name or "GPU")
        out.status = "gpu-slow" if m.verdict == "warn" else "gpu"
        if m.verdict == "warn":
            out.sentence = msg("proof.works-gpu-slow", name=name, gpu=gpu, percent=_pct(m))
        elif m.fraction is not None:
            out.sentence = msg("proof.works-gpu", name=name, gpu=gpu, percent=_pct(m))
        else:
            out.sentence = msg("proof.works-gpu-unrated", name=name, gpu=gpu, speed=p.get("speed") or "?")
    elif m.verdict == "pass":
        out.status = "cpu"
        speed = p.get("speed") or "?"
        out.sentence = (msg("proof.works-cpu", name=name, speed=speed) if fw == "numpy"
                        else msg("proof.works-cpu-no-gpu", name=name, speed=speed))
        base = next((x for x in result.measurements if x.name == "cpu_matmul_fp32" and x.value), None)
        if base is not None and base.value is not None:
            details.append(msg("proof.detail.cpu-baseline", speed=f"{base.value:.3g}", n=base.params.get("n") or "?"))
    elif code == "selftest.fw.does-not-start":
        out.status, out.offer = "broken", "repair"
        out.sentence = msg("proof.broken", name=name, error=_clause(p.get("error")))
    elif code == "selftest.fw.failed":
        out.status, out.offer = "broken", "repair"
        out.sentence = msg("proof.fails", name=name, error=_clause(p.get("error")))
    elif code == "selftest.fw.cpu-only-build":
        out.status, out.offer = "no-gpu-use", "repair"
        out.sentence = msg("proof.cpu-only-build", name=name)
    elif code == "selftest.fw.not-seeing-gpu":
        out.status, out.offer = "no-gpu-use", "repair"
        out.sentence = msg("proof.not-seeing-gpu", name=name)
    elif code == "selftest.fw.runs-but":
        out.status = "wrong"
        out.sentence = msg("proof.wrong", name=name)
    elif code == "selftest.fw.not-installed":
        out.status, out.offer = "not-installed", "install"
        out.sentence = msg("proof.not-installed", name=name, where=env_folder(py or p.get("python")) or "?")
    elif code == "selftest.fw.no-numpy":
        out.sentence = msg("proof.no-numpy", name=name)
    elif m.verdict == "fail" and not code:  # an older report: its English reason
        out.status = "broken"
        out.sentence = msg("proof.fails", name=name, error=_clause(m.reason))
    return out


def headline(result: SelfTestResult | None, gpu_name: str | None = None) -> Message | None:
    """One line a beginner understands about the graphics card ("Your RTX 3060 works: 94% of its rated
    memory speed"), from the memory-speed measurement against its rated peak (else the matrix multiply);
    None when no graphics card was tested."""
    if result is None or not result.gpu_tested or result.cancelled:
        return None
    name = result.gpu_name or gpu_name or ""
    gpu_tiers = [m for m in result.measurements if m.tier in ("driver", "cublas")]
    failed = [m for m in result.measurements if m.verdict == "fail"]
    # the card failed, not a framework in some environment (that is the framework's answer, not the card's)
    if any(m.tier in ("driver", "cublas") for m in failed) or (result.verdict == "fail" and not failed):
        return msg("selftest.headline.fail", gpu=name)
    rated = [m for m in gpu_tiers if m.fraction is not None and m.verdict in ("pass", "warn")]
    memory = next((x for x in rated if x.name == "d2d"), None)
    compute = next((x for x in rated if x.name in ("cublas_fp32", "matmul_fp32_ptx")), None)
    if memory is not None and memory.fraction is not None:
        pct = round(memory.fraction * 100)
        if memory.verdict == "warn":
            return msg("selftest.headline.memory-low", gpu=name, percent=pct)
        return msg("selftest.headline.memory", gpu=name, percent=pct)
    if compute is not None and compute.fraction is not None:
        pct = round(compute.fraction * 100)
        if compute.verdict == "warn":
            return msg("selftest.headline.compute-low", gpu=name, percent=pct)
        return msg("selftest.headline.compute", gpu=name, percent=pct)
    return msg("selftest.headline.works", gpu=name)


def environment_of(python: str | None) -> str | None:
    """The install target the interpreter belongs to: "venv:FOLDER" or "conda:FOLDER" (None: neither, for
    example the system's own Python, which gpusetup never installs into)."""
    if not python:
        return None
    root = Path(python).parent.parent
    if (root / "pyvenv.cfg").is_file():
        return f"venv:{root}"
    if (root / "conda-meta").is_dir():
        return f"conda:{root}"
    return None


def env_folder(python: str | None) -> str | None:
    """The environment's folder for its interpreter (…/env/bin/python → …/env), else the interpreter."""
    target = environment_of(python)
    return target.split(":", 1)[1] if target else python


def offer_command(a: Answer) -> str | None:
    """The command that repairs (or installs) the framework of ``a`` where it was checked; None when there is
    nothing to offer or no environment gpusetup can install into.

    REPAIR HOOK (issue 21): until the install core has its own repair entry point, a repair is the install flow
    for that framework into that environment; the coordinator connects `install --repair` here (and in the
    wizard's VerifyPage.repair)."""
    fw = PLAN_NAMES.get(a.framework)
    target = environment_of(a.python)
    if not a.offer or fw is None or target is None:
        return None
    return f"gpusetup install --framework {fw} --target {_quoted(target)}"


def _quoted(text: str) -> str:
    import shlex  # lazy: only for the command line shown

    return text if os.name == "nt" else shlex.quote(text)
