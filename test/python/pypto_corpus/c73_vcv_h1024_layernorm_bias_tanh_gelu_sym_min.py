#!/usr/bin/env python3
"""c73 (outside batch corpus8, k68): k68: LayerNorm (gamma + beta, rank-1 bf16, cast in-kernel, `1.0 / sqrt` form) -> Linear with
W [N, K] (b_trans) -> + bias [N] -> GELU (tanh approximation written by hand with exp) -> bf16.

SK-03 V -> C -> V with bias. hidden 1024 -> 4096 (FFN up, BERT-like).
x [T, 1024] bf16, gamma/beta [1024] bf16, w [4096, 1024] bf16, bias [4096] bf16, out [T, 4096] bf16.
Token loop: pypto.loop over fixed 16-token tiles with view(valid_shape=...) (GLM style); T in (1, 37, 200).
"""

import math
import os

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K, N = 1024, 4096
EPS = 1e-5
TILE_T = 16
TOKENS = (1, 37, 200)
GELU_C = math.sqrt(2.0 / math.pi)


def bf16_round(a):
    """float32 -> bf16 (round to nearest even) -> float32, numpy only."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128},
)
def ln_bias_gelu(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    beta: pypto.Tensor([K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    bias: pypto.Tensor([N], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    t = x.shape[0]
    t_loop = (t + TILE_T - 1) // TILE_T
    pypto.set_vec_tile_shapes(K)
    gamma_2d = pypto.reshape(gamma, [1, K], inplace=True)
    beta_2d = pypto.reshape(beta, [1, K], inplace=True)
    bias_2d = pypto.reshape(bias, [1, N], inplace=True)

    for t_idx in pypto.loop(t_loop, name="LOOP_LN_T", idx_name="t_idx"):
        act_t = (t - t_idx * TILE_T).min(TILE_T)
        x_tile = pypto.view(x, [TILE_T, K], [t_idx * TILE_T, 0], valid_shape=[act_t, K])

        pypto.set_vec_tile_shapes(4, K)
        x_f32 = pypto.cast(x_tile, pypto.DT_FP32)
        g_f32 = pypto.cast(gamma_2d, pypto.DT_FP32)
        b_f32 = pypto.cast(beta_2d, pypto.DT_FP32)
        mean = pypto.sum(x_f32, -1, keepdim=True) / K
        xc = x_f32 - mean
        var = pypto.sum(xc * xc, -1, keepdim=True) / K
        rstd = 1.0 / pypto.sqrt(var + EPS)
        ln = xc * rstd * g_f32 + b_f32
        ln_bf16 = pypto.cast(ln, pypto.DT_BF16)

        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        h = pypto.matmul(ln_bf16, w, pypto.DT_FP32, b_trans=True)

        pypto.set_vec_tile_shapes(16, 512)
        h = h + pypto.cast(bias_2d, pypto.DT_FP32)
        inner = (h + h * h * h * 0.044715) * GELU_C
        # tanh(u) = 1 - 2 / (exp(2u) + 1)
        th = 1.0 - 2.0 / (pypto.exp(inner * 2.0) + 1.0)
        y = h * 0.5 * (th + 1.0)
        pypto.assemble(pypto.cast(y, pypto.DT_BF16), [t_idx * TILE_T, 0], out)


def golden(x, gamma, beta, w, bias):
    xf = x.astype(np.float32)
    mean = xf.mean(-1, keepdims=True)
    xc = xf - mean
    var = (xc * xc).mean(-1, keepdims=True)
    ln = bf16_round(xc / np.sqrt(var + np.float32(EPS)) * gamma + beta)
    h = ln @ w.T.astype(np.float32) + bias
    y = 0.5 * h * (1.0 + np.tanh(GELU_C * (h + 0.044715 * h**3)))
    return bf16_round(y.astype(np.float32))


def main():
    rng = np.random.default_rng(68)
    gamma = bf16_round(rng.uniform(0.5, 1.5, (K,)).astype(np.float32))
    beta = bf16_round(rng.uniform(-0.2, 0.2, (K,)).astype(np.float32))
    w = bf16_round(rng.uniform(-0.06, 0.06, (N, K)).astype(np.float32))
    bias = bf16_round(rng.uniform(-0.5, 0.5, (N,)).astype(np.float32))
    all_ok = True
    for T in TOKENS:
        x = bf16_round(rng.normal(0.3, 1.0, (T, K)).astype(np.float32))
        if os.environ.get("PTO") == "1":
            import ml_dtypes

            bf = ml_dtypes.bfloat16
            ref = golden(x, gamma, beta, w, bias)
            out = np.zeros((T, N), dtype=bf)
            ln_bias_gelu(x.astype(bf), gamma.astype(bf), beta.astype(bf), w.astype(bf), bias.astype(bf), out)
            got = out.astype(np.float32)
            err = np.abs(got - ref)
            tol = 2e-2 + 2e-2 * np.abs(ref)
            ok = bool(np.isfinite(got).all() and (err <= tol).all())
            all_ok &= ok
            print(f"  T={T}: {'ok' if ok else 'BAD'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
        else:
            import torch

            def tb(a):
                return torch.from_numpy(a).to(torch.bfloat16)

            out = torch.zeros((T, N), dtype=torch.bfloat16)
            ln_bias_gelu(tb(x), tb(gamma), tb(beta), tb(w), tb(bias), out)
            print(f"  T={T}: SIM ran")
    if os.environ.get("PTO") == "1":
        print("ALL PASS" if all_ok else "FAIL")
        return
    print("k68 SIM accepted")


if __name__ == "__main__":
    main()
