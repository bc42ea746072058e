import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V with small weights broadcast by expand_clone: H = 5120 -> N = 1280.
# gamma [H] bf16 -> fp32, reshaped to [1, H] and expand_clone'd inside the loop to the tile [p, H];
# channel bias [N] fp32 expand_clone'd to [p, N] inside the loop; output channel scale [N] fp32
# reshaped in place to [1, N] and expand_clone'd to [1, N] once before the loop (a plain copy).
# Tile taken with Python slicing x[i:i + p, :]; RMSNorm as x * reciprocal(sqrt(mean + eps));
# W [N, K] bf16 with b_trans (NONE_CACHEABLE), fp32 result -> (h + bias) * scale -> ReLU (maximum with 0)
# -> bf16 output [T, N]. Unroll [32, 8, 2, 1] (45 = 32 + 8 + 2*2 + 1).
HID = 5120
N = 1280
EPS = 1e-5
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def proj_affine(x: pypto.Tensor([T, HID], pypto.DT_BF16),
                gamma: pypto.Tensor([HID], pypto.DT_BF16),
                w: pypto.Tensor([N, HID], pypto.DT_BF16),
                bias: pypto.Tensor([N], pypto.DT_FP32),
                scale: pypto.Tensor([N], pypto.DT_FP32),
                out: pypto.Tensor([T, N], pypto.DT_BF16)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(1, HID)
    g1 = pypto.reshape(pypto.cast(gamma, pypto.DT_FP32), [1, HID])
    pypto.set_vec_tile_shapes(1, N)
    sc = pypto.expand_clone(pypto.reshape(scale, [1, N], inplace=True), [1, N])
    b1 = pypto.reshape(bias, [1, N], inplace=True)
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="AFF", idx_name="i", unroll_list=[32, 8, 2, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(2, HID)
        xt = pypto.cast(x[i:i + p, :], pypto.DT_FP32)
        gp = pypto.expand_clone(g1, [p, HID])
        ms = pypto.add(pypto.mul(pypto.sum(pypto.mul(xt, xt), -1, keepdim=True), 1.0 / HID), EPS)
        xn = pypto.mul(pypto.mul(xt, pypto.reciprocal(pypto.sqrt(ms))), gp)

        pypto.set_semantic_label("linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [128, 128])
        h = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("affine-relu")
        pypto.set_vec_tile_shapes(8, N)
        bp = pypto.expand_clone(b1, [p, N])
        y = pypto.maximum(pypto.mul(pypto.add(h, bp), sc), 0.0)
        pypto.assemble(pypto.cast(y, pypto.DT_BF16), [i, 0], out)


def golden(x, gamma, w, bias, scale):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(x)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    h = f(a) @ f(w).T
    return np.maximum((h + f(bias)) * f(scale), 0.0).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1505)
        gamma = rng.uniform(0.5, 1.5, HID).astype(bf)
        w = (rng.standard_normal((N, HID)) * 0.02).astype(bf)
        bias = rng.uniform(-0.5, 0.5, N).astype(np.float32)
        scale = rng.uniform(0.5, 2.0, N).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            out = np.zeros((t, N), bf)
            proj_affine(x, gamma, w, bias, scale, out)
            r = check(out, golden(x, gamma, w, bias, scale))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            proj_affine(torch.randn(t, HID).bfloat16(), torch.rand(HID).bfloat16() + 0.5,
                        (torch.randn(N, HID) * 0.02).bfloat16(), torch.rand(N) - 0.5, torch.rand(N) + 0.5,
                        torch.zeros(t, N).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
