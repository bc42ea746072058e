import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# The simplest possible author: one token per iteration, pypto.loop(t), no unroll,
# tile shapes set once at the top of the kernel. Weight [N, K] with b_trans.
H = 1024
N = 1024
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def per_token(x: pypto.Tensor([T, H], pypto.DT_BF16),
              g: pypto.Tensor([H], pypto.DT_BF16),
              w: pypto.Tensor([N, H], pypto.DT_BF16),
              y: pypto.Tensor([T, N], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(1, H)
    pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
    for i in pypto.loop(x.shape[0], name="TOK", idx_name="i"):
        xr = pypto.cast(pypto.view(x, [1, H], [i, 0]), pypto.DT_FP32)
        gr = pypto.cast(g, pypto.DT_FP32)
        xr = pypto.mul(pypto.mul(xr, pypto.rsqrt(pypto.add(pypto.mul(pypto.sum(pypto.mul(xr, xr), -1, keepdim=True), 1.0 / H), EPS))), gr)
        pypto.assemble(pypto.matmul(pypto.cast(xr, pypto.DT_BF16), w, pypto.DT_BF16, b_trans=True), [i, 0], y)


def golden(x, g, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * g.astype(np.float32)).astype(ml_dtypes.bfloat16)
    return (xn.astype(np.float32) @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(27)
        g = rng.uniform(0.5, 1.5, H).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((N, H)) * 0.03).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), ml_dtypes.bfloat16)
            per_token(x, g, w, y)
            r = check(y, golden(x, g, w))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            per_token(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(), (torch.randn(N, H) * 0.03).bfloat16(),
                      torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
