"""A green run means something was tested (issue 16): the rules in tests/conftest.py, run on tiny suites."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, body: str, *args: str, ci: bool = False) -> tuple[int, str]:
    (tmp_path / "test_tiny.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GPUSETUP_STRICT_SKIPS", "PYTEST_ADDOPTS")}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = str(TESTS)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path), *args],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


SKIPS = ("import pytest\n"
         "def test_needs_tool():\n    pytest.skip('no C compiler (gcc/cc) on PATH')\n"
         "def test_plain():\n    assert 1 + 1 == 2\n")


def test_everything_skipped_is_not_a_pass(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, SKIPS, "-k", "needs_tool")
    assert rc != 0 and "NOTHING WAS TESTED" in out, out


def test_a_tool_skip_passes_locally_but_fails_in_ci(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, SKIPS)
    assert rc == 0, out
    rc, out = _pytest(tmp_path, SKIPS, ci=True)
    assert rc != 0 and "1 × no C compiler (gcc/cc) on PATH" in out, out


def test_a_clean_run_stays_green_in_ci(tmp_path: Path) -> None:
    rc, out = _pytest(tmp_path, "def test_ok():\n    assert True\n", ci=True)
    assert rc == 0, out
