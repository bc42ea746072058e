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


def remark(op: Operation | None, message: str) -> None:
    emit("remark", op, message)


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


def render(d: Diagnostic | Note, sources: dict[str, str], severity: str | None = None) -> str:
    """`file:line:col: severity: message`, then the source line and a caret under the
    column when `sources` has the file's text."""
    sev = severity or getattr(d, "severity", "note")
    where = line_col(d.location)
    if where is None:
        return f"{sev}: {d.message}"
    name, line, col = where
    out = f"{name}:{line}:{col}: {sev}: {d.message}"
    lines = sources.get(name, "").splitlines()
    if 0 < line <= len(lines):
        out += f"\n{lines[line - 1]}\n{' ' * (col - 1)}^"
    return out


def render_all(d: Diagnostic, sources: dict[str, str]) -> str:
    """A diagnostic and its notes, one after the other."""
    return "\n".join([render(d, sources)] + [render(n, sources, "note") for n in d.notes])


class DiagnosticLog:
    """A sink for `collect` that keeps each diagnostic once: a pass warns once per op
    it visits, and the unrolled copies of one source op would repeat the same line.
    `on_new` sees each new one as it arrives (a tool prints it at once)."""

    def __init__(self, on_new: Callable[[Diagnostic], None] | None = None):
        self.items: list[Diagnostic] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._on_new = on_new

    def __call__(self, d: Diagnostic) -> None:
        key = (d.severity, str(d.location), d.message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(d)
        if self._on_new is not None:
            self._on_new(d)

    def add_error(self, e: DiagnosticError) -> None:
        self(Diagnostic("error", e.location, e.message, e.notes))

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.items)
