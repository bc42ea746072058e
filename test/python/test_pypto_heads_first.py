"""Head-major outputs (pypto/heads_first.py): corpus21's k189 writes a per-head norm's
`[t, H, D]` result, transposed to `[H, t, D]`, into an `[H, T, D]` output; the kernel's
results are its H heads, each written into its head of the caller's array."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, HEADS, D = 256, 4, 32
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32


def _kernel(tail=lambda kt, out, i: pypto.assemble(kt, [0, i, 0], out), out_shape=(HEADS, pypto.DYNAMIC, D)):
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([K, HEADS * D], BF16),
        out: pypto.Tensor(list(out_shape), FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, K], [i, 0]), w, FP32)
            pypto.set_vec_tile_shapes(8, HEADS, D)
            y3 = pypto.reshape(y, [p, HEADS, D])
            yn = y3 * pypto.rsqrt(pypto.sum(y3 * y3, -1, keepdim=True) * (1.0 / D) + 1e-6)
            tail(pypto.transpose(yn, 0, 1), out, i)

    return k


def _inputs(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, K)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((K, HEADS * D)) * 0.1).astype(ml_dtypes.bfloat16)
    return x, w


@pytest.mark.parametrize("t", [1, 13, 40])
def test_a_transpose_of_the_tokens_is_assembled_head_by_head(t: int) -> None:
    x, w = _inputs(t)
    k = _kernel()
    out = np.full((HEADS, t, D), np.nan, np.float32)
    k(x, w, out)
    y = (x.astype(np.float32) @ w.astype(np.float32)).reshape(t, HEADS, D)
    want = (y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-6)).transpose(1, 0, 2)
    assert check(out, want).ok
    module = k.trace(x, w, out)
    f = next(o for o in module.walk() if o.name == "func.func")
    assert [str(r) for r in f.function_type.outputs] == ["tensor<?x32xf32>"] * HEADS  # (one [T, D] result per head)
    runs = [pto.run(pto.compile(module), [x, w], engine=e) for e in ("interp", "compiled")]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0].outputs, runs[1].outputs, strict=True))
    assert all(np.array_equal(runs[0].outputs[h], out[h]) for h in range(HEADS))
    assert runs[0].report.to_json() == runs[1].report.to_json()


@pytest.mark.parametrize(
    ("tail", "shape", "message"),
    [
        (
            lambda kt, out, i: pypto.assemble(pypto.mul(kt, 2.0), [0, i, 0], out),
            (HEADS, pypto.DYNAMIC, D),
            r"a transpose of the tokens to dim 1 is written only by pypto.assemble into an \[H, T, D\] output",
        ),
        (
            lambda kt, out, i: pypto.assemble(kt, [i, 0, 0], out),
            (pypto.DYNAMIC, HEADS, D),
            r"the output's DYNAMIC axis must be dim 1 too",
        ),
        (
            lambda kt, out, i: pypto.assemble(kt, [0, i, 16], out),
            (HEADS, pypto.DYNAMIC, D),
            r"whole heads at \[0, row, 0\] only",
        ),
    ],
    ids=["read_as_a_tensor", "token_major_output", "column_offset"],
)
def test_a_transpose_of_the_tokens_elsewhere_is_refused_at_its_line(tail, shape, message: str) -> None:
    x, w = _inputs(3)
    k = _kernel(tail, shape)
    out_shape = [3 if s is pypto.DYNAMIC else s for s in shape]
    with pytest.raises(pypto.BuildError, match=rf"test_pypto_heads_first.py:\d+: error: pto.pypto: .*{message}"):
        k(x, w, np.zeros(out_shape, np.float32))


def _per_head(heads=range(HEADS), index=lambda h: h):
    def tail_from(yn, out, i, p):
        for h in heads:
            out[h, i : i + p, :] = yn[:, index(h), :]

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([K, HEADS * D], BF16),
        out: pypto.Tensor([HEADS, pypto.DYNAMIC, D], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, K], [i, 0]), w, FP32)
            pypto.set_vec_tile_shapes(8, HEADS, D)
            y3 = pypto.reshape(y, [p, HEADS, D])
            tail_from(y3 * 2.0, out, i, p)

    return k


@pytest.mark.parametrize("t", [1, 13])
def test_heads_written_one_by_one_are_the_outputs_heads(t: int) -> None:
    """corpus23's k203: `q_out[h, t0:t0 + tt, :] = qr[:, h, :]` for each head (a number
    index of a rank-3 tile is a view of that head, its dim dropped); here the heads in
    reverse, `yn[:, -1 - h, :]`."""
    x, w = _inputs(t)
    out = np.full((HEADS, t, D), np.nan, np.float32)
    _per_head(index=lambda h: -1 - h)(x, w, out)
    y = (x.astype(np.float32) @ w.astype(np.float32)).reshape(t, HEADS, D) * 2
    assert check(out, y[:, ::-1, :].transpose(1, 0, 2)).ok


@pytest.mark.parametrize(
    ("heads", "message"),
    [
        (range(HEADS - 1), r"heads \[3\] of output 'out' are not written"),
        ([0, 1, 2, 3, 1], r"head 1 of output 'out' is written twice in the loop body"),
    ],
)
def test_heads_written_one_by_one_are_each_written_once(heads, message: str) -> None:
    x, w = _inputs(3)
    with pytest.raises(pypto.BuildError, match=rf"test_pypto_heads_first.py:\d+: error: pto.pypto: {message}"):
        _per_head(heads)(x, w, np.zeros((HEADS, 3, D), np.float32))
