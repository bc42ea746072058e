"""Interpreter functions for the `pto` dialect: whole-tensor numpy semantics of every
op. Run on a `pto`-level kernel they are the golden the lower levels are judged by.
`evaluate` is shared with the `tile` level, whose compute ops have the same bases."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation, SSAValue

from pto.dialects import pto
from pto.dialects.common import RoundMode, elem_name
from pto.interp import numerics as nx

_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}
_SCALAR: dict[str, Callable[[np.ndarray, np.float32], np.ndarray]] = {
    "muls": np.multiply,
    "adds": np.add,
    "maxs": np.maximum,
    "mins": np.minimum,
    "rdivs": lambda x, c: c / x,
}


def _elem(op: Operation, i: int = 0) -> str:
    return elem_name(op.results[i].type.element_type)  # type: ignore[attr-defined]


def _calc(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64) if x.dtype.kind == "i" else nx.f32(x)


def evaluate(op: Operation, args: PythonValues) -> tuple[np.ndarray, ...]:
    """The result arrays of one compute op (a `pto` op or its `tile` twin)."""
    kind = op.name.split(".")[1]
    out = _elem(op)
    if isinstance(op, pto.RmsNormBase):
        y = nx.rms_norm(args[0], args[1] if op.gamma is not None else None, op.eps.value.data)
        return (nx.store(y, out) if out == "f32" else nx.cast(y, "f32", out, RoundMode.RINT),)
    if isinstance(op, pto.MatmulBase):
        y = nx.matmul(args[0], args[1], op.a_trans is not None, op.b_trans is not None)
        if out != nx.NAMES[y.dtype]:
            y = nx.cast(y, nx.NAMES[y.dtype], out, RoundMode.RINT)
        return (y,)
    if isinstance(op, pto.CastBase):
        return (nx.cast(args[0], nx.NAMES[args[0].dtype], out, op.round.data, op.sat is not None),)
    if isinstance(op, pto.BinaryBase):
        return (_BINARY[kind](_calc(args[0]), _calc(args[1])).astype(nx.DTYPES[out]),)
    if isinstance(op, pto.UnaryBase):
        return (nx.unary(kind, args[0]).astype(nx.DTYPES[out]),)
    if isinstance(op, pto.ScalarBase):
        return (_SCALAR[kind](nx.f32(args[0]), np.float32(op.scalar.value.data)).astype(nx.DTYPES[out]),)
    if isinstance(op, pto.SelectBase):
        tensors = iter(args)
        items = [next(tensors) if isinstance(x, SSAValue) else np.float32(x) for x in op.items()]
        return (nx.select(op.predicate.data, *items).astype(nx.DTYPES[out]),)
    if isinstance(op, pto.ReduceBase):
        return (nx.reduce(args[0], op.kind.data).astype(nx.DTYPES[out]),)
    if isinstance(op, pto.QuantBase):
        return nx.quant(args[0], op.wrap is not None, op.order_name)
    if isinstance(op, pto.DequantBase):
        w = args[2] if op.w_scale is not None else None
        return (nx.dequant(args[0], args[1], w, op.w_scale_first is not None, op.scales_product is not None),)
    if isinstance(op, pto.ReshapeBase):
        shape = [-1 if d < 0 else d for d in op.result.type.get_shape()]
        return (args[0].reshape(shape),)
    if isinstance(op, pto.TransposeBase):
        return (np.ascontiguousarray(np.swapaxes(args[0], -1, -2)),)
    if isinstance(op, pto.SliceBase):
        return (np.ascontiguousarray(args[0][..., op.start : op.start + op.width]),)
    if isinstance(op, pto.ConcatBase):
        return (np.concatenate(list(args), axis=-1),)
    if isinstance(op, pto.ViewBase):
        window = op.result.type.get_shape()
        return (args[0][tuple(slice(o, o + n) for o, n in zip(op.starts, window, strict=True))],)
    raise NotImplementedError(op.name)


def compute_ops(*classes: type[Operation]):
    """Class decorator (under `@register_impls`): every compute op in `classes` runs
    `evaluate`, the one implementation the pto and tile levels share."""

    def run(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        return evaluate(op, args)

    def add(cls):
        for c in classes:
            setattr(cls, f"run_{c.name.split('.')[1]}", impl(c)(run))
        return cls

    return add


@register_impls
@compute_ops(
    pto.RmsNormOp,
    pto.MatmulOp,
    pto.CastOp,
    pto.AddOp,
    pto.SubOp,
    pto.MulOp,
    pto.DivOp,
    pto.MaxOp,
    pto.MinOp,
    pto.SqrtOp,
    pto.RsqrtOp,
    pto.AbsOp,
    pto.ExpOp,
    pto.LogOp,
    pto.ReciprocalOp,
    pto.MulsOp,
    pto.AddsOp,
    pto.MaxsOp,
    pto.MinsOp,
    pto.RdivsOp,
    pto.SelectOp,
    pto.ReduceOp,
    pto.QuantOp,
    pto.DequantOp,
    pto.ReshapeOp,
    pto.TransposeOp,
    pto.SliceOp,
    pto.ConcatOp,
    pto.ViewOp,
)
class PtoFunctions(InterpreterFunctions):
    pass
