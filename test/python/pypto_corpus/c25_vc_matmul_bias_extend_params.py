import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C with the bias fused into the cube (matmul extend_params={'bias_tensor': ...}),
# bias fp32 [1, N] (PyPTO requires fp32 bias for bf16 inputs). Hidden 3072 -> 768.
H = 3072
N = 768
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def norm_linear_bias(x: pypto.Tensor([T, H], pypto.DT_BF16),
                     gamma: pypto.Tensor([H], pypto.DT_FP32),
                     w: pypto.Tensor([H, N], pypto.DT_BF16),
                     bias: pypto.Tensor([1, N], pypto.DT_FP32),
                     y: pypto.Tensor([T, N], pypto.DT_BF16)):
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="BL", idx_name="i", unroll_list=[32, 4, 1]):
        pypto.set_vec_tile_shapes(2, H)
        xf = pypto.cast(pypto.view(x, [p, H], [i, 0], valid_shape=[p, H]), pypto.DT_FP32)
        xn = xf * pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H) + EPS) * gamma
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        yy = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), w, pypto.DT_BF16, extend_params={"bias_tensor": bias})
        pypto.assemble(yy, [i, 0], y)


def golden(x, gamma, w, bias):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma).astype(ml_dtypes.bfloat16)
    return (xn.astype(np.float32) @ w.astype(np.float32) + bias.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(25)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        w = (rng.standard_normal((H, N)) * 0.02).astype(ml_dtypes.bfloat16)
        bias = rng.standard_normal((1, N)).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), ml_dtypes.bfloat16)
            norm_linear_bias(x, gamma, w, bias, y)
            r = check(y, golden(x, gamma, w, bias))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            norm_linear_bias(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(H, N) * 0.02).bfloat16(),
                             torch.randn(1, N), torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
