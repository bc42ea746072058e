"""Head-major outputs: `assemble(transpose(y, 0, 1), [0, i, 0], out)` of a `[t, H, D]`
token tensor into an `[H, T, D]` output (the BNSD layout attention reads: corpus21's
k189, a key projection with a per-head norm), or head by head, `out[h, i:i + t, :] =
y[:, h, :]` (corpus23's k203).

A token's values stay in its row here, so the transposed value is not a tile: it is
kept aside (a `("heads_first", y)` lazy tensor) and read only by that `assemble`. The
output is then H outputs `[T, D]`, one per head, `out[h]`: the kernel's results are the
rows of `y`'s grid (each head's `[t, D]` tile), and the call writes each into its head
of the caller's array. This is the data movement the device does: a head's rows
`out[h, i:i + t, :]` are one contiguous run of `t * D` elements, stored as a `[t, D]`
tile's are, H stores per token tile instead of one."""

from __future__ import annotations

from pto.pypto import ops, perm
from pto.pypto.errors import refuse
from pto.pypto.loops import _check_rows
from pto.pypto.sym import Sym
from pto.pypto.tensor import Tensor, Trace, _constant, current


def is_heads_first(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "heads_first"


def transpose(x: Tensor) -> Tensor:
    """`transpose(x, 0, 1)` of a rank-3 token tensor `[t, H, D]`."""
    if len(x.shape) != 3:
        refuse(
            f"pypto.transpose of dims 0, 1 of a rank-{len(x.shape)} token tensor: the tokens move only to dim 1 of "
            "a [t, H, D] tensor assembled into an [H, T, D] output"
        )
    t, h, d = x.shape
    y = Tensor.traced([h, t, d], x.known_dtype, None, False, ("heads_first", x))
    y._body = x._body
    return y


def put(tr: Trace, src: Tensor, offsets: list, dst: object) -> None:
    """`assemble(src, [0, i, 0], dst)`: each head's tile is the result for `dst[h]`."""
    x = src._lazy[1]  # type: ignore[index]
    if not isinstance(dst, Tensor) or dst._param is None:
        refuse("pypto.assemble of a transposed token tensor writes an [H, T, D] output parameter")
    shape = dst.shape
    if len(shape) != 3 or not isinstance(shape[1], Sym) or isinstance(shape[0], Sym) or isinstance(shape[2], Sym):
        refuse(
            f"pypto.assemble of a {src.shape} tensor whose tokens are dim 1 into {shape}: the output's DYNAMIC axis "
            "must be dim 1 too ([H, T, D])"
        )
    if [shape[0], shape[2]] != [src.shape[0], src.shape[2]] or len(offsets) != 3 or offsets[0] != 0 or offsets[2] != 0:
        refuse(f"pypto.assemble of {src.shape} at {offsets} into {shape}: whole heads at [0, row, 0] only")
    if src._dtype is not dst._dtype:
        refuse(f"pypto.assemble of a {src.known_dtype.name} tile into a {dst.known_dtype.name} output: cast it first")
    _check_rows(tr, offsets[1], None, src.shape[1], "pypto.assemble", shape[1])
    if dst._param in tr.outputs and tr.iteration == 0:
        refuse("each output parameter is assembled once per loop body")
    tiles, _ = perm.rows_of(x) if perm.is_perm(x) else ([x], ())
    if len(tiles) != shape[0]:
        refuse(f"pypto.assemble of {src.shape}: its heads are not whole rows of the tensor it transposes")
    tr.assembled[tr.iteration] += [(dst._param, t) for t in tiles]
    if tr.iteration == 0:
        tr.outputs[dst._param] = tiles


def put_head(dst: Tensor, key: tuple, value: object) -> None:
    """`dst[h, i:i + p, :] = y` of a `[p, D]` tile: the result for `dst[h]`."""
    tr = current("out[h, i:i + p, :] = y")
    what = "out[h, i:i + p, :] = y"
    h, rows, cols = key
    heads, d = dst.shape[0], dst.shape[2]
    if dst._param is None or not isinstance(heads, int) or not isinstance(d, int):
        refuse(f"{what} writes a head of an [H, T, D] output parameter, got a {dst.shape} tensor")
    if not -heads <= h < heads:
        refuse(f"{what}: head {h} of {heads}")
    if not (isinstance(rows, slice) and rows.step in (None, 1) and rows.start is not None):
        refuse(f"{what} takes the rows as i:i + p, got {rows!r}")
    if cols != slice(None) and (cols.start, cols.stop) not in ((0, d), (None, d), (0, None)):
        refuse(f"{what} writes whole heads (all {d} columns), got {cols!r}")
    y = ops._tensor(value, f"{what}'s tile")
    if len(y.shape) != 2 or y.shape[1] != d:
        refuse(f"{what} writes a [p, {d}] tile, got {y.shape}")
    if rows.stop is not None and _constant(rows.stop - rows.start) != y.shape[0]:
        refuse(f"{what}: rows {rows.start}:{rows.stop} for a tile of {y.shape[0]} rows")
    if y._dtype is not dst._dtype:
        refuse(f"{what} of a {y.known_dtype.name} tile into a {dst.known_dtype.name} output: cast it first")
    _check_rows(tr, rows.start, None, y.shape[0], what, dst.shape[1])
    if tr.iteration == 0:
        tiles = tr.outputs.setdefault(dst._param, [None] * heads)  # type: ignore[list-item]
        if not isinstance(tiles, list) or tiles[h % heads] is not None:
            refuse(f"head {h % heads} of output '{dst.name}' is written twice in the loop body")
        tiles[h % heads] = y
    tr.assembled[tr.iteration].append((dst._param, y))


def check_done(tr: Trace, at: tuple[str, int]) -> None:
    """Every head of an output written head by head has been written."""
    for i, tiles in tr.outputs.items():
        if isinstance(tiles, list) and (missing := [h for h, t in enumerate(tiles) if t is None]):
            refuse(f"heads {missing} of output '{tr.names[i]}' are not written: write each, out[h, i:i + p, :] = y", at)
