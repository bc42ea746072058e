"""Tracebacks of the user's errors that end at the user's line, as JAX's traceback
filtering does.

A refusal raised deep inside the library (a BuildError while a kernel is traced, a
CompileError, an InputError, ...) would reach the user through five to seven of the
library's frames, which say nothing about the mistake. Each public entry point
(`api_boundary`) removes the library's frames from the traceback of such an error
before it leaves, so that every frame shown is the user's and the last one is the line
that made the mistake. Any other exception (a bug of the library) keeps all its frames.
`PTO_TRACEBACK_FILTERING=off` in the environment keeps them for every error.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import ParamSpec, TypeVar

ENV = "PTO_TRACEBACK_FILTERING"

_P = ParamSpec("_P")
_R = TypeVar("_R")


def filtering() -> bool:
    """Whether the library's frames are removed; read at each error, so that a switch
    made while the program runs (a test's) takes effect."""
    return os.environ.get(ENV, "").strip().lower() != "off"


@functools.cache
def user_errors() -> tuple[type[Exception], ...]:
    """The exceptions that report the user's mistakes, each naming it in its message.
    (Imported when first needed: the modules that define them import this one.)"""
    from pto.frontend.api import CompileError
    from pto.frontend.checks import BuildError
    from pto.interp.machine import MachineError
    from pto.interp.run import InputError
    from pto.tuner.kernel import TuneError

    return (BuildError, CompileError, InputError, MachineError, TuneError)


def api_boundary(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """`fn` as a public entry point: a user error leaves it without the library's frames."""

    @functools.wraps(fn)
    def boundary(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if filtering() and isinstance(e, user_errors()):
                hide_library_frames(e)
            raise  # a bare raise keeps e's traceback as it is: this frame is not added back

    return boundary


def hide_library_frames(e: BaseException) -> None:
    """Remove the library's frames from the tracebacks of `e` and of its explicit causes
    (`raise ... from`). An exception the library was handling when it raised `e` (an
    argument binding's TypeError, say, whose text `e`'s message already gives) is no
    longer printed with it; it stays in `__context__`."""
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        cause.__traceback__ = _user_frames(cause.__traceback__)
        if cause.__cause__ is None:
            cause.__suppress_context__ = True
        cause = cause.__cause__


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """A new traceback of the entries of `tb` that are not the library's, in order."""
    kept = []
    while tb is not None:
        if not _library(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _library(frame: FrameType) -> bool:
    """A frame of the library's code: a module of the `pto` package. (Its examples and
    tests are not: they run as scripts, or as pytest's modules.)"""
    name = frame.f_globals.get("__name__", "")
    return name == "pto" or name.startswith("pto.")
