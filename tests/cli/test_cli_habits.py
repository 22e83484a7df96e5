"""Shell completion loaded by the real shells, --color/NO_COLOR on every command, the configuration file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpusetup import term
from gpusetup.cli import build_parser, main
from gpusetup.completion import SHELLS, script, tree
from gpusetup.config import ConfigError, config_path, load_config

BASH = shutil.which("bash")
ZSH = shutil.which("zsh")
FISH = shutil.which("fish")


def _bash_complete(tmp_path: Path, line: str) -> list[str]:
    """Complete the last word of ``line`` with the generated bash function, as bash itself would."""
    f = tmp_path / "gpusetup.bash"
    f.write_text(script(build_parser(), "bash"))
    words = line.split(" ")
    prog = f"""source {f}
COMP_WORDS=({' '.join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
_gpusetup
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", prog], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completes_commands_options_and_choices(tmp_path: Path) -> None:
    assert {"diagnose", "plan", "completion", "config"} <= set(_bash_complete(tmp_path, "gpusetup "))
    assert _bash_complete(tmp_path, "gpusetup pl") == ["plan"]
    assert {"--emit", "--for", "--framework"} <= set(_bash_complete(tmp_path, "gpusetup plan --"))
    assert _bash_complete(tmp_path, "gpusetup plan --emit ") == ["uv", "pixi", "conda", "requirements"]
    assert _bash_complete(tmp_path, "gpusetup diagnose --format p") == ["prometheus"]
    assert _bash_complete(tmp_path, "gpusetup completion ") == list(SHELLS)
    assert _bash_complete(tmp_path, "gpusetup docker --color n") == ["never"]


@pytest.mark.skipif(ZSH is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_loads_the_script_and_registers_it(tmp_path: Path) -> None:
    f = tmp_path / "_gpusetup"
    f.write_text(script(build_parser(), "zsh"))
    check = subprocess.run([ZSH, "-n", str(f)], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    prog = f"autoload -U compinit && compinit -u -d {tmp_path}/zcd && source {f} && print -r -- $_comps[gpusetup]"
    out = subprocess.run([ZSH, "-f", "-c", prog], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "HOME": str(tmp_path)})
    assert out.returncode == 0 and out.stdout.strip() == "_gpusetup", out.stdout + out.stderr


@pytest.mark.skipif(FISH is None, reason="fish is not installed (apt-get install fish)")
def test_fish_completes_from_the_script(tmp_path: Path) -> None:
    f = tmp_path / "gpusetup.fish"
    f.write_text(script(build_parser(), "fish"))

    def complete(line: str) -> list[str]:
        out = subprocess.run([FISH, "--no-config", "-c", f"source {f}; complete -C {json.dumps(line)}"],
                             capture_output=True, text=True, timeout=30, env={**os.environ, "HOME": str(tmp_path)})
        assert out.returncode == 0, out.stderr
        return [line.split("\t")[0] for line in out.stdout.splitlines()]

    assert "plan" in complete("gpusetup pl")
    assert set(complete("gpusetup plan --emit ")) == {"uv", "pixi", "conda", "requirements"}
    assert "--textfile" in complete("gpusetup diagnose --te")


def test_every_shell_script_names_every_command_and_powershell_has_choices() -> None:
    _, cmds = tree(build_parser())
    for shell in SHELLS:
        text = script(build_parser(), shell)
        assert all(c.name in text for c in cmds), shell
    ps = script(build_parser(), "powershell")
    assert "Register-ArgumentCompleter -Native -CommandName 'gpusetup'" in ps
    assert "'plan --emit' = @('uv', 'pixi', 'conda', 'requirements')" in ps
    with pytest.raises(ValueError):
        script(build_parser(), "tcsh")


def test_completion_command_prints_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert "complete -o filenames -o default -F _gpusetup gpusetup" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- colour


class _Tty:
    def isatty(self) -> bool:
        return True


def test_color_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert term.use_color(_Tty(), "auto") and not term.use_color(sys.stdout if not sys.stdout.isatty() else
                                                                  _NotTty(), "auto")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not term.use_color(_Tty(), "auto") and term.use_color(_Tty(), "always")
    monkeypatch.setenv("NO_COLOR", "")  # an empty NO_COLOR does not count (no-color.org)
    assert term.use_color(_Tty(), "auto")
    assert not term.use_color(_Tty(), "never")


class _NotTty:
    def isatty(self) -> bool:
        return False


def test_every_command_takes_color_before_or_after_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    for name, sub in parser._subparsers._group_actions[0].choices.items():  # type: ignore[union-attr]
        assert any("--color" in a.option_strings for a in sub._actions), name
    assert main(["--color", "never", "config", "path"]) == 0 and term.mode() == "never"
    assert main(["config", "path", "--color", "always"]) == 0 and term.mode() == "always"
    capsys.readouterr()
    assert main(["diagnose", "--color", "always"]) in (0, 1, 2)
    assert "\x1b[" in capsys.readouterr().out
    assert main(["diagnose", "--color", "never"]) in (0, 1, 2)
    assert "\x1b[" not in capsys.readouterr().out
    assert main(["diagnose", "--color", "sometimes"]) == 3


# ------------------------------------------------------------------------------------------- config


def test_config_locations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUSETUP_CONFIG", raising=False)
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "h"))
    assert config_path() == tmp_path / "h" / "config" / "config.toml"
    monkeypatch.setenv("GPUSETUP_CONFIG", str(tmp_path / "c.toml"))
    assert config_path() == tmp_path / "c.toml"
    monkeypatch.delenv("GPUSETUP_CONFIG")
    monkeypatch.delenv("GPUSETUP_HOME")
    import platformdirs

    assert config_path() == Path(platformdirs.user_config_dir("gpusetup", appauthor=False)) / "config.toml"


def test_config_init_show_hides_the_proxy_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cfgfile = tmp_path / "config.toml"
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfgfile))
    assert main(["config", "init"]) == 0 and cfgfile.stat().st_mode & 0o777 == 0o600
    assert load_config().exists and load_config().proxy is None  # the template is all comments
    assert main(["config", "init"]) == 3  # never overwrites
    cfgfile.write_text('[mirrors]\npytorch = "https://mirror.example.org/pytorch-whl"\n'
                       '[network]\nproxy = "http://alice:s3cr3t-pass@proxy.example.org:3128"\n'
                       '[defaults]\nframeworks = ["jax"]\n')
    capsys.readouterr()
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "s3cr3t-pass" not in out and "alice" not in out and "[REDACTED]" in out
    assert "https://mirror.example.org/pytorch-whl" in out and "jax" in out
    cfg = load_config()
    assert cfg.proxy_env()["HTTPS_PROXY"].startswith("http://alice:")
    # The proxy is given to the command while it runs, then taken away again (main() runs in-process here).
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    seen: list[str | None] = []
    import gpusetup.commands.config as cmd

    monkeypatch.setattr(cmd, "run", lambda args: seen.append(os.environ.get("HTTPS_PROXY")) or 0)
    assert main(["config", "path"]) == 0
    assert seen == [cfg.proxy] and "HTTPS_PROXY" not in os.environ


@pytest.mark.parametrize("text, needle", [
    ("[mirrors\n", "not valid TOML"),
    ('[mirror]\npypi = "https://x/simple"\n', "unknown section [mirror]"),
    ('[mirrors]\npypy = "https://x/simple"\n', "unknown key(s) in [mirrors]: pypy"),
    ('[mirrors]\npypi = "not a url"\n', "must be a URL"),
    ('[network]\nproxy = "s3cr3t"\n', "(hidden)"),
    ('[defaults]\nframeworks = ["caffe"]\n', "defaults.frameworks"),
])
def test_bad_config_is_an_error_naming_the_file(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "config.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(f)
    assert needle in str(exc.value) and str(f) in str(exc.value) and "s3cr3t" not in str(exc.value)


def test_plan_emit_takes_mirrors_from_the_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    cfgfile = tmp_path / "config.toml"
    cfgfile.write_text('[mirrors]\npypi = "https://pypi.mirror.example/simple"\n'
                       'pytorch = "https://torch.mirror.example/whl"\n')
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfgfile))
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.65.06",
                                "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090",
                                          "compute_capability": "8.6"}]}))
    # torch and jax: PyPI (its mirror) is needed too, so the torch build is pinned exactly
    assert main(["plan", "--for", str(prof), "-f", "pytorch", "-f", "jax", "--emit", "requirements"]) == 0
    out = capsys.readouterr().out
    assert "--index-url https://pypi.mirror.example/simple" in out
    assert "--extra-index-url https://torch.mirror.example/whl/cu" in out
    assert main(["plan", "--for", str(prof), "--emit", "requirements", "--pytorch-mirror", "https://o.example/w"]) == 0
    assert "--index-url https://o.example/w/cu" in capsys.readouterr().out  # the option wins


def test_plan_takes_default_frameworks_from_the_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    cfgfile = tmp_path / "config.toml"
    cfgfile.write_text('[defaults]\nframeworks = ["jax", "pytorch"]\n')
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfgfile))
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.65.06",
                                "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090",
                                          "compute_capability": "8.6"}]}))
    main(["plan", "--for", str(prof), "--json", "--offline"])
    assert [p["framework"] for p in json.loads(capsys.readouterr().out)["plans"]] == ["jax", "pytorch"]
    main(["plan", "--for", str(prof), "--json", "--offline", "-f", "tensorflow"])  # the option wins
    assert [p["framework"] for p in json.loads(capsys.readouterr().out)["plans"]] == ["tensorflow"]
    cfgfile.write_text("[defaults\n")
    assert main(["plan", "--for", str(prof), "--offline"]) == 3
    assert "not valid TOML" in capsys.readouterr().err
