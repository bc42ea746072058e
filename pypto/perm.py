"""Token tensors of rank 3 and more: `[rows, H, D]` as H row blocks `[rows, D]`.

A token tile's rows are its tokens here, and the vector stages work on 2-D tiles, so
`reshape(q, [t, H, D])` cannot be a tile of its own. What it names is each token's
columns arranged in a grid, and every rank-3 form PyPTO authors write (a per-head norm,
the per-head RoPE's `view`s of the last axis, `reshape(cos, [t, 1, D])` broadcast over
the heads, the interleaved RoPE's reshape/transpose chains, a sum over the heads) is a
computation on that grid's rows. So the value is kept as the 2-D tiles it is made of
(its blocks) and an index grid `idx` of shape `shape[1:]`: `idx[h, d]` is the column,
counted through the blocks side by side, that holds element `[:, h, d]`.

Reshapes, transposes and windows of the non-token dims only change `idx` (no op).
An op that reads the value runs once per row of the grid on the 2-D tile of that row
(a block, a `pto.slice` of one, a column permutation of one: `pto.reshape` +
`pto.transpose` + `pto.reshape`, or a `pto.concat` of a few slices), and its result is
again a grid of blocks. A reshape back to `[rows, W]` is the 2-D tile of the whole
grid; an `assemble` into a `[T, H, D]` output stores each block into its columns.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects.builtin import UnitAttr

from pto.dialects import pto
from pto.frontend import builder as b
from pto.frontend import views
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType

# A row of the grid taken from more pieces than MAX_PIECES (runs of contiguous columns
# that are not whole blocks), of which one is narrower than NARROW_PIECE columns, is
# refused rather than built from a long chain of tiny slices; wide pieces (448 of each of
# 16 heads' 512 columns: mla_prolog_quant_v4) up to one per head of DeepSeek's 128.
MAX_PIECES = 8
NARROW_PIECE = 16
MAX_WIDE_PIECES = 128
# Rows of the grid an op may run over: each is an op of its own in the kernel.
MAX_ROWS = 1024


@contextmanager
def row_tiles(shape: Sequence[Any]) -> Iterator[None]:
    """The vector tile of the ops on the rows of a `shape` grid, in the columns of the
    stage's 2-D data. A tile narrower than a row is the rows and the last size of the tile
    (`(4, 64, 64)` over `[t, 64, 512]` is `(4, 64)` over each `[t, 512]` row); one that
    covers whole rows covers whole runs of them, side by side in the data (`(2, 4, 128)`
    over `[t, 16, 128]` is `(2, 512)`, `(2, 16, 128)` is `(2, 2048)`, the whole row: a
    row's width there would claim to cut the data into columns)."""
    pinned = b._pinned[-1]
    tile = pinned.vec_tile
    if tile is None or len(tile) < 3:
        row = pinned
    elif len(tile) == len(shape) and tile[-1] >= shape[-1]:  # (the dims after the tokens are ints)
        runs = math.prod(min(t, d) for t, d in zip(tile[1:-1], shape[1:-1], strict=True))
        # (never narrower than the tile's own last size: a `[t, H, 1]` keepdim sum's rows)
        width = max(tile[-1], runs * shape[-1])
        row = dataclasses.replace(pinned, vec_tile=(tile[0], width))
    else:
        row = dataclasses.replace(pinned, vec_tile=(tile[0], tile[-1]))
    b._pinned.append(row)
    try:
        yield
    finally:
        b._pinned.pop()


def is_perm(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "perm"


def _parts(x: Tensor) -> tuple[list[Tensor], np.ndarray]:
    return x._lazy[1], x._lazy[2]  # type: ignore[index]


def make(blocks: list[Tensor], idx: np.ndarray) -> Tensor:
    """The grid `idx` over `blocks` (2-D token tiles with the same rows and dtype)."""
    x0 = blocks[0]
    t = Tensor.traced([x0.shape[0], *idx.shape], x0.known_dtype, None, True, ("perm", blocks, idx))
    t._body = max(x._body for x in blocks)
    return t


def _grid(blocks: list[Tensor], mid: list[int]) -> Tensor:
    """Blocks that are the rows of a grid `[*mid, w]` in order (an op's results)."""
    width = blocks[0].shape[-1]
    return make(blocks, np.arange(len(blocks) * width).reshape(*mid, width))


def split(x: Tensor, shape: list) -> Tensor | None:
    """`reshape(x, shape)` of a 2-D token tile to rank >= 3, rows kept: its grid."""
    if not (x._tok and x._lazy is None and len(x.shape) == 2 and len(shape) >= 3 and shape[0] == x.shape[0]):
        return None
    mid = shape[1:]
    if not all(isinstance(d, int) and d > 0 for d in mid) or math.prod(mid) != x.shape[1]:
        refuse(
            f"pypto.reshape of a {x.shape} token tile to {shape}: the dims after the rows must multiply to {x.shape[1]}"
        )
    return make([x], np.arange(x.shape[1]).reshape(mid))


def reshape(x: Tensor, shape: list) -> Tensor:
    blocks, idx = _parts(x)
    mid = list(shape[1:])
    if not shape or shape[0] != x.shape[0] or not all(isinstance(d, int) and d > 0 for d in mid):
        refuse(f"pypto.reshape of a rank-{len(x.shape)} token tensor {x.shape} must keep its rows, got {list(shape)}")
    if math.prod(mid) != idx.size:
        refuse(f"pypto.reshape of {x.shape} to {list(shape)} changes the element count")
    if len(mid) == 1:
        return _row(blocks, idx.reshape(-1), "pypto.reshape back to 2-D")
    return _settle(blocks, idx.reshape(mid))


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    blocks, idx = _parts(x)
    rank = len(x.shape)
    if not all(isinstance(d, int) and not isinstance(d, bool) and -rank <= d < rank for d in (dim0, dim1)):
        refuse(f"pypto.transpose's dims must be integers in [{-rank}, {rank}), got {dim0!r}, {dim1!r}")
    d0, d1 = dim0 % rank, dim1 % rank
    if 0 in (d0, d1):
        refuse(f"pypto.transpose of dims {dim0}, {dim1}: dim 0 is the tokens, which stay the rows")
    return _settle(blocks, np.swapaxes(idx, d0 - 1, d1 - 1))


def window(x: Tensor, shape: list, offsets: list) -> Tensor | None:
    """`view(x, shape, offsets)` of all rows and a box of the other dims."""
    blocks, idx = _parts(x)
    if shape[0] != x.shape[0] or offsets[0] != 0 or len(shape) != len(x.shape):
        return None
    box = []
    for o, n, d in zip(offsets[1:], shape[1:], idx.shape, strict=True):
        if not (isinstance(o, int) and isinstance(n, int) and 0 <= o and 0 < n and o + n <= d):
            return None
        box.append(slice(o, o + n))
    return make(blocks, idx[tuple(box)])


def columns(x: Tensor) -> Tensor:
    """A window that is one run of a token tile's columns (mhc_pre's `x[:, s:s+1, :]`
    of the streams): a grid over the column view of that run, so that a cast and a
    matmul of it stay a K slice of a hand-written split-K."""
    blocks, idx = _parts(x)
    if math.prod(idx.shape[:-1]) != 1:
        return x
    pat = _pattern(blocks, idx.reshape(-1))
    n = idx.size
    if pat is None or pat[0] != "S" or blocks[pat[1]]._lazy is not None or n == blocks[pat[1]].shape[-1]:
        return x
    run = _ops().split_k.column_view(blocks[pat[1]], pat[2], pat[2] + n)
    return make([run], np.arange(n).reshape(idx.shape))


def lazy_block(x: Tensor) -> Tensor | None:
    """The one block of a grid that is still a view kept aside (`columns`), if it is."""
    blocks, _ = _parts(x)
    return blocks[0] if len(blocks) == 1 and blocks[0]._lazy is not None else None


def concat(xs: Sequence[Tensor], axis: int) -> Tensor:
    """`pypto.concat` along dim `axis` >= 1: the grids side by side (along the last dim,
    each row's tiles concatenated, so that the row stays one block)."""
    if axis == len(xs[0].shape) - 1:
        rows = [rows_of(x) for x in xs]
        mids = {r[1] for r in rows}
        if len(mids) != 1:
            refuse(f"pypto.concat of {[x.shape for x in xs]}: the dims before the last must agree")
        mid = list(rows[0][1])
        with row_tiles(xs[0].shape):
            return _grid([_ops().concat([r[0][i] for r in rows], -1) for i in range(len(rows[0][0]))], mid)
    blocks: list[Tensor] = []
    grids = []
    for x in xs:
        bl, idx = _parts(x) if is_perm(x) else ([x], np.arange(x.shape[-1]))
        base = sum(t.shape[-1] for t in blocks)
        blocks += bl
        grids.append(idx + base)
    try:
        return make(blocks, np.concatenate(grids, axis - 1))
    except ValueError:
        refuse(f"pypto.concat of {[x.shape for x in xs]} along dim {axis}: the other dims must agree")


def rows_of(x: Tensor) -> tuple[list[Tensor], tuple[int, ...]]:
    """The 2-D tile of each row of the grid (made where needed), and the grid's dims
    before the last."""
    blocks, idx = _parts(x)
    flat = idx.reshape(-1, idx.shape[-1])
    if len(flat) > MAX_ROWS:
        grid = list(idx.shape[:-1])
        refuse(f"an op on a {x.shape} token tensor runs once per row of its {grid} grid: at most {MAX_ROWS}")
    what = "an op on a rank-3 token tensor"
    if _is_rows(blocks, flat):
        return [_ops()._tensor(t, what) for t in blocks], idx.shape[:-1]
    with row_tiles(x.shape):
        out = [_ops()._tensor(_row(blocks, r, what), what) for r in flat]
    x._lazy = ("perm", out, np.arange(flat.size).reshape(idx.shape))  # made once: later uses read these
    return out, idx.shape[:-1]


def _is_rows(blocks: list[Tensor], flat: np.ndarray) -> bool:
    w = flat.shape[-1]
    return (
        len(blocks) == len(flat)
        and all(t.shape[-1] == w for t in blocks)
        and bool((flat == np.arange(flat.size).reshape(flat.shape)).all())
    )


def _settle(blocks: list[Tensor], idx: np.ndarray) -> Tensor:
    """The grid after a reshape or transpose. Where each of its rows is a column
    permutation of one block (the per-head interleave), the permutations are made now,
    so that later windows of the rows are plain slices."""
    x = make(blocks, idx)
    flat = idx.reshape(-1, idx.shape[-1])
    pats = [_pattern(blocks, r) for r in flat]
    if len(flat) <= MAX_ROWS and all(p is not None for p in pats) and any(p[0] == "T" for p in pats):  # type: ignore[index]
        rows_of(x)
    return x


def _offsets(blocks: list[Tensor]) -> np.ndarray:
    return np.cumsum([0] + [t.shape[-1] for t in blocks])


def _pattern(blocks: list[Tensor], cols: np.ndarray) -> tuple | None:
    """How a row's columns come from one block: ("S", block, start) a contiguous run,
    ("T", block, start, a, c) the run `[start, start + a*c)` seen `[a, c]`, transposed."""
    off = _offsets(blocks)
    k = int(np.searchsorted(off, cols[0], side="right")) - 1
    q = cols - off[k]
    n = len(cols)
    if q.min() < 0 or q.max() >= blocks[k].shape[-1]:
        return None
    s = int(q.min())
    if (q == s + np.arange(n)).all():
        return ("S", k, s)
    for a in range(2, n):
        if n % a == 0 and (q == s + np.arange(n).reshape(a, n // a).T.reshape(-1)).all():
            return ("T", k, s, a, n // a)
    return None


def _row(blocks: list[Tensor], cols: np.ndarray, what: str) -> Tensor:
    """The 2-D tile `[rows, len(cols)]` of these columns of the blocks."""
    pat = _pattern(blocks, cols)
    if pat is not None:
        return _piece(blocks, pat, len(cols))
    off = _offsets(blocks)
    pieces, start = [], 0
    for i in range(1, len(cols) + 1):  # maximal contiguous runs
        if i == len(cols) or cols[i] != cols[i - 1] + 1 or cols[i] in off:
            pieces.append(_pattern(blocks, cols[start:i]) + (i - start,))  # type: ignore[operator]
            start = i
    parts = [p for p in pieces if (p[2], p[3]) != (0, blocks[p[1]].shape[-1])]  # (not whole blocks)
    narrow = any(p[-1] < NARROW_PIECE for p in parts)
    if len(parts) > (MAX_PIECES if narrow else MAX_WIDE_PIECES):
        refuse(
            f"{what} takes each token's columns in an order of {len(pieces)} pieces: a column permutation here is a "
            f"run of one block seen [a, c] and transposed, or at most {MAX_PIECES} contiguous pieces "
            f"({MAX_WIDE_PIECES} of {NARROW_PIECE} columns or more)"
        )
    return _ops().concat([_piece(blocks, p[:-1], p[-1]) for p in pieces], -1)


def _piece(blocks: list[Tensor], pat: tuple, n: int) -> Tensor:
    ops = _ops()
    x = blocks[pat[1]]
    s = pat[2]
    if (s, n) != (0, x.shape[-1]):
        x = ops._tensor(ops.split_k.column_view(x, s, s + n), "a column run")
    if pat[0] == "S":
        return x
    a, c = pat[3], pat[4]
    rows, dt = x.shape[0], x.known_dtype
    pinned = b._pinned[-1]
    tile = pinned.vec_tile
    # the permutation's rank-3 ops take the rows of the tile in force and whole [a, c] grids
    b._pinned.append(pinned if tile is None else dataclasses.replace(pinned, vec_tile=(tile[0], c, a)))
    try:
        grid = ops._result("reshape", [x], [rows, a, c], dt, lambda v: views.reshape(v, [None, a, c], True))
        swapped = ops._result("transpose", [grid], [rows, c, a], dt, views.transpose)
    finally:
        b._pinned.pop()
    return ops._result("reshape", [swapped], [rows, n], dt, lambda v: views.reshape(v, [None, n], True))


def per_row(kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, one) -> Tensor:
    """`kind` on grids (and weights, broadcast): once per row of the result's grid;
    `one(kind, ins, shape, dtype)` traces one."""
    mid = [int(d) for d in shape[1:-1]]
    if math.prod(mid) > MAX_ROWS:
        refuse(f"pypto.{kind} of a {shape} token tensor: at most {MAX_ROWS} rows of its grid")
    sides: list[tuple[list[Tensor], list[int]]] = []
    for i in inputs:
        if is_perm(i):
            blocks, grid = rows_of(i)
            sides.append((blocks, list(grid)))
        elif i._tok:
            refuse(
                f"pypto.{kind} of a rank-{len(shape)} token tensor and a 2-D token tile {i.shape}: reshape the tile "
                f"to [rows, 1, {i.shape[-1]}] to broadcast it over dim 1"
            )
        elif (wmid := _weight_grid(i, shape)) is not None:  # [1, H, D]: a per-head weight row
            sides.append((_weight_rows(i, wmid), wmid))
        elif len(i.shape) > 1 and math.prod(i.shape[:-1]) > 1:
            refuse(
                f"pypto.{kind} of a rank-{len(shape)} token tensor and a {i.shape} weight: only a [D], [1, D] "
                f"or [1, {', '.join(map(str, shape[1:]))}] weight (a row of it per row of the grid)"
            )
        else:  # a [1, ..., 1, D] weight as [1, D]: what broadcasts against each row's [rows, D]
            if len(i.shape) > 2:
                i = _ops().reshape(i, [1, i.shape[-1]], inplace=i._param is not None or i._view_of is not None)
            sides.append(([i], []))
    out = []
    for at in np.ndindex(*mid):
        ins = []
        for blocks, imid in sides:
            if not imid:
                ins.append(blocks[0])
                continue
            j = [a if n > 1 else 0 for a, n in zip(at[len(at) - len(imid) :], imid, strict=True)]
            ins.append(blocks[int(np.ravel_multi_index(j, imid))] if j else blocks[0])
        out.append(one(kind, ins, [shape[0], shape[-1]], dtype))
    return _grid(out, mid)


def _weight_grid(w: Tensor, shape: list) -> list[int] | None:
    """The grid `[H, ...]` of a weight `[1, H, ..., D]` that has a row for each row of a
    `shape` token tensor's grid (its other dims 1: broadcast), or None."""
    if len(w.shape) != len(shape) or w.shape[0] != 1 or w.shape[-1] != shape[-1] or not all(map(_is_static, w.shape)):
        return None
    mid = [int(d) for d in w.shape[1:-1]]
    if math.prod(mid) <= 1 or any(m not in (1, int(n)) for m, n in zip(mid, shape[1:-1], strict=True)):
        return None
    return mid


def _weight_rows(w: Tensor, mid: list[int]) -> list[Tensor]:
    """Each row `[1, D]` of a weight `[1, *mid, D]`, a window of it, in grid order."""
    d, n = w.shape[-1], math.prod(mid)
    # (its columns as one row: a row is then a column window, of a reshape of a weight too)
    flat = _ops().reshape(w, [1, n * d], inplace=w._param is not None or w._view_of is not None)
    return [_ops()._tensor(flat[:, j * d : (j + 1) * d], "a row of the weight") for j in range(n)]


def _is_static(n: object) -> bool:
    return isinstance(n, int)


def reduce(kind: str, x: Tensor, dim: int, keepdim: bool, one_reduce, combine) -> Tensor:
    """A reduction of a grid over its last dim (once per row) or over another of its
    dims (rows combined by `combine(a, b)`, an elementwise add, max or min)."""
    rank = len(x.shape)
    d = dim % rank
    if d == 0:
        refuse(f"pypto.{kind} over dim {dim}: dim 0 is the tokens, reduced by nothing here")
    with row_tiles(x.shape):
        return _reduce(x, d, keepdim, one_reduce, combine)


def _reduce(x: Tensor, d: int, keepdim: bool, one_reduce, combine) -> Tensor:
    rank = len(x.shape)
    blocks, mid = rows_of(x)
    grid = np.arange(len(blocks)).reshape(mid) if mid else np.zeros((), int)
    if d == rank - 1:
        out = [one_reduce(t) for t in blocks]
        res = _grid(out, list(mid))
        return res if keepdim else _drop_last(out, list(mid))
    axis = d - 1
    moved = np.moveaxis(grid, axis, -1)
    red = []
    for at in np.ndindex(*moved.shape[:-1]):
        acc = blocks[int(moved[at][0])]
        for j in moved[at][1:]:
            acc = combine(acc, blocks[int(j)])
        red.append(acc)
    rmid = list(moved.shape[:-1])
    if keepdim:
        rmid.insert(axis, 1)
    if not rmid:
        return red[0]
    return _grid(red, rmid)


def _drop_last(out: list[Tensor], mid: list[int]) -> Tensor:
    """`[rows, *mid]` of per-row reductions `[rows, 1]`: side by side."""
    if len(out) == 1:
        return out[0]
    flat = _ops().concat(out, -1)
    if len(mid) == 1:
        return flat
    return split(flat, [flat.shape[0], *mid])  # type: ignore[return-value]


def store_shape(x: Tensor) -> Tensor:
    """The grid as an output `[T, *dims]` stores it: the 2-D tile of the whole grid seen
    with the grid's dims (`pto.reshape` in place: each token's columns are one run
    either way). Made of several blocks, the tile is their `pto.concat` marked
    `pto.assemble`: each block is stored into its columns of the output (as PyPTO
    writes each tile), not copied together in UB first."""
    blocks, idx = _parts(x)
    what = "pypto.assemble of a rank-3 token tensor"
    flat = _ops()._tensor(_row(blocks, idx.reshape(-1), what), what)
    if flat._val is not None and isinstance(flat._val.value.owner, pto.ConcatOp) and len(blocks) > 1:
        flat._val.value.owner.attributes[pto.ASSEMBLE] = UnitAttr()
    mid = list(idx.shape)
    return _ops()._result("reshape", [flat], x.shape, flat.known_dtype, lambda v: views.reshape(v, [None, *mid], True))


def _ops():
    from pto.pypto import ops

    return ops
