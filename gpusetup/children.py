"""Children die with us: a pip or nvidia-smi that gpusetup started never outlives a killed gpusetup.

Our children run in their own session (so a timeout can stop the whole group), which also means nobody
stops them when gpusetup itself is killed (``kill -9``, an OOM kill, a crashed GUI): init adopts them and a
half-finished ``pip install`` keeps going. So every child is tied to us by the operating system:

* Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the child before it runs the command, then a check that we
  are still its parent (we may have died between fork and prctl). The kernel clears the setting for a
  set-user-ID program (sudo, pkexec): those steps rely on sudo relaying signals instead.
* Windows: every child is put into one Job object with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``; the job's
  only handle is ours, so Windows ends the children when our process ends, however it ends.
* Elsewhere (macOS): no kernel mechanism; the runner's own timeout and cancel still stop children.

Usage: ``subprocess.Popen(..., **popen_kwargs())`` then ``adopt(proc)``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import threading
from typing import Any

PR_SET_PDEATHSIG = 1
_lock = threading.Lock()
_prctl: Any = None
_prctl_checked = False
_job: Any = None


def _linux_prctl() -> Any:
    """libc's prctl, resolved once in the parent (nothing is looked up between fork and exec)."""
    global _prctl, _prctl_checked
    with _lock:
        if not _prctl_checked:
            _prctl_checked = True
            # lazy: a cycle (runner → children → gpusetup.probe, whose __init__ imports the runner)
            from gpusetup.probe.platform.host import current_os

            if current_os() == "linux":
                try:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                    fn = libc.prctl
                    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
                    fn.restype = ctypes.c_int
                    _prctl = fn
                except (OSError, AttributeError):
                    _prctl = None
    return _prctl


def popen_kwargs() -> dict[str, Any]:
    """Extra ``Popen`` arguments that make the child die when this process dies (Linux)."""
    prctl = _linux_prctl()
    if prctl is None:
        return {}
    parent = os.getpid()
    sig = int(signal.SIGKILL)

    def die_with_parent() -> None:  # runs in the child between fork and exec: no imports, no allocation-heavy work
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return {"preexec_fn": die_with_parent}


def adopt(proc: subprocess.Popen[Any]) -> None:
    """Windows: put ``proc`` into our kill-on-close Job object. Elsewhere nothing (popen_kwargs did it)."""
    from gpusetup.probe.platform.host import is_windows  # lazy: the same cycle as in popen_kwargs

    if not is_windows():
        return
    try:
        job = _windows_job()
        if job:
            ctypes.windll.kernel32.AssignProcessToJobObject(job, int(proc._handle))  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        pass  # best effort: the runner's timeout and cancel still stop the child


def _windows_job() -> Any:
    """One Job object for the whole process, created on first use, that kills its members when closed."""
    global _job
    with _lock:
        if _job is None:
            from ctypes import wintypes  # lazy: Windows-only types, only on Windows

            class IoCounters(ctypes.Structure):
                _fields_ = [(n, ctypes.c_ulonglong) for n in (
                    "ReadOperationCount", "WriteOperationCount", "OtherOperationCount", "ReadTransferCount",
                    "WriteTransferCount", "OtherTransferCount")]

            class BasicLimits(ctypes.Structure):
                _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                            ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                            ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                            ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                            ("SchedulingClass", wintypes.DWORD)]

            class ExtendedLimits(ctypes.Structure):
                _fields_ = [("BasicLimitInformation", BasicLimits), ("IoInfo", IoCounters),
                            ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                            ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                return None
            info = ExtendedLimits()
            info.BasicLimitInformation.LimitFlags = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            extended_limit_information = 9
            if not kernel32.SetInformationJobObject(job, extended_limit_information, ctypes.byref(info),
                                                    ctypes.sizeof(info)):
                kernel32.CloseHandle(job)
                return None
            _job = job
    return _job
