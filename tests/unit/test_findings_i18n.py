"""The Chinese finding catalogue is valid, covers every finding id the rules can emit, and has no stale ids.

Ids are collected from the rules' source (``make("id", …)``, ``Finding(id=…)``, ``@rule("id")``,
``@report_rule("id")``), so a new rule or a new finding id without a translation fails here, and the
registries are cross-checked so the scan cannot silently miss a rule module.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import gpusetup.i18n as fi18n
from gpusetup import rules
from gpusetup.model import Finding, Machine, Severity, from_dict
from gpusetup.resources import resource
from gpusetup.rules import report_level

RULES_DIR = Path(rules.__file__).parent
CATALOGUE = resource("translations", "findings_zh_CN.json")
SCHEMA = resource("schema", "findings_i18n.schema.json")
# The only place allowed to pass a non-literal id: make() itself, which forwards its caller's literal.
DYNAMIC_OK = {("_util.py", "make"), ("data.py", "evaluate_entry"), ("data.py", "_register"),
              ("hostcheck.py", "_finding")}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _owners(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node → the name of the function it is in ("<module>" at top level)."""
    owner: dict[ast.AST, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else name
            owner[child] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


# The Docker host check (generate/hostcheck.py) emits findings too; the wizard shows them after "Docker setup".
GENERATE_DIR = RULES_DIR.parent / "generate"


def emitted_ids(root: Path | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """(id → where it appears, places that build an id dynamically) over every module under ``root``
    (default: the rules and the container generator's host check)."""
    ids: dict[str, list[str]] = {}
    dynamic: list[str] = []
    roots = [root] if root is not None else [RULES_DIR, GENERATE_DIR]
    for path in sorted(p for r in roots for p in r.rglob("*.py")):
        root = next(r for r in roots if r in path.parents)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners = _owners(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("make", "rule", "report_rule", "_finding"):
                arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("fid", "rule_id")), None)
            elif name == "Finding":
                arg = next((k.value for k in node.keywords if k.arg == "id"), node.args[0] if node.args else None)
            else:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                ids.setdefault(arg.value, []).append(where)
            elif (path.name, owners.get(node, "<module>")) not in DYNAMIC_OK:
                dynamic.append(f"{where} ({name} in {owners.get(node, '<module>')})")
    if root == RULES_DIR:
        # The data catalogue (resources/diagnostics/*.json): data.py registers and emits each entry's id.
        for path in sorted(resource("diagnostics").glob("*.json")):
            for entry in json.loads(path.read_text(encoding="utf-8")).get("entries", []):
                ids.setdefault(entry["id"], []).append(f"resources/diagnostics/{path.name}")
    return ids, sorted(dynamic)


def _doc() -> dict:
    return json.loads(CATALOGUE.read_text(encoding="utf-8"))


def test_catalogue_matches_its_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = _doc()
    jsonschema.validate(doc, schema)
    assert doc["language"] == "zh_CN"


def test_schema_rejects_an_entry_without_meaning() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = _doc()
    doc["findings"]["no-gpu"] = {"title": "没有显卡"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_no_finding_id_is_built_dynamically() -> None:
    _, dynamic = emitted_ids()
    assert not dynamic, f"finding ids built at run time cannot be checked for a translation: {dynamic}"


def test_scan_sees_every_registered_rule() -> None:
    ids, _ = emitted_ids()
    registered = {r.id for r in rules.all_rules()} | set(report_level._REPORT_RULES)
    assert registered, "no rules registered"
    assert registered <= set(ids), f"rules the source scan missed: {sorted(registered - set(ids))}"


def test_every_emitted_id_has_a_translation() -> None:
    ids, _ = emitted_ids()
    missing = {i: ids[i] for i in sorted(set(ids) - set(_doc()["findings"]))}
    assert not missing, f"add these to {CATALOGUE.name} (id: where the rule emits it): {missing}"


def test_no_translation_for_an_id_that_no_longer_exists() -> None:
    ids, _ = emitted_ids()
    stale = sorted(set(_doc()["findings"]) - set(ids))
    assert not stale, f"{CATALOGUE.name} has entries no rule emits any more: {stale}"


def test_the_scan_would_catch_a_new_untranslated_rule(tmp_path: Path) -> None:
    """Guards the guard: a new rule module with a new id, and one with a computed id, are both noticed."""
    (tmp_path / "new.py").write_text(
        "from gpusetup.rules import rule\nfrom gpusetup.rules._util import make\n\n"
        "@rule('brand-new-check')\ndef f(machine):\n    return [make('brand-new-finding', None, 't')]\n\n"
        "def g(machine, kind):\n    return [make(f'made-{kind}', None, 't')]\n",
        encoding="utf-8",
    )
    ids, dynamic = emitted_ids(tmp_path)
    assert {"brand-new-check", "brand-new-finding"} <= set(ids)
    assert not {"brand-new-check", "brand-new-finding"} <= set(_doc()["findings"])
    assert len(dynamic) == 1 and "in g)" in dynamic[0]


def test_entries_are_chinese_and_say_something() -> None:
    for fid, e in _doc()["findings"].items():
        for key in ("title", "meaning"):
            text = e[key]
            assert len(CJK.findall(text)) >= 4, (fid, key, text)
            assert text.count("`") % 2 == 0, f"unbalanced command quote in {fid}.{key}"
        assert e["meaning"].endswith(("。", "）", "”")), (fid, e["meaning"])
        assert not e["title"].endswith("。"), fid


def test_findings_of_the_demo_machines_are_translated() -> None:
    for path in sorted(resource("demo").glob("*.json")):
        machine = from_dict(Machine, json.loads(path.read_text(encoding="utf-8"))["machine"])
        for f in rules.evaluate(machine):
            assert fi18n.finding_text(f, "zh_CN") is not None, (path.name, f.id)


def test_finding_text() -> None:
    f = Finding(id="nvidia-driver-missing", severity=Severity.ERROR, title="An NVIDIA GPU is installed, but the NVIDIA driver is not")
    title, meaning = fi18n.finding_text(f, "zh_CN") or ("", "")
    assert "驱动程序" in title and "显卡" in meaning
    assert fi18n.finding_text("nvidia-driver-missing", "zh-CN") == (title, meaning)
    assert fi18n.finding_text(f, "en") is None
    assert fi18n.finding_text(f, None) is None
    assert fi18n.finding_text("not-a-finding", "zh_CN") is None


def test_a_broken_catalogue_means_english_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "findings_zh_CN.json"
    bad.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(fi18n, "resource", lambda *parts: tmp_path / parts[-1])
    fi18n.catalogue.cache_clear()
    try:
        assert fi18n.finding_text("no-gpu", "zh_CN") is None
        bad.unlink()
        fi18n.catalogue.cache_clear()
        assert fi18n.finding_text("no-gpu", "zh_CN") is None
    finally:
        fi18n.catalogue.cache_clear()


def test_loader_does_not_import_qt() -> None:
    code = "import sys, gpusetup.i18n as m; m.finding_text('no-gpu', 'zh_CN'); print('PySide6' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------------------ install-plan steps
# Install steps are worded from their own codes (Step.title_code / explain_code, gpusetup.messages): the
# message catalogue test (tests/unit/test_messages_i18n.py) fails when a step's code has no Chinese. Here:
# every step the planner makes carries those codes, so no step is left to a per-id table or to English.

INSTALL_DIR = Path(rules.__file__).parent.parent / "install"
# execute.py rebuilds a Step from a journal's id (to undo a step of a plan it no longer has): no words needed
BARE_STEP_OK = {"execute.py"}


def test_every_install_step_is_worded_by_codes() -> None:
    bare = []
    for path in sorted(INSTALL_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Step" \
                    and path.name not in BARE_STEP_OK:
                bare.append(f"{path.name}:{node.lineno}")
    assert not bare, f"install steps made without title/explanation codes (use messages.worded_step): {bare}"


def test_every_step_of_the_demo_plans_has_chinese_words() -> None:
    from gpusetup.compat.resolver import resolve
    from gpusetup.install.plan import PlanError, build_plan
    from gpusetup.messages import step_explain, step_title

    seen = 0
    for path in sorted(resource("demo").glob("*.json")):
        machine = from_dict(Machine, json.loads(path.read_text(encoding="utf-8"))["machine"])
        try:
            plan = build_plan(resolve(machine, ["pytorch", "jax"]), machine, "venv:/nonexistent/env", portable=True)
        except PlanError:
            continue
        for step in plan.steps:
            assert step.title_code is not None and step.explain_code is not None, (path.name, step.id)
            assert len(CJK.findall(step_title(step, "zh_CN"))) >= 2, (path.name, step.id)
            assert len(CJK.findall(step_explain(step, "zh_CN"))) >= 4, (path.name, step.id)
            assert step_title(step, "en") == step.title
            seen += 1
    assert seen >= 10


# ------------------------------------------------------------------------------ fixes in every language
# A finding's fix is the part a beginner needs most (issue 21): it is a message with this machine's values
# (Finding.fix_code), worded by gpusetup.messages.finding_words in the reader's language; commands stay commands.

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded-issues"


def _corpus() -> list[Finding]:
    """Findings of real inputs: every recorded issue, every demo machine, and the container host check of hosts
    in each state it tells apart."""
    from gpusetup.analyze import analyze_text
    from gpusetup.generate import host_check
    from gpusetup.model import Containers, Driver, Evidence, System

    out: list[Finding] = []
    for path in sorted(RECORDED.glob("*.txt")):
        out += analyze_text(path.read_text(encoding="utf-8", errors="replace"), path.name).findings
    for path in sorted(resource("demo").glob("*.json")):
        out += rules.evaluate(from_dict(Machine, json.loads(path.read_text(encoding="utf-8"))["machine"]))
    # the error lines of the solved threads on the dev side of the frozen split (never the evaluation side)
    split = json.loads(resource("solved", "split.json").read_text(encoding="utf-8"))
    parts = {**split["threads"], **split["added"]}
    for path in sorted(resource("solved").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if parts.get(entry["url"].lower().rstrip("/"), parts.get(entry["url"])) == "dev":
                out += analyze_text("\n".join(entry["signature"]), entry["url"], exclude_similar=[entry["url"]]).findings

    def host(c: Containers, distro: str = "ubuntu", os: str = "linux", driver: str | None = "580.95.05") -> list[Finding]:
        return host_check(Machine(system=System(os=os, distro_id=distro), driver=Driver(version=driver), containers=c))

    denied = [Evidence("docker", ok=False, error="permission denied while trying to connect to the Docker daemon")]
    for c, distro, os, driver in [
        (Containers(docker="28.1.1", docker_daemon_reachable=True, nvidia_runtime_registered=True, toolkit_version="1.19.1"), "ubuntu", "linux", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=True), "ubuntu", "linux", None),
        (Containers(docker="28.1.1", docker_daemon_reachable=True), "fedora", "linux", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=True), "arch", "linux", "580.95.05"),
        (Containers(docker="24.0.7", docker_daemon_reachable=True, cdi_specs=["/etc/cdi/nvidia.yaml"]), "ubuntu", "linux", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=False), "ubuntu", "linux", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=False, evidence=denied), "ubuntu", "linux", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=True, nvidia_runtime_registered=True), "ubuntu", "linux", "580.95.05"),
        (Containers(podman="4.0.0"), "fedora", "linux", "580.95.05"),
        (Containers(podman="5.2.0", cdi_specs=["/etc/cdi/nvidia.yaml"], toolkit_version="1.19.1"), "fedora", "linux", "580.95.05"),
        (Containers(toolkit_version=None, evidence=[Evidence("docker", ok=False, error="not found")]), "ubuntu", "linux", "580.95.05"),
        (Containers(toolkit_version=None, evidence=[Evidence("docker", ok=False, error="not found")]), "fedora", "linux", "580.95.05"),
        (Containers(toolkit_version=None, evidence=[Evidence("docker", ok=False, error="not found")]), "", "windows", "580.95.05"),
        (Containers(docker="28.1.1", docker_daemon_reachable=True), "", "windows", "580.95.05"),
        (Containers(), "", "macos", None),
        (Containers(), "ubuntu", "linux", "580.95.05"),
    ]:
        out += host(c, distro, os, driver)
    return out


@pytest.fixture(scope="module")
def corpus() -> list[Finding]:
    return _corpus()


def test_the_corpus_covers_most_findings(corpus: list[Finding]) -> None:
    ids, _ = emitted_ids()
    seen = {f.id for f in corpus}
    assert len(seen) >= 0.8 * len(ids), sorted(set(ids) - seen)


def test_every_fix_is_a_message_with_the_machines_values(corpus: list[Finding]) -> None:
    """No fix is English-only words: each carries its message, and the message gives back the English exactly."""
    from gpusetup.messages import render

    for f in corpus:
        if f.fix:
            assert f.fix_code is not None, (f.id, f.fix)
            assert render(f.fix_code) == f.fix, f.id
        if " To be sure: " in f.detail or f.detail.startswith("To be sure: "):
            assert f.sure_code is not None, (f.id, f.detail)
            assert f.detail.endswith(render(f.sure_code)), f.id


def _prose(text: str) -> str:
    """A text without its commands (`code`, and the command lines of a multi-line fix), URLs and the English it
    quotes on purpose (“error messages”, “Enroll MOK”: what the user sees and searches for, glossary rule 8)."""
    text = re.sub(r"`[^`]*`|https?://\S+|“[^”]*”", " ", text)
    lines = []
    for ln in text.splitlines():
        command, hash_, comment = ln.partition("# ")
        if hash_ and not CJK.search(command):
            ln = comment  # a command line with its comment: the comment is prose
        if CJK.search(ln):  # a line without Chinese is a command line
            lines.append(ln)
    return "\n".join(lines)


def test_every_fix_reads_in_chinese_with_the_commands_kept(corpus: list[Finding], caplog: pytest.LogCaptureFixture) -> None:
    """The Chinese fix: Chinese sentences around the same commands, with this machine's values, no English
    sentence a beginner must read, every parameter filled."""
    from gui.beginner_text import english_runs

    from gpusetup.messages import finding_words

    caplog.set_level("WARNING", logger="gpusetup.messages")
    checked = 0
    for f in corpus:
        if not f.fix:
            continue
        zh = finding_words(f, "zh_CN")
        assert zh.translated, f.id
        assert CJK.search(zh.fix), (f.id, zh.fix)
        assert zh.fix.count("`") % 2 == 0, (f.id, zh.fix)
        runs = english_runs(_prose(zh.fix))
        assert not runs, (f.id, runs, zh.fix)
        # the commands of the English fix are in the Chinese one (placeholders such as <branch> may be worded)
        for cmd in re.findall(r"`([^`]*)`", f.fix):
            assert "<" in cmd or cmd in zh.fix, (f.id, cmd, zh.fix)
        checked += 1
    assert checked >= 80
    assert not [r for r in caplog.records if "missing" in r.getMessage() or "no text" in r.getMessage()]


def test_every_fix_template_is_chinese() -> None:
    """Statically, over every fix.* / sure.* code, including branches no recorded input reaches: no English
    sentence outside commands in the Chinese template."""
    from gui.beginner_text import english_runs

    from gpusetup.messages import catalogue

    en, zh = catalogue("en"), catalogue("zh_CN")
    codes = [c for c in en if c.startswith(("fix.", "sure.", "finding."))]
    assert len(codes) >= 120
    for code in codes:
        assert code in zh, f"{code} has no Chinese words"
        text = re.sub(r"\{\w+\}", " ", zh[code])
        assert not english_runs(_prose(text)), (code, zh[code])


def test_every_data_defined_fix_has_chinese_words_with_the_same_values() -> None:
    from gpusetup.messages import data_finding_templates, placeholders

    en, zh = data_finding_templates("en"), data_finding_templates("zh_CN")
    assert en and set(en) == set(zh), sorted(set(en) ^ set(zh))
    for code, text in en.items():
        assert placeholders(zh[code]) <= placeholders(text), code
        assert CJK.search(zh[code]), code


def test_finding_words_in_english_are_the_rules_own_words(corpus: list[Finding]) -> None:
    from gpusetup.messages import finding_words

    for f in corpus[:200]:
        w = finding_words(f, "en")
        assert (w.title, w.meaning, w.fix, w.translated) == (f.title, f.detail, f.fix, False)


def test_chinese_fix_has_this_machines_values() -> None:
    """The secure-boot fix names this distribution's key file; the mismatch fix names the driver versions."""
    from gpusetup.messages import finding_words
    from gpusetup.model import KernelModule, System

    m = Machine(system=System(os="linux", distro_id="fedora", secure_boot=True),
                kernel_log=["nvidia: Loading of module with unavailable key is rejected"])
    m.driver.modules.append(KernelModule(name="nvidia", loaded=False, version="580.95.05"))
    f = next(f for f in rules.evaluate(m) if f.id == "secure-boot-blocks-module")
    zh = finding_words(f, "zh_CN")
    assert "`sudo mokutil --import /etc/pki/akmods/certs/public_key.der`" in zh.fix and "Enroll MOK" in zh.fix
    assert "重启" in zh.fix and "Enrol the signing key" in f.fix


def test_a_finding_from_an_older_report_keeps_its_english_fix() -> None:
    """A report saved before fixes were messages has no fix_code: its fix is shown as it was, never lost."""
    from gpusetup.messages import finding_words

    old = from_dict(Finding, {"id": "nvidia-driver-missing", "severity": "error", "title": "t", "detail": "d",
                              "fix": "Run `gpusetup plan`.", "evidence": []})
    w = finding_words(old, "zh_CN")
    assert w.translated and w.fix == "Run `gpusetup plan`." and "驱动程序" in w.title


def test_to_be_sure_is_worded_in_chinese_after_the_meaning() -> None:
    from gpusetup.messages import finding_words

    f = next(f for f in _corpus() if f.sure_code is not None)
    zh = finding_words(f, "zh_CN")
    assert "要确认这一点：" in zh.meaning and "To be sure" not in zh.meaning


def test_titles_name_this_machines_values(corpus: list[Finding]) -> None:
    """A translated title says which GPU, driver or amount, as the English does, when the rule knows it
    (title_values / meaning_values with the finding's params); the plain title otherwise."""
    doc = _doc()["findings"]
    used = 0
    for f in corpus:
        entry = doc.get(f.id, {})
        title, meaning = fi18n.finding_text(f, "zh_CN") or ("", "")
        assert "{" not in title and "{" not in meaning, (f.id, title)
        if "title_values" in entry and f.params:
            names = set(re.findall(r"\{(\w+)\}", entry["title_values"]))
            if names <= set(f.params):
                assert all(f.params[n] in title for n in names), (f.id, title, f.params)
                used += 1
    assert used >= 15


def test_value_templates_name_only_values_the_rule_gives() -> None:
    """For a finding defined as data, the values are its English templates' ({xid}, {total}…)."""
    from gpusetup.rules.catalogue.data import entries

    doc = _doc()["findings"]
    for e in entries():
        names = set(re.findall(r"\{(\w+)\}", e.title + e.detail + e.fix + "".join(e.fix_by_tool.values())))
        for key in ("title_values", "meaning_values"):
            if key in doc[e.id]:
                assert set(re.findall(r"\{(\w+)\}", doc[e.id][key])) <= names, (e.id, key)


def test_a_finding_without_its_values_keeps_the_plain_title() -> None:
    old = Finding(id="gpu-memory-held-by-other-process", severity=Severity.ERROR, title="t")
    assert fi18n.finding_text(old, "zh_CN") == (_doc()["findings"][old.id]["title"], _doc()["findings"][old.id]["meaning"])
    partial = Finding(id="gpu-memory-held-by-other-process", severity=Severity.ERROR, title="t", params={"total": "10 GiB"})
    assert fi18n.finding_text(partial, "zh_CN")[0] == _doc()["findings"][old.id]["title"]


def test_markdown_and_html_reports_word_findings_in_the_asked_language() -> None:
    """Every renderer words findings through finding_words: the Markdown and HTML reports in Chinese when asked
    (title, meaning and fix; the rule's English detail kept beside them), English by default as before."""
    from gpusetup.messages import finding_words
    from gpusetup.model import Report
    from gpusetup.report import render

    m = from_dict(Machine, json.loads(resource("demo", "no-driver.json").read_text(encoding="utf-8"))["machine"])
    report = Report(machine=m, findings=rules.evaluate(m))
    f = next(f for f in report.findings if f.id == "nvidia-driver-missing")
    zh_fix = finding_words(f, "zh_CN").fix
    for fmt in ("markdown", "html"):
        en, zh = render(report, fmt), render(report, fmt, language="zh_CN")
        assert f.title in en and f.fix.split("`")[0] in en and not CJK.search(en)
        assert fi18n.finding_text(f, "zh_CN")[0] in zh and zh_fix.split("`")[0] in zh
        assert f.detail.split(" ")[0] in zh  # the rule's own words stay beside the translation
