"""The errors a driver user sees, and the tools' exit codes (mlir-opt's, plus 3)."""

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A bad command line, pass pipeline, pass option or argument: one line, exit 2."""


class InternalError(Exception):
    """A pass crashed: a bug in pto-ir, not in the input. Exit 3."""
