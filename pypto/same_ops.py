"""An op traced again in a kernel's body is the first one: the same kind, inputs (the
same tensors), result, parameters (the values its builder closes over) and hints, in the
same body (pto ops are pure). GLM-4.5's MoE recomputes its tile's cast, amax and scale in
each K chunk, whose slices must then be slices of one value (pypto/split_k.py)."""

from __future__ import annotations

from collections.abc import Sequence

from pto.frontend import builder as b
from pto.pypto.tensor import Tensor, Trace
from pto.pypto.types import DataType


def key(tr: Trace, kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, build) -> tuple:
    """What makes an op the same op (module docstring)."""
    cells = tuple(_hashable(c.cell_contents) for c in build.__closure__ or ())
    ins = tuple(id(i) for i in inputs)
    p = b._pinned[-1]
    hints = (p.label, p.vec_tile, repr(p.cube_tile) if kind == "matmul" else None)  # (the ones it is built with)
    return (tr.iteration, kind, ins, repr(shape), dtype, build.__code__, cells, hints)


def _hashable(v: object) -> object:
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v


def state(t: Tensor) -> tuple:
    """What an in-place op may change of a tensor (a reshape in place, a move)."""
    return (id(t._val), repr(t._shape), id(t._lazy))
