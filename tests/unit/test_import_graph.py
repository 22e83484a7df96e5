"""Issue 13: the import graph is visible. Modules import at the top; a function-level import is allowed only with a
``lazy:`` comment naming why (a measurement, a cycle, an optional library), and the CLI loads only the command
it runs, whatever global options come first."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpusetup"

# Runs inside the user's framework environment as a standalone script (`python fwcheck.py`), where gpusetup is not
# importable and torch/tensorflow/jax are imported only for the framework that is checked.
STANDALONE = {PACKAGE / "selftest" / "fwcheck.py"}


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every import inside a function that has no ``lazy:`` comment on its line or in the comment
    lines right above it (one comment may cover a group of consecutive imports)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[tuple[int, str]] = []

    def justified(lineno: int) -> bool:
        i = lineno - 1
        if "lazy:" in lines[i]:
            return True
        i -= 1
        while i >= 0:
            text = lines[i].strip()
            if "lazy:" in text and text.startswith("#"):
                return True
            if not (text.startswith("#") or text.startswith(("import ", "from "))):
                return False
            i -= 1
        return False

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)) and not justified(child.lineno):
                found.append((child.lineno, lines[child.lineno - 1].strip()))
            walk(child, inside)

    walk(ast.parse(source), False)
    return found


def test_every_function_level_import_says_why_it_is_lazy() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}: {text}"
                 for path in sorted(PACKAGE.rglob("*.py")) if path not in STANDALONE
                 for line, text in _function_level_imports(path)]
    assert offenders == [], "import at the top, or add a '# lazy: <why>' comment:\n" + "\n".join(offenders)


def test_the_checker_finds_an_unexplained_import(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os\n\ndef f():\n    import json\n    # lazy: measured\n    import re\n"
                      "    import ast  # lazy: a cycle\n    return json, re, ast, os\n", encoding="utf-8")
    assert _function_level_imports(sample) == [(4, "import json")]


def _commands_loaded(argv: list[str]) -> tuple[int, list[str]]:
    """Run ``gpusetup ARGV`` in a fresh interpreter without a display: (exit code, command modules imported)."""
    code = (
        "import contextlib, io, json, sys\n"
        "from gpusetup.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        "print(json.dumps([rc, sorted(m for m in sys.modules if m.startswith('gpusetup.commands.'))]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    rc, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, loaded


@pytest.mark.parametrize("argv", [
    ["diagnose", "--json"],
    ["--color", "never", "diagnose", "--json"],
    ["--color=never", "diagnose", "--json"],
    ["-v", "--color", "never", "diagnose", "--json"],
    ["--col", "never", "diagnose", "--json"],
    ["--lang", "zh_CN", "--color", "never", "diagnose", "--json"],
    ["--color", "never", "--diagnose", "--json"],
    ["--color", "never"],  # no command and no display: the report
])
def test_only_the_command_that_runs_is_imported(argv: list[str]) -> None:
    rc, loaded = _commands_loaded(argv)
    assert rc in (0, 1, 2)  # a report was made (the exit code says how healthy the machine is)
    assert loaded == ["gpusetup.commands.diagnose"]


def test_help_lists_the_commands_without_importing_them() -> None:
    assert _commands_loaded(["--help"]) == (0, [])
    assert _commands_loaded(["--color", "never", "plan", "--help"]) == (0, ["gpusetup.commands.plan", "gpusetup.commands.plan_emit"])


def test_completion_describes_every_command() -> None:
    from gpusetup.cli import COMMANDS

    rc, loaded = _commands_loaded(["completion", "bash"])
    assert rc == 0 and {f"gpusetup.commands.{c.replace('-', '_')}" for c in COMMANDS} <= set(loaded)


def test_psutil_is_a_test_tool_only() -> None:
    """Issue 13: gpusetup reads RAM from /proc/meminfo or CIM, disk with shutil and its children with
    gpusetup.children, so psutil stays out of the dependencies (the tests use it to check for leftover children)."""
    importers = [str(path.relative_to(ROOT)) for path in sorted(PACKAGE.rglob("*.py"))
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "psutil" for a in node.names))
                 or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "psutil")]
    assert importers == []
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert not [d for d in deps if d.lower().startswith("psutil")]
