import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# AT-11 in fp16: RMSNorm(x) (x [T, 2048] fp16, gamma [2048] fp16 cast to fp32 inside the loop,
# 1/rms as reciprocal(sqrt(.))) -> per-token symmetric INT8 with the scale written as
# `scale = amax / 127` (amax of |x| over -1, keepdim [t, 1]) and `q = x / scale` (division by the
# [t, 1] scale), cast chain fp32 -(CAST_RINT)-> int32 -(CAST_ROUND)-> fp16 -(CAST_TRUNC, saturated)-> int8
# -> int8 W [K, N] = [2048, 1536] (no b_trans) -> int32 -> fp32 * scale ([t, 1]) * wscale (rank-1 [N]
# fp32, broadcast straight into the tile) -> fp16 y [T, 1536]. Unroll [32, 8, 1].
H = 2048
N = 1536
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def fp16_quant_proj(x: pypto.Tensor([T, H], pypto.DT_FP16),
                    gamma: pypto.Tensor([H], pypto.DT_FP16),
                    w: pypto.Tensor([H, N], pypto.DT_INT8),
                    wscale: pypto.Tensor([N], pypto.DT_FP32),
                    y: pypto.Tensor([T, N], pypto.DT_FP16)):
    for b, bt in pypto.loop_unroll(0, x.shape[0], 1, name="FP16Q", idx_name="b", unroll_list=[32, 8, 1]):
        pypto.set_semantic_label("norm")
        pypto.set_vec_tile_shapes(H)
        g = pypto.cast(gamma, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [bt, H], [b, 0], valid_shape=[bt, H]), pypto.DT_FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.mul(pypto.mul(xf, pypto.reciprocal(pypto.sqrt(pypto.add(ms, EPS)))), g)

        pypto.set_semantic_label("quant")
        scale = pypto.div(pypto.amax(pypto.abs(xn), -1, keepdim=True), 127.0)
        qf = pypto.div(xn, scale)
        qi = pypto.cast(qf, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        qh = pypto.cast(qi, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        q = pypto.cast(qh, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)

        pypto.set_semantic_label("linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [256, 256])
        acc = pypto.matmul(q, w, pypto.DT_INT32)

        pypto.set_semantic_label("dequant")
        pypto.set_vec_tile_shapes(4, N)
        yf = pypto.mul(pypto.mul(pypto.cast(acc, pypto.DT_FP32), scale), wscale)
        pypto.assemble(pypto.cast(yf, pypto.DT_FP16), [b, 0], y)


def golden(x, gamma, w, wscale):
    import numpy as np
    f32 = np.float32
    xf = np.asarray(x).astype(f32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=f32) * f32(1.0 / H)
    xn = xf * (f32(1.0) / np.sqrt(ms + f32(EPS))) * np.asarray(gamma).astype(f32)
    scale = np.abs(xn).max(-1, keepdims=True) / f32(127.0)
    q = np.clip(np.rint(xn / scale), -128, 127)
    acc = (q @ np.asarray(w).astype(np.float64)).astype(f32)
    return (acc * scale * np.asarray(wscale).astype(f32)).astype(np.float16)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(2404)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        w = rng.integers(-127, 128, (H, N)).astype(np.int8)
        wscale = rng.uniform(0.0005, 0.0015, N).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            y = np.zeros((t, N), np.float16)
            fp16_quant_proj(x, gamma, w, wscale, y)
            rr = check(y, golden(x, gamma, w, wscale))
            print(t, rr.describe("y"))
            ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            fp16_quant_proj(torch.randn(t, H).half(), (torch.rand(H) + 0.5).half(),
                            torch.randint(-127, 128, (H, N), dtype=torch.int8),
                            torch.rand(N) * 0.001 + 0.0005, torch.zeros(t, N).half())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
