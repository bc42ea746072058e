"""Index arithmetic that the stock xDSL `ArithFunctions` lack: the unsigned division,
remainder, ceil-division and min/max the lowering emits for tile counts and bounds."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.interpreter import InterpreterFunctions, impl, register_impls


@register_impls
class IndexArithFunctions(InterpreterFunctions):
    @impl(arith.DivUIOp)
    def run_divui(self, interpreter, op, args):
        return (args[0] // args[1],)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter, op, args):
        return (args[0] % args[1],)

    @impl(arith.CeilDivUIOp)
    def run_ceildivui(self, interpreter, op, args):
        return (-(-args[0] // args[1]),)

    @impl(arith.MinUIOp)
    def run_minui(self, interpreter, op, args):
        return (min(args[0], args[1]),)

    @impl(arith.MaxUIOp)
    def run_maxui(self, interpreter, op, args):
        return (max(args[0], args[1]),)
