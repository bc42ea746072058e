import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# C -> V written with Python operators: y = x @ W^T, then y / sqrt(mean(y^2) + eps) * gamma
# (fp32 rank-1 gamma used directly), written back with slice assignment instead of assemble.
D_IN = 2048
D_OUT = 1536
EPS = 1e-5
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def proj_then_norm(x: pypto.Tensor([T, D_IN], pypto.DT_BF16),
                   w: pypto.Tensor([D_OUT, D_IN], pypto.DT_BF16),
                   gamma: pypto.Tensor([D_OUT], pypto.DT_FP32),
                   y: pypto.Tensor([T, D_OUT], pypto.DT_FP32)):
    for i, u in pypto.loop_unroll(0, x.shape[0], 1, name="LOOP", idx_name="i", unroll_list=[64, 8, 1]):
        pypto.set_cube_tile_shapes([32, 64], [256, 512], [128, 128])
        h = pypto.matmul(pypto.view(x, [u, D_IN], [i, 0], valid_shape=[u, D_IN]), w,
                         pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(8, D_OUT)
        r = h / pypto.sqrt(pypto.sum(h * h, -1, keepdim=True) / D_OUT + EPS) * gamma
        y[i:i + u, :] = r


def golden(x, w, gamma):
    import numpy as np
    h = x.astype(np.float32) @ w.astype(np.float32).T
    return (h / np.sqrt((h * h).sum(-1, keepdims=True) / D_OUT + EPS) * gamma).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(13)
        w = (rng.standard_normal((D_OUT, D_IN)) * 0.02).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.5, 1.5, D_OUT).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, D_IN)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, D_OUT), np.float32)
            proj_then_norm(x, w, gamma, y)
            r = check(y, golden(x, w, gamma))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            proj_then_norm(torch.randn(t, D_IN).bfloat16(), (torch.randn(D_OUT, D_IN) * 0.02).bfloat16(),
                           torch.ones(D_OUT), torch.zeros(t, D_OUT))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
