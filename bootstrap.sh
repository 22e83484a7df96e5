#!/usr/bin/env bash
# Sets everything up in ./.venv (only python3 with its venv module is needed), then:
#   ./bootstrap.sh run [ARGS...]   runs gpusetup: the wizard where there is a display, else the diagnose report
#   ./bootstrap.sh test [ARGS...]  runs the whole test suite (extra ARGS go to pytest)
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-run}"
[ $# -gt 0 ] && shift

PY="${PYTHON:-python3}"
VENV=".venv"

die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

command -v "$PY" >/dev/null || die "python3 is not installed. Install it with: sudo apt-get install -y python3 python3-venv"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "gpusetup needs Python 3.10 or newer; this is $("$PY" --version 2>&1)."

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV ..."
  if ! "$PY" -m venv "$VENV" >/tmp/gpusetup-venv.err 2>&1; then
    rm -rf "$VENV"
    ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    # Debian's message goes to stdout and ends with a blank line: show its first real line
    why=$(grep -m1 -E '[[:alnum:]]' /tmp/gpusetup-venv.err || true)
    die "could not create a virtual environment (${why:-no reason given}). On Debian/Ubuntu: sudo apt-get install -y python${ver}-venv"
  fi
fi
VPY="$VENV/bin/python"

# run: the wizard too (gpusetup[gui]: PySide6) and analyze's similar-report search (gpusetup[analyze]: bm25s,
# numpy); test: everything the tests use ([test] includes both). `pip install gpusetup` with no extras is the
# headless core (no Qt, no numpy).
extras="[gui,analyze]"
[ "$mode" = "test" ] && extras="[test]"
stamp="$VENV/.installed"
[ "$mode" = "test" ] && stamp="$VENV/.installed-test"
want=$(cat pyproject.toml | sha256sum | cut -c1-16)
current() { [ -f "$1" ] && [ "$(cat "$1")" = "$want" ]; }
# the test install is a superset of the plain one
if ! current "$stamp" && ! { [ "$mode" != "test" ] && current "$VENV/.installed-test"; }; then
  echo "bootstrap: installing gpusetup${extras} and its dependencies into $VENV ..."
  "$VPY" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  if ! "$VPY" -m pip install --disable-pip-version-check -e ".${extras}" >"$VENV/pip-install.log" 2>&1; then
    tail -n 25 "$VENV/pip-install.log" >&2
    die "installing the Python packages failed (full log: $VENV/pip-install.log). Check the network or proxy (HTTPS_PROXY) and try again."
  fi
  echo "$want" > "$stamp"
fi

# Qt needs a few system libraries that a minimal Debian/Ubuntu lacks. The check really loads the platform
# plugin in a child process (python -m gpusetup.qtcheck, the same check `gpusetup gui` runs), names the
# missing libraries' packages exactly, installs them when we are root, and never ends in a bare abort.
# What PySide6's offscreen and xcb platforms load on a minimal Debian/Ubuntu (a clean bookworm root needed
# libgl1 libxkbcommon0 libegl1 libglib2.0-0 libfreetype6 libfontconfig1 one after the other): installed
# together at the first miss, so one apt-get run does it instead of one per library.
QT_BASE_PACKAGES="libegl1 libgl1 libopengl0 libxkbcommon0 libfontconfig1 libfreetype6 libdbus-1-3 libglib2.0-0"
ensure_qt() {
  local platform="$1" err pkgs
  for n in 1 2 3 4 5 6 7 8; do
    pkgs=$("$VPY" -m gpusetup.qtcheck --packages ${platform:+--platform "$platform"} 2>/tmp/gpusetup-qtcheck.err) && return 0
    err=$(tail -n 1 /tmp/gpusetup-qtcheck.err)
    [ "$n" = 1 ] && pkgs="$pkgs $QT_BASE_PACKAGES"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "bootstrap: Qt needs system libraries; installing: $pkgs"
      [ -n "${_apt_updated:-}" ] || { apt-get update -qq >/dev/null || true; _apt_updated=1; }
      # shellcheck disable=SC2086
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null || break
    else
      break
    fi
  done
  echo "bootstrap: the Qt user interface cannot load: $err" >&2
  return 1
}

# The tests also use a C compiler: they build a fake libcuda.so to test the GPU self-test path without a GPU.
# As root with apt (a container, CI, a fresh machine) it is installed, saying so; otherwise those tests skip
# with the command that installs it. (Chromium, for one HTML rendering test, is left to .ci/run: 100+ MB.)
ensure_test_tools() {
  local want=()
  command -v cc >/dev/null 2>&1 || want+=(gcc)
  [ -e /usr/include/stdio.h ] || want+=(libc6-dev)
  # The packaged-app test builds with PyInstaller, which needs the interpreter's shared library: Debian's
  # python3 is built shared, but libpython3.X.so.1.0 is in its own package (libpython3.X).
  local solib
  solib=$("$VPY" -c 'import os, sysconfig as s; v = s.get_config_var; n = v("INSTSONAME") or ""
print(n if v("Py_ENABLE_SHARED") and n and not os.path.exists(os.path.join(v("LIBDIR") or "", n)) else "")' 2>/dev/null || true)
  [ -z "$solib" ] || want+=("$(printf '%s' "$solib" | sed -E 's/^(libpython[0-9]+\.[0-9]+).*/\1/')")
  [ ${#want[@]} -gt 0 ] || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bootstrap: the tests need ${want[*]} (to build the fake libcuda and the packaged app); installing ..."
    [ -n "${_apt_updated:-}" ] || { apt-get update -qq >/dev/null || true; _apt_updated=1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null \
      || echo "bootstrap: could not install ${want[*]}; the tests that need them will be skipped, saying why." >&2
  else
    echo "bootstrap: note: ${want[*]} missing, so some tests will be skipped (sudo apt-get install -y ${want[*]})." >&2
  fi
}

case "$mode" in
  run)
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      ensure_qt "" || { echo "bootstrap: showing the text report instead." >&2; exec "$VPY" -m gpusetup diagnose "$@"; }
    fi
    exec "$VPY" -m gpusetup "$@"
    ;;
  test)
    export QT_QPA_PLATFORM=offscreen
    ensure_qt offscreen || die "the GUI tests need Qt's system libraries (see above)."
    ensure_test_tools
    set +e
    "$VPY" -m pytest -q "$@"
    rc=$?
    set -e
    if [ $rc -eq 5 ]; then
      die "pytest collected no tests: that is a failure, not a pass."
    fi
    exit $rc
    ;;
  *)
    die "unknown mode '$mode'. Use: ./bootstrap.sh run   or   ./bootstrap.sh test"
    ;;
esac
