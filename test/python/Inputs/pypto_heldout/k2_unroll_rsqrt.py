"""SK-03 with token loop_unroll (unroll_list=[32, 8] -> [32, 8, 1]) and a hand-written RMSNorm:
sum(x*x)/K -> + eps -> rsqrt -> x * inv * gamma (gamma reshaped in place to [1, K]).
matmul bf16 x bf16 -> fp32 accumulate (DT_FP32 out), then cast to bf16.
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 1024
N = 384
EPS = 1e-6
UNROLL = [32, 8]
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def rms_linear_unroll(
    x: pypto.Tensor([T, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    y: pypto.Tensor([T, N], pypto.DT_BF16),
):
    t = x.shape[0]
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    gamma_2d = pypto.reshape(gamma, [1, K], inplace=True)
    pypto.set_vec_tile_shapes(1, K)
    gamma_2d_fp32 = pypto.cast(gamma_2d, pypto.DT_FP32)

    for t_idx, unroll_len in pypto.loop_unroll(0, t, 1, name="RMS_LINEAR_LOOP", idx_name="t_idx", unroll_list=UNROLL):
        x_tile = pypto.view(x, [unroll_len, K], [t_idx, 0])

        pypto.set_semantic_label("pre-rmsnorm")
        pypto.set_vec_tile_shapes(4, K)
        x_fp32 = pypto.cast(x_tile, pypto.DT_FP32)
        sq = pypto.mul(x_fp32, x_fp32)
        mean_sq = pypto.mul(pypto.sum(sq, -1, keepdim=True), 1.0 / K)
        inv_rms = pypto.rsqrt(pypto.add(mean_sq, EPS))
        normed = pypto.mul(pypto.mul(x_fp32, inv_rms), gamma_2d_fp32)
        normed_bf16 = pypto.cast(normed, pypto.DT_BF16)

        pypto.set_semantic_label("linear")
        m_tile = 32 if unroll_len >= 32 else 16
        pypto.set_cube_tile_shapes([m_tile, m_tile], [256, 512], [128, 128])
        acc = pypto.matmul(normed_bf16, w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("cast-out")
        pypto.set_vec_tile_shapes(4, N)
        pypto.assemble(pypto.cast(acc, pypto.DT_BF16), [t_idx, 0], y)


def golden(x, w, gamma):
    import numpy as np

    xf = x.astype(np.float32)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    normed = (xf / rms * gamma.astype(np.float32)).astype(x.dtype).astype(np.float32)
    return normed @ w.astype(np.float32).T


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([45, 3, 64] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(2)
        w = (rng.standard_normal((N, K)) * 0.03).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.5, 1.5, K).astype(ml_dtypes.bfloat16)
        ok_all = True
        for t in counts:
            x = (rng.standard_normal((t, K)) * 2.0).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), dtype=ml_dtypes.bfloat16)
            rms_linear_unroll(x, w, gamma, y)
            r = check(y, golden(x, w, gamma))
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(2)
        w = (torch.randn(N, K) * 0.03).to(torch.bfloat16)
        gamma = (torch.rand(K) + 0.5).to(torch.bfloat16)
        for t in counts:
            x = (torch.randn(t, K) * 2.0).to(torch.bfloat16)
            y = torch.zeros(t, N, dtype=torch.bfloat16)
            rms_linear_unroll(x, w, gamma, y)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(y.float()).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
