import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# fp16 end to end, weight [K, N] consumed without b_trans, unroll list [64, 8, 1].
# RMSNorm written with Python operators; gamma cast to fp32 once and reshaped in place to [1, H].
H = 2048
N = 1024
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "vec_nbuffer_setting": {0: 2}})
def fp16_kn_proj(x: pypto.Tensor([T, H], pypto.DT_FP16),
                 gamma: pypto.Tensor([H], pypto.DT_FP16),
                 w: pypto.Tensor([H, N], pypto.DT_FP16),
                 y: pypto.Tensor([T, N], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(H)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    g32 = pypto.reshape(g32, [1, H], inplace=True)
    for t0, u in pypto.loop_unroll(0, x.shape[0], 1, name="FP16_LOOP", idx_name="t0", unroll_list=[64, 8, 1]):
        pypto.set_semantic_label("rmsnorm-fp16")
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(pypto.view(x, [u, H], [t0, 0], valid_shape=[u, H]), pypto.DT_FP32)
        ms = pypto.sum(xf * xf, -1, keepdim=True) / float(H)
        xn = xf * pypto.rsqrt(ms + EPS) * g32
        xh = pypto.cast(xn, pypto.DT_FP16)
        pypto.set_semantic_label("linear-fp16")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 256])
        yt = pypto.matmul(xh, w, pypto.DT_FP16)
        pypto.assemble(yt, [t0, 0], y)


def golden(x, gamma, w):
    import numpy as np
    xf = x.astype(np.float32)
    inv = 1.0 / np.sqrt((xf * xf).mean(-1, keepdims=True) + np.float32(EPS))
    xn = (xf * inv * gamma.astype(np.float32)).astype(np.float16).astype(np.float32)
    return (xn @ w.astype(np.float32)).astype(np.float16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(101)
        gamma = rng.uniform(0.6, 1.4, H).astype(np.float16)
        w = (rng.standard_normal((H, N)) * 0.02).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            out = np.zeros((t, N), np.float16)
            fp16_kn_proj(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            x = torch.randn(t, H, dtype=torch.float16)
            gamma = torch.rand(H, dtype=torch.float16) + 0.5
            w = (torch.randn(H, N) * 0.02).half()
            out = torch.zeros(t, N, dtype=torch.float16)
            fp16_kn_proj(x, gamma, w, out)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
