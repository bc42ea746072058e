"""The errors a driver user sees, and the tools' exit codes (mlir-opt's, plus 3)."""

import os
import sys

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A bad command line, pass pipeline, pass option or argument: one line, exit 2."""


class InternalError(Exception):
    """A pass crashed: a bug in pto-ir, not in the input. Exit 3."""


def stdout_closed() -> int:
    """What a tool does when its stdout's reader has gone (`pto-run ... | head -1`): stop
    quietly, as Unix tools do. stdout then points at /dev/null, or the interpreter's own
    flush at exit fails again and prints a traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # (a stdout that is not a file: nothing will flush it)
        pass
    return EXIT_OK
