"""Container set-ups the host can actually run: Dockerfile, Compose, devcontainer, Kubernetes, Slurm.

``generate_setup`` picks the image (``select``), renders every file (``render``) and writes them, or refuses
with the reason and an alternative when no image can work; ``host_check`` says whether this host can run GPU
containers at all and how to fix it.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpusetup import escape, resources
from gpusetup.generate import render
from gpusetup.generate.hostcheck import host_check
from gpusetup.generate.select import FLAVOURS, FRAMEWORKS, IMAGE_SOURCES, Refusal, Selection, add, choose
from gpusetup.messages import msg
from gpusetup.messages import render as render_message
from gpusetup.model import Finding, Machine, Message, Rejected

__all__ = ["FLAVOURS", "FRAMEWORKS", "IMAGE_SOURCES", "GenerateError", "GeneratedSetup", "generate_setup",
           "host_check", "render_files"]


class GenerateError(ValueError):
    """The request itself cannot be carried out (bad option, files in the way); nothing was written.

    ``message`` is the same as data (a gpusetup.messages message), so the wizard and ``gpusetup --lang``
    word it in their language; ``str()`` is the English."""

    def __init__(self, message: Message) -> None:
        self.message = message
        super().__init__(render_message(message))


@dataclass
class GeneratedSetup:
    """What ``generate_setup`` did: the files and the chosen image with reasons, or why nothing fits."""

    ok: bool
    framework: str
    out_dir: str | None = None
    files: list[str] = field(default_factory=list)  # relative to out_dir
    image: str | None = None  # FROM reference (tag, plus digest when known)
    image_name: str | None = None  # local name the README builds
    framework_build: str | None = None  # "torch==2.14.1 (cu130)" or "preinstalled 2.10.0a0"
    why: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    reason: str | None = None  # set when refused
    alternative: str | None = None
    host_findings: list[Finding] = field(default_factory=list)
    next_commands: list[str] = field(default_factory=list)  # build and run, ready to paste
    # the same words as data (gpusetup.messages codes), for surfaces that speak another language
    why_codes: list[Message] = field(default_factory=list)
    warning_codes: list[Message] = field(default_factory=list)
    reason_code: Message | None = None
    alternative_code: Message | None = None

    @property
    def refused(self) -> str | None:
        """The refusal reason (None when files were written), for callers that only ask 'refused?'."""
        return None if self.ok else (self.reason or "refused")


_OPTION_NAMES = {"gpus", "runtime", "image_source", "flavour", "cuda", "allow_unverified", "image_name",
                 "registry", "generated_on", "command", "force", "host_findings", "healthcheck", "runtime_class"}


def render_files(machine: Machine, sel: Selection, opts: render.Options,
                 host_findings: list[Finding]) -> dict[str, str]:
    """Every file of the set-up as {relative path: text} (README last, since it lists the others)."""
    drv = str(machine.driver.version) if machine.driver.version else None
    files: dict[str, str] = {
        "Dockerfile": render.dockerfile(sel, opts, drv),
        ".dockerignore": render.dockerignore(),
        ".hadolint.yaml": render.hadolint_config(),
        "requirements.txt": render.requirements_txt(),
        "gpu_check.py": resources.read_text("generate", "gpu_check.py"),
        "compose.yaml": render.compose(sel, opts),
        ".devcontainer/devcontainer.json": render.devcontainer(sel, opts),
        "kubernetes/job.yaml": render.k8s_job(sel, opts),
        "kubernetes/diagnose-daemonset.yaml": render.k8s_daemonset(opts),
        "kubernetes/collect-reports.sh": render.collect_script(),
        "kubernetes/prometheus-rules.yml": resources.read_text("prometheus", "gpusetup-alerts.yml"),
        "diagnose/Dockerfile": render.diagnose_dockerfile(opts),
        "slurm/job.sbatch": render.slurm_script(sel, opts),
        "data/.keep": "",
    }
    files["README.md"] = render.readme(sel, opts, drv, host_findings, [*files, "README.md"])
    return files


def generate_setup(machine: Machine, framework: str, out_dir: Path | str, **options: Any) -> GeneratedSetup:
    """Write a container set-up for ``framework`` into ``out_dir`` that this host can run, or refuse.

    Options: ``gpus`` (int), ``runtime`` ('enroot'|'apptainer' for Slurm), ``image_source``
    ('cuda'|'official'|'ngc'), ``flavour`` (nvidia/cuda flavour, default 'base'), ``healthcheck`` (add a Docker
    HEALTHCHECK), ``runtime_class`` (Kubernetes runtimeClassName), ``cuda`` ('12.8' to force
    the image's CUDA), ``allow_unverified``, ``image_name``, ``registry``, ``generated_on`` (YYYY-MM-DD),
    ``command`` (shown as the regenerate command), ``force`` (overwrite changed files), ``host_findings``
    (precomputed; default: :func:`host_check`). Refusals write nothing.
    """
    unknown = set(options) - _OPTION_NAMES
    if unknown:
        raise GenerateError(msg("generate.error.unknown-options", options=", ".join(sorted(unknown))))
    if framework not in FRAMEWORKS:
        raise GenerateError(msg("generate.error.unknown-framework", framework=repr(framework),
                                choices=", ".join(FRAMEWORKS)))
    runtime = options.get("runtime") or "enroot"
    if runtime not in render.RUNTIMES:
        raise GenerateError(msg("generate.error.unknown-runtime", runtime=repr(runtime),
                                choices=" or ".join(render.RUNTIMES)))
    gpus = options.get("gpus")
    if gpus is not None and (not isinstance(gpus, int) or gpus < 1):
        raise GenerateError(msg("generate.error.bad-gpus", gpus=repr(gpus)))
    _check_names(options)
    try:
        sel = choose(machine, framework, image_source=options.get("image_source") or "cuda",
                     flavour=options.get("flavour") or "base", cuda=options.get("cuda"),
                     allow_unverified=bool(options.get("allow_unverified")))
    except ValueError as exc:  # an option the image chooser refuses (its words are English)
        raise GenerateError(msg("generate.error.choice", error=str(exc))) from exc
    findings = options.get("host_findings")
    if findings is None:
        findings = host_check(machine)
    if isinstance(sel, Refusal):
        return GeneratedSetup(ok=False, framework=framework, reason=sel.reason, alternative=sel.alternative,
                              rejected=sel.rejected, warnings=sel.warnings, host_findings=findings,
                              warning_codes=sel.warning_codes, reason_code=sel.reason_code,
                              alternative_code=sel.alternative_code)
    if gpus and len(sel.gpus) and gpus > len(sel.gpus):
        add(sel.warnings, sel.warning_codes, msg("docker.warn.more-gpus-than-host", asked=gpus, have=len(sel.gpus)))
    opts = render.Options(
        gpus=gpus, runtime=runtime, image_name=options.get("image_name"),
        registry=options.get("registry") or "registry.example.com",
        generated_on=options.get("generated_on") or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        command=options.get("command") or f"gpusetup docker --framework {framework}",
        healthcheck=bool(options.get("healthcheck")), runtime_class=options.get("runtime_class") or None,
    )
    files = render_files(machine, sel, opts, findings)
    out = Path(out_dir)
    _write_all(out, files, force=bool(options.get("force")))
    build = None
    if sel.build:
        build = f"{' '.join([*sel.build['packages'], *sel.extra_packages])} ({sel.build['variant']})"
    elif sel.framework_version:
        build = f"preinstalled {sel.framework_version}"
    return GeneratedSetup(
        ok=True, framework=framework, out_dir=str(out), files=list(files), image=sel.ref,
        image_name=render.image_name(sel, opts), framework_build=build, why=sel.why, warnings=sel.warnings,
        rejected=sel.rejected, host_findings=findings, why_codes=sel.why_codes, warning_codes=sel.warning_codes,
        next_commands=[f"cd {escape.sh(str(out))}", f"docker build -t {escape.sh(render.image_name(sel, opts))} .",
                       f"docker run --rm --gpus all {escape.sh(render.image_name(sel, opts))}"],
    )


def _check_names(options: dict[str, Any]) -> None:
    """Names the generated files use where their format has rules: refused with the rule, never quoted into
    something the cluster or Docker would read otherwise (``--image-name``, ``--registry``,
    ``--runtime-class``)."""
    checks = (("image_name", escape.image_ref, lambda v: msg("generate.error.bad-image-name", value=v)),
              ("registry", escape.registry, lambda v: msg("generate.error.bad-registry", value=v)),
              ("runtime_class", escape.k8s_name, lambda v: msg("generate.error.bad-runtime-class", value=v)))
    for key, check, refusal in checks:
        value = options.get(key)
        if value is None or value == "":
            continue
        try:
            check(value)
        except escape.BadValue as exc:
            raise GenerateError(refusal(escape.one_line(repr(exc.value)))) from exc


def _write_all(out: Path, files: dict[str, str], force: bool) -> None:
    """Write every file, but first make sure nothing the user changed would be overwritten."""
    if out.exists() and not out.is_dir():
        raise GenerateError(msg("docker.error.not-a-folder", out=str(out)))
    clashes = []
    for rel, text in files.items():
        path = out / rel
        if path.exists():
            try:
                same = path.read_text(encoding="utf-8") == text
            except (OSError, UnicodeDecodeError):
                same = False
            if not same:
                clashes.append(rel)
    if clashes and not force:
        raise GenerateError(msg("docker.error.files-differ", out=str(out), files=", ".join(clashes)))
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if rel.endswith((".sh", ".sbatch")) or rel == "gpu_check.py":
            path.chmod(0o755)
