"""Rows of a tile taken one at a time in a Python loop (pypto/row_loops.py, GLM-4.5's
per-row quant), and views of a tile of the body that give its own valid rows as valid_shape."""

import collections
import re

import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, N, TILE = 64, 32, 4
FP32 = pypto.DT_FP32


def _kernel(row_program, per_row: bool):
    """h = x * 2 per 4-row tile; s = row_program(h) row by row (or on the tile); s @ w."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        g: pypto.Tensor([K], FP32),
        w: pypto.Tensor([K, N], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE, name="L", idx_name="i"):
            act = (t - i * TILE).min(TILE)
            pypto.set_vec_tile_shapes(1, K)
            h = pypto.mul(pypto.view(x, [TILE, K], [i * TILE, 0], valid_shape=[act, K]), 2.0)
            if per_row:
                s = pypto.tensor([TILE, K], FP32, "s")
                for r in range(TILE):
                    s[r : r + 1, 0:] = row_program(pypto.view(h, [1, K], [r, 0]), g, r)
            else:
                s = row_program(h, g, 0)
            z = pypto.matmul(s, w, FP32)
            pypto.set_vec_tile_shapes(TILE, N)
            pypto.assemble(pypto.view(z, [TILE, N], [0, 0], valid_shape=[act, N]), [i * TILE, 0], out)

    return k


def _norm_row(row, g, r):
    gamma = pypto.cast(pypto.reshape(g, [1, K]), FP32)  # weight-only work, repeated in each row's program
    ms = pypto.sum(row * row, -1, keepdim=True) * (1.0 / K)
    return row / pypto.sqrt(ms + 1e-6) * gamma


def _data(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, K), dtype=np.float32)
    g = rng.uniform(0.5, 1.5, K).astype(np.float32)
    w = rng.standard_normal((K, N), dtype=np.float32) / 8
    return x, g, w


def _golden(x, g, w):
    h = x * 2
    return (h / np.sqrt((h * h).sum(-1, keepdims=True) / K + 1e-6) * g) @ w


@pytest.mark.parametrize("t", [1, 4, 9])
def test_a_row_loop_runs_as_the_tiles_program(t: int) -> None:
    x, g, w = _data(t)
    out = np.zeros((t, N), np.float32)
    _kernel(_norm_row, per_row=True)(x, g, w, out)
    assert check(out, _golden(x, g, w)).ok


def test_a_row_loop_builds_the_same_ops_as_the_whole_tile() -> None:
    x, g, w = _data(5)

    def ops(per_row: bool) -> collections.Counter:
        ir = str(_kernel(_norm_row, per_row).trace(x, g, w, np.zeros((5, N), np.float32)))
        return collections.Counter(re.findall(r"= (pto\.[a-z_]+)", ir))

    rows, whole = ops(True), ops(False)
    assert rows == whole and rows["pto.reshape"] == 1 and rows["pto.sqrt"] == 1, (rows, whole)


@pytest.mark.parametrize(
    "program, message",
    [
        (lambda row, g, r: row * float(r + 1), "written by different programs"),
        (lambda row, g, r: pypto.add(row, pypto.view(g, [K], [0])), None),  # (a weight: fine)
    ],
)
def test_rows_must_run_one_program(program, message) -> None:
    x, g, w = _data(6)
    out = np.zeros((6, N), np.float32)
    k = _kernel(program, per_row=True)
    if message is None:
        k(x, g, w, out)
        assert check(out, (x * 2 + g) @ w).ok
        return
    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(x, g, w, out)
    assert message in str(e.value) and f"{__file__}:" in str(e.value), str(e.value)


def _refused(fill, message: str) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[TILE]):
            h = pypto.abs(pypto.view(x, [p, K], [idx, 0]))
            s = pypto.tensor([TILE, K], FP32)
            fill(s, h)
            pypto.assemble(s, [idx, 0], out)

    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(np.ones((TILE, K), np.float32), np.zeros((TILE, K), np.float32))
    assert message in str(e.value) and f"{__file__}:" in str(e.value), str(e.value)


def _rows(s, h, rows=range(TILE), at=lambda r: r, f=lambda row, h, r: row):
    for r in rows:
        s[at(r) : at(r) + 1, 0:] = f(pypto.view(h, [1, K], [r, 0]), h, r)


@pytest.mark.parametrize(
    "fill, message",
    [
        (lambda s, h: _rows(s, h, rows=range(TILE - 1)), "is read with rows [0, 1, 2] written one at a time"),
        (lambda s, h: _rows(s, h, at=lambda r: (r + 1) % TILE), "each row at its own place"),
        (lambda s, h: _rows(s, h, f=lambda row, h, r: row + pypto.view(h, [1, K], [0, 0])), "different rows"),
        (lambda s, h: _rows(s, h, f=lambda row, h, r: row + h), "a row of a tile and a tile of rows"),
        (lambda s, h: _rows(s, h, f=lambda row, h, r: pypto.reshape(row, [K, 1])), "pypto.reshape of a row"),
    ],
)
def test_a_row_loop_that_is_not_the_tiles_program_is_refused(fill, message) -> None:
    _refused(fill, message)


def test_a_view_narrowing_valid_rows_to_the_tiles_own_is_the_tile() -> None:
    x, g, w = _data(7)
    out = np.zeros((7, N), np.float32)
    _kernel(lambda h, g, r: h + 1.0, per_row=False)(x, g, w, out)  # (its assemble takes such a view)
    assert check(out, (x * 2 + 1) @ w).ok


def test_a_view_narrowing_valid_rows_further_is_refused() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        t = x.shape[0]
        for i in pypto.loop((t + TILE - 1) // TILE, name="L", idx_name="i"):
            h = pypto.abs(pypto.view(x, [TILE, K], [i * TILE, 0], valid_shape=[(t - i * TILE).min(TILE), K]))
            pypto.assemble(pypto.view(h, [TILE, K], [0, 0], valid_shape=[1, K]), [i * TILE, 0], out)

    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(np.ones((6, K), np.float32), np.zeros((6, K), np.float32))
    assert "may narrow valid_shape only to the tile's own valid rows" in str(e.value), str(e.value)


def test_a_weight_row_assembled_into_each_row_is_that_row_broadcast() -> None:
    """GLM-4.5's MoE gate: `for r in range(p): assemble(bias_row, [r, 0], s)`, then s is
    read as a [p, N] tile (here the row, broadcast where it is used). `pypto.tensor` is
    `pypto.Tensor` (an annotation outside the body, with no dtype: the argument's)."""

    @pypto.frontend.jit
    def k(
        x: pypto.tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.tensor(),
        bias: pypto.tensor([N], FP32),
        out: pypto.tensor([pypto.DYNAMIC, N], FP32),
    ):
        row = pypto.reshape(bias, [1, N], inplace=True)
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list={4, 2}):
            s = pypto.Tensor([p, N], FP32)  # (declared, then filled: a scratch tile)
            for r in range(p):
                pypto.assemble(row, [r, 0], s)
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32)
            pypto.assemble(pypto.add(y, s), [idx, 0], out)

    x, g, w = _data(7)
    out = np.zeros((7, N), np.float32)
    k(x, w, g[:N].copy(), out)
    assert check(out, x @ w + g[:N]).ok


def test_an_annotation_without_dtype_takes_the_arguments() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), w: pypto.Tensor(), out: pypto.Tensor([pypto.DYNAMIC, N], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32), [idx, 0], out)

    x, _, w = _data(3)
    with pytest.raises(pto.BuildError, match="argument 'w' is float64: a tensor argument is bf16"):
        k(x, w.astype(np.float64), np.zeros((3, N), np.float32))


def test_columns_of_a_tile_with_its_own_valid_rows_are_a_column_view() -> None:
    """`view(y, [TILE, 16], [0, 16], valid_shape=[act, 16])` of the matmul's tile."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, N], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, 16], FP32),
    ):
        t = x.shape[0]
        for i in pypto.loop(0, t, TILE):
            act = pypto.min(TILE, t - i)
            y = pypto.matmul(pypto.view(x, [TILE, K], [i, 0], valid_shape=[act, K]), w, FP32)
            pypto.assemble(pypto.view(y, [TILE, 16], [0, 16], valid_shape=[act, 16]), [i, 0], out)

    x, _, w = _data(6)
    out = np.zeros((6, 16), np.float32)
    k(x, w, out)
    assert check(out, (x @ w)[:, 16:]).ok
