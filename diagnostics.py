"""Diagnostics shared by every layer: an error or warning tied to an op's location.

Passes and lowerings raise `DiagnosticError(op, msg)` for user errors (bad IR, an
unsupported case, an over-capacity buffer); the tools render it MLIR-style as
`file:line:col: error: msg` with the source line. Warnings and remarks go through
`emit` to whatever sink the running tool installed (by default they are dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc, LocationAttr
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException


@dataclass
class Note:
    location: LocationAttr | None
    message: str


class DiagnosticError(VerifyException):
    """A user-facing error at an op; `notes` add context at other ops. A verifier may
    raise it to blame an op other than the one being verified."""

    def __init__(self, op: Operation | None, message: str, notes: list[Note] | None = None):
        super().__init__(message)
        self.op = op
        self.message = message
        self.notes = notes or []

    @property
    def location(self) -> LocationAttr | None:
        return None if self.op is None else self.op.location


@dataclass
class Diagnostic:
    severity: str  # "error" | "warning" | "note" | "remark"
    location: LocationAttr | None
    message: str
    notes: list[Note] = field(default_factory=list)


_sinks: list[Callable[[Diagnostic], None]] = []


def emit(severity: str, op: Operation | None, message: str) -> None:
    """Report a non-fatal diagnostic (warning/remark) at `op`."""
    diag = Diagnostic(severity, None if op is None else op.location, message)
    if _sinks:
        _sinks[-1](diag)


def warn(op: Operation | None, message: str) -> None:
    emit("warning", op, message)


@contextmanager
def collect(sink: Callable[[Diagnostic], None]) -> Iterator[None]:
    _sinks.append(sink)
    try:
        yield
    finally:
        _sinks.pop()


def line_col(loc: LocationAttr | None) -> tuple[str, int, int] | None:
    if isinstance(loc, FileLineColLoc):
        return loc.filename.data, loc.line.data, loc.column.data
    return None
