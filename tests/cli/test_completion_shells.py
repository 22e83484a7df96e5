"""`gpusetup completion bash|zsh|fish` loaded in the real shell, completing as a person types (issue 24).

bash and zsh run interactively under tmux (Tab pressed, the screen read back); fish answers `complete -C`.
The folder has a file with a space in its name and a folder: `analyze` completes both (the file quoted, the
folder with a slash and no space), `diagnose` (no file argument) completes none, and `--emit=p` completes the
value. Before: bash registered without `-o filenames -o default` (a folder completed with a space,
`my report.json` split in two, `analyze <Tab>` and `--emit=p<Tab>` completed nothing), fish never completed
analyze's files, zsh offered files to `diagnose`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gpusetup.cli import main

BIN = str(Path(sys.executable).parent)  # where the `gpusetup` entry point of this environment is
CASES = [  # typed, then Tab → the command line the shell shows
    ("gpusetup analyze rep", "gpusetup analyze report\\ one.json"),
    ("gpusetup analyze da", "gpusetup analyze data\\ dir/"),
    ("gpusetup diagnose re", "gpusetup diagnose re"),
    ("gpusetup plan --emit=p", "gpusetup plan --emit=pixi"),
    ("gpusetup docker --framework t", "gpusetup docker --framework tensorflow"),
]


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if not found:
        pytest.skip(f"{tool} is not installed (Debian package '{tool}'; .ci/run installs it)")
    return found


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    if not shutil.which("gpusetup", path=BIN):
        pytest.skip("the gpusetup entry point is not installed in this environment (pip install -e .)")
    (tmp_path / "data dir").mkdir()
    (tmp_path / "report one.json").write_text("{}")
    return tmp_path


def _script(shell: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["completion", shell]) == 0
    path = tmp_path.parent / f"completion-{uuid.uuid4().hex[:8]}.{shell}"
    path.write_text(capsys.readouterr().out)
    return path


def _tmux(shell_argv: str, setup: str, cwd: Path) -> list[str]:
    tmux = _need("tmux")
    session = f"gpusetup-test-{uuid.uuid4().hex[:8]}"
    env = f"env -i PATH={BIN}:/usr/bin:/bin HOME={cwd} TERM=xterm LANG=C.UTF-8"
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "160", "-y", "20", "-c", str(cwd),
                    f"{env} {shell_argv}"], check=True, timeout=30)
    shown = []
    try:
        time.sleep(0.5)
        subprocess.run([tmux, "send-keys", "-t", session, setup, "Enter"], check=True, timeout=30)
        for typed, want in CASES:
            subprocess.run([tmux, "send-keys", "-t", session, "clear", "Enter"], check=True, timeout=30)
            time.sleep(0.3)
            subprocess.run([tmux, "send-keys", "-t", session, typed, "Tab"], check=True, timeout=30)
            line = ""
            for _ in range(40):  # the first Tab loads gpusetup's completion: up to a few seconds
                time.sleep(0.25)
                screen = subprocess.run([tmux, "capture-pane", "-t", session, "-p"], capture_output=True,
                                        text=True, timeout=30).stdout
                line = next((x.strip() for x in reversed(screen.splitlines()) if x.strip()), "")
                if line.removeprefix("$ ").rstrip() == want:
                    break
            shown.append(line.removeprefix("$ ").rstrip())
            subprocess.run([tmux, "send-keys", "-t", session, "C-u"], check=True, timeout=30)
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True, timeout=30)
    return shown


def test_bash_completes_files_folders_spaces_and_option_values(folder: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _need("bash")
    script = _script("bash", tmp_path, capsys)
    assert "complete -o filenames -o default -F _gpusetup gpusetup" in script.read_text()
    shown = _tmux("bash --norc --noprofile", f"PS1='$ '; source {script}", folder)
    assert shown == [want for _, want in CASES]


def test_zsh_completes_files_only_where_a_command_takes_them(folder: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    _need("zsh")
    script = _script("zsh", tmp_path, capsys)
    shown = _tmux("zsh -f", f"PS1='$ '; autoload -U compinit && compinit -u && source {script}", folder)
    assert shown == [want for _, want in CASES]


def test_fish_completes_analyzes_files(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fish = _need("fish")
    script = _script("fish", tmp_path, capsys)

    def complete(line: str) -> list[str]:
        r = subprocess.run([fish, "--no-config", "-c", f"source {script}; complete -C'{line}'"], cwd=folder,
                           env={**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"},
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [x.split("\t")[0] for x in r.stdout.splitlines()]

    assert complete("gpusetup analyze rep") == ["report one.json"]
    assert complete("gpusetup analyze da") == ["data dir/"]
    assert complete("gpusetup diagnose re") == []
    assert complete("gpusetup plan --emit=p") == ["--emit=pixi"]
