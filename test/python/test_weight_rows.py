"""Rows of a weight read in place (`pto.view`, PyPTO's `view` of a weight at a row
offset): part of a stacked weight, one gamma of several. Built with the builder, the
loop form and `pto.pypto`, lowered through every level and run against numpy."""

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
    bias = pto.reshape(pto.rows(g, 0, K), [1, K], inplace=True)
    n = pto.rms_norm(pto.add(x, bias), pto.rows(g, K, K), EPS)
    y = pto.matmul(pto.cast(n, "bf16"), pto.rows(w, N, N), b_trans=True)
    k.ret(pto.cast(y, "bf16"))
    return k.module()


def numpy_golden(x, gammas, w):
    f32 = np.float32
    xb = x + gammas[:K]
    n = xb / np.sqrt(np.mean(xb * xb, axis=-1, keepdims=True) + f32(EPS)) * gammas[K:]
    return (n.astype(BF).astype(f32) @ w[N:].astype(f32).T).astype(BF)


def inputs(t: int) -> list[np.ndarray]:
    rng = np.random.default_rng(t)
    return [rng.standard_normal((t, K), dtype=np.float32), rng.standard_normal(2 * K, dtype=np.float32),
            (rng.standard_normal((2 * N, K), dtype=np.float32) / 16).astype(BF)]


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
    assert "npu.view %gammas at 256" in compiled.text("npu") and "npu.view %w at 64" in compiled.text("npu")


def test_each_view_reads_its_own_lines(compiled) -> None:
    # Both halves of `gammas` are read: one 2 KiB tensor, four 512-byte lines. Views
    # at the tensor's own address would share lines and read half of it from HBM.
    rep = pto.run(compiled, inputs(9)).report
    assert rep.tensors["gammas"]["hbm_read"] == 2 * K * 4
    assert rep.tensors["gammas"]["misses"] == 2 * K * 4 // 512


def test_gm_rows_are_at_their_byte_address() -> None:
    t = GmTensor("w", np.zeros((8, 4), np.float32), 1024)
    v = t.rows(3, 2)
    assert v.base == 1024 + 3 * 16 and v.array.shape == (2, 4) and v.name == "w"


def test_the_loop_form_views_rows_of_a_weight() -> None:
    def kern(x, g, w, out):
        for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pto.view(x, [p, K], [idx, 0])
            n = pto.rms_norm(xt, pto.view(g, [K], [K]), EPS)
            y = pto.matmul(pto.cast(n, "bf16"), pto.view(w, [N, K], [N, 0]), b_trans=True)
            pto.assemble(pto.cast(y, "bf16"), [idx, 0], out)

    m = pto.trace(kern, x=pto.arg([None, K], "f32"), g=pto.arg([2 * K], "f32"), w=pto.arg([2 * N, K], "bf16"),
                  out=pto.arg([None, N], "bf16"))
    text = str(m)
    assert "pto.view %g at 256" in text and "pto.view %w at 64" in text, text
    x, g, w = inputs(5)
    r = pto.run(pto.compile(m), [x, g, w])
    xn = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS)) * g[K:]
    assert check(r.outputs[0], (xn.astype(BF).astype(np.float32) @ w[N:].astype(np.float32).T).astype(BF)).ok


def test_pypto_views_of_weights_at_row_offsets() -> None:
    @pypto.frontend.jit
    def second_head(x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
                    gammas: pypto.Tensor([2 * K], pypto.DT_FP32),
                    ws: pypto.Tensor([2 * N, K], pypto.DT_BF16),
                    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16)):
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
    assert "pto.view %ws at 64" in str(second_head.trace(x, g, w, out))


@pytest.mark.parametrize("call, message", [
    (lambda x, w: pto.rows(w, 100, 64), "rows [100, 164) are outside the input's 128 rows"),
    (lambda x, w: pto.rows(w, -1, 4), "rows offset must be an integer in [0, 2^63)"),
    (lambda x, w: pto.rows(w, 0, 0), "rows count must be an integer in [1, 2^63)"),
    (lambda x, w: pto.rows(x, 0, 4), "rows takes rows of a weight (static shape, rank >= 1)"),
    (lambda x, w: pto.rows("w", 0, 4), "rows input must be a Tensor"),
])
def test_builder_checks_rows_arguments(call, message) -> None:
    k = pto.Kernel("k")
    x, w = k.arg("x", [None, K], "f32"), k.arg("w", [2 * N, K], "bf16")
    with pytest.raises(pto.BuildError) as e:
        call(x, w)
    assert message in str(e.value), str(e.value)
