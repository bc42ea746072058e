import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Two outputs from one projection: the normalised activation itself (bf16, reused downstream)
# and q = normed @ Wq ([K, N] weight). Gamma is cast to fp32, then reshaped to [1, H] (not in place).
H = 1024
Q = 1536
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"vec_nbuffer_setting": {0: 2}, "cube_l1_reuse_setting": {-1: 2, 1: 1}})
def norm_and_q(x: pypto.Tensor([T, H], pypto.DT_BF16),
               gamma: pypto.Tensor([H], pypto.DT_BF16),
               wq: pypto.Tensor([H, Q], pypto.DT_BF16),
               x_normed: pypto.Tensor([T, H], pypto.DT_BF16),
               q: pypto.Tensor([T, Q], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(H)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(1, H)
    g32 = pypto.reshape(g32, [1, H])
    for b, n in pypto.loop_unroll(0, x.shape[0], 1, name="B", idx_name="b", unroll_list=[32, 16, 1]):
        pypto.set_semantic_label("x-rmsnorm")
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(pypto.view(x, [n, H], [b, 0], valid_shape=[n, H]), pypto.DT_FP32)
        sq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        rstd = pypto.rsqrt(pypto.add(pypto.mul(sq, 1.0 / H), EPS))
        xn = pypto.cast(pypto.mul(pypto.mul(xf, rstd), g32), pypto.DT_BF16)
        pypto.assemble(xn, [b, 0], x_normed)
        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        pypto.assemble(pypto.matmul(xn, wq, pypto.DT_BF16), [b, 0], q)


def golden(x, gamma, wq):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf ** 2, -1, keepdims=True) + EPS) * gamma.astype(np.float32)).astype(ml_dtypes.bfloat16)
    return xn, (xn.astype(np.float32) @ wq.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(20)
        gamma = rng.uniform(0.5, 1.5, H).astype(ml_dtypes.bfloat16)
        wq = (rng.standard_normal((H, Q)) * 0.03).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            xn = np.zeros((t, H), ml_dtypes.bfloat16)
            q = np.zeros((t, Q), ml_dtypes.bfloat16)
            norm_and_q(x, gamma, wq, xn, q)
            gxn, gq = golden(x, gamma, wq)
            for nm, a, e in (("x_normed", xn, gxn), ("q", q, gq)):
                r = check(a, e)
                print(t, r.describe(nm))
                ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            norm_and_q(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(), (torch.randn(H, Q) * 0.03).bfloat16(),
                       torch.zeros(t, H).bfloat16(), torch.zeros(t, Q).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
