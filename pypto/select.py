"""PyPTO 0.2.0's comparisons (`eq ne gt ge lt le`, `greater`, the operators `< <= > >=`)
and `where(condition, input, other)`: a top-1 mask `where(eq(x, amax(x)), 1.0, 0.0)`, a
clamp or a leaky ReLU written with `where`.

A comparison gives PyPTO a bool tensor; here it is kept aside (a `("cmp", ...)` lazy
tensor: a comparison, `logical_not` of a condition or `logical_and` of two) and read only
as the condition of `where`, which becomes one `pto.select` per comparison: the device
compares into its mask register and selects by it, so no bool tile is stored. A
condition read any other way is refused at that line."""

from __future__ import annotations

from pto.frontend import builder as b
from pto.pypto.errors import refuse
from pto.pypto.ops import _broadcast, _lazy, _result, _scalar, _tensor
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType

# `a PRED b` is `b SWAPPED[PRED] a`: a number on the left is moved to the right.
SWAPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_FLOATS = (DataType.DT_BF16, DataType.DT_FP16, DataType.DT_FP32)


def _operand(x: object, what: str) -> Tensor | float:
    """A tensor of the kernel, or a number (a `pypto.full` is its value)."""
    if _scalar(x):
        return float(x)
    if (c := _lazy(x, "const")) is not None:
        return float(c)
    return _tensor(x, what)


def compare(predicate: str, input: object, other: object) -> Tensor:  # noqa: A002
    name = f"pypto.{predicate}"
    a, c = _operand(input, f"{name}'s input"), _operand(other, f"{name}'s other")
    if not isinstance(a, Tensor):
        if not isinstance(c, Tensor):
            refuse(f"{name} of two numbers: compare a tensor of the kernel")
        a, c, predicate = c, a, SWAPPED[predicate]
    if a._dtype not in _FLOATS:
        refuse(f"{name} of {a.known_dtype.name} values is not modelled: compare float tensors (cast them first)")
    if isinstance(c, Tensor) and c._dtype is not a._dtype:
        refuse(f"{name} of {a.known_dtype.name} and {c.known_dtype.name}: cast one first")
    shape = _broadcast(a.shape, c.shape) if isinstance(c, Tensor) else list(a.shape)
    tok = a._tok or (isinstance(c, Tensor) and c._tok)
    return Tensor.traced(shape, DataType.DT_BOOL, None, tok, ("cmp", ("leaf", predicate, a, c)))


def eq(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("eq", input, other)


def ne(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("ne", input, other)


def gt(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("gt", input, other)


def greater(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("gt", input, other)


def ge(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("ge", input, other)


def lt(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("lt", input, other)


def le(input: Tensor, other: Tensor | float) -> Tensor:  # noqa: A002
    return compare("le", input, other)


def logical_not(input: Tensor) -> Tensor:  # noqa: A002
    """The condition negated: its `where` selects the other way round (not the opposite
    predicate, which differs from it where an operand is NaN)."""
    cond = _condition(input, "pypto.logical_not")
    return Tensor.traced(list(input.shape), DataType.DT_BOOL, None, input._tok, ("cmp", ("not", cond)))


def logical_and(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Both conditions: `where(a and b, x, y)` is `where(a, where(b, x, y), y)`, one select
    per comparison."""
    a, c = _condition(input, "pypto.logical_and"), _condition(other, "pypto.logical_and")
    shape = _broadcast(list(input.shape), list(other.shape))
    return Tensor.traced(shape, DataType.DT_BOOL, None, input._tok or other._tok, ("cmp", ("and", a, c)))


def _condition(x: object, what: str) -> tuple:
    if not isinstance(x, Tensor) or (cmp := _lazy(x, "cmp")) is None:
        refuse(f"{what}'s condition must be a comparison of the kernel's tensors (pypto.eq, pypto.gt, x > 0, ...)")
    return cmp


def where(condition: Tensor, input: Tensor | float, other: Tensor | float) -> Tensor:  # noqa: A002
    """`pto.select`: `input` where the condition holds, else `other`, each a tensor or a
    number; the result has the tensor's dtype (DT_FP32 for two numbers, as PyPTO's
    scalars are FP32 elements)."""
    cond = _condition(condition, "pypto.where")
    x, y = _operand(input, "pypto.where's input"), _operand(other, "pypto.where's other")
    chosen = [v for v in (x, y) if isinstance(v, Tensor)]
    if len(chosen) == 2 and chosen[0]._dtype is not chosen[1]._dtype:
        refuse(f"pypto.where of {chosen[0].known_dtype.name} and {chosen[1].known_dtype.name}: cast one first")
    dtype = chosen[0].known_dtype if chosen else DataType.DT_FP32
    if dtype not in _FLOATS:
        refuse(f"pypto.where selecting {dtype.name} values is not modelled: select float tensors")
    return _select(cond, x, y, dtype)


def _select(cond: tuple, x: Tensor | float, y: Tensor | float, dtype: DataType) -> Tensor:
    """`where(cond, x, y)` as selects: one per comparison of `cond`."""
    if cond[0] == "not":
        return _select(cond[1], y, x, dtype)
    if cond[0] == "and":
        return _select(cond[1], _select(cond[2], x, y, dtype), y, dtype)
    _, predicate, a, c = cond
    items = (a, c, x, y)
    tensors = [v for v in items if isinstance(v, Tensor)]
    shape: list = list(a.shape)
    for v in tensors[1:]:
        shape = _broadcast(shape, v.shape)
    # (which items are tensors, and the numbers: the closure that tells one select from another)
    pattern = tuple(None if isinstance(v, Tensor) else v for v in items)

    def build(*vals: b.Tensor) -> b.Tensor:
        it = iter(vals)
        lhs, rhs, on_true, on_false = (next(it) if p is None else p for p in pattern)
        assert isinstance(lhs, b.Tensor)  # (the compared tensor is first: compare moved a number right)
        return b.select(predicate, lhs, rhs, on_true, on_false)

    return _result("select", tensors, shape, dtype, build)
