import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V in fp16 with the weight declared in the cube's fractal layout: W [K, N] = [3072, 768] fp16
# annotated format=pypto.TileOpFormat.TILEOP_NZ (the caller hands over the logical ND matrix),
# consumed without b_trans. RMSNorm(x) (x [T, 3072] fp16, gamma [3072] fp16 cast once before the loop,
# 1/rms as pow(mean + eps, -0.5)) -> fp16 -> matmul (fp32 result) -> + bias (rank-1 [N] fp16, cast to
# fp32 in the loop) -> fp16 y [T, 768]. W NONE_CACHEABLE; unroll [128, 32, 8, 1].
H = 3072
N = 768
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"run_mode": pypto.RunMode.SIM},
)
def nz_proj(x: pypto.Tensor([T, H], pypto.DT_FP16),
            gamma: pypto.Tensor([H], pypto.DT_FP16),
            w: pypto.Tensor([H, N], pypto.DT_FP16, format=pypto.TileOpFormat.TILEOP_NZ),
            bias: pypto.Tensor([N], pypto.DT_FP16),
            y: pypto.Tensor([T, N], pypto.DT_FP16)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    for idx, rows in pypto.loop_unroll(0, x.shape[0], 1, name="NZ_LOOP", idx_name="idx",
                                       unroll_list=[128, 32, 8, 1]):
        pypto.set_semantic_label("pre-norm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [rows, H], [idx, 0], valid_shape=[rows, H]), pypto.DT_FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.cast(pypto.mul(pypto.mul(xf, pypto.pow(pypto.add(ms, EPS), -0.5)), g), pypto.DT_FP16)

        pypto.set_semantic_label("nz-linear")
        pypto.set_cube_tile_shapes([128, 128], [256, 512], [128, 128])
        h = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_semantic_label("bias")
        pypto.set_vec_tile_shapes(N)
        b32 = pypto.cast(bias, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(8, N)
        pypto.assemble(pypto.cast(pypto.add(h, b32), pypto.DT_FP16), [idx, 0], y)


def golden(x, gamma, w, bias):
    import numpy as np
    f32 = np.float32
    xf = np.asarray(x).astype(f32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=f32) * f32(1.0 / H)
    xn = (xf * (f32(1.0) / np.sqrt(ms + f32(EPS))) * np.asarray(gamma).astype(f32)).astype(np.float16)
    h = (xn.astype(np.float64) @ np.asarray(w).astype(np.float64)).astype(f32)
    return (h + np.asarray(bias).astype(f32)).astype(np.float16)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(2808)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        w = (rng.standard_normal((H, N)) * 0.02).astype(np.float16)     # logical ND [K, N]
        bias = (rng.standard_normal(N) * 0.1).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            y = np.zeros((t, N), np.float16)
            nz_proj(x, gamma, w, bias, y)
            rr = check(y, golden(x, gamma, w, bias))
            print(t, rr.describe("y"))
            ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            nz_proj(torch.randn(t, H).half(), (torch.rand(H) + 0.5).half(), (torch.randn(H, N) * 0.02).half(),
                    (torch.randn(N) * 0.1).half(), torch.zeros(t, N).half())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
