"""Framework check, run as a script by the *target* Python (``python fwcheck.py N name...``).

Standalone on purpose: it runs inside the environment being checked, which may not have gpusetup and may be
an older Python (3.8+), so it imports nothing from gpusetup. For each framework it reports whether it is
installed (its distributions' metadata), whether it starts (imports), which device it computes on — the GPU
when it sees one, else the processor — and there a matmul compared with a float64 reference (TF32 disabled),
how fast that matmul ran, and a small convolution (cuDNN for torch/TensorFlow on the GPU, XLA for JAX)
compared with a float64 reference. The last stdout line is ``GPUSETUP-FWCHECK: <json>``. "numpy" is the
same check on the processor with numpy alone, used to test the plumbing where no framework is installed.
"""

import json
import sys
import time
import traceback

U32 = 2.0 ** -24


def _err_ratio(np, got, a, b):
    """max |got - exact| / (n·u·(|a|@|b|)): <= 1 means within FP32 rounding of the exact product."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    exact = a64 @ b64
    bound = (np.abs(a64) @ np.abs(b64)) * (a64.shape[1] * U32) + 1e-30
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - exact) / bound))


def _conv_ref(np, x, w):
    """Direct float64 NCHW 'valid' convolution (cross-correlation, as the frameworks define it)."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + wd - kw + 1]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _rel(np, got, ref):
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - ref)) / (np.max(np.abs(ref)) + 1e-30))


def _inputs(np, n):
    rng = np.random.default_rng(20261122)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    x = rng.standard_normal((4, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    return a, b, x, w


# the distributions that provide each framework (import name → distribution names), so that a framework whose
# files are damaged ("No module named 'tensorflow.python'") is told apart from one that is not installed at all
DISTS = {
    "torch": ("torch",),
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
                   "tf-nightly"),
    "jax": ("jax", "jaxlib"),
    "numpy": ("numpy",),
}
CPU_N = 1024  # the matrix size on the processor: a few hundred milliseconds, not the GPU's seconds
TIME_BUDGET = 0.3  # seconds of timed matmuls, in SAMPLES samples (each at most MAX_REPEATS matmuls)
SAMPLES, MAX_REPEATS = 3, 200
CONV_SHAPE = "4x16x32x32 * 32x16x3x3"


def installed_dists(name):
    """{distribution: version} of what provides ``name`` here (package metadata; nothing is imported)."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8 is refused before this script runs
        return {}
    out = {}
    for dist in DISTS.get(name, (name,)):
        try:
            out[dist] = metadata.version(dist)
        except Exception:  # noqa: BLE001 - PackageNotFoundError, or a damaged METADATA
            continue
    return out


def _timed(run, sync, flop, each=False):
    """FLOP/s of ``run`` (warmed up once): the best of SAMPLES timed samples of about TIME_BUDGET / SAMPLES
    seconds each (the CPU baseline reports its best of 3 too); (rate, repeats in all). ``each``: wait for every
    result (on the processor an asynchronous framework could otherwise overlap them)."""
    sync(run())
    best, total = 0.0, 0
    for _ in range(SAMPLES):
        count = 0
        t = time.perf_counter()
        while True:
            out = run()
            if each:
                sync(out)
            count += 1
            if count >= MAX_REPEATS or time.perf_counter() - t >= TIME_BUDGET / SAMPLES:
                break
        sync(out)
        best = max(best, flop * count / max(time.perf_counter() - t, 1e-9))
        total += count
    return best, total


def _matmul_and_conv(r, np, n, matmul, sync, to_host, conv):
    """The checked matmul and convolution, into ``r``: error against float64, speed, convolution error."""
    a, b, x, w = _inputs(np, n)
    r["n"] = n
    r["stage"] = "compute"
    r["matmul_err_ratio"] = _err_ratio(np, to_host(matmul(a, b, True)), a, b)
    r["matmul_flops"], r["repeats"] = _timed(lambda: matmul(a, b, False), sync, 2.0 * n ** 3, r.get("on") != "gpu")
    r["conv_rel_err"] = _rel(np, to_host(conv(x, w)), _conv_ref(np, x, w))
    r["conv_shape"] = CONV_SHAPE
    return r


def _numpy(r):
    """numpy, which the check compares with (a framework may start without it: then the check cannot run)."""
    r["stage"] = "numpy"
    import numpy

    r["stage"] = "import"
    return numpy


def check_torch(n, r):
    import torch
    import torch.nn.functional as F  # noqa: N812

    np = _numpy(r)
    r["version"] = torch.__version__
    r["build_cuda"] = getattr(torch.version, "cuda", None)
    r["build_rocm"] = getattr(torch.version, "hip", None)
    r["stage"] = "device"
    r["gpu"] = bool(torch.cuda.is_available())
    if r["gpu"]:
        dev = torch.device("cuda:0")
        r["on"], r["device"] = "gpu", torch.cuda.get_device_name(0)
        props = torch.cuda.get_device_properties(0)
        r["sm_count"], r["cc"] = props.multi_processor_count, f"{props.major}.{props.minor}"
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        r["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        r["conv_backend"] = "cuDNN {}".format(r["cudnn"]) if r["cudnn"] else "native"
    else:
        dev = torch.device("cpu")
        r["on"], r["device"], r["conv_backend"] = "cpu", "cpu", "native"
        n = min(n, CPU_N)
    held = {}

    def matmul(a, b, fresh):
        if fresh or "a" not in held:
            held["a"], held["b"] = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        return held["a"] @ held["b"]

    def sync(_):
        if r["gpu"]:
            torch.cuda.synchronize()

    def conv(x, w):
        return F.conv2d(torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev))

    return _matmul_and_conv(r, np, n, matmul, sync, lambda t: t.cpu().numpy(), conv)


def check_tensorflow(n, r):
    import tensorflow as tf

    np = _numpy(r)
    build = tf.sysconfig.get_build_info() if hasattr(tf.sysconfig, "get_build_info") else {}
    r["version"], r["build_cuda"], r["cudnn"] = tf.__version__, build.get("cuda_version"), build.get("cudnn_version")
    r["stage"] = "device"
    gpus = tf.config.list_physical_devices("GPU")
    r["gpu"] = bool(gpus)
    if gpus:
        where = "/GPU:0"
        details = {}
        try:
            details = tf.config.experimental.get_device_details(gpus[0]) or {}
        except Exception:  # noqa: BLE001 - older TensorFlow: the device's name only
            details = {}
        r["on"], r["device"] = "gpu", details.get("device_name") or gpus[0].name
        cc = details.get("compute_capability")
        if cc:
            r["cc"] = "{}.{}".format(*cc)
        tf.config.experimental.enable_tensor_float_32_execution(False)
        r["conv_backend"] = "cuDNN {}".format(r["cudnn"]) if r.get("cudnn") else "cuDNN"
    else:
        where = "/CPU:0"
        r["on"], r["device"], r["conv_backend"] = "cpu", "cpu", "oneDNN/Eigen"
        n = min(n, CPU_N)
    held = {}

    def matmul(a, b, fresh):
        with tf.device(where):
            if fresh or "a" not in held:
                held["a"], held["b"] = tf.constant(a), tf.constant(b)
            return tf.matmul(held["a"], held["b"])

    def conv(x, w):
        with tf.device(where):
            y = tf.nn.conv2d(tf.constant(x.transpose(0, 2, 3, 1)), tf.constant(w.transpose(2, 3, 1, 0)),
                             strides=1, padding="VALID")
        return y.numpy().transpose(0, 3, 1, 2)

    def to_host(t):
        return t if isinstance(t, np.ndarray) else t.numpy()

    return _matmul_and_conv(r, np, n, matmul, lambda t: t.numpy(), to_host, conv)


def check_jax(n, r):
    import jax
    import jax.numpy as jnp

    np = _numpy(r)
    r["version"] = jax.__version__
    r["stage"] = "device"
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    r["gpu"] = bool(gpus)
    device = gpus[0] if gpus else jax.devices("cpu")[0]
    r["on"] = "gpu" if gpus else "cpu"
    r["device"] = getattr(device, "device_kind", None) or str(device)
    r["conv_backend"] = "XLA"
    if not gpus:
        n = min(n, CPU_N)
    hi = jax.lax.Precision.HIGHEST
    mm = jax.jit(lambda p, q: jnp.matmul(p, q, precision=hi))
    held = {}

    def matmul(a, b, fresh):
        if fresh or "a" not in held:
            held["a"], held["b"] = jax.device_put(a, device), jax.device_put(b, device)
        return mm(held["a"], held["b"])

    def conv(x, w):
        return jax.lax.conv_general_dilated(jax.device_put(x, device), jax.device_put(w, device), (1, 1), "VALID",
                                            precision=hi)

    return _matmul_and_conv(r, np, n, matmul, lambda t: t.block_until_ready(), np.asarray, conv)


def check_numpy(n, r):
    """The processor only: the same comparisons, so the plumbing is tested where no GPU framework exists."""
    import numpy as np

    r["version"], r["gpu"], r["on"], r["device"], r["conv_backend"] = np.__version__, False, "cpu", "cpu", "numpy"
    r["stage"] = "device"

    def conv(x, w):  # a different algorithm in float32 (im2col + matmul), as a GPU library would do it
        nb, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        oh, ow = h - kh + 1, wd - kw + 1
        cols = np.stack([x[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
        cols = cols.reshape(nb, c * kh * kw, oh * ow)
        return np.matmul(w.reshape(o, c * kh * kw), cols).reshape(nb, o, oh, ow)

    return _matmul_and_conv(r, np, min(n, CPU_N), lambda a, b, fresh: a @ b, lambda t: None, lambda t: t, conv)


CHECKS = {"torch": check_torch, "tensorflow": check_tensorflow, "jax": check_jax, "numpy": check_numpy}


def _last_line(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[-1] if text else type(exc).__name__


def check(name, n):
    """One framework's entry: installed or not; if so, imported, its device, and the checked computations.

    ``stage`` says how far it got: "import" (it does not start), "device" (it started but could not pick its
    device), "compute" (a computation failed); absent when everything ran."""
    entry = {"name": name, "dists": installed_dists(name), "stage": "import"}
    try:
        CHECKS[name](n, entry)
        entry["installed"] = True
        del entry["stage"]
    except ImportError as exc:
        missing = (getattr(exc, "name", None) or "").split(".")[0]
        if not entry["dists"] and missing in (name, "jaxlib") and entry["stage"] == "import" and not entry.get("version"):
            return {"name": name, "installed": False, "dists": {}}
        entry["installed"] = True
        entry["error"] = _last_line(exc)
        entry["traceback"] = traceback.format_exc()[-2000:]
    except Exception as exc:  # noqa: BLE001 - report every failure as data
        entry["installed"] = True
        entry["error"] = _last_line(exc)
        entry["traceback"] = traceback.format_exc()[-2000:]
    return entry


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 1024
    names = argv[2:] or ["torch", "tensorflow", "jax"]
    out = {"python": sys.version.split()[0], "executable": sys.executable, "frameworks": []}
    for name in names:
        out["frameworks"].append(check(name, n) if name in CHECKS else {"name": name, "installed": False})
    sys.stdout.write("GPUSETUP-FWCHECK: " + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
