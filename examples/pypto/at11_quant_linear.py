"""AT-11, SK-03's quant variant (RMSNorm -> Quant -> int8 MatMul -> Dequant), written
in PyPTO 0.2.0's API with the quant chain the seed quotes from common.py (scale =
max(|x|) / 127, CAST_RINT -> CAST_ROUND -> CAST_TRUNC with SaturationMode.ON) and the
dequant as cast * scale * scale; only the import line differs.

    python examples/pypto/at11_quant_linear.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

K, N, eps = 1024, 512, 1e-6
BF16, FP32, I8, I32 = pypto.DT_BF16, pypto.DT_FP32, pypto.DT_INT8, pypto.DT_INT32


def rms(xf):
    ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
    return pypto.add(pypto.mul(ms, 1.0 / K), eps)


def quant(y):
    """Symmetric per-token int8: (int8, the scale dequant multiplies by)."""
    amax = pypto.amax(pypto.abs(y), -1, keepdim=True)
    s = pypto.mul(amax, 1.0 / 127.0)
    yq = pypto.mul(pypto.mul(y, pypto.reciprocal(amax)), 127.0)
    q32 = pypto.cast(yq, I32, pypto.CastMode.CAST_RINT)
    q16 = pypto.cast(q32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
    return pypto.cast(q16, I8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON), s


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def quant_linear(
    x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
    gamma: pypto.Tensor([K], BF16),
    w: pypto.Tensor([N, K], I8),
    w_scale: pypto.Tensor([N, 1], FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
):
    pypto.set_vec_tile_shapes(1, K)
    g = pypto.cast(pypto.reshape(gamma, [1, K], inplace=True), FP32)
    ws = pypto.reshape(w_scale, [1, N], inplace=True)
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, name="tok", idx_name="ti", unroll_list=[16, 4]):
        xt = pypto.view(x, [p, K], [idx, 0])
        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(4, K)
        xf = pypto.cast(xt, FP32)
        y = pypto.mul(pypto.mul(xf, pypto.rsqrt(rms(xf))), g)
        pypto.set_semantic_label("Query-Quant")
        q, s = quant(y)
        pypto.set_semantic_label("Query-Linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        acc = pypto.matmul(q, w, I32, b_trans=True)
        pypto.set_semantic_label("Query-Dequant")
        pypto.set_vec_tile_shapes(4, N)
        d = pypto.mul(pypto.mul(pypto.cast(acc, FP32), s), ws)
        pypto.assemble(pypto.cast(d, BF16), [idx, 0], out)


def golden(x, gamma, w, w_scale):
    """SK03.md's formulas: RMSNorm, int8 = rint(y * 127 / max|y|), the int32 product,
    times both scales."""
    xf = x.astype(np.float32)
    y = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(eps)) * gamma.astype(np.float32)
    amax = np.max(np.abs(y), axis=-1, keepdims=True)
    q = np.clip(np.rint(y * np.float32(127) / amax), -128, 127)
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    return (acc.astype(np.float32) * (amax / np.float32(127)) * w_scale.reshape(1, -1)).astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(K, dtype=np.float32).astype(ml_dtypes.bfloat16)
    w = rng.integers(-127, 128, (N, K)).astype(np.int8)
    w_scale = rng.uniform(0.001, 0.02, (N, 1)).astype(np.float32)
    return x, gamma, w, w_scale


def main(tokens=(1, 7, 21)) -> None:
    for t in tokens:
        args = inputs(t, t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        quant_linear(*args, out)
        v = check(out, golden(*args))
        print(f"t={t}: {quant_linear.report.cycles:.0f} cycles, {v.describe('out')}")
        assert v.ok


if __name__ == "__main__":
    main()
