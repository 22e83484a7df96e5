"""Every catalogue entry against real user reports (tests/fixtures/recorded-issues, see PROVENANCE.md).

Each ``Fnn__*.txt`` is what a user actually posted for failure Fnn. Fed to ``analyze``, it must name Fnn
first and nothing else from the catalogue (so every file is also a negative case for the other 34 entries).
``NEG__*`` files resemble a failure but must not trigger it. Real outputs of healthy machines must raise no
warning or error at all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpusetup.analyze import analyze_paths
from gpusetup.model import Severity

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RECORDED = FIXTURES / "recorded-issues"
POSITIVE = sorted(RECORDED.glob("F*.txt"))
NEGATIVE = sorted(RECORDED.glob("NEG-F*.txt"))  # NEG-Fnn__*: real texts resembling Fnn that must not trigger it


def _data_codes() -> set[str]:
    from gpusetup.rules.catalogue.data import entries

    return {e.catalogue for e in entries()}


ALL_CODES = sorted({f"F{i:02d}" for i in range(1, 36)} | _data_codes())

# A few real reports legitimately show a second, related problem; listed here so nothing else slips in.
ALLOWED_EXTRA: dict[str, set[str]] = {}


def _codes(path: Path) -> list[str | None]:
    return [f.catalogue for f in analyze_paths([str(path)]).findings]


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.name[:60])
def test_real_report_names_its_failure_first(path: Path) -> None:
    expected = path.name.split("__", 1)[0]
    analysis = analyze_paths([str(path)])
    assert analysis.findings, f"{path.name}: nothing found"
    first = analysis.findings[0]
    assert first.catalogue == expected, [(f.catalogue, f.id) for f in analysis.findings]
    assert first.evidence, "a finding must quote the lines that triggered it"
    assert first.fix and first.title and first.detail
    # No other catalogue finding at warning or above (a not-a-fault note such as F40 may accompany it).
    others = {f.catalogue for f in analysis.findings if f.catalogue and f.severity.rank >= Severity.WARNING.rank}
    others -= {expected}
    assert others <= ALLOWED_EXTRA.get(path.name, set()), f"{path.name} also triggers {others}"


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.name[:60])
def test_real_text_resembling_a_failure_does_not_trigger_it(path: Path) -> None:
    code = path.name.split("__", 1)[0].removeprefix("NEG-")
    assert code not in _codes(path), [(f.catalogue, f.id, f.title) for f in analyze_paths([str(path)]).findings]


def test_every_catalogue_entry_has_a_real_trigger() -> None:
    covered = {p.name.split("__", 1)[0] for p in POSITIVE}
    assert covered == set(ALL_CODES)
    text = (RECORDED / "PROVENANCE.md").read_text(encoding="utf-8")
    for p in RECORDED.glob("*.txt"):
        assert f"`{p.name}`" in text, f"{p.name} has no provenance row"
    assert all(re.search(r"https://github\.com/\S+/(issues|pull)/\d+", ln) for ln in text.splitlines()
               if ln.startswith("| `"))


def test_non_nvidia_module_rejected_by_secure_boot_is_not_f07() -> None:
    assert "F07" not in _codes(RECORDED / "NEG__non-nvidia-module-key-rejected__px1800kbd-10.txt")


# Real outputs of working machines (and failure texts of other kinds) that must raise no alarm.
HEALTHY = [
    *sorted((FIXTURES / "nvidia-smi-xml").glob("*.xml")),
    *sorted(p for p in (FIXTURES / "nvidia-smi-text").glob("*.txt") if "failed" not in p.name and "ecc" not in p.name),
    *sorted((FIXTURES / "nvidia-smi-text" / "full-captures").glob("linux-x86_64__nvidia-h100-80gb*")),
    *sorted((FIXTURES / "device-query").glob("*.txt")),
    FIXTURES / "linux-packages" / "dpkg-l-grep-nvidia__ubuntu-24.04__550.120-before-upgrade__mxochicale-code.txt",
    FIXTURES / "linux-packages" / "glxinfo-B__gtx-1660-super__525.105.17__lutris-tests.txt",
    FIXTURES / "linux-packages" / "ubuntu-drivers-devices__rtx-2000-ada-laptop-ad107glm__mxochicale-code.txt",
    *sorted((FIXTURES / "collect-env").glob("*.txt")),
    *sorted((FIXTURES / "lspci").glob("*.txt")),
    *sorted((FIXTURES / "windows").glob("*.txt")),
]


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: p.name[:60])
def test_healthy_real_outputs_raise_no_alarm(path: Path) -> None:
    analysis = analyze_paths([str(path)])
    alarms = [(f.severity.value, f.catalogue, f.id) for f in analysis.findings
              if f.severity in (Severity.WARNING, Severity.ERROR)]
    assert not alarms, alarms


@pytest.mark.parametrize(
    ("rel", "code", "severity"),
    [
        ("dmesg/xid-79-fallen-off-bus__nvidia-cloud-native-docs.txt", "F14", Severity.ERROR),
        ("dmesg/nvrm-xid-lines-119-43-79__dcgm-unit-test-strings.txt", "F14", Severity.ERROR),
        ("dmesg/xid-63-row-remapper__a100__ml-engineering.txt", "F16", Severity.WARNING),
        ("dmesg/pcie-bandwidth-limited-by__h100-gen5-behind-gen4-switch__abridged__ml-engineering.txt", "F15",
         Severity.WARNING),
        ("dmesg/dmesg-grep-excerpt__legion5-rtx-3060-mobile-nouveau-d3cold-resume-failure__fedora38-6.2.13__"
         "linuxhw-Dmesg.txt", "F08", Severity.WARNING),
        ("linux-packages/dpkg-l-grep-nvidia__ubuntu-24.04__580-open-half-configured-iF-iU__mxochicale-code.txt",
         "F09", Severity.ERROR),
        ("nvidia-smi-text/a100-sxm4-80gb__510.73.08__linux__nvidia-smi-q__ecc-remapped-rows__abridged__"
         "ml-engineering.txt", "F16", Severity.WARNING),
    ],
)
def test_other_real_fixtures_trigger_their_entry(rel: str, code: str, severity: Severity) -> None:
    analysis = analyze_paths([str(FIXTURES / rel)])
    assert analysis.findings[0].catalogue == code
    assert analysis.findings[0].severity == severity


def test_idle_lspci_link_downgrade_is_only_info() -> None:
    """An idle laptop GPU at 2.5 GT/s is power saving (nvtop maintainer); never a warning without load."""
    path = FIXTURES / "lspci" / ("lspci-vvnn__lenovo-legion5-15ach6h__rtx-3060-mobile-ga106m+amd-cezanne-igpu__"
                                 "fedora40__excerpt-4-devices__linuxhw-LsPCI.txt")
    findings = analyze_paths([str(path)]).findings
    f15 = [f for f in findings if f.catalogue == "F15"]
    assert f15 and all(f.severity == Severity.INFO for f in f15)
    assert "under load" in f15[0].detail


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.name[:60])
def test_advice_has_no_unfilled_template_fields(path: Path) -> None:
    """Data entries fill {names} from the evidence; a name the evidence did not give must not leak as '?'."""
    first = analyze_paths([str(path)]).findings[0]
    for text in (first.title, first.detail, first.fix):
        assert not re.search(r"\{\w+\}|[\s(]\?(?:[)\s]|$)", text), (path.name, text)
