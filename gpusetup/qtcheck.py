"""Will the wizard's window open here? Checked in a child process *before* Qt is touched in this one.

A Qt platform plugin that cannot load aborts the process (no exception to catch), so the check starts a
child that creates a ``QGuiApplication`` with the chosen platform (``QT_DEBUG_PLUGINS=1``, with a timeout).
When it fails, the loader's own message names the first missing library; ``ldd`` on the plugin that failed
then names every missing one, and each is mapped to the Debian/Ubuntu package that ships it. ``bootstrap.sh``
runs the same check (``python -m gpusetup.qtcheck``) and installs the packages when it runs as root.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from gpusetup.probe.pyenv import frozen, own_interpreter
from gpusetup.runner import Runner, SubprocessRunner

PROBE_FLAG = "--gpusetup-qt-probe"  # the packaged GUI program answers this (gpusetup.gui.probe), no wizard
OK_MARK = "GPUSETUP-QT-OK"
PROBE_CODE = (
    "import sys\n"
    "from PySide6.QtGui import QGuiApplication\n"
    "app = QGuiApplication(sys.argv[:1])\n"
    f"print({OK_MARK!r}, app.platformName(), flush=True)\n"
)
TIMEOUT = 30.0

_CANNOT_LOAD = re.compile(r"Cannot load library (\S+?): \(?(\S+?\.so[\w.]*): ([^)\"\n]+)")
_NO_FILE = re.compile(r"([\w.+-]+\.so[\w.]*): cannot open shared object file")
_LDD_ERROR = re.compile(r"error while loading shared libraries: (\S+?\.so[\w.]*): (.+)")
_NOT_FOUND = re.compile(r"^\s*([\w.+-]+\.so[\w.]*) => not found", re.M)
_COULD_NOT = re.compile(r'Could not (?:load|find) the Qt platform plugin "([\w-]+)"')

# sonames whose Debian package does not follow the policy name (libfoo.so.N -> libfooN, libfoo-1.so.0 -> libfoo-1-0)
_PACKAGE_EXCEPTIONS = {
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libOpenGL.so.0": "libopengl0",
    "libGLX.so.0": "libglx0",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
}


@dataclass
class QtCheck:
    ok: bool
    platform: str = ""  # the plugin Qt chose (xcb, wayland, offscreen…) or the one that failed
    missing: list[str] = field(default_factory=list)  # missing shared libraries (sonames)
    packages: list[str] = field(default_factory=list)  # Debian/Ubuntu packages that provide them
    detail: str = ""  # the loader's own words, for the log
    installed: list[list[str]] = field(default_factory=list)  # the packages each apt-get run was asked for
    install_error: str = ""  # apt-get's last words when it failed

    def reason(self) -> str:
        """One plain sentence for the user (English; the caller may be a terminal without Qt)."""
        if self.ok:
            return f"the {self.platform} platform plugin loads"
        what = f'Qt\'s "{self.platform}" display plugin cannot load' if self.platform else "Qt cannot open a window"
        if self.missing:
            what += " because these system libraries are missing: " + ", ".join(self.missing)
            if self.packages:
                what += ". Install them with: sudo apt-get install -y " + " ".join(self.packages)
        elif self.detail:
            what += f" ({self.detail})"
        if self.install_error:
            what += f" (apt-get install did not work: {self.install_error})"
        return what + "."


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package shipping ``soname`` by Debian's library packaging policy (§8.1)."""
    if soname in _PACKAGE_EXCEPTIONS:
        return _PACKAGE_EXCEPTIONS[soname]
    m = re.match(r"^(lib[\w.+-]+?)\.so\.(\d+)", soname)
    if not m:
        return soname
    name, major = m.group(1).lower(), m.group(2)
    return f"{name}-{major}" if name[-1].isdigit() else f"{name}{major}"


def parse(output: str) -> tuple[str, str | None, list[str], str]:
    """(failed platform, failing plugin path, missing sonames, detail) from a failed child's output."""
    platform = ""
    m = _COULD_NOT.search(output)
    if m:
        platform = m.group(1)
    plugin = None
    missing: list[str] = []
    detail = ""
    for cm in _CANNOT_LOAD.finditer(output):
        plugin = plugin or cm.group(1)
        lib = os.path.basename(cm.group(2))
        if lib != os.path.basename(cm.group(1)) and lib not in missing:  # missing, or damaged ("file too short")
            missing.append(lib)
        detail = detail or f"{cm.group(2)}: {cm.group(3).strip()}"
    # PySide6 itself failing to import (libEGL.so.1 missing) says it in an ImportError
    missing = list(dict.fromkeys(missing + _NOT_FOUND.findall(output) + _NO_FILE.findall(output)))
    if not detail:
        lines = [ln for ln in output.splitlines() if ln.startswith(("qt.qpa", "This application"))]
        detail = lines[-1].strip() if lines else ""
    return platform, plugin, missing, detail


def probe_argv() -> list[str] | None:
    """How to start the child: this Python with the probe code, or the packaged GUI program with its flag."""
    py = own_interpreter()
    if py:
        return [py, "-c", PROBE_CODE]
    if frozen():
        return [sys.executable, PROBE_FLAG]
    return None


def check(platform: str | None = None, runner: Runner | None = None, timeout: float = TIMEOUT,
          env: dict[str, str] | None = None) -> QtCheck:
    """Start the child with ``platform`` (None: Qt's own choice from DISPLAY/WAYLAND_DISPLAY) and report."""
    runner = runner or SubprocessRunner()
    argv = probe_argv()
    if argv is None:
        return QtCheck(False, platform or "", detail="no Python to run the check with")
    child_env = dict(os.environ if env is None else env)
    child_env["QT_DEBUG_PLUGINS"] = "1"
    if platform:
        child_env["QT_QPA_PLATFORM"] = platform
    res = runner.run(argv, timeout=timeout, env=child_env)
    out = (res.stdout or "") + "\n" + (res.stderr or "")
    ok_line = next((ln for ln in res.stdout.splitlines() if ln.startswith(OK_MARK)), None)
    if res.ok and ok_line:
        return QtCheck(True, ok_line.split()[1] if len(ok_line.split()) > 1 else platform or "")
    failed, plugin, missing, detail = parse(out)
    if res.timed_out:
        detail = f"the check did not finish within {timeout:g} s"
    if plugin:
        ldd = runner.run(["ldd", plugin], timeout=10)
        found = _NOT_FOUND.findall(ldd.stdout) + [os.path.basename(p) for p, _ in _LDD_ERROR.findall(ldd.stderr)]
        for dep in re.findall(r"=> (\S*libQt6\w+\.so[\w.]*)", ldd.stdout):  # Qt's own libs the plugin pulls in
            more = runner.run(["ldd", dep], timeout=10)
            found += _NOT_FOUND.findall(more.stdout) + [os.path.basename(p) for p, _ in _LDD_ERROR.findall(more.stderr)]
        missing = list(dict.fromkeys(missing + found))
    packages = list(dict.fromkeys(debian_package(s) for s in missing))
    return QtCheck(False, failed or platform or "", missing, packages, detail or (res.error or "").strip())


def may_install(runner: Runner) -> bool:
    """Whether missing system packages may be installed here: as root, with apt-get, unless
    ``GPUSETUP_QT_INSTALL=0`` says never."""
    return (os.environ.get("GPUSETUP_QT_INSTALL", "1") != "0" and hasattr(os, "geteuid") and os.geteuid() == 0
            and runner.which("apt-get") is not None)


def ensure(platform: str | None = None, runner: Runner | None = None, install: bool = True, rounds: int = 4,
           notify: Callable[[list[str]], None] | None = None) -> QtCheck:
    """:func:`check`, and when it fails and we may install (:func:`may_install`), ``apt-get install`` the
    packages it names and check again. The loader names one missing library at a time when another one is
    damaged (ldd stops at the first), so this repeats while each check names packages not tried yet (a fresh
    Debian lacked libxcb-cursor0, then libxcb-icccm4 and libxcb-keysyms1). ``notify`` hears each batch."""
    runner = runner or SubprocessRunner()
    res = check(platform, runner)
    done: list[list[str]] = []
    tried: set[str] = set()
    while not res.ok and install and len(done) < rounds and may_install(runner):
        new = [p for p in res.packages if p not in tried]
        if not new:
            break
        tried.update(new)
        done.append(new)
        if notify is not None:
            notify(new)
        inst = runner.run(["apt-get", "install", "-y", "-q", *new], timeout=900,
                          env={"DEBIAN_FRONTEND": "noninteractive"})
        if not inst.ok:
            tail = (inst.stderr or inst.stdout).strip().splitlines()[-1:] or [inst.error or "failed"]
            res.installed, res.install_error = done, tail[0]
            return res
        res = check(platform, runner)
    res.installed = done
    return res


def main(argv: list[str] | None = None) -> int:
    """``python -m gpusetup.qtcheck [--platform P]``: exit 0 when the window can open, else 1 and the reason;
    ``--packages`` prints only the missing Debian packages (for bootstrap.sh)."""
    ap = argparse.ArgumentParser(prog="python -m gpusetup.qtcheck")
    ap.add_argument("--platform", help="Qt platform plugin to check (xcb, wayland, offscreen…)")
    ap.add_argument("--packages", action="store_true", help="print only the missing system packages")
    args = ap.parse_args(argv)
    res = check(args.platform)
    if args.packages:
        print(" ".join(res.packages))
    print(res.reason(), file=sys.stderr if args.packages or not res.ok else sys.stdout)
    return 0 if res.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
