#!/usr/bin/env python3
"""c84 (outside batch corpus11, k102) (fresh, my own style): fp16 RMSNorm -> linear [N, K] b_trans (N = 1000, a 2000-byte row) -> bias -> GELU (tanh
form built from exp, since PyPTO 0.2.0 has no tanh) -> fp16.

SK-03 V -> C -> V: x [T, 3072] fp16 -> fp32 -> x * rsqrt(mean(x^2) + eps) * gamma (fp16 [3072] -> [1, 3072]) -> fp16
-> x @ w.T, w [1000, 3072] fp16 (b_trans=True), fp32 accum -> + bias fp32 [1000] -> gelu_tanh -> fp16 out [T, 1000].
Style: Tensor methods (.mul/.sum/.rsqrt/.reshape/.matmul) and operators (+ - * /), python helpers, loop_unroll with
unroll_list [64, 8, 1] (T = 37, 200 leave tails), kernel-level constants.
"""
import math

import numpy as np

from batch_harness import PTO, pypto, run, fp16_round  # (the batch's _common.py)

H, N = 3072, 1000
EPS = 1e-5
C0 = math.sqrt(2.0 / math.pi)


def rmsnorm(x32, g32):
    ms = (x32 * x32).sum(-1, keepdim=True) * (1.0 / H)
    return x32 * (ms + EPS).rsqrt() * g32


def gelu_tanh(v):
    # tanh(z) = 1 - 2 / (exp(2z) + 1)
    z = (v + v * v * v * 0.044715) * C0
    th = 1.0 - 2.0 / ((z * 2.0).exp() + 1.0)
    return v * 0.5 * (th + 1.0)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def fused_norm_linear_gelu(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    w: pypto.Tensor([N, H], pypto.DT_FP16),
    bias: pypto.Tensor([N], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    T = x.shape[0]
    pypto.set_vec_tile_shapes(1, H)
    g32 = pypto.cast(gamma.reshape([1, H], inplace=True), pypto.DT_FP32)
    b2 = bias.reshape([1, N], inplace=True)
    for off, rows in pypto.loop_unroll(0, T, 1, name="tok", idx_name="off", unroll_list=[64, 8, 1]):
        pypto.set_vec_tile_shapes(2, H)
        xt = x.view([rows, H], [off, 0])
        xn = pypto.cast(rmsnorm(pypto.cast(xt, pypto.DT_FP32), g32), pypto.DT_FP16)
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        acc = xn.matmul(w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(8, 256)
        out = gelu_tanh(acc + b2)
        pypto.assemble(pypto.cast(out, pypto.DT_FP16), [off, 0], y)


rng = np.random.default_rng(102)
GAMMA = fp16_round(rng.uniform(0.6, 1.4, H))
W = fp16_round(rng.normal(0, 0.02, (N, H)))
BIAS = rng.normal(0, 0.3, N).astype(np.float32)


def make_case(T):
    x = fp16_round(rng.normal(0, 1.5, (T, H)))
    ms = (x * x).mean(-1, keepdims=True)
    xn = fp16_round(x / np.sqrt(ms + np.float32(EPS)) * GAMMA)
    a = (xn.astype(np.float64) @ W.T.astype(np.float64)).astype(np.float32) + BIAS
    yref = fp16_round(0.5 * a * (1 + np.tanh(C0 * (a + 0.044715 * a ** 3))))
    return ([(x, "fp16"), (GAMMA, "fp16"), (W, "fp16"), (BIAS, "fp32")], [((T, N), "fp16")], [yref],
            [(2e-2, 2e-2)], [])


if __name__ == "__main__":
    run("k102", fused_norm_linear_gelu, make_case)
