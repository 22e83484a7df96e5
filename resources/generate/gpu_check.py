#!/usr/bin/env python3
"""GPU check written by gpusetup: does the framework in this container see the GPU(s) and compute on them?

Runs a small matrix multiplication on every visible GPU and compares it with the CPU result.
Exit codes: 0 = every GPU works, 1 = no GPU visible, too few GPUs, or a wrong/failed computation,
2 = the framework is not installed. Used by the Dockerfile HEALTHCHECK, the Kubernetes Job and the Slurm
script. Keep it free of anything but the framework itself (Python 3.8+).
"""

import argparse
import json
import os
import sys
import time

N = 256  # small: a health check must be quick and must not fill GPU memory


def check_pytorch():
    import torch

    info = {"framework": "pytorch", "version": torch.__version__, "cuda": torch.version.cuda, "devices": []}
    if not torch.cuda.is_available():
        info["error"] = "torch.cuda.is_available() is False"
        return info
    info["arch_list"] = torch.cuda.get_arch_list()
    a = torch.rand(N, N)
    b = torch.rand(N, N)
    want = a @ b
    for i in range(torch.cuda.device_count()):
        dev = {"index": i, "name": torch.cuda.get_device_name(i),
               "capability": "{}.{}".format(*torch.cuda.get_device_capability(i))}
        try:
            start = time.perf_counter()
            got = (a.to(f"cuda:{i}") @ b.to(f"cuda:{i}")).cpu()
            torch.cuda.synchronize(i)
            dev["ms"] = round((time.perf_counter() - start) * 1000, 1)
            dev["ok"] = bool(torch.allclose(got, want, rtol=1e-3, atol=1e-3))
        except Exception as exc:  # noqa: BLE001 - report any CUDA error in words
            dev["ok"] = False
            dev["error"] = str(exc).splitlines()[0]
        info["devices"].append(dev)
    return info


def check_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    info = {"framework": "tensorflow", "version": tf.__version__, "devices": []}
    build = tf.sysconfig.get_build_info()
    info["cuda"] = build.get("cuda_version")
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        info["error"] = "tf.config.list_physical_devices('GPU') is empty"
        return info
    a = np.random.rand(N, N).astype("float32")
    b = np.random.rand(N, N).astype("float32")
    want = a @ b
    for i, gpu in enumerate(gpus):
        details = tf.config.experimental.get_device_details(gpu)
        dev = {"index": i, "name": details.get("device_name", gpu.name),
               "capability": "{}.{}".format(*details["compute_capability"]) if "compute_capability" in details
               else None}
        try:
            start = time.perf_counter()
            with tf.device(f"/GPU:{i}"):
                got = tf.matmul(a, b).numpy()
            dev["ms"] = round((time.perf_counter() - start) * 1000, 1)
            dev["ok"] = bool(np.allclose(got, want, rtol=1e-3, atol=1e-3))
        except Exception as exc:  # noqa: BLE001
            dev["ok"] = False
            dev["error"] = str(exc).splitlines()[0]
        info["devices"].append(dev)
    return info


def check_jax():
    import jax
    import numpy as np

    info = {"framework": "jax", "version": jax.__version__, "devices": []}
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as exc:
        info["error"] = "no GPU backend: " + str(exc).splitlines()[0]
        return info
    a = np.random.rand(N, N).astype("float32")
    b = np.random.rand(N, N).astype("float32")
    want = a @ b
    for i, d in enumerate(gpus):
        dev = {"index": i, "name": getattr(d, "device_kind", str(d)),
               "capability": getattr(d, "compute_capability", None)}
        try:
            start = time.perf_counter()
            got = np.asarray(jax.device_put(a, d) @ jax.device_put(b, d))
            dev["ms"] = round((time.perf_counter() - start) * 1000, 1)
            dev["ok"] = bool(np.allclose(got, want, rtol=1e-3, atol=1e-3))
        except Exception as exc:  # noqa: BLE001
            dev["ok"] = False
            dev["error"] = str(exc).splitlines()[0]
        info["devices"].append(dev)
    return info


CHECKS = {"pytorch": check_pytorch, "tensorflow": check_tensorflow, "jax": check_jax}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=sorted(CHECKS), default=os.environ.get("GPUSETUP_FRAMEWORK"))
    parser.add_argument("--expect", type=int, default=None, help="fail unless at least this many GPUs work")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="print only when something is wrong")
    args = parser.parse_args()
    if not args.framework:
        parser.error("say which framework to check: --framework or GPUSETUP_FRAMEWORK")
    try:
        info = CHECKS[args.framework]()
    except ImportError as exc:
        print(f"gpu_check: {args.framework} is not installed in this container ({exc})", file=sys.stderr)
        return 2
    working = [d for d in info["devices"] if d.get("ok")]
    problems = []
    if info.get("error"):
        problems.append(info["error"] + " - is the container started with GPU access (--gpus all)?")
    problems += [f"GPU {d['index']} {d['name']}: {d.get('error') or 'wrong result'}"
                 for d in info["devices"] if not d.get("ok")]
    if args.expect is not None and len(working) < args.expect:
        problems.append(f"expected {args.expect} working GPU(s), found {len(working)}")
    info["ok"] = not problems and bool(working)
    if args.json:
        print(json.dumps(info, indent=2))
    elif not args.quiet or not info["ok"]:
        print(f"{info['framework']} {info['version']} (CUDA {info.get('cuda')}): "
              f"{len(working)} working GPU(s)")
        for d in info["devices"]:
            state = "ok" if d.get("ok") else "FAILED"
            print(f"  GPU {d['index']}: {d['name']} (compute capability {d.get('capability')}) {state}"
                  + (f" in {d['ms']} ms" if "ms" in d else ""))
        for p in problems:
            print(f"  problem: {p}")
    return 0 if info["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
