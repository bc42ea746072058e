"""Rows of a tile of the loop body taken one at a time, GLM-4.5's per-row quant:

    s = pypto.tensor([TILE, K], dt)
    for r in range(TILE):
        row = pypto.view(h, [1, K], [r, 0])
        s[r:r + 1, 0:] = f(row)

The Python loop runs the same program `f` on every row, and a row's program reads no
other row: it is `f` of the whole tile. A row view is the tile tagged with its row; ops
on it run on the tile (their results tagged too); identical ops built again for the
next row are the ops already built (`reuse`), so the kernel holds `f` once. The scratch
tile `s` is then `f(h)`, once each of its rows has been written by the same program.
PyPTO compiles each row's ops on its own; here the tile's program runs once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor, Trace
from pto.pypto.types import DataType

# Ops that move rows or columns, or read a row's neighbours: a row's program does not
# stay the tile's under them.
_NOT_ROWWISE = ("matmul", "reshape", "view", "slice", "transpose", "concat")
ROWWISE = "a row's program takes element-wise ops and sums along the row only"


def is_row(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "row"


def view(tr: Trace, tile: Tensor, r: int) -> Tensor:
    """`pypto.view(tile, [1, K], [r, 0])` of a tile of the body: row `r`."""
    rows = tile.shape[0]
    if not 0 <= r < rows:
        refuse(f"pypto.view of row {r} of a tile of {rows} rows")
    tr.rows_open = True
    return _tagged(tile, r, rows)


def _tagged(whole: Tensor, r: int, rows: int) -> Tensor:
    t = Tensor.traced([1, *whole.shape[1:]], whole.known_dtype, whole._val, whole._tok, ("row", r, rows, whole))
    t._body = whole._body
    return t


def each(kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, result: Callable) -> Tensor:
    """`kind` of a row: the op on the whole tile, its result the row of it."""
    tagged = {(i._lazy[1], i._lazy[2]) for i in inputs if is_row(i)}  # type: ignore[index]
    if len(tagged) > 1:
        refuse(f"pypto.{kind} of different rows of tiles ({sorted(r for r, _ in tagged)}): each row is its own")
    (r, rows), *_ = tagged
    if kind in _NOT_ROWWISE:
        refuse(f"pypto.{kind} of a row of a tile (a view [1, K] at [r, 0]): {ROWWISE}")
    if any(not is_row(i) and i._tok for i in inputs) or shape[0] != 1:
        refuse(f"pypto.{kind} of a row of a tile and a tile of rows: take the same row of each")
    wholes = [i._lazy[3] if is_row(i) else i for i in inputs]  # type: ignore[index]
    return _tagged(result(kind, wholes, [rows, *shape[1:]], dtype), r, rows)


def reuse(tr: Trace, built: list, val: object, weight_only: bool) -> object:
    """What a build makes: the value of the same ops built before in this body if rows
    are being taken one at a time (the next row's copy of the row program, or of a
    weight-only op in it: the new ops are erased), else `val`. Weight-only builds are
    remembered always, as a row loop's first ones come before its first row view."""
    if not built or not (tr.rows_open or weight_only):
        return val
    key = (tr.iteration, *map(_signature, built))
    if tr.rows_open and key in tr.row_ops:
        for op in reversed(built):
            op.detach()
            op.erase()
        return tr.row_ops[key]
    tr.row_ops.setdefault(key, val)
    return val


def _signature(op) -> tuple:
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted(op.properties.items())),
        tuple(sorted(op.attributes.items())),
        tuple(r.type for r in op.results),
    )


def is_weight_row(src: Tensor, offsets: list, buf: Tensor) -> bool:
    """`assemble(w, [r, 0], buf)` of a `[1, W]` weight row (no token axis) into row r of a
    `[rows, W]` scratch tile: GLM-4.5's MoE gate broadcasts its bias so, row by row."""
    return (
        not src._tok
        and src.shape == [1, *buf.shape[1:]]
        and len(offsets) == 2
        and isinstance(offsets[0], int)
        and offsets[1] == 0
    )


def put(src: Tensor, offsets: list, buf: Tensor) -> None:
    """`buf[r:r + 1, 0:] = row`: row `r` of the scratch tile, a row of a tile or a weight row."""
    if is_weight_row(src, offsets, buf):
        buf._lazy[1][("row", offsets[0])] = src  # type: ignore[index]
        return
    r, rows, whole = src._lazy[1:]  # type: ignore[index]
    if list(offsets) != [r, 0] or buf.shape != [rows, *whole.shape[1:]]:
        refuse(
            f"a row {r} of a tile of {rows} rows is written at {list(offsets)} of a {buf.shape} scratch tile: "
            "each row at its own place, [r, 0], of a scratch tile of the tile's shape"
        )
    buf._lazy[1][("row", r)] = whole  # type: ignore[index]


def read(buf: Tensor) -> Tensor | None:
    """The tile whose rows, each written by the same program, fill the scratch tile (a
    weight row written in each: that row, broadcast where it is used); None if no row
    was written one at a time."""
    blocks: dict = buf._lazy[1]  # type: ignore[index]
    rows = [k for k in blocks if isinstance(k, tuple)]
    if not rows:
        return None
    if len(rows) != len(blocks) or sorted(r for _, r in rows) != list(range(buf.shape[0])):
        written = sorted(r for _, r in rows)
        refuse(f"a scratch tile {buf.shape} is read with rows {written} written one at a time: write each row once")
    wholes = list(blocks.values())
    if any(w._val is not wholes[0]._val for w in wholes):
        refuse(
            f"the rows of a scratch tile {buf.shape} are written by different programs: a row loop here runs "
            "the same ops on every row"
        )
    return wholes[0]
