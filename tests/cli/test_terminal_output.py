"""What reaches the terminal: colour decided in one place for every command, and data never as control codes.

Issue 24: plan, docker, analyze, db and config never coloured, even with ``--color always``; FORCE_COLOR and
CLICOLOR_FORCE were ignored. Issue 25: escape sequences in a GPU name from a user's report
(``\\x1b]0;…\\x07\\x1b[2J…All GPUs healthy``) retitled the window and cleared the screen from ``analyze`` and
``plan --for``, even with ``--color never``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup import term
from gpusetup.cli import main

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[HAll GPUs healthy"
STYLE_CODES = tuple(term.STYLES.values())


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    return monkeypatch


def test_one_rule_for_colour(clean_env: pytest.MonkeyPatch) -> None:
    tty, pipe = _Stream(True), _Stream(False)
    assert term.use_color(tty) and not term.use_color(pipe)
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE"):
        clean_env.setenv(name, "1")
        assert term.use_color(pipe), name  # forced onto a pipe (CI logs)
        clean_env.setenv(name, "0")
        assert not term.use_color(pipe), name  # "0" does not force
        clean_env.delenv(name)
    clean_env.setenv("TERM", "dumb")
    assert not term.use_color(tty)
    clean_env.setenv("FORCE_COLOR", "1")
    assert term.use_color(tty)  # forcing wins over a dumb terminal
    clean_env.setenv("NO_COLOR", "1")
    assert not term.use_color(tty)  # NO_COLOR wins over forcing
    assert term.use_color(pipe, "always") and not term.use_color(tty, "never")  # the option wins over all


def _write(tmp: Path, name: str, gpu_name: str = "NVIDIA GeForce RTX 3090") -> Path:
    path = tmp / name
    path.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "550.54.14",
                                "gpus": [{"vendor": "nvidia", "name": gpu_name, "compute_capability": "8.6",
                                          "pci_id": "10de:2204"}]}))
    return path


@pytest.mark.parametrize("command", ["plan", "docker", "analyze", "db", "config"])
def test_every_command_colours_with_color_always_and_never_with_never(
        command: str, tmp_path: Path, clean_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    prof = _write(tmp_path, "m.json")
    argv = {"plan": ["plan", "--for", str(prof), "--offline"],
            "docker": ["docker", "--for", str(prof), "--framework", "pytorch", "--out", str(tmp_path / "out")],
            "analyze": ["analyze", str(prof)],
            "db": ["db", "info"],
            "config": ["config", "show"]}[command]
    clean_env.setenv("GPUSETUP_CONFIG", str(tmp_path / "config.toml"))
    main(["--color", "always", *argv])
    coloured = capsys.readouterr().out
    assert any(code in coloured for code in STYLE_CODES), coloured
    if command == "docker":
        argv[-1] += "-2"
    main(["--color", "never", *argv])
    assert "\x1b" not in capsys.readouterr().out
    clean_env.setenv("FORCE_COLOR", "1")  # a pipe (capsys), forced
    if command == "docker":
        argv[-1] += "-3"
    main(argv)
    import os
    forced = capsys.readouterr().out
    assert any(code in forced for code in STYLE_CODES), (term.mode(), os.environ.get("FORCE_COLOR"), forced[-300:])


@pytest.mark.parametrize("color", ["never", "always"])
def test_escape_sequences_from_a_report_are_shown_not_obeyed(color: str, tmp_path: Path, clean_env: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    prof = _write(tmp_path, "m.json", gpu_name=f"RTX {ESCAPES}")
    for argv in (["plan", "--for", str(prof), "--offline"], ["analyze", str(prof)]):
        main(["--color", color, *argv])
        out = capsys.readouterr().out
        for code in STYLE_CODES:
            out = out.replace(code, "")
        assert "\x1b" not in out and "\x07" not in out, argv
        assert "\\x1b]0;pwned\\x07\\x1b[2J" in out, argv  # what the report said, visibly


def test_analyze_output_file_has_no_colour_codes_or_raw_escapes(tmp_path: Path, clean_env: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    prof = _write(tmp_path, "m.json", gpu_name=f"RTX {ESCAPES}")
    out = tmp_path / "result.txt"
    main(["--color", "always", "analyze", str(prof), "-o", str(out)])
    text = out.read_text()
    assert "\x1b" not in text and "\\x1b]0;pwned" in text


def test_schema_module_help_prints_help_and_changes_nothing(tmp_path: Path) -> None:
    """Issue 24: `python -m gpusetup.schema --help` rewrote the schema files instead of printing help."""
    from gpusetup.resources import resource

    files = [resource("schema", "report.schema.json"), resource("schema", "analyze.schema.json")]
    before = [(f.stat().st_mtime_ns, f.read_bytes()) for f in files]
    r = subprocess.run([sys.executable, "-m", "gpusetup.schema", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "usage: python -m gpusetup.schema" in r.stdout and "wrote" not in r.stdout
    assert [(f.stat().st_mtime_ns, f.read_bytes()) for f in files] == before
    r = subprocess.run([sys.executable, "-m", "gpusetup.schema", "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout  # the committed schema is what the model gives
    assert [(f.stat().st_mtime_ns, f.read_bytes()) for f in files] == before
