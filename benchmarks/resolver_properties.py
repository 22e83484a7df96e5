"""The resolver's property test at scale: many generated machine profiles with fresh random seeds (CI runs a fixed
1,500 with tests/compat/test_resolver_properties.py).

    .venv/bin/python benchmarks/resolver_properties.py            # 20,000 machines, random seeds
    .venv/bin/python benchmarks/resolver_properties.py 100000

Prints the pytest summary; a failure shows the smallest machine profile hypothesis found that breaks an invariant.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    examples = int(argv[0]) if argv else 20000
    env = {**os.environ, "GPUSETUP_PROPERTY_EXAMPLES": str(examples), "GPUSETUP_PROPERTY_RANDOM": "1",
           "GPUSETUP_LIVE": "off"}
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          "tests/compat/test_resolver_properties.py::test_every_generated_machine_is_planned_within_the_invariants"],
                         cwd=ROOT, env=env, check=False)
    print(f"{examples} generated machines in {time.perf_counter() - t:.0f} s: "
          f"{'all within the invariants' if res.returncode == 0 else 'FAILED (see above)'}")
    return res.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
