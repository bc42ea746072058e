import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Pre-norm projection with a residual: out = x + RMSNorm(x) @ W^T.
# The RMSNorm lives in a plain Python helper (traced inline); gamma reshaped to [1, H]
# (not in place) and cast to fp32 inside the loop; W is [N, K] used with b_trans.
H = 1536
EPS = 1e-6
TOK = pypto.DYNAMIC


def rmsnorm_fp32(x, g2d, eps):
    sq = x * x
    ms = pypto.sum(sq, dim=-1, keepdim=True) * (1.0 / H)
    return x * pypto.rsqrt(ms + eps) * g2d


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def residual_proj(x: pypto.Tensor([TOK, H], pypto.DT_BF16),
                  gamma: pypto.Tensor([H], pypto.DT_BF16),
                  w: pypto.Tensor([H, H], pypto.DT_BF16),
                  out: pypto.Tensor([TOK, H], pypto.DT_BF16)):
    ntok = x.shape[0]
    pypto.set_vec_tile_shapes(1, H)
    g2 = pypto.reshape(gamma, [1, H])
    for b, m in pypto.loop_unroll(0, ntok, 1, name="RES_LOOP", idx_name="b", unroll_list=[32, 8]):
        pypto.set_semantic_label("pre-norm")
        pypto.set_vec_tile_shapes(1, H)
        gf = pypto.cast(g2, pypto.DT_FP32)
        xv = pypto.view(x, [m, H], [b, 0], valid_shape=[m, H])
        xf = pypto.cast(xv, pypto.DT_FP32)
        xn = rmsnorm_fp32(xf, gf, EPS)
        xn = pypto.cast(xn, pypto.DT_BF16)
        pypto.set_semantic_label("o-proj")
        pypto.set_cube_tile_shapes([32, 32], [128, 512], [128, 128])
        p = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
        pypto.set_semantic_label("residual")
        pypto.set_vec_tile_shapes(4, H)
        r = pypto.add(p, xf)
        pypto.assemble(pypto.cast(r, pypto.DT_BF16), [b, 0], out)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    n = xf * (1 / np.sqrt((xf * xf).sum(1, keepdims=True) / H + EPS)) * gamma.astype(np.float32)
    n = n.astype(ml_dtypes.bfloat16).astype(np.float32)
    return (xf + n @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(7)
        gamma = rng.uniform(0.7, 1.3, H).astype(bf16)
        w = (rng.standard_normal((H, H)) * 0.02).astype(bf16)
        verdicts = []
        for n in counts:
            x = rng.standard_normal((n, H)).astype(bf16)
            out = np.empty((n, H), bf16)
            residual_proj(x, gamma, w, out)
            v = check(out, golden(x, gamma, w))
            print(n, v.describe("out"))
            verdicts.append(v.ok)
        print("PASS" if all(verdicts) else "FAIL")
    else:
        import torch
        for n in counts:
            residual_proj(torch.randn(n, H).bfloat16(), torch.ones(H).bfloat16(),
                          (torch.randn(H, H) * 0.02).bfloat16(), torch.empty(n, H).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
