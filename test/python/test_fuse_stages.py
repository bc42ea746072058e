"""pto-fuse-stages end to end: kernels whose RMSNorm, quant and dequant are written
from primitives become the fused form (the same IR up to SSA names), lower through the
default pipeline, and compute what the primitive kernel computes (SK03.md's
acceptance rule against the primitive kernel run at the pto level)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from kernels import lowered, parse

import pto
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
