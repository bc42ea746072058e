"""The Python API's argument checks and its error: a bad argument raises `BuildError`
at the user's line (the first stack frame outside the API), naming the argument and
what it may be, before any IR is built."""

from __future__ import annotations

import itertools
import linecache
import numbers
import os
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import NoReturn

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
)
from xdsl.ir import Attribute, BlockArgument

_ELEM: dict[str, Callable[[], Attribute]] = {"bf16": BFloat16Type, "f16": Float16Type, "f32": Float32Type}
_HERE = os.path.dirname(os.path.abspath(__file__))


class BuildError(ValueError):
    """An illegal kernel (the verifier's message) or a bad argument to the builder or the
    loop form (which argument, and what it may be), at the user's line. A ValueError, as
    every misuse of the Python API is (`pto.CompileError` aside)."""

    def __init__(self, message: str, where: tuple[str, int] | None):
        self.message = message
        self.where = where
        super().__init__(f"{where[0]}:{where[1]}: error: {message}" if where else message)


def _generated_here(f) -> bool:
    """A dataclass's generated `__init__` (file "<string>") of a class of this package."""
    return f.f_code.co_filename == "<string>" and f.f_globals.get("__name__", "").startswith("pto.frontend.")


# Frames of these packages are the API's own (`pto.tracebacks`: its entry points'
# wrappers); the first other frame is the user's line.
_API_PACKAGES = ("pto.frontend", "pto.pypto", "pto.tracebacks")


class Where(tuple):
    """(file, line) of the user's code, as every site is, with `col`, the 1-based column
    of the expression running there (the call that built the op: a diagnostic's caret
    points at it, as MLIR's do)."""

    col: int

    def __new__(cls, file, line: int | None = None, col: int = 1) -> Where:
        if line is None:  # (rebuilt from its items, as `dataclasses.asdict` does)
            file, line = file
        self = super().__new__(cls, (file, line))
        self.col = col
        return self

    def __getnewargs__(self) -> tuple[str, int, int]:  # (copy and pickle keep the column)
        return self[0], self[1], self.col


def caller() -> Where | None:
    """The first stack frame outside the Python API: where the user built the op."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and in_api(f):
        f = f.f_back
    return Where(f.f_code.co_filename, f.f_lineno, _column(f)) if f is not None else None


def _column(f: FrameType) -> int:
    """The 1-based column, in characters, of the instruction `f` runs (Python's
    co_positions counts UTF-8 bytes: a name in Chinese before it would move it), else 1."""
    pos = next(itertools.islice(f.f_code.co_positions(), f.f_lasti // 2, None), None)
    if pos is None or pos[0] != f.f_lineno or pos[2] is None:
        return 1
    text = linecache.getline(f.f_code.co_filename, f.f_lineno).encode()
    return len(text[: pos[2]].decode(errors="replace")) + 1 if text else pos[2] + 1


def in_api(f: FrameType) -> bool:
    """Whether the frame runs the Python API's own code, not the user's."""
    return (  # (the module name first: a symbol's == asks this in every shape test)
        f.f_globals.get("__name__", "").startswith(_API_PACKAGES)
        or os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _HERE
        or _generated_here(f)
    )


# ------------------------------------------------------------- argument checks
# The builder checks its arguments' types itself: xDSL would fail on them deep inside
# (struct.error, TypeError, VerifyException) or, worse, build IR that prints but means
# nothing (a dimension of -4, a label of 123).

_I64_MAX = (1 << 63) - 1  # sizes and counts become i64 attributes
_F32_MAX = 3.4028234663852886e38  # scalars and eps become f32 attributes


def _fail(message: str) -> NoReturn:
    raise BuildError(message, caller())


def _is_int(v: object) -> bool:
    """An integer (numpy's too), but not a bool: True is an int to Python, never a size here."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_str(what: str, v: object) -> str:
    if not isinstance(v, str) or not v:
        _fail(f"{what} must be a non-empty string, got {v!r}")
    return v


def _check_opt_str(what: str, v: object) -> str | None:
    return None if v is None else _check_str(what, v)


def _check_label(what: str, v: object) -> None:
    """A label's type; that it is not empty is the verifier's rule (and message)."""
    if v is not None and not isinstance(v, str):
        _fail(f"{what} must be a string, got {v!r}")


def _check_name(what: str, name: object) -> str | None:
    """An argument's name becomes its SSA name `%name`: xDSL's rule for those."""
    _check_str(what, name)
    assert name is None or isinstance(name, str)  # what _check_str lets through
    if not BlockArgument.is_valid_name(name):
        _fail(f"{what} '{name}' is not a valid SSA name: letters, digits, _ $ . -, not starting with a digit")
    return name


def _check_bool(what: str, v: object) -> bool:
    if not isinstance(v, bool | np.bool_):
        _fail(f"{what} must be True or False, got {v!r}")
    return bool(v)


def _check_number(what: str, v: object) -> float:
    """A finite real that fits an f32 attribute (nan and inf print as hex that no parser reads)."""
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        _fail(f"{what} must be a number, got {type(v).__name__} {v!r}")
    # False for nan too; no float(): float(2**2000) overflows. (numbers.Real declares no comparisons.)
    if not -_F32_MAX <= v <= _F32_MAX:  # type: ignore[operator]
        _fail(f"{what} must be a finite f32 number, got {v!r}")
    return float(v)


def _check_size(what: str, d: object, low: int = 1) -> int:
    if not _is_int(d) or not low <= d <= _I64_MAX:  # type: ignore[operator]
        _fail(f"{what} must be an integer in [{low}, 2^63), got {d!r}")
    return int(d)  # type: ignore[call-overload]


def _check_sizes(what: str, vals: object, lengths: Sequence[int] | None = None) -> list[int]:
    """A non-empty list or tuple of positive integers (tile sizes, unroll factors)."""
    if not isinstance(vals, list | tuple) or not vals:
        _fail(f"{what} must be a non-empty list of positive integers, got {vals!r}")
    if lengths is not None and len(vals) not in lengths:
        _fail(f"{what} needs {' or '.join(map(str, lengths))} sizes, got {len(vals)}")
    return [_check_size(f"{what}[{i}]", v) for i, v in enumerate(vals)]


def _check_shape(what: str, shape: object) -> list[int | Symbol | None]:
    """A list or tuple of sizes >= 0, or None / a loop Symbol for the dynamic token axis."""
    if not isinstance(shape, list | tuple):
        _fail(f"{what} must be a list of sizes (None for the token axis), got {type(shape).__name__} {shape!r}")
    return [
        d if d is None or isinstance(d, Symbol) else _check_size(f"{what}[{i}]", d, low=0) for i, d in enumerate(shape)
    ]  # numpy ints become ints, which xDSL's attributes need


def _check_options(options: object) -> dict[str, dict[int | str, int]]:
    """Pass options `{name: {group: count}}`; the verifier knows the names and the rules."""
    if not isinstance(options, dict):
        _fail(f"options must be a dict {{option: {{group: count}}}}, got {type(options).__name__} {options!r}")
    for name, groups in options.items():
        _check_str("an option's name", name)
        if not isinstance(groups, dict):
            _fail(f"option '{name}' must be a dict {{group: count}}, got {groups!r}")
        for g, n in groups.items():
            if not _is_int(g) and not isinstance(g, str):
                _fail(f"option '{name}': group {g!r} must be an integer")
            _check_size(f"option '{name}' group {g}", n)
    return options


def element_type(dtype: str) -> Attribute:
    if not isinstance(dtype, str):
        _fail(f"a dtype must be a string (bf16, f16, f32, i8, i32), got {dtype!r}")
    if dtype in _ELEM:
        return _ELEM[dtype]()
    if dtype in ("i8", "i32"):
        return IntegerType(int(dtype[1:]))
    raise BuildError(f"unknown element type '{dtype}' (known: bf16, f16, f32, i8, i32)", caller())


class Symbol:
    """A symbolic index of the loop form (the token tile's first row or its height):
    in a shape it stands for the dynamic token axis."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name
