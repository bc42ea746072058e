"""Scratch tensors: `buf = pypto.tensor([rows, W], dtype)` filled by `assemble`s of
column blocks (`assemble(a, [0, 0], buf)`, `assemble(b, [0, wa], buf)`) and then read;
of rank 3 or more, `[rows, H, W]`, blocks of the last dim (`assemble(q_rope, [0, 0,
D - r], q_assemble)`: lightning_indexer_prolog_quant_v4's heads, their RoPE columns).

A scratch tile holds no data of its own here: once read, its blocks, which must cover
its columns exactly once, are one value, their `pto.concat` (the one block itself if
there is one). Rows written one at a time (`buf[r:r + 1, 0:] = row`, GLM-4.5's) are
pypto/row_loops.py's. Other layouts (gaps, overlaps, rows and blocks mixed) are refused.
"""

from __future__ import annotations

from collections.abc import Callable

from pto.pypto import row_loops
from pto.pypto.errors import refuse
from pto.pypto.tensor import Tensor, current
from pto.pypto.types import elem


def is_scratch(x: object) -> bool:
    return isinstance(x, Tensor) and x._lazy is not None and x._lazy[0] == "scratch"


def make(shape: object, dtype: object) -> Tensor:
    if not isinstance(shape, list | tuple) or len(shape) < 2 or not all(isinstance(d, int) and d > 0 for d in shape):
        refuse(f"pypto.tensor (a scratch tile) takes a [rows, ..., columns] shape of positive integers, got {shape!r}")
    elem(dtype, "pypto.tensor's dtype")
    return Tensor.traced(list(shape), dtype, None, True, ("scratch", {}))  # type: ignore[arg-type]


def put(src: Tensor, offsets: list, buf: Tensor) -> None:
    """`assemble(src, [0, ..., c], buf)`: a block of the scratch tile's last dim."""
    if src._dtype is not buf._dtype:
        refuse(
            f"pypto.assemble of a {src.known_dtype.name} tile into a {buf.known_dtype.name} scratch tile: cast it first"
        )
    if len(buf.shape) == 2 and (row_loops.is_row(src) or row_loops.is_weight_row(src, offsets, buf)):
        return row_loops.put(src, offsets, buf)
    blocks: dict[int, Tensor] = buf._lazy[1]  # type: ignore[index]
    *lead, width = buf.shape
    if len(src.shape) != len(buf.shape) or not isinstance(src.shape[-1], int):
        refuse(f"pypto.assemble of {src.shape} at {offsets} into a scratch tile {buf.shape}: it does not fit")
    if src.shape[:-1] != lead:
        dims = ", ".join(map(str, lead))
        refuse(
            f"pypto.assemble of {src.shape} into a scratch tile {buf.shape}: its blocks take all of [{dims}] "
            "and columns of the last dim"
        )
    if len(offsets) != len(buf.shape) or any(o != 0 for o in offsets[:-1]) or not isinstance(offsets[-1], int):
        at = ", ".join(["0"] * len(lead) + ["column"])
        refuse(f"pypto.assemble into a scratch tile at {offsets}: whole rows at [{at}] only")
    if not 0 <= offsets[-1] <= width - src.shape[-1]:
        refuse(f"pypto.assemble of {src.shape} at {offsets} into a scratch tile {buf.shape}: it does not fit")
    blocks[offsets[-1]] = src


def read(buf: Tensor, concat: Callable[[list[Tensor], int], Tensor]) -> Tensor:
    if (whole := row_loops.read(buf)) is not None:
        current("a scratch tile's read").rows_open = False
        return whole
    blocks: dict[int, Tensor] = buf._lazy[1]  # type: ignore[index]
    at = 0
    for c in sorted(blocks):
        if c != at:
            refuse(f"a scratch tile {buf.shape} is read with columns [{at}, {c}) not assembled (or assembled twice)")
        at += blocks[c].shape[-1]
    if at != buf.shape[-1]:
        refuse(f"a scratch tile {buf.shape} is read with columns [{at}, {buf.shape[-1]}) not assembled")
    parts = [blocks[c] for c in sorted(blocks)]
    return parts[0] if len(parts) == 1 else concat(parts, -1)
