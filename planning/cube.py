"""The cube side's shared rules: fractal padding, the M tile of a body, and the row
tiles one unit of a cube task covers (`l1_reuse`)."""

from __future__ import annotations

from pto.dialects.common import CubeTileAttr


def pad(x: int, fractal: int) -> int:
    """`x` rounded up to whole cube fractals (the target's `cube.fractal`)."""
    return -(-x // fractal) * fractal


def body_m(m: int, rows: int, fractal: int) -> int:
    """An M tile of `m` rows on a body of `rows` tokens: at most the body, fractal-padded
    (PyPTO specialises each body for its factor)."""
    return min(m, pad(rows, fractal))


def clip_to_body(t: CubeTileAttr, rows: int, fractal: int) -> CubeTileAttr:
    """The cube tiles of a body of `rows` tokens: an M tile larger than the body shrinks
    to it (done once, by tile-assign-shapes; tile-to-npu reads the result)."""
    (m0, m1), ax = t.axes["m"], t.axes
    m = body_m(m1, rows, fractal)
    if m1 <= m:
        return t
    m0 = min(m0, m)
    return CubeTileAttr([m0 if m % m0 == 0 else m, m], ax["k"], ax["n"], split_k=t.is_split_k)


def group_size(row_tiles: int, reuse: int) -> int:
    """The row tiles of one unit: the most (a divisor of the body's `row_tiles`, at most
    `reuse`, PyPTO's `cube_l1_reuse_setting`) that share one load of a weight tile."""
    return next(g for g in range(min(reuse, row_tiles), 0, -1) if row_tiles % g == 0)
