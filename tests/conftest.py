"""Shared test set-up: fixture paths, offscreen Qt, no real GPU access."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["GPUSETUP_LIVE"] = "off"  # no plan-time index check against the real PyPI (tests/compat/test_live.py turns it on)
os.environ["GPUSETUP_LANG"] = "en"  # the CLI's words do not follow the tester's locale (tests/cli/test_language.py)
sys.path.insert(0, str(ROOT / "tests"))  # `from fakes.runner import FakeRunner`
# A run started in the background by a non-interactive shell (`nohup ... &`, some CI launchers) inherits SIGINT
# ignored; Python then installs no KeyboardInterrupt handler, here or in the gpusetup processes the Ctrl-C tests
# start (an ignored signal stays ignored across exec). Those tests are about gpusetup, not about how pytest was
# launched: give this process Python's normal handler, so its children start with the default disposition too.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _english_output_after_each_test():
    """The process-wide output language (gpusetup --lang, the wizard's language) never leaks into the next test."""
    yield
    from gpusetup.i18n import set_output_language, set_surface

    set_output_language(None)
    set_surface(None)  # nor does the wizard's surface (its words for its own pages, gpusetup.i18n.set_surface)


@pytest.fixture(autouse=True)
def _fresh_index_memory():
    """gpusetup.compat.download_size keeps index answers in memory for 10 minutes: each test starts without
    them (tests switch their local index between JSON and HTML, or serve other files under the same URL)."""
    yield
    sizes = sys.modules.get("gpusetup.compat.download_size")
    if sizes is not None:
        sizes.forget()


_NETWORK_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy",
                      "NO_PROXY", "no_proxy", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL")


@pytest.fixture(autouse=True)
def _no_network_setting_leaks():
    """A proxy or index a test (or the wizard under test) puts into the process environment must not outlive the
    test: one left behind sent a later test's downloads to proxy.example (found in a fresh Debian root, where the
    wheels are not in a local cache)."""
    before = {v: os.environ.get(v) for v in _NETWORK_VARIABLES}
    yield
    after = {v: os.environ.get(v) for v in _NETWORK_VARIABLES}
    changed = sorted(v for v in _NETWORK_VARIABLES if before[v] != after[v])
    for v in changed:  # put back first, so one leak does not fail every test after it
        if before[v] is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = before[v]  # type: ignore[assignment]
    assert not changed, f"the test left network settings in the environment: {changed}"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def fixture_text(rel: str) -> str:
    return (FIXTURES / rel).read_text(encoding="utf-8", errors="replace")


# ----------------------------------------------------------------------------- a green run means tested
# Two rules (issue 16): a run in which nothing was tested is not a pass (`-m gpu` on a machine without a GPU
# skips everything), and in CI (CI=true, as GitHub/GitLab set it, or GPUSETUP_STRICT_SKIPS=1) a test skipped
# because a tool is missing (a C compiler for the fake libcuda, Chromium, a validator) fails the run: CI must
# install it (.ci/run does). Only the real-GPU tests (tests/gpu/) and platform skips may skip there.
_ALLOWED_IN_CI = ("tests/gpu/", )
_ALLOWED_REASONS = ("this machine has a working NVIDIA driver", "the Linux launcher", "Windows", "PR_SET_PDEATHSIG",
                    "ptxas not installed",
                    "mount namespaces are not usable here")  # a chroot or container, not a missing tool
_skips: list[tuple[str, str]] = []
_ran: list[str] = []


def _strict() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("GPUSETUP_STRICT_SKIPS") == "1"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skips.append((report.nodeid, reason.removeprefix("Skipped: ")))
    elif report.when == "call" and (report.passed or report.failed):
        _ran.append(report.nodeid)


def _forbidden_skips() -> list[tuple[str, str]]:
    return [(n, r) for n, r in _skips
            if not n.startswith(_ALLOWED_IN_CI) and not any(a in r for a in _ALLOWED_REASONS)]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus != 0:
        return
    if _skips and not _ran or _strict() and _forbidden_skips():
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus: int) -> None:  # noqa: ANN001 - pytest's reporter
    tr = terminalreporter
    if _skips and not _ran:
        reasons = sorted({r for _, r in _skips})
        tr.write_line(f"NOTHING WAS TESTED: all {len(_skips)} selected tests were skipped "
                      f"({'; '.join(reasons)[:300]}). That is not a pass.", red=True, bold=True)
    elif _strict() and _forbidden_skips():
        bad = _forbidden_skips()
        tr.write_line(f"CI: {len(bad)} tests were skipped for a missing tool; in CI that is a failure "
                      "(install it, as .ci/run does):", red=True, bold=True)
        for reason in sorted({r for _, r in bad}):
            tr.write_line(f"  {sum(1 for _, r in bad if r == reason)} × {reason}", red=True)
