import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C with the weight annotated in NZ (fractal) format, [N, K] with b_trans.
# RMSNorm's inverse root written as pow(mean + eps, -0.5).
K = 3072
N = 768
EPS = 1e-6
M = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_nbuffer_setting": {-1: 2}, "vec_nbuffer_setting": {0: 2}})
def nz_proj(a: pypto.Tensor([M, K], pypto.DT_BF16),
            g: pypto.Tensor([K], pypto.DT_BF16),
            b: pypto.Tensor([N, K], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
            c: pypto.Tensor([M, N], pypto.DT_BF16)):
    m = a.shape[0]
    pypto.set_vec_tile_shapes(1, K)
    g_row = pypto.cast(pypto.reshape(g, [1, K]), pypto.DT_FP32)
    for mi, mt in pypto.loop_unroll(0, m, 1, name="M_LOOP", idx_name="mi", unroll_list=[32, 16, 1]):
        pypto.set_vec_tile_shapes(2, K)
        af = pypto.cast(pypto.view(a, [mt, K], [mi, 0], valid_shape=[mt, K]), pypto.DT_FP32)
        p = pypto.pow(pypto.add(pypto.mul(pypto.sum(pypto.mul(af, af), -1, keepdim=True), 1.0 / K), EPS), -0.5)
        an = pypto.cast(pypto.mul(pypto.mul(af, p), g_row), pypto.DT_BF16)
        pypto.set_cube_tile_shapes([32, 32], [128, 512], [128, 128])
        cc = pypto.matmul(an, b, pypto.DT_BF16, b_trans=True)
        pypto.assemble(cc, [mi, 0], c)


def golden(a, g, b):
    import numpy as np, ml_dtypes
    af = a.astype(np.float32)
    an = af * np.power(np.mean(af * af, -1, keepdims=True) + EPS, -0.5) * g.astype(np.float32)
    return (an.astype(ml_dtypes.bfloat16).astype(np.float32) @ b.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(12)
        g = rng.uniform(0.5, 1.5, K).astype(ml_dtypes.bfloat16)
        b = (rng.standard_normal((N, K)) * 0.02).astype(ml_dtypes.bfloat16)   # logical [N, K] values
        ok = True
        for m in counts:
            a = rng.standard_normal((m, K)).astype(ml_dtypes.bfloat16)
            c = np.zeros((m, N), ml_dtypes.bfloat16)
            nz_proj(a, g, b, c)
            r = check(c, golden(a, g, b))
            print(m, r.describe("c"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for m in counts:
            nz_proj(torch.randn(m, K).bfloat16(), torch.ones(K).bfloat16(),
                    (torch.randn(N, K) * 0.02).bfloat16(), torch.zeros(m, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
