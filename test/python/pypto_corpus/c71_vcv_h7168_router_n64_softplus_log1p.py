#!/usr/bin/env python3
"""c71 (outside batch corpus6, k56): router-style projection with a large hidden and a small output:
RMSNorm (hidden 7168, rank-1 bf16 gamma) -> Linear W [64, 7168] (b_trans) -> fp32 logits
-> stable softplus  max(z, 0) + log1p(exp(-|z|))  -> fp32 out.

The token count is a named symbol (pypto.frontend.dynamic("T")) shared by x and out.
loop_unroll [16, 1] (decode style), vec tile (2, 7168) for the norm, (16, 64) for the post-op.
"""
import os
import sys

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K, N = 7168, 64
EPS = 1e-6
TSYM = pypto.frontend.dynamic("T")


def bf16_round(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"run_mode": pypto.RunMode.SIM},
)
def rms_router_softplus(
    x: pypto.Tensor([TSYM, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    out: pypto.Tensor([TSYM, N], pypto.DT_FP32),
):
    t = x.shape[0]
    gamma_2d = pypto.reshape(gamma, [1, K], inplace=True)
    pypto.set_vec_tile_shapes(1, K)
    gamma_f = pypto.cast(gamma_2d, pypto.DT_FP32)
    for t_idx, tile_t in pypto.loop_unroll(0, t, 1, name="ROUTER_LOOP", idx_name="t_idx", unroll_list=[16, 1]):
        x_tile = pypto.view(x, [tile_t, K], [t_idx, 0], valid_shape=[tile_t, K])
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(2, K)
        xf = pypto.cast(x_tile, pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        rstd = pypto.rsqrt(pypto.add(pypto.mul(ms, 1.0 / K), EPS))
        nb = pypto.cast(pypto.mul(pypto.mul(xf, rstd), gamma_f), pypto.DT_BF16)

        pypto.set_semantic_label("router-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [64, 64])
        z = pypto.matmul(nb, w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("softplus")
        pypto.set_vec_tile_shapes(16, N)
        sp = pypto.add(pypto.maximum(z, 0.0), pypto.log1p(pypto.exp(pypto.neg(pypto.abs(z)))))
        pypto.assemble(sp, [t_idx, 0], out)


def golden(x, gamma, w):
    xf = x.astype(np.float64)
    rstd = 1.0 / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    nb = bf16_round((xf * rstd * gamma).astype(np.float32)).astype(np.float64)
    z = nb @ w.astype(np.float64).T
    return np.logaddexp(0.0, z)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    rng = np.random.default_rng(56)
    gamma = bf16_round(rng.uniform(0.5, 1.5, (K,)).astype(np.float32))
    w = bf16_round(rng.uniform(-0.03, 0.03, (N, K)).astype(np.float32))
    ok = True
    for t in counts:
        x = bf16_round(rng.uniform(-1, 1, (t, K)).astype(np.float32))
        ref = golden(x, gamma, w)
        if os.environ.get("PTO") == "1":
            import ml_dtypes
            bf = ml_dtypes.bfloat16
            out = np.zeros((t, N), dtype=np.float32)
            rms_router_softplus(x.astype(bf), gamma.astype(bf), w.astype(bf), out)
            err = np.abs(out - ref)
            tol = 1e-4 + 1e-3 * np.abs(ref)
            good = bool(np.isfinite(out).all() and (err <= tol).all())
            print(f"T={t} {'PASS' if good else 'MISMATCH'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
            ok = ok and good
        else:
            import torch
            tb = lambda a: torch.from_numpy(a).to(torch.bfloat16)
            rms_router_softplus(tb(x), tb(gamma), tb(w), torch.zeros((t, N), dtype=torch.float32))
            print(f"T={t} SIM done")
    print("ALL PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
