"""Token tensors whose tokens are not dim 0: hc_pre's prefill form, `hc_fn @ x^T`.

hc_pre's prefill kernel multiplies the weight by the transposed token tile
(`matmul(hc_fn, x, b_trans=True)`: `[24, t]`, a column per token), works on windows of
its rows (`[4, t]`, with `[4, 1]` weights broadcast along the tokens, the norm's
`[t, 1]` reshaped to `[1, t]`), reshapes them to `[4, 4, t]`, reduces over dims 0 and 1,
and transposes the tokens back to dim 0 before it stores. Here a token's values stay
in its row, as everywhere else: such a value is kept as the tokens-first tensor it is
a permutation of (`base`: a 2-D token tile or a grid of them, pypto/perm.py) and
`order`, the dim of `base` each of its dims is. The matmul is `x @ hc_fn^T`; an
elementwise op runs on `base`, its weights permuted the same way (a weight with one
dim above 1 is a reshape of itself, no data moves); a reduction over dim d reduces
`base` over `order[d]`; a transpose only permutes `order`, and one that brings the
tokens back to dim 0 is `base` itself. The numbers are PyPTO's; the small transposes
PyPTO runs on `[4, t]` tiles are not run here, so they cost nothing in the report.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pto.frontend import builder as b
from pto.pypto.errors import refuse
from pto.pypto.sym import Sym
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType

# The ops an op on a permuted value may be: elementwise, so that they run on `base` alike.
ELEMENTWISE = frozenset(
    {"add", "sub", "mul", "div", "max", "min", "exp", "log", "sqrt", "rsqrt", "reciprocal", "rdivs", "abs", "cast"}
)


def is_tcol(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "tcol"


def make(base: Tensor, order: Sequence[int]) -> Tensor:
    """`base` (tokens first) with its dims in `order`; `base` itself for the identity."""
    order = tuple(order)
    if order == tuple(range(len(order))):
        return base
    t = Tensor.traced([base.shape[o] for o in order], base.known_dtype, None, True, ("tcol", base, order))
    t._body = base._body
    return t


def _parts(x: Tensor) -> tuple[Tensor, tuple[int, ...]]:
    return x._lazy[1], x._lazy[2]  # type: ignore[index]


def _base(x: Tensor, what: str) -> Tensor:
    return _ops()._tensor(_parts(x)[0], what)


def _permuted(shape: Sequence, order: Sequence[int]) -> list:
    """The dims of a shape in `order`'s frame, as `base` has them."""
    return [shape[order.index(j)] for j in range(len(order))]


@contextmanager
def _tiles(order: Sequence[int]) -> Iterator[None]:
    """The vector tile in force, its sizes permuted as the dims are: PyPTO's
    `set_vec_tile_shapes(8, 16, 128)` over `[4, 4, t]` is `(128, 8, 16)` over `base`."""
    pinned = b._pinned[-1]
    tile = pinned.vec_tile
    if tile is not None and len(tile) >= len(order):
        pinned = dataclasses.replace(pinned, vec_tile=tuple(_permuted(tile[: len(order)], order)))
    b._pinned.append(pinned)
    try:
        yield
    finally:
        b._pinned.pop()


def matmul(w: Tensor, x: Tensor, out: DataType, a_trans: bool, b_trans: bool, mm) -> Tensor:
    """`w @ x^T` of a weight and a token tile: `(x @ w^T)^T`, the cube's m and n hints
    swapped with the operands (PyPTO's m tile is the weight's rows here)."""
    if a_trans or not b_trans:
        refuse(
            f"pypto.matmul of a weight {w.shape} and a token tile {x.shape}: only `matmul(w, x, b_trans=True)` "
            "(w @ x^T, a column per token) is supported; a product over the tokens is not SK-03"
        )
    pinned = b._pinned[-1]
    cube = pinned.cube_tile
    if cube is not None:
        ax = cube.axes
        cube = b.cube_tile(ax["n"], ax["k"], ax["m"], cube.is_split_k)
    b._pinned.append(dataclasses.replace(pinned, cube_tile=cube))
    try:
        y = mm(x, w, out, b_trans=True)
    finally:
        b._pinned.pop()
    return make(y, (1, 0))


def _token_at(shape: Sequence, rows: object, before: int, rank: int) -> int | None:
    """Where the tokens are in a reshape's `shape`: at the same place from the end as
    before (`[16, t] -> [4, 4, t]`), else from the start; None if `rows` is not there."""
    for i in (len(shape) - (rank - before), before):
        if 0 <= i < len(shape) and _same(shape[i], rows):
            return i
    return None


def _same(d: object, rows: object) -> bool:
    return d is rows or (isinstance(d, Sym) and isinstance(rows, Sym) and d._same(rows)) or d == rows


def reshape(x: Tensor, shape: list, plain_reshape) -> Tensor | None:
    """A reshape of a permuted value, or of a token tile that moves its tokens off dim 0
    (`rms.reshape([1, t])`): the other dims keep their order (as a reshape of `base`),
    the tokens their place. None where it is not one (a token tile's own reshape)."""
    order: tuple[int, ...]
    at: int | None
    if not is_tcol(x):  # a token tile [t, ...] to [..., t]
        if not shape or _same(shape[0], x.shape[0]) or not _same(shape[-1], x.shape[0]):
            return None
        base, order, at = x, (0, 1), len(shape) - 1
    else:
        base, order = _parts(x)
        at = _token_at(shape, base.shape[0], order.index(0), len(order))
    rows = base.shape[0]
    if at is None:
        refuse(f"pypto.reshape of {x.shape} (tokens at dim {order.index(0)}) to {shape}: the tokens must keep a dim")
    others = [o for o in order if o != 0]
    if others != sorted(others):
        refuse(
            f"pypto.reshape of {x.shape}: its dims other than the tokens are transposed; reshape before the "
            "transpose, or transpose back first"
        )
    rest = [d for i, d in enumerate(shape) if i != at]
    if not all(isinstance(d, int) and d > 0 for d in rest) or math.prod(rest) != math.prod(base.shape[1:]):
        refuse(f"pypto.reshape of {x.shape} to {shape} changes the element count")
    new_base = plain_reshape(_ops()._tensor(base, "pypto.reshape's input"), [rows, *rest])
    new_order = [0 if i == at else 1 + i - (at is not None and i > at) for i in range(len(shape))]
    return make(new_base, new_order)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    base, order = _parts(x)
    rank = len(order)
    if not all(isinstance(d, int) and not isinstance(d, bool) and -rank <= d < rank for d in (dim0, dim1)):
        refuse(f"pypto.transpose's dims must be integers in [{-rank}, {rank}), got {dim0!r}, {dim1!r}")
    o = list(order)
    o[dim0 % rank], o[dim1 % rank] = o[dim1 % rank], o[dim0 % rank]
    return make(base, o)


def window(x: Tensor, shape: list, offsets: list, view) -> Tensor:
    """`view(x, shape, offsets)` taking all the tokens: the window of `base`."""
    base, order = _parts(x)
    t = order.index(0)
    if len(shape) != len(order) or len(offsets) != len(order) or offsets[t] != 0 or not _same(shape[t], x.shape[t]):
        refuse(f"pypto.view of {shape} at {offsets} of {x.shape} (tokens at dim {t}): take all the tokens")
    return make(view(base, _permuted(shape, order), _permuted(offsets, order)), order)


def getitem(x: Tensor, key: object, view) -> Tensor:
    """`x[a:b, :]`: one slice per dim, all of the tokens' dim, static windows of the others."""
    order = _parts(x)[1]
    t = order.index(0)
    if not (isinstance(key, tuple) and len(key) == len(order) and all(isinstance(k, slice) for k in key)):
        refuse(f"slicing a {x.shape} tensor (tokens at dim {t}) takes one slice per dim, got {key!r}")
    shape, offs = [], []
    for i, (k, d) in enumerate(zip(key, x.shape, strict=True)):
        if i == t:
            if k != slice(None):
                refuse(f"slicing a {x.shape} tensor: its tokens (dim {t}) are taken whole, as `:`")
            shape.append(d)
            offs.append(0)
            continue
        a, z, step = k.indices(d)
        if step != 1 or z <= a:
            refuse(f"slicing a {x.shape} tensor with {key!r}: a non-empty window without a step")
        shape.append(z - a)
        offs.append(a)
    return window(x, shape, offs, view)


def reduce(kind: str, x: Tensor, dim: object, keepdim: bool, red) -> Tensor:
    """A reduction over a dim that is not the tokens: `base` reduced over that dim."""
    base, order = _parts(x)
    rank = len(order)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        refuse(f"pypto.{kind}'s dim must be an integer in [{-rank}, {rank}), got {dim!r}")
    d = order[dim % rank]
    if d == 0:
        refuse(f"pypto.{kind} over dim {dim}, the tokens: reduced by nothing here")
    with _tiles(order):
        y = red(kind, _base(x, f"pypto.{kind}'s input"), d, keepdim)
    if keepdim:
        return make(y, order)
    return make(y, [o - (o > d) for o in order if o != d])


def binary(kind: str, x: Tensor, y: Tensor, op, broadcast) -> Tensor:
    """An elementwise op with a permuted operand: on `base`, the other operand permuted
    alike (a permuted value of the same order, a weight, a token tile of one element)."""
    t = x if is_tcol(x) else y
    order = _parts(t)[1]
    ins = [_physical(v, t, order, kind, broadcast) for v in (x, y)]
    with _tiles(order):
        return make(op(kind, *ins), order)


def _physical(v: Tensor, t: Tensor, order: tuple[int, ...], kind: str, broadcast) -> Tensor:
    from pto.pypto import expand

    if is_tcol(v):
        if _parts(v)[1] != order:
            refuse(f"pypto.{kind} of {t.shape} and {v.shape}: their tokens are at different dims; transpose one")
        return _base(v, f"pypto.{kind}'s operand")
    if v._tok:
        if all(d == 1 for d in v.shape):  # one token's one number, as any layout has it
            return v
        refuse(
            f"pypto.{kind} of {t.shape} (tokens at dim {order.index(0)}) and a token tile {v.shape} (tokens at "
            "dim 0): transpose one to the other's layout"
        )
    v = _ops()._tensor(expand.operand(v, t, broadcast, f"pypto.{kind}"), f"pypto.{kind}'s operand")
    full = [1] * (len(order) - len(v.shape)) + list(v.shape)
    if len(full) != len(order):
        refuse(f"pypto.{kind} of {t.shape} and a {v.shape} weight: the weight has more dims")
    want = _permuted(full, order)
    if want == full:
        return v
    if sum(d != 1 for d in full) > 1:
        refuse(
            f"pypto.{kind} of {t.shape} (tokens at dim {order.index(0)}) and a {v.shape} weight: only a weight "
            "with one dim above 1 is broadcast along the tokens here"
        )
    return _ops().reshape(v, want, inplace=True)


def each(kind: str, x: Tensor, shape: list, dtype: DataType, one) -> Tensor:
    """An op of one permuted operand (a scalar op, a cast, exp): on `base`."""
    if kind not in ELEMENTWISE:
        refuse(
            f"pypto.{kind} of a {x.shape} tensor whose tokens are at dim {_parts(x)[1].index(0)}: only elementwise "
            "ops, reductions, views, reshapes and transposes take it; transpose the tokens back to dim 0 first"
        )
    order = _parts(x)[1]
    with _tiles(order):
        return make(one(kind, [_base(x, f"pypto.{kind}'s input")], _permuted(shape, order), dtype), order)


def _ops():
    from pto.pypto import ops

    return ops
