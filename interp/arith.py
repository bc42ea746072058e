"""Index arithmetic for the `npu` level: the unsigned division, remainder,
ceil-division and min/max that the stock xDSL `ArithFunctions` lack, and fast versions
of the constant/add/sub/mul/compare that tile bookkeeping runs thousands of times
(registered with override: xDSL's generic versions check types on every call).
Index values are Python ints; the lowering keeps bounds non-negative (a tail body's
missing tiles get max(end, row) - row = 0 rows). A division by zero or a shift by a
negative amount, undefined in `arith`, is a MachineError at the op (`nonzero`,
`CheckedArithFunctions`), as the compiled engine reports it too."""

from __future__ import annotations

import operator

from xdsl.dialects import arith
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.ir import Operation

from pto.interp.machine import MachineError


def nonzero(op: Operation, divisor: int) -> None:
    """A MachineError at a division `op` whose divisor is zero."""
    if not divisor:
        raise MachineError(op, f"'{op.name}' divides by zero")


@register_impls
class IndexArithFunctions(InterpreterFunctions):
    @impl(arith.DivUIOp)
    def run_divui(self, interpreter, op, args):
        nonzero(op, args[1])
        return (args[0] // args[1],)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter, op, args):
        nonzero(op, args[1])
        return (args[0] % args[1],)

    @impl(arith.CeilDivUIOp)
    def run_ceildivui(self, interpreter, op, args):
        nonzero(op, args[1])
        return (-(-args[0] // args[1]),)

    @impl(arith.MinUIOp)
    def run_minui(self, interpreter, op, args):
        return (min(args[0], args[1]),)

    @impl(arith.MaxUIOp)
    def run_maxui(self, interpreter, op, args):
        return (max(args[0], args[1]),)


# arith.cmpi by predicate number (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge); index
# values are non-negative, so the unsigned ones compare as the signed ones.
CMP = (
    operator.eq,
    operator.ne,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
)


@register_impls
class FastIndexArithFunctions(InterpreterFunctions):
    @impl(arith.ConstantOp)
    def run_constant(self, interpreter, op, args):
        return (op.value.value.data,)  # an IntegerAttr's or a FloatAttr's

    @impl(arith.AddiOp)
    def run_addi(self, interpreter, op, args):
        return (args[0] + args[1],)

    @impl(arith.SubiOp)
    def run_subi(self, interpreter, op, args):
        return (args[0] - args[1],)

    @impl(arith.MuliOp)
    def run_muli(self, interpreter, op, args):
        return (args[0] * args[1],)

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter, op, args):
        return (CMP[op.predicate.value.data](args[0], args[1]),)


_XDSL = ArithFunctions()


@register_impls
class CheckedArithFunctions(InterpreterFunctions):
    """xDSL's signed divisions and shifts (registered with override), which assert on a
    zero divisor or a negative shift amount: a MachineError at the op first."""

    @impl(arith.DivSIOp)
    def run_divsi(self, interpreter, op, args):
        nonzero(op, args[1])
        return ArithFunctions.run_divsi(_XDSL, interpreter, op, args).values

    @impl(arith.RemSIOp)
    def run_remsi(self, interpreter, op, args):
        nonzero(op, args[1])
        return ArithFunctions.run_remsi(_XDSL, interpreter, op, args).values

    @impl(arith.FloorDivSIOp)
    def run_floordivsi(self, interpreter, op, args):
        nonzero(op, args[1])
        return ArithFunctions.run_floordivsi(_XDSL, interpreter, op, args).values

    @impl(arith.ShLIOp)
    def run_shli(self, interpreter, op, args):
        _shift(op, args[1])
        return ArithFunctions.run_shlsi(_XDSL, interpreter, op, args).values  # (xDSL names it so)

    @impl(arith.ShRSIOp)
    def run_shrsi(self, interpreter, op, args):
        _shift(op, args[1])
        return ArithFunctions.run_shrsi(_XDSL, interpreter, op, args).values


def _shift(op: Operation, amount: int) -> None:
    if amount < 0:
        raise MachineError(op, f"'{op.name}' shifts by a negative amount ({amount})")
