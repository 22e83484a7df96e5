"""The command line speaks English or 简体中文: `--lang`, `GPUSETUP_LANG`, `defaults.language` in the
configuration file, else the locale. The plan and the self-test printed in Chinese carry no English sentence
(the same checker the wizard walk uses, tests/gui/beginner_text.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gui.beginner_text import english_runs

from gpusetup import i18n
from gpusetup.cli import main
from gpusetup.config import ConfigError, load_config
from gpusetup.resources import resource

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize(("option", "env", "configured", "expected"), [
    ("zh_CN", {"GPUSETUP_LANG": "en"}, "en", "zh_CN"),  # the option wins
    (None, {"GPUSETUP_LANG": "zh-CN"}, "en", "zh_CN"),  # then the environment
    (None, {}, "zh_CN", "zh_CN"),  # then the configuration file
    (None, {"LANG": "zh_CN.UTF-8"}, None, "zh_CN"),  # then the locale
    (None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, None, "en"),  # LC_ALL decides before LANG
    (None, {"LANG": "zh_TW.UTF-8"}, None, "en"),  # traditional Chinese has no catalogue: English
    (None, {"GPUSETUP_LANG": "fr"}, None, "en"),  # an unknown language falls through
    ("en", {"LANG": "zh_CN.UTF-8"}, "zh_CN", "en"),
    # gettext's order: LANGUAGE (a priority list) before LC_ALL / LC_MESSAGES / LANG (issue 24)
    (None, {"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}, None, "zh_CN"),
    (None, {"LANGUAGE": "en", "LC_ALL": "zh_CN.UTF-8"}, None, "en"),
    (None, {"LANGUAGE": "fr:zh_CN", "LC_MESSAGES": "de_DE.UTF-8"}, None, "zh_CN"),  # the first with a catalogue
    (None, {"LANGUAGE": "fr", "LANG": "zh_CN.UTF-8"}, None, "en"),  # none of its languages: untranslated
    (None, {"LANGUAGE": "zh_CN", "LC_ALL": "C"}, None, "en"),  # as in gettext: ignored in the C locale
    (None, {"LANGUAGE": "zh_CN:en"}, None, "en"),  # no locale set is the C locale
    (None, {"LANGUAGE": "", "LANG": "zh_CN.UTF-8"}, None, "zh_CN"),  # empty: not set
    (None, {"LANGUAGE": "zh_TW:zh_CN", "LANG": "en_US.UTF-8"}, None, "zh_CN"),
    ("en", {"LANGUAGE": "zh_CN", "LANG": "zh_CN.UTF-8"}, None, "en"),  # --lang still wins
])
def test_the_language_comes_from_option_environment_configuration_then_locale(option, env, configured, expected) -> None:
    assert i18n.choose_language(option, configured, env) == expected


def test_the_configuration_file_names_a_language(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[defaults]\nlanguage = "zh_CN"\n', encoding="utf-8")
    assert load_config(cfg).language == "zh_CN"
    cfg.write_text('[defaults]\nlanguage = "klingon"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="defaults.language"):
        load_config(cfg)


def test_a_bad_language_is_refused_with_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "fr", "plan", "--offline"]) == 3
    assert "invalid choice" in capsys.readouterr().err


def _chinese_without_english(text: str) -> None:
    assert CJK.search(text), text
    # names that read the same in both languages: this machine's GPUs and the option labels (cu126 …)
    allowed = ["NVIDIA GeForce RTX 3060 Mobile / Max-Q", "AMD Cezanne [Radeon Vega Series / Radeon Vega Mobile Series]"]
    runs = [(line, run) for line in text.splitlines() if not line.lstrip().startswith("$")
            for run in english_runs(line, allowed)]
    assert not runs, runs


@pytest.mark.parametrize("demo", ["rtx3060", "two-gpus", "no-driver", "no-gpu", "a100"])
def test_plan_for_a_recorded_machine_in_chinese(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--offline", "--for", str(resource("demo", f"{demo}.json")), "-f", "pytorch", "-f", "jax"]
    assert main(["--lang", "zh_CN", *argv]) in (0, 1)
    zh = capsys.readouterr().out
    _chinese_without_english(zh)
    assert main(argv) in (0, 1)  # and English again without the option (the language is per command)
    en = capsys.readouterr().out
    assert en.startswith("Machine: ") and "\nGPUs: " in en
    assert not CJK.search(en)
    # the option also works after the command's name
    assert main([*argv, "--lang", "zh_CN"]) in (0, 1)
    assert capsys.readouterr().out == zh


def test_selftest_on_this_gpu_less_machine_in_chinese(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """No NVIDIA driver here (none is installed on the test machines): the GPU tier says so, the CPU tier
    and the framework check (numpy, in this interpreter) run; all of it in Chinese."""
    monkeypatch.setenv("GPUSETUP_LANG", "zh_CN")
    monkeypatch.setenv("GPUSETUP_LIBCUDA", "/nonexistent/libcuda.so.1")  # the same on a machine with a driver
    assert main(["selftest", "--framework", "numpy"]) in (0, 1)
    out = capsys.readouterr().out
    assert "gpusetup 自检（快速）：没有测试 NVIDIA 显卡" in out
    assert "无法测试 NVIDIA 显卡" in out and "CPU 基准" in out and "结果：" in out
    _chinese_without_english(out)


def test_docker_set_up_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The container generator's reasons (written or refused) and the command's own lines, in Chinese."""
    ok = main(["--lang", "zh_CN", "docker", "--for", str(resource("demo", "rtx3060.json")), "--framework", "pytorch",
               "--out", str(tmp_path / "set-up")])
    assert ok in (0, 1)
    out = capsys.readouterr().out
    assert "已把 pytorch 的显卡容器配置写到" in out and "主机检查：" in out
    _chinese_without_english("\n".join(line for line in out.splitlines() if "基础镜像" not in line and "框架：" not in line))
    refused = main(["--lang", "zh_CN", "docker", "--for", str(resource("demo", "no-gpu.json")), "--framework", "pytorch",
                    "--out", str(tmp_path / "none")])
    assert refused == 2
    _chinese_without_english(capsys.readouterr().err)


def test_analyze_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpusetup analyze` of what users sent (recorded issue texts): its headings, labels, the kind of each
    input, finding titles, meanings and fixes (issue 21) and what is missing, in Chinese. Quoted as it is: the
    input's own lines (evidence, facts) and a rule's English detail (shown under its Chinese label)."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    inputs = [str(fixtures / "recorded-issues" / "F05__rtx-5090-sm120-torch-2.0.1-cu118__deepprep-233.txt"),
              str(fixtures / "collect-env" / "windows10-home__cpu-only__torch-1.4.0+cpu__pytorch-issue-33473.txt")]
    rc = main(["--lang", "zh_CN", "analyze", *inputs])
    zh = capsys.readouterr().out
    assert main(["analyze", *inputs]) == rc  # the same verdict in both languages
    en = capsys.readouterr().out
    assert "Findings (most severe first):" in en and "What it means:" in en and not CJK.search(en)
    assert "发现的问题（最严重的在前）：" in zh and "这意味着：" in zh and "从输入中读到的信息：" in zh
    assert "文字中提到的框架版本" in zh  # the kind of input, in words
    own, quoted = [], False
    for line in zh.splitlines():
        if line.startswith("    ") and not line.startswith("      "):  # a label line opens a block
            quoted = line.lstrip().startswith("规则的原文")
        if quoted or line.startswith("      ") or "：" in line[:14] and line.startswith("  ") and not line.startswith("    "):
            continue  # a quoted block or its continuation lines, evidence, or a fact (label：the input's value)
        own.append(line.split(".txt: ", 1)[-1])  # an input line: its file name is the user's
    # an error message the user will see is quoted as it is, in “…” (it may be wrapped over two lines)
    _chinese_without_english(re.sub(r"“[^”]*”", "“”", "\n".join(own)))


def test_db_config_and_bundle_lines_in_chinese(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`db info`, `config show`/`init` and the lines `bundle` prints around its file, in Chinese; table and
    key names, paths and dates are quoted as they are."""
    monkeypatch.setenv("GPUSETUP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUSETUP_CONFIG", str(tmp_path / "config.toml"))
    assert main(["--lang", "zh_CN", "db", "info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("兼容性数据版本 ") and "数据表" in out and "已核实" in out
    _chinese_without_english("\n".join(line.split()[0] if line[:1].islower() else line for line in out.splitlines()))
    assert main(["--lang", "zh_CN", "config", "show"]) == 0
    out = capsys.readouterr().out
    assert "（未设置）" in out
    _chinese_without_english(out)
    monkeypatch.chdir(tmp_path)
    assert main(["--lang", "zh_CN", "bundle", "--no-plan", "-o", "b.zip"]) == 0
    out = capsys.readouterr().out
    assert "已写入 b.zip" in out and "gpusetup analyze b.zip" in out
    _chinese_without_english(out)
