"""The start-up check: a child process creates a QGuiApplication with the platform plugin; a missing or
damaged system library is named with its Debian package, and `gpusetup gui` falls back to the text report."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpusetup import qtcheck

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qt-plugin"
ROOT = Path(__file__).resolve().parents[2]


def test_recorded_loader_messages_name_the_library() -> None:
    platform, plugin, missing, detail = qtcheck.parse((FIX / "xcb-missing-icccm.txt").read_text())
    assert platform == "xcb" and plugin is not None and plugin.endswith("platforms/libqxcb.so")
    assert missing == ["libxcb-icccm.so.4"]
    assert "cannot open shared object file" in detail
    _, _, missing, detail = qtcheck.parse((FIX / "xcb-damaged-cursor.txt").read_text())
    assert missing == ["libxcb-cursor.so.0"] and "file too short" in detail


@pytest.mark.parametrize(("soname", "package"), [
    ("libxcb-icccm.so.4", "libxcb-icccm4"), ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-cursor.so.0", "libxcb-cursor0"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"), ("libEGL.so.1", "libegl1"), ("libGL.so.1", "libgl1"),
    ("libdbus-1.so.3", "libdbus-1-3"), ("libfontconfig.so.1", "libfontconfig1"),
])
def test_debian_package_names(soname: str, package: str) -> None:
    assert qtcheck.debian_package(soname) == package


def test_offscreen_plugin_loads_in_a_child() -> None:
    res = qtcheck.check("offscreen")
    assert res.ok and res.platform == "offscreen", res


def test_a_plugin_that_does_not_exist_is_reported_not_fatal() -> None:
    res = qtcheck.check("nosuchplatform")
    assert not res.ok and "nosuchplatform" in res.reason()


@pytest.fixture(scope="module")
def xvfb():
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    for n in range(91, 120):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            break
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        if Path(f"/tmp/.X11-unix/X{n}").exists():
            break
        time.sleep(0.1)
    yield f":{n}"
    proc.terminate()
    proc.wait(10)


def _xcb_lib(soname: str) -> Path:
    """Where the xcb plugin's Qt library finds ``soname`` on this machine (pytest.skip when it does not)."""
    import PySide6

    qpa = Path(PySide6.__file__).parent / "Qt" / "lib" / "libQt6XcbQpa.so.6"
    out = subprocess.run(["ldd", str(qpa)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == soname and len(parts) > 2 and parts[2].startswith("/"):
            return Path(parts[2]).resolve()
    pytest.skip(f"{soname} is not installed here")


def _hidden(lib: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run ``argv`` in a private mount namespace where ``lib`` is an empty file (as a broken package leaves it)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("hiding a library needs unshare and root")
    script = 'mount --bind /dev/null "$0" && exec "$@"'
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, str(lib), *argv],
                         capture_output=True, text=True, env=env, timeout=180)
    if ("mount:" in res.stderr and "permission denied" in res.stderr.lower()) or \
            res.stderr.startswith("unshare: cannot change root filesystem propagation"):  # e.g. inside a chroot
        pytest.skip("mount namespaces are not usable here: " + res.stderr.strip()[:200])
    return res


def test_hidden_xcb_library_is_named_with_its_package_under_xvfb(xvfb: str, tmp_path: Path) -> None:
    lib = _xcb_lib("libxcb-cursor.so.0")
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
    res = _hidden(lib, [sys.executable, "-m", "gpusetup.qtcheck", "--platform", "xcb"], env)
    assert res.returncode == 1, res.stderr
    assert "libxcb-cursor.so.0" in res.stderr and "libxcb-cursor0" in res.stderr, res.stderr
    res = _hidden(lib, [sys.executable, "-m", "gpusetup.qtcheck", "--packages", "--platform", "xcb"], env)
    assert "libxcb-cursor0" in res.stdout.split()


def test_gpusetup_gui_falls_back_to_the_text_report_instead_of_aborting(xvfb: str, tmp_path: Path) -> None:
    lib = _xcb_lib("libxcb-cursor.so.0")
    env = {**os.environ, "DISPLAY": xvfb, "GPUSETUP_HOME": str(tmp_path), "GPUSETUP_QT_INSTALL": "0"}
    env.pop("QT_QPA_PLATFORM", None)
    res = _hidden(lib, [sys.executable, "-m", "gpusetup", "gui"], env)
    assert res.returncode in (0, 1, 2), (res.returncode, res.stderr[-2000:])  # the report's codes, not -6 (abort)
    assert "the wizard's window cannot open here" in res.stderr and "libxcb-cursor0" in res.stderr
    assert "showing the text report instead" in res.stderr
    assert res.stdout.strip(), "the text report is printed"
    kept = tmp_path / "logs" / "window-problem.txt"
    assert kept.is_file() and "libxcb-cursor0" in kept.read_text()
    assert not (tmp_path / "state" / "qt-platform-ok").exists()



STAND_IN_APT = """#!/bin/sh
# stand-in apt-get: records its argv (one per line) and DEBIAN_FRONTEND. It can "install" only the package of
# the library the test hid, and does so the way installing it mends this machine: it takes the empty file off
# that library (same mount namespace). Any other package it cannot find, as apt-get says it.
{ printf 'DEBIAN_FRONTEND=%s\\n' "$DEBIAN_FRONTEND"; for a in "$@"; do printf '%s\\n' "$a"; done; echo --; } >> "$APT_LOG"
for a in "$@"; do
  case "$a" in
    -*|install) ;;
    "$HIDDEN_PACKAGE") [ "$APT_MENDS" = 1 ] || { echo "E: Unable to locate package $a" >&2; exit 100; }
                       umount "$HIDDEN_LIB" ;;
    *) echo "E: Unable to locate package $a" >&2; exit 100 ;;
  esac
done
"""

PROBLEM = "from gpusetup.commands.gui import window_problem\nprint('PROBLEM:', window_problem())\n"


def _argv(packages: list[str]) -> str:
    return "".join(f"{a}\n" for a in ["DEBIAN_FRONTEND=noninteractive", "install", "-y", "-q", *packages])


@pytest.mark.parametrize("mends", [True, False], ids=["apt-get-mends-it", "apt-get-fails"])
def test_as_root_the_missing_packages_are_installed_and_the_check_runs_again(
        xvfb: str, tmp_path: Path, mends: bool) -> None:
    """The root-install path of `gpusetup gui`, run for real: libxcb-cursor.so.0 is hidden (an empty file, as a
    broken package leaves it) and a stand-in apt-get on PATH records its argv. The loader names only that
    library while it is damaged (ldd stops there), so only a check run again after apt-get can name what else
    this machine lacks: a fresh Debian with xvfb (this one, CI) also lacks libxcb-icccm4 and libxcb-keysyms1;
    a desktop may lack nothing. The stand-in cannot provide those, so the run ends with apt-get's words."""
    lib = _xcb_lib("libxcb-cursor.so.0")
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
    env.pop("GPUSETUP_QT_INSTALL", None)
    # what this machine lacks besides the hidden library (checked without hiding anything)
    genuine = subprocess.run([sys.executable, "-m", "gpusetup.qtcheck", "--packages", "--platform", "xcb"],
                             capture_output=True, text=True, env=env, timeout=120).stdout.split()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    apt = bindir / "apt-get"
    apt.write_text(STAND_IN_APT)
    apt.chmod(0o755)
    log, home = tmp_path / "apt.log", tmp_path / "home"
    env.update({"GPUSETUP_HOME": str(home), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
                "APT_LOG": str(log), "HIDDEN_LIB": str(lib), "HIDDEN_PACKAGE": "libxcb-cursor0",
                "APT_MENDS": "1" if mends else "0"})
    res = _hidden(lib, [sys.executable, "-c", PROBLEM], env)
    assert res.returncode == 0, res.stderr[-2000:]
    calls = log.read_text().split("--\n")[:-1]
    problem = res.stdout.split("PROBLEM: ", 1)[1]
    marker = home / "state" / "qt-platform-ok"
    assert calls[0] == _argv(["libxcb-cursor0"])
    assert "installing the system libraries Qt needs: libxcb-cursor0\n" in res.stderr
    if not mends:
        assert len(calls) == 1  # nothing more is tried after apt-get failed
        assert "libxcb-cursor0" in problem and "(apt-get install did not work: E: Unable to locate package libxcb-cursor0)" in problem
    elif not genuine:  # the check ran again and passed: it is remembered
        assert calls == [_argv(["libxcb-cursor0"])] and problem.strip() == "None" and marker.is_file()
    else:  # the check ran again, named the rest, and they were asked for in one more apt-get run
        assert calls == [_argv(["libxcb-cursor0"]), _argv(genuine)], (calls, genuine)
        assert f"installing the system libraries Qt needs: {' '.join(genuine)}\n" in res.stderr
        assert "libxcb-cursor" not in problem and all(p in problem for p in genuine), problem
        assert f"(apt-get install did not work: E: Unable to locate package {genuine[0]})" in problem
    if not (mends and not genuine):
        assert not marker.exists()


BOOTSTRAP_APT = """#!/bin/sh
# stand-in apt-get for bootstrap.sh: records its argv; "update" succeeds; "install" succeeds for packages
# already installed here (as the real one does) and for the hidden library's package (it takes the empty file
# off, same mount namespace); any other package it cannot find, as apt-get says it.
{ printf 'DEBIAN_FRONTEND=%s\\n' "$DEBIAN_FRONTEND"; for a in "$@"; do printf '%s\\n' "$a"; done; echo --; } >> "$APT_LOG"
[ "$1" = update ] && exit 0
for a in "$@"; do
  case "$a" in
    -*|install) ;;
    "$HIDDEN_PACKAGE") umount "$HIDDEN_LIB" ;;
    *) dpkg-query -W -f='${Status}' "$a" 2>/dev/null | grep -q 'install ok installed' \\
         || { echo "E: Unable to locate package $a" >&2; exit 100; } ;;
  esac
done
"""


def test_bootstrap_as_root_installs_what_each_check_names(xvfb: str, tmp_path: Path) -> None:
    """bootstrap.sh's own root path, for real (`./bootstrap.sh run` with a display, its .venv already made):
    libxcb-cursor.so.0 is hidden, a stand-in apt-get records its calls. The first round asks for the named
    package with the base Qt packages, the check runs again and names what else is missing; apt-get is asked
    for those; when they cannot be had, the text report is shown instead of a window."""
    import json

    if not (ROOT / ".venv" / "bin" / "python").is_file():
        pytest.skip("bootstrap.sh has not made its .venv in this checkout")
    lib = _xcb_lib("libxcb-cursor.so.0")
    env = {**os.environ, "DISPLAY": xvfb, "QT_QPA_PLATFORM": "xcb"}
    env.pop("GPUSETUP_QT_INSTALL", None)
    env.pop("DEBIAN_FRONTEND", None)
    genuine = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "gpusetup.qtcheck", "--packages",
                              "--platform", "xcb"], capture_output=True, text=True, env=env, timeout=120).stdout.split()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "apt-get").write_text(BOOTSTRAP_APT)
    (bindir / "apt-get").chmod(0o755)
    log = tmp_path / "apt.log"
    env.update({"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "APT_LOG": str(log), "HIDDEN_LIB": str(lib),
                "HIDDEN_PACKAGE": "libxcb-cursor0", "GPUSETUP_HOME": str(tmp_path / "home")})
    # `run ARGS`: with a window, `gpusetup ARGS`; without one, `gpusetup diagnose ARGS` (the text report)
    args = ["--json"] if genuine else ["diagnose", "--json"]
    res = _hidden(lib, ["bash", str(ROOT / "bootstrap.sh"), "run", *args], env)
    calls = log.read_text().split("--\n")[:-1]
    base = re.search(r'^QT_BASE_PACKAGES="([^"]*)"', (ROOT / "bootstrap.sh").read_text(), re.M)
    assert base is not None
    assert calls[0] == "DEBIAN_FRONTEND=\nupdate\n-qq\n", calls
    assert calls[1] == _argv_qq(["libxcb-cursor0", *base.group(1).split()]), calls
    if genuine:  # the check ran again after the first round and named the rest: one more apt-get run
        assert calls[2:] == [_argv_qq(genuine)], calls
        assert "the Qt user interface cannot load" in res.stderr and "showing the text report instead" in res.stderr
        report = res.stdout[res.stdout.index("{"):]  # after bootstrap's own "installing" lines
        assert json.loads(report)["machine"], "the report instead of a window"
    else:  # nothing else was missing: the check passed after the first round
        assert calls[2:] == [], calls


def _argv_qq(packages: list[str]) -> str:
    return "".join(f"{a}\n" for a in ["DEBIAN_FRONTEND=noninteractive", "install", "-y", "-qq", *packages])
