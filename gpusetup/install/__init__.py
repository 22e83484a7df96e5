"""Installing a resolved plan safely: exact steps, dry-run, progress, journal, resume and rollback.

Public API (see /tmp/apis.md): :func:`build_plan`, :func:`execute`, :func:`resume`, :func:`repair`,
:func:`rollback`, :func:`step_estimates`, :func:`render_script`, :class:`ExecResult`, :class:`InstallPlan`.
"""

from __future__ import annotations

from gpusetup.install.execute import (
    ExecResult,
    display_argv,
    execute,
    free_bytes,
    repair,
    resume,
    rollback,
    step_estimates,
)
from gpusetup.install.journal import default_state_dir
from gpusetup.install.plan import InstallPlan, PlanError, add_download_size, build_plan
from gpusetup.install.script import render_script

__all__ = [
    "ExecResult",
    "InstallPlan",
    "PlanError",
    "add_download_size",
    "build_plan",
    "default_state_dir",
    "display_argv",
    "execute",
    "free_bytes",
    "render_script",
    "repair",
    "resume",
    "rollback",
    "step_estimates",
]
