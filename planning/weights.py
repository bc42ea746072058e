"""The tile of a weight stage (weight-only work a matmul reads, done once per launch):
each of its vector tasks computes one `[r, c]` tile of the result, every value of the
stage in a UB buffer of its own (the task's ops run once: nothing to reuse), so that
the plan's bytes are the task's."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from pto.dialects import tile
from pto.dialects.common import ELEM_BYTES, elem_name
from pto.dialects.pto import tensor_type
from pto.planning.ub import Arena


def values(st: tile.VecStageOp) -> list[SSAValue]:
    """The stage's values in order of allocation: what it reads, then what its ops make."""
    seen: list[SSAValue] = []
    for op in st.body.block.ops:
        for v in (*op.operands, *op.results):
            if isinstance(v.type, TensorType) and v not in seen and not isinstance(op, tile.YieldOp):
                seen.append(v)
    return seen


def tiled(shape: tuple[int, ...], whole: tuple[int, int], tile_rc: tuple[int, int]) -> list[int]:
    """A value's share of one task's tile: the tile where it spans the result's axis, its
    one row or column where it is broadcast along it (a per-channel scale `[1, N]`; a
    rank-1 `[N]`, aligned with the last axis: a gamma)."""
    n = len(shape)
    return [t if d == w else d for d, w, t in zip(shape, whole[-n:], tile_rc[-n:], strict=True)]


def need(st: tile.VecStageOp, whole: tuple[int, int], tile_rc: tuple[int, int], block: int) -> int:
    """UB bytes of one task of the stage with the tile `tile_rc`, allocated in the order
    `lowering.tile_to_npu.weights.emit_weight_stage` allocates: what the stage reads, then
    each op's result (and a reciprocal's one-element constant, freed when it ends)."""
    arena = Arena(block)

    def place(v: SSAValue) -> None:
        t = v.type
        assert isinstance(t, TensorType)
        shape = tiled(tuple(t.get_shape()), whole, tile_rc)
        arena.alloc(math.prod(shape) * ELEM_BYTES[elem_name(t.element_type)])

    ops = [o for o in st.body.block.ops if not isinstance(o, tile.YieldOp)]
    for v in dict.fromkeys(u for o in ops for u in o.operands if u.owner not in ops):
        place(v)
    for o in ops:
        for v in o.results:
            place(v)
        if isinstance(o, tile.ReciprocalOp | tile.RdivsOp):  # (vector_ops.emit_op's constant)
            arena.free(*arena.alloc(ELEM_BYTES[elem_name(tensor_type(o.result).element_type)]))
    return arena.offset


def _divisors(n: int, at_most: int, step: int = 1) -> list[int]:
    """Divisors of `n` up to `at_most` that are multiples of `step` (or `n` itself), largest first."""
    return [d for d in range(min(n, at_most), 0, -1) if n % d == 0 and (d % step == 0 or d == n)]


def choose(
    st: tile.VecStageOp, whole: tuple[int, int], wanted: tuple[int, int], cap: int, block: int
) -> tuple[int, int] | None:
    """The largest tile within `wanted` that divides the result `whole` (whole blocks of
    every value along a row) and fits `cap`: rows first, then columns, are cut; None if
    not even one block of one row fits."""
    narrowest = min(ELEM_BYTES[elem_name(v.type.element_type)] for v in values(st) if isinstance(v.type, TensorType))
    for c in _divisors(whole[1], wanted[1], max(1, block // narrowest)):
        for r in _divisors(whole[0], wanted[0]):
            if need(st, whole, (r, c), block) <= cap:
                return r, c
    return None
