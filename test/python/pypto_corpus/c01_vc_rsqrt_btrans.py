import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Canonical SK-03 V->C: RMSNorm (rsqrt) -> bf16 matmul, weight [N, K] with b_trans.
H = 1024
N = 512
EPS = 1e-6
TILE = 16
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "vec_nbuffer_setting": {0: 2}})
def linear_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
                gamma: pypto.Tensor([H], pypto.DT_BF16),
                w: pypto.Tensor([N, H], pypto.DT_BF16),
                out: pypto.Tensor([T, N], pypto.DT_BF16)):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(H)
    gamma_fp32 = pypto.cast(gamma, pypto.DT_FP32)
    for idx, p in pypto.loop_unroll(0, t, 1, name="TOKEN_LOOP", idx_name="tIdx", unroll_list=[TILE, 4, 1]):
        x_tile = pypto.view(x, [p, H], [idx, 0], valid_shape=[p, H])
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(x_tile, pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        ms = pypto.mul(ms, 1.0 / H)
        inv = pypto.rsqrt(pypto.add(ms, EPS))
        normed = pypto.mul(pypto.mul(xf, inv), gamma_fp32)
        nb = pypto.cast(normed, pypto.DT_BF16)
        pypto.set_semantic_label("proj-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        y = pypto.matmul(nb, w, pypto.DT_BF16, b_trans=True)
        pypto.assemble(y, [idx, 0], out)


def golden(x, gamma, w):
    import numpy as np
    import ml_dtypes
    xf = x.astype(np.float32)
    ms = np.mean(xf * xf, axis=-1, keepdims=True)
    normed = xf / np.sqrt(ms + EPS) * gamma.astype(np.float32)
    nb = normed.astype(ml_dtypes.bfloat16).astype(np.float32)
    y = nb @ w.astype(np.float32).T
    return y.astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        ok = True
        rng = np.random.default_rng(1)
        gamma = rng.uniform(0.5, 1.5, H).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((N, H)) * 0.03).astype(ml_dtypes.bfloat16)
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), dtype=ml_dtypes.bfloat16)
            linear_proj(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.ok, r.bad, r.total)
            ok &= r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            x = torch.randn(t, H).to(torch.bfloat16)
            gamma = torch.rand(H).to(torch.bfloat16) + 0.5
            w = (torch.randn(N, H) * 0.03).to(torch.bfloat16)
            out = torch.zeros(t, N, dtype=torch.bfloat16)
            linear_proj(x, gamma, w, out)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
