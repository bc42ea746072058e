"""Head-major outputs: `assemble(transpose(y, 0, 1), [0, i, 0], out)` of a `[t, H, D]`
token tensor into an `[H, T, D]` output (the BNSD layout attention reads: corpus21's
k189, a key projection with a per-head norm).

A token's values stay in its row here, so the transposed value is not a tile: it is
kept aside (a `("heads_first", y)` lazy tensor) and read only by that `assemble`. The
output is then H outputs `[T, D]`, one per head, `out[h]`: the kernel's results are the
rows of `y`'s grid (each head's `[t, D]` tile), and the call writes each into its head
of the caller's array. This is the data movement the device does: a head's rows
`out[h, i:i + t, :]` are one contiguous run of `t * D` elements, stored as a `[t, D]`
tile's are, H stores per token tile instead of one."""

from __future__ import annotations

from pto.pypto import perm
from pto.pypto.errors import refuse
from pto.pypto.sym import Sym
from pto.pypto.tensor import Tensor, Trace


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


def put(tr: Trace, src: Tensor, offsets: list, dst: object, check_rows) -> None:
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
    check_rows(tr, offsets[1], None, src.shape[1], "pypto.assemble", shape[1])
    if dst._param in tr.outputs and tr.iteration == 0:
        refuse("each output parameter is assembled once per loop body")
    tiles, _ = perm.rows_of(x) if perm.is_perm(x) else ([x], ())
    if len(tiles) != shape[0]:
        refuse(f"pypto.assemble of {src.shape}: its heads are not whole rows of the tensor it transposes")
    tr.assembled[tr.iteration] += [(dst._param, t) for t in tiles]
    if tr.iteration == 0:
        tr.outputs[dst._param] = tiles
