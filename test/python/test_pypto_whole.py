"""Kernels of static shapes (PyPTO's operator tests and tutorials): rows taken at a loop's
index are token tiles, and a kernel with no loop at all is one tile of all its rows
(pto/pypto/whole.py)."""

import ml_dtypes
import numpy as np
import pytest

import pto.pypto as pypto
from pto.interp.golden import check

BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
K, N = 256, 128


def _rmsnorm_ref(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    xf = x.astype(np.float64)
    return xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * g.astype(np.float64)


@pytest.mark.parametrize("tokens", [1, 37])
def test_a_kernel_with_no_loop_is_one_tile_of_all_its_rows(tokens: int) -> None:
    """RMSNorm -> matmul on static shapes, no loop, the output written as `out[0:M, :]`:
    the token parameters take `?` rows, the body is one tile of all of them."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], BF16), gamma: pypto.Tensor([], BF16), w: pypto.Tensor([], BF16), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, K)
        xf = pypto.cast(x, FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / K)
        xn = pypto.mul(pypto.div(xf, pypto.sqrt(pypto.add(ms, 1e-6))), pypto.cast(gamma, FP32))
        pypto.set_cube_tile_shapes([64, 64], [128, 128], [64, 64])
        out[0 : x.shape[0], :] = pypto.matmul(pypto.cast(xn, BF16), w, BF16, b_trans=True)

    rng = np.random.default_rng(tokens)
    bf = ml_dtypes.bfloat16
    x, g = rng.standard_normal((tokens, K)).astype(bf), (1 + 0.1 * rng.standard_normal(K)).astype(bf)
    w, out = (rng.standard_normal((N, K)) / 16).astype(bf), np.zeros((tokens, N), bf)
    text = str(k.trace(x, g, w, out))
    assert "%x: tensor<?x256xbf16>" in text and "-> tensor<?x128xbf16>" in text, text
    assert f"pto.unroll = array<i64: {tokens}>" in text, text
    k(x, g, w, out)
    want = _rmsnorm_ref(x, g).astype(np.float32).astype(bf).astype(np.float64) @ w.astype(np.float64).T
    assert check(out, want.astype(np.float32)).ok


@pytest.mark.parametrize("write", ["move", "assemble"])
def test_a_split_k_written_by_hand_with_no_loop(write: str) -> None:
    """The performance guide's manual split-K: K slices `a[:, k0:k1] @ b[k0:k1, :]`
    summed in place and moved into the output (`out[:] = s`), or assembled at [0, 0]."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], FP32), b: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        pypto.set_vec_tile_shapes(16, N)
        parts = [pypto.matmul(a[:, c : c + 64], b[c : c + 64, :], FP32) for c in range(0, K, 64)]
        for p in parts[1:]:
            parts[0] += p
        if write == "move":
            out[:] = parts[0]
        else:
            pypto.assemble(parts[0], [0, 0], out)

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((20, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    out = np.zeros((20, N), np.float32)
    k(a, b, out)
    assert check(out, a @ b).ok


def test_a_weight_whose_rows_are_the_token_count_by_chance_is_a_weight() -> None:
    """`a @ b` with a `[K, N]` b at K tokens: b's rows are as many as a's, so it is first
    taken for a token parameter; the kernel does not trace so, and is traced again with b
    a weight."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], FP32), b: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(a, b, FP32)

    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    out = np.zeros((64, 32), np.float32)
    k(a, b, out)
    assert check(out, a @ b).ok


def test_a_kernel_whose_first_trace_fails_before_its_loop_says_that_error() -> None:
    """A kernel with a loop is not one tile: an error before its loop (here `out[:] = y`,
    which a kernel with no loop may write) is the kernel's, not the one-tile trace's."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], FP32), b: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(a, b, FP32)
        for i, p in pypto.loop_unroll(0, a.shape[0], 1, unroll_list=[4]):
            out[i : i + p, :] = pypto.matmul(a[i : i + p, :], b, FP32)

    a, b, out = np.ones((4, 64), np.float32), np.ones((64, 32), np.float32), np.zeros((4, 32), np.float32)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_whole.py:\d+: .*out\[:\] = y on a parameter"):
        k(a, b, out)


def test_a_kernel_with_a_dynamic_axis_and_no_loop_is_still_refused() -> None:
    """The one-tile reading is for static shapes: a DYNAMIC axis is a token loop's."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 64], FP32), b: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(a, b, FP32)

    a, b, out = np.ones((4, 64), np.float32), np.ones((64, 32), np.float32), np.zeros((4, 32), np.float32)
    with pytest.raises(
        pypto.BuildError, match=r"out\[:\] = y on a parameter outside the token loop \(a kernel with a DYNAMIC"
    ):
        k(a, b, out)


def test_the_activation_need_not_be_the_first_parameter() -> None:
    """`k(w, x, out)`: the rows of w are not the tokens; those of x and out are."""

    @pypto.frontend.jit
    def k(w: pypto.Tensor([], FP32), x: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(x, w, FP32, b_trans=True)

    rng = np.random.default_rng(7)
    w, x = rng.standard_normal((48, 64)).astype(np.float32), rng.standard_normal((9, 64)).astype(np.float32)
    out = np.zeros((9, 48), np.float32)
    k(w, x, out)
    assert check(out, x @ w.T).ok


def test_a_kernel_with_no_token_loop_may_loop_over_n_tiles() -> None:
    """Static shapes, no token loop, a `pypto.loop` over N tiles of the weight (PyPTO's
    matmul tests with M small): the one tile of all the rows, its N windows unrolled."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], FP32), w: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        for n in pypto.loop(0, 4, 1, name="N", idx_name="n"):
            y = pypto.matmul(a, w[:, n * 32 : n * 32 + 32], FP32)
            out[:, n * 32 : n * 32 + 32] = y

    rng = np.random.default_rng(8)
    a, w = rng.standard_normal((6, 64)).astype(np.float32), rng.standard_normal((64, 128)).astype(np.float32)
    out = np.zeros((6, 128), np.float32)
    k(a, w, out)
    assert check(out, a @ w).ok


def test_a_square_weight_is_not_read_as_tokens() -> None:
    """`x @ w^T` with w [M, K] as many rows as x: its first reading (w a token parameter)
    is a product of two token tiles, refused at once, so w is read as a weight."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([], FP32), w: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(x, w, FP32, b_trans=True)

    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)
    out = np.zeros((32, 32), np.float32)
    k(x, w, out)
    assert check(out, x @ w.T).ok


def test_rows_sliced_at_the_loop_index_are_one_count() -> None:
    """In a kernel of static shapes every parameter sliced at the loop's index has the
    token rows; in one with a DYNAMIC axis a static table sliced so is refused at its line."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), r: pypto.Tensor(), w: pypto.Tensor(), out: pypto.Tensor()):
        for i in pypto.loop(0, 3, 1, idx_name="i"):
            y = pypto.matmul(x[i * 4 : i * 4 + 4, :], w, FP32, b_trans=True)
            out[i * 4 : i * 4 + 4, :] = y + r[i * 4 : i * 4 + 4, :]

    x, w, out = np.ones((10, 64), np.float32), np.ones((32, 64), np.float32), np.zeros((10, 32), np.float32)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_whole.py:\d+: .*parameter 'r' has 12 rows, 'x' 10"):
        k(x, np.ones((12, 32), np.float32), w, out)

    @pypto.frontend.jit
    def d(x: pypto.Tensor([pypto.DYNAMIC, 64], FP32), cos: pypto.Tensor([64, 32], FP32),
          w: pypto.Tensor([32, 64], FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], FP32)):  # fmt: skip
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            out[i : i + p, :] = pypto.matmul(x[i : i + p, :], w, FP32, b_trans=True) * cos[i : i + p, :]

    with pytest.raises(pypto.BuildError, match=r"test_pypto_whole.py:\d+: .*annotate the token axis pypto.DYNAMIC"):
        d(x, np.ones((64, 32), np.float32), w, out)


def test_an_output_moved_into_in_a_one_trip_loop() -> None:
    """PyPTO's test_onboard_new_front `matmul_add`: STATIC annotations, a one-trip
    `pypto.loop(1)`, whole-tensor views and `d.move(add(matmul(a, b, INT32), c))`: all
    of d's rows, the int32 products plus c exactly."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
          b: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
          c: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT32),
          d: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT32)):  # fmt: skip
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        for _ in pypto.loop(1, name="s0", idx_name="i"):
            a0 = pypto.view(a, [a.shape[0], a.shape[1]], [0, 0])
            b0 = pypto.view(b, [b.shape[0], b.shape[1]], [0, 0])
            d.move(pypto.add(pypto.matmul(a0, b0, pypto.DT_INT32), c))

    rng = np.random.default_rng(12)
    a, b = rng.integers(-9, 10, (13, 64)).astype(np.int8), rng.integers(-9, 10, (64, 96)).astype(np.int8)
    c, d = rng.integers(-999, 999, (13, 96)).astype(np.int32), np.zeros((13, 96), np.int32)
    k(a, b, c, d)
    assert np.array_equal(d, a.astype(np.int32) @ b.astype(np.int32) + c)


def test_tuning_a_kernel_with_no_token_loop_says_to_write_one() -> None:
    """The winner's unroll list cannot be applied to a kernel with no token loop: the
    suggestion says so, at its def line, and what to write."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([], FP32), w: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(a, w, FP32, b_trans=True)

    a, w, out = np.ones((40, 256), np.float32), np.ones((128, 256), np.float32), np.zeros((40, 128), np.float32)
    r = k.tune(a, w, out, tokens=[40], budget=2, jobs=1)
    unroll = [s for s in r.suggestions if s.hint == "unroll_list"]
    assert unroll and unroll[0].line == k.fn.__code__.co_firstlineno, r.suggestions
    assert "the kernel has no token loop" in (unroll[0].manual or ""), unroll[0]


def test_a_square_weight_first_in_the_signature_is_not_read_as_tokens() -> None:
    """`k(w, x, out)` with w [64, 64] at 64 tokens: every parameter has the token rows,
    the first (w) too; the reading without it traces."""

    @pypto.frontend.jit
    def k(w: pypto.Tensor([], FP32), x: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(x, w, FP32, b_trans=True)

    rng = np.random.default_rng(13)
    w, x = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
    out = np.zeros((64, 64), np.float32)
    k(w, x, out)
    assert check(out, x @ w.T).ok


def test_a_transposed_activation_is_refused_naming_a_trans() -> None:
    """`matmul(xt, w, a_trans=True)` with xt [K, T]: its tokens on dim 1, said so (not as a
    product of two token tiles, the reading where w's K rows are taken for tokens)."""

    @pypto.frontend.jit
    def k(xt: pypto.Tensor([], FP32), w: pypto.Tensor([], FP32), out: pypto.Tensor([], FP32)):
        out[:] = pypto.matmul(xt, w, FP32, a_trans=True)

    xt, w, out = np.ones((64, 40), np.float32), np.ones((64, 56), np.float32), np.zeros((40, 56), np.float32)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_whole.py:\d+: .*a_trans of a token tile \[64, 40\]"):
        k(xt, w, out)


def test_weight_windows_whose_last_runs_past_n_take_their_valid_columns() -> None:
    """A loop over 32-column windows of an 80-column weight, the last narrowed by its
    valid_shape to 16 columns: that window is the weight's last 16 columns."""
    n, nv = 80, 32

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), w: pypto.Tensor(), out: pypto.Tensor()):
        for ni in pypto.loop((n + nv - 1) // nv, name="n", idx_name="ni"):
            wb = pypto.view(w, [64, nv], [0, ni * nv], valid_shape=[64, pypto.min(nv, n - ni * nv)])
            pypto.assemble(pypto.matmul(x, wb, FP32), [0, ni * nv], out)

    rng = np.random.default_rng(14)
    x, w = rng.standard_normal((9, 64)).astype(np.float32), rng.standard_normal((64, n)).astype(np.float32)
    out = np.zeros((9, n), np.float32)
    k(x, w, out)
    assert check(out, x @ w).ok
