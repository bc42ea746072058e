"""Exact storage and conversions: round modes, saturation, the int8 quant chain."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pto.dialects.common import RoundMode
from pto.interp import numerics as nx

BF16 = ml_dtypes.bfloat16
R = RoundMode


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        (R.RINT, [2, 2, -2, -2, 4, 1]),
        (R.ROUND, [3, 2, -3, -2, 4, 1]),
        (R.TRUNC, [2, 2, -2, -2, 3, 1]),
        (R.FLOOR, [2, 2, -3, -3, 3, 1]),
        (R.CEIL, [3, 3, -2, -2, 4, 2]),
    ],
)
def test_f32_to_i32_modes(mode, want) -> None:
    x = np.array([2.5, 2.25, -2.5, -2.25, 3.5, 1.0000001], np.float32)
    assert nx.cast(x, "f32", "i32", mode).tolist() == want


@pytest.mark.parametrize("mode", list(R)[1:])
def test_f32_to_f32_rounds_to_an_integral_value_in_the_mode(mode) -> None:
    x = np.array([2.5, 2.25, -2.5, -2.25, 3.5, 1.0000001, 2.0**30 + 64, -0.0], np.float32)
    got = nx.cast(x, "f32", "f32", mode)
    assert got.dtype == np.float32
    want = nx.cast(x[:6], "f32", "i32", mode).astype(np.float32)
    assert got[:6].tolist() == want.tolist() and got[6] == x[6]  # (beyond 2^23 every f32 is integral)


def test_round_ties_away_is_exact_near_half() -> None:
    # 0.49999997 + 0.5 rounds to 1.0 in f32: a naive floor(x + 0.5) gets this wrong.
    x = np.array([0.49999997, -0.49999997], np.float32)
    assert nx.cast(x, "f32", "i32", R.ROUND).tolist() == [0, 0]


def test_bf16_round_modes() -> None:
    one, ulp = 1.0, 2.0**-7  # bf16 has 8 significant bits
    x = np.array([one + ulp / 2, one + ulp * 0.75, -(one + ulp / 2), one + ulp * 1.5], np.float32)
    f = lambda m: nx.cast(x, "f32", "bf16", m).astype(np.float32).tolist()  # noqa: E731
    assert f(R.RINT) == [1.0, 1 + ulp, -1.0, 1 + 2 * ulp]
    assert f(R.ROUND) == [1 + ulp, 1 + ulp, -(1 + ulp), 1 + 2 * ulp]
    assert f(R.TRUNC) == [1.0, 1.0, -1.0, 1 + ulp]
    assert f(R.FLOOR) == [1.0, 1.0, -(1 + ulp), 1 + ulp]
    assert f(R.CEIL) == [1 + ulp, 1 + ulp, -1.0, 1 + 2 * ulp]
    assert nx.cast(x, "f32", "bf16", R.RINT).dtype == BF16


def test_f16_round_modes_and_exact_input() -> None:
    ulp = 2.0**-10
    x = np.array([1 + ulp / 2, 1 + ulp / 4, 1.0], np.float32)
    assert nx.cast(x, "f32", "f16", R.RINT).astype(np.float32).tolist() == [1.0, 1.0, 1.0]
    assert nx.cast(x, "f32", "f16", R.CEIL).astype(np.float32).tolist() == [1 + ulp, 1 + ulp, 1.0]
    assert nx.cast(x, "f32", "f16", R.ROUND).astype(np.float32).tolist() == [1 + ulp, 1.0, 1.0]


@pytest.mark.parametrize("mode", list(R))
def test_a_cast_every_value_of_which_is_exact_is_the_plain_conversion_in_every_mode(mode) -> None:
    """Values the destination holds exactly (int32s of an int8 product to f16: the int8
    example's dequant) skip the neighbours' search: each mode's answer is the value,
    bit for bit, -0.0 included; one inexact value sends the whole array the long way."""
    x = np.array([0, -3, 2047, -2048, 1024, 7], np.int32)
    for src, dst in (("i32", "f16"), ("i32", "f32")):
        got = nx.cast(x, src, dst, mode)
        assert got.dtype == nx.DTYPES[dst] and got.tolist() == x.tolist()
    zeros = np.array([-0.0, 0.0, 1.5], np.float32)
    assert nx.cast(zeros, "f32", "f16", mode).view(np.uint16).tolist() == [0x8000, 0, 0x3E00]
    inexact = np.array([2049, 2, -2049], np.int32)  # f16 has 11 significant bits
    want = {R.FLOOR: [2048, 2, -2050], R.CEIL: [2050, 2, -2048], R.TRUNC: [2048, 2, -2048]}
    want_near = [2048, 2, -2048]  # RINT (ties to even) and ROUND's nearest: 2049 is a tie
    got = nx.cast(inexact, "i32", "f16", mode).astype(np.float64).tolist()
    assert got == want.get(mode, [2050, 2, -2050] if mode == R.ROUND else want_near)


@pytest.mark.parametrize("mode", list(R))
def test_an_int32_cast_to_f32_is_the_conversion_through_f64_in_every_mode(mode) -> None:
    """numpy's own int32 -> f32 cast (taken for RINT, and for values f32 holds exactly)
    against the neighbours' search on the exact f64 values: ties above 2^24 (2^24 + 1
    lies between two f32s), the int32 extremes, random values over the whole range."""
    rng = np.random.default_rng(33)
    ties = np.array([2**24 + 1, 2**24 + 3, 2**25 + 2, 2**25 + 6, 2**31 - 64, 2**31 - 192], np.int64)
    x = np.concatenate(
        [ties, -ties, [2**31 - 1, -(2**31), 2**24, -(2**24), 0], rng.integers(-(2**31), 2**31, 100_000)]
    ).astype(np.int32)
    want = nx._round_to_float(x.astype(np.float64), np.dtype(np.float32), R.RINT if mode == R.NONE else mode)
    got = nx.cast(x, "i32", "f32", mode)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    small = x[np.abs(x.astype(np.int64)) <= 2**24]
    assert np.array_equal(nx.cast(small, "i32", "f32", mode), small.astype(np.float64))


@pytest.mark.parametrize("mode", [R.RINT, R.TRUNC, R.FLOOR, R.CEIL, R.ROUND])
def test_a_float_to_int_cast_is_the_conversion_through_f64_in_every_mode(mode) -> None:
    """The integral value found in f32 (and cast as it is when every value is in range)
    against rounding the exact f64 values: every f16 and bf16 bit pattern (infinities
    and NaNs send an array the f64 way), and every finite one of magnitude up to 127
    (each value in range for i8: the f32 way), f32s at halves, near 2^31 and random."""
    rng = np.random.default_rng(34)
    halves = np.arange(-300, 300, dtype=np.float32) / 2
    f32s = np.concatenate([halves, [2.0**31 - 128, -(2.0**31), 2.0**31, 0.49999997, -0.0], rng.normal(0, 1e3, 10_000)])
    patterns = np.arange(2**16, dtype=np.uint32).astype(np.uint16)

    def small(x: np.ndarray) -> np.ndarray:
        wide = x.astype(np.float32)
        return x[np.isfinite(wide) & (np.abs(wide) <= 127)]

    arrays = {
        "f16": [patterns.view(np.float16), small(patterns.view(np.float16)), halves.astype(np.float16)],
        "bf16": [patterns.view(BF16), small(patterns.view(BF16)), halves.astype(BF16)],
        "f32": [f32s.astype(np.float32), halves],
    }
    for src, xs in arrays.items():
        for x in xs:
            for dst, sat in (("i8", True), ("i8", False), ("i32", False)):
                lo, hi = nx._INT_RANGE[dst]
                with np.errstate(invalid="ignore"):
                    v = nx._round_to_int(x.astype(np.float64), mode)
                    want = np.clip(v, lo, hi) if sat or dst == "i32" else v.astype(np.int64)
                    want = want.astype(nx.DTYPES[dst])
                    got = nx.cast(x, src, dst, mode, sat)
                assert got.dtype == want.dtype and np.array_equal(got, want), (src, dst, sat)


def test_saturation() -> None:
    h = np.array([300, -300, 127.9, -128.5], np.float16)
    assert nx.cast(h, "f16", "i8", R.TRUNC, sat=True).tolist() == [127, -128, 127, -128]
    assert nx.cast(h, "f16", "i8", R.TRUNC, sat=False).tolist()[:2] == [300 - 256, -300 + 256]
    assert nx.cast(np.array([3e9, -3e9], np.float32), "f32", "i32", R.RINT).tolist() == [2**31 - 1, -(2**31)]


def test_quant_chain_bit_exact_with_sk03_golden() -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 1024)) * 3).astype(np.float32)
    x[0, :4] = [0.5 / 127 * 4, -1.5 / 127 * 4, 4.0, -4.0]  # exact ties
    q, scale = nx.quant(x)
    amax = np.max(np.abs(x), axis=-1, keepdims=True)
    want = np.clip(np.trunc(np.rint(x * np.float32(127) / amax)), -128, 127).astype(np.int8)
    assert np.array_equal(q, want)
    assert np.allclose(scale, amax / 127, rtol=1e-7)


def test_storage_rounds_to_bf16() -> None:
    assert nx.store(np.float32(1 + 2.0**-8 + 2.0**-12), "bf16").astype(np.float32) == 1 + 2.0**-7


def test_matmul_accumulates_int8_in_int32() -> None:
    a = np.full((2, 300), 127, np.int8)
    b = np.full((300, 3), -128, np.int8)
    assert nx.matmul(a, b).dtype == np.int32
    assert int(nx.matmul(a, b)[0, 0]) == 127 * -128 * 300


def test_int8_matmul_through_float64_blas_is_exact_and_wraps(monkeypatch) -> None:
    """The float64 product equals numpy's integer one, wrap-around included, on both
    sides of the K past which it is not used."""
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (5, 4096)).astype(np.int8)
    b = rng.integers(-128, 128, (4096, 7)).astype(np.int8)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    assert np.array_equal(nx.matmul(a, b), want)
    worst = np.full((1, 140_000), -128, np.int8)  # 140000 * 2^14 > 2^31: the sum wraps
    wrapped = np.int64(140_000 * 2**14).astype(np.int32)
    assert nx.matmul(worst, worst.T)[0, 0] == wrapped
    monkeypatch.setattr(nx, "F64_EXACT_INT8_K", 1000)  # past it: the integer product
    assert np.array_equal(nx.matmul(a, b), want) and nx.matmul(worst, worst.T)[0, 0] == wrapped


@pytest.mark.parametrize("k", [256, 1024, 1025])
def test_int8_matmul_of_a_tiles_k_through_float32_blas_is_exact(monkeypatch, k: int) -> None:
    """Up to K = 1024 every partial sum of int8 products is an integer float32 holds:
    the float32 product is the integer one, at the extremes too; past it float64."""
    rng = np.random.default_rng(k)
    a = rng.integers(-128, 128, (9, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, 5)).astype(np.int8)
    a[0], b[:, 0], b[:, 1], a[1] = -128, -128, 127, 127  # (the largest sums of either sign)
    products: list[np.dtype] = []
    real = np.matmul

    def seen(x, y):
        products.append(x.dtype)
        return real(x, y)

    monkeypatch.setattr(nx.np, "matmul", seen)
    got = nx.matmul(a, b)
    assert np.array_equal(got, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))
    assert got[0, 0] == k * 2**14 and got.dtype == np.int32
    assert products == [np.dtype(np.float32 if k <= nx.F32_EXACT_INT8_K else np.float64)]


def test_rms_norm_divides_as_the_sk03_golden() -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((256, 1024)) * 2).astype(np.float32)
    want = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(1e-6))
    assert np.array_equal(nx.rms_norm(x, None, 1e-6), want)


def test_dequant_multiplies_the_scales_in_its_order() -> None:
    """f32 products round: the weight scale first (w_scale_first) is another result."""
    rng = np.random.default_rng(2)
    acc = rng.integers(-(2**20), 2**20, (64, 48)).astype(np.int32)
    s, ws = rng.random((64, 1), dtype=np.float32), rng.random((48, 1), dtype=np.float32)
    f = acc.astype(np.float32)
    act_first, w_first = f * s * ws.reshape(1, -1), f * ws.reshape(1, -1) * s
    assert np.array_equal(nx.dequant(acc, s, ws), act_first)
    assert np.array_equal(nx.dequant(acc, s, ws, w_scale_first=True), w_first)
    assert not np.array_equal(act_first, w_first)


def _sk03_quant_golden(x, gamma, w, w_scale):
    """SK03.md's formulas, written independently of the interpreter's numerics."""
    xf = x.astype(np.float32)
    n = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    amax = np.max(np.abs(n), axis=-1, keepdims=True)
    q = np.clip(np.trunc(np.rint(n * np.float32(127) / amax)), -128, 127)
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    out = (acc.astype(np.float32) * (amax / np.float32(127)) * w_scale.reshape(1, -1)).astype(ml_dtypes.bfloat16)
    return out, q.astype(np.int8)


def test_quant_form_at_the_npu_level_matches_the_sk03_golden() -> None:
    # Odd integers with 254 in every row put x * 127 / amax exactly on .5 ties; a
    # reciprocal-root multiply moved 19% of them to the other side (issue 10).
    import pto

    k = pto.Kernel("q", target="ascend910b1", unroll=[16, 8, 1])
    x, gamma = k.arg("x", [None, 256], "bf16"), k.arg("gamma", [256], "bf16")
    w, w_scale = k.arg("w", [32, 256], "i8"), k.arg("w_scale", [32, 1], "f32")
    q, s = pto.quant(pto.rms_norm(x, gamma, eps=1e-6))
    k.ret(pto.cast(pto.dequant(pto.matmul(q, w, b_trans=True), s, w_scale), "bf16"), q)
    compiled = pto.compile(k.module())
    rng = np.random.default_rng(3)
    x = (rng.integers(-20, 20, (61, 256)) * 2 + 1).astype(ml_dtypes.bfloat16)
    x[:, 0] = 254
    ins = [
        x,
        np.ones(256, ml_dtypes.bfloat16),
        rng.integers(-128, 128, (32, 256)).astype(np.int8),
        rng.random((32, 1), dtype=np.float32),
    ]
    out, q8 = pto.run(compiled, ins).outputs
    want_out, want_q = _sk03_quant_golden(*ins)
    assert np.array_equal(q8, want_q), f"{(q8 != want_q).sum()} of {q8.size} int8 values differ"
    assert pto.check(out, want_out).ok
