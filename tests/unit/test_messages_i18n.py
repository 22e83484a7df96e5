"""The message catalogues (English and 简体中文) cover every code the core can emit, with matching parameters.

Codes are collected from the source of ``gpusetup/`` (every ``msg("code", name=…)`` call), so a new decision
without words in both languages fails here; a call whose code is not a literal fails too (it could not be
checked). A Chinese entry may use fewer parameters than the English one (it leaves jargon out), never others.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jsonschema

import gpusetup
from gpusetup import messages
from gpusetup.messages import msg, placeholders, render
from gpusetup.model import FrameworkPlan, Rejected, from_dict, to_dict
from gpusetup.resources import resource

ROOT = Path(gpusetup.__file__).parent
CJK = re.compile(r"[\u4e00-\u9fff]")
LANGS = ("en", "zh_CN")


def _doc(lang: str) -> dict:
    return json.loads(resource("translations", f"messages_{lang}.json").read_text(encoding="utf-8"))


def _literals(arg: ast.AST | None) -> list[str] | None:
    """The codes a msg() argument can be: a literal, or ``"a" if cond else "b"`` of literals; None otherwise."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.IfExp):
        a, b = _literals(arg.body), _literals(arg.orelse)
        return None if a is None or b is None else a + b
    return None


def emitted() -> tuple[dict[str, dict[str, set[str]]], list[str]]:
    """(code → {where → keyword names passed}, calls with a non-literal code) over gpusetup/."""
    codes: dict[str, dict[str, set[str]]] = {}
    dynamic: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "msg"):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            literals = _literals(node.args[0] if node.args else None)
            if literals is None:
                dynamic.append(where)
                continue
            names = {k.arg for k in node.keywords if k.arg}
            if any(k.arg is None for k in node.keywords):  # msg("x", **fields): names known only at run time
                names.add("**")
            for code in literals:
                codes.setdefault(code, {})[where] = names
    return codes, dynamic


def test_catalogues_match_their_schema() -> None:
    schema = json.loads(resource("schema", "messages_i18n.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for lang in LANGS:
        doc = _doc(lang)
        jsonschema.validate(doc, schema)
        assert doc["language"] == lang


def test_every_code_is_a_literal() -> None:
    codes, dynamic = emitted()
    assert not dynamic, f"msg() with a computed code cannot be checked for translations: {dynamic}"
    assert len(codes) >= 60, "the scan found too few codes; is msg() still how decisions are made?"
    # the scan sees the resolver and the install planner
    places = {w.split(":")[0] for where in codes.values() for w in where}
    assert {"compat/resolver.py", "install/plan.py"} <= places


def test_every_emitted_code_has_english_and_chinese_words() -> None:
    codes, _ = emitted()
    for lang in LANGS:
        entries = _doc(lang)["messages"]
        missing = sorted(set(codes) - set(entries))
        assert not missing, f"codes without {lang} text in messages_{lang}.json: {missing}"


def test_no_stale_entries() -> None:
    codes, _ = emitted()
    for lang in LANGS:
        stale = sorted(c for c in _doc(lang)["messages"] if c.split("@")[0] not in codes)
        assert not stale, f"messages_{lang}.json has codes nothing emits any more: {stale}"


def test_wizard_wordings_use_the_codes_parameters() -> None:
    """``code@wizard`` words a message for the wizard's reader (its pages and buttons instead of commands): it
    may leave parameters out, never use others; and it never sends the reader to the command line."""
    en, zh = _doc("en")["messages"], _doc("zh_CN")["messages"]
    variants = [(lang, c, t) for lang, doc in (("en", en), ("zh_CN", zh)) for c, t in doc.items() if "@" in c]
    assert variants
    for lang, code, text in variants:
        base = code.split("@")[0]
        assert base in en, code
        assert placeholders(text) <= placeholders(en[base]), f"{lang} {code} uses parameters {base} is not given"
        assert "gpusetup " not in re.sub(r"GPU Setup", "", text), f"{lang} {code}: CLI advice in the wizard: {text!r}"


def test_placeholders_are_parameters_the_code_is_given() -> None:
    codes, _ = emitted()
    en, zh = _doc("en")["messages"], _doc("zh_CN")["messages"]
    for code, calls in codes.items():
        for where, names in calls.items():
            if "**" in names:
                continue
            assert placeholders(en[code]) == names, f"{where}: {code} is given {sorted(names)}, English uses {sorted(placeholders(en[code]))}"
        assert placeholders(zh[code]) <= placeholders(en[code]), f"{code}: the Chinese text uses parameters the English does not have"


def test_chinese_entries_are_chinese() -> None:
    zh = _doc("zh_CN")["messages"]
    for code, text in zh.items():
        if code.startswith(("word.kind.", "range.")) or not re.search(r"[A-Za-z]", re.sub(r"\{\w+\}|`[^`]*`", "", text)):
            continue  # product names, number ranges, pure "{a}：{b}" layouts and `commands` read the same in both languages
        assert CJK.search(text), f"{code}: not translated: {text!r}"


def test_render_nested_messages_lists_and_fallbacks() -> None:
    m = msg("action.change-python", option="cu126 (torch 2.9)", reason=msg("reason.python-too-new", max="3.13", have="3.14"),
            range=msg("range.between", min="3.10", max="3.13"))
    assert render(m) == "cu126 (torch 2.9) supports Python only up to 3.13, you have Python 3.14. Create the environment with Python 3.10–3.13."
    zh = render(m, "zh_CN")
    assert "最高只支持 Python 3.13" in zh and "3.10–3.13" in zh and "cu126" not in zh
    both = msg("reason.several", reasons=[msg("reason.driver-missing", need="580"), msg("reason.no-kernels-cc", cc="3.5", gpu="GPU 0: K80")])
    assert render(both) == "needs NVIDIA driver ≥ 580; no NVIDIA driver is installed; has no kernels for compute capability 3.5 (GPU 0: K80)"
    assert "；" in render(both, "zh-CN")
    # JSON round trip: a message nested in params renders the same after to_dict/from_dict
    fp = FrameworkPlan(framework="pytorch", ok=False)
    messages.add_note(fp, m)
    back = from_dict(FrameworkPlan, json.loads(json.dumps(to_dict(fp))))
    assert messages.render_notes(back.notes, back.note_codes, "zh_CN") == [zh]
    assert messages.render_notes(back.notes, back.note_codes, None) == [render(m)]
    # an unknown code never breaks a report; a Rejected from an older report (no code) keeps its English
    assert render(msg("no.such-code", a=1)).startswith("no.such-code")
    old = Rejected(option="cu118", reason="needs NVIDIA driver ≥ 450")
    assert messages.render_parts(old.code, old.params, old.reason, "zh_CN") == "needs NVIDIA driver ≥ 450"


def test_every_note_of_the_demo_machines_has_its_code_and_chinese_words() -> None:
    """notes and note_codes stay parallel (every note is added through messages.add_note), in the resolver's
    answer and in the install plan, and each renders in Chinese."""
    from gpusetup.compat.resolver import resolve
    from gpusetup.install.plan import PlanError, build_plan
    from gpusetup.model import Machine

    seen = 0
    for path in sorted(resource("demo").glob("*.json")):
        machine = from_dict(Machine, json.loads(path.read_text(encoding="utf-8"))["machine"])
        plans = resolve(machine, ["pytorch", "tensorflow", "jax"])
        try:
            install = [build_plan(plans, machine, "venv:/nonexistent/gpusetup-test-env", portable=True)]
        except PlanError:
            install = []
        for p in [*plans, *install]:
            assert len(p.notes) == len(p.note_codes), (path.name, p.notes)
            for text, code in zip(p.notes, p.note_codes, strict=True):
                assert render(code) == text
                assert CJK.search(render(code, "zh_CN")), (path.name, code)
                seen += 1
        for p in plans:
            for r in p.rejected:
                assert r.code and render(msg(r.code, **r.params)) == r.reason
            for a in p.actions:
                assert a.code and render(msg(a.code, **a.params)) == a.why
    assert seen >= 10


def test_chinese_words_carry_no_jargon_a_beginner_must_read() -> None:
    """The Chinese catalogue is what the wizard shows: no CLI flags, environment variables, wheel tags or [X]
    markers outside `backticks` (the exact English, with all of them, is under 详细信息)."""
    jargon = [
        re.compile(r"(?<![\w-])--[a-z][a-z-]+"),
        re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"),
        re.compile(r"\+(?:cu|rocm)\d"),
        re.compile(r"\[[A-Z]\]"),
    ]
    for code, text in _doc("zh_CN")["messages"].items():
        prose = re.sub(r"`[^`]*`|https?://\S+", " ", text)
        for pat in jargon:
            assert not pat.search(prose), f"{code}: {pat.search(prose).group(0)!r} in {text!r}"


def test_build_tags_are_shown_in_words() -> None:
    """Issue 21: "PyTorch 2.15 — GPU 版本，cu132" told a beginner nothing. The tag in words, in Chinese; English
    pages keep the tag (it is what the commands and the index name)."""
    from gpusetup.messages import variant_label, variant_words

    zh = {v: render(variant_words(v), "zh_CN") for v in ("cu132", "cu126", "cu118", "cu92", "cuda12", "cuda11.2",
                                                         "rocm6.4", "and-cuda", "xpu", "mps", "cpu", "directml")}
    assert zh["cu132"] == "适用于 CUDA 13.2" and zh["cu126"] == "适用于 CUDA 12.6" and zh["cu118"] == "适用于 CUDA 11.8"
    assert zh["cu92"] == "适用于 CUDA 9.2" and zh["cuda12"] == "适用于 CUDA 12" and zh["cuda11.2"] == "适用于 CUDA 11.2"
    assert zh["rocm6.4"] == "适用于 AMD ROCm 6.4" and zh["and-cuda"] == "自带 CUDA 库"
    assert all(CJK.search(t) for t in zh.values()), zh
    assert variant_label("cu132", "en") == "cu132" and variant_label("cu132", "zh_CN") == "适用于 CUDA 13.2"
    assert variant_label("weird-tag", "zh_CN") == "weird-tag"


def test_a_wizard_wording_is_used_only_in_the_wizard() -> None:
    from gpusetup.i18n import set_surface

    m = msg("fix.nvidia-driver-missing")
    cli_en, cli_zh = render(m), render(m, "zh_CN")
    assert "`gpusetup plan`" in cli_en and "`gpusetup plan`" in cli_zh
    set_surface("wizard")
    try:
        assert "gpusetup plan" not in render(m) and "安装计划" in render(m, "zh_CN")
        assert render(msg("fix.rule-crashed"), "zh_CN").startswith("请向我们报告")
    finally:
        set_surface(None)
    assert render(m) == cli_en


def _all_chinese_texts() -> list[tuple[str, str]]:
    """Every Chinese text a user may read: the message catalogue, the finding catalogue and the wizard's .ts."""
    import html

    out = [(f"messages · {k}", v) for k, v in _doc("zh_CN")["messages"].items()]
    findings = json.loads(resource("translations", "findings_zh_CN.json").read_text(encoding="utf-8"))["findings"]
    for fid, e in findings.items():
        out += [(f"findings · {fid}.{k}", e[k]) for k in ("title", "meaning", "fix", "to_be_sure") if e.get(k)]
        out += [(f"findings · {fid}.fix_by_tool.{t}", v) for t, v in (e.get("fix_by_tool") or {}).items()]
    ts = resource("translations", "gpusetup_zh_CN.ts").read_text(encoding="utf-8")
    for m in re.finditer(r"<source>(.*?)</source>\s*<translation[^>]*>(.*?)</translation>", ts, re.S):
        out.append((f".ts · {html.unescape(m.group(1))[:40]}", html.unescape(m.group(2))))
    return out


def test_chinese_follows_the_glossary() -> None:
    """docs/zh-glossary.md: one register (您 or no pronoun, never 你), mainland usage, one word per concept,
    the single ellipsis character, full-width punctuation in Chinese sentences. Commands (`…`) are not prose."""
    cjk = r"[\u4e00-\u9fff]"
    rules = {
        "你 (register: 您 or no pronoun)": r"你",
        "Taiwan/Hong Kong usage": r"相容|软体|记忆体|显示卡|程式|網路|预设|設定|檔案|資料夾|支援|使用者|伺服器|資訊|讯息|透過|"
                                  r"快取|頻寬|韌體|匯流排|執行緒|重新開機|安全開機|停用 nouveau|已停用",
        "a term the glossary replaced": r"显卡版本|现场编译|向前兼容|小版本兼容|驱动版本系列|驱动系列|同系列驱动|"
                                        r"已证明|未证明|普通内存|确切|不认识|不知道|演练|PCIe 连接|容器工具包|苹果|专有版|"
                                        r"(?<!替代)方案",
        "…… or ... (the glossary's ellipsis is …)": r"……|(?<![.\w])\.\.\.(?![.\w])",
        "half-width punctuation in a Chinese sentence": cjk + r"[,;?!](?=\s|$|" + cjk + r")",
        "a space next to full-width punctuation": r"(?<=\S) [，。；？！）、]|[（] ",
    }
    found = []
    for where, text in _all_chinese_texts():
        prose = re.sub(r"`[^`]*`|https?://\S+|“[^”]*”", "C", text)
        for name, rx in rules.items():
            for m in re.finditer(rx, prose):
                found.append(f"{where}: {name}: …{prose[max(0, m.start() - 12):m.end() + 12]}…")
    assert not found, "\n".join(found)
