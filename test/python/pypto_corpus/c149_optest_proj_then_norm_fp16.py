"""c149 (outside batch corpus28, k254): k254: operator-test style C -> V projection (wqa-linear -> q-rmsnorm shape of SK-03), fp16.

Static tensor annotations (every axis pypto.STATIC, bound at call time), a config
dataclass passed as a non-tensor argument, weight stored [K, N] (no b_trans).
x [T, 1024] fp16 @ w [1024, 768] fp16 -> fp32 accumulate -> RMSNorm(gamma) -> fp16.
"""
from dataclasses import dataclass, field
from typing import List

import numpy as np

from batch_harness import pypto, run, fp16_round


@dataclass
class ProjNormTestConfig:
    tile_t: int = 16
    eps: float = 1e-6
    vec_tile: List[int] = field(default_factory=lambda: [4, 768])
    cube_m: List[int] = field(default_factory=lambda: [16, 16])
    cube_k: List[int] = field(default_factory=lambda: [256, 512])
    cube_n: List[int] = field(default_factory=lambda: [128, 256])


@pypto.frontend.jit()
def proj_then_norm_fp16(
    x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP16),
    w: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP16),
    gamma: pypto.Tensor([pypto.STATIC], pypto.DT_FP16),
    y: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP16),
    cfg,
):
    t = x.shape[0]
    k = x.shape[1]
    n = w.shape[1]
    tile_t = cfg.tile_t
    gamma_2d = pypto.reshape(gamma, [1, n], inplace=True)
    pypto.set_vec_tile_shapes(1, n)
    gamma_fp32 = pypto.cast(gamma_2d, pypto.DT_FP32)

    for i in pypto.loop((t + tile_t - 1) // tile_t, name="T_LOOP", idx_name="i"):
        off = i * tile_t
        valid = pypto.min(tile_t, t - off)
        x_tile = pypto.view(x, [tile_t, k], [off, 0], valid_shape=[valid, k])

        pypto.set_semantic_label("Proj-Linear")
        pypto.set_cube_tile_shapes(cfg.cube_m, cfg.cube_k, cfg.cube_n)
        acc = pypto.matmul(x_tile, w, pypto.DT_FP32)

        pypto.set_semantic_label("Proj-RmsNorm")
        pypto.set_vec_tile_shapes(*cfg.vec_tile)
        ms = pypto.sum(pypto.mul(acc, acc), -1, keepdim=True)
        ms = pypto.mul(ms, 1.0 / n)
        inv = pypto.rsqrt(pypto.add(ms, cfg.eps))
        out = pypto.mul(pypto.mul(acc, inv), gamma_fp32)
        pypto.assemble(pypto.cast(out, pypto.DT_FP16), [off, 0], y)


K, N = 1024, 768
CFG = ProjNormTestConfig()


def make_case(T):
    rng = np.random.default_rng(254 + T)
    x = fp16_round(rng.uniform(-1, 1, (T, K)).astype(np.float32))
    w = fp16_round((rng.standard_normal((K, N)) * 0.03).astype(np.float32))
    g = fp16_round(rng.uniform(0.5, 1.5, N).astype(np.float32))
    acc = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)   # fp32 matmul output
    a = acc.astype(np.float64)
    inv = 1.0 / np.sqrt((a * a).mean(-1, keepdims=True) + CFG.eps)
    y = fp16_round((a * inv * g[None, :].astype(np.float64)).astype(np.float32))
    ins = [(x, "fp16"), (w, "fp16"), (g, "fp16")]
    outs = [((T, N), "fp16")]
    return ins, outs, [y], [(1e-3, 0.005)], [CFG]


if __name__ == "__main__":
    run("k254_optest_proj_then_norm_fp16", proj_then_norm_fp16, make_case)
