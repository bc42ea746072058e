"""Symbolic integers of a traced kernel: the token count, loop indices and expressions of
them (`idx * TILE`, `pypto.min(TILE, T - off)`). The body runs once, so where a tile
starts and how many rows are valid are kept as expressions and checked by evaluating
them at sample points."""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Mapping

from pto.frontend.checks import _is_int, in_api
from pto.pypto.errors import refuse


class Sym:
    """An integer expression over named symbols (`T`, a loop index)."""

    def __init__(
        self, name: str, fn: Callable[[Mapping[str, int]], int] | None = None, names: frozenset[str] | None = None
    ):
        self.name = name
        self.fn = fn if fn is not None else (lambda env: env[name])
        self.names = names if names is not None else frozenset([name])  # the symbols it depends on

    def eval(self, env: Mapping[str, int]) -> int:
        return self.fn(env)

    def __repr__(self) -> str:
        return self.name

    def _bin(self, other: object, op, sym: str, flip: bool = False) -> Sym:
        if not isinstance(other, Sym) and not _is_int(other):
            refuse(f"a symbolic integer ({self}) combines only with integers, got {other!r}")
        a, b = (other, self) if flip else (self, other)
        if _identity(sym, other, flip):  # `bsz * s1` with a static s1 of 1 is bsz itself
            return self
        return Sym(f"({a} {sym} {b})", lambda env: op(evaluate(a, env), evaluate(b, env)), names_of(a, b))

    def __add__(self, o):
        return self._bin(o, operator.add, "+")  # noqa: E704

    def __radd__(self, o):
        return self._bin(o, operator.add, "+", True)  # noqa: E704

    def __sub__(self, o):
        return self._bin(o, operator.sub, "-")  # noqa: E704

    def __rsub__(self, o):
        return self._bin(o, operator.sub, "-", True)  # noqa: E704

    def __mul__(self, o):
        return self._bin(o, operator.mul, "*")  # noqa: E704

    def __rmul__(self, o):
        return self._bin(o, operator.mul, "*", True)  # noqa: E704

    def __floordiv__(self, o):
        return self._bin(o, operator.floordiv, "//")  # noqa: E704

    def __rfloordiv__(self, o):
        return self._bin(o, operator.floordiv, "//", True)  # noqa: E704

    def __mod__(self, o):
        return self._bin(o, operator.mod, "%")  # noqa: E704

    def __bool__(self) -> bool:
        refuse(no_value(self))

    def __index__(self) -> int:
        refuse(
            f"the symbolic integer {self} has no value while the kernel is traced, and is used as a number here "
            "(a bound of a slice of a tensor with no DYNAMIC axis, a range()): the loop index takes rows of a "
            "DYNAMIC axis only (annotate the token axis pypto.DYNAMIC)"
        )

    def _compare(self, other: object, op, sym: str) -> SymBool:
        """`off + TILE <= T`: a condition that a pypto.loop body's `if` may test (its
        outcomes are traced one by one: pypto/tails.py)."""
        if not isinstance(other, Sym) and not _is_int(other):
            refuse(no_value(self))
        return SymBool(self, f"{self} {sym} {other}", lambda env: op(self.eval(env), evaluate(other, env)),
                       names_of(self, other))  # fmt: skip

    def __lt__(self, o):
        return self._compare(o, operator.lt, "<")  # noqa: E704

    def __le__(self, o):
        return self._compare(o, operator.le, "<=")  # noqa: E704

    def __gt__(self, o):
        return self._compare(o, operator.gt, ">")  # noqa: E704

    def __ge__(self, o):
        return self._compare(o, operator.ge, ">=")  # noqa: E704

    def __eq__(self, other: object) -> bool:
        """In the API's own shape tests a symbol equals the symbols of the same expression
        (every parameter's token count is `T`); in the kernel's code (`if idx == 0:`, `idx
        in {0}`) it has no value to compare, as for `<`."""
        if in_api(sys._getframe(1)):
            return self._same(other)
        return self.__bool__()

    def __ne__(self, other: object) -> bool:
        if in_api(sys._getframe(1)):
            return not self._same(other)
        return self.__bool__()

    def __hash__(self) -> int:
        if in_api(sys._getframe(1)):
            return hash(self.name)
        return self.__bool__()

    def _same(self, other: object) -> bool:
        return self is other or isinstance(other, Sym) and (self.name, self.names) == (other.name, other.names)

    def __neg__(self):
        return self._bin(-1, operator.mul, "*", True)

    def __pos__(self):
        return self

    def min(self, other: int | Sym) -> Sym | int:
        """`SymbolicScalar.min`: `(T - off).min(TILE)`, the rows a last tile holds."""
        return sym_min(self, _operand(self, other, "min"))

    def max(self, other: int | Sym) -> Sym | int:
        return sym_max(self, _operand(self, other, "max"))

    def _no_value(self, *args):
        refuse(
            f"the symbolic integer {self}: only + - * // % and unary - combine it (it has no value while "
            "the kernel is traced)"
        )

    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __abs__ = __round__ = _no_value


def _identity(sym: str, other: object, flip: bool) -> bool:
    """`x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0`, `x // 1`: x."""
    if not _is_int(other):
        return False
    return (
        (sym == "*" and other == 1)
        or (sym == "+" and other == 0)
        or (not flip and (sym, other) in (("-", 0), ("//", 1)))
    )


def _operand(s: Sym, other: object, what: str) -> int | Sym:
    if not isinstance(other, Sym) and not _is_int(other):
        refuse(f"{s}.{what}({other!r}): a symbolic integer's {what} takes an integer or a symbolic integer")
    return other  # type: ignore[return-value]


def no_value(what: object) -> str:
    """Why a Python `if` on a symbolic integer is refused, and the rewrite."""
    return (
        f"the symbolic integer {what} has no value while the kernel is traced: a Python `if` on it "
        "is not supported (for a partial last tile, view it with valid_shape=[pypto.min(TILE, T - row), ...])"
    )


class SymBool:
    """A comparison of symbolic integers. Only a pypto.loop body may branch on it (a
    tail test, `if off + TILE <= T:`): `bool()` answers from the trace's plan of
    outcomes, the body traced once per outcome (pypto/tails.py); elsewhere it is refused."""

    def __init__(self, left: Sym, name: str, fn: Callable[[Mapping[str, int]], bool], names: frozenset[str]):
        self.left, self.name, self.fn, self.names = left, name, fn, names

    def eval(self, env: Mapping[str, int]) -> bool:
        return self.fn(env)

    def __repr__(self) -> str:
        return self.name

    def __bool__(self) -> bool:
        from pto.pypto import tails  # (tails reads the trace, which is built on this module)

        return tails.decide(self)


def names_of(*vs: object) -> frozenset[str]:
    return frozenset().union(*(v.names for v in vs if isinstance(v, Sym)))


def evaluate(v: object, env: Mapping[str, int]) -> int:
    return v.eval(env) if isinstance(v, Sym) else v  # type: ignore[return-value]


class KnownIndex(int):
    """The index of a loop of numbers unrolled in the body (`pypto.loop(0, 3, 1)` over N
    windows): an integer, as it is at each iteration, that keeps PyPTO's SymbolicScalar
    methods through arithmetic (`(N - i * NW).min(NW)`)."""

    def min(self, other: int | Sym) -> Sym | int:
        return _known(sym_min(int(self), other))

    def max(self, other: int | Sym) -> Sym | int:
        return _known(sym_max(int(self), other))


def _arith(name: str):
    op = getattr(int, name)

    def method(self, *other):
        got = op(self, *other)
        return KnownIndex(got) if type(got) is int else got

    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__pos__", "__abs__"):  # fmt: skip
    setattr(KnownIndex, _name, _arith(_name))


def _known(v: Sym | int) -> Sym | int:
    return KnownIndex(v) if type(v) is int else v


def sym_min(a: int | Sym, b: int | Sym) -> Sym | int:
    """`pypto.min` of two integers or symbolic integers."""
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return min(a, b)
    return Sym(f"min({a}, {b})", lambda env: min(evaluate(a, env), evaluate(b, env)), names_of(a, b))


def sym_max(a: int | Sym, b: int | Sym) -> Sym | int:
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return max(a, b)
    return Sym(f"max({a}, {b})", lambda env: max(evaluate(a, env), evaluate(b, env)), names_of(a, b))


def ceil_div(a: int | Sym, b: int | Sym) -> Sym | int:
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return -(-a // b)
    return Sym(f"ceildiv({a}, {b})", lambda env: -(-evaluate(a, env) // evaluate(b, env)), names_of(a, b))


class DynamicDim(Sym):
    """`pypto.frontend.dynamic("T")`: a named DYNAMIC dimension of the annotations. The
    one dynamic axis modelled is the token axis, so each is the token count `T` (an
    argument whose rows differ from another's is refused, as for DYNAMIC), and the body
    may use it wherever `x.shape[0]` goes."""

    def __init__(self, name: str):
        super().__init__(name, lambda env: env["T"], frozenset(["T"]))


def symbolic_scalar(value: object) -> int | Sym:
    """`pypto.symbolic_scalar(n)` (PyPTO's SymbolicScalar class): an integer, or a
    symbolic integer, as it is (GLM's `bs_idx * pypto.symbolic_scalar(bs_tile)`)."""
    if isinstance(value, Sym):
        return value
    if not _is_int(value):
        refuse(f"pypto.symbolic_scalar of {value!r}: an integer or a symbolic integer (a named symbol is not modelled)")
    return int(value)  # type: ignore[call-overload]
