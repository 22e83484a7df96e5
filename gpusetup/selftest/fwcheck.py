"""Framework check, run as a script by the *target* Python (``python fwcheck.py N name...``).

Standalone on purpose: it runs inside the environment being checked, which may not have gpusetup and may be
an older Python (3.8+), so it imports nothing from gpusetup. For each framework it reports whether it is
installed, whether it sees the GPU, a matmul on the GPU compared with a float64 CPU reference (TF32
disabled), a convolution (cuDNN for torch/TensorFlow, XLA for JAX) compared with the CPU, and the GPU's
matmul speed. The last stdout line is ``GPUSETUP-FWCHECK: <json>``. "numpy" is a CPU-only run of the same
path, used to test the plumbing where no GPU framework exists.
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


def check_torch(n):
    import numpy as np
    import torch
    import torch.nn.functional as F  # noqa: N812

    r = {"version": torch.__version__, "build_cuda": getattr(torch.version, "cuda", None),
         "build_rocm": getattr(torch.version, "hip", None), "gpu": bool(torch.cuda.is_available())}
    if not r["gpu"]:
        return r
    dev = torch.device("cuda:0")
    r["device"] = torch.cuda.get_device_name(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a, b, x, w = _inputs(np, n)
    ga, gb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    got = (ga @ gb).cpu().numpy()
    r["matmul_err_ratio"] = _err_ratio(np, got, a, b)
    for _ in range(3):
        ga @ gb
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        ga @ gb
    stop.record()
    torch.cuda.synchronize()
    r["matmul_tflops"] = 2.0 * n ** 3 * 10 / (start.elapsed_time(stop) / 1e3) / 1e12
    r["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    y = F.conv2d(torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)).cpu().numpy()
    r["conv_rel_err"] = _rel(np, y, _conv_ref(np, x, w))
    r["conv_backend"] = "cuDNN {}".format(r["cudnn"]) if r["cudnn"] else "native"
    return r


def check_tensorflow(n):
    import numpy as np
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    build = tf.sysconfig.get_build_info() if hasattr(tf.sysconfig, "get_build_info") else {}
    r = {"version": tf.__version__, "build_cuda": build.get("cuda_version"), "gpu": bool(gpus),
         "cudnn": build.get("cudnn_version")}
    if not gpus:
        return r
    r["device"] = gpus[0].name
    tf.config.experimental.enable_tensor_float_32_execution(False)
    a, b, x, w = _inputs(np, n)
    with tf.device("/GPU:0"):
        ga, gb = tf.constant(a), tf.constant(b)
        r["matmul_err_ratio"] = _err_ratio(np, tf.matmul(ga, gb).numpy(), a, b)
        tf.matmul(ga, gb).numpy()
        t = time.perf_counter()
        for _ in range(10):
            c = tf.matmul(ga, gb)
        c.numpy()
        r["matmul_tflops"] = 2.0 * n ** 3 * 10 / (time.perf_counter() - t) / 1e12
        y = tf.nn.conv2d(tf.constant(x.transpose(0, 2, 3, 1)), tf.constant(w.transpose(2, 3, 1, 0)),
                         strides=1, padding="VALID").numpy().transpose(0, 3, 1, 2)
    r["conv_rel_err"] = _rel(np, y, _conv_ref(np, x, w))
    r["conv_backend"] = "cuDNN {}".format(r["cudnn"]) if r.get("cudnn") else "cuDNN"
    return r


def check_jax(n):
    import jax
    import jax.numpy as jnp
    import numpy as np

    r = {"version": jax.__version__, "gpu": False}
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    r["gpu"] = bool(gpus)
    if not gpus:
        return r
    r["device"] = getattr(gpus[0], "device_kind", str(gpus[0]))
    a, b, x, w = _inputs(np, n)
    hi = jax.lax.Precision.HIGHEST
    ga, gb = jax.device_put(a, gpus[0]), jax.device_put(b, gpus[0])
    mm = jax.jit(lambda p, q: jnp.matmul(p, q, precision=hi))
    r["matmul_err_ratio"] = _err_ratio(np, np.asarray(mm(ga, gb)), a, b)
    mm(ga, gb).block_until_ready()
    t = time.perf_counter()
    for _ in range(10):
        c = mm(ga, gb)
    c.block_until_ready()
    r["matmul_tflops"] = 2.0 * n ** 3 * 10 / (time.perf_counter() - t) / 1e12
    y = jax.lax.conv_general_dilated(jax.device_put(x, gpus[0]), jax.device_put(w, gpus[0]), (1, 1), "VALID",
                                     precision=hi)
    r["conv_rel_err"] = _rel(np, np.asarray(y), _conv_ref(np, x, w))
    r["conv_backend"] = "XLA"
    return r


def check_numpy(n):
    """CPU only: the same comparisons, so the plumbing can be tested on a machine with no GPU framework."""
    import numpy as np

    a, b, x, w = _inputs(np, n)
    t = time.perf_counter()
    got = a @ b
    dt = time.perf_counter() - t
    r = {"version": np.__version__, "gpu": False, "device": "CPU", "cpu_only": True,
         "matmul_err_ratio": _err_ratio(np, got, a, b), "matmul_tflops": 2.0 * n ** 3 / max(dt, 1e-9) / 1e12}
    # A different algorithm in float32 (im2col + matmul), as a GPU library would do it.
    nb, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    cols = np.stack([x[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], axis=2)
    cols = cols.reshape(nb, c * kh * kw, oh * ow)
    wm = w.transpose(0, 1, 2, 3).reshape(o, c * kh * kw)
    y = np.matmul(wm, cols).reshape(nb, o, oh, ow)
    r["conv_rel_err"] = _rel(np, y, _conv_ref(np, x, w))
    r["conv_backend"] = "numpy"
    return r


CHECKS = {"torch": check_torch, "tensorflow": check_tensorflow, "jax": check_jax, "numpy": check_numpy}


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 1024
    names = argv[2:] or ["torch", "tensorflow", "jax"]
    out = {"python": sys.version.split()[0], "executable": sys.executable, "frameworks": []}
    for name in names:
        entry = {"name": name, "installed": True}
        try:
            entry.update(CHECKS[name](n))
        except ImportError as exc:
            missing = getattr(exc, "name", None)
            if missing and missing.split(".")[0] in (name, "jaxlib") and "numpy" not in (missing or ""):
                entry = {"name": name, "installed": False}
            else:
                entry["error"] = f"import failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - report every failure as data
            entry["error"] = f"{type(exc).__name__}: {exc}"
            entry["traceback"] = traceback.format_exc()[-2000:]
        out["frameworks"].append(entry)
    sys.stdout.write("GPUSETUP-FWCHECK: " + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
