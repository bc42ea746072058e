"""A per-head view of a token tile: `reshape(t, [rows * H, D])` of a `[rows, H * D]` tile.

The rows of a token tile are its tokens here, so the reshape cannot be a tile of its
own. A post-processing stage that normalises each head (RMSNorm over D with a [D]
gamma) and reshapes back is the same computation on the H column blocks of the tile:
the view keeps the blocks (`pto.slice`s), every op on it runs once per block, and the
reshape back to `[rows, H * D]` is their `pto.concat`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from pto.frontend import builder as b
from pto.pypto import perm
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor
from pto.pypto.types import DataType

# Ops that work row by row on a block, so that running them per block is the same
# computation as on the reshaped tensor.
ROW_WISE = {
    "add",
    "sub",
    "mul",
    "div",
    "sqrt",
    "rsqrt",
    "abs",
    "exp",
    "log",
    "reciprocal",
    "rdivs",
    "cast",
    "rms_norm",
    "sum",
    "amax",
    "amin",
    "max",
    "min",
    "select",
}


def is_heads(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "heads"


def split(
    x: Tensor, shape: list, column_view: Callable[[Tensor, int, int], Tensor], materialize: Callable[[Tensor], Tensor]
) -> Tensor | None:
    """The per-head view of `x` if `shape` is `[rows * H, D]` of its `[rows, H * D]`."""
    if not (x._tok and len(x.shape) == 2 and len(shape) == 2 and isinstance(x.shape[0], int)):
        return None
    rows, cols = x.shape
    d = shape[1]
    if not (isinstance(d, int) and 0 < d < cols and cols % d == 0 and shape[0] == rows * (cols // d)):
        return None
    with _block_tile(cols // d, d):
        blocks = [materialize(column_view(x, h * d, (h + 1) * d)) for h in range(cols // d)]
    return Tensor.traced(list(shape), x.known_dtype, None, True, ("heads", blocks))


def join(x: Tensor, shape: list, concat: Callable[[list[Tensor], int], Tensor]) -> Tensor:
    """The reshape back: `[rows, H * width]` is the blocks side by side."""
    blocks: list[Tensor] = x._lazy[1]  # type: ignore[index]
    rows, width = blocks[0].shape[0], blocks[0].shape[-1]
    if list(shape) == [rows, len(blocks), width]:  # [rows, H, D]: the blocks are its grid's rows
        return perm.make(blocks, np.arange(len(blocks) * width).reshape(len(blocks), width))
    if list(shape) != [rows, width * len(blocks)]:
        refuse(
            f"a per-head view [{x.shape[0]}, {x.shape[1]}] reshapes back to [{rows}, {width * len(blocks)}] "
            f"or [{rows}, {len(blocks)}, {width}], "
            f"got {list(shape)}"
        )
    return blocks[0] if len(blocks) == 1 else concat(blocks, -1)


def per_head(kind: str, inputs: Sequence[Tensor], shape: list, dtype: DataType, one) -> Tensor:
    """`kind` on a per-head view: once per block; `one(kind, ins, shape, dtype)` traces one."""
    if kind not in ROW_WISE:
        refuse(f"pypto.{kind} of a per-head view ([rows * H, D]): reshape it back to [rows, H * D] first")
    n = len(next(i for i in inputs if is_heads(i))._lazy[1])  # type: ignore[index]
    for i in inputs:
        if not is_heads(i) and i._tok:
            refuse(f"pypto.{kind} of a per-head view and a token tile: only per-head values and weights mix")
    blocks = []
    with _block_tile(n, shape[-1]):
        for h in range(n):
            ins = [i._lazy[1][h] if is_heads(i) else i for i in inputs]  # type: ignore[index]
            blocks.append(one(kind, ins, [shape[0] // n, *shape[1:]], dtype))
    return Tensor.traced(list(shape), dtype, None, True, ("heads", blocks))


@contextlib.contextmanager
def _block_tile(n: int, d: int) -> Iterator[None]:
    """The vector tile in force on the view `[rows * n, d]`, read on the token tile whose
    `n` blocks the ops run on: its rows are contiguous runs of `d` elements of the token
    rows, so `set_vec_tile_shapes(32, 128)` with 8 heads of 128 is 4 whole tokens
    (`[4, 1024]`), and `(4, 128)` is half of one (`[1, 512]`)."""
    pinned = b._pinned[-1]
    tile = pinned.vec_tile
    if tile is not None and len(tile) == 2:
        r, c = tile
        pinned = dataclasses.replace(pinned, vec_tile=(max(1, r // n), min(r, n) * d if c >= d else c))
    b._pinned.append(pinned)
    try:
        yield
    finally:
        b._pinned.pop()
