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
DYNAMIC_OK = {("_util.py", "make"), ("data.py", "evaluate_entry"), ("data.py", "_register")}
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
            if name in ("make", "rule", "report_rule"):
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

INSTALL_DIR = Path(rules.__file__).parent.parent / "install"
STEPS = resource("translations", "plan_steps_zh_CN.json")
# _plan_script passes its caller's literal on; execute.py rebuilds a Step from a journal's id.
STEP_DYNAMIC_OK = {("plan.py", "_plan_script"), ("execute.py", "*")}


def _literal_ids(node: ast.AST | None) -> list[str] | None:
    """"x" → [x]; a if c else b → both; f"pip-install-{i}" → [pip-install]; anything else → None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        a, b = _literal_ids(node.body), _literal_ids(node.orelse)
        return None if a is None or b is None else a + b
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return [fi18n.step_key(str(node.values[0].value).rstrip("-") + "-1")]
    return None


def plan_step_ids(root: Path = INSTALL_DIR) -> tuple[dict[str, list[str]], list[str]]:
    """(step id → where, dynamic places) from ``Step(id=…)``, ``worded_step("id", …)`` and ``_plan_script(plan, "id", …)``."""
    ids: dict[str, list[str]] = {}
    dynamic: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners = _owners(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id in ("Step", "worded_step"):  # worded_step(sid, title, explain, ...) builds a Step
                arg = next((k.value for k in node.keywords if k.arg == "id"), node.args[0] if node.args else None)
            elif node.func.id == "_plan_script":
                arg = node.args[1] if len(node.args) > 1 else None
            else:
                continue
            where = f"{path.name}:{node.lineno}"
            found = _literal_ids(arg)
            if found is not None:
                for i in found:
                    ids.setdefault(fi18n.step_key(i), []).append(where)
            elif not ({(path.name, owners.get(node, "<module>")), (path.name, "*")} & STEP_DYNAMIC_OK):
                dynamic.append(where)
    return ids, dynamic


def test_steps_catalogue_matches_the_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = json.loads(STEPS.read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    assert doc["language"] == "zh_CN" and "findings" not in doc


def test_every_plan_step_id_has_a_translation_and_none_is_stale() -> None:
    ids, dynamic = plan_step_ids()
    assert not dynamic, f"step ids built at run time cannot be checked for a translation: {dynamic}"
    assert {"pip-install", "download", "driver", "reboot", "verify"} <= set(ids), "the step scan lost its way"
    have = set(json.loads(STEPS.read_text(encoding="utf-8"))["steps"])
    assert not set(ids) - have, f"add to {STEPS.name}: { {i: ids[i] for i in sorted(set(ids) - have)} }"
    assert not have - set(ids), f"{STEPS.name} has steps the planner no longer makes: {sorted(have - set(ids))}"
    for e in json.loads(STEPS.read_text(encoding="utf-8"))["steps"].values():
        assert len(CJK.findall(e["title"])) >= 2 and len(CJK.findall(e["meaning"])) >= 4, e


def test_step_text() -> None:
    from gpusetup.model import Step

    assert fi18n.step_text(Step(id="pip-install-2", title="Install torch==2.9.1"), "zh_CN") == fi18n.step_text("pip-install", "zh_CN")
    assert (fi18n.step_text("reboot", "zh_CN") or ("",))[0] == "重启电脑"
    assert fi18n.step_text("reboot", "en") is None
    assert fi18n.step_text("no-such-step", "zh_CN") is None
