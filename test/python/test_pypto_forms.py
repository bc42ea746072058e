"""Forms PyPTO 0.2.0 accepts that a kernel author writes without thinking of them as
special: a rank-1 gamma or bias broadcast against a token tile, and weight-only work
(a cast or reshape of a gamma or bias, before the loop or inside it). Each runs on both
npu engines, bit for bit alike, and matches an independent numpy golden."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

H, N = 256, 64
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
COUNTS = (1, 13, 40)  # one token, a remainder of the [8, 1] cascade, several bodies


def _inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
    gamma = rng.uniform(0.5, 1.5, H).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((N, H)) * 0.05).astype(ml_dtypes.bfloat16)
    bias = rng.standard_normal(N).astype(ml_dtypes.bfloat16)
    return x, gamma, w, bias


def _golden(x, gamma, w, bias, eps=1e-6):
    xf = x.astype(np.float32)
    xn = xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + eps) * gamma.astype(np.float32)
    y = xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32).T
    return y + bias.astype(np.float32)


def _norm(xt, g):
    """A hand-written RMSNorm of an f32 tile, times g (whatever rank g has)."""
    ms = pypto.mul(pypto.sum(pypto.mul(xt, xt), -1, keepdim=True), 1.0 / H)
    return pypto.mul(pypto.mul(xt, pypto.rsqrt(pypto.add(ms, 1e-6))), g)


def _kernel(where: str):
    """x -> RMSNorm * gamma -> matmul + bias, gamma and bias prepared `where`: "before"
    the loop (cast, reshape not in place), "inside" it, or "broadcast" (rank-1, no
    preparation but a cast)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
    ):
        if where == "before":
            gf = pypto.reshape(pypto.cast(gamma, FP32), [1, H])
            bf = pypto.cast(bias, FP32)
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            if where == "inside":
                gf = pypto.cast(pypto.reshape(gamma, [1, H]), FP32)
                bf = pypto.reshape(pypto.cast(bias, FP32), [1, N])
            elif where == "broadcast":
                gf, bf = pypto.cast(gamma, FP32), pypto.cast(bias, FP32)
            xt = pypto.cast(pypto.view(x, [p, H], [idx, 0]), FP32)
            y = pypto.matmul(pypto.cast(_norm(xt, gf), BF16), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(pypto.add(y, bf), BF16), [idx, 0], out)

    return k


@pytest.mark.parametrize("where", ["before", "inside", "broadcast"])
def test_weight_only_work_and_rank1_broadcast_run_on_both_engines(where: str) -> None:
    k = _kernel(where)
    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        k(x, gamma, w, bias, out)
        assert check(out, _golden(x, gamma, w, bias)).ok, (where, t)
    compiled = pto.compile(k.trace(x, gamma, w, bias, out))
    runs = [pto.run(compiled, [x, gamma, w, bias], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0].view(np.uint16), runs[1].outputs[0].view(np.uint16))
    assert runs[0].report.cycles == runs[1].report.cycles


def test_weight_only_work_is_charged_in_the_phase_that_reads_it() -> None:
    """The bias cast is vector work of the post phase: one more vcast per tile there."""
    x, gamma, w, bias = _inputs(16)
    out = np.zeros((16, N), ml_dtypes.bfloat16)
    npu = pto.compile(_kernel("before").trace(x, gamma, w, bias, out)).npu
    casts = [o for o in npu.walk() if o.name == "npu.vcast" and "256x" not in str(o.operands[0].type)]
    assert any(str(o.operands[0].type) == f"!npu.buf<{N}xbf16, ub>" for o in casts), [str(o) for o in casts]


def test_broadcast_of_unequal_trailing_dims_is_refused_at_the_users_line() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], FP32),
        bias: pypto.Tensor([N], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.assemble(pypto.add(pypto.view(x, [p, H], [idx, 0]), bias), [idx, 0], out)

    x = np.zeros((4, H), np.float32)
    with pytest.raises(pypto.BuildError, match=rf"test_pypto_forms.py:\d+: .*shapes \[8, {H}\] and \[{N}\]"):
        k(x, np.zeros(N, np.float32), np.zeros((4, H), np.float32))


def _cast_weight_kernel(in_loop: bool):
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([N, H], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        pypto.set_vec_tile_shapes(16, H)
        wb = None if in_loop else pypto.cast(w, BF16)
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            wt = pypto.cast(w, BF16) if in_loop else wb  # the weight cast
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [idx, 0]), wt, FP32, b_trans=True), [idx, 0], out)

    return k


@pytest.mark.parametrize("tokens", [1, 13])
def test_weight_only_work_feeding_the_matmul_runs_once_per_launch(tokens: int) -> None:
    """A weight cast in the kernel that the matmul reads (W8A16's form) is a weight stage:
    its vector tasks write the cast weight to GM once, the cube reads it."""
    rng = np.random.default_rng(tokens)
    x = rng.standard_normal((tokens, H)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((N, H)).astype(np.float32)
    out = np.zeros((tokens, N), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (before the loop: as PyPTO runs it, nothing to say)
        _cast_weight_kernel(False)(x, w, out)
    want = x.astype(np.float32) @ w.astype(ml_dtypes.bfloat16).astype(np.float32).T
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    npu = pto.compile(_cast_weight_kernel(False).trace(x, w, out)).text("npu")
    assert 'npu.tasks "weight" vector' in npu and 'after ["weight"]' in npu


def test_a_window_of_a_weight_taken_in_the_loop_is_no_work_and_not_warned_of() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], FP32),
        w: pypto.Tensor([2 * N, H], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            wv = pypto.view(w, [N, H], [N, 0])
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [idx, 0]), wv, FP32, b_trans=True), [idx, 0], out)

    x, w = np.ones((3, H), np.float32), np.ones((2 * N, H), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k(x, w, np.zeros((3, N), np.float32))


def test_weight_only_work_in_the_loop_feeding_the_matmul_warns_that_it_runs_once() -> None:
    x, w = np.ones((3, H), ml_dtypes.bfloat16), np.ones((N, H), np.float32)
    out = np.zeros((3, N), np.float32)
    with pytest.warns(pypto.LoweringWarning, match=r"computes it once per launch, before the loop; PyPTO") as got:
        _cast_weight_kernel(True)(x, w, out)
    assert np.all(out == H)
    # said at the cast's line, not the matmul's
    line = next(n for n, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# the weight cast"))
    assert {(w.filename, w.lineno) for w in got if "per launch" in str(w.message)} == {(__file__, line)}


def test_the_subscript_annotation_form() -> None:
    """`pypto.Tensor[[dims], dtype, ...]` (PyPTO's own docstring form) is the call form:
    a tuple shape, a name, a format, a dict of fields, `...` for STATIC dims."""
    w_ann = pypto.Tensor[(N, H), BF16, "w", pypto.TileOpFormat.TILEOP_ND]  # a local name, seen by the jit
    out_ann = pypto.Tensor[{"shape": [pypto.DYN, N], "dtype": BF16}]

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor[[pypto.DYN, H], BF16],
        w: w_ann,
        gamma: pypto.Tensor[[...], BF16],
        bias: pypto.Tensor[[N], BF16],
        out: out_ann,
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            n = pypto.rms_norm(pypto.cast(pypto.view(x, [p, H], [idx, 0]), FP32), gamma, 1e-6)
            y = pypto.matmul(pypto.cast(n, BF16), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(pypto.add(y, pypto.cast(bias, FP32)), BF16), [idx, 0], out)

    x, gamma, w, bias = _inputs(13)
    out = np.zeros((13, N), ml_dtypes.bfloat16)
    k(x, w, gamma, bias, out)
    assert check(out, _golden(x, gamma, w, bias)).ok


@pytest.mark.parametrize(
    ("ann", "message"),
    [
        (lambda: pypto.Tensor[[..., ...], BF16], "at most one `...`"),
        (lambda: pypto.Tensor[[4], BF16, 3.5], "takes a shape, a DataType, a TileOpFormat or a name, got 3.5"),
        (lambda: pypto.Tensor[{"shape": [4], "dtyp": BF16}], "has no field 'dtyp'"),
    ],
)
def test_a_bad_subscript_annotation_is_refused(ann, message: str) -> None:
    with pytest.raises(pypto.BuildError, match=message):
        ann()


T = pypto.frontend.dynamic("T")  # module level, as PyPTO authors declare it


def test_a_named_dynamic_dimension_and_pow_as_the_inverse_root() -> None:
    """`frontend.dynamic("T")` is the token axis, usable as the loop's bound;
    `pow(ms + eps, -0.5)` and `xt ** 2` are the norm's rsqrt and square, so the norm
    still fuses into pto.rms_norm."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, T, 1, unroll_list=[8]):
            xt = pypto.cast(pypto.view(x, [p, H], [idx, 0]), FP32)
            ms = pypto.mul(pypto.sum(xt**2, -1, keepdim=True), 1.0 / H)
            xn = pypto.mul(pypto.mul(xt, pypto.pow(pypto.add(ms, 1e-6), -0.5)), pypto.cast(gamma, FP32))
            y = pypto.matmul(pypto.cast(xn, BF16), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(pypto.add(y, pypto.cast(bias, FP32)), BF16), [idx, 0], out)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        k(x, gamma, w, bias, out)
        assert check(out, _golden(x, gamma, w, bias)).ok, t
    tile = pto.compile(k.trace(x, gamma, w, bias, out)).tile
    assert any(o.name == "tile.rms_norm" for o in tile.walk()), str(tile)


def _pow_kernel(c: float, dt):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], dt), w: pypto.Tensor([H, N], dt), out: pypto.Tensor([T, N], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.pow(pypto.view(x, [p, H], [idx, 0]), c)
            pypto.assemble(pypto.matmul(y, w, FP32), [idx, 0], out)

    return k


@pytest.mark.parametrize("c", [3, -2, 1.5, 5])
@pytest.mark.parametrize("dt", [FP32, BF16])
def test_pow_of_any_nonzero_exponent(c: float, dt) -> None:
    """A whole number: x multiplied by squaring in f32 (x ** 3 = x * (x * x)), its
    reciprocal below 0; another number exp(c * ln x); a bf16 x widened, the result cast back."""
    npt = np.float32 if dt == FP32 else ml_dtypes.bfloat16
    rng = np.random.default_rng(5)
    x, w = rng.uniform(0.5, 1.5, (5, H)).astype(npt), rng.standard_normal((H, N)).astype(npt)
    out = np.zeros((5, N), np.float32)
    _pow_kernel(c, dt)(x, w, out)
    xf = x.astype(np.float32)
    if c == int(c):
        y, sq, n = np.ones_like(xf), xf, abs(int(c))
        while n:
            y, n = (y * sq if n & 1 else y), n >> 1
            sq = sq * sq
        want = (np.float32(1) / y if c < 0 else y).astype(npt)
    else:
        want = np.exp(np.log(xf) * np.float32(c)).astype(npt)
    assert check(out, want.astype(np.float32) @ w.astype(np.float32)).ok


def test_pow_of_zero_is_refused_at_the_users_line() -> None:
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*pow's exponent 0 is not modelled"):
        _pow_kernel(0, FP32)(np.zeros((4, H), np.float32), np.zeros((H, N), np.float32), np.zeros((4, N), np.float32))


def test_python_slices_read_and_write_token_rows() -> None:
    """`x[i:i + p, :]` is `pypto.view(x, [p, H], [i, 0])` and `out[i:i + p, :] = y` is
    `pypto.assemble(y, [i, 0], out)`; a window whose rows are not one number is refused."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], BF16),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            xn = _norm(pypto.cast(x[i : i + p, :], FP32), pypto.cast(gamma, FP32))
            y = pypto.matmul(pypto.cast(xn, BF16), w, FP32, b_trans=True)
            out[i : i + p, :] = pypto.cast(y + pypto.cast(bias, FP32), BF16)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        k(x, gamma, w, bias, out)
        assert check(out, _golden(x, gamma, w, bias)).ok, t

    @pypto.frontend.jit
    def bad(x: pypto.Tensor([T, H], FP32), out: pypto.Tensor([T, H], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8]):
            out[i : i + p, :] = x[i:T, :]

    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*slicing a tensor with .* not supported"):
        bad(np.zeros((4, H), np.float32), np.zeros((4, H), np.float32))


def test_a_gamma_row_is_read_in_column_chunks() -> None:
    """A `[1, H]` gamma (reshaped from `[H]`, cast) in a column-tiled phase: each chunk
    of the phase reads its `[1, w]` piece of the row."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], BF16),
    ):
        g = pypto.cast(pypto.reshape(gamma, [1, H]), FP32)
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H // 2)
            xn = _norm(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), g)
            pypto.set_vec_tile_shapes(8, N)
            y = pypto.matmul(pypto.cast(xn, BF16), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(y + pypto.cast(bias, FP32), BF16), [i, 0], out)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        k(x, gamma, w, bias, out)
        assert check(out, _golden(x, gamma, w, bias)).ok, t
    npu = str(pto.compile(k.trace(x, gamma, w, bias, out)).npu)
    assert f"!npu.buf<1x{H // 2}xbf16, ub>" in npu, npu


def test_matmul_with_a_fused_bias() -> None:
    """`extend_params={"bias_tensor": b}`: the bias joins the f32 accumulator before the
    cast to the matmul's out_dtype (here bf16), as the device's BT buffer does."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], BF16),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H)
            xn = _norm(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), pypto.cast(gamma, FP32))
            y = pypto.matmul(pypto.cast(xn, BF16), w, BF16, b_trans=True, extend_params={"bias_tensor": bias})
            pypto.assemble(y, [i, 0], out)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        k(x, gamma, w, bias, out)
        assert check(out, _golden(x, gamma, w, bias).astype(ml_dtypes.bfloat16)).ok, t


def test_matmul_with_a_fused_bias_and_relu() -> None:
    """`relu_type=RELU` beside the bias: the fixpipe's ReLU on the f32 accumulator, C =
    ReLU(A @ B + bias), before the cast to bf16."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, H], BF16), w: pypto.Tensor([N, H], BF16),
          bias: pypto.Tensor([N], BF16), out: pypto.Tensor([pypto.DYNAMIC, N], BF16)):  # fmt: skip
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            ext = {"bias_tensor": bias, "relu_type": pypto.ReLuType.RELU}
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, BF16, b_trans=True, extend_params=ext)
            pypto.assemble(y, [i, 0], out)

    x, _, w, bias = _inputs(13)
    out = np.zeros((13, N), ml_dtypes.bfloat16)
    k(x, w, bias, out)
    f = np.float32
    want = np.maximum(x.astype(f) @ w.astype(f).T + bias.astype(f), 0)
    assert check(out, want.astype(ml_dtypes.bfloat16)).ok


@pytest.mark.parametrize("tokens", [1, 45])
def test_an_int8_matmul_dequantised_by_its_fixpipe(tokens: int) -> None:
    """PyPTO's test_matmul_quant (corpus27's k252): int8 x int8 with an int32 bias, a ReLU
    and a per-tensor scale in `extend_params`, to fp16, C = DEQ(ReLU(A @ B + bias)) * s;
    all-DYNAMIC annotations and the loop count from the config's M (a number)."""
    m_view, scale = 16, 0.375

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]), b: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
          bias: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]), out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
          m: int):  # fmt: skip
        pypto.set_cube_tile_shapes([16, 16], [64, 128], [64, 64])
        for i in pypto.loop(0, (m + m_view - 1) // m_view, 1, idx_name="i"):
            ext = {"bias_tensor": bias, "scale": np.float32(scale), "relu_type": pypto.ReLuType.RELU}
            y = pypto.matmul(
                a[i * m_view : i * m_view + m_view, 0:H], b, pypto.DT_FP16, b_trans=True, extend_params=ext
            )
            out[i * m_view : i * m_view + m_view, 0:N] = y

    rng = np.random.default_rng(tokens)
    a, b = rng.integers(-9, 10, (tokens, H)).astype(np.int8), rng.integers(-9, 10, (N, H)).astype(np.int8)
    bias = rng.integers(-300, 300, (1, N)).astype(np.int32)
    out = np.zeros((tokens, N), np.float16)
    k(a, b, bias, out, tokens)
    acc = a.astype(np.int64) @ b.astype(np.int64).T + bias
    want = (np.maximum(acc, 0).astype(np.float32) * np.float32(scale)).astype(np.float16)
    assert np.array_equal(out, want)


@pytest.mark.parametrize("k_tile", [[64, 128], [64, 256]])
def test_ragged_k_and_n_tiles_are_cut_as_pypto_cuts_them(k_tile: list[int]) -> None:
    """K = 255 in kL1 = 128 slices (or one kL1 = 256 past it) and N = 200 in nL0 = 64
    tiles (PyPTO's test_matmul_quant's odd sizes): the last slice and the last column
    tile hold the rest, zero-filled past K and N in L1, the fixpipe storing only N's: the
    exact int32 products, and no tile changed."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 255], pypto.DT_INT8), b: pypto.Tensor([200, 255], pypto.DT_INT8),
          out: pypto.Tensor([pypto.DYNAMIC, 200], pypto.DT_INT32)):  # fmt: skip
        pypto.set_cube_tile_shapes([16, 16], k_tile, [64, 64])
        for i, p in pypto.loop_unroll(0, a.shape[0], 1, unroll_list=[8, 1]):
            pypto.assemble(pypto.matmul(pypto.view(a, [p, 255], [i, 0]), b, pypto.DT_INT32, b_trans=True), [i, 0], out)

    rng = np.random.default_rng(9)
    a, b = rng.integers(-128, 128, (11, 255)).astype(np.int8), rng.integers(-128, 128, (200, 255)).astype(np.int8)
    out = np.zeros((11, 200), np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pypto.LoweringWarning)
        k(a, b, out)
    assert np.array_equal(out, a.astype(np.int64) @ b.astype(np.int64).T)
    text = pto.compile(k.trace(a, b, out)).text("npu")
    assert "cols %kcols" in text and "cols %ncols" in text


@pytest.mark.parametrize(
    "ext, out_dtype, message",
    [
        ({"relu_type": pypto.ReLuType.RELU}, pypto.DT_FP16, "int8 to DT_FP16 needs a dequant scale"),
        ({"scale": 0.5}, pypto.DT_INT32, r"scale dequantises to DT_FP16, DT_BF16, DT_FP32, got DT_INT32"),
        ({"scale": 0.5}, pypto.DT_INT8, r"got DT_INT8 \(a requant is not modelled\)"),
        ({"relu_type": pypto.ReLuType.RELU}, pypto.DT_INT32, "relu_type on an int32 result is not modelled"),
    ],
)
def test_an_int8_matmul_fixpipe_it_does_not_model_is_refused(ext, out_dtype, message: str) -> None:
    """A dequant needs a scale and writes a float; a requant to int8 (the fixpipe
    saturates) and a ReLU of the raw int32 products are not modelled."""
    np_out = {pypto.DT_FP16: np.float16, pypto.DT_INT32: np.int32, pypto.DT_INT8: np.int8}[out_dtype]

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_INT8), b: pypto.Tensor([N, H], pypto.DT_INT8),
          out: pypto.Tensor([pypto.DYNAMIC, N], out_dtype)):  # fmt: skip
        for i, p in pypto.loop_unroll(0, a.shape[0], 1, unroll_list=[8, 1]):
            y = pypto.matmul(pypto.view(a, [p, H], [i, 0]), b, out_dtype, b_trans=True, extend_params=ext)
            pypto.assemble(y, [i, 0], out)

    a, b = np.ones((3, H), np.int8), np.ones((N, H), np.int8)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*" + message):
        k(a, b, np.zeros((3, N), np_out))


def test_a_loop_count_that_is_a_number_holds_at_the_call_s_token_count_only() -> None:
    """`pypto.loop(0, 2)` of 16-row tiles over a DYNAMIC axis: checked at the call's 20
    tokens; at 40 (rows past its tiles) and 10 (a tile past the rows) it is refused, also
    after a first call (the kernel is kept per token count), and tuned at 20 only."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, H], FP32), w: pypto.Tensor([N, H], FP32),
          out: pypto.Tensor([pypto.DYNAMIC, N], FP32)):  # fmt: skip
        for i in pypto.loop(0, 2, 1, idx_name="i"):
            t = pypto.view(x, [16, H], [i * 16, 0], valid_shape=[pypto.min(16, x.shape[0] - i * 16), H])
            pypto.assemble(pypto.matmul(t, w, FP32, b_trans=True), [i * 16, 0], out)

    rng = np.random.default_rng(11)
    w = rng.standard_normal((N, H)).astype(np.float32)
    x = rng.standard_normal((20, H)).astype(np.float32)
    out = np.zeros((20, N), np.float32)
    k(x, w, out)
    assert check(out, x @ w.T).ok
    for t, message in ((40, "takes whole 16-row tiles only"), (10, "does not tile the token axis")):
        with pytest.raises(pypto.BuildError, match=message):
            k(np.ones((t, H), np.float32), w, np.zeros((t, N), np.float32))
    with pytest.raises(pypto.BuildError, match=r"checked at 20 tokens only: tune it at tokens=\[20\]"):
        k.tune(x, w, out, tokens=[16, 128])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"scale": 0.2}, r"scale dequantises an int8 matmul: multiply a float matmul's result after it"),
        ({"bias_tensor": "B2"}, rf"bias_tensor must be \[{N}\] or \[1, {N}\] \(the output's columns\), got \[{H}\]"),
        ({"scale_tensor": "B2"}, r"scale_tensor \(a per-channel DT_UINT64 dequant word\) is not modelled"),
        ({"trans_mode": pypto.TransMode.CAST_RINT}, r"trans_mode .* is modelled as CAST_NONE only"),
        ({"relu_type": 1}, r"relu_type must be a pypto.ReLuType, got 1"),
        (
            {"bias": "B2"},
            r"extend_params takes bias_tensor, scale, scale_tensor, relu_type, trans_mode, got \['bias'\]",
        ),
    ],
)
def test_other_extend_params_are_refused_at_the_users_line(params, message: str) -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        b2: pypto.Tensor([H], BF16),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            ext = {k_: (b2 if v == "B2" else v) for k_, v in params.items()}
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True, extend_params=ext)
            pypto.assemble(y, [i, 0], out)

    x, _, w, _ = _inputs(4)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*" + message):
        k(x, w, np.zeros(H, ml_dtypes.bfloat16), np.zeros((4, N), np.float32))


def test_a_rank3_tile_is_stored_into_a_rank3_output_on_both_engines() -> None:
    """`reshape(y, [p, heads, d])` assembled into a `[T, heads, d]` output: each token's
    heads x d elements are one contiguous row on both sides, stored as such."""
    heads = 4

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, heads, N // heads], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H)
            xn = _norm(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), pypto.cast(gamma, FP32))
            y = pypto.matmul(pypto.cast(xn, BF16), w, FP32, b_trans=True)
            pypto.set_vec_tile_shapes(8, N)
            y = pypto.add(y, pypto.cast(bias, FP32))
            pypto.assemble(pypto.reshape(y, [p, heads, N // heads]), [i, 0, 0], out)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, heads, N // heads), np.float32)
        k(x, gamma, w, bias, out)
        assert check(out.reshape(t, N), _golden(x, gamma, w, bias)).ok, t
    compiled = pto.compile(k.trace(x, gamma, w, bias, out))
    runs = [pto.run(compiled, [x, gamma, w, bias], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0])
    assert runs[0].report.cycles == runs[1].report.cycles


def test_the_matmul_operator() -> None:
    """`x @ w` is `pypto.matmul(x, w, <w's dtype>)`, as PyPTO's Tensor.__matmul__."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        gamma: pypto.Tensor([H], BF16),
        w: pypto.Tensor([H, N], FP32),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H)
            xn = _norm(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), pypto.cast(gamma, FP32))
            y = pypto.cast(pypto.cast(xn, BF16), FP32) @ w
            pypto.assemble(y + pypto.cast(bias, FP32), [i, 0], out)

    for t in COUNTS:
        x, gamma, w, bias = _inputs(t)
        out = np.zeros((t, N), np.float32)
        k(x, gamma, np.ascontiguousarray(w.T).astype(np.float32), bias, out)
        assert check(out, _golden(x, gamma, w, bias)).ok, t
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*`@`'s right operand must be a tensor"):

        @pypto.frontend.jit
        def bad(x: pypto.Tensor([T, H], BF16), out: pypto.Tensor([T, H], BF16)):
            for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
                pypto.assemble(pypto.view(x, [p, H], [i, 0]) @ 2.0, [i, 0], out)

        bad(x, np.zeros((t, H), ml_dtypes.bfloat16))


def test_maximum_and_minimum_with_a_tensor_or_a_number() -> None:
    """`maximum(y, 0.0)` (a ReLU: `pto.maxs`), `minimum(y, bias)` (`pto.min`), the
    elementwise ops PyPTO 0.2.0 has beside its reductions."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, N)
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            y = pypto.minimum(pypto.maximum(y, 0.0), pypto.cast(bias, FP32) + 1.0)
            pypto.assemble(pypto.maximum(-0.5, y), [i, 0], out)

    for t in COUNTS:
        x, _, w, bias = _inputs(t)
        out = np.zeros((t, N), np.float32)
        k(x, w, bias, out)
        y = x.astype(np.float64) @ w.astype(np.float64).T
        want = np.maximum(np.minimum(np.maximum(y, 0.0), bias.astype(np.float64) + 1.0), -0.5)
        assert check(out, want).ok, t
    text = str(k.trace(x, w, bias, out))
    assert "pto.maxs" in text and "pto.min " in text


@pytest.mark.parametrize(
    ("bounds", "ops"),
    [
        ((-0.5, 2.0), ["pto.maxs", "pto.mins"]),
        ((pypto.Element(FP32, -0.5), pypto.Element(FP32, 2)), ["pto.maxs", "pto.mins"]),
        ((None, 1.0), ["pto.mins"]),
        (("bias", None), ["pto.max "]),
    ],
)
def test_clip_with_numbers_a_tensor_or_one_bound(bounds, ops) -> None:
    """`pypto.clip(y, min, max)`: numbers or `pypto.Element`s (`pto.maxs`/`pto.mins`), a
    broadcast rank-1 tensor, either bound None; the other extremum op is not emitted."""
    lo, hi = bounds

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        bias: pypto.Tensor([N], BF16),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            b = pypto.cast(bias, FP32)
            pypto.assemble(pypto.clip(y, b if lo == "bias" else lo, hi), [i, 0], out)

    x, _, w, bias = _inputs(13)
    out = np.zeros((13, N), np.float32)
    k(x, w, bias, out)
    y = x.astype(np.float64) @ w.astype(np.float64).T
    want = np.clip(y, bias.astype(np.float64) if lo == "bias" else lo, hi)
    assert check(out, want).ok
    text = str(k.trace(x, w, bias, out))
    assert all(op in text for op in ops)
    assert ("pto.mins" in text or "pto.min " in text) == (hi is not None)


def test_clip_of_a_number_and_a_tensor_is_refused_at_the_users_line() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            pypto.assemble(pypto.clip(y, y, 1.0), [i, 0], out)

    x, _, w, _ = _inputs(8)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*both numbers or both tensors"):
        k(x, w, np.zeros((8, N), np.float32))
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*Element takes an int or a float, got str"):
        pypto.Element(FP32, "1.0")


def test_log_log1p_and_the_log_method() -> None:
    """`pypto.log(x)` and `x.log()` are `pto.log`; `log1p(x)` is `log(x + 1)`, the add
    and the ln the device runs (a softplus post-op)."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            z = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            sp = pypto.maximum(z, 0.0) + pypto.log1p(pypto.exp(-pypto.abs(z)))
            pypto.assemble(sp + pypto.log(pypto.abs(z) + 1.0) - (pypto.abs(z) + 1.0).log(), [i, 0], out)

    for t in COUNTS:
        x, _, w, _ = _inputs(t)
        out = np.zeros((t, N), np.float32)
        k(x, w, out)
        z = x.astype(np.float64) @ w.astype(np.float64).T
        assert check(out, np.logaddexp(0.0, z)).ok, t
    text = str(k.trace(x, w, out))
    # (`log(|z| + 1)` and `(|z| + 1).log()` are the same op, traced once: two logs in all)
    assert text.count("pto.log ") == 2 and "pto.adds" in text


def test_unsqueeze_and_a_rank3_slice_assignment() -> None:
    """`cos.unsqueeze(1)` broadcast over the heads, and `out[i:i + p, :, a:b] = y`
    (a window of the last dim of a rank-3 output), each half once."""
    heads, d = 4, N // 4

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        c: pypto.Tensor([T, d], FP32),
        out: pypto.Tensor([T, heads, d], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, heads, d)
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True).reshape([p, heads, d])
            y = y * pypto.view(c, [p, d], [i, 0]).unsqueeze(1)
            out[i : i + p, :, 0:4] = y[:, :, 0:4]
            out[i : i + p, :, 4:d] = y[:, :, 4:d] * 2.0

    for t in COUNTS:
        x, _, w, _ = _inputs(t)
        c = np.random.default_rng(t).standard_normal((t, d)).astype(np.float32)
        out = np.zeros((t, heads, d), np.float32)
        k(x, w, c, out)
        y = (x.astype(np.float64) @ w.astype(np.float64).T).reshape(t, heads, d) * c[:, None, :]
        y[..., 4:] *= 2
        assert check(out, y).ok, t


def test_an_activation_sliced_on_its_columns_at_the_loop_index_is_refused_saying_so() -> None:
    """corpus34's k333, PyPTO's operator-test a_trans form: A passed [K, M], its columns
    sliced at the loop's index. Refused at the slice, saying where the tokens must be."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        m = a.shape[1]
        pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
        for m_idx in pypto.loop(0, (m + 31) // 32, 1, name="LOOP_M", idx_name="m_idx"):
            r = pypto.matmul(a[:, m_idx * 32 : m_idx * 32 + 32], b, out_dtype=FP32, a_trans=True)
            out[m_idx * 32 : m_idx * 32 + 32, :] = r

    a, b = np.ones((64, 40), np.float16), np.ones((64, 32), np.float16)
    with pytest.raises(pypto.BuildError, match=r"a slice of 'a' along dim 1 or later at \(m_idx \* 32\), the loop"):
        k(a, b, np.zeros((40, 32), np.float32))


def test_the_index_of_a_loop_of_numbers_has_symbolicscalar_methods() -> None:
    """corpus34's k330: N windows of a constant-bound `pypto.loop` in the token loop, the
    last one partial, its width `(N - n_idx * NW).min(NW)`: PyPTO's index is a
    SymbolicScalar, and so is its arithmetic here (the loop is unrolled)."""
    kk, nn, nw = 64, 40, 16

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, kk], FP32), w: pypto.Tensor([kk, nn], FP32),
          out: pypto.Tensor([pypto.DYNAMIC, nn], FP32)):  # fmt: skip
        t = x.shape[0]
        for idx in pypto.loop(0, (t + 15) // 16, 1, name="TOK", idx_name="idx"):
            xv = pypto.view(x, [16, kk], [idx * 16, 0], valid_shape=[(t - idx * 16).min(16), kk])
            for n_idx in pypto.loop(0, (nn + nw - 1) // nw, 1, name="NWIN", idx_name="n_idx"):
                n_off = n_idx * nw
                wv = pypto.view(w, [kk, nw], [0, n_off], valid_shape=[kk, (nn - n_off).min(nw)])
                pypto.set_cube_tile_shapes([16, 16], [32, 64], [16, 16])
                pypto.assemble(pypto.matmul(xv, wv, FP32), [idx * 16, n_off], out)

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((21, kk)).astype(np.float32), rng.standard_normal((kk, nn)).astype(np.float32)
    out = np.zeros((21, nn), np.float32)
    k(x, w, out)
    assert check(out, x.astype(np.float64) @ w).ok


def test_a_pinned_nl0_that_does_not_divide_n_is_kept_with_a_ragged_tail() -> None:
    """N = 96 with a pinned nL0 of 64: PyPTO cuts a 64-column tile and a 32-column tail,
    and so does this model, with no warning (K = 1000 ends in a tail slice too)."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, 1000], BF16), w: pypto.Tensor([1000, 96], BF16), out: pypto.Tensor([T, 96], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[32, 1]):
            pypto.set_cube_tile_shapes([32, 32], [128, 256], [64, 64])
            pypto.assemble(pypto.matmul(pypto.view(x, [p, 1000], [i, 0]), w, FP32), [i, 0], out)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 1000)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((1000, 96)) * 0.05).astype(ml_dtypes.bfloat16)
    out = np.zeros((40, 96), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pypto.LoweringWarning)
        k(x, w, out)
    assert check(out, x.astype(np.float64) @ w.astype(np.float64)).ok
    text = pto.compile(k.trace(x, w, out)).text("tile")
    assert "n = [64, 64]" in text


def test_a_kl0_clipped_to_an_odd_k_halves_on_whole_fractals() -> None:
    """K = 255 with a pinned kL0 = kL1 = 256 of f32: kL0 is clipped to 255, whose L0B tile
    of 128 columns does not fit; it halves to 128 (not 127), and kL1 is the two kL0
    steps that hold K, the last ragged."""

    @pypto.frontend.jit
    def k(a: pypto.Tensor([pypto.DYNAMIC, 255], FP32), b: pypto.Tensor([255, 128], FP32),
          out: pypto.Tensor([pypto.DYNAMIC, 128], FP32)):  # fmt: skip
        pypto.set_cube_tile_shapes([16, 16], [256, 256], [128, 128])
        for i, p in pypto.loop_unroll(0, a.shape[0], 1, unroll_list=[8, 1]):
            pypto.assemble(pypto.matmul(pypto.view(a, [p, 255], [i, 0]), b, FP32), [i, 0], out)

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((9, 255)).astype(np.float32), rng.standard_normal((255, 128)).astype(np.float32)
    out = np.zeros((9, 128), np.float32)
    with pytest.warns(pypto.LoweringWarning, match=r"kL0 255 -> 128 \(L0B holds 65536 bytes"):
        k(a, b, out)
    assert check(out, a.astype(np.float64) @ b).ok


def test_pinned_l1_tiles_larger_than_l1_are_halved() -> None:
    """lightning_indexer-style `m = [32, 32], k = [128, 1024], n = [256, 256]` in bf16:
    32 x 1024 + 256 x 1024 elements (576 KiB) do not fit the 512 KiB L1."""
    from pto.dialects.common import CubeTileAttr
    from pto.planning.cube import fit
    from pto.targets import load_target

    t = CubeTileAttr([32, 32], [128, 1024], [256, 256])
    target = load_target("ascend910b1")
    got, said = fit(t, 4096, 8192, 2, target)
    assert got.axes["k"] == (128, 512) and said == ["kL1 1024 -> 512 (L1 holds 524288 bytes)"]
    assert fit(got, 4096, 8192, 2, target) == (got, [])  # what fits is kept


def test_pinned_tiles_that_fit_are_kept_however_n_and_k_divide() -> None:
    """hc_pre's prefill pins n = [16, 16] on its 24 mixes: a 16-column tile and an
    8-column tail, as PyPTO cuts them; a wide nL0 halves kL0 until L0B holds it."""
    from pto.dialects.common import CubeTileAttr
    from pto.planning.cube import fit
    from pto.targets import load_target

    t = CubeTileAttr([32, 32], [256, 1024], [16, 16])
    assert fit(t, 16384, 24, 4, load_target("ascend910b1")) == (t, [])
    got, said = fit(CubeTileAttr([16, 16], [256, 512], [512, 512]), 1000, 1000, 2, load_target("ascend910b1"))
    assert got.axes["k"] == (64, 256)
    assert said[0] == "kL0 256 -> 64 (L0B holds 65536 bytes: kL0 x 512 columns must fit)"


@pytest.mark.parametrize("make", [pypto.Tensor, pypto.tensor], ids=["Tensor", "tensor"])
def test_a_helper_moves_its_result_into_a_tensor_made_in_the_body(make) -> None:
    """corpus18's k162: `xn = pypto.tensor([rows, H], dt)` (or `pypto.Tensor(...)`) in the
    loop, a `@frontend.function` helper writing it with `dst.move(...)`, then the matmul."""

    @pypto.frontend.function
    def norm(x, dst):
        dst.move(x * 2.0 + 1.0)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8]):
            xn = make([p, H], FP32)
            norm(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), xn)
            pypto.assemble(pypto.matmul(pypto.cast(xn, BF16), w, FP32, b_trans=True), [i, 0], out)

    x, _, w, _ = _inputs(8)
    out = np.zeros((8, N), np.float32)
    k(x, w, out)
    xb = (x.astype(np.float32) * 2 + 1).astype(ml_dtypes.bfloat16).astype(np.float64)
    assert check(out, xb @ w.astype(np.float64).T).ok


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (lambda y, out, t: (t.move(y), t.move(y)), "Tensor.move writes a tensor declared in the kernel"),
        (lambda y, out, t: out.move(y), r"out.move\(...\) of a kernel parameter: write an output.s token rows with"),
        (lambda y, out, t: t.move(pypto.cast(y, BF16)), "Tensor.move of a DT_BF16 value into a DT_FP32 tensor"),
    ],
)
def test_tensor_move_misuse_is_refused_at_the_users_line(body, message) -> None:
    @pypto.frontend.function
    def helper(y, out, t):
        body(y, out, t)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            t = pypto.Tensor([p, N], FP32)
            helper(y, out, t)
            pypto.assemble(t, [i, 0], out)

    x, _, w, _ = _inputs(8)
    with pytest.raises(pypto.BuildError, match=r"test_pypto_forms.py:\d+: .*" + message):
        k(x, w, np.zeros((8, N), np.float32))


def test_a_cast_column_view_whose_view_is_used_first() -> None:
    """mla_prolog_quant_v4's rope_2d: `xc = cast(x)` of a column view `x`, then `x`
    itself used (its reshapes), then `xc`: the cast of the slice `x` became."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, 16], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, N)
            y = pypto.cast(pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True), BF16)
            v = pypto.view(y, [p, 16], [0, 48])
            vc = pypto.cast(v, FP32)
            twice = pypto.cast(pypto.reshape(pypto.reshape(v, [p, 8, 2]), [p, 16]), FP32)
            pypto.assemble(vc + twice, [i, 0], out)

    for t in COUNTS:
        x, _, w, _ = _inputs(t)
        out = np.zeros((t, 16), np.float32)
        k(x, w, out)
        y = (x.astype(np.float32) @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16).astype(np.float64)
        assert check(out, 2 * y[:, 48:64]).ok, t


def test_neg_relu_and_ones() -> None:
    """`pypto.neg`, `pypto.relu` / `x.relu()` and `pypto.ones` as the ops they spell."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
        w: pypto.Tensor([64, 32], pypto.DT_FP32),
        out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pypto.view(x, [t, 64], [i, 0])
            y = pypto.relu(pypto.neg(xt)) + xt.relu() * pypto.ones([t, 64], dtype=pypto.DT_FP32)
            pypto.assemble(pypto.matmul(y, w, pypto.DT_FP32), [i, 0], out)

    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 64)).astype(np.float32)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    out = np.zeros((6, 32), np.float32)
    k(x, w, out)
    assert check(out, np.abs(x.astype(np.float64)) @ w).ok


def _per_head_max(tile: tuple[int, int, int]):
    heads, d = 4, N // 4

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, heads, d], FP32)):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(*tile)
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True).reshape([p, heads, d])
            pypto.assemble(y / pypto.amax(pypto.abs(y), -1, keepdim=True), [i, 0, 0], out)

    return k


def test_a_rank3_vector_tile_is_counted_in_the_columns_of_the_stages_data() -> None:
    """`(8, 4, d)` over `[t, 4, d]` covers the whole row: the per-head ops are slices of a
    4d-column row, which their own d columns would claim to cut (a false warning that the
    tile is narrower than the row); `(8, 2, d)` is runs of two heads, 2d columns. (Each
    head's columns are loaded on their own, a view of the matmul's result.)"""
    heads, d = 4, N // 4
    x, _, w, _ = _inputs(20)
    out = np.zeros((20, heads, d), np.float32)
    whole = _per_head_max((8, heads, d))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole(x, w, out)
    y = (x.astype(np.float64) @ w.astype(np.float64).T).reshape(20, heads, d)
    assert check(out, y / np.abs(y).max(-1, keepdims=True)).ok
    assert f"tile [8, {heads * d}]" in pto.compile(whole.trace(x, w, out)).text("tile")
    pairs = _per_head_max((8, 2, d))
    assert f"tile [8, {2 * d}]" in pto.compile(pairs.trace(x, w, out)).text("tile")


def _quant_kernel(cols: int):
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        w: pypto.Tensor([N, H], pypto.DT_INT8),
        q: pypto.Tensor([T, H], pypto.DT_INT8),
        s: pypto.Tensor([T, 1], FP32),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, cols)
            xf = pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32)
            amax = pypto.amax(pypto.abs(xf), -1, keepdim=True)
            y = pypto.cast(pypto.cast(pypto.cast(xf * 127.0 / amax, pypto.DT_INT32, pypto.CastMode.CAST_RINT),
                                      pypto.DT_FP16, pypto.CastMode.CAST_ROUND), pypto.DT_INT8, pypto.CastMode.CAST_TRUNC)  # fmt: skip
            scale = amax / 127.0
            pypto.assemble(y, [i, 0], q)
            pypto.assemble(scale, [i, 0], s)
            acc = pypto.matmul(y, w, pypto.DT_INT32, b_trans=True)
            pypto.assemble(pypto.cast(acc, FP32) * scale, [i, 0], out)

    return k


def test_a_quant_is_column_tiled_bit_for_bit() -> None:
    """A fused quant with a tile a quarter of the row: the amax folded over the chunks in
    one pass, the rows quantised chunk by chunk in the next; the same bits as whole rows
    (a row of zeros too: DeepSeek's unsaturated last cast wraps its NaNs to 0)."""
    x, _, _, _ = _inputs(13)
    x[3] = 0
    w = np.random.default_rng(1).integers(-127, 128, (N, H)).astype(np.int8)
    got = {}
    for cols in (H, H // 4):
        k = _quant_kernel(cols)
        q, s, out = np.zeros((13, H), np.int8), np.zeros((13, 1), np.float32), np.zeros((13, N), np.float32)
        k(x, w, q, s, out)
        got[cols] = (q, s)
        compiled = pto.compile(k.trace(x, w, q, s, out))
        assert "pto.quant %" in compiled.text("pto") and " wrap " in compiled.text("pto")
        runs = [pto.run(compiled, [x, w], engine=e).outputs for e in ("interp", "compiled")]
        assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))
    assert f"chunk = {H // 4} of {H}" in compiled.text("tile")
    np.testing.assert_array_equal(got[H][0], got[H // 4][0])
    np.testing.assert_array_equal(got[H][1], got[H // 4][1])
    assert got[H][0][3].tolist() == [0] * H
    xf = x.astype(np.float32)
    want = np.rint(xf * np.float32(127) / np.abs(xf).max(-1, keepdims=True))
    ok = np.isfinite(want).all(-1)
    np.testing.assert_array_equal(got[H // 4][0][ok], want[ok].astype(np.int8))


def test_the_model_helpers_idioms() -> None:
    """What PyPTO's own model code writes: DeepSeek-V4 common.py's `scalar_div`
    (`op_wrapper` around `pypto_impl.ScalarDivS`, `is_reserve` for `s / t`), its assert on
    `get_vec_tile_shapes()`, DeepSeek-V3.2's `y[:] = f(y)` (a move: the name takes the
    value, whatever its dtype), GLM's `pypto.symbolic_scalar(tile)` and a `[]`
    annotation (any rank)."""
    from pto.pypto import pypto_impl
    from pto.pypto.operation import op_wrapper

    @op_wrapper
    def scalar_div(tensor, other, is_reserve=False):
        return pypto_impl.ScalarDivS(tensor, pypto_impl.Element(tensor.dtype, other), is_reserve)

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        g: pypto.Tensor([], FP32),
        w: pypto.Tensor([N, H], BF16),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H)
            assert pypto.get_vec_tile_shapes() == [8, H]
            y = pypto.view(x, [p, H], [i * pypto.symbolic_scalar(1), 0])
            y[:] = pypto.cast(y, FP32)  # bf16 -> f32, the same name
            y[:] = scalar_div(y, 2.0) * scalar_div(pypto.amax(pypto.abs(y), -1, True), 1.0, True)
            y = y * pypto.reshape(g, [1, H], inplace=True)
            pypto.assemble(pypto.matmul(pypto.cast(y, BF16), w, FP32, b_trans=True), [i, 0], out)

    x, _, w, _ = _inputs(13)
    g = np.linspace(0.5, 1.5, H).astype(np.float32)
    out = np.zeros((13, N), np.float32)
    k(x, g, w, out)
    xf = x.astype(np.float32)
    y = (xf / 2 * (1 / np.abs(xf).max(-1, keepdims=True)) * g).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert check(out, y @ w.astype(np.float32).T).ok
    assert pypto.symbolic_scalar(3) == 3
    with pytest.raises(pypto.BuildError, match=r"pypto.pypto_impl.Cos \(a PyPTO 0.2.0 name\) is not modelled"):
        pypto_impl.Cos(x)
    with pytest.raises(pypto.BuildError, match="pypto.symbolic_scalar of 'n'"):
        pypto.symbolic_scalar("n")


def test_a_static_quant_with_a_per_channel_dequant() -> None:
    """GLM-4.5's attention_pre_quant: x quantised with static per-channel scale and offset,
    the int8 matmul's i32 result plus an i32 bias, cast to f32 and scaled per channel (no
    per-token scale to undo): runs as written, on both engines."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        xs: pypto.Tensor([1, H], FP32),
        w: pypto.Tensor([H, N], pypto.DT_INT8),
        qb: pypto.Tensor([1, N], pypto.DT_INT32),
        ds: pypto.Tensor([1, N], FP32),
        out: pypto.Tensor([T, N], BF16),
    ):
        for i, p in pypto.loop_unroll(0, T, 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H)
            xq = pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32) * xs
            xi = pypto.cast(pypto.cast(xq, pypto.DT_INT32, pypto.CastMode.CAST_RINT), pypto.DT_FP16)
            q = pypto.cast(xi, pypto.DT_INT8, satmode=pypto.SaturationMode.ON)
            acc = pypto.matmul(q, w, pypto.DT_INT32)
            pypto.assemble(pypto.cast(pypto.cast(pypto.add(acc, qb), FP32) * ds, BF16), [i, 0], out)

    rng = np.random.default_rng(5)
    x, _, _, _ = _inputs(13)
    xs = rng.uniform(20, 60, (1, H)).astype(np.float32)
    w = rng.integers(-127, 128, (H, N)).astype(np.int8)
    qb = rng.integers(-500, 500, (1, N)).astype(np.int32)
    ds = rng.uniform(1e-5, 2e-5, (1, N)).astype(np.float32)
    out = np.zeros((13, N), ml_dtypes.bfloat16)
    k(x, xs, w, qb, ds, out)
    q = np.clip(np.rint(x.astype(np.float32) * xs), -128, 127).astype(np.int64)
    want = ((q @ w.astype(np.int64) + qb).astype(np.float32) * ds).astype(np.float32)
    assert check(out, want).ok
    compiled = pto.compile(k.trace(x, xs, w, qb, ds, out))
    runs = [pto.run(compiled, [x, xs, w, qb, ds], engine=e).outputs[0] for e in ("interp", "compiled")]
    np.testing.assert_array_equal(runs[0].view(np.uint16), runs[1].view(np.uint16))


def test_a_token_count_times_a_static_one_is_the_token_count() -> None:
    """DeepSeek-V4's compressor flattens `x` [T, S, H] with `reshape(x, [bsz * s1, h])`,
    s1 a static 1: `T * 1` is T (as `T + 0`, `T - 0`, `T // 1`)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC], FP32),
        w: pypto.Tensor([64, 32], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 32], FP32),
    ):
        bsz, s1, h = x.shape
        x2 = pypto.reshape(x, [(bsz * s1 + 0 - 0) // 1, h], inplace=True)
        for i, n in pypto.loop_unroll(0, bsz, 1, unroll_list=[4, 1]):
            pypto.assemble(pypto.matmul(pypto.view(x2, [n, 64], [i, 0]), w, FP32), [i, 0], y)

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((7, 1, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)
    y = np.zeros((7, 32), np.float32)
    k(x, w, y)
    assert check(y, x[:, 0] @ w).ok


def test_lrelu_and_var_are_their_element_wise_forms() -> None:
    """`pypto.lrelu(x, s)` (a post-op) and `pypto.var(x, -1, correction, keepdim=True)`
    (a LayerNorm written with it)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
        w: pypto.Tensor([64, 32], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 32], FP32),
    ):
        for i, n in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pypto.view(x, [n, 64], [i, 0])
            xn = xt / pypto.sqrt(pypto.var(xt, -1, correction=0, keepdim=True) + 1e-5)
            pypto.assemble(pypto.matmul(xn, w, FP32).lrelu(0.2), [i, 0], y)

    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((6, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)
    y = np.zeros((6, 32), np.float32)
    k(x, w, y)
    z = (x / np.sqrt(x.var(-1, keepdims=True) + 1e-5)) @ w
    assert check(y, np.where(z >= 0, z, 0.2 * z)).ok


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: pypto.lrelu(x, 1.5), "negative_slope is modelled from 0 to 1"),
        (lambda x: pypto.var(x, 0, keepdim=True), "pypto.var over dim 0"),
        (lambda x: pypto.var(x, -1), "keepdim=False"),
        (lambda x: pypto.softmax(x, 0), "over dim 0"),
        (lambda x: pypto.cast(pypto.softmax(pypto.cast(x, BF16), -1), FP32), "takes a DT_FP32 tensor"),
    ],
)
def test_lrelu_var_and_softmax_outside_their_forms_are_refused(call, message) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 64], FP32), y: pypto.Tensor([pypto.DYNAMIC, 64], FP32)):
        for i, n in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.assemble(call(pypto.view(x, [n, 64], [i, 0])), [i, 0], y)

    with pytest.raises(pto.BuildError, match=message):
        k(np.ones((2, 64), np.float32), np.zeros((2, 64), np.float32))


def test_softmax_along_the_last_axis_of_a_grid() -> None:
    """A router's grouped softmax: logits [t, 24] seen as [t, 3, 8], softmax over each group."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
        w: pypto.Tensor([64, 24], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 3, 8], FP32),
    ):
        for i, n in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            z = pypto.reshape(pypto.matmul(pypto.view(x, [n, 64], [i, 0]), w, FP32), [n, 3, 8])
            pypto.assemble(z.softmax(-1), [i, 0, 0], y)

    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((6, 64), dtype=np.float32), rng.standard_normal((64, 24), dtype=np.float32)
    y = np.zeros((6, 3, 8), np.float32)
    k(x, w, y)
    z = (x @ w).reshape(6, 3, 8)
    e = np.exp(z - z.max(-1, keepdims=True))
    assert check(y, e / e.sum(-1, keepdims=True)).ok


def _ellipsis(x, y, w, i):
    y[i : i + 1, ...] = pypto.matmul(x[i : i + 1, ...], w, FP32)


def _one_slice(x, y, w, i):
    y[i:] = pypto.matmul(x[i : i + 1], w, FP32)


@pytest.mark.parametrize("rows", [_ellipsis, _one_slice])
def test_slices_of_whole_rows(rows) -> None:
    """`x[i:i + p, ...]` and `out[i:i + p, ...] = y` (PyPTO's matmul example); `x[i:i + 1]`
    and `out[i:] = y` (GLM-4.5's `out[bs_idx * TILE:] = y`): the rows, all columns."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
        w: pypto.Tensor([64, 32], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 32], FP32),
    ):
        for i in pypto.loop(0, x.shape[0], 1, name="L", idx_name="i"):
            rows(x, y, w, i)

    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((5, 64), dtype=np.float32), rng.standard_normal((64, 32), dtype=np.float32)
    y = np.zeros((5, 32), np.float32)
    k(x, w, y)
    assert check(y, x @ w).ok


def _n_tiles_kernel(n_tiles: int, n_loop=None):
    """PyPTO's test_matmul_l0c2ub form: 32-row tiles read with plain slices (the last runs
    past the tokens), a pypto.loop (or Python's range) over N tiles in the token loop, each
    window scaled and written to its columns of the output."""
    n_loop = n_loop or (lambda n: pypto.loop(0, n, 1, name="N", idx_name="n"))

    @pypto.frontend.jit
    def k(
        a: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
        b: pypto.Tensor([64, 96], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, 96], FP32),
    ):
        for m in pypto.loop(0, (a.shape[0] + 31) // 32, 1, name="M", idx_name="m"):
            for n in n_loop(n_tiles):
                r = pypto.matmul(a[m * 32 : m * 32 + 32, :], b[:, n * 32 : n * 32 + 32], FP32)
                out[m * 32 : m * 32 + 32, n * 32 : n * 32 + 32] = pypto.mul(r, 2.0)

    return k


@pytest.mark.parametrize("n_loop", [None, range], ids=["pypto.loop", "range"])
@pytest.mark.parametrize("tokens", [1, 33, 70])
def test_a_loop_over_n_tiles_is_the_one_matmul_over_all_n(tokens: int, n_loop) -> None:
    rng = np.random.default_rng(tokens)
    a, b = rng.standard_normal((tokens, 64), dtype=np.float32), rng.standard_normal((64, 96), dtype=np.float32)
    out = np.zeros((tokens, 96), np.float32)
    _n_tiles_kernel(3, n_loop)(a, b, out)
    assert check(out, 2 * (a @ b)).ok
    tile_ir = pto.compile(_n_tiles_kernel(3, n_loop).trace(a, b, out)).text("tile")
    assert tile_ir.count("tile.matmul") == tile_ir.count("tile.cube_stage") == tile_ir.count("tile.token_loop")


def test_a_loop_over_n_tiles_that_misses_columns_is_refused() -> None:
    a, b, out = np.ones((4, 64), np.float32), np.ones((64, 96), np.float32), np.zeros((4, 96), np.float32)
    with pytest.raises(
        pypto.BuildError,
        match=r"test_pypto_forms.py:\d+: .*in column windows leaves columns \[64, 96\) unassembled",
    ):
        _n_tiles_kernel(2)(a, b, out)


def test_a_hand_split_k_summed_onto_zeros_from_a_tile_cast_in_each_chunk() -> None:
    """GLM-4.5's MoE writes its K chunks so: the tile cast again in each chunk, a column
    slice of the cast as the chunk's activation, the partial products added onto
    `full(0)`. The casts are one value, the slices K slices of it, the sum one split-K
    matmul."""
    K2, N2, KC = 256, 64, 128

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K2], FP32),
        w: pypto.Tensor([K2, N2], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N2], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            xt = pypto.view(x, [p, K2], [i, 0])
            acc = pypto.full([p, N2], 0.0, FP32)
            for c in range(K2 // KC):
                xb = pypto.cast(xt, BF16)  # (again in each chunk)
                part = pypto.matmul(xb[:, c * KC : (c + 1) * KC], pypto.view(w, [KC, N2], [c * KC, 0]), FP32)
                acc = pypto.add(acc, part)
            pypto.assemble(acc, [i, 0], out)

    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((11, K2)).astype(np.float32), rng.standard_normal((K2, N2)).astype(ml_dtypes.bfloat16)
    out = np.zeros((11, N2), np.float32)
    k(x, w, out)
    assert check(out, x.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)).ok
    tile_ir = str(pto.compile(k.trace(x, w, out)).tile)
    assert tile_ir.count("tile.matmul") == tile_ir.count("tile.token_loop")


# The quotient of a quant as kernels write it, with its numpy golden in that order.
QUOTIENTS = {
    "scale_first": (
        lambda xf, am: pypto.mul(xf, pypto.div(pypto.full([16, 1], 127.0, FP32), am)),
        lambda xf, am: xf * (np.float32(127) / am),
    ),
    "reciprocal_scale_first": (
        lambda xf, am: pypto.mul(xf, pypto.mul(pypto.reciprocal(am), 127.0)),
        lambda xf, am: xf * (np.float32(1) / am * np.float32(127)),
    ),
    "reciprocal_first": (
        lambda xf, am: pypto.mul(pypto.mul(xf, pypto.reciprocal(am)), 127.0),
        lambda xf, am: xf * (np.float32(1) / am) * np.float32(127),
    ),
    "divide_first": (
        lambda xf, am: pypto.mul(pypto.div(xf, am), 127.0),
        lambda xf, am: xf / am * np.float32(127),
    ),
}


@pytest.mark.parametrize("order", QUOTIENTS)
def test_a_quant_keeps_the_order_its_quotient_is_written_in(order: str) -> None:
    """GLM-4.5 writes the scale first, `x * (full(127) / amax)`, others `reciprocal(amax)
    * 127`: each f32 step rounds, and the int8 values follow the order written (as
    `x * 127 / amax` they differ in ~0.7% of the elements, corpus14's p4, corpus16's p2)."""
    K2, N2 = 1024, 256
    quotient, golden = QUOTIENTS[order]

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K2], BF16),
        w: pypto.Tensor([K2, N2], pypto.DT_INT8),
        out: pypto.Tensor([pypto.DYNAMIC, N2], FP32),
    ):
        for i in pypto.loop((x.shape[0] + 15) // 16, name="t", idx_name="i"):
            xt = pypto.view(x, [16, K2], [i * 16, 0], valid_shape=[pypto.min(16, x.shape[0] - i * 16), K2])
            xf = pypto.cast(xt, FP32)
            amax = pypto.amax(pypto.abs(xf), -1, True)
            q32 = pypto.cast(quotient(xf, amax), pypto.DT_INT32, pypto.CastMode.CAST_RINT)
            q16 = pypto.cast(q32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
            q = pypto.cast(q16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
            acc = pypto.matmul(q, w, pypto.DT_INT32)
            pypto.assemble(pypto.mul(pypto.cast(acc, FP32), pypto.div(amax, 127.0)), [i * 16, 0], out)

    rng = np.random.default_rng(200)
    x = rng.standard_normal((200, K2)).astype(ml_dtypes.bfloat16)
    w = rng.integers(-127, 128, (K2, N2)).astype(np.int8)
    out = np.zeros((200, N2), np.float32)
    k(x, w, out)
    xf = x.astype(np.float32)
    am = np.abs(xf).max(-1, keepdims=True)
    q = np.trunc(np.round(golden(xf, am))).clip(-128, 127)
    want = (q @ w.astype(np.float64)) * (am * np.float32(1 / 127))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3)
    assert f'order "{order}"' in str(pto.compile(k.trace(x, w, out)).pto)


def test_a_hand_split_k_quantised_chunk_by_chunk_is_one_int8_matmul() -> None:
    """Each K chunk quantised on its own by the whole row's amax (GLM-4.5's MoE):
    `x[:, k:k + KC] * (127 / amax)` and its casts are those columns of the whole tile's,
    the int8 partials one split-K matmul, and the numbers the written order's."""
    K2, N2, KC = 256, 64, 128

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K2], FP32),
        w: pypto.Tensor([K2, N2], pypto.DT_INT8),
        out: pypto.Tensor([pypto.DYNAMIC, N2], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            xt = pypto.view(x, [p, K2], [i, 0])
            amax = pypto.amax(pypto.abs(xt), -1, True)
            parts = []
            for c in range(K2 // KC):
                s = pypto.div(pypto.full([p, 1], 127.0, FP32), amax)
                q32 = pypto.cast(pypto.mul(xt[:, c * KC : (c + 1) * KC], s), pypto.DT_INT32, pypto.CastMode.CAST_RINT)
                q16 = pypto.cast(q32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
                q = pypto.cast(q16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
                parts.append(pypto.matmul(q, pypto.view(w, [KC, N2], [c * KC, 0]), pypto.DT_INT32))
            acc = pypto.add(parts[0], parts[1])
            pypto.assemble(pypto.mul(pypto.cast(acc, FP32), pypto.div(amax, 127.0)), [i, 0], out)

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((11, K2)).astype(np.float32), rng.integers(-127, 128, (K2, N2)).astype(np.int8)
    out = np.zeros((11, N2), np.float32)
    k(x, w, out)
    am = np.abs(x).max(-1, keepdims=True)
    q = np.trunc(np.round(x * (np.float32(127) / am))).clip(-128, 127)
    np.testing.assert_allclose(out, (q @ w.astype(np.float64)) * (am * np.float32(1 / 127)), rtol=1e-5, atol=1e-3)
    tile_ir = str(pto.compile(k.trace(x, w, out)).tile)
    assert tile_ir.count("tile.matmul") == tile_ir.count("tile.token_loop")


def _scoped_kernel():
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([N, H], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            with pypto.options(cube_tile_shapes=[[16, 16], [128, 256], [64, 64]]):
                y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            pypto.assemble(pypto.mul(y, 2.0), [i, 0], out)

    return k


def test_pypto_options_scope_sets_pass_options_of_the_kernels_called_in_it_and_hints_in_a_block() -> None:
    """PyPTO's tests decorate the caller with `@pypto.options(pass_options=...)`: its merge
    counts are the kernel's (a name PyPTO's scope takes but this model does not know is
    said once); `with pypto.options(cube_tile_shapes=...)` in the body sets the block's tile."""
    k = _scoped_kernel()
    rng = np.random.default_rng(1)
    x, w = (
        rng.standard_normal((5, H)).astype(ml_dtypes.bfloat16),
        rng.standard_normal((N, H)).astype(ml_dtypes.bfloat16),
    )
    out = np.zeros((5, N), np.float32)

    with pytest.warns(pypto.NotModelledWarning, match="pypto.options' pass option 'enable_slice'"):

        @pypto.options(pass_options={"cube_l1_reuse_setting": {-1: 3}, "enable_slice": False})
        def call():
            k(x, w, out)

    call()
    assert check(out, 2 * (x.astype(np.float32) @ w.astype(np.float32).T)).ok
    with pypto.options(pass_options={"cube_l1_reuse_setting": {-1: 3}}):
        tile = str(pto.compile(k.trace(x, w, out)).tile)
    assert "l1_reuse 3" in tile and "tiles <m = [16, 16], k = [128, 256], n = [64, 64]>" in tile
    assert "l1_reuse 3" not in str(pto.compile(k.trace(x, w, out)).tile)  # (out of the scope)


def _head_gamma_kernel(gamma_shape: list[int]):
    heads, d = 4, N // 4

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], FP32),
        w: pypto.Tensor([N, H], FP32),
        g: pypto.Tensor(gamma_shape, FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            q3 = pypto.reshape(pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True), [p, heads, d])
            pypto.assemble(pypto.reshape(pypto.mul(q3, g), [p, N]), [i, 0], out)

    return k


def test_a_per_head_weight_of_a_rank3_op_is_a_row_per_head() -> None:
    """`q3 * gamma` with q3 `[t, H, D]` and gamma `[1, H, D]` (a norm weight per head):
    each head's row of the grid times its row of gamma; another weight shape is refused
    naming the three that broadcast."""
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((5, H)).astype(np.float32), rng.standard_normal((N, H)).astype(np.float32)
    g = rng.standard_normal((1, 4, N // 4)).astype(np.float32)
    out = np.zeros((5, N), np.float32)
    _head_gamma_kernel([1, 4, N // 4])(x, w, g, out)
    assert check(out, ((x @ w.T).reshape(5, 4, N // 4) * g).reshape(5, N)).ok
    with pytest.raises(pypto.BuildError, match=r"only a \[D\], \[1, D\] or \[1, 4, 16\] weight"):
        _head_gamma_kernel([4, N // 4])(x, w, np.zeros((4, N // 4), np.float32), out)


def test_a_loop_index_slicing_rows_of_a_tensor_with_static_shapes_takes_its_token_tiles() -> None:
    """PyPTO's operator tests (corpus22's k198): static annotations, the loop count a
    number, `x[i * 4:i * 4 + 4, :]` rows at the loop's index: the token tiles of a kernel
    specialised to its shapes (before, refused: the index had no value to slice with)."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor(), w: pypto.Tensor([N, H], FP32), out: pypto.Tensor()):
        for i in pypto.loop(0, 3, 1, name="M", idx_name="i"):
            out[i * 4 : i * 4 + 4, :] = pypto.matmul(x[i * 4 : i * 4 + 4, :], w, FP32, b_trans=True)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((10, H)).astype(np.float32), rng.standard_normal((N, H)).astype(np.float32)
    out = np.zeros((10, N), np.float32)
    k(x, w, out)  # (three tiles of 4 rows, the last 2 valid)
    assert check(out, x @ w.T).ok


@pytest.mark.parametrize("tokens", [1, 37, 200])
def test_a_loop_unroll_over_blocks_of_rows(tokens: int) -> None:
    """PyPTO's performance guide's form (corpus19's k167): `loop_unroll(ceil(T / 16),
    unroll_list=[4, 1])` counts 16-row blocks; each body takes rows [b * 16, (b + k) * 16),
    the last block clamped by its valid_shape: a token loop of 64- and 16-row tiles, the
    last partial."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        t = x.shape[0]
        for blk, n in pypto.loop_unroll(0, (t + 15) // 16, 1, unroll_list=[4, 1]):
            rows = pypto.min(n * 16, t - blk * 16)
            xt = pypto.view(x, [n * 16, H], [blk * 16, 0], valid_shape=[rows, H])
            pypto.assemble(pypto.matmul(xt, w, FP32, b_trans=True), [blk * 16, 0], out)

    x, _, w, _ = _inputs(tokens)
    out = np.zeros((tokens, N), np.float32)
    k(x, w, out)
    assert check(out, x.astype(np.float64) @ w.astype(np.float64).T).ok
    f = next(o for o in k.trace(x, w, out).walk() if o.name == "func.func")
    assert list(f.attributes["pto.unroll"].get_values()) == [64, 16] and "pto.tail" in f.attributes


def test_a_loop_unroll_over_a_count_that_is_not_the_tokens_says_how() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0] * 2, 1, unroll_list=[4]):
            xt = pypto.view(x, [p, H], [i, 0])
            pypto.assemble(pypto.matmul(xt, w, FP32, b_trans=True), [i, 0], out)

    x, _, w, _ = _inputs(5)
    with pytest.raises(pypto.BuildError, match=r"or over blocks of B of them \(ceil\(T / B\)\), got stop"):
        k(x, w, np.zeros((5, N), np.float32))


def test_a_bf16_sum_under_a_tile_narrower_than_its_row_runs_whole_rows() -> None:
    """corpus19's k164 (PyPTO's layer_norm example in bf16): the device reduces bf16 in
    bf16 a row at a time, so the phase is not cut into column chunks (their partials would
    be f32); said in a warning."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.set_vec_tile_shapes(8, 128)
            xt = pypto.view(x, [p, H], [i, 0])
            s = pypto.sum(pypto.mul(xt, xt), -1, keepdim=True)
            pypto.assemble(pypto.matmul(pypto.mul(xt, s), w, FP32, b_trans=True), [i, 0], out)

    x, _, w, _ = _inputs(11)
    out = np.zeros((11, N), np.float32)
    with pytest.warns(pypto.LoweringWarning, match="a reduction of bf16 values .* each task processes whole rows"):
        k(x, w, out)
    assert np.isfinite(out).all()
    runs = [pto.run(pto.compile(k.trace(x, w, out)), [x, w], engine=e).outputs[0] for e in ("interp", "compiled")]
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], out)


def test_assemble_of_a_list_of_tiles_is_each_in_turn() -> None:
    """corpus23's k208: PyPTO's `assemble([(k, [t, 0]), (v, [t, KVD])], kv_out,
    parallel=True)`, here the matmul's halves swapped into one output."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            pypto.assemble([(y[:, N // 2 :], [i, 0]), (y[:, : N // 2], [i, N // 2])], out, parallel=True)

    x, _, w, _ = _inputs(13)
    out = np.zeros((13, N), np.float32)
    k(x, w, out)
    y = x.astype(np.float64) @ w.astype(np.float64).T
    assert check(out, np.concatenate([y[:, N // 2 :], y[:, : N // 2]], -1)).ok
    with pytest.raises(pypto.BuildError, match=r"takes a list of \(tensor, offsets\) pairs"):
        _list_of_tiles_without_offsets()(x, w, out)


def _list_of_tiles_without_offsets():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.assemble([pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)], out)

    return k


def test_a_tile_viewed_and_cast_again_per_weight_block_is_one_matmul() -> None:
    """corpus22's k199 (PyPTO's performance guide: a Python for over the static N axis):
    the activation tile viewed and cast again for each weight block; the same view is the
    first, so the casts are one and the blocks' matmuls one matmul over N."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], FP32), w: pypto.Tensor([H, N], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            for n in range(2):
                xt = pypto.cast(pypto.view(x, [p, H], [i, 0]), BF16)
                pypto.assemble(pypto.matmul(xt, w[:, n * N // 2 : (n + 1) * N // 2], FP32), [i, n * N // 2], out)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((13, H)).astype(np.float32)
    w = (rng.standard_normal((H, N)) * 0.05).astype(ml_dtypes.bfloat16)
    out = np.zeros((13, N), np.float32)
    k(x, w, out)
    xb = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert check(out, xb @ w.astype(np.float64)).ok
    text = str(k.trace(x, w, out))
    assert text.count("pto.cast") == 1 and text.count("pto.matmul") == 2  # (joined by pto-join-n-windows)


@pytest.mark.parametrize("tokens", [1, 13, 256])
def test_annotations_of_dynamic_dims_only_take_the_arguments_sizes(tokens: int) -> None:
    """corpus22's k200 (PyPTO's matmul tests annotate every operand [DYNAMIC, DYNAMIC]):
    the rows that are the token count are the tokens (x's decides it), every other dim
    is the argument's size: the weight's rows (256, also a token count here) stay K."""
    dyn = [pypto.DYNAMIC, pypto.DYNAMIC]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(dyn), w: pypto.Tensor(dyn), out: pypto.Tensor(dyn)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [i, 0]), w[0:H, 0:N], FP32), [i, 0], out)

    rng = np.random.default_rng(tokens)
    x = rng.standard_normal((tokens, H)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((H, N)) * 0.05).astype(ml_dtypes.bfloat16)
    out = np.zeros((tokens, N), np.float32)
    k(x, w, out)
    assert check(out, x.astype(np.float64) @ w.astype(np.float64)).ok


def test_a_weight_whose_rows_equal_the_tokens_by_chance_does_not_hide_the_kernels_error() -> None:
    """All-DYNAMIC annotations at 64 tokens and a [64, 32] weight: traced with the weight's
    rows the tokens, the matmul's K would disagree; the error said is the kernel's own."""
    dyn = [pypto.DYNAMIC, pypto.DYNAMIC]

    @pypto.frontend.jit
    def k(x: pypto.Tensor(dyn), w: pypto.Tensor(dyn), out: pypto.Tensor(dyn)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, 64], [i, 0]), w, FP32)
            pypto.assemble(pypto.sin(y), [i, 0], out)  # not modelled

    x, w = np.ones((64, 64), ml_dtypes.bfloat16), np.ones((64, 32), ml_dtypes.bfloat16)
    with pytest.raises(pypto.BuildError, match=r"pypto.sin \(a PyPTO 0.2.0 name\) is not modelled"):
        k(x, w, np.zeros((64, 32), np.float32))


def test_a_column_view_of_a_column_view_is_those_columns() -> None:
    """corpus24's k221: a head's columns of a half of the matmul's tile,
    `view(view(y, [p, 2D], [0, 0]), [p, D], [0, D])`, is y's columns [D, 2D)."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([N, H], BF16), out: pypto.Tensor([T, N // 4], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, FP32, b_trans=True)
            half = pypto.view(y, [p, N // 2], [0, N // 2])
            pypto.assemble(pypto.view(half, [p, N // 4], [0, N // 4]) * 2.0, [i, 0], out)

    x, _, w, _ = _inputs(13)
    out = np.zeros((13, N // 4), np.float32)
    k(x, w, out)
    y = x.astype(np.float64) @ w.astype(np.float64).T
    assert check(out, 2 * y[:, 3 * N // 4 :]).ok


@pytest.mark.parametrize("engine", ["interp", "compiled"])
def test_an_int8_matmul_whose_product_is_the_output_runs(engine: str) -> None:
    """corpus22's k199 (PyPTO's cast-then-matmul test): int8 x int8 -> the i32 output
    itself, no dequant; the products exact."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], pypto.DT_INT8),
        w: pypto.Tensor([H, N], pypto.DT_INT8),
        out: pypto.Tensor([T, N], pypto.DT_INT32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [i, 0]), w, pypto.DT_INT32), [i, 0], out)

    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (13, H), dtype=np.int8)
    w = rng.integers(-128, 128, (H, N), dtype=np.int8)
    out = np.zeros((13, N), np.int32)
    k(x, w, out)
    assert np.array_equal(out, x.astype(np.int64) @ w.astype(np.int64))
    got = pto.run(pto.compile(k.trace(x, w, out)), [x, w], engine=engine).outputs[0]
    assert np.array_equal(got, out)
