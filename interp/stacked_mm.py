"""A group's stacked product without its zero rows.

A task's mmad multiplies its whole L0A tile, but a tile of a token tail (unroll [1]:
one token per body) has one valid row and zeros below it (a load zero-fills the rows
past the valid ones), so numpy's batched product (`nx.matmul`, one BLAS call per
task's tile) computed mostly zero rows: 15 of 16 of sk03_standard's products at
unroll [1], 0.16 s of its 0.2 s stacked pass at t=128.

`product` instead gathers the rows with a nonzero element of the tiles that share a
right operand and multiplies them in calls of the tile's own shape (M, K) @ (K, N), M
of them at a time; every other row of the product is +0. That is the per-task product
bit for bit if, for that shape, BLAS gives a row the same bits wherever the row sits in
the call and +0 for a row of zeros (a right operand with an infinity or a NaN gives NaN
there: such a product is not packed). OpenBLAS picks kernels by shape (a 13x300x70
product's tail rows round otherwise), so both are checked, not assumed: once per shape,
on random tiles with zero and negative-zero rows, every row moved to another place
(`rows_free`). A shape that fails is multiplied as before.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from pto.interp import numerics as nx
from pto.interp.stacked_gm import AXES

# Packed when the packed calls are at most this share of the batched product's (one per
# task's tile): gathering rows and scattering the results back costs copies of the rows.
PACK_SHARE = 0.5
# `rows_free`'s probe: this many tiles of the shape, their rows in a random order, with
# about this share of zero rows (half of them negative zeros).
PROBE_TILES = 64
PROBE_ZERO_ROWS = 0.25
PROBE_SEED = 34

# The product of the probe and of the packed calls (a test replaces it).
_product = np.matmul


@cache
def rows_free(m: int, k: int, n: int) -> bool:
    """Whether BLAS's f32 (m, k) @ (k, n) product gives each row the same bits wherever
    it sits in the call, and +0 for a row of (signed) zeros: the per-task product (one
    2-D call per tile) against the same rows shuffled across calls of that shape."""
    rng = np.random.default_rng(PROBE_SEED)
    a = rng.standard_normal((PROBE_TILES, m, k)).astype(np.float32)
    zero = rng.random((PROBE_TILES, m)) < PROBE_ZERO_ROWS
    a[zero] = 0.0
    a[zero & (rng.random((PROBE_TILES, m)) < 0.5)] = -0.0
    b = rng.standard_normal((k, n)).astype(np.float32)
    alone = np.stack([_product(a[i], b) for i in range(PROBE_TILES)]).reshape(-1, n)
    order = rng.permutation(PROBE_TILES * m)
    moved = np.empty_like(alone)
    moved[order] = _product(a.reshape(-1, k)[order].reshape(PROBE_TILES, m, k), b).reshape(-1, n)
    bits = alone.view(np.uint32)
    return bool(np.array_equal(moved.view(np.uint32), bits) and not bits[zero.reshape(-1)].any())


def product(
    x: np.ndarray, y: np.ndarray, live_rows: int | None = None, rows_only: bool = False
) -> tuple[np.ndarray, int]:
    """`nx.matmul(x, y)` of stacked tiles x (bx, p1x, p2x, M, K) and y (by, p1y, p2y,
    K, N), each tile's product alone, with zero rows of x not multiplied where that is
    exact (`live_rows`: x's rows from this one on are known to be zeros); and the row
    from which the product's rows are known to be +0 (M if none are). `rows_only`: the
    rows past those may be left out of the array (its rows are then fewer than M)."""
    two = _one_task_axis(x, y)
    packed = None if two is None else _packed(*two, live_rows, rows_only)
    if packed is not None:
        stack = [max(a, b) for a, b in zip(x.shape[:AXES], y.shape[:AXES], strict=True)]
        return packed.reshape(*stack, *packed.shape[2:]), x.shape[-2] if live_rows is None else live_rows
    merged = _merged(x, y)
    if merged is not None:
        return merged, x.shape[-2]
    # (an operand may be a transposed view, `Stack.dma`: BLAS is given the per-task
    # engine's layout, a compact tile, whose product's bits it is)
    return nx.matmul(np.ascontiguousarray(x), np.ascontiguousarray(y)), x.shape[-2]


def adds_into(acc: np.ndarray | None, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether the accumulating product of stacked tiles x and y may be summed into
    `acc`, the accumulator's own array (None: it has none it alone holds): one f32 tile
    per task of the product's stack, writable. A K loop's steps then make no array the
    accumulator's size each (a token tail's tiles, mostly zero rows: 8 MB a step for
    sk03_standard at unroll [1], t=128)."""
    stack = tuple(max(a, b) for a, b in zip(x.shape[:AXES], y.shape[:AXES], strict=True))
    return (
        acc is not None
        and x.dtype != np.int8
        and y.dtype != np.int8
        and acc.dtype == np.float32
        and acc.shape[:AXES] == stack
        and acc.flags.writeable
        and acc.flags.c_contiguous
    )


def add_into(acc: np.ndarray, prod: np.ndarray, zero: int, live: int) -> int:
    """The per-task engine's `np.add(c, prod, out=c)` into `acc` (`adds_into`), for a
    product from `product(..., rows_only=True)` whose rows from `zero` on are +0 and an
    accumulator whose rows from `live` on are: the rows +0 in both are left as they are,
    those only the product's are +0 in gets +0 added (-0 + 0 is +0). Returns the row
    from which the sum's rows are +0."""
    zero = max(zero, live)
    have = min(prod.shape[AXES], zero)
    rows = (slice(None),) * AXES + (slice(0, have),)
    np.add(acc[rows], prod[rows], out=acc[rows])
    if zero > have:
        rows = (slice(None),) * AXES + (slice(have, zero),)
        np.add(acc[rows], np.float32(0.0), out=acc[rows])
    return zero


@cache
def merges_exact(m: int, k: int, n: int, r: int, c: int) -> bool:
    """Whether BLAS's f32 (r*m, k) @ (k, c*n) product gives each (m, n) block the bits
    of that block's own (m, k) @ (k, n) product: the per-task products against one call
    of the merged shape, on random tiles with zero and negative-zero rows (never the
    first row of a tile: a tile of one or two rows could be all zeros, whose products
    agree whatever BLAS does)."""
    rng = np.random.default_rng(PROBE_SEED)
    a = rng.standard_normal((r * m, k)).astype(np.float32)
    zero = rng.random(r * m) < PROBE_ZERO_ROWS
    zero[::m] = False
    a[zero] = 0.0
    a[zero & (rng.random(r * m) < 0.5)] = -0.0
    b = rng.standard_normal((k, c * n)).astype(np.float32)
    merged = _product(a, b)
    for i in range(r):
        for j in range(c):
            tile = _product(
                np.ascontiguousarray(a[i * m : (i + 1) * m]), np.ascontiguousarray(b[:, j * n : (j + 1) * n])
            )
            if not np.array_equal(
                tile.view(np.uint32), merged[i * m : (i + 1) * m, j * n : (j + 1) * n].view(np.uint32)
            ):
                return False
    return True


def _f32(a: np.ndarray) -> np.ndarray:
    """`nx.f32` of `a` as a C-contiguous array in its logical order (one pass for a
    transposed view, where `nx.f32` keeps the memory order); an int8's as float32."""
    if a.dtype == nx.DTYPES["bf16"]:
        wide = np.empty(a.shape, np.uint32)
        wide[...] = a.view(np.uint16)
        wide <<= 16
        return wide.view(np.float32)
    return np.ascontiguousarray(a, np.float32)


def _one_task_axis(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """x and y with their two task axes as one (`_packed`'s stacks, (b, p, ...)): an axis
    of one in both dropped, or both axes merged where each operand has both or neither;
    None if neither can be."""
    if x.ndim != AXES + 2 or y.ndim != AXES + 2:
        return None
    for ax in (2, 1):
        if x.shape[ax] == 1 and y.shape[ax] == 1:
            return x.squeeze(ax), y.squeeze(ax)
    tasks = (max(x.shape[1], y.shape[1]), max(x.shape[2], y.shape[2]))
    if all(a.shape[1:3] in (tasks, (1, 1)) for a in (x, y)):
        return tuple(a.reshape(a.shape[0], a.shape[1] * a.shape[2], *a.shape[3:]) for a in (x, y))  # type: ignore[return-value]
    return None


def _merged(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """`nx.matmul(x, y)` of stacked tiles in fewer, larger calls: along a stack axis on
    which `y` is alike, x's tiles are stacked as rows of one call; along one on which x
    is alike, y's tiles as columns (sk03_standard at t=512: one call for a body's 16
    weight tiles, not 16); along one on which both vary, a call each. Only for a shape
    whose blocks `merges_exact` (OpenBLAS's small-matrix kernel, used by shape, rounds
    otherwise) and a product with no infinity or NaN (every input element takes part in
    an output element of its row or column, so a finite product had finite operands;
    a non-finite one is multiplied as before). An int8 product whose K `nx.matmul`
    multiplies in float32 is exact in any call: merged with no probe."""
    if x.ndim != AXES + 2 or y.ndim != AXES + 2:
        return None
    (m, k), n = x.shape[AXES:], y.shape[-1]
    ints = x.dtype == np.int8 or y.dtype == np.int8
    if ints and not (x.dtype == y.dtype and k <= nx.F32_EXACT_INT8_K):
        return None
    kinds = [
        "n" if a > 1 and b > 1 else "r" if a > 1 else "c" if b > 1 else "1"
        for a, b in zip(x.shape[:AXES], y.shape[:AXES], strict=True)
    ]
    by_kind = {t: [d for d in range(AXES) if kinds[d] == t] for t in "nrc1"}
    size = {t: int(np.prod([max(x.shape[d], y.shape[d]) for d in by_kind[t]])) for t in "nrc"}
    if size["r"] * size["c"] == 1 or not (ints or merges_exact(m, k, n, size["r"], size["c"])):
        return None
    mk, kn = (AXES, AXES + 1), (AXES, AXES + 1)
    rest = by_kind["c"] + by_kind["1"]  # (x's axes of one tile)
    xs = _f32(x.transpose(*by_kind["n"], *by_kind["r"], *rest, *mk)).reshape(size["n"], size["r"] * m, k)
    rest = by_kind["r"] + by_kind["1"]
    if ints and y.strides[-2] < y.strides[-1]:
        # (a transposed tile, `Stack.dma`: cast in its memory's order and given to BLAS
        # transposed, which an exact product allows; a cast across it was slower than the
        # transposing copy it saves)
        ys = _f32(y.transpose(*by_kind["n"], *rest, *by_kind["c"], kn[1], kn[0]))
        ys = ys.reshape(size["n"], size["c"] * n, k).swapaxes(-1, -2)
    else:
        ys = _f32(y.transpose(*by_kind["n"], *rest, kn[0], *by_kind["c"], kn[1])).reshape(size["n"], k, size["c"] * n)
    out = _product(xs, ys)
    if not ints and not np.isfinite(out).all():
        return None
    # (n axes, r axes, M, c axes, N) -> (b, p1, p2, M, N)
    dims = [max(x.shape[d], y.shape[d]) for d in range(AXES)]
    order: list = [*by_kind["n"], *by_kind["r"], "m", *by_kind["c"], "n"]
    out = out.reshape([m if a == "m" else n if a == "n" else dims[a] for a in order])
    perm = [order.index(a) for a in (*range(AXES), "m", "n") if a in order]
    full = [*dims, m, n]
    out = out.transpose(perm)
    if not ints:
        return np.ascontiguousarray(out).reshape(full)
    # (an int8 product's exact integers within int32, `nx.matmul`'s: cast as it is laid out)
    laid = np.empty(out.shape, np.int32)
    np.copyto(laid, out, casting="unsafe")
    return laid.reshape(full)


def _packed(x: np.ndarray, y: np.ndarray, live_rows: int | None = None, rows_only: bool = False) -> np.ndarray | None:
    if x.dtype == np.int8 or y.dtype == np.int8 or x.ndim != 4 or y.ndim != 4:
        return None
    (bx, px, m, k), (by, py, _, n) = x.shape, y.shape
    b, p = max(bx, by), max(px, py)
    z = m if live_rows is None else live_rows
    xz = x[:, :, :z]
    live = np.zeros((bx, px, m), bool)  # rows with a nonzero bit pattern (-0 and NaN too)
    live[:, :, :z] = xz.view(f"u{x.itemsize}").any(axis=-1)  # (not widened: most products are not packed)
    rows = int(live.sum()) * (b // bx) * (p // px)  # (x broadcast over the stack)
    if by * py + -(-rows // m) > PACK_SHARE * b * p:
        return None
    yf = nx.f32(y)
    if not np.isfinite(yf).all() or not rows_free(m, k, n):
        return None
    out = np.zeros((b, p, z if rows_only else m, n), np.float32)
    if by == 1 and px == 1:  # (one tile per body for every task's operand: gathered once)
        bodies, rows_at = np.nonzero(live[:, 0, :z])
        got = nx.f32(xz[bodies, 0, rows_at])
        calls = np.zeros((-(-len(got) // m) * m, k), np.float32)
        calls[: len(got)] = got
        res = np.stack([_product(calls.reshape(-1, m, k), np.ascontiguousarray(t)) for t in yf[0]])
        out[bodies, :, rows_at] = res.reshape(py, -1, n)[:, : len(got)].swapaxes(0, 1)  # (rows, tasks, N)
        return out
    xs, ls = np.broadcast_to(xz, (b, p, z, k)), np.broadcast_to(live[:, :, :z], (b, p, z))
    for i in range(by):
        for j in range(py):
            at = (slice(None) if by == 1 else slice(i, i + 1), slice(None) if py == 1 else slice(j, j + 1))
            mask = ls[at]
            got = nx.f32(xs[at][mask])  # (rows, K), a copy
            if not len(got):
                continue
            calls = np.zeros((-(-len(got) // m) * m, k), np.float32)
            calls[: len(got)] = got
            res = _product(calls.reshape(-1, m, k), np.ascontiguousarray(yf[i, j]))
            out[at][:, :, :z][mask] = res.reshape(-1, n)[: len(got)]
    return out
