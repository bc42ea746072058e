"""SK-03 with a STATIC token count (one jit kernel built per token count, as static-shape PyPTO
kernels are), pypto.loop over ceil(T/TILE) tiles with valid_shape tails, a hand-written RMSNorm
using operator overloads: x / sqrt(sum(x*x)/K + eps) * gamma (gamma already fp32),
weight stored [K, N] (no b_trans), output fp32.
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 768
N = 512
TILE = 16
EPS = 1e-5


def build_kernel(t_static):
    tile_count = (t_static + TILE - 1) // TILE

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def static_rms_linear(
        x: pypto.Tensor([t_static, K], pypto.DT_BF16),
        w_kn: pypto.Tensor([K, N], pypto.DT_BF16),
        gamma: pypto.Tensor([K], pypto.DT_FP32),
        out: pypto.Tensor([t_static, N], pypto.DT_FP32),
    ):
        w_kn.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        g = pypto.reshape(gamma, [1, K], inplace=True)
        for i in pypto.loop(tile_count, name="TILE_LOOP", idx_name="i"):
            off = i * TILE
            valid = pypto.min(TILE, t_static - off)
            xt = pypto.view(x, [TILE, K], [off, 0], valid_shape=[valid, K])

            pypto.set_semantic_label("rmsnorm")
            pypto.set_vec_tile_shapes(8, K)
            xf = pypto.cast(xt, pypto.DT_FP32)
            ms = pypto.sum(xf * xf, -1, keepdim=True) / K
            rms = pypto.sqrt(ms + EPS)
            normed = xf / rms * g
            nb = pypto.cast(normed, pypto.DT_BF16)

            pypto.set_semantic_label("proj")
            pypto.set_cube_tile_shapes([16, 16], [128, 256], [128, 256])
            res = pypto.matmul(nb, w_kn, pypto.DT_FP32)
            pypto.assemble(res, [off, 0], out)

    return static_rms_linear


def golden(x, w_kn, gamma):
    import numpy as np

    xf = x.astype(np.float32)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    normed = (xf / rms * gamma).astype(x.dtype).astype(np.float32)
    return normed @ w_kn.astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([37, 16, 5] if os.environ.get("PTO") == "1" else [37])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(3)
        w = (rng.standard_normal((K, N)) * 0.04).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.8, 1.2, K).astype(np.float32)
        ok_all = True
        for t in counts:
            kern = build_kernel(t)
            x = rng.standard_normal((t, K)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), dtype=np.float32)
            kern(x, w, gamma, out)
            want = golden(x, w, gamma)
            # fp32 output of a bf16 matmul: judge with the bf16 tolerance (inputs are bf16)
            r = check(out, want, "bf16")
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(3)
        w = (torch.randn(K, N) * 0.04).to(torch.bfloat16)
        gamma = torch.rand(K) * 0.4 + 0.8
        for t in counts:
            kern = build_kernel(t)
            x = torch.randn(t, K).to(torch.bfloat16)
            out = torch.zeros(t, N, dtype=torch.float32)
            kern(x, w, gamma, out)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(out).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
