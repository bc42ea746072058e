import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V with a head-mixing post-stage: RMSNorm(x) (H = 1024, gamma rank-1 bf16, cast in the
# loop) -> matmul with W [K, N] = [1024, 4 * 256] (no b_trans, fp32 result) -> reshape [t, 4, 256]
# -> scaled by per-token head weights hw [T, 4] fp32 (view [t, 4] reshaped to [t, 4, 1]) -> summed
# over dim -2 (the heads) -> fp32 output [T, 256]. Tensor-method spelling; unroll [16, 4, 1].
H = 1024
NH = 4
D = 256
N = NH * D
EPS = 1e-5
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def head_mix(x: pypto.Tensor([T, H], pypto.DT_BF16),
             gamma: pypto.Tensor([H], pypto.DT_BF16),
             w: pypto.Tensor([H, N], pypto.DT_BF16),
             hw: pypto.Tensor([T, NH], pypto.DT_FP32),
             y: pypto.Tensor([T, D], pypto.DT_FP32)):
    for off, k in pypto.loop_unroll(0, x.shape[0], 1, name="MIX", idx_name="off", unroll_list=[16, 4, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        g = pypto.cast(gamma, pypto.DT_FP32)
        xf = pypto.cast(x.view([k, H], [off, 0], valid_shape=[k, H]), pypto.DT_FP32)
        inv = xf.mul(xf).sum(-1, keepdim=True).mul(1.0 / H).add(EPS).rsqrt()
        xn = pypto.cast(xf.mul(inv).mul(g), pypto.DT_BF16)

        pypto.set_semantic_label("proj")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        h = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_semantic_label("head-mix")
        pypto.set_vec_tile_shapes(4, NH, D)
        h3 = h.reshape([k, NH, D], inplace=True)
        wt = hw.view([k, NH], [off, 0], valid_shape=[k, NH]).reshape([k, NH, 1])
        mixed = h3.mul(wt).sum(-2)
        pypto.set_vec_tile_shapes(4, D)
        y[off:off + k, :] = mixed


def golden(x, gamma, w, hw):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float64)).astype(bf).astype(np.float64)
    h = (xn @ w.astype(np.float64)).reshape(-1, NH, D)
    return (h * hw.astype(np.float64)[:, :, None]).sum(-2).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3404)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf)
        w = (rng.standard_normal((H, N)) * 0.03).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            hw = rng.uniform(0.0, 1.0, (t, NH)).astype(np.float32)
            y = np.zeros((t, D), np.float32)
            head_mix(x, gamma, w, hw, y)
            r = check(y, golden(x, gamma, w, hw))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            head_mix(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(), (torch.randn(H, N) * 0.03).bfloat16(),
                     torch.rand(t, NH), torch.zeros(t, D))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
