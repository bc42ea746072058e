import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V with a residual of the input rows: out = x + RMSNorm(x) @ W, W [K, N] (no b_trans),
# H = N = 2048, unroll list [256, 32, 1]. The residual re-reads the bf16 rows after the matmul
# (cast just in time instead of keeping the fp32 copy across the cube stage).
# Subscript-style annotations with pypto.DYNAMIC; gamma stays bf16 and is cast inside the loop.
H = 2048
EPS = 1e-5
BS = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def resid_proj(x: pypto.Tensor[[BS, H], pypto.DT_BF16],
               gamma: pypto.Tensor[[H], pypto.DT_BF16],
               w: pypto.Tensor[[H, H], pypto.DT_BF16],
               out: pypto.Tensor[[BS, H], pypto.DT_BF16]):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    bs = x.shape[0]
    for b0, nb in pypto.loop_unroll(0, bs, 1, name="RESID_LOOP", idx_name="b0", unroll_list=[256, 32, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        g = pypto.cast(gamma, pypto.DT_FP32)
        xf = pypto.cast(pypto.view(x, [nb, H], [b0, 0], valid_shape=[nb, H]), pypto.DT_FP32)
        var = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(var, EPS))), g)
        xn = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_semantic_label("dense")
        if nb >= 32:
            pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 256])
        else:
            pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        acc = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_semantic_label("residual-add")
        pypto.set_vec_tile_shapes(4, H)
        res = pypto.cast(pypto.view(x, [nb, H], [b0, 0], valid_shape=[nb, H]), pypto.DT_FP32)
        pypto.assemble(pypto.cast(pypto.add(acc, res), pypto.DT_BF16), [b0, 0], out)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt(np.mean(xf * xf, axis=1, keepdims=True) + EPS) * gamma.astype(np.float32)
    xn = xn.astype(ml_dtypes.bfloat16).astype(np.float32)
    return (xn @ w.astype(np.float32) + xf).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(202)
        gamma = rng.uniform(0.8, 1.2, H).astype(bf16)
        w = (rng.standard_normal((H, H)) * 0.02).astype(bf16)
        ok = True
        for n in counts:
            x = rng.standard_normal((n, H)).astype(bf16)
            out = np.zeros((n, H), bf16)
            resid_proj(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(n, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for n in counts:
            x = torch.randn(n, H).bfloat16()
            gamma = torch.ones(H).bfloat16()
            w = (torch.randn(H, H) * 0.02).bfloat16()
            out = torch.zeros(n, H).bfloat16()
            resid_proj(x, gamma, w, out)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
