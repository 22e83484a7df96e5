"""The CPU baseline's measurements with numpy, runnable in any Python that has numpy.

Imported by :mod:`gpusetup.selftest.cpu` when this Python has numpy; otherwise run as a script with the
target environment's interpreter (the packaged app does not carry numpy and OpenBLAS: 41 MiB, for one
baseline). Standard library and numpy only; nothing from gpusetup. As a script: ``python cpucheck.py
'{"n": 1024, "samples": 3, "count": 8388608}'``; the last stdout line is ``GPUSETUP-CPUCHECK: <json>``.
"""

import json
import sys
import time

MARK = "GPUSETUP-CPUCHECK: "


def measure(n, samples, count, check=None):
    """Raw timings: matmul GFLOP/s samples and STREAM-style copy/triad GB/s samples (``check`` is called
    between samples and may raise to stop)."""
    import numpy as np  # lazy: the script runs where numpy may be missing, and says so (main)

    check = check or (lambda: None)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b  # warm-up
    matmul = []
    for _ in range(samples):
        check()
        t = time.perf_counter()
        a @ b
        matmul.append(2.0 * n**3 / (time.perf_counter() - t) / 1e9)
    del a, b
    x = np.full(count, 1.0)
    y = np.full(count, 2.0)
    z = np.empty(count)
    copy_s, triad_s = [], []
    for i in range(max(3, samples + 1)):  # STREAM: best time, first iteration excluded
        check()
        t = time.perf_counter()
        np.copyto(z, x)
        t1 = time.perf_counter()
        np.multiply(y, 3.0, out=z)
        np.add(z, x, out=z)
        t2 = time.perf_counter()
        if i:
            copy_s.append(16 * count / (t1 - t) / 1e9)
            triad_s.append(24 * count / (t2 - t1) / 1e9)
    return {"numpy": np.__version__, "matmul": matmul, "copy": copy_s, "triad": triad_s,
            "ok": bool(z[0] == 7.0 and z[-1] == 7.0)}


def main(argv):
    args = json.loads(argv[0])
    out = {"executable": sys.executable}
    try:
        out.update(measure(int(args["n"]), int(args["samples"]), int(args["count"])))
    except ImportError as exc:
        out["missing"] = str(exc)
    print(MARK + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
