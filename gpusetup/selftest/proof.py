"""What the self-test proved about the framework, as data the CLI, the report and the wizard all show.

``gpu``: a framework in the checked environment saw the GPU and its matmul and convolution matched the CPU;
``cpu``: it computed correctly on the processor (no GPU for it to use); ``failed``: a framework check
failed; ``not-proven``: nothing was checked (not installed, skipped, cancelled) — never shown as success.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpusetup.messages import message_of, msg, render
from gpusetup.model import Message, SelfTestResult


@dataclass
class FrameworkProof:
    status: str  # gpu / cpu / failed / not-proven
    frameworks: list[str] = field(default_factory=list)  # the ones that status is about ("torch", "jax")
    python: str | None = None  # the interpreter whose environment was checked
    reason: str = ""  # the self-test's own words for the deciding measurement (English)
    why: Message | str = ""  # the same as data, to word it in the surface's language (str: an older report)

    @property
    def proven(self) -> bool:
        return self.status in ("gpu", "cpu")


def framework_proof(result: SelfTestResult | None) -> FrameworkProof:
    if result is None:
        return _said(FrameworkProof("not-proven"), msg("selftest.proof.not-run"))
    fw = [m for m in result.measurements if m.tier == "framework"]
    py = result.framework_python
    failed = [m for m in fw if m.verdict == "fail"]
    if failed:
        return FrameworkProof("failed", [_name(m.name) for m in failed], py, failed[0].reason, message_of(failed[0]))
    passed = [m for m in fw if m.verdict == "pass"]
    on_gpu = [m for m in passed if m.device is not None]
    if on_gpu:
        return FrameworkProof("gpu", [_name(m.name) for m in on_gpu], py, on_gpu[0].reason, message_of(on_gpu[0]))
    if passed:
        return FrameworkProof("cpu", [_name(m.name) for m in passed], py, passed[0].reason, message_of(passed[0]))
    given = next((m for m in fw if m.reason), None)
    if given is not None:
        return FrameworkProof("not-proven", [], py, given.reason, message_of(given))
    return _said(FrameworkProof("not-proven", [], py),
                 msg("selftest.proof.stopped") if result.cancelled else msg("selftest.proof.nothing-checked"))


def _said(p: FrameworkProof, why: Message) -> FrameworkProof:
    p.reason, p.why = render(why), why
    return p


def _name(measurement: str) -> str:
    return measurement.removeprefix("framework_")


def headline(result: SelfTestResult | None, gpu_name: str | None = None) -> Message | None:
    """One line a beginner understands about the graphics card ("Your RTX 3060 works: 94% of its rated
    memory speed"), from the memory-speed measurement against its rated peak (else the matrix multiply);
    None when no graphics card was tested."""
    if result is None or not result.gpu_tested or result.cancelled:
        return None
    name = result.gpu_name or gpu_name or ""
    if result.verdict == "fail":
        return msg("selftest.headline.fail", gpu=name)
    rated = [m for m in result.measurements if m.fraction is not None and m.verdict in ("pass", "warn")]
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
