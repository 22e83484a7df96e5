"""The architecture is enforced, not hoped for: import-linter's contracts (layers; PySide6 only in
gpusetup/gui) and mypy with 0 errors on gpusetup/, both configured in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: the test extra installs it (pip install -e .[test])")
    return path


def test_import_contracts_are_kept() -> None:
    r = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_mypy_finds_no_errors() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert "Success: no issues found" in r.stdout


def test_sys_platform_is_read_only_under_probe_platform() -> None:
    """One module knows which OS gpusetup runs on (gpusetup/probe/platform/host.py); everything else asks it."""
    import ast

    offenders = []
    for path in sorted((ROOT / "gpusetup").rglob("*.py")):
        if path.parent == ROOT / "gpusetup" / "probe" / "platform":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr == "platform" and isinstance(node.value, ast.Name)
                    and node.value.id == "sys"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], offenders
