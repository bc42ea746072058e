#!/usr/bin/env python3
"""c76 (outside batch corpus8, k76): k76: fp16 end to end. RMSNorm (rsqrt, rank-1 fp16 gamma cast in-kernel) -> fp16 -> Linear
W [K, N] (no transpose) with the bias fused through matmul extend_params {'bias_tensor'}, fp16 out
-> quick-GELU x * sigmoid(1.702 x) -> fp16.

SK-03 V -> C(+bias) -> V. x [T, 6144] fp16, gamma [6144] fp16, w [6144, 3072] fp16, bias [3072] fp16,
out [T, 3072] fp16.
Token loop: one token per iteration, pypto.loop(0, t, 1, unroll_list=[8, 4, 1]); T in (1, 37, 200).
"""

import os

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K, N = 6144, 3072
EPS = 1e-6
TOKENS = (1, 37, 200)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 4}},
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128},
)
def fp16_rms_proj_bias_qgelu(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP16),
    gamma: pypto.Tensor([K], pypto.DT_FP16),
    w: pypto.Tensor([K, N], pypto.DT_FP16),
    bias: pypto.Tensor([N], pypto.DT_FP16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    t = x.shape[0]
    gamma_2d = pypto.reshape(gamma, [1, K], inplace=True)
    bias_2d = pypto.reshape(bias, [1, N], inplace=True)
    for t_idx in pypto.loop(0, t, 1, name="TOK_LOOP", idx_name="t_idx", unroll_list=[8, 4, 1]):
        pypto.set_vec_tile_shapes(1, K)
        x_row = pypto.view(x, [1, K], [t_idx, 0])
        x_f32 = pypto.cast(x_row, pypto.DT_FP32)
        ms = pypto.sum(x_f32 * x_f32, -1, keepdim=True) * (1.0 / K)
        rstd = pypto.rsqrt(ms + EPS)
        xn = pypto.cast(x_f32 * rstd * pypto.cast(gamma_2d, pypto.DT_FP32), pypto.DT_FP16)

        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        h = pypto.matmul(xn, w, pypto.DT_FP16, extend_params={"bias_tensor": bias_2d})

        pypto.set_vec_tile_shapes(1, 1024)
        h_f32 = pypto.cast(h, pypto.DT_FP32)
        y = h_f32 * pypto.sigmoid(h_f32 * 1.702)
        out[t_idx:, 0:] = pypto.cast(y, pypto.DT_FP16)


def golden(x, gamma, w, bias):
    xf = x.astype(np.float32)
    ms = (xf * xf).mean(-1, keepdims=True) + np.float32(EPS)
    xn = (xf / np.sqrt(ms) * gamma.astype(np.float32)).astype(np.float16).astype(np.float32)
    h = (xn @ w.astype(np.float32) + bias.astype(np.float32)).astype(np.float16).astype(np.float32)
    y = h / (1.0 + np.exp(-1.702 * h))
    return y.astype(np.float16).astype(np.float32)


def main():
    rng = np.random.default_rng(76)
    gamma = rng.uniform(0.5, 1.5, (K,)).astype(np.float16)
    w = rng.uniform(-0.025, 0.025, (K, N)).astype(np.float16)
    bias = rng.uniform(-0.5, 0.5, (N,)).astype(np.float16)
    all_ok = True
    for T in TOKENS:
        x = rng.uniform(-1, 1, (T, K)).astype(np.float16)
        if os.environ.get("PTO") == "1":
            ref = golden(x, gamma, w, bias)
            out = np.zeros((T, N), dtype=np.float16)
            fp16_rms_proj_bias_qgelu(x, gamma, w, bias, out)
            got = out.astype(np.float32)
            err = np.abs(got - ref)
            tol = 1e-2 + 1e-2 * np.abs(ref)
            ok = bool(np.isfinite(got).all() and (err <= tol).all())
            all_ok &= ok
            print(f"  T={T}: {'ok' if ok else 'BAD'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
        else:
            import torch

            out = torch.zeros((T, N), dtype=torch.float16)
            fp16_rms_proj_bias_qgelu(
                torch.from_numpy(x), torch.from_numpy(gamma), torch.from_numpy(w), torch.from_numpy(bias), out
            )
            print(f"  T={T}: SIM ran")
    if os.environ.get("PTO") == "1":
        print("ALL PASS" if all_ok else "FAIL")
        return
    print("k76 SIM accepted")


if __name__ == "__main__":
    main()
