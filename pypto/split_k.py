"""A matmul split over K by hand: matmuls of K slices, summed.

hc_pre writes split-K itself when the output is tiny: views of the activation and the
weight at `[0, j * KC]`, one matmul per slice, the partial results added.
mla_prolog_quant_v4 writes it with a `[K, N]` weight (possibly TILEOP_NZ): the
activation's columns at `[0, i * KC]` and the weight's rows `[KC, N]` at `[i * KC, 0]`.
SK-03 has one matmul, so the slices are kept aside (column and row views, partial
products) and, once their sum covers all of K, become that one matmul with split-K
pinned: the cube splits K over cores and adds the partial sums, which is what the
hand-written form asks for. It reads the whole weight as the caller stores it, NZ
fractals included.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from pto.frontend import builder as b
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType


@dataclass(frozen=True)
class Partial:
    a: Tensor  # the whole lhs and rhs the slices were taken from
    w: Tensor
    k0: int
    k1: int
    out: DataType
    b_trans: bool
    hints: b.Pinned  # as set at the first slice's matmul


def column_view(x: Tensor, c0: int, c1: int) -> Tensor:
    return Tensor.traced([*x.shape[:-1], c1 - c0], x.known_dtype, None, x._tok, ("cols", x, c0, c1))


def row_view(w: Tensor, r0: int, r1: int) -> Tensor:
    """Rows [r0, r1) of a `[K, N]` weight: a K slice of a split-K, or a window of it."""
    return Tensor.traced([r1 - r0, *w.shape[1:]], w.known_dtype, None, False, ("rows", w, r0, r1))


def partial_matmul(a: Tensor, w: Tensor, out: DataType, a_trans: bool, b_trans: bool) -> Tensor:
    """The product of K slices of both operands over the same K range, kept aside: the
    activation's columns and the weight's columns (`b_trans`, [N, K]) or rows ([K, N])."""
    va, vw = a._lazy, w._lazy
    if va is None or vw is None or va[0] != "cols" or vw[0] not in ("cols", "rows"):
        refuse("a matmul of a column view takes K slices of both operands (a hand-written split-K)")
    if a_trans or b_trans != (vw[0] == "cols"):
        refuse(
            "a hand-written split-K takes no a_trans, and the weight's columns [N, KC] at [0, k] with "
            "b_trans=True, or its rows [KC, N] at [k, 0] without"
        )
    k = vw[1].shape[-1] if b_trans else vw[1].shape[0]
    if va[2:] != vw[2:] or va[1].shape[-1] != k:
        refuse(f"the K slices of a split-K matmul must take the same K range, got {va[2:]} and {vw[2:]}")
    p = Partial(va[1], vw[1], va[2], va[3], out, b_trans, replace(b._pinned[-1]))
    n = vw[1].shape[0] if b_trans else vw[1].shape[1]
    return Tensor.traced([a.shape[0], n], out, None, a._tok, ("partial", p))


def merge(x: Tensor, y: Tensor) -> Tensor | None:
    """The sum of two partial products of adjacent K ranges, or None if they are not."""
    p, q = x._lazy[1], y._lazy[1]  # type: ignore[index]
    if (p.a, p.w, p.out, p.b_trans) != (q.a, q.w, q.out, q.b_trans):
        return None
    if p.k1 != q.k0 and q.k1 != p.k0:
        refuse(f"the partial matmuls over K [{p.k0}, {p.k1}) and [{q.k0}, {q.k1}) are not adjacent")
    m = replace(p, k0=min(p.k0, q.k0), k1=max(p.k1, q.k1))
    return Tensor.traced(x.shape, x.known_dtype, None, x._tok, ("partial", m))


def materialize(x: Tensor, matmul) -> Tensor:
    """The one matmul a complete sum of slices is, split-K pinned."""
    p: Partial = x._lazy[1]  # type: ignore[index]
    if (p.k0, p.k1) != (0, p.a.shape[-1]):
        refuse(f"the partial matmuls cover K [{p.k0}, {p.k1}) of {p.a.shape[-1]}: sum them over all of K")
    cube = p.hints.cube_tile
    if cube is not None:
        cube = b.cube_tile(cube.axes["m"], cube.axes["k"], cube.axes["n"], True)
    with _hints(replace(p.hints, cube_tile=cube)):
        return matmul(p.a, p.w, p.out, b_trans=p.b_trans)


@contextmanager
def _hints(hints: b.Pinned) -> Iterator[None]:
    """Ops made under the hints of the line the work was written at, not of where it is made."""
    saved, b._pinned[-1] = b._pinned[-1], hints
    try:
        yield
    finally:
        b._pinned[-1] = saved


def cast_now(x: Tensor, cast, tensor) -> Tensor:
    """A cast of a column view used as a tensor of its own: made once, in place (as
    `_slice`), under the hints that held at the cast's line. A view of a token tile is
    the columns of the whole tile's cast, and stays a K slice for a matmul that reads
    it too (`_kslice`: hc_pre's per-slice norm and split-K from one cast slice)."""
    view, dtype, mode, satmode, hints = x._lazy[1:]  # type: ignore[index]
    if view._lazy is not None and view._lazy[0] == "cols" and view._lazy[1]._tok:
        k = cast_columns(x, cast)
        y = tensor(cast_columns(x, cast), "a column view")
    else:
        k = None
        with _hints(hints):
            y = cast(tensor(view, "a column view"), dtype, mode, satmode)
    x._lazy, x._val, x._tok, x._body = None, y._val, y._tok, y._body
    x._kslice = k
    return x


def cast_columns(x: Tensor, cast) -> Tensor:
    """A cast column view as a matmul operand (a hand-written split-K casting each K
    slice just in time): the same columns of the whole tensor's cast, made once per
    tensor and type, so that the slices stay views of one tensor and their matmuls one
    split-K matmul."""
    view, dtype, mode, satmode, hints = x._lazy[1:]  # type: ignore[index]
    _, base, c0, c1 = view._lazy
    memo = base.__dict__.setdefault("_column_casts", {})
    if (dtype, mode, satmode) not in memo:
        with _hints(hints):
            memo[dtype, mode, satmode] = cast(base, dtype, mode, satmode)
    return column_view(memo[dtype, mode, satmode], c0, c1)
