"""`scf.for` with a step that is not positive, a MachineError at the op.

MLIR requires a positive step; Python's `range`, which xDSL's `scf.for` runs, refuses a
zero step with a ValueError and runs a negative one downwards. Both engines test it
(`positive_step`) before the loop starts."""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Operation

from pto.interp.machine import MachineError


def positive_step(op: Operation, step: int) -> None:
    if not step > 0:
        raise MachineError(op, f"'{op.name}' step must be positive, got {step}")


_XDSL = ScfFunctions()


@register_impls
class CheckedScfFunctions(InterpreterFunctions):
    """xDSL's `scf.for` (registered with override), its step tested first."""

    @impl(scf.ForOp)
    def run_for(self, interpreter, op, args):
        positive_step(op, args[2])
        return ScfFunctions.run_for(_XDSL, interpreter, op, args).values
