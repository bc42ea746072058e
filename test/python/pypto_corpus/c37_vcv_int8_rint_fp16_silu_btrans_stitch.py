import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# AT-11 quant path with a SiLU post-op and fp16 output: RMSNorm (gamma fp16) -> per-token INT8
# quant with scale = amax / 127.0 and q = x * (1 / scale) (Python operators), rounding by casts
# fp32 -> fp16 -> int8 (CAST_RINT, saturated) -> int8 W [N, K] with b_trans -> int32 -> dequant
# (token scale, rank-1 [N] weight scale) -> SiLU -> fp16. Single unroll factor [16];
# DeepSeek-style runtime knobs (stitch_function_max_num, device_sched_mode).
H = 1024
N = 2048
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                     "stitch_function_max_num": 64, "device_sched_mode": 2},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "vec_nbuffer_setting": {0: 2},
                                  "cube_nbuffer_setting": {-1: 2}})
def quant_silu(x: pypto.Tensor([T, H], pypto.DT_FP16),
               gamma: pypto.Tensor([H], pypto.DT_FP16),
               w: pypto.Tensor([N, H], pypto.DT_INT8),
               w_scale: pypto.Tensor([N], pypto.DT_FP32),
               out: pypto.Tensor([T, N], pypto.DT_FP16)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    for s0, sl in pypto.loop_unroll(0, x.shape[0], 1, name="QS_LOOP", idx_name="s0", unroll_list=[16]):
        pypto.set_semantic_label("Act-Norm")
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(pypto.view(x, [sl, H], [s0, 0], valid_shape=[sl, H]), pypto.DT_FP32)
        xf = xf * pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H) + EPS) * g

        pypto.set_semantic_label("Act-Quant")
        scale = pypto.amax(pypto.abs(xf), -1, keepdim=True) / 127.0
        xq = xf * pypto.reciprocal(scale)
        xq = pypto.cast(xq, pypto.DT_FP16)
        xq = pypto.cast(xq, pypto.DT_INT8, pypto.CastMode.CAST_RINT, pypto.SaturationMode.ON)

        pypto.set_semantic_label("Up-Linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 256])
        acc = pypto.matmul(xq, w, pypto.DT_INT32, b_trans=True)

        pypto.set_semantic_label("Dequant-SiLU")
        pypto.set_vec_tile_shapes(4, 1024)
        h = pypto.cast(acc, pypto.DT_FP32) * scale * w_scale
        h = h * pypto.sigmoid(h)
        pypto.assemble(pypto.cast(h, pypto.DT_FP16), [s0, 0], out)


def golden(x, gamma, w, w_scale):
    import numpy as np
    xf = x.astype(np.float32)
    xf = xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + np.float32(EPS)) * gamma.astype(np.float32)
    scale = np.abs(xf).max(-1, keepdims=True) / np.float32(127.0)
    xq = (xf * (np.float32(1.0) / scale)).astype(np.float16).astype(np.float32)
    q = np.clip(np.rint(xq), -128, 127).astype(np.int32)
    h = (q @ w.astype(np.int32).T).astype(np.float32) * scale * w_scale
    return (h / (1.0 + np.exp(-h))).astype(np.float16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(909)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        w = rng.integers(-127, 128, (N, H)).astype(np.int8)
        ws = rng.uniform(2e-4, 8e-4, N).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            out = np.zeros((t, N), np.float16)
            quant_silu(x, gamma, w, ws, out)
            r = check(out, golden(x, gamma, w, ws))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            quant_silu(torch.randn(t, H).half(), torch.ones(H).half(),
                       torch.randint(-127, 128, (N, H), dtype=torch.int8),
                       torch.full((N,), 5e-4), torch.zeros(t, N).half())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
