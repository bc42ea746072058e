import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Wide output (N = 8192) from a narrow hidden (1024): gamma cast to fp32 inside the loop,
# vec tiles (1, H), a single unroll factor [128] (remainder by 1), cube m tile = 128.
H = 1024
N = 8192
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def wide_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
              gamma: pypto.Tensor([H], pypto.DT_BF16),
              w: pypto.Tensor([N, H], pypto.DT_BF16),
              y: pypto.Tensor([T, N], pypto.DT_BF16)):
    for t, n in pypto.loop_unroll(0, x.shape[0], 1, name="L", idx_name="t", unroll_list=[128]):
        pypto.set_vec_tile_shapes(1, H)
        gamma_fp32 = pypto.cast(gamma, pypto.DT_FP32)
        xv = pypto.cast(pypto.view(x, [n, H], [t, 0], valid_shape=[n, H]), pypto.DT_FP32)
        inv = pypto.rsqrt(pypto.sum(xv * xv, -1, keepdim=True) * (1.0 / H) + EPS)
        xb = pypto.cast(xv * inv * gamma_fp32, pypto.DT_BF16)
        pypto.set_cube_tile_shapes([128, 128], [128, 512], [256, 256])
        pypto.assemble(pypto.matmul(xb, w, pypto.DT_BF16, b_trans=True), [t, 0], y)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    f = x.astype(np.float32)
    f = f / np.sqrt(np.mean(f * f, -1, keepdims=True) + EPS) * gamma.astype(np.float32)
    return (f.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(18)
        gamma = rng.uniform(0.5, 1.5, H).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((N, H)) * 0.03).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), ml_dtypes.bfloat16)
            wide_proj(x, gamma, w, y)
            r = check(y, golden(x, gamma, w))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            wide_proj(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(),
                      (torch.randn(N, H) * 0.03).bfloat16(), torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
