"""PyTorch through a mirror in the wizard, and a plan page that never says "ready" over an index it could not
reach (issue 21): the mirror fields on the plan page (public mirrors as choices, each checked by a request
against a package index on 127.0.0.1, clearing a field really clears it), the core's command-line advice worded
as the wizard's own buttons, the newer-Python offer as a button."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from fake_services import FakeServices, torch_plan
from test_wizard_flow import click_next, texts, wait_idle, wait_ready

from gpusetup.config import load_config
from gpusetup.gui.pages.base import PAGE_CHOOSE, PAGE_MACHINE, PAGE_PLAN
from gpusetup.gui.pages.plan import PlanPage
from gpusetup.gui.services import InstallOutcome, Services, Target, _outcome
from gpusetup.i18n import set_surface
from gpusetup.messages import add_note, msg, render
from gpusetup.mirrors import known
from gpusetup.model import Plan
from tests.compat.index_server import LocalIndex, build_wheel, metadata, serve


def render_cli(message, lang: str) -> str:
    """The command line's words for ``message`` (the surface the wizard's test left aside)."""
    set_surface(None)
    try:
        return render(message, lang)
    finally:
        set_surface("wizard")


CLI_ADVICE = re.compile(r"(?<![\w-])--[a-z][a-z-]+|gpusetup (?:install|plan|diagnose)\b")


@pytest.fixture(autouse=True)
def _config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A configuration file of the test's own (none of the tester's mirrors)."""
    cfg = tmp_path / "config.toml"
    monkeypatch.setenv("GPUSETUP_CONFIG", str(cfg))
    return cfg


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _index(tmp_path: Path) -> LocalIndex:
    """/whl/cu128/torch/ like download.pytorch.org (the fake plan's build) and /simple/<project>/ like PyPI."""
    idx = LocalIndex(tmp_path)
    idx.add("torch", build_wheel(tmp_path, "torch-2.9.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                                  metadata("torch", "2.9.1+cu128")), layout="cu128")
    idx.add("pip", build_wheel(tmp_path, "pip-25.3-py3-none-any.whl", metadata("pip", "25.3")))
    return idx


def to_plan(qtbot, make_wizard, services: FakeServices, language: str = "en"):
    w = make_wizard(services, language)
    click_next(qtbot, w, PAGE_MACHINE)
    click_next(qtbot, w, PAGE_CHOOSE)
    click_next(qtbot, w, PAGE_PLAN)
    wait_idle(qtbot, w)
    return w, w.currentPage()


# ----------------------------------------------------------------------------- the services' settings


def _plan_indexes(services: Services, tmp_path: Path) -> str:
    from gpusetup.compat.resolver import resolve

    m = FakeServices("rtx3060").machine
    # PyTorch (its own index, or the PyTorch mirror) and JAX (from PyPI, or the PyPI mirror): whether pip itself is
    # updated from the PyPI mirror depends on the Python's own pip (3.13's is new enough), so that is not relied on
    plan = Services.build_plan(services, resolve(m, ["pytorch", "jax"]), m, Target("venv", str(tmp_path / "env")))
    return " ".join(plan.indexes) + " " + " ".join(str(k) for k in plan.download_query.get("groups", {}))


def test_clearing_a_mirror_really_clears_it(tmp_path: Path, _config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistyped mirror could not be taken back: an empty field left the old one in use (issue 21)."""
    proxies = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
    for var in proxies:  # recorded as unset, so whatever the wizard sets is undone after the test, even a failed
        monkeypatch.setenv(var, "")  # one (a proxy left in the environment sent a later test's downloads to
        monkeypatch.delenv(var)  # proxy.example); delenv alone records nothing for a variable that is not set
    s = Services(tmp_path / "state")
    s.use_network(index_url="https://wrong.example/simple", proxy="http://proxy.example:3128")
    assert "wrong.example" in _plan_indexes(s, tmp_path)
    assert all(__import__("os").environ.get(v) == "http://proxy.example:3128" for v in proxies), "pip and uv use it"
    s.use_network(index_url=None, proxy=None)  # the install page's fields, emptied
    assert "wrong.example" not in _plan_indexes(s, tmp_path)
    assert not [v for v in proxies if v in __import__("os").environ], "the proxy is taken back"
    # the plan page's fields: empty is "no mirror", also over the configuration file's
    _config.write_text('[mirrors]\npytorch = "https://conf.example/pytorch/whl"\n')
    assert "conf.example/pytorch/whl/cu" in _plan_indexes(Services(tmp_path / "s2"), tmp_path)
    s.set_mirrors("", "")
    assert s.mirrors() == ("", "") and "conf.example" not in _plan_indexes(s, tmp_path)
    s.set_mirrors("", "https://m.example/pytorch/whl")
    assert "m.example/pytorch/whl/cu" in _plan_indexes(s, tmp_path) and s.mirrors() == ("", "https://m.example/pytorch/whl")


def test_each_mirror_is_checked_by_a_request_before_it_is_used(tmp_path: Path) -> None:
    s = Services(tmp_path / "state")
    idx = _index(tmp_path)
    with serve(idx):
        base = idx.url.replace("/simple/", "/whl")
        assert s.check_mirrors(idx.url, base, [torch_plan()]) == []
        assert ("/whl/cu128/torch/", None) in idx.requests  # the very page the install will ask
        assert ("/simple/pip/", None) in idx.requests
        bad = s.check_mirrors("", idx.url.replace("/simple/", "/nothing"), [torch_plan()])
    assert [p.code for p in bad] == ["wizard.mirror.pytorch-failed"]
    down = s.check_mirrors(f"http://127.0.0.1:{_closed_port()}/simple", "", [torch_plan()])
    assert [p.code for p in down] == ["wizard.mirror.pypi-failed"]
    set_surface("wizard")  # as the wizard reads it (tests/conftest.py puts the command line back)
    for lang in ("en", "zh_CN"):
        said = render(down[0], lang)
        assert "127.0.0.1" in said and not CLI_ADVICE.search(said), said
    typo = s.check_mirrors("not a url", "", [])
    assert [p.code for p in typo] == ["wizard.mirror.pypi-failed"] and "not a URL" in render(typo[0])
    assert s.index_url is None and s.pytorch_mirror is None  # checking changes nothing


# ----------------------------------------------------------------------------------------- the page


def test_the_plan_page_offers_the_mirrors_and_checks_them(qtbot, make_wizard, tmp_path: Path, _config: Path) -> None:
    services = FakeServices(state_dir=tmp_path / "state")
    w, page = to_plan(qtbot, make_wizard, services)
    assert isinstance(page, PlanPage)
    # the public mirrors are choices, not defaults: the fields are empty (the official indexes)
    assert page.pypi_edit.text() == "" and page.pytorch_edit.text() == ""
    assert page.pytorch_pick.count() == 1 + len(known("pytorch")) and page.pypi_pick.count() == 1 + len(known("pypi"))
    page.pytorch_pick.setCurrentIndex(1)
    page.pytorch_pick.activated.emit(1)
    assert page.pytorch_edit.text() == known("pytorch")[0].url
    builds = len(services.called("build_plan"))

    # a mirror that does not answer is not used, and the page says why
    page.pytorch_edit.setText(f"http://127.0.0.1:{_closed_port()}/pytorch/whl")
    page.mirrors_button.click()
    wait_ready(qtbot, w)
    assert page.mirrors_status.kind == "fail" and "127.0.0.1" in page.mirrors_status.text.text()
    assert services.pytorch_mirror is None and len(services.called("build_plan")) == builds

    # one that answers is used: the plan is made again through it, and kept for next time when asked
    idx = _index(tmp_path)
    with serve(idx):
        url = idx.url.replace("/simple/", "/whl")
        page.pytorch_edit.setText(url)
        page.mirrors_remember.setChecked(True)
        page.mirrors_button.click()
        wait_ready(qtbot, w)
    assert page.mirrors_status.kind == "pass", page.mirrors_status.text.text()
    assert services.pytorch_mirror == url and len(services.called("build_plan")) == builds + 1
    assert load_config().pytorch_mirror == url and str(_config) in page.mirrors_status.text.text()
    page.mirrors_remember.setChecked(False)
    assert services.called("resolve")[-1] == ("pytorch", "tensorflow", "jax")

    # cleared: no mirror, also on the next visit of the page
    page.pytorch_edit.clear()
    page.mirrors_button.click()
    wait_ready(qtbot, w)
    assert services.pytorch_mirror == "" and page.mirrors_status.kind == "pass"
    w.back()
    click_next(qtbot, w, PAGE_PLAN)
    wait_idle(qtbot, w)
    assert page.pytorch_edit.text() == ""
    w.stop_jobs()


def test_the_plan_is_made_again_when_a_mirror_changes_elsewhere(qtbot, make_wizard, tmp_path: Path) -> None:
    """The install page's "Use these and try again" changes the mirror: the plan page never shows the plan of
    the old one when the user comes back (issue 21)."""
    services = FakeServices(state_dir=tmp_path / "state")
    w, page = to_plan(qtbot, make_wizard, services)
    builds = len(services.called("build_plan"))
    w.back()
    click_next(qtbot, w, PAGE_PLAN)
    wait_idle(qtbot, w)
    assert len(services.called("build_plan")) == builds  # nothing changed: the same plan
    services.use_network(index_url="https://wrong.example/simple")
    w.back()
    click_next(qtbot, w, PAGE_PLAN)
    wait_idle(qtbot, w)
    assert len(services.called("build_plan")) == builds + 1
    services.use_network(index_url=None)
    w.back()
    click_next(qtbot, w, PAGE_PLAN)
    wait_idle(qtbot, w)
    assert len(services.called("build_plan")) == builds + 2
    w.stop_jobs()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_an_unreachable_index_is_said_on_the_plan_page(qtbot, make_wizard, tmp_path: Path, language: str) -> None:
    """"Everything is ready. Press Install" after saying the index could not be reached (issue 21)."""
    services = FakeServices(state_dir=tmp_path / "state")
    fp = torch_plan()
    add_note(fp, msg("live.offline-index", index="https://download.pytorch.org/whl/cu128/",
                     detail="download.pytorch.org: timed out", checked="2026-11-24"))
    services.fplans = [fp, *services.fplans[1:]]
    w, page = to_plan(qtbot, make_wizard, services, language)
    assert page.unreachable == ["https://download.pytorch.org/whl/cu128/"]
    assert page.status.kind == "warn"
    said = page.status.text.text()
    assert "https://download.pytorch.org/whl/cu128/" in said
    assert render(msg("wizard.mirrors.apply"), language) in said  # it names the button right there
    assert page.mirrors_section.expanded() and page.mirrors_section.isVisible()
    ready = {"en": "Everything is ready", "zh_CN": "一切就绪"}[language]
    assert ready not in texts(page)
    w.stop_jobs()


def test_the_newer_python_offer_is_a_button(qtbot, make_wizard, tmp_path: Path) -> None:
    """"To get it: gpusetup install --python 3.12" inside the wizard (issue 21): the wizard offers its own button
    for the same offer, and pressing it plans again for that Python."""
    services = FakeServices(state_dir=tmp_path / "state")
    offered = msg("install.note.newer-python", framework="pytorch", have="2.8", here="3.9", python="3.12", newer="2.15")

    def build_plan(fplans, machine, target):  # the fake's plan, with the core's note
        services.calls.append(("build_plan", tuple(p.framework for p in fplans)))
        plan = Plan(steps=list(services.steps))
        add_note(plan, offered)
        return plan

    services.build_plan = build_plan  # type: ignore[method-assign]
    seen: list[str | None] = []
    original = services.resolve

    def resolve(machine, frameworks=(), python_version=None):
        seen.append(python_version)
        return original(machine, frameworks, python_version)

    services.resolve = resolve  # type: ignore[method-assign]
    w, page = to_plan(qtbot, make_wizard, services)
    shown = texts(page)
    assert not CLI_ADVICE.search(shown), CLI_ADVICE.search(shown)
    assert page.python_button is not None and page.python_button.text() == "Use Python 3.12"
    page.python_button.click()
    wait_ready(qtbot, w)
    assert seen[-1] == "3.12" and page.python_version == "3.12"
    w.stop_jobs()


# ------------------------------------------------------------------------------- the wizard's words


@pytest.mark.parametrize("message", [
    msg("install.net.unreachable", url="https://download.pytorch.org/whl/cu128", error="timed out",
        via=msg("install.net.no-proxy")),
    msg("install.net.missing-credential", urls="https://u:****@m.example/simple", first="https://u:PASSWORD@m.example"),
    msg("install.note.newer-python", framework="pytorch", have="2.8", here="3.9", python="3.12", newer="2.15"),
    msg("note.gpu-not-used", index=1, reason=msg("left.other-vendor", vendor="NVIDIA", index=1)),
    msg("step.explain.reboot"),
    msg("install.exec.restart-now"),
    msg("docker.alt.no-driver"),
    msg("install.exec.no-space", path="/x", free="1", need="9", hint=msg("install.exec.hint-venv-path")),
    msg("install.exec.step-failed", step="Install torch", what="exit code 1", command="pip install torch", tail="x",
        hint="", log="/l"),
    msg("docker.alt.nothing-fits"),
    msg("install.exec.check-failed", step="Import jax", what="exit code 1", command="python -c import", tail="x",
        log="/l"),
    msg("install.exec.check-failed-repaired", step="Import jax", what="exit code 1", command="python -c import",
        tail="x", log="/l"),
    msg("install.exec.pip-broken", python="/env/bin/python"),
    msg("install.exec.plan-damaged", dir="/state/install"),
    msg("install.exec.missing-credentials", urls="https://u:****@m.example/simple", first="https://u:****@m.example"),
    msg("install.exec.nothing-to-resume"),
    msg("install.exec.not-restarted"),
])
def test_the_core_s_command_line_advice_in_the_wizard_s_words(message) -> None:
    """The index error banner with --index-url / --download-only, "`gpusetup plan` shows…", "To get it: gpusetup
    install --python 3.12": the same decision (code and parameters), worded for the wizard's buttons."""
    assert CLI_ADVICE.search(render(message)), "the core's words carry CLI advice (else this test proves nothing)"
    set_surface("wizard")  # what gpusetup.gui.i18n.install does for every wizard window (demos too)
    for lang in ("en", "zh_CN"):
        said = render(message, lang)
        assert said and not CLI_ADVICE.search(said), (lang, said)
        assert said != render_cli(message, lang)


def test_an_install_failure_reaches_the_wizard_in_its_words() -> None:
    """The install page shows the outcome's ``said``: the services adapter gives it the wizard's words."""
    class Result:
        ok, cancelled, failed_step, message, fix = False, False, "preflight", "english", "network"
        said = msg("install.net.unreachable", url="https://download.pytorch.org/whl/cu128", error="timed out",
                   via=msg("install.net.no-proxy"))

    out = _outcome(Result())
    assert isinstance(out, InstallOutcome) and out.said == Result.said  # the decision, unchanged
    assert CLI_ADVICE.search(render(out.said))  # the command line's words…
    set_surface("wizard")
    for lang in ("en", "zh_CN"):  # …and the wizard's, from the same message
        assert not CLI_ADVICE.search(render(out.said, lang)) and "download.pytorch.org/whl/cu128" in render(out.said, lang)
