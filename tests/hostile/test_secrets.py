"""One credential scrubber for everything printed, logged, cached or bundled (issue 25 "Secrets"):

* proxy passwords in pip's scheme-less form (`user:pass@host:port`, in HTTP_PROXY/https_proxy or pip.conf
  `proxy =`) went into the support bundle in clear;
* `?token=` / `?key=` query values, .netrc entries;
* a command's recorded output (the report's `commands`, the bundle) and the runner's debug log.
"""

from __future__ import annotations

import logging
import sys
import zipfile
from pathlib import Path

import pytest
from report.sample import sample_report

from gpusetup import credentials
from gpusetup.bundle import build_bundle
from gpusetup.bundle.redact import Redactor
from gpusetup.credentials import scrub
from gpusetup.runner import SubprocessRunner

pytestmark = pytest.mark.hostile


@pytest.fixture(autouse=True)
def _fresh_memory():
    credentials.forget_all()
    yield
    credentials.forget_all()


@pytest.mark.parametrize("text, secret, kept", [
    ("proxy = carol:Pr0xyPa55@proxy.corp:3128", "Pr0xyPa55", "proxy.corp:3128"),
    ("HTTP_PROXY=carol:Pr0xyPa55@proxy.corp:3128", "Pr0xyPa55", "proxy.corp:3128"),
    ("https_proxy=carol:p%40ss-W0rd@10.1.2.3:8080", "p%40ss-W0rd", "10.1.2.3:8080"),
    ("pip install --proxy carol:Pr0xyPa55@localhost:3128 torch", "Pr0xyPa55", "localhost:3128 torch"),
    ("https://mirror.corp/simple/?token=T0k3nValue42&x=1", "T0k3nValue42", "mirror.corp/simple/?token="),
    ("GET https://h/obj?X-Amz-Signature=abcdef0123456789&X-Amz-Date=2026", "abcdef0123456789", "X-Amz-Date=2026"),
    ("curl 'https://api.corp/v1?key=AIzaK3yValue9' -o x", "AIzaK3yValue9", "api.corp/v1?key="),
    ("machine pypi.corp login carol password N3trcPa55", "N3trcPa55", "machine pypi.corp login carol"),
    ("https://carol:UrlPa55@pypi.corp/simple", "UrlPa55", "pypi.corp/simple"),
])
def test_the_scrubber_masks_every_form(text: str, secret: str, kept: str) -> None:
    out = scrub(text)
    assert secret not in out and kept in out, out


@pytest.mark.parametrize("text", [
    "torch==2.9.1+cu126", "git@github.com:org/repo.git", "alice@example.com wrote", "Version: 8.6.1.6",
    "time 12:30@noon", "https://pypi.org/simple?page=2", "login shell: /bin/bash",
])
def test_the_scrubber_leaves_ordinary_text_alone(text: str) -> None:
    assert scrub(text) == text


def test_netrc_passwords_are_masked_wherever_they_appear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine pypi.corp\n  login carol\n  password Only1nNetrc\n")
    monkeypatch.setenv("NETRC", str(netrc))
    assert "Only1nNetrc" not in scrub("pip said: 401 for carol with Only1nNetrc")


def test_scheme_less_proxy_passwords_never_reach_the_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report, ctx = sample_report(tmp_path)
    home = tmp_path / "userhome"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nproxy = dave:Pr0xyConfPa55@proxy.corp:3128\n"
        "index-url = https://mirror.corp/simple?token=ConfT0kenValue\n")
    ctx.env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CONFIG_DIRS": str(tmp_path / "x"),
               "HTTP_PROXY": "erin:EnvPr0xyPa55@proxy.corp:3128", "https_proxy": "erin:EnvPr0xyPa55@proxy.corp:3128"}
    monkeypatch.setenv("HTTPS_PROXY", "frank:ProcPr0xyPa55@proxy.corp:8080")  # this process's own environment
    result = build_bundle(tmp_path / "b.zip", report, ctx, python="python3",
                          redactor=Redactor(usernames={"alice"}, hostnames={"gpu-node-17"}))
    with zipfile.ZipFile(result.path) as zf:
        blob = "\n".join(zf.read(n).decode("utf-8", "replace") for n in zf.namelist())
        cfg = zf.read("raw/package-index-config.txt").decode()
    for secret in ("Pr0xyConfPa55", "ConfT0kenValue", "EnvPr0xyPa55", "ProcPr0xyPa55"):
        assert secret not in blob, secret
    assert "proxy.corp:3128" in cfg and "mirror.corp/simple" in cfg


def test_a_commands_output_is_scrubbed_in_the_report_and_the_debug_log(caplog: pytest.LogCaptureFixture) -> None:
    r = SubprocessRunner()
    code = "print('proxy = gina:CmdPr0xyPa55@proxy.corp:3128 and https://h/x?token=CmdT0kenValue')"
    with caplog.at_level(logging.DEBUG, logger="gpusetup.runner"):
        res = r.run([sys.executable, "-c", code])
    assert res.ok
    rec = r.records[-1]
    for secret in ("CmdPr0xyPa55", "CmdT0kenValue"):
        assert secret not in rec.stdout_tail
        assert secret not in caplog.text


def test_a_token_mirror_is_remembered_masked_and_given_back_to_pip() -> None:
    """A ?token= mirror stands masked in the plan, journal and screen; pip still gets the real URL (in its
    environment, not on the command line)."""
    masked = credentials.remember("https://mirror.corp/simple?token=R3alT0kenValue")
    assert masked == "https://mirror.corp/simple?token=****"
    argv, env = credentials.for_child(["pip", "install", "--index-url", masked, "torch"])
    assert argv == ["pip", "install", "torch"]
    assert env == {"PIP_INDEX_URL": "https://mirror.corp/simple?token=R3alT0kenValue"}
    credentials.forget_all()
    with pytest.raises(credentials.MissingCredential):  # --resume in a new process: asked again, not guessed
        credentials.for_child(["pip", "install", "--index-url", masked, "torch"])
