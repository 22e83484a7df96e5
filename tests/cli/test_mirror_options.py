"""Mirrors on the command line (issues 21 and 24): one URL check for the options, the configuration file and the
wizard; ``--pytorch-mirror`` / ``--index-url`` on ``plan`` word its commands, its index check and ``--emit``;
a broken configuration file is said once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpusetup.cli import main
from gpusetup.config import ConfigError, load_config
from gpusetup.messages import render
from gpusetup.mirrors import apply, known, pytorch_probe, through, url_problem
from gpusetup.resources import resource

RTX3090 = {"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.65.06",
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]}


def _profile(tmp_path: Path) -> str:
    prof = tmp_path / "m.json"
    prof.write_text(json.dumps(RTX3090))
    return str(prof)


@pytest.mark.parametrize("value, kind, why", [
    ("https://mirror.example/pytorch/whl", "index", None),
    ("http://127.0.0.1:8080/simple", "index", None),
    ("file:///srv/wheels", "index", None),
    ("https://user:p%40ss@mirror.example/simple", "index", None),
    ("socks5://proxy.example:1080", "proxy", None),
    ("not a url", "index", "url.why.space"),
    ("https://mirror.example/a b", "index", "url.why.space"),
    ("https://mirror.example/\x7f", "index", "url.why.space"),
    ("https://mirror.example/\nx", "index", "url.why.space"),
    ("mirror.example/simple", "index", "url.why.scheme"),
    ("ftp://mirror.example/simple", "index", "url.why.scheme"),
    ("socks5://proxy.example:1080", "index", "url.why.scheme"),
    ("https://", "index", "url.why.host"),
    ("https://:80/simple", "index", "url.why.host"),
    ("https://mirror.example:99999/simple", "index", "url.why.port"),
    ("https://mirror.example:0/simple", "index", "url.why.port"),
    ("file://", "index", "url.why.path"),
    ("", "index", "url.why.empty"),
])
def test_one_url_check(value: str, kind: str, why: str | None) -> None:
    problem = url_problem(value, kind)
    assert (problem.code if problem else None) == why
    if why is not None:
        assert render(problem) and render(problem, "zh_CN") != render(problem)


@pytest.mark.parametrize("value", ["not a url", "https://mirror.example:0/x", "mirror.example/whl"])
def test_the_options_the_file_and_the_wizard_refuse_the_same_values(tmp_path: Path, value: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`--pytorch-mirror "not a url"` was accepted and written into files while the file refused it (issue 24)."""
    assert main(["plan", "--offline", "--for", _profile(tmp_path), "--pytorch-mirror", value]) == 3
    err = capsys.readouterr().err
    assert "is not a URL" in err and "--pytorch-mirror" in err
    for option in ("--index-url", "--live-index"):
        assert main(["plan", "--offline", "--for", _profile(tmp_path), option, value]) == 3
    assert main(["install", "--dry-run", "--for", _profile(tmp_path), "--pytorch-mirror", value]) == 3
    f = tmp_path / "config.toml"
    f.write_text(f"[mirrors]\npytorch = {json.dumps(value)}\n")
    with pytest.raises(ConfigError, match="mirrors.pytorch"):
        load_config(f)


def test_a_password_in_a_refused_url_is_not_repeated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--offline", "--for", _profile(tmp_path), "--index-url",
                 "https://alice:s3cr3t-pass@mirror.example/sim ple"]) == 3
    assert "s3cr3t-pass" not in capsys.readouterr().err


def test_a_broken_configuration_file_is_said_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """It printed as a warning and again as the error (issue 24): now the command that stops on it says it."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('[mirrors]\npytorch = "not a url"\n')
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfg))
    for argv in (["plan", "--offline", "--for", _profile(tmp_path)],
                 ["plan", "--offline", "--for", _profile(tmp_path), "-f", "jax"],  # no default needed: still read
                 ["install", "--dry-run", "--for", _profile(tmp_path)],
                 ["config", "show"]):
        assert main(argv) == 3, argv
        err = capsys.readouterr().err
        assert err.count("mirrors.pytorch") == 1, (argv, err)
        assert "warning" not in err
    # a command that does not need the file goes on, and says it once, as a warning
    assert main(["config", "path"]) == 0
    err = capsys.readouterr().err
    assert err.count("mirrors.pytorch") == 1 and "warning" in err


def test_plan_words_its_commands_through_the_mirrors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = _profile(tmp_path)
    assert main(["plan", "--offline", "--for", prof, "-f", "pytorch", "-f", "jax",
                 "--pytorch-mirror", "https://mirror.example/pytorch/whl",
                 "--index-url", "https://pypi.mirror.example/simple"]) == 0
    out = capsys.readouterr().out
    assert "--index-url https://mirror.example/pytorch/whl/cu" in out
    assert not [line for line in out.splitlines() if "$" in line and "download.pytorch.org" in line]
    jax = [line for line in out.splitlines() if "pip install" in line and "jax" in line]
    assert jax and all("--index-url https://pypi.mirror.example/simple" in line for line in jax), jax
    assert main(["plan", "--offline", "--for", prof, "--json", "--pytorch-mirror",
                 "https://mirror.example/pytorch/whl"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["plans"][0]["choice"]["index_url"].startswith("https://mirror.example/pytorch/whl/cu")


def test_plan_takes_the_pytorch_mirror_from_the_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[mirrors]\npytorch = "https://torch.mirror.example/whl"\n')
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfg))
    assert main(["plan", "--offline", "--for", _profile(tmp_path)]) == 0
    assert "--index-url https://torch.mirror.example/whl/cu" in capsys.readouterr().out
    assert main(["plan", "--offline", "--for", _profile(tmp_path), "--pytorch-mirror", "https://o.example/w"]) == 0
    assert "--index-url https://o.example/w/cu" in capsys.readouterr().out  # the option wins


def test_through_apply_and_probe_agree() -> None:
    assert through("https://download.pytorch.org/whl/cu126", None, "https://m.example/pytorch/whl/") == \
        "https://m.example/pytorch/whl/cu126"
    assert through(None, "https://pypi.m.example/simple", None) == "https://pypi.m.example/simple"
    applied = through("https://download.pytorch.org/whl/cu126", None, "https://m.example/w")
    assert through(applied, None, "https://other.example/w") == applied  # applied once, never twice
    assert pytorch_probe("https://m.example/w", [None, "https://download.pytorch.org/whl/cu130"]) == \
        "https://m.example/w/cu130"
    assert pytorch_probe("https://m.example/w") == "https://m.example/w/cpu"

    class Ch:
        index_url = "https://download.pytorch.org/whl/cu126"
        commands = ['python -m pip install "torch==2.14.*" --index-url https://download.pytorch.org/whl/cu126']

    class Fp:
        choice, gpu_choice = Ch(), None

    apply([Fp()], None, "https://m.example/w")
    assert Fp.choice.commands == ['python -m pip install "torch==2.14.*" --index-url https://m.example/w/cu126']


def test_the_public_mirrors_are_choices_with_their_sources() -> None:
    """resources/network/mirrors.json: each offered mirror has a source and the date it was looked up; the
    PyTorch ones have the per-variant layout the install needs (or say that it is unverified)."""
    doc = json.loads(resource("network", "mirrors.json").read_text(encoding="utf-8"))
    for kind in ("pypi", "pytorch"):
        table = doc["tables"][kind]
        assert table["checked"] and table["rows"]
        for row in table["rows"]:
            assert row["source"] and url_problem(row["url"]) is None, row
        assert [m.url for m in known(kind)] == [r["url"] for r in table["rows"]]
    assert all("download.pytorch.org" not in m.url and "pypi.org" not in m.url for m in known("pytorch") + known("pypi"))
    assert known("pytorch")[0].label("zh_CN") == "南京大学" and known("pytorch")[0].label("en") == "Nanjing University"


def test_the_wizard_keeps_mirrors_in_the_file_the_command_line_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """config.save_mirrors: only the [mirrors] keys change (comments, the proxy and the defaults stay), a new
    file is private, "" removes a key, a password is never written; `gpusetup plan` then uses what was kept."""
    from gpusetup.config import save_mirrors

    f = tmp_path / "config.toml"
    f.write_text('# mine\n[network]\nproxy = "http://proxy.example:3128"\n[mirrors]\npytorch = "https://old.example/whl"\n'
                 '[defaults]\nframeworks = ["pytorch"]\n')
    save_mirrors("https://pypi.mirror.example/simple", "https://torch.mirror.example/whl", f)
    cfg = load_config(f)
    assert (cfg.pypi_mirror, cfg.pytorch_mirror) == ("https://pypi.mirror.example/simple", "https://torch.mirror.example/whl")
    assert cfg.proxy == "http://proxy.example:3128" and cfg.frameworks == ["pytorch"]
    assert f.read_text().startswith("# mine\n") and "old.example" not in f.read_text()
    monkeypatch.setenv("GPUSETUP_CONFIG", str(f))
    assert main(["plan", "--offline", "--for", _profile(tmp_path)]) == 0
    assert "--index-url https://torch.mirror.example/whl/cu" in capsys.readouterr().out
    save_mirrors("", "", f)
    assert (load_config(f).pypi_mirror, load_config(f).pytorch_mirror) == (None, None)
    with pytest.raises(ConfigError, match="password"):
        save_mirrors("https://alice:s3cr3t-pass@mirror.example/simple", "", f)
    assert "s3cr3t-pass" not in f.read_text()
    with pytest.raises(ConfigError, match="mirrors.pytorch"):
        save_mirrors("", "not a url", f)
    new = tmp_path / "new" / "config.toml"
    save_mirrors("", "https://torch.mirror.example/whl", new)
    assert new.stat().st_mode & 0o777 == 0o600 and load_config(new).pytorch_mirror == "https://torch.mirror.example/whl"
