"""Whole-tile numpy kernels shared by the interpreter functions of every level.

One definition of each piece of math (casts with their round modes, RMSNorm, matmul,
quant, dequant) so that the `pto`, `tile` and `npu` levels compute the same thing and
the `pto` level can serve as the golden. Storage is exact: a value stored as bf16/f16
is rounded to that type (through `ml_dtypes`); float math is done in f32, integer
matmuls accumulate in int32.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from pto.dialects.common import ReduceKind, RoundMode

DTYPES: dict[str, np.dtype] = {
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32),
}
NAMES = {v: k for k, v in DTYPES.items()}
_BF16 = DTYPES["bf16"]
_INT_RANGE = {"i8": (-128, 127), "i32": (-(2**31), 2**31 - 1)}


def f32(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype == _BF16:
        # A bf16 is the top half of the f32 of the same value: the shift is exact for
        # all 65536 patterns (NaNs too) and twice as fast as ml_dtypes' cast. Widening
        # first and shifting in place is a quarter faster than a shift that widens.
        wide = x.view(np.uint16).astype(np.uint32)
        wide <<= 16
        return wide.view(np.float32)
    return x.astype(np.float32, copy=False)


def _choose(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, near: np.ndarray, mode: RoundMode) -> np.ndarray:
    """Pick between the two neighbours `lo <= x <= hi` (as f64) by round mode."""
    if mode == RoundMode.FLOOR:
        return lo
    if mode == RoundMode.CEIL:
        return hi
    if mode == RoundMode.TRUNC:
        return np.where(x >= 0, lo, hi)
    if mode == RoundMode.ROUND:  # ties away from zero; otherwise the nearest
        tie = (x - lo) == (hi - x)
        return np.where(tie, np.where(x >= 0, hi, lo), near)
    return near  # RINT: the hardware's default, ties to even


def _round_to_bf16(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    x = f32(x)
    if mode == RoundMode.RINT:
        return x.astype(DTYPES["bf16"])
    bits = x.view(np.uint32)
    toward0 = (bits & np.uint32(0xFFFF0000)).view(np.float32)
    away = ((bits & np.uint32(0xFFFF0000)) + np.uint32(0x10000)).view(np.float32)
    exact = toward0 == x
    pos = x >= 0
    lo = np.where(exact, x, np.where(pos, toward0, away)).astype(np.float64)
    hi = np.where(exact, x, np.where(pos, away, toward0)).astype(np.float64)
    near = x.astype(DTYPES["bf16"]).astype(np.float64)
    return _choose(x.astype(np.float64), lo, hi, near, mode).astype(np.float32).astype(DTYPES["bf16"])


def _round_to_float(x: np.ndarray, dtype: np.dtype, mode: RoundMode) -> np.ndarray:
    """f64 values -> an IEEE type (f32/f16) with a round mode."""
    near = x.astype(dtype)
    if mode == RoundMode.RINT:
        return near
    nd = near.astype(np.float64)
    if (nd == x).all():  # every value converts exactly (an int32 below 2^24 to f32): any mode's
        return near
    lo = np.where(nd > x, np.nextafter(near, dtype.type(-np.inf)), near).astype(np.float64)
    hi = np.where(nd < x, np.nextafter(near, dtype.type(np.inf)), near).astype(np.float64)
    return _choose(x, lo, hi, nd, mode).astype(dtype)


# The modes whose integral value of a float is exact in that float's type (ROUND's
# floor(|x| + 0.5) is not: f32 would round the sum).
_INTEGRAL = {RoundMode.RINT: np.rint, RoundMode.TRUNC: np.trunc, RoundMode.FLOOR: np.floor, RoundMode.CEIL: np.ceil}


def _round_to_int(x: np.ndarray, mode: RoundMode) -> np.ndarray:
    x = x.astype(np.float64, copy=False)
    if mode == RoundMode.ROUND:
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    return _INTEGRAL.get(mode, np.ceil)(x)


# The integers a float type holds exactly: those of magnitude up to 2^(its mantissa bits + 1).
_EXACT_INT = {"f32": 2**24, "f16": 2**11}


def _exact_ints(x: np.ndarray, dst: str, mode: RoundMode) -> bool:
    """Whether numpy's own cast of integers `x` to float type `dst` is the conversion in
    `mode`: every value converts exactly (then any mode's result is the value), or `dst`
    is f32 rounding to nearest even, as numpy's integer -> f32 cast does. (Through f64
    first, a dequant's 4M int32s took 2.75 ns each, against 0.5 directly.)"""
    if dst == "f32" and mode in (RoundMode.RINT, RoundMode.NONE):
        return True
    return x.size == 0 or (-_EXACT_INT[dst] <= int(x.min()) and int(x.max()) <= _EXACT_INT[dst])


def cast(x: np.ndarray, src: str, dst: str, mode: RoundMode, sat: bool = False) -> np.ndarray:
    """The hardware conversion `src -> dst` (the table of `pto.dialects.common.CASTS`), exactly."""
    out = DTYPES[dst]
    if src in _INT_RANGE and dst in _EXACT_INT and _exact_ints(np.asarray(x), dst, mode):
        return np.asarray(x).astype(out)
    if dst in _INT_RANGE:
        lo, hi = _INT_RANGE[dst]
        if src not in _INT_RANGE and mode in _INTEGRAL:
            # (found in f32, exactly, and cast as it is when every value is in range, which
            # a NaN is not: a quant's f32 -> i32 took 4.3 ns an element through f64, 0.4 so)
            v32 = _INTEGRAL[mode](f32(x))
            if v32.size and lo <= float(v32.min()) and float(v32.max()) <= hi:  # (2^31 - 1 in f32 is 2^31)
                return v32.astype(out)
        v = _round_to_int(np.asarray(x).astype(np.float64), mode if src not in _INT_RANGE else RoundMode.TRUNC)
        if sat or dst == "i32":
            return np.clip(v, lo, hi).astype(out)
        return v.astype(np.int64).astype(out)  # wraps, like the hardware without saturation
    if dst == "bf16":
        return _round_to_bf16(x, mode)
    if src == dst == "f32":  # to an integral value; every f32 of magnitude >= 2^23 is one
        return _round_to_int(f32(x), mode).astype(np.float32)
    if src in ("bf16", "f16") and dst == "f32":
        return f32(x)
    return _round_to_float(np.asarray(x).astype(np.float64), out, mode if mode != RoundMode.NONE else RoundMode.RINT)


def store(value: np.ndarray, dst: str) -> np.ndarray:
    """A computed f32/int value as stored in a `dst` buffer (round to nearest even)."""
    return np.asarray(value).astype(DTYPES[dst])


def rms_norm(x: np.ndarray, gamma: np.ndarray | None, eps: float) -> np.ndarray:
    xf = f32(x)
    ms = np.mean(xf * xf, axis=-1, keepdims=True, dtype=np.float32)
    # SK03.md's golden divides by the root (not a multiply by its reciprocal, which
    # differs in the last bit and flips int8 values at .5 ties after quant).
    y = xf / np.sqrt(ms + np.float32(eps))
    return y * f32(gamma) if gamma is not None else y


# A product of int8s is at most 128 * 128 = 2^14 in size, so K of them sum below 2^53, where
# float64 holds every integer: a float64 BLAS product of int8s is exact in any order. Up to
# K = 2^24 / 2^14 every partial sum is an integer float32 holds too: a float32 product, four
# times faster (a tile's K: the int8 example's per-task products, 0.53 -> 0.14 ms each).
F64_EXACT_INT8_K = 2**53 // 2**14
F32_EXACT_INT8_K = 2**24 // 2**14


def matmul(a: np.ndarray, b: np.ndarray, a_trans: bool = False, b_trans: bool = False) -> np.ndarray:
    """Cube math: f32 accumulation for float inputs, int32 for int8 (wrapping)."""
    if a_trans:
        a = np.swapaxes(a, -1, -2)
    if b_trans:
        b = np.swapaxes(b, -1, -2)
    if a.dtype == np.int8:
        if a.shape[-1] <= F32_EXACT_INT8_K:  # exact, and within int32: no wrap-around
            return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.int32)
        if a.shape[-1] <= F64_EXACT_INT8_K:  # BLAS, exact: every partial sum is an integer below 2^53
            wide = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
        else:  # numpy's integer matmul: exact at any K, without BLAS
            wide = a.astype(np.int64) @ b.astype(np.int64)
        return wide.astype(np.int32)  # the accumulator wraps (mod 2^32, in any order)
    return f32(a) @ f32(b)


def reduce(x: np.ndarray, kind: ReduceKind) -> np.ndarray:
    xf = x if x.dtype in (np.float32, np.int32) else f32(x)
    if kind == ReduceKind.SUM:
        return np.sum(xf, axis=-1, keepdims=True, dtype=xf.dtype)
    if kind == ReduceKind.MEAN:
        return np.mean(xf, axis=-1, keepdims=True, dtype=xf.dtype)
    if kind == ReduceKind.MAX:
        return np.max(xf, axis=-1, keepdims=True)
    if kind == ReduceKind.MIN:
        return np.min(xf, axis=-1, keepdims=True)
    return np.max(np.abs(xf), axis=-1, keepdims=True)


def quant(x: np.ndarray, wrap: bool = False, order: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-token int8: q = the RINT -> ROUND -> TRUNC(sat) chain of x*127/amax
    (the last step wrapping instead, with `wrap`; the quotient in the `order` written)."""
    xf = f32(x)
    amax = np.max(np.abs(xf), axis=-1, keepdims=True)
    if order == "scale_first":
        y = xf * (np.float32(127) / amax)
    elif order == "divide_first":
        y = xf / amax * np.float32(127)
    elif order == "reciprocal_first":
        y = xf * (np.float32(1) / amax) * np.float32(127)
    elif order == "reciprocal_scale_first":
        y = xf * (np.float32(1) / amax * np.float32(127))
    else:
        y = xf * np.float32(127) / amax
    i = cast(y, "f32", "i32", RoundMode.RINT)
    h = cast(i, "i32", "f16", RoundMode.ROUND)
    q = cast(h, "f16", "i8", RoundMode.TRUNC, sat=not wrap)
    return q, amax / np.float32(127)


def dequant(
    acc: np.ndarray,
    act_scale: np.ndarray,
    w_scale: np.ndarray | None,
    w_scale_first: bool = False,
    scales_product: bool = False,
) -> np.ndarray:
    """f32(acc) times both scales, in the op's order (each f32 product rounds)."""
    scales = [f32(act_scale)] + ([] if w_scale is None else [f32(w_scale).reshape(1, -1)])
    y = f32(acc)
    if scales_product:
        return y * (scales[0] * scales[1])
    for s in reversed(scales) if w_scale_first else scales:
        y = y * s
    return y


# `select`'s comparisons (NaN compares false but for `ne`, as IEEE's and the device's do).
COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def select(predicate: str, lhs, rhs, on_true, on_false) -> np.ndarray:
    """`where(lhs PRED rhs, on_true, on_false)`: the compared values in f32 (their exact
    values: bf16 and f16 widen exactly), the selected ones as they are."""
    return np.where(COMPARE[predicate](f32(lhs), f32(rhs)), on_true, on_false)


def unary(name: str, x: np.ndarray) -> np.ndarray:
    xf = f32(x)
    if name == "sqrt":
        return np.sqrt(xf)
    if name == "rsqrt":
        return np.float32(1) / np.sqrt(xf)
    if name == "abs":
        return np.abs(xf)
    if name == "reciprocal":
        return np.float32(1) / xf
    if name == "log":
        with np.errstate(divide="ignore", invalid="ignore"):  # ln(0) = -inf, ln(x < 0) = NaN, as on the device
            return np.log(xf)
    return np.exp(xf)


def poison(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An output buffer before the kernel runs: NaN for floats, the minimum for ints, so
    that an unwritten element shows."""
    fill = np.array(np.iinfo(dtype).min if dtype.kind in "iu" else np.nan, dtype)
    # Filled as raw bits: ml_dtypes fills a bf16 array element by element, 13x slower.
    raw = np.dtype(f"u{dtype.itemsize}")
    return np.full(shape, fill.view(raw), raw).view(dtype)
