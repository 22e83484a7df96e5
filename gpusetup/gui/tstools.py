"""Keep the Qt translation file in step with the source (no Qt needed).

Every user-facing string in ``gpusetup/gui`` goes through ``tr("literal")``; :func:`extract` finds them with
``ast``. ``python -m gpusetup.gui.tstools`` rewrites ``resources/translations/gpusetup_zh_CN.ts`` (Qt
Linguist format), keeping existing translations and adding new strings as unfinished, then compiles the
``.qm`` with ``pyside6-lrelease`` when it is available.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from gpusetup.resources import resource

CONTEXT = "gpusetup"
GUI_DIR = Path(__file__).resolve().parent


def extract(src_dir: Path = GUI_DIR) -> list[str]:
    """The literal first arguments of every ``tr(...)`` call under ``src_dir``, in source order, unique."""
    seen: dict[str, None] = {}
    for path in sorted(src_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "tr"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                seen.setdefault(node.args[0].value, None)
    return list(seen)


def read_ts(path: Path) -> dict[str, str]:
    """source -> translation (finished ones only) from a .ts file."""
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    root = ET.parse(path).getroot()
    for msg in root.iter("message"):
        src = msg.findtext("source") or ""
        tr_el = msg.find("translation")
        if tr_el is not None and tr_el.get("type") != "unfinished" and (tr_el.text or ""):
            out[src] = tr_el.text or ""
    return out


def write_ts(path: Path, lang: str, sources: list[str], translations: dict[str, str]) -> list[str]:
    """Write the .ts; returns the sources still untranslated."""
    root = ET.Element("TS", version="2.1", language=lang)
    ctx = ET.SubElement(root, "context")
    ET.SubElement(ctx, "name").text = CONTEXT
    missing = []
    for src in sources:
        msg = ET.SubElement(ctx, "message")
        ET.SubElement(msg, "source").text = src
        t = ET.SubElement(msg, "translation")
        if src in translations:
            t.text = translations[src]
        else:
            t.set("type", "unfinished")
            missing.append(src)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8")
    return missing


def lrelease(ts: Path) -> bool:
    """Compile ``ts`` to ``.qm`` beside it with pyside6-lrelease (True when it ran and succeeded)."""
    tool = shutil.which("pyside6-lrelease") or str(Path(sys.executable).parent / "pyside6-lrelease")
    if not Path(tool).exists():
        return False
    res = subprocess.run([tool, str(ts), "-qm", str(ts.with_suffix(".qm"))], capture_output=True, text=True, check=False)
    return res.returncode == 0


def main() -> int:
    ts = resource("translations", "gpusetup_zh_CN.ts")
    missing = write_ts(ts, "zh_CN", extract(), read_ts(ts))
    print(f"{ts}: {len(missing)} untranslated")
    for m in missing:
        print("  ", m)
    print("compiled" if lrelease(ts) else "pyside6-lrelease not found: .qm not compiled")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
