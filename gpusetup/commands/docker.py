"""`gpusetup docker`: write a Docker/Compose/devcontainer/Kubernetes/Slurm set-up this host can run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gpusetup import escape, term
from gpusetup.commands import load_for_file
from gpusetup.errors import EXIT_ERROR, EXIT_OK, EXIT_WARN, ToolError
from gpusetup.generate import GenerateError, generate_setup, host_check
from gpusetup.i18n import output_language
from gpusetup.messages import finding_words, msg, render
from gpusetup.model import Message, Severity, to_dict
from gpusetup.probe import detect

FRAMEWORKS = ("pytorch", "tensorflow", "jax")


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write a ready project folder whose base image this host's driver can run and whose "
        "framework build has kernels for its GPUs, or explain why none can and what to change. "
        "With --check, only check that Docker/Podman can give containers the GPU. "
        "Exit code: 0 written (host ready), 1 written but the host needs fixes, 2 refused, 3 bad input."
    )
    p.add_argument("--framework", choices=FRAMEWORKS, help="framework to set up (required unless --check)")
    p.add_argument("--out", metavar="DIR", help="folder to write (default: ./gpu-<framework>)")
    p.add_argument("--for", dest="for_file", metavar="REPORT.json",
                   help="plan for the machine in this diagnose report or machine profile instead of this one")
    p.add_argument("--runtime", choices=("enroot", "apptainer"), default="enroot",
                   help="container runtime the Slurm script uses (default enroot/pyxis)")
    p.add_argument("--gpus", type=int, metavar="N", help="GPUs per container/job (default: all / this host's count)")
    p.add_argument("--check", action="store_true", help="only check the host's container set-up")
    p.add_argument("--image-source", choices=("cuda", "official", "ngc"), default="cuda",
                   help="nvidia/cuda + pip build (default), the framework's official image, or an NGC container")
    p.add_argument("--flavour", choices=("base", "runtime", "devel", "cudnn-runtime", "cudnn-devel"),
                   default="base", help="nvidia/cuda flavour (default base: the framework's wheels bring CUDA; "
                        "devel for nvcc)")
    p.add_argument("--healthcheck", action="store_true",
                   help="add a Docker HEALTHCHECK (it runs the GPU check, creating a CUDA context on every GPU, "
                        "every 10 minutes)")
    p.add_argument("--runtime-class", metavar="NAME",
                   help="Kubernetes runtimeClassName for GPU pods (e.g. nvidia, where the cluster uses one)")
    p.add_argument("--cuda", metavar="X.Y", help="force the image's CUDA version (refused if the driver is older)")
    p.add_argument("--allow-unverified", action="store_true",
                   help="also consider image tags gpusetup has only seen in secondary sources")
    p.add_argument("--image-name", metavar="NAME:TAG", help="name for the built image")
    p.add_argument("--registry", metavar="HOST[/PATH]", default="registry.example.com",
                   help="registry cluster nodes pull from (used in the Kubernetes and Slurm files)")
    p.add_argument("--force", action="store_true", help="overwrite files in --out that differ")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=run)


def _load_machine(args: argparse.Namespace) -> Any:
    if args.for_file:
        return load_for_file(args.for_file)
    return detect()


def _command_line(args: argparse.Namespace) -> str:
    parts = ["gpusetup", "docker", "--framework", args.framework]
    for flag, value, default in (("--out", args.out, None), ("--for", args.for_file, None),
                                 ("--runtime", args.runtime, "enroot"), ("--gpus", args.gpus, None),
                                 ("--image-source", args.image_source, "cuda"), ("--flavour", args.flavour, "base"),
                                 ("--runtime-class", args.runtime_class, None),
                                 ("--cuda", args.cuda, None), ("--image-name", args.image_name, None),
                                 ("--registry", args.registry, "registry.example.com")):
        if value is not None and value != default:
            parts += [flag, str(value)]
    if args.allow_unverified:
        parts.append("--allow-unverified")
    if args.healthcheck:
        parts.append("--healthcheck")
    return escape.sh_join(parts)  # one line, even for a file name with a newline in it


def _print_findings(findings: list[Any], out: Any) -> None:
    for f in findings:
        words = finding_words(f, output_language())
        print(f"  {term.paint(f.severity.value, f'[{f.severity.value}]')} {words.title}", file=out)
        if words.fix and f.severity.value in ("error", "warning"):
            for line in words.fix.splitlines():
                print(f"      {line}", file=out)


def run(args: argparse.Namespace) -> int:
    if args.gpus is not None and args.gpus < 1:
        raise ToolError(msg("cli.error.gpus-count"))
    if not args.check and not args.framework:
        raise ToolError(msg("cli.error.docker-framework"))
    machine = _load_machine(args)
    findings = host_check(machine)
    worst = max((f.severity for f in findings), key=lambda s: s.rank, default=Severity.OK)
    host_code = EXIT_WARN if worst.rank >= Severity.WARNING.rank else EXIT_OK

    if args.check:
        if args.json:
            print(json.dumps({"findings": [to_dict(f) for f in findings]}, indent=2))
        else:
            print(render(msg("docker.cli.container-check"), output_language()))
            _print_findings(findings, sys.stdout)
        return worst.exit_code

    out = Path(args.out or f"gpu-{args.framework}").expanduser()
    try:
        result = generate_setup(
            machine, args.framework, out, gpus=args.gpus, runtime=args.runtime, image_source=args.image_source,
            flavour=args.flavour, cuda=args.cuda, allow_unverified=args.allow_unverified,
            image_name=args.image_name, registry=args.registry, command=_command_line(args), force=args.force,
            healthcheck=args.healthcheck, runtime_class=args.runtime_class,
            host_findings=findings,
        )
    except GenerateError as exc:
        if exc.message is not None and exc.message.code == "docker.error.files-differ":
            # the generator's words fit the wizard too (no flags); on the command line the flags are the way out
            raise ToolError(msg("docker.cli.files-differ", said=exc.message)) from exc
        raise ToolError(exc.message) from exc
    except OSError as exc:
        raise ToolError(msg("cli.error.cannot-write-here", path=str(out), reason=exc.strerror or str(exc))) from exc

    if args.json:
        print(json.dumps(to_dict(result), indent=2))
        return EXIT_ERROR if not result.ok else host_code
    lang = output_language()

    def words(code: Message | None, english: str | None) -> str:
        return render(code, lang) if code is not None else english or ""

    if not result.ok:
        print(render(msg("docker.cli.refused", framework=args.framework), lang), file=sys.stderr)
        print(render(msg("docker.cli.why", why=words(result.reason_code, result.reason)), lang), file=sys.stderr)
        print(render(msg("docker.cli.what-to-do", what=words(result.alternative_code, result.alternative)), lang),
              file=sys.stderr)
        return EXIT_ERROR
    print(render(msg("docker.cli.wrote", framework=args.framework, out=f"{out}/", count=len(result.files)), lang))
    print("  " + render(msg("docker.cli.base-image", image=result.image), lang))
    if result.framework_build:
        print("  " + render(msg("docker.cli.framework", build=result.framework_build), lang))
    whys = result.why_codes if len(result.why_codes) == len(result.why) else result.why
    for line in whys:
        print(f"  - {render(line, lang)}")
    warnings = result.warning_codes if len(result.warning_codes) == len(result.warnings) else result.warnings
    for line in warnings:
        print(f"  {term.paint('warning', '!')} {render(line, lang)}")
    print(render(msg("docker.cli.host-check"), lang))
    _print_findings(result.host_findings, sys.stdout)
    print(render(msg("docker.cli.next", out=escape.sh(str(out)), image=result.image_name), lang))
    return host_code
