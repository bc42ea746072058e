import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Very wide projection, V -> C -> V: H = 3072 -> N = 16384 (128 heads of 128), rank-3 output.
# RMSNorm written with operators, inverse root as (mean + eps) ** -0.5, gamma [H] bf16 reshaped to
# [1, H] and cast inside the loop; matmul with Python's `@` (bf16 x bf16 -> bf16), W [K, N] without
# b_trans (NONE_CACHEABLE); post-stage per head: reshape [t, 128, 128], centre each head by subtracting
# its mean over dim -1 (sum * 1/D, keepdim), then * 0.5 -> bf16 [T, 128, 128]. Unroll [128, 8, 1].
HID = 3072
NH = 128
D = 128
N = NH * D
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def wide_center(x: pypto.Tensor([T, HID], pypto.DT_BF16),
                gamma: pypto.Tensor([HID], pypto.DT_BF16),
                w: pypto.Tensor([HID, N], pypto.DT_BF16),
                out: pypto.Tensor([T, NH, D], pypto.DT_BF16)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(1, HID)
    g2 = pypto.reshape(gamma, [1, HID])
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="WIDE", idx_name="i", unroll_list=[128, 8, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xt = pypto.cast(pypto.view(x, [p, HID], [i, 0], valid_shape=[p, HID]), pypto.DT_FP32)
        inv = (pypto.sum(xt * xt, -1, keepdim=True) * (1.0 / HID) + EPS) ** -0.5
        xn = pypto.cast(xt * inv * pypto.cast(g2, pypto.DT_FP32), pypto.DT_BF16)

        pypto.set_semantic_label("wide-linear")
        pypto.set_cube_tile_shapes([128, 128], [128, 512], [256, 256])
        y = xn @ w

        pypto.set_semantic_label("head-center")
        pypto.set_vec_tile_shapes(2, 16, D)
        y3 = pypto.cast(pypto.reshape(y, [p, NH, D]), pypto.DT_FP32)
        c = (y3 - pypto.sum(y3, -1, keepdim=True) * (1.0 / D)) * 0.5
        pypto.assemble(pypto.cast(c, pypto.DT_BF16), [i, 0, 0], out)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(x)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    y = (f(a) @ f(w)).astype(bf).astype(np.float64).reshape(-1, NH, D)
    return ((y - y.mean(-1, keepdims=True)) * 0.5).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1707)
        gamma = rng.uniform(0.5, 1.5, HID).astype(bf)
        w = (rng.standard_normal((HID, N), dtype=np.float32) * 0.02).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            out = np.zeros((t, NH, D), bf)
            wide_center(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("out"), flush=True)
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        w = (torch.randn(HID, N) * 0.02).bfloat16()
        for t in counts:
            wide_center(torch.randn(t, HID).bfloat16(), torch.rand(HID).bfloat16() + 0.5, w,
                        torch.zeros(t, NH, D).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
