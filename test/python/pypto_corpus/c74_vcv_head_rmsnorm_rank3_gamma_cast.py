#!/usr/bin/env python3
"""c74 (outside batch corpus8, k69): k69: RMSNorm (rsqrt form, rank-1 bf16 gamma) -> Linear W [N, K] (b_trans) -> reshape to heads
[t, 16, 64] -> per-head RMSNorm (full(1.0) / sqrt form, gamma_h [64] expand_clone'd to [1, 16, 64]) -> bf16 [T, 16, 64].

SK-03 V -> C -> V (Qwen3-style q_proj + q_norm). hidden 5120 -> 1024 = 16 heads x 64.
Token loop: pypto.loop_unroll, unroll_list [16, 4, 1]; T in (1, 37, 200).
"""

import os

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 5120
NH, HD = 16, 64
N = NH * HD
EPS = 1e-6
TOKENS = (1, 37, 200)


def bf16_round(a):
    """float32 -> bf16 (round to nearest even) -> float32, numpy only."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 4}},
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128},
)
def rms_proj_head_norm(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    w_q: pypto.Tensor([N, K], pypto.DT_BF16),
    gamma_h: pypto.Tensor([HD], pypto.DT_BF16),
    q_out: pypto.Tensor([pypto.DYNAMIC, NH, HD], pypto.DT_BF16),
):
    t = x.shape[0]
    gamma_2d = pypto.reshape(gamma, [1, K], inplace=True)
    gamma_h_3d = pypto.reshape(gamma_h, [1, 1, HD], inplace=True)
    for t_off, tile_t in pypto.loop_unroll(0, t, 1, name="Q_T_LOOP", idx_name="t_off", unroll_list=[16, 4, 1]):
        pypto.set_semantic_label("RmsNorm_x")
        pypto.set_vec_tile_shapes(min(tile_t, 8), 1024)
        x_view = pypto.view(x, [tile_t, K], [t_off, 0])
        x_f32 = pypto.cast(x_view, pypto.DT_FP32)
        g_f32 = pypto.cast(gamma_2d, pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(x_f32, x_f32), -1, keepdim=True)
        ms = pypto.add(pypto.mul(ms, 1.0 / K), EPS)
        normed = pypto.mul(pypto.mul(x_f32, pypto.rsqrt(ms)), g_f32)
        normed_bf16 = pypto.cast(normed, pypto.DT_BF16)

        pypto.set_semantic_label("Matmul_q")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        q = pypto.matmul(normed_bf16, w_q, pypto.DT_BF16, b_trans=True)

        pypto.set_semantic_label("RmsNorm_head")
        pypto.set_vec_tile_shapes(min(tile_t, 8), NH, HD)
        q_3d = pypto.reshape(q, [tile_t, NH, HD])
        q_f32 = pypto.cast(q_3d, pypto.DT_FP32)
        gh_f32 = pypto.expand_clone(pypto.cast(gamma_h_3d, pypto.DT_FP32), [1, NH, HD])
        y = pypto.mul(q_f32, q_f32)
        y = pypto.mul(y, 1.0 / HD)
        y = pypto.sum(y, -1, keepdim=True)
        y = pypto.add(y, EPS)
        y = pypto.sqrt(y)
        ones = pypto.full(y.shape, 1.0, pypto.DT_FP32)
        y = pypto.div(ones, y)
        y = pypto.mul(q_f32, y)
        y = pypto.mul(gh_f32, y)
        pypto.assemble(pypto.cast(y, pypto.DT_BF16), [t_off, 0, 0], q_out)


def golden(x, gamma, w, gamma_h):
    xf = x.astype(np.float32)
    ms = (xf * xf).mean(-1, keepdims=True) + np.float32(EPS)
    nb = bf16_round(xf / np.sqrt(ms) * gamma)
    q = bf16_round(nb @ w.T.astype(np.float32)).reshape(-1, NH, HD)
    ms_h = (q * q).mean(-1, keepdims=True) + np.float32(EPS)
    return bf16_round(q / np.sqrt(ms_h) * gamma_h)


def main():
    rng = np.random.default_rng(69)
    gamma = bf16_round(rng.uniform(0.5, 1.5, (K,)).astype(np.float32))
    w = bf16_round(rng.uniform(-0.02, 0.02, (N, K)).astype(np.float32))
    gamma_h = bf16_round(rng.uniform(0.5, 1.5, (HD,)).astype(np.float32))
    all_ok = True
    for T in TOKENS:
        x = bf16_round(rng.uniform(-1, 1, (T, K)).astype(np.float32))
        if os.environ.get("PTO") == "1":
            import ml_dtypes

            bf = ml_dtypes.bfloat16
            ref = golden(x, gamma, w, gamma_h)
            out = np.zeros((T, NH, HD), dtype=bf)
            rms_proj_head_norm(x.astype(bf), gamma.astype(bf), w.astype(bf), gamma_h.astype(bf), out)
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

            out = torch.zeros((T, NH, HD), dtype=torch.bfloat16)
            rms_proj_head_norm(tb(x), tb(gamma), tb(w), tb(gamma_h), out)
            print(f"  T={T}: SIM ran")
    if os.environ.get("PTO") == "1":
        print("ALL PASS" if all_ok else "FAIL")
        return
    print("k69 SIM accepted")


if __name__ == "__main__":
    main()
