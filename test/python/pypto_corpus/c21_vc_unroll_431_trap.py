import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Non-power-of-two unroll list [4, 3, 1] (SK03's "known trap": PyPTO 0.2.0 computes each tail
# from the original start). Plain V -> C, weight [K, N].
H = 1024
N = 512
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def odd_unroll(x: pypto.Tensor([T, H], pypto.DT_BF16),
               gamma: pypto.Tensor([H], pypto.DT_FP32),
               w: pypto.Tensor([H, N], pypto.DT_BF16),
               out: pypto.Tensor([T, N], pypto.DT_BF16)):
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="ODD", idx_name="i", unroll_list=[4, 3, 1]):
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [p, H], [i, 0], valid_shape=[p, H]), pypto.DT_FP32)
        xf = xf * pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H) + EPS) * gamma
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        pypto.assemble(pypto.matmul(pypto.cast(xf, pypto.DT_BF16), w, pypto.DT_BF16), [i, 0], out)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma
    return (xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(21)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        w = (rng.standard_normal((H, N)) * 0.03).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts + [10]:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, N), ml_dtypes.bfloat16)
            odd_unroll(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            odd_unroll(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(H, N) * 0.03).bfloat16(),
                       torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
