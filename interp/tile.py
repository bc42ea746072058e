"""Interpreter functions for the `tile` dialect: token loops run their tiles in order,
stages run their bodies, loads and stores move token tiles between the global tensors
(numpy arrays; outputs are the trailing arguments, written in place) and tile values.
Compute ops share `pto.interp.pto.evaluate`. No timing: the machine model lives at the
`npu` level."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import tensor
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation

from pto.dialects import tile
from pto.interp.machine import MachineError
from pto.interp.pto import compute_ops


def _rows(op: Operation, what: str, i: int, n: int, total: int) -> None:
    if i < 0 or i + n > total:
        raise MachineError(op, f"'{op.name}' {what} rows [{i}, +{n}) are outside the tensor's {total} rows")


@register_impls
@compute_ops(*tile.TWIN.values())  # every tile compute op: the pto op's numerics on one tile
class TileFunctions(InterpreterFunctions):
    @impl(tile.TokenLoopOp)
    def run_token_loop(self, interpreter: Interpreter, op: tile.TokenLoopOp, args: PythonValues):
        lb, ub = args
        if lb > ub:  # the npu level would count a negative number of loop bodies
            raise MachineError(op, f"'tile.token_loop' lower bound {lb} is above its upper bound {ub}")
        for i in range(lb, ub, op.rows):
            interpreter.run_ssacfg_region(op.body, (i,), "token_loop")
        return ()

    @impl(tile.VecStageOp)
    def run_vec_stage(self, interpreter: Interpreter, op: tile.VecStageOp, args: PythonValues):
        return interpreter.run_ssacfg_region(op.body, (), op.label.data)

    @impl(tile.CubeStageOp)
    def run_cube_stage(self, interpreter: Interpreter, op: tile.CubeStageOp, args: PythonValues):
        return interpreter.run_ssacfg_region(op.body, (), op.label.data)

    @impl_terminator(tile.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: tile.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

    @impl(tile.LoadOp)
    def run_load(self, interpreter: Interpreter, op: tile.LoadOp, args: PythonValues):
        src: np.ndarray = args[0]
        if op.row is None:
            return (src.T.copy() if op.host_transpose is not None else src,)
        i = int(args[1])
        n = op.result.type.get_shape()[0]
        valid = int(args[2]) if op.valid is not None else n
        _rows(op, "load", i, valid, src.shape[0])
        out = np.zeros((n, *src.shape[1:]), src.dtype)
        out[:valid] = src[i : i + valid]
        return (out,)

    @impl(tile.StoreOp)
    def run_store(self, interpreter: Interpreter, op: tile.StoreOp, args: PythonValues):
        value, dest = args[0], args[1]
        i = int(args[2]) if op.row is not None else 0
        valid = int(args[3]) if op.valid is not None else value.shape[0]
        _rows(op, "store", i, valid, dest.shape[0])
        if op.column is not None:  # a column window of a rank-2 output (its verifier)
            dest = dest[:, op.col : op.col + value.shape[1]]
        dest[i : i + valid] = value[:valid]
        return ()

    # The tile level's token count comes from tensor.dim of a global tensor.
    @impl(tensor.DimOp)
    def run_dim(self, interpreter: Interpreter, op: tensor.DimOp, args: PythonValues):
        rank, i = args[0].ndim, int(args[1])
        if not 0 <= i < rank:
            raise MachineError(op, f"'tensor.dim' index {i} is out of range for a rank-{rank} tensor")
        return (args[0].shape[i],)
