"""Windows of a weight read in place (`pto.view`, PyPTO's `view` of a weight at an
offset): part of a stacked weight, one gamma of several, columns of a `[K, N]` weight.
Built with the builder, the loop form and `pto.pypto`, lowered through every level and
run against numpy; the L2 model sees each window at its own addresses."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check
from pto.interp.machine import GmTensor

K, N, EPS = 256, 64, 1e-6
BF = ml_dtypes.bfloat16


def stacked_kernel():
    """A bias and a gamma that are the two halves of one f32 tensor, and the second half
    of a [2N, K] weight."""
    k = pto.Kernel("rows2")
    x = k.arg("x", [None, K], "f32")
    g = k.arg("gammas", [2 * K], "f32")
    w = k.arg("w", [2 * N, K], "bf16")
    bias = pto.reshape(pto.view(g, [K], [0]), [1, K], inplace=True)
    n = pto.rms_norm(pto.add(x, bias), pto.view(g, [K], [K]), EPS)
    y = pto.matmul(pto.cast(n, "bf16"), pto.view(w, [N, K], [N, 0]), b_trans=True)
    k.ret(pto.cast(y, "bf16"))
    return k.module()


def numpy_golden(x, gammas, w):
    f32 = np.float32
    xb = x + gammas[:K]
    n = xb / np.sqrt(np.mean(xb * xb, axis=-1, keepdims=True) + f32(EPS)) * gammas[K:]
    return (n.astype(BF).astype(f32) @ w[N:].astype(f32).T).astype(BF)


def inputs(t: int) -> list[np.ndarray]:
    rng = np.random.default_rng(t)
    return [
        rng.standard_normal((t, K), dtype=np.float32),
        rng.standard_normal(2 * K, dtype=np.float32),
        (rng.standard_normal((2 * N, K), dtype=np.float32) / 16).astype(BF),
    ]


@pytest.fixture(scope="module")
def compiled():
    return pto.compile(stacked_kernel())


@pytest.mark.parametrize("tokens", [1, 9, 20])
def test_weight_rows_run_at_every_level(compiled, tokens) -> None:
    xs = inputs(tokens)
    want = numpy_golden(*xs)
    for level in ("pto", "tile", "npu"):
        r = pto.run(compiled, xs, level=level)
        assert check(r.outputs[0], want).ok, level
    assert "npu.view %gammas at [256]" in compiled.text("npu") and "npu.view %w at [64, 0]" in compiled.text("npu")


def test_each_view_reads_its_own_lines(compiled) -> None:
    # Both halves of `gammas` are read: one 2 KiB tensor, four 512-byte lines. Views
    # at the tensor's own address would share lines and read half of it from HBM.
    rep = pto.run(compiled, inputs(9)).report
    assert rep.tensors["gammas"]["hbm_read"] == 2 * K * 4
    assert rep.tensors["gammas"]["misses"] == 2 * K * 4 // 512


def test_gm_windows_keep_their_addresses() -> None:
    t = GmTensor("w", np.zeros((8, 4), np.float32), 1024)
    rows = t.window([3, 0], [2, 4])
    assert rows.base == 1024 + 3 * 16 and rows.array.shape == (2, 4) and rows.name == "w"
    cols = t.window([1, 2], [3, 2])
    assert cols.base == 1024 + (1 * 4 + 2) * 4 and cols.strides_shape == (8, 4)


@pytest.mark.parametrize("offset", [0, 32])
def test_a_column_window_of_a_k_n_weight(offset) -> None:
    # [64, 32] of a [64, 64] bf16 weight: half of every 128-byte row, so every 512-byte
    # line of the weight is read (16 misses; 8 if the window were taken as contiguous).
    k = pto.Kernel("cols")
    x = k.arg("x", [None, 64], "bf16")
    w = k.arg("w", [64, 64], "bf16", cache="normal")
    k.ret(pto.cast(pto.matmul(x, pto.view(w, [64, 32], [0, offset])), "bf16"))
    c = pto.compile(k.module())
    assert f"npu.view %w at [0, {offset}] : !npu.buf<64x64xbf16, gm> -> !npu.buf<64x32xbf16, gm>" in c.text("npu")
    r = pto.run(c, tokens=9, golden=True)
    assert r.ok and r.report.tensors["w"]["misses"] == 16


def test_a_reshape_of_a_column_window_is_refused() -> None:
    k = pto.Kernel("cols")
    x = k.arg("x", [None, 32], "f32")
    w, s = k.arg("w", [32, 32], "f32"), k.arg("s", [2, 32], "f32")
    y = pto.matmul(x, w)
    k.ret(pto.mul(y, pto.reshape(pto.view(s, [2, 16], [0, 16]), [1, 32], inplace=True)))
    with pytest.raises(pto.CompileError, match="an in-place reshape of a weight window that is not contiguous"):
        pto.compile(k.module())


def test_the_loop_form_views_windows_of_a_weight() -> None:
    def kern(x, g, w, out):
        for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pto.view(x, [p, K], [idx, 0])
            n = pto.rms_norm(xt, pto.view(g, [K], [K]), EPS)
            y = pto.matmul(pto.cast(n, "bf16"), pto.view(w, [N, K], [N, 0]), b_trans=True)
            pto.assemble(pto.cast(y, "bf16"), [idx, 0], out)

    m = pto.trace(
        kern,
        x=pto.arg([None, K], "f32"),
        g=pto.arg([2 * K], "f32"),
        w=pto.arg([2 * N, K], "bf16"),
        out=pto.arg([None, N], "bf16"),
    )
    text = str(m)
    assert "pto.view %g at [256]" in text and "pto.view %w at [64, 0]" in text, text
    x, g, w = inputs(5)
    r = pto.run(pto.compile(m), [x, g, w])
    xn = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS)) * g[K:]
    assert check(r.outputs[0], (xn.astype(BF).astype(np.float32) @ w[N:].astype(np.float32).T).astype(BF)).ok


def test_pypto_views_of_weights_at_offsets() -> None:
    @pypto.frontend.jit
    def second_head(
        x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
        gammas: pypto.Tensor([2 * K], pypto.DT_FP32),
        ws: pypto.Tensor([2 * N, K], pypto.DT_BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
    ):
        gamma = pypto.view(gammas, [K], [K])
        w = pypto.view(ws, [N, K], [N, 0])
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            n = pypto.rms_norm(pypto.view(x, [p, K], [idx, 0]), gamma, EPS)
            y = pypto.matmul(pypto.cast(n, pypto.DT_BF16), w, pypto.DT_FP32, b_trans=True)
            pypto.assemble(pypto.cast(y, pypto.DT_BF16), [idx, 0], out)

    for t in (1, 7):
        x, g, w = inputs(t)
        out = np.zeros((t, N), BF)
        second_head(x, g, w, out)
        xn = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS)) * g[K:]
        assert check(out, (xn.astype(BF).astype(np.float32) @ w[N:].astype(np.float32).T).astype(BF)).ok
    assert "pto.view %ws at [64, 0]" in str(second_head.trace(x, g, w, out))


def test_pypto_column_view_of_a_k_n_weight() -> None:
    @pypto.frontend.jit
    def right_half(
        x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
        w: pypto.Tensor([K, 2 * N], pypto.DT_BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2, 1]):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.assemble(pypto.matmul(xt, w[:, N : 2 * N], pypto.DT_FP32), [idx, 0], out)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, K), dtype=np.float32).astype(BF)
    w = (rng.standard_normal((K, 2 * N), dtype=np.float32) / 16).astype(BF)
    out = np.zeros((5, N), np.float32)
    right_half(x, w, out)
    assert check(out, x.astype(np.float32) @ w[:, N:].astype(np.float32)).ok
    assert f"pto.view %w at [0, {N}]" in str(right_half.trace(x, w, out))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x, w: pto.view(w, [64, K], [100, 0]), "view [100, 164) of dim 0 is outside the input's 128"),
        (lambda x, w: pto.view(w, [4, K], [-1, 0]), "view offsets[0] must be an integer in [0, 2^63)"),
        (lambda x, w: pto.view(w, [0, K], [0, 0]), "view shape[0] must be an integer in [1, 2^63)"),
        (lambda x, w: pto.view(w, [4], [0]), "view of a rank-2 weight takes 2 sizes and 2 offsets"),
        (lambda x, w: pto.view(x, [4, K], [0, 0]), "view is part of the loop form"),
        (lambda x, w: pto.view("w", [4, K], [0, 0]), "view input must be a Tensor"),
    ],
)
def test_builder_checks_view_arguments(call, message) -> None:
    k = pto.Kernel("k")
    x, w = k.arg("x", [None, K], "f32"), k.arg("w", [2 * N, K], "bf16")
    with pytest.raises(pto.BuildError) as e:
        call(x, w)
    assert message in str(e.value), str(e.value)
