"""pto-fuse-stages end to end: kernels whose RMSNorm, quant and dequant are written
from primitives become the fused form (the same IR up to SSA names), lower through the
default pipeline, and compute what the primitive kernel computes (SK03.md's
acceptance rule against the primitive kernel run at the pto level)."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from kernels import lowered, parse

import pto
import pto.pypto as pypto
from pto.interp.golden import check
from pto.interp.run import random_inputs, signature

# V -> C: RMSNorm (sum * 1/K, rsqrt, a bf16 gamma cast and reshaped to [1, K]) -> matmul.
STANDARD_PRIM = """
func.func @k(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 16, 1>} {
  %xf = pto.cast %x none {pto.label = "rmsnorm"} : tensor<?x256xbf16> -> tensor<?x256xf32>
  %sq = pto.mul %xf, %xf {pto.label = "rmsnorm"} : tensor<?x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  %s = pto.reduce sum %sq {pto.label = "rmsnorm"} : tensor<?x256xf32> -> tensor<?x1xf32>
  %m = pto.muls %s, 0.00390625 {pto.label = "rmsnorm"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 {pto.label = "rmsnorm"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e {pto.label = "rmsnorm"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %nn = pto.mul %xf, %r {pto.label = "rmsnorm"} : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %gf = pto.cast %g none : tensor<256xbf16> -> tensor<256xf32>
  %gr = pto.reshape %gf inplace : tensor<256xf32> -> tensor<1x256xf32>
  %n = pto.mul %nn, %gr {pto.label = "rmsnorm", pto.vec_tile = array<i64: 4, 256>} : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  %nb = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %nb, %w b_trans {pto.label = "linear"} : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}
"""
STANDARD_FUSED = """
func.func @k(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 16, 1>} {
  %n = pto.rms_norm %x, %g eps = 1.0e-06 {pto.label = "rmsnorm", pto.vec_tile = array<i64: 4, 256>} : tensor<?x256xbf16>, tensor<256xbf16> -> tensor<?x256xf32>
  %nb = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %nb, %w b_trans {pto.label = "linear"} : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}
"""

# AT-11: RMSNorm (mean, sqrt, div) -> quant (x * 127 / amax, the cast chain) -> int8
# matmul -> dequant by both scales (the weight scale an [N, 1] reshaped to [1, N]).
QUANT_PRIM = """
func.func @k(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %w: tensor<256x256xi8>, %ws: tensor<256x1xf32>) -> tensor<?x256xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 16, 1>} {
  %xf = pto.cast %x none : tensor<?x256xbf16> -> tensor<?x256xf32>
  %sq = pto.mul %xf, %xf : tensor<?x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  %ms = pto.reduce mean %sq : tensor<?x256xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %rt = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %nn = pto.div %xf, %rt {pto.label = "q-rmsnorm"} : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %gf = pto.cast %g none : tensor<256xbf16> -> tensor<256xf32>
  %n = pto.mul %nn, %gf : tensor<?x256xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %am = pto.reduce absmax %n {pto.label = "quant"} : tensor<?x256xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %m127 = pto.muls %n, 127.0 : tensor<?x256xf32> -> tensor<?x256xf32>
  %yq = pto.div %m127, %am : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %i = pto.cast %yq rint : tensor<?x256xf32> -> tensor<?x256xi32>
  %h = pto.cast %i round : tensor<?x256xi32> -> tensor<?x256xf16>
  %q = pto.cast %h trunc sat : tensor<?x256xf16> -> tensor<?x256xi8>
  %acc = pto.matmul %q, %w b_trans : tensor<?x256xi8>, tensor<256x256xi8> -> tensor<?x256xi32>
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %wr = pto.reshape %ws inplace : tensor<256x1xf32> -> tensor<1x256xf32>
  %d = pto.mul %a, %wr {pto.label = "dequant"} : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  %o = pto.cast %d rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  func.return %o : tensor<?x256xbf16>
}
"""
QUANT_FUSED = """
func.func @k(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %w: tensor<256x256xi8>, %ws: tensor<256x1xf32>) -> tensor<?x256xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 16, 1>} {
  %n = pto.rms_norm %x, %g eps = 1.0e-06 {pto.label = "q-rmsnorm"} : tensor<?x256xbf16>, tensor<256xbf16> -> tensor<?x256xf32>
  %q, %s = pto.quant %n {pto.label = "quant"} : tensor<?x256xf32> -> tensor<?x256xi8>, tensor<?x1xf32>
  %acc = pto.matmul %q, %w b_trans : tensor<?x256xi8>, tensor<256x256xi8> -> tensor<?x256xi32>
  %d = pto.dequant %acc, %s, %ws {pto.label = "dequant"} : tensor<?x256xi32>, tensor<?x1xf32>, tensor<256x1xf32> -> tensor<?x256xf32>
  %o = pto.cast %d rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  func.return %o : tensor<?x256xbf16>
}
"""

# C -> V: matmul, then an RMSNorm of its f32 result (mean, rsqrt, an f32 [K] gamma).
CV_PRIM = """
func.func @k(%x: tensor<?x128xbf16>, %w: tensor<128x64xbf16>, %g: tensor<64xf32>) -> tensor<?x64xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 8, 1>} {
  %y = pto.matmul %x, %w : tensor<?x128xbf16>, tensor<128x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %y, %y : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %ms = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %nn = pto.mul %r, %y : tensor<?x1xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %n = pto.mul %g, %nn : tensor<64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %o = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return %o : tensor<?x64xbf16>
}
"""
CV_FUSED = """
func.func @k(%x: tensor<?x128xbf16>, %w: tensor<128x64xbf16>, %g: tensor<64xf32>) -> tensor<?x64xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 8, 1>} {
  %y = pto.matmul %x, %w : tensor<?x128xbf16>, tensor<128x64xbf16> -> tensor<?x64xf32>
  %n = pto.rms_norm %y, %g eps = 1.0e-06 : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %o = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return %o : tensor<?x64xbf16>
}
"""

CASES = {"standard": (STANDARD_PRIM, STANDARD_FUSED), "quant": (QUANT_PRIM, QUANT_FUSED), "c_v": (CV_PRIM, CV_FUSED)}


def canonical(text: str) -> str:
    """The IR with SSA names numbered by first appearance."""
    names: dict[str, str] = {}
    return re.sub(r"%[\w.$-]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


@pytest.mark.parametrize("case", CASES)
def test_primitive_form_becomes_the_fused_form(case: str) -> None:
    prim, fused = (parse(t) for t in CASES[case])
    assert canonical(str(lowered(prim, "pto-fuse-stages"))) == canonical(str(fused))
    assert str(lowered(fused, "pto-fuse-stages")) == str(fused)  # nothing left to fuse


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tokens", [1, 21])
def test_both_forms_lower_and_agree(case: str, tokens: int) -> None:
    prim, fused = (parse(t) for t in CASES[case])
    xs = random_inputs(signature(prim), tokens, seed=tokens)
    want = pto.run(prim, xs, level="pto").outputs  # the primitive kernel, unfused
    for m in (prim, fused):
        compiled = pto.compile(m)
        assert "pto.rms_norm" in compiled.text("pto")
        got = pto.run(compiled, xs).outputs
        for g, w in zip(got, want, strict=True):
            assert check(g, w).ok, check(g, w).describe(case)
    # The fused op at the pto level is within the rule of the primitive chain too.
    for g, w in zip(pto.run(fused, xs, level="pto").outputs, want, strict=True):
        assert check(g, w).ok


def test_quant_form_is_classified_after_fusion() -> None:
    m = lowered(parse(QUANT_PRIM), "pto-fuse-stages,pto-classify-skeleton")
    assert "pto.form = #pto.form<quant>" in str(m)


def test_mhc_pre_norm_is_not_fused() -> None:
    """hc_pre divides the matmul result by the root of x's mean square: not an RMSNorm
    of a tensor, so the pass leaves it and its lowering alone."""
    from kernels import example

    m = example("hc_pre.mlir")
    assert str(lowered(m, "pto-fuse-stages")) == str(m)


def test_primitive_norm_from_the_python_api() -> None:
    """The Python builder's primitive ops give the same fused op."""
    k = pto.Kernel("k", target="ascend910b1")
    x = k.arg("x", [None, 64], "bf16")
    w = k.arg("w", [32, 64], "bf16")
    xf = pto.cast(x, "f32")
    n = xf * pto.rsqrt(pto.adds(pto.reduce(xf * xf, "sum") * (1 / 64), 1e-6))
    k.ret(pto.matmul(pto.cast(n, "bf16"), w, b_trans=True))
    m = lowered(k.module(), "pto-fuse-stages")
    assert "pto.rms_norm %x eps = 1.000000e-06" in str(m)
    xs = [np.asarray(a) for a in random_inputs(signature(k.module()), 5, seed=1)]
    want = pto.run(k.module(), xs, level="pto").outputs[0]
    assert check(pto.run(k.module(), xs).outputs[0], want).ok


# ------------------------------------------------------------ the forms PyPTO authors write
# Each spelling is traced by pto.pypto (as a kernel author's code would be) and must be
# fused; where the fused op computes what the spelling computes, bit for bit. Each casts
# x (and takes amax) where it uses it, as a helper given the bf16 tile does: the same
# values, computed again.

KP, NP, EPS = 64, 32, 1e-6  # K a power of two: sum * (1/K) is then sum / K exactly
F32, BF = pypto.DT_FP32, pypto.DT_BF16


def _f32(t):
    return pypto.cast(t, F32)


def _mean(xf):
    return pypto.sum(xf * xf, -1, keepdim=True) / KP  # x / c is x * (1 / c) in pto.pypto


def _gamma32(g):
    return _f32(pypto.reshape(g, [1, KP], inplace=True))


# Spellings of RMSNorm(x) * gamma, x a bf16 tile and gamma [K] bf16.
def _rsqrt(x, g):
    return _f32(x) * pypto.rsqrt(_mean(_f32(x)) + EPS) * _gamma32(g)


def _div_sqrt(x, g):
    return _f32(x) / pypto.sqrt(_mean(_f32(x)) + EPS) * _gamma32(g)


def _mul_reciprocal_sqrt(x, g):
    return _f32(x) * pypto.reciprocal(pypto.sqrt(_mean(_f32(x)) + EPS)) * _gamma32(g)


def _one_over_sqrt(x, g):
    return _f32(x) * (1 / pypto.sqrt(_mean(_f32(x)) + EPS)) * _gamma32(g)


def _full_over_sqrt(x, g):
    return _f32(x) * pypto.div(pypto.full([1, 1], 1.0, F32), pypto.sqrt(_mean(_f32(x)) + EPS)) * _gamma32(g)


def _eps_as_full(x, g):
    return _f32(x) / pypto.sqrt(pypto.add(_mean(_f32(x)), pypto.full([1, 1], EPS, F32))) * _gamma32(g)


def _sum_of_scaled_squares(x, g):  # PyPTO's own rms_norm formula, each factor cast
    return _f32(x) / pypto.sqrt(pypto.sum(_f32(x) * _f32(x) * (1.0 / KP), -1, keepdim=True) + EPS) * _gamma32(g)


# spelling: whether it computes pto.rms_norm's bits (x / sqrt: yes; x * rsqrt: the last
# bit may differ, the standard the pass has always kept for that form)
NORM_SPELLINGS = {
    _rsqrt: False,
    _div_sqrt: True,
    _mul_reciprocal_sqrt: True,  # traced as x / sqrt
    _one_over_sqrt: True,
    _full_over_sqrt: True,
    _eps_as_full: True,
    _sum_of_scaled_squares: True,
}


def _norm_kernel(norm, f32_gamma: bool = False):
    """x [T, K] bf16 -> norm(x tile, gamma) -> bf16 -> matmul with w [N, K]; gamma [K]
    bf16, or [1, K] f32 (`f32_gamma`)."""

    def body(x, gamma, w, out):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            n = norm(pypto.view(x, [p, KP], [idx, 0]), gamma)
            pypto.assemble(pypto.cast(pypto.matmul(pypto.cast(n, BF), w, F32, b_trans=True), BF), [idx, 0], out)

    @pypto.frontend.jit
    def kern(
        x: pypto.Tensor([pypto.DYNAMIC, KP], BF),
        gamma: pypto.Tensor([KP], BF),
        w: pypto.Tensor([NP, KP], BF),
        out: pypto.Tensor([pypto.DYNAMIC, NP], BF),
    ):
        body(x, gamma, w, out)

    @pypto.frontend.jit
    def kern_f32_gamma(
        x: pypto.Tensor([pypto.DYNAMIC, KP], BF),
        gamma: pypto.Tensor([1, KP], F32),
        w: pypto.Tensor([NP, KP], BF),
        out: pypto.Tensor([pypto.DYNAMIC, NP], BF),
    ):
        body(x, gamma, w, out)

    return kern_f32_gamma if f32_gamma else kern


def _norm_args(t: int = 7):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, KP), dtype=np.float32).astype(ml_dtypes.bfloat16)
    g = rng.standard_normal(KP, dtype=np.float32).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((NP, KP), dtype=np.float32).astype(ml_dtypes.bfloat16)
    return x, g, w, np.zeros((t, NP), ml_dtypes.bfloat16)


def _ops(m) -> list[str]:
    return re.findall(r"= pto\.(\w+)", str(m))


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


@pytest.mark.parametrize("norm", NORM_SPELLINGS, ids=lambda f: f.__name__[1:])
def test_pypto_rms_norm_spellings_are_fused(norm) -> None:
    args = _norm_args()
    prim = _norm_kernel(norm).trace(*args)
    fused = lowered(prim, "pto-fuse-stages")
    assert [o for o in _ops(fused) if o != "reshape"] == ["rms_norm", "cast", "matmul", "cast"], str(fused)
    xs = list(args[:3])
    want = pto.run(prim, xs, level="pto").outputs[0]  # the spelling, unfused
    got = pto.run(fused, xs, level="pto").outputs[0]
    assert _same_bits(got, want) if NORM_SPELLINGS[norm] else check(got, want).ok


def test_gamma_before_the_norm_runs_unfused_with_a_remark() -> None:
    """(x * gamma) * rsqrt(.) rounds differently from pto.rms_norm: left as written, with a
    remark at the gamma multiply. It lowers and runs as vector ops, with an f32 [1, K]
    gamma and with a bf16 one whose cast is weight-only work done in the vector tasks."""

    def gamma_first(x, g):
        return (_f32(x) * g) * pypto.rsqrt(_mean(_f32(x)) + EPS)

    x, g, w, out = _norm_args()
    g32 = g.astype(np.float32).reshape(1, KP)
    prim = _norm_kernel(gamma_first, f32_gamma=True).trace(x, g32, w, out)
    assert "rms_norm" not in _ops(lowered(prim, "pto-fuse-stages"))
    compiled = pto.compile(prim)
    remark = "remark: not fused into pto.rms_norm: expected gamma multiplied after the normalisation"
    assert any(remark in w for w in compiled.warnings), compiled.warnings
    want = pto.run(prim, [x, g32, w], level="pto").outputs[0]
    assert check(pto.run(compiled, [x, g32, w]).outputs[0], want).ok

    bf16_gamma = _norm_kernel(lambda x, g: gamma_first(x, _gamma32(g))).trace(x, g, w, out)
    compiled = pto.compile(bf16_gamma)
    assert any(remark in w for w in compiled.warnings), compiled.warnings
    want = pto.run(bf16_gamma, [x, g, w], level="pto").outputs[0]
    assert check(pto.run(compiled, [x, g, w]).outputs[0], want).ok


QP, NQ = 64, 32


def _amax(y):
    return pypto.amax(pypto.abs(y), -1, keepdim=True)


# Spellings of quant (an f32 tile y -> the value the int8 casts take, the scale), amax
# computed where it is used.
def _div_of_muls(y):
    return pypto.div(pypto.mul(y, 127.0), _amax(y)), _amax(y) / 127


def _times_127_over_amax(y):
    return y * (127 / _amax(y)), _amax(y) * (1 / 127)


def _times_127_reciprocal(y):
    return y * (127 * pypto.reciprocal(_amax(y))), _amax(y) / 127.0


def _reciprocal_then_127(y):
    return y * pypto.reciprocal(_amax(y)) * 127, _amax(y) / 127


def _full_127(y):
    return y * pypto.div(pypto.full([1, 1], 127.0, F32), _amax(y)), _amax(y) / 127


QUANT_SPELLINGS = [_div_of_muls, _times_127_over_amax, _times_127_reciprocal, _reciprocal_then_127, _full_127]

# dequant of (the f32 accumulator, the act scale, the weight scale): whether the weight
# scale comes first
DEQUANT_SPELLINGS = {
    "act_then_w": (lambda f, s, ws: f * s * ws, False),
    "scale_times_acc": (lambda f, s, ws: (s * f) * ws, False),
    "w_then_act": (lambda f, s, ws: f * ws * s, True),
    "w_times_acc_then_act": (lambda f, s, ws: s * (ws * f), True),
}


def _quant_kernel(quant, deq):
    @pypto.frontend.jit
    def kern(
        x: pypto.Tensor([pypto.DYNAMIC, QP], F32),
        w: pypto.Tensor([NQ, QP], pypto.DT_INT8),
        ws: pypto.Tensor([NQ, 1], F32),
        out: pypto.Tensor([pypto.DYNAMIC, NQ], BF),
    ):
        wsr = pypto.reshape(ws, [1, NQ], inplace=True)
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            yq, s = quant(pypto.view(x, [p, QP], [idx, 0]))
            i32 = pypto.cast(yq, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
            f16 = pypto.cast(i32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
            q = pypto.cast(f16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)
            acc = pypto.matmul(q, w, pypto.DT_INT32, b_trans=True)
            pypto.assemble(pypto.cast(deq(pypto.cast(acc, F32), s, wsr), BF), [idx, 0], out)

    return kern


def _quant_args(t: int = 7):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, QP), dtype=np.float32)
    w = rng.integers(-127, 128, (NQ, QP)).astype(np.int8)
    ws = rng.uniform(0.001, 0.02, (NQ, 1)).astype(np.float32)
    return x, w, ws, np.zeros((t, NQ), ml_dtypes.bfloat16)


@pytest.mark.parametrize("quant", QUANT_SPELLINGS, ids=lambda f: f.__name__[1:])
def test_pypto_quant_spellings_are_fused(quant) -> None:
    args = _quant_args()
    prim = _quant_kernel(quant, DEQUANT_SPELLINGS["act_then_w"][0]).trace(*args)
    fused = lowered(prim, "pto-fuse-stages")
    assert [o for o in _ops(fused) if o != "reshape"] == ["quant", "matmul", "dequant", "cast"], str(fused)
    xs = list(args[:3])
    want = pto.run(prim, xs, level="pto").outputs[0]
    assert check(pto.run(fused, xs, level="pto").outputs[0], want).ok
    # the quotient in the order written, down to the machine: the same int8 values
    assert np.array_equal(pto.run(prim, xs).outputs[0].view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("name", DEQUANT_SPELLINGS)
def test_pypto_dequant_orders_fuse_bit_for_bit(name: str) -> None:
    """Each accepted order of the dequant's multiplies gives a pto.dequant computing the
    same bits as the primitive ops: at the pto level, and lowered to the npu level."""
    deq, w_first = DEQUANT_SPELLINGS[name]
    args = _quant_args()
    prim = _quant_kernel(_div_of_muls, deq).trace(*args)
    fused = lowered(prim, "pto-fuse-stages")
    assert [o for o in _ops(fused) if o != "reshape"] == ["quant", "matmul", "dequant", "cast"], str(fused)
    line = next(ln for ln in str(fused).splitlines() if "pto.dequant" in ln)
    assert ("w_scale_first" in line) == w_first, line
    xs = list(args[:3])
    want = pto.run(prim, xs, level="pto").outputs[0]
    assert _same_bits(pto.run(fused, xs, level="pto").outputs[0], want)
    if w_first:  # the npu lowering multiplies in that order too
        assert _same_bits(pto.run(pto.compile(prim), xs).outputs[0], want)


@pytest.mark.parametrize("deq", [lambda f, s, ws: f * (s * ws), lambda f, s, ws: f * (ws * s)], ids=["act_w", "w_act"])
def test_dequant_of_the_scales_product_keeps_that_order_bit_for_bit(deq) -> None:
    """acc * (s * ws) (corpus7 k65, accepted by PyPTO 0.2.0) rounds the product of the
    scales first: a pto.dequant marked scales_product, the primitive ops' bits at the pto
    level and lowered to the npu level on both engines."""
    args = _quant_args()
    prim = _quant_kernel(_div_of_muls, deq).trace(*args)
    fused = lowered(prim, "pto-fuse-stages")
    assert [o for o in _ops(fused) if o != "reshape"] == ["quant", "matmul", "dequant", "cast"], str(fused)
    assert "scales_product" in next(ln for ln in str(fused).splitlines() if "pto.dequant" in ln)
    xs = list(args[:3])
    want = pto.run(prim, xs, level="pto").outputs[0]
    assert _same_bits(pto.run(fused, xs, level="pto").outputs[0], want)
    compiled = pto.compile(prim)
    for engine in ("interp", "compiled"):
        assert _same_bits(pto.run(compiled, xs, engine=engine).outputs[0], want), engine


def test_dequant_orders_bit_for_bit_at_the_pto_level() -> None:
    """The dequant forms written at the pto level, act scale first or weight scale first
    (each operand order): the fused op's bits are the primitive chain's."""
    sig = "(%acc: tensor<?x48xi32>, %s: tensor<?x1xf32>, %ws: tensor<1x48xf32>) -> tensor<?x48xf32>"
    bodies = {
        "act_first": "%a = pto.mul %f, %s : {w}, {s} -> {w}\n  %b = pto.mul %ws, %a : {v}, {w} -> {w}",
        "w_first": "%a = pto.mul %f, %ws : {w}, {v} -> {w}\n  %b = pto.mul %a, %s : {w}, {s} -> {w}",
        "w_first_swapped": "%a = pto.mul %ws, %f : {v}, {w} -> {w}\n  %b = pto.mul %s, %a : {s}, {w} -> {w}",
    }
    types = {"w": "tensor<?x48xf32>", "s": "tensor<?x1xf32>", "v": "tensor<1x48xf32>"}
    rng = np.random.default_rng(5)
    acc = rng.integers(-(2**24), 2**24, (40, 48)).astype(np.int32)  # past 2^24: the cast rounds too
    xs = [acc, rng.random((40, 1), dtype=np.float32), rng.random((1, 48), dtype=np.float32)]
    for name, body in bodies.items():
        text = (
            f"func.func @k{sig} {{\n  %f = pto.cast %acc rint : tensor<?x48xi32> -> tensor<?x48xf32>\n"
            f"  {body.format(**types)}\n  func.return %b : tensor<?x48xf32>\n}}"
        )
        prim = parse(text)
        fused = lowered(prim, "pto-fuse-stages")
        assert _ops(fused) == ["dequant"], name
        got, want = (pto.run(m, xs, level="pto").outputs[0] for m in (fused, prim))
        assert _same_bits(got, want), name


# DeepSeek's own quant: the last cast without saturation. Fused as `pto.quant wrap`, which
# differs from the saturating op only where x * 127 / amax is NaN (a row of zeros): there
# the wrapping conversion gives 0 where saturation gives -128. The quantised tile is an
# output here, so that row is seen.
WRAP_PRIM = (
    QUANT_PRIM.replace(
        "-> tensor<?x256xbf16>\n    attributes", "-> (tensor<?x256xbf16>, tensor<?x256xi8>)\n    attributes"
    )
    .replace("pto.cast %h trunc sat", "pto.cast %h trunc")
    .replace("func.return %o : tensor<?x256xbf16>", "func.return %o, %q : tensor<?x256xbf16>, tensor<?x256xi8>")
)


def test_a_quant_without_saturation_is_fused_as_wrap_and_agrees_on_a_row_of_zeros() -> None:
    prim = parse(WRAP_PRIM)
    fused = lowered(prim, "pto-fuse-stages")
    assert "pto.quant %n wrap" in str(fused)
    xs = [np.asarray(a) for a in random_inputs(signature(prim), 9, seed=3)]
    xs[0][4] = 0  # its norm is 0, amax 0: 0 * 127 / 0 is NaN
    want = pto.run(prim, xs, level="pto").outputs[1]
    assert want[4].tolist() == [0] * 256  # NaN -> i32 min -> f16 -32768 -> i8, wrapped
    for engine in ("interp", "compiled"):
        got = pto.run(pto.compile(prim), xs, engine=engine).outputs[1]
        np.testing.assert_array_equal(got, want)
    saturating = pto.run(parse(WRAP_PRIM.replace("pto.cast %h trunc :", "pto.cast %h trunc sat :")), xs, level="pto")
    assert saturating.outputs[1][4].tolist() == [-128] * 256
