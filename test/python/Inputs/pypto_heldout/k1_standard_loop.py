"""SK-03 standard template: pypto.loop over TILE-row views, pypto.rms_norm (V) -> matmul b_trans (C).

bf16 x [T, K] (dynamic T), bf16 weight [N, K] (used with b_trans=True), bf16 gamma [K],
bf16 out [T, N]. Weight marked NONE_CACHEABLE (read once per iteration).
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 512
N = 256
TILE = 32
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def linear_projection_kernel(
    x: pypto.Tensor([T, K], pypto.DT_BF16),
    weight: pypto.Tensor([N, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    out: pypto.Tensor([T, N], pypto.DT_BF16),
):
    t = x.shape[0]
    weight.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(K)
    gamma_fp32 = pypto.cast(gamma, pypto.DT_FP32)
    tile_count = (t + TILE - 1) // TILE
    for idx in pypto.loop(tile_count, name="TOKEN_LOOP", idx_name="tIdx"):
        offset = idx * TILE
        tile_len = pypto.min(TILE, t - offset)
        x_tile = pypto.view(x, [TILE, K], [offset, 0], valid_shape=[tile_len, K])

        pypto.set_semantic_label("x-rmsnorm")
        pypto.set_vec_tile_shapes(4, K)
        normed = pypto.rms_norm(x_tile, gamma_fp32, EPS)
        normed_bf16 = pypto.cast(normed, pypto.DT_BF16)

        pypto.set_semantic_label("x-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        projected = pypto.matmul(normed_bf16, weight, pypto.DT_BF16, b_trans=True)

        pypto.set_semantic_label("out-assemble")
        pypto.set_vec_tile_shapes(4, N)
        pypto.assemble(pypto.cast(projected, pypto.DT_BF16), [offset, 0], out)


def golden(x, w, gamma):
    import numpy as np

    xf = x.astype(np.float32)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    normed = (xf / rms * gamma.astype(np.float32)).astype(x.dtype).astype(np.float32)
    return normed @ w.astype(np.float32).T


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([40, 7, 96] if os.environ.get("PTO") == "1" else [40])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(1)
        w = (rng.standard_normal((N, K)) * 0.05).astype(ml_dtypes.bfloat16)
        gamma = (1.0 + 0.1 * rng.standard_normal(K)).astype(ml_dtypes.bfloat16)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, K)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), dtype=ml_dtypes.bfloat16)
            linear_projection_kernel(x, w, gamma, out)
            want = golden(x, w, gamma)
            r = check(out, want)
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(1)
        w = (torch.randn(N, K) * 0.05).to(torch.bfloat16)
        gamma = (1.0 + 0.1 * torch.randn(K)).to(torch.bfloat16)
        for t in counts:
            x = torch.randn(t, K).to(torch.bfloat16)
            out = torch.zeros(t, N, dtype=torch.bfloat16)
            linear_projection_kernel(x, w, gamma, out)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(out.float()).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
