import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Tiny output (N = 24) in fp32 all the way: pypto.rms_norm without gamma, then gamma applied
# separately; fp32 weight [24, 1024] with b_trans; decode unroll list [256, 64, 16, 4, 1].
H = 1024
N = 24
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def tiny_head(x: pypto.Tensor([T, H], pypto.DT_FP32),
              gamma: pypto.Tensor([H], pypto.DT_FP32),
              w: pypto.Tensor([N, H], pypto.DT_FP32),
              y: pypto.Tensor([T, N], pypto.DT_FP32)):
    for s, k in pypto.loop_unroll(0, x.shape[0], 1, name="DEC", idx_name="s", unroll_list=[256, 64, 16, 4, 1]):
        pypto.set_vec_tile_shapes(4, H)
        xv = pypto.view(x, [k, H], [s, 0], valid_shape=[k, H])
        xn = pypto.rms_norm(xv, epsilon=EPS)
        xn = pypto.mul(xn, gamma)
        pypto.set_cube_tile_shapes([16, 16], [128, 512], [32, 32])
        pypto.assemble(pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True), [s, 0], y)


def golden(x, gamma, w):
    import numpy as np
    xn = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS) * gamma
    return (xn @ w.T).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(19)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        w = (rng.standard_normal((N, H)) * 0.05).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float32)
            y = np.zeros((t, N), np.float32)
            tiny_head(x, gamma, w, y)
            r = check(y, golden(x, gamma, w))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            tiny_head(torch.randn(t, H), torch.ones(H), torch.randn(N, H) * 0.05, torch.zeros(t, N))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
