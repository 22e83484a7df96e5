"""Hostile strings through every generator and renderer (issue 25, "Untrusted input reaches generated files").

A GPU name in a stranger's report or ``--for`` profile, a file name given to ``--for``/``--out``/``--target``, a
mirror URL: each is data, and must stay data in what gpusetup writes. Hypothesis generates strings from the
pieces attackers use (newlines, quotes, ``$()``, backticks, backslashes, NUL, DEL, U+0085, escape sequences,
``---``, ``#``, code fences, ``<script>``) and every output is checked the way its consumer reads it:

- it parses back to the same values (PyYAML, tomllib, json, shlex for requirements lines, a Dockerfile
  instruction parser, markdown-it, html.parser, the Prometheus client parser), and its *structure* (the
  Dockerfile's instructions, the README's headings, the HTML's elements) is the one a harmless name gives;
- it runs nothing: the Slurm script and the install script run under bash with stub tools, and a marker file
  that ``$(touch …)`` or a backtick would create never appears;
- it still validates: compose schema, kubernetes-validate, hadolint, shellcheck, bash -n.

The exact strings from issue 25 are pinned as ``@example``s.
"""

from __future__ import annotations

import argparse
import html.parser
import json
import os
import re
import shlex
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import tomllib
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpusetup import escape
from gpusetup.cli import main
from gpusetup.commands.docker import _command_line
from gpusetup.generate import GenerateError, generate_setup
from gpusetup.generate.project import EmitError, Target, emit_project
from gpusetup.model import Choice, Finding, FrameworkPlan, Gpu, Machine, Report, Severity
from gpusetup.report import render
from gpusetup.report.prometheus import render_prometheus

from .hosts import HOSTS
from .validators import compose_errors, hadolint, kubernetes_errors, shell_errors, tool

pytestmark = pytest.mark.hostile

MARKER = "GPUSETUP_PWNED_MARKER"
PIECES = ["\n", "\r", "\r\n", '"', "'", f"$(touch {MARKER})", f"`touch {MARKER}`", "\\", "\x7f", "\x85",
          "\x1b[2J", "\x1b]0;All GPUs healthy\x07", "---", "#", "```", "<script>alert(1)</script>", "${IFS}",
          ";", "&&", "|", "*", "{", "}", "[", "]", ": ", " ", "\t", "\u2028", "\u202e", "\nFROM scratch AS decoy\n",
          "\nARG BASE_IMAGE=evil/image\n", "- ", "? ", "!!", "&x", "%", "é", "中", "\x9b31m", "-->", "\\n"]
# text: hostile pieces and random characters; NUL only where a string can hold one (not argv or file names)
_TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), min_size=1, max_size=8).map("".join)
hostile = _TEXT.map(lambda s: s.strip(" \t") or "x")
hostile_with_nul = st.one_of(hostile, hostile.map(lambda s: s + "\x00" + s))
path_text = hostile.map(lambda s: s.replace("\x00", "").replace("/", "_") or "x")

SETTINGS = settings(max_examples=int(os.environ.get("GPUSETUP_HOSTILE_EXAMPLES", "10")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])
ISSUE_NAME = "RTX 3060\nARG BASE_IMAGE=evil/image\nFROM scratch AS decoy\n#"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[HAll GPUs healthy"

# ------------------------------------------------------------------------------------------ helpers

_INSTRUCTION = re.compile(r"^([A-Za-z]+)\s")


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(instruction, arguments) as BuildKit reads them: comment lines dropped, continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.split("\n"):
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if pending and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction is removed
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        m = _INSTRUCTION.match(pending + " ")
        assert m, f"not an instruction: {pending!r}"
        out.append((m.group(1).upper(), pending[m.end():].strip()))
        pending = ""
    return out


def leading_comments_then_yaml(text: str) -> Any:
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    assert not any(line.startswith("#") for line in lines[i:]), "a comment line after the YAML started"
    return yaml.safe_load(text)


def no_raw_controls(text: str, allowed: tuple[str, ...] = ()) -> None:
    for code in allowed:
        text = text.replace(code, "")
    bad = [ch for ch in text if ch not in "\n\t" and (ord(ch) < 0x20 or 0x7f <= ord(ch) <= 0x9f
                                                       or ch in "\u2028\u2029\u202e")]
    assert not bad, f"raw control characters reached the output: {bad!r}"


def stubs(folder: Path, names: list[str]) -> dict[str, str]:
    """Stub tools that print their arguments (one per line) and succeed; ``python3 -m venv DIR`` makes DIR/bin
    with stub python and pip, so a generated script runs to its end."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        p = folder / name
        p.write_text("#!/bin/bash\nprintf '%s\\n' \"$(basename \"$0\")\" \"$@\"\n"
                     "if [ \"$1\" = -m ] && [ \"$2\" = venv ]; then mkdir -p \"$3/bin\"; "
                     "cp \"$0\" \"$3/bin/python\"; cp \"$0\" \"$3/bin/pip\"; fi\nexit 0\n")
        p.chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin", "HOME": str(folder.parent / "home"), "LC_ALL": "C.UTF-8"}


# ------------------------------------------------------------------------ container set-up generator


@lru_cache(maxsize=1)
def _benign() -> dict[str, str]:
    out = Path(tempfile.mkdtemp(prefix="gpusetup-benign-"))
    return _generate("NVIDIA GeForce RTX 3080", "out", "report.json", out)


def _generate(gpu_name: str, out_arg: str, for_arg: str, folder: Path, **options: Any) -> dict[str, str]:
    machine = HOSTS["rtx3080-595"].machine()
    machine.gpus[0].name = gpu_name
    args = argparse.Namespace(framework="pytorch", out=out_arg, for_file=for_arg, runtime="enroot", gpus=None,
                              image_source="cuda", flavour="base", runtime_class=None, cuda=None,
                              image_name=None, registry="registry.example.com", allow_unverified=False,
                              healthcheck=False)
    result = generate_setup(machine, "pytorch", folder, generated_on="2026-11-22", command=_command_line(args),
                            **options)
    assert result.ok, result.reason
    return {rel: (folder / rel).read_text(encoding="utf-8") for rel in result.files}


@SETTINGS
@given(name=hostile_with_nul, out_arg=path_text, for_arg=path_text)
@example(name=ISSUE_NAME, out_arg="gpu\nrm -rf ~", for_arg=f"x$(touch {MARKER}).json")
@example(name=ESCAPES + "<script>alert(1)</script>```\n# heading", out_arg="a'b\"c", for_arg="`touch x`")
def test_container_setup_keeps_hostile_names_and_paths_as_data(name: str, out_arg: str, for_arg: str) -> None:
    benign = _benign()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "setup"
        files = _generate(name, out_arg, for_arg, root)
        # Dockerfile: the same instructions as for a harmless name, and hadolint-clean
        for df in ("Dockerfile", "diagnose/Dockerfile"):
            assert dockerfile_instructions(files[df]) == dockerfile_instructions(benign[df])
            assert [p for p in hadolint(root / df, root / ".hadolint.yaml") if p["level"] == "error"] == []
        assert escape.one_line(name) in files["Dockerfile"]  # the name is still there, shown as text
        # YAML: comments only before the document, which reads back as the harmless one and validates
        compose = leading_comments_then_yaml(files["compose.yaml"])
        assert compose == yaml.safe_load(benign["compose.yaml"]) and not compose_errors(compose)
        for manifest in ("kubernetes/job.yaml", "kubernetes/diagnose-daemonset.yaml"):
            doc = leading_comments_then_yaml(files[manifest])
            assert doc == yaml.safe_load(benign[manifest]) and not kubernetes_errors(doc)
        assert json.loads(files[".devcontainer/devcontainer.json"]) == json.loads(benign[".devcontainer/devcontainer.json"])
        # Slurm: valid bash that runs the planned srun, and nothing else
        script = root / "slurm" / "job.sbatch"
        assert shell_errors(script) == []
        env = stubs(Path(tmp) / "bin", ["srun", "apptainer"])
        env["SLURM_SUBMIT_DIR"] = tmp
        r = subprocess.run(["bash", str(script)], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split("\n")[0] == "srun" and "--container-image=registry.example.com#gpu-pytorch:" in r.stdout
        assert not (Path(tmp) / MARKER).exists()
        apptainer = _generate(name, out_arg, for_arg, Path(tmp) / "apptainer", runtime="apptainer")
        (Path(tmp) / "job-apptainer.sbatch").write_text(apptainer["slurm/job.sbatch"])
        r = subprocess.run(["bash", str(Path(tmp) / "job-apptainer.sbatch")], cwd=tmp, env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and "docker://registry.example.com/gpu-pytorch:" in r.stdout, r.stderr
        assert not (Path(tmp) / MARKER).exists()
        # README: the headings and HTML of the harmless README; the name is text
        assert _markdown_shape(files["README.md"]) == _markdown_shape(benign["README.md"])


def _markdown_shape(text: str) -> tuple[list[str], list[str], int]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    html_bits = [t.content for t in tokens if t.type == "html_block"]
    html_bits += [c.content for t in tokens if t.children for c in t.children if c.type == "html_inline"]
    fences = sum(1 for t in tokens if t.type == "fence")
    return headings, html_bits, fences


@pytest.mark.parametrize(("option", "value"), [
    ("image_name", "gpu:1$(touch X)"), ("image_name", "Gpu/Upper:1"), ("image_name", "gpu\nname:1"),
    ("registry", "reg.example.com\nFROM scratch"), ("registry", "reg.example.com/$(id)"),
    ("runtime_class", "Nvidia"), ("runtime_class", "nvidia\nx: 1"), ("runtime_class", "-nvidia"),
])
def test_names_with_format_rules_are_refused(tmp_path: Path, option: str, value: str) -> None:
    with pytest.raises(GenerateError) as err:
        generate_setup(HOSTS["rtx3080-595"].machine(), "pytorch", tmp_path / "out", **{option: value})
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


def test_valid_but_surprising_names_stay_strings(tmp_path: Path) -> None:
    """Issue 24: ``--runtime-class 0b101`` (a valid Kubernetes name) became the integer 5 in YAML."""
    files = _generate("NVIDIA GeForce RTX 3080", "out", "r.json", tmp_path, runtime_class="0b101",
                      image_name="2026-11-24:0b101", registry="localhost:5000/ml")
    job = yaml.safe_load(files["kubernetes/job.yaml"])
    assert job["spec"]["template"]["spec"]["runtimeClassName"] == "0b101" and not kubernetes_errors(job)
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "localhost:5000/ml/2026-11-24:0b101"
    assert yaml.safe_load(files["compose.yaml"])["services"]["app"]["image"] == "2026-11-24:0b101"


# --------------------------------------------------------------------------------------- project files

_URL_PATH = st.text(alphabet="abcXYZ019-._~!$&()*+,;=:@%/#?", max_size=20)


def _torch_plan() -> FrameworkPlan:
    return FrameworkPlan(framework="pytorch", ok=True, choice=Choice(
        version="2.14", variant="cu126", index_url="https://download.pytorch.org/whl/cu126",
        packages=["torch==2.14.*"]))


def _jax_plan() -> FrameworkPlan:
    return FrameworkPlan(framework="jax", ok=True, choice=Choice(version="0.12.0.1", variant="cuda12",
                                                                packages=["jax[cuda12]==0.12.0.1"]))


@SETTINGS
@given(path=_URL_PATH)
@example(path="whl?token=T0K3N#frag")
@example(path="a$(id)`id`;x")
def test_accepted_mirror_urls_read_back_exactly(path: str) -> None:
    mirror = "https://mirror.example/" + path
    pypi = "https://pypi.example/" + path
    target = Target("linux", "x86_64", "3.12", driver="550.54.14", driver_cuda="12.4")
    try:
        escape.index_url(mirror)
    except escape.BadValue:
        with pytest.raises(EmitError):
            emit_project([_torch_plan()], target, "uv", pytorch_mirror=mirror)
        return
    want = escape.join_url(mirror, "/cu126")
    plans = [_torch_plan(), _jax_plan()]
    uv = tomllib.loads(emit_project(plans, target, "uv", index_url=pypi, pytorch_mirror=mirror).text)
    assert {i["url"] for i in uv["tool"]["uv"]["index"]} == {pypi, want}
    pixi = tomllib.loads(emit_project(plans, target, "pixi", index_url=pypi, pytorch_mirror=mirror).text)
    assert pixi["pypi-dependencies"]["torch"]["index"] == want and pixi["pypi-options"]["index-url"] == pypi
    conda = yaml.safe_load(emit_project(plans, target, "conda", index_url=pypi, pytorch_mirror=mirror).text)
    pip_lines = next(d["pip"] for d in conda["dependencies"] if isinstance(d, dict))
    assert f"--extra-index-url {want}" in pip_lines
    text = emit_project(plans, target, "requirements", index_url=pypi, pytorch_mirror=mirror).text
    options = [shlex.split(line, comments=False) for line in text.splitlines() if line.startswith("--")]
    assert ["--extra-index-url", want] in options and ["--index-url", pypi] in options


@SETTINGS
@given(junk=hostile)
@example(junk='"\n[evil]\nx = "')
@example(junk="\x7f")
def test_mirror_urls_with_quotes_spaces_or_controls_are_refused(junk: str) -> None:
    mirror = "https://mirror.example/whl" + junk
    try:
        escape.index_url(mirror)
    except escape.BadValue:
        for kind in ("uv", "pixi", "conda", "requirements"):
            with pytest.raises(EmitError):
                emit_project([_torch_plan()], Target("linux", "x86_64", "3.12"), kind, pytorch_mirror=mirror)
        return
    # accepted: then it reads back exactly (a junk of plain URL characters)
    doc = tomllib.loads(emit_project([_torch_plan()], Target("linux", "x86_64", "3.12"), "uv",
                                     pytorch_mirror=mirror).text)
    assert doc["tool"]["uv"]["index"][0]["url"] == escape.join_url(mirror, "/cu126")


def test_a_token_mirror_keeps_its_query_at_the_end() -> None:
    """Issue 25: ``--pytorch-mirror https://m/whl?token=X`` became ``…?token=X/cpu``."""
    from gpusetup.install.plan import mirror_url

    assert mirror_url("https://download.pytorch.org/whl/cpu", None, "https://m.example/whl?token=X") == \
        "https://m.example/whl/cpu?token=X"
    text = emit_project([_torch_plan()], Target("linux", "x86_64", "3.12"), "requirements",
                        pytorch_mirror="https://m.example/whl?token=X").text
    assert "--index-url https://m.example/whl/cu126?token=X\n" in text


# ---------------------------------------------------------------------------------------- install script


@SETTINGS
@given(target=path_text)
@example(target=f"env\n touch {MARKER}\n#")
@example(target=f"e'$(touch {MARKER})`touch {MARKER}`")
def test_install_script_keeps_a_hostile_target_as_data(target: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        prof = work / "m.json"
        prof.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "580.65.06",
                                    "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090",
                                              "compute_capability": "8.6", "pci_id": "10de:2204"}]}))
        script = work / "install.sh"
        venv = str(work / "t" / target)
        assert main(["install", "--for", str(prof), "--offline", "--script", str(script), "--target",
                     f"venv:{venv}"]) == 0
        text = script.read_text(encoding="utf-8")
        # SC2289 ("command name containing a linefeed") and SC2016 (info: "$(…) in single quotes does not expand")
        # are the point here: the venv's python is at a path with a newline or a literal $(…) in it, written as
        # one quoted word; every warning and error counts.
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        sc = subprocess.run([tool("shellcheck"), "--shell=bash", "--format=gcc", "--severity=warning",
                             "--exclude=SC2289", str(script)],
                            capture_output=True, text=True, timeout=60)
        assert sc.returncode == 0, sc.stdout
        env = stubs(work / "bin", ["python3", *(f"python3.{n}" for n in range(8, 16)), "sudo", "curl", "wget", "uv"])
        r = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        assert not (work / MARKER).exists(), text
        assert r.returncode == 0, r.stdout + r.stderr
        assert "All steps finished." in r.stdout
        assert (Path(venv) / "bin" / "python").is_file()  # the stub `python3 -m venv` got the path intact


# ------------------------------------------------------------------------------------------- renderers


def _report(name: str, evidence: str) -> Report:
    m = Machine(collected_at="2026-11-27T00:00:00Z",
                gpus=[Gpu(vendor="nvidia", name=name, index=0, compute_capability="8.6")])
    f = Finding(id="hostile", severity=Severity.ERROR, title=f"GPU 0 {name} is broken", detail=name,
                fix=f"echo {name}", evidence=[evidence, "```", name])
    return Report(machine=m, findings=[f])


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)


def _tags(text: str) -> list[str]:
    p = _Tags()
    p.feed(text)
    return p.tags


@SETTINGS
@given(name=hostile_with_nul, evidence=hostile_with_nul)
@example(name="<script>alert(1)</script>", evidence="```\n## Injected heading\n```")
@example(name=ESCAPES, evidence="\x00\x7f\x85")
def test_reports_keep_hostile_gpu_names_and_evidence_as_text(name: str, evidence: str) -> None:
    benign = _report("NVIDIA GeForce RTX 3090", "Xid 79")
    hostile_report = _report(name, evidence)
    md = render(hostile_report, "markdown")
    assert _markdown_shape(md) == _markdown_shape(render(benign, "markdown"))
    no_raw_controls(md)
    page = render(hostile_report, "html")
    assert _tags(page) == _tags(render(benign, "html"))
    no_raw_controls(page)
    from prometheus_client.parser import text_string_to_metric_families

    samples = [s for fam in text_string_to_metric_families(render_prometheus(hostile_report)) for s in fam.samples
               if s.name == "gpusetup_gpu_info"]
    assert samples and samples[0].labels["name"] == escape.terminal(name)


@SETTINGS
@given(name=hostile)
@example(name=ESCAPES)
def test_terminal_output_shows_control_characters_visibly(name: str) -> None:
    """analyze and plan --for print what a stranger's report says: never as terminal control sequences, with
    or without colour (issue 25: the window title and screen were rewritten, even with --color never)."""
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        report.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "driver": "550.54.14",
                                      "gpus": [{"vendor": "nvidia", "name": name, "compute_capability": "8.6"}]}))
        from gpusetup import term

        for color in ("never", "always"):
            for argv in (["plan", "--for", str(report), "--offline"], ["analyze", str(report)]):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    main(["--color", color, *argv])
                allowed = tuple(term.STYLES.values()) if color == "always" else ()
                no_raw_controls(out.getvalue(), allowed)
                no_raw_controls(err.getvalue(), allowed)
                if color == "never":
                    assert "\x1b" not in out.getvalue()


@pytest.mark.parametrize("name", ["0b101", "2026-11-24", "yes", "null", "1e3", "0x1F", "on"])
def test_project_names_yaml_would_misread_stay_strings(name: str) -> None:
    """Issue 24: ``--name 0b101`` became the integer 5 and ``--name 2026-11-24`` a date in environment.yml."""
    plans = [_torch_plan()]
    target = Target("linux", "x86_64", "3.12", env={"X_VALUE": name})
    conda = yaml.safe_load(emit_project(plans, target, "conda", name=name).text)
    assert conda["name"] == name and conda["variables"] == {"X_VALUE": name}
    assert tomllib.loads(emit_project(plans, target, "uv", name=name).text)["project"]["name"] == name
    assert tomllib.loads(emit_project(plans, target, "pixi", name=name).text)["workspace"]["name"] == name


def test_del_and_newlines_in_values_round_trip_through_the_writers() -> None:
    """Issue 24: a DEL made PyYAML refuse the file; DEL or a newline in a value made tomllib reject it."""
    value = "a\x7fb\nc\x85d\u2028e"
    target = Target("linux", "x86_64", "3.12", env={"X_VALUE": value})
    conda = yaml.safe_load(emit_project([_torch_plan()], target, "conda").text)
    assert conda["variables"]["X_VALUE"] == value
    pixi = tomllib.loads(emit_project([_torch_plan()], target, "pixi").text)
    assert pixi["activation"]["env"]["X_VALUE"] == value
