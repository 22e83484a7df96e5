"""Errors and exit codes shared by every command (and by the CLI that turns them into an exit status).

Exit codes follow the monitoring convention: 0 healthy, 1 warnings, 2 errors, 3 gpusetup itself could not
run (bad arguments, unreadable input, an internal error); 130 after Ctrl-C.
"""

from __future__ import annotations

EXIT_OK, EXIT_WARN, EXIT_ERROR, EXIT_TOOL = 0, 1, 2, 3
EXIT_CANCELLED = 130


class ToolError(Exception):
    """A problem the user can fix (bad input, unreadable file). Printed without a traceback, exit 3."""
