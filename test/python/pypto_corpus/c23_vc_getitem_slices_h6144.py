import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Tiles taken with Python slicing (x[i:i+p, :]) instead of pypto.view; hidden 6144 -> 1024,
# [K, N] weight; the reciprocal-multiply form of RMSNorm: x * reciprocal(sqrt(ms)).
H = 6144
N = 1024
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def sliced_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
                gamma: pypto.Tensor([H], pypto.DT_FP32),
                w: pypto.Tensor([H, N], pypto.DT_BF16),
                out: pypto.Tensor([T, N], pypto.DT_BF16)):
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="S", idx_name="i", unroll_list=[8, 4, 1]):
        pypto.set_vec_tile_shapes(2, H)
        xt = pypto.cast(x[i:i + p, :], pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(xt, xt), -1, keepdim=True)
        ms = pypto.add(pypto.mul(ms, 1.0 / H), EPS)
        xt = pypto.mul(pypto.mul(xt, pypto.reciprocal(pypto.sqrt(ms))), gamma)
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        y = pypto.matmul(pypto.cast(xt, pypto.DT_BF16), w, pypto.DT_BF16)
        pypto.assemble(y, [i, 0], out)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf * (1.0 / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS)) * gamma
    return (xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(23)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        w = (rng.standard_normal((H, N)) * 0.015).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), ml_dtypes.bfloat16)
            sliced_proj(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            sliced_proj(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(H, N) * 0.015).bfloat16(),
                        torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
