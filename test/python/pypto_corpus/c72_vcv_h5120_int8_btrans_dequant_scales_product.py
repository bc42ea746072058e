#!/usr/bin/env python3
"""c72 (outside batch corpus7, k65): RMSNorm (pypto.rsqrt, operators) -> per-token symmetric INT8 quant with the dequant scale
x_scale = amax * (1/127) and x / x_scale -> int8 x int8 Linear with W [N, K] int8 (b_trans)
-> dequant written as `pypto.cast(acc, FP32) * (x_scale * w_scale)` (Tensor has no .cast in 0.2.0) (outer product [t,1] x [1,N])
-> bf16 out.

x [T, 5120] bf16, gamma [5120] fp32, w [3072, 5120] int8, w_scale [3072] fp32.
Dynamic T, loop_unroll [16, 4, 1].
"""
import os
import sys

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K, N = 5120, 3072
EPS = 1e-6


def bf16_round(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"run_mode": pypto.RunMode.SIM},
)
def rms_int8_outer(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_FP32),
    w: pypto.Tensor([N, K], pypto.DT_INT8),
    w_scale: pypto.Tensor([N], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    t = x.shape[0]
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    ws = pypto.reshape(w_scale, [1, N], inplace=True)
    g = pypto.reshape(gamma, [1, K], inplace=True)
    for t_idx, tile_t in pypto.loop_unroll(0, t, 1, name="Q_LOOP", idx_name="t_idx", unroll_list=[16, 4, 1]):
        x_tile = pypto.view(x, [tile_t, K], [t_idx, 0], valid_shape=[tile_t, K])
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(2, K)
        xf = pypto.cast(x_tile, pypto.DT_FP32)
        rstd = pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / K) + EPS)
        normed = xf * rstd * g

        pypto.set_semantic_label("quant")
        x_scale = pypto.amax(pypto.abs(normed), -1, keepdim=True) * (1.0 / 127.0)
        xq = normed / x_scale
        q_i32 = pypto.cast(xq, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        q_f16 = pypto.cast(q_i32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        q_i8 = pypto.cast(q_f16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)

        pypto.set_semantic_label("linear-int8")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [256, 256])
        acc = pypto.matmul(q_i8, w, pypto.DT_INT32, b_trans=True)

        pypto.set_semantic_label("dequant")
        pypto.set_vec_tile_shapes(4, 1024)
        out = pypto.cast(acc, pypto.DT_FP32) * (x_scale * ws)
        pypto.assemble(pypto.cast(out, pypto.DT_BF16), [t_idx, 0], y)


def golden(x, gamma, w, w_scale):
    xf = x.astype(np.float32)
    rstd = (1.0 / np.sqrt(np.mean(xf.astype(np.float64) ** 2, -1, keepdims=True) + EPS)).astype(np.float32)
    n = xf * rstd * gamma
    xs = np.abs(n).max(-1, keepdims=True) * np.float32(1.0 / 127.0)
    q = np.clip(np.rint(n / xs), -128, 127).astype(np.int8)
    acc = (q.astype(np.float64) @ w.astype(np.float64).T).astype(np.int64)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    return acc.astype(np.float64) * (xs.astype(np.float64) * w_scale[None, :])


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    rng = np.random.default_rng(65)
    gamma = rng.uniform(0.5, 1.5, (K,)).astype(np.float32)
    w = rng.integers(-127, 128, (N, K), dtype=np.int8)
    w_scale = rng.uniform(1e-4, 1e-3, (N,)).astype(np.float32)
    ok = True
    for t in counts:
        x = bf16_round(rng.standard_normal((t, K)).astype(np.float32))
        ref = golden(x, gamma, w, w_scale)
        if os.environ.get("PTO") == "1":
            import ml_dtypes
            bf = ml_dtypes.bfloat16
            y = np.zeros((t, N), dtype=bf)
            rms_int8_outer(x.astype(bf), gamma, w, w_scale, y)
            got = y.astype(np.float32)
            err = np.abs(got - ref)
            tol = 2e-2 + 2e-2 * np.abs(ref)
            good = bool(np.isfinite(got).all() and (err <= tol).all())
            print(f"T={t} {'PASS' if good else 'MISMATCH'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
            ok = ok and good
        else:
            import torch
            y = torch.zeros((t, N), dtype=torch.bfloat16)
            rms_int8_outer(torch.from_numpy(x).to(torch.bfloat16), torch.from_numpy(gamma), torch.from_numpy(w),
                           torch.from_numpy(w_scale), y)
            print(f"T={t} SIM done")
    print("ALL PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
