"""The other Pythons this machine has, for tests of code that runs in an environment whatever its Python is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def other_pythons(oldest: tuple[int, int] = (3, 8), probe: str = "import venv", env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> list[tuple[str, str]]:
    """("3.X", interpreter) for each Python from ``oldest`` on that is not this one, one per version: on PATH, or
    installed by pyenv (its shims answer only inside a selected version), and able to run ``probe``."""
    found = [shutil.which(f"python3.{minor}") for minor in range(oldest[1], 16)]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found += sorted(str(p) for p in pyenv.glob("3.*/bin/python3") if p.is_file())
    seen, out = {f"{sys.version_info[0]}.{sys.version_info[1]}"}, []
    for exe in (f for f in found if f):
        res = subprocess.run([exe, "-c", f"import sys; {probe}; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60, env=env, cwd=cwd)
        version = res.stdout.strip()
        if res.returncode != 0 or version in seen:
            continue  # a pyenv shim with no version selected, a broken interpreter, a version already listed
        if tuple(int(x) for x in version.split(".")) >= oldest:
            seen.add(version)
            out.append((version, exe))
    return out
