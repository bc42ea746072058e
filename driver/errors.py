"""The errors a driver user sees, and the tools' exit codes (mlir-opt's, plus 3)."""

import os
import sys
from typing import NoReturn

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A bad command line, pass pipeline, pass option or argument: one line, exit 2."""


class InternalError(Exception):
    """A pass crashed: a bug in pto-ir, not in the input. Exit 3."""


def flushed(code: int) -> int:
    """`code`, once stdout is flushed: a tool flushes before it returns, so that a reader
    that has gone is seen while the tool can still choose its exit (at the interpreter's
    own flush at exit, a buffered table would fail with a traceback)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return stdout_closed(code)
    return code


def exit_flushed(e: SystemExit) -> NoReturn:
    """Re-raise argparse's exit (after --help, or a bad flag) once stdout is flushed, for
    the same reason as `flushed`."""
    flushed(EXIT_OK)
    raise e


def stdout_closed(code: int = EXIT_OK) -> int:
    """What a tool does when its stdout's reader has gone (`pto-run ... | head -1`): stop
    quietly with the exit it chose, as Unix tools do. stdout then points at /dev/null, or
    the interpreter's flush at exit fails again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # (a stdout that is not a file: nothing will flush it)
        pass
    return code
