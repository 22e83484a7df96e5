"""Credentials never leave memory: a real install from an index that needs a password, then every file under
the state folder and everything printed is searched for the planted secrets (issue 16, defect 1 and 5b)."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
from pathlib import Path

import pytest

from gpusetup import credentials
from gpusetup.cancel import CancelToken
from gpusetup.install import build_plan, execute, resume
from gpusetup.install.journal import Journal
from gpusetup.install.net import check_index
from gpusetup.install.stream import run_streaming
from gpusetup.messages import render

from .stand_ins import PLENTY, installed, machine, torch_plan

pytestmark = pytest.mark.network

PASSWORD = "s3cr3t-Pa55w0rd"
TOKEN = "hf_PlantedTokenAbcdefghijklmnopqrstuv"
PROXY_PASSWORD = "Pr0xy-Pa55"
SECRETS = (PASSWORD, TOKEN, PROXY_PASSWORD)


@pytest.fixture
def authed(index, monkeypatch: pytest.MonkeyPatch):
    credentials.forget_all()
    index.auth = ("alice", PASSWORD)
    index.auth_seen.clear()
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("HTTPS_PROXY", f"http://bob:{PROXY_PASSWORD}@127.0.0.1:9")  # bypassed (NO_PROXY)
    yield index
    index.auth = None
    credentials.forget_all()


def mirror(index) -> str:
    return index.url.replace("http://", f"http://alice:{PASSWORD}@") + "/whl"


def leaks(root: Path, *texts: str) -> list[str]:
    found = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            found += [f"{p}: {s}" for s in SECRETS if s.encode() in data]
    for i, t in enumerate(texts):
        found += [f"output {i}: {s}" for s in SECRETS if s in t]
    return found


def private(root: Path) -> list[str]:
    bad = []
    for p in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        if mode & 0o077:
            bad.append(f"{p.relative_to(root.parent)} {oct(mode)}")
    return bad


def cli(*argv: str) -> tuple[int, str]:
    from gpusetup.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue() + err.getvalue()


def test_password_in_mirror_url_installs_and_never_reaches_disk_or_screen(authed, tmp_path: Path) -> None:
    jdir = tmp_path / "state"
    venv = tmp_path / "env"
    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), f"venv:{venv}",
                      with_pip=False, host_pip=True, pytorch_mirror=mirror(authed))
    pip_step = next(s for s in plan.steps if s.id == "pip-install")
    masked = authed.url.replace("http://", "http://alice:****@") + "/whl/cu126"
    assert masked in pip_step.argv and plan.indexes == [masked]
    from gpusetup.commands.install import render_plan

    shown = render_plan(plan, machine(), state_dir=jdir)
    token = CancelToken()
    seen: list[str] = []

    def progress(said: object, frac: float | None) -> None:
        label = render(said)  # type: ignore[arg-type]
        seen.append(label)
        if label.startswith("Step 2 of"):
            token.cancel()  # stop pip as it starts: an unfinished install that --resume must complete

    # the pre-check reaches the index with the password (user:PASS@127.0.0.1 is not taken as the host name)
    first = execute(plan, journal_dir=jdir, progress=progress, cancel=token, free_space=PLENTY)
    assert first.cancelled and first.failed_step == "pip-install", first.message
    assert True in authed.auth_seen and False not in authed.auth_seen

    # a new process knows no password: resume stops, says where to give it, and changes nothing
    credentials.forget_all()
    before = len(Journal(jdir).read())
    again = resume(jdir, progress=lambda said, f: seen.append(render(said)))
    assert not again.ok and "never saves passwords" in again.message and "--index-url" in again.message
    assert "alice:****@" in again.message
    assert len(Journal(jdir).read()) == before

    # asked on a terminal: the answer is used for this run only
    asked: list[str] = []
    done = resume(jdir, progress=lambda said, f: seen.append(render(said)),
                  ask_secret=lambda url: asked.append(url) or PASSWORD)
    assert done.ok, done.message
    assert asked == [authed.url.replace("http://", "http://alice:****@")]
    assert installed(venv)["torch"] == "2.9.1+cu126"
    assert authed.auth_seen.count(True) >= 3 and False not in authed.auth_seen  # pip sent the password too

    texts = (shown, first.message, again.message, done.message, "\n".join(seen))
    assert leaks(jdir, *texts) == []
    assert private(jdir) == []
    assert "alice:****@" in (jdir / "plan.json").read_text()


def test_cli_install_and_resume_print_no_secret(authed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line: --dry-run output, and --resume --index-url given again."""
    profile = tmp_path / "profile.json"
    profile.write_text('{"system": {"os": "linux", "distro_id": "ubuntu", "distro_version": "24.04", '
                       '"arch": "x86_64", "python_version": "3.12.3"}, "gpus": []}')
    url = authed.url.replace("http://", f"http://alice:{PASSWORD}@") + "/simple"
    rc, out = cli("install", "--for", str(profile), "--dry-run", "--index-url", url, "--pytorch-mirror", mirror(authed),
                  "--state-dir", str(tmp_path / "state"))
    assert rc == 0, out
    assert "alice:****@" in out and PASSWORD not in out
    # --resume with nothing to resume still must not echo what it was given
    rc, out = cli("-v", "install", "--resume", "--yes", "--index-url", url, "--state-dir", str(tmp_path / "s2"))
    assert PASSWORD not in out


def test_check_index_with_credentials_in_the_url(authed) -> None:
    good = check_index(authed.url.replace("http://", f"http://alice:{PASSWORD}@") + "/simple", "tinydep")
    assert good.ok, good.message
    bad = check_index(authed.url.replace("http://", "http://alice:wrong-pw@") + "/simple", "tinydep")
    assert not bad.ok and "HTTP 401" in bad.message and "wrong-pw" not in bad.message


def test_child_output_with_secrets_is_masked_in_log_and_tail(authed, tmp_path: Path) -> None:
    credentials.remember(mirror(authed))
    log = io.StringIO()
    code = ("import os; print(os.environ['HF_TOKEN']); print('proxy', os.environ['HTTPS_PROXY']); "
            f"print('Looking in indexes: {mirror(authed)}')")
    res = run_streaming([sys.executable, "-c", code], timeout=30, log=log)
    assert res.ok
    text = log.getvalue() + "\n".join(res.tail)
    assert leaks(tmp_path, text) == [], text
    assert "bob:****@127.0.0.1:9" in text and "alice:****@" in text


def test_the_secret_goes_to_pip_in_its_environment_not_its_command_line(authed) -> None:
    full = authed.url.replace("http://", f"http://alice:{PASSWORD}@") + "/simple"
    masked = credentials.remember(full)
    argv, env = credentials.for_child([sys.executable, "-m", "pip", "install", "--index-url", masked, "x==1"])
    assert argv == [sys.executable, "-m", "pip", "install", "x==1"]
    assert env == {"PIP_INDEX_URL": full}
    argv, env = credentials.for_child(["/usr/bin/uv", "pip", "install", f"--extra-index-url={masked}", "x"])
    assert argv == ["/usr/bin/uv", "pip", "install", "x"] and env == {"UV_EXTRA_INDEX_URL": full}
    credentials.forget_all()
    with pytest.raises(credentials.MissingCredential):
        credentials.for_child(["pip", "install", "-i", masked, "x"])


@pytest.mark.parametrize("text, want", [
    ("http://user:PASS1234@host/simple", "http://user:****@host/simple"),
    ("pip -i https://__token__:pypi-AgEIcHlwaS5vcmc@upload.pypi.org/legacy/ x",
     "pip -i https://__token__:****@upload.pypi.org/legacy/ x"),
    ("git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r",
     "git clone https://****@github.com/o/r"),
    ("proxy=http://u:p%40ss@proxy.corp:3128", "proxy=http://u:****@proxy.corp:3128"),
    ("https://pypi.org/simple and torch==2.9.1+cu126 user@example.com", None),
])
def test_scrub_masks_user_info_and_keeps_the_rest(text: str, want: str | None) -> None:
    assert credentials.scrub(text) == (want if want is not None else text)


def test_state_files_are_private_and_an_existing_folder_is_left_as_it_was(tmp_path: Path) -> None:
    """Issue 25: gpusetup never chmods a folder it did not create (`--state-dir /tmp` made /tmp 0700); what it
    writes there is private file by file. (A new folder is created 0700: tests/hostile/test_state_safety.py.)"""
    jdir = tmp_path / "state"
    jdir.mkdir(mode=0o755)
    os.chmod(jdir, 0o755)
    Journal(jdir).append("plan", target="x", steps=[])
    (jdir / "plan.json").touch()
    from gpusetup.install.journal import InstallLock

    with InstallLock(jdir):
        pass
    assert stat.S_IMODE(jdir.stat().st_mode) == 0o755
    assert stat.S_IMODE((jdir / "journal.jsonl").stat().st_mode) == 0o600
    assert stat.S_IMODE((jdir / "install.lock").stat().st_mode) == 0o600


def test_script_for_an_authenticated_mirror_holds_no_password(authed) -> None:
    from gpusetup.install import render_script

    plan = build_plan(torch_plan("https://download.pytorch.org/whl/cu126"), machine(), "venv:~/gpu-env",
                      portable=True, pytorch_mirror=mirror(authed))
    for shell in ("bash", "powershell"):
        text = render_script(plan, shell)
        assert PASSWORD not in text and "alice:****@" in text
        assert "gpusetup never writes passwords into files" in text


def test_emitted_project_file_holds_no_password(authed, tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text('{"system": {"os": "linux", "distro_id": "ubuntu", "distro_version": "24.04", '
                       '"arch": "x86_64", "python_version": "3.12.3"}, "gpus": []}')
    url = authed.url.replace("http://", f"http://alice:{PASSWORD}@") + "/simple"
    out_file = tmp_path / "requirements.txt"
    rc, out = cli("plan", "--for", str(profile), "--emit", "requirements", "-o", str(out_file),
                  "--index-url", url, "--pytorch-mirror", mirror(authed))
    assert rc in (0, 1, 2), out
    text = out_file.read_text()
    assert PASSWORD not in text and PASSWORD not in out and "127.0.0.1" in text
    rc, out = cli("plan", "--for", str(profile), "--emit", "requirements", "--index-url", url,
                  "--pytorch-mirror", mirror(authed))
    assert PASSWORD not in out


def test_a_variable_removed_by_another_thread_while_scrubbing_is_no_crash() -> None:
    """os.environ lists its keys, then reads each one again: a variable removed in between (in CI a test
    removed QT_QPA_PLATFORM while a wizard worker logged through the scrubbing filter) raised KeyError out
    of the log filter. This mapping behaves as os.environ does when that happens once."""
    from collections.abc import Iterator, Mapping

    class ChangingEnviron(Mapping[str, str]):
        def __init__(self) -> None:
            self.data = {"QT_QPA_PLATFORM": "offscreen", "PIP_INDEX_URL": f"https://bob:{PASSWORD}@mirror.example/simple"}
            self.removed = False

        def __iter__(self) -> Iterator[str]:
            return iter(list(self.data))

        def __len__(self) -> int:
            return len(self.data)

        def __getitem__(self, key: str) -> str:
            if key == "QT_QPA_PLATFORM" and not self.removed:
                self.removed = True  # another thread's `del os.environ[...]` lands between the two reads
                del self.data[key]
            return self.data[key]

    credentials._absorb_environment(ChangingEnviron())
    assert PASSWORD not in credentials.scrub(f"pip said https://bob:{PASSWORD}@mirror.example/simple/torch/")
