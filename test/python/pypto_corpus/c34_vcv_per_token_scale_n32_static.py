import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Tiny output (N = 32) from H = 3072 with a per-token output scale: y = (RMSNorm(x) @ W^T) * s[t].
# Weight and gamma annotated with pypto.STATIC dims (sizes bound from the first call), the token
# dim pypto.DYNAMIC; W [N, K] bf16 with b_trans; s is a [T, 1] fp32 input viewed per tile.
# A single unroll factor [8]; fp32 output.
H = 3072
N = 32
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def scaled_head(x: pypto.Tensor[[T, H], pypto.DT_BF16],
                gamma: pypto.Tensor[[pypto.STATIC], pypto.DT_BF16],
                w: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_BF16],
                tok_scale: pypto.Tensor[[T, 1], pypto.DT_FP32],
                y: pypto.Tensor[[T, N], pypto.DT_FP32]):
    pypto.set_vec_tile_shapes(H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    for i, k in pypto.loop_unroll(0, x.shape[0], 1, name="HEAD_LOOP", idx_name="i", unroll_list=[8]):
        pypto.set_semantic_label("norm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [k, H], [i, 0], valid_shape=[k, H]), pypto.DT_FP32)
        rstd = pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H) + EPS)
        xn = pypto.cast(xf * rstd * g, pypto.DT_BF16)
        pypto.set_semantic_label("head-linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [32, 32])
        logits = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
        pypto.set_semantic_label("token-scale")
        pypto.set_vec_tile_shapes(8, N)
        s = pypto.view(tok_scale, [k, 1], [i, 0], valid_shape=[k, 1])
        pypto.assemble(logits * s, [i, 0], y)


def golden(x, gamma, w, s):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt((xf * xf).sum(-1, keepdims=True) / H + EPS) * gamma.astype(np.float32)
    xn = xn.astype(ml_dtypes.bfloat16).astype(np.float32)
    return (xn @ w.astype(np.float32).T) * s


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(606)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf16)
        w = (rng.standard_normal((N, H)) * 0.02).astype(bf16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf16)
            s = rng.uniform(0.1, 2.0, (t, 1)).astype(np.float32)
            y = np.zeros((t, N), np.float32)
            scaled_head(x, gamma, w, s, y)
            r = check(y, golden(x, gamma, w, s))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            scaled_head(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(),
                        (torch.randn(N, H) * 0.02).bfloat16(), torch.rand(t, 1) + 0.1,
                        torch.zeros(t, N))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
