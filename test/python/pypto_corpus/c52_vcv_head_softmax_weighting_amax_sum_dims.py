import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V with a softmax-like head weighting over [t, H, D]: RMSNorm(x) (H = 1024, bf16 gamma cast
# to fp32 before the loop) -> x @ W^T (W [N, K] = [8 * 64, 1024], b_trans, fp32) -> reshape [t, 8, 64]
# -> per-head score = sum over dim -1 (keepdim, [t, 8, 1]) / sqrt(64) -> stabilised softmax over the
# heads: amax over dim -2 ([t, 1, 1]), exp(score - max), divided by its sum over dim -2
# -> out = sum over dim -2 of y * w ([t, 64]) fp32, and the head weights w reshaped to [t, 8] as a
# second fp32 output. Python operators for the arithmetic; unroll [128, 32, 1] (200 = 128 + 2*32 + 8*1).
HID = 1024
NH = 8
D = 64
N = NH * D
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def head_mix(x: pypto.Tensor([T, HID], pypto.DT_BF16),
             gamma: pypto.Tensor([HID], pypto.DT_BF16),
             w: pypto.Tensor([N, HID], pypto.DT_BF16),
             out: pypto.Tensor([T, D], pypto.DT_FP32),
             hw: pypto.Tensor([T, NH], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(HID)
    g = pypto.cast(gamma, pypto.DT_FP32)
    for i, tt in pypto.loop_unroll(0, x.shape[0], 1, name="MIX", idx_name="i", unroll_list=[128, 32, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(8, HID)
        xt = pypto.cast(pypto.view(x, [tt, HID], [i, 0], valid_shape=[tt, HID]), pypto.DT_FP32)
        r = pypto.sqrt(pypto.sum(xt * xt, -1, keepdim=True) / HID + EPS)
        xn = pypto.cast(xt / r * g, pypto.DT_BF16)

        pypto.set_semantic_label("linear")
        pypto.set_cube_tile_shapes([64, 128], [256, 512], [128, 256])
        y = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("head-softmax")
        pypto.set_vec_tile_shapes(8, NH, D)
        y3 = pypto.reshape(y, [tt, NH, D])
        sc = pypto.sum(y3, -1, keepdim=True) * (1.0 / D ** 0.5)
        m = pypto.amax(sc, -2, keepdim=True)
        e = pypto.exp(sc - m)
        wts = e / pypto.sum(e, -2, keepdim=True)
        o = pypto.sum(y3 * wts, -2)
        pypto.set_vec_tile_shapes(8, D)
        pypto.assemble(o, [i, 0], out)
        pypto.set_vec_tile_shapes(8, NH)
        pypto.assemble(pypto.reshape(wts, [tt, NH]), [i, 0], hw)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(x)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    y = (f(a) @ f(w).T).reshape(-1, NH, D)
    sc = y.sum(-1) / np.sqrt(D)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    o = (y * p[..., None]).sum(1)
    return o.astype(np.float32), p.astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1404)
        gamma = rng.uniform(0.5, 1.5, HID).astype(bf)
        w = (rng.standard_normal((N, HID)) * 0.02).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            out = np.zeros((t, D), np.float32)
            hw = np.zeros((t, NH), np.float32)
            head_mix(x, gamma, w, out, hw)
            go, gh = golden(x, gamma, w)
            for name, a, e in (("out", out, go), ("hw", hw, gh)):
                r = check(a, e)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            head_mix(torch.randn(t, HID).bfloat16(), torch.rand(HID).bfloat16() + 0.5,
                     (torch.randn(N, HID) * 0.02).bfloat16(), torch.zeros(t, D), torch.zeros(t, NH))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
