"""Token tensors whose tokens are not dim 0 (`pto/pypto/tcols.py`): hc_pre's prefill
form `matmul(w, x, b_trans=True)`, a column per token, worked on and transposed back.
Each form runs and matches an independent numpy golden; what is not supported is
refused at its line."""

from __future__ import annotations

import numpy as np
import pytest

import pto.pypto as pypto
from pto.interp.golden import check

K, M = 64, 24
FP32 = pypto.DT_FP32
COUNTS = (1, 11)  # one token, a remainder of the [8, 1] cascade


def _inputs(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, K)).astype(np.float32)
    w = (rng.standard_normal((M, K)) * 0.1).astype(np.float32)
    s = rng.uniform(0.5, 1.5, M).astype(np.float32)
    return x, w, s


def test_columns_per_token_scaled_reduced_and_transposed_back() -> None:
    """`w @ x^T` ([24, t]) times the norm's [t, 1] reshaped to [1, t], plus a [24, 1]
    weight, its rows [4, 4, t] reduced over dims 0 and 1, transposed back, stored."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([M, K], FP32),
        s: pypto.Tensor([M], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, 8], FP32),
        grid: pypto.Tensor([pypto.DYNAMIC, 4, 4], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            xt = pypto.view(x, [t, K], [i, 0])
            pypto.set_vec_tile_shapes(8, K)
            ms = pypto.sum(xt * xt, -1, keepdim=True)  # [t, 1]
            y = pypto.matmul(w, xt, FP32, b_trans=True)  # [24, t]
            pypto.set_vec_tile_shapes(M, 8)
            y = y / pypto.reshape(ms + 1.0, [1, t]) + pypto.reshape(s, [M, 1])
            y = pypto.exp(y * -1.0)
            pypto.assemble(pypto.transpose(y[0:8, :], 0, 1), [i, 0], out)
            c = pypto.reshape(y[8:, :], [4, 4, t])
            pypto.set_vec_tile_shapes(4, 4, 8)
            c = c / pypto.sum(c, -2, keepdim=True)
            c = c - pypto.amax(c, 0, keepdim=True)
            pypto.assemble(pypto.transpose(pypto.transpose(c, 1, 2), 0, 1), [i, 0, 0], grid)

    for t in COUNTS:
        x, w, s = _inputs(t)
        out, grid = np.zeros((t, 8), np.float32), np.zeros((t, 4, 4), np.float32)
        k(x, w, s, out, grid)
        x64 = x.astype(np.float64)
        y = np.exp(-((x64 @ w.T) / ((x64 * x64).sum(-1, keepdims=True) + 1.0) + s))  # [t, 24]
        c = y[:, 8:].reshape(t, 4, 4)  # [t, a, b]
        c = c / c.sum(-1, keepdims=True)
        c = c - c.max(1, keepdims=True)
        assert check(out, y[:, :8]).ok and check(grid, c).ok, t  # [a, t, b], then [t, a, b]


def _refused(body, message: str) -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([M, K], FP32),
        g: pypto.Tensor([4, 2], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, M], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            xt = pypto.view(x, [t, K], [i, 0])
            body(xt, w, g, out, i, t)

    with pytest.raises(pypto.BuildError, match=r"test_pypto_tcols.py:\d+: .*" + message):
        k(np.zeros((4, K), np.float32), np.zeros((M, K), np.float32), np.zeros((4, 2), np.float32),
          np.zeros((4, M), np.float32))  # fmt: skip


def _cols(xt, w):
    return pypto.matmul(w, xt, FP32, b_trans=True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (lambda xt, w, g, out, i, t: pypto.assemble(_cols(xt, w), [i, 0], out), "transpose them back to dim 0"),
        (lambda xt, w, g, out, i, t: _cols(xt, w) + xt, "transpose one to the other's layout"),
        (lambda xt, w, g, out, i, t: pypto.matmul(w, xt, FP32), "only `matmul\\(w, x, b_trans=True\\)`"),
        (lambda xt, w, g, out, i, t: _cols(xt, w)[0:4, 0:2], "its tokens \\(dim 1\\) are taken whole"),
        (lambda xt, w, g, out, i, t: pypto.sum(_cols(xt, w), 1, keepdim=True), "over dim 1, the tokens"),
        (lambda xt, w, g, out, i, t: _cols(xt, w)[0:4, :] * g[:, 0:2], "only a weight with one dim above 1"),
        (
            lambda xt, w, g, out, i, t: pypto.reshape(
                pypto.transpose(pypto.reshape(_cols(xt, w), [4, 6, t]), 0, 1), [M, t]
            ),  # fmt: skip
            "dims other than the tokens are transposed",
        ),
        (lambda xt, w, g, out, i, t: pypto.concat([_cols(xt, w), _cols(xt, w)], -1), "transpose them back"),
    ],
)
def test_what_tokens_off_dim_0_do_not_support_is_refused_at_the_users_line(body, message) -> None:
    _refused(body, message)
