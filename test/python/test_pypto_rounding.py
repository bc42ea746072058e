"""Rounding as PyPTO 0.2.0 authors write it: `pypto.round` / `x.round()` (ties to even,
torch.round's golden in PyPTO's tests), floor, ceil, trunc (the device's f32 -> f32 cast
in a round mode), and a direct float -> int8 cast, which the hardware has only from f16
and the frontend emits as the f32 -> i32 -> f16 -> i8 chain."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

H, N = 64, 32
T = pypto.frontend.dynamic("T")
FP32, BF16, INT8, INT32 = pypto.DT_FP32, pypto.DT_BF16, pypto.DT_INT8, pypto.DT_INT32
EYE = np.eye(H, dtype=np.float32)  # the matmul that carries each rounded value to the output unchanged


def _ties(t: int, seed: int) -> np.ndarray:
    """Values with halves (the ties each mode resolves differently) and plain fractions."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, (t, H)) + rng.choice([0.5, 0.25, 0.75, 0.0], (t, H))
    return (x * rng.choice([1, -1], (t, H))).astype(np.float32)


@pytest.mark.parametrize(
    ("name", "want"),
    [("round", np.rint), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)],
)
@pytest.mark.parametrize("dtype", [FP32, BF16])
def test_rounding_to_an_integral_value(name: str, want, dtype) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], dtype), w: pypto.Tensor([H, H], FP32), out: pypto.Tensor([T, H], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pypto.view(x, [p, H], [i, 0])
            y = getattr(pypto, name)(xt) if name != "trunc" else xt.trunc()  # the function and the method
            pypto.assemble(pypto.matmul(pypto.cast(y, FP32), w, FP32), [i, 0], out)

    for t in (1, 6):
        x = _ties(t, t).astype(ml_dtypes.bfloat16 if dtype is BF16 else np.float32)
        out = np.zeros((t, H), np.float32)
        k(x, EYE, out)
        np.testing.assert_array_equal(out, want(x.astype(np.float32)))
    text = str(k.trace(x, EYE, out))
    mode = {"round": "rint"}.get(name, name)
    assert f" {mode} : tensor<?x{H}xf32> -> tensor<?x{H}xf32>" in text


def test_round_with_decimals_is_refused_at_the_users_line() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], FP32), w: pypto.Tensor([H, H], FP32), out: pypto.Tensor([T, H], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            y = pypto.view(x, [p, H], [i, 0]).round(decimals=1)
            pypto.assemble(pypto.matmul(y, w, FP32), [i, 0], out)

    with pytest.raises(pypto.BuildError, match=r"test_pypto_rounding.py:\d+: .*pypto.round with decimals=1"):
        k(np.zeros((4, H), np.float32), EYE, np.zeros((4, H), np.float32))


def _smooth_quant(satmode, mode=pypto.CastMode.CAST_NONE):
    """e36 of the outside corpus, small: `scale = amax * (1/127)`, `q = cast(round(x / scale),
    int8)` in one cast, an int8 matmul, the dequant."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([T, H], BF16),
        wq: pypto.Tensor([H, N], INT8),
        ws: pypto.Tensor([1, N], FP32),
        out: pypto.Tensor([T, N], FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32)
            scale = pypto.abs(xt).amax(-1, keepdim=True) * (1.0 / 127.0)
            q = pypto.cast((xt / scale).round(), INT8, mode, satmode=satmode)
            acc = pypto.matmul(q, wq, INT32)
            pypto.assemble(pypto.cast(acc, FP32) * scale * ws, [i, 0], out)

    return k


def _quant_inputs(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
    wq = rng.integers(-127, 128, (H, N)).astype(np.int8)
    ws = (0.001 + 0.001 * rng.random((1, N))).astype(np.float32)
    return x, wq, ws


def test_a_direct_saturating_cast_to_int8_is_the_hardware_chain() -> None:
    k = _smooth_quant(pypto.SaturationMode.ON)
    for t in (1, 5, 9):
        x, wq, ws = _quant_inputs(t)
        out = np.zeros((t, N), np.float32)
        k(x, wq, ws, out)
        # The kernel's own f32 arithmetic (a golden in f64 may flip a rint tie of x / scale).
        xf = x.astype(np.float32)
        scale = np.abs(xf).max(-1, keepdims=True) * np.float32(1 / 127)
        q = np.clip(np.rint(xf / scale), -128, 127)
        want = (q.astype(np.float64) @ wq.astype(np.float64)) * scale * ws
        assert check(out, want).ok, t
    module = k.trace(x, wq, ws, out)
    runs = [pto.run(pto.compile(module), [x, wq, ws], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0])
    assert runs[0].report.cycles == runs[1].report.cycles
    text = str(module)
    assert "rint : tensor<?x64xf32> -> tensor<?x64xi32>" in text
    assert "round : tensor<?x64xi32> -> tensor<?x64xf16>" in text
    assert "trunc sat : tensor<?x64xf16> -> tensor<?x64xi8>" in text


def test_the_casts_round_mode_and_saturation_go_to_their_steps() -> None:
    """The cast's mode rounds the first step (f32 -> i32); without saturation the last
    step (f16 -> i8) wraps, as the hardware's."""
    k = _smooth_quant(pypto.SaturationMode.OFF, pypto.CastMode.CAST_TRUNC)
    x, wq, ws = _quant_inputs(3)
    text = str(k.trace(x, wq, ws, np.zeros((3, N), np.float32)))
    assert "trunc : tensor<?x64xf32> -> tensor<?x64xi32>" in text
    assert "trunc : tensor<?x64xf16> -> tensor<?x64xi8>" in text and "sat" not in text


@pytest.mark.parametrize("via", [None, pypto.DT_FP16, FP32])
def test_a_cast_the_hardware_lacks_is_a_chain_of_exact_ones_and_one_that_rounds_last(via) -> None:
    """A W8A16 weight cast to bf16 (int8 -> bf16 directly, or through fp16 or fp32, which
    the hardware has no instruction for either): i8 -> f16 -> f32 -> bf16, each value
    exact; the identity's rows carry the weight's rows to the output."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([H, N], INT8), out: pypto.Tensor([T, N], FP32)):
        wb = pypto.cast(w if via is None else pypto.cast(w, via), BF16)
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [i, 0]), wb, FP32), [i, 0], out)

    w = np.random.default_rng(5).integers(-128, 128, (H, N)).astype(np.int8)
    x, out = EYE[:6].astype(ml_dtypes.bfloat16), np.zeros((6, N), np.float32)
    k(x, w, out)
    np.testing.assert_array_equal(out, w[:6].astype(np.float32))
    text = str(k.trace(x, w, out))
    for step in ("xi8> -> tensor", "xf16> -> tensor", "xf32> -> tensor"):
        assert step in text


def test_an_f16_cast_to_bf16_rounds_once_through_f32() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([H, N], pypto.DT_FP16), out: pypto.Tensor([T, N], FP32)):
        wb = pypto.cast(w, BF16)
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, H], [i, 0]), wb, FP32), [i, 0], out)

    w = np.random.default_rng(6).standard_normal((H, N)).astype(np.float16)
    x, out = EYE[:5].astype(ml_dtypes.bfloat16), np.zeros((5, N), np.float32)
    k(x, w, out)
    want = w[:5].astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)  # (f16 -> f32 exact; rint to bf16)
    np.testing.assert_array_equal(out, want)
    assert (want != w[:5].astype(np.float32)).any()  # (some of them round)


def test_a_cast_that_would_round_twice_is_refused_at_the_users_line() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], INT32), w: pypto.Tensor([H, N], BF16), out: pypto.Tensor([T, N], FP32)):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            xb = pypto.cast(pypto.view(x, [p, H], [i, 0]), BF16)
            pypto.assemble(pypto.matmul(xb, w, FP32), [i, 0], out)

    with pytest.raises(
        pypto.BuildError, match=r"test_pypto_rounding.py:\d+: .*pto.pypto: pypto.cast from DT_INT32 to DT_BF16"
    ):
        k(np.zeros((4, H), np.int32), np.zeros((H, N), ml_dtypes.bfloat16), np.zeros((4, N), np.float32))


def test_an_exact_chain_given_a_mode_is_refused_naming_the_users_cast() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([T, H], BF16), w: pypto.Tensor([H, N], INT8), out: pypto.Tensor([T, N], FP32)):
        wf = pypto.cast(w, FP32, pypto.CastMode.CAST_RINT)
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            pypto.assemble(pypto.matmul(pypto.cast(pypto.view(x, [p, H], [i, 0]), FP32), wf, FP32), [i, 0], out)

    with pytest.raises(
        pypto.BuildError, match=r"test_pypto_rounding.py:\d+: .*pypto.cast from DT_INT8 to DT_FP32 is exact"
    ):
        k(np.zeros((4, H), ml_dtypes.bfloat16), np.zeros((H, N), np.int8), np.zeros((4, N), np.float32))
