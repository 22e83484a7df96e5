"""`gpusetup diagnose` end to end on this machine (no GPU) and through the JSON schema."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema

from gpusetup import schema
from gpusetup.cli import main
from gpusetup.model import Finding, Machine, Report, Severity
from gpusetup.report import render
from gpusetup.resources import resource


def _validator():
    return jsonschema.Draft202012Validator(json.loads(resource("schema", "report.schema.json").read_text()))


def test_committed_schema_matches_the_model():
    committed = resource("schema", "report.schema.json").read_text()
    assert committed == schema.schema_text(), "run: python -m gpusetup.schema"


def test_json_output_validates_against_the_schema(capsys):
    rc = main(["diagnose", "--json"])
    out = capsys.readouterr().out
    data = json.loads(out)
    _validator().validate(data)
    assert data["kind"] == "gpusetup-report"
    assert data["schema_version"] == "1.0"
    assert rc in (0, 1, 2)


def test_diagnose_alias_and_text(capsys):
    rc = main(["--diagnose"])
    out = capsys.readouterr().out
    assert "Findings" in out and "GPUs" in out and "System" in out
    assert rc in (0, 1, 2)


def test_output_file(tmp_path, capsys):
    target = tmp_path / "sub" / "report.json"
    main(["diagnose", "--json", "-o", str(target)])
    assert json.loads(target.read_text())["kind"] == "gpusetup-report"
    assert "written to" in capsys.readouterr().err


def test_bad_python_path_is_a_clear_tool_error(capsys):
    rc = main(["diagnose", "--python", "/nonexistent/python"])
    assert rc == 3
    assert "no such file" in capsys.readouterr().err


def test_unknown_option_exits_3_not_2(capsys):
    assert main(["diagnose", "--bogus"]) == 3
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_exit_code_follows_worst_finding():
    m = Machine()
    assert Report(m, findings=[Finding("x", Severity.ERROR, "t")]).worst.exit_code == 2
    assert Report(m, findings=[Finding("x", Severity.WARNING, "t")]).worst.exit_code == 1


def test_uuid_is_masked_unless_asked():
    from gpusetup.model import Gpu

    m = Machine()
    m.gpus.append(Gpu(vendor="nvidia", uuid="GPU-6f3b2b1e-9d2c-11ee-8c90-0242ac120002", serial="1324021035521"))
    text = render(Report(m), "json")
    assert "6f3b2b1e" not in text and "1324021035521" not in text
    assert "GPU-masked-" in text
    assert "6f3b2b1e" in render(Report(m), "json", show_ids=True)


def test_diagnose_imports_neither_qt_nor_numpy():
    code = (
        "import sys\n"
        "from gpusetup.cli import main\n"
        "import io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['diagnose', '--json'])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'numpy', 'shiboken6')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_diagnose_imports_only_what_it_uses():
    """Issue 13: start-up time is mostly module loading; diagnose must not pay for the other commands' modules,
    the generators or the report renderers it does not print with."""
    code = (
        "import sys\n"
        "from gpusetup.cli import main\n"
        "import io, contextlib\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['diagnose', '--json'])\n"
        "unused = ('gpusetup.commands.plan', 'gpusetup.commands.bundle', 'gpusetup.commands.install',\n"
        "          'gpusetup.commands.gui', 'gpusetup.generate', 'gpusetup.compat.profile',\n"
        "          'gpusetup.report.html', 'gpusetup.report.text', 'gpusetup.report.markdown', 'gpusetup.install')\n"
        "print([m for m in unused if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
