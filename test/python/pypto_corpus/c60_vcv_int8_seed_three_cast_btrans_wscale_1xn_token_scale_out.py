import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# AT-11 (V -> Quant -> C -> Dequant) with the source's symmetric quant helper spelled as in the seed:
# RMSNorm(x) (H = 1024, gamma [H] bf16 cast to fp32 and reshaped in place to [1, H] before the loop)
# -> abs -> amax over -1 (keepdim [t, 1]) -> qs = full(127) / amax -> x * qs -> cast chain
# fp32 -(CAST_RINT)-> int32 -(CAST_ROUND)-> fp16 -(CAST_TRUNC, SaturationMode.ON)-> int8;
# dequant scale ds = full(1) / qs (i.e. 1 / (127 / amax)), [t, 1].
# int8 W [N, K] = [4096, 1024] with b_trans -> int32 -> fp32 * ds ([t, 1]) * wscale ([1, N] fp32 input)
# -> bf16 y [T, 4096]; ds also written to an fp32 output [T, 1]. Pass options as the indexer
# (cube_l1_reuse_setting, vec_nbuffer_setting); W NONE_CACHEABLE; unroll [128, 16, 1].
H = 1024
N = 4096
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def sym_quant(v):
    am = pypto.amax(pypto.abs(v), -1, keepdim=True)
    qs = pypto.div(pypto.full(am.shape, 127.0, pypto.DT_FP32), am)
    v32 = pypto.mul(v, qs)
    v_i32 = pypto.cast(v32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
    v_f16 = pypto.cast(v_i32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
    v_i8 = pypto.cast(v_f16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
    ds = pypto.div(pypto.full(qs.shape, 1.0, pypto.DT_FP32), qs)
    return v_i8, ds


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"run_mode": pypto.RunMode.SIM},
)
def quant_linear(x: pypto.Tensor([T, H], pypto.DT_BF16),
                 gamma: pypto.Tensor([H], pypto.DT_BF16),
                 w: pypto.Tensor([N, H], pypto.DT_INT8),
                 wscale: pypto.Tensor([1, N], pypto.DT_FP32),
                 y: pypto.Tensor([T, N], pypto.DT_BF16),
                 ds_out: pypto.Tensor([T, 1], pypto.DT_FP32)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(H)
    g = pypto.reshape(pypto.cast(gamma, pypto.DT_FP32), [1, H], inplace=True)
    for ti, tl in pypto.loop_unroll(0, x.shape[0], 1, name="QLIN", idx_name="ti", unroll_list=[128, 16, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(pypto.view(x, [tl, H], [ti, 0], valid_shape=[tl, H]), pypto.DT_FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(ms, EPS))), g)

        pypto.set_semantic_label("quant")
        q, ds = sym_quant(xn)
        pypto.assemble(ds, [ti, 0], ds_out)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([128, 128], [256, 1024], [256, 256])
        acc = pypto.matmul(q, w, pypto.DT_INT32, b_trans=True)

        pypto.set_semantic_label("dequant")
        pypto.set_vec_tile_shapes(4, N)
        yf = pypto.mul(pypto.mul(pypto.cast(acc, pypto.DT_FP32), ds), wscale)
        pypto.assemble(pypto.cast(yf, pypto.DT_BF16), [ti, 0], y)


def golden(x, gamma, w, wscale):
    import numpy as np, ml_dtypes
    f32 = np.float32
    xf = np.asarray(x).astype(f32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=f32) * f32(1.0 / H)
    xn = xf * (f32(1.0) / np.sqrt(ms + f32(EPS))) * np.asarray(gamma).astype(f32)
    am = np.abs(xn).max(-1, keepdims=True)
    qs = f32(127.0) / am
    q = np.clip(np.rint(xn * qs), -128, 127)
    ds = (f32(1.0) / qs).astype(f32)
    acc = (q @ np.asarray(w).astype(np.float64).T).astype(f32)       # exact int32 values
    yv = acc * ds * np.asarray(wscale).astype(f32)
    return yv.astype(ml_dtypes.bfloat16), ds


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(2303)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf)
        w = rng.integers(-127, 128, (N, H)).astype(np.int8)
        wscale = rng.uniform(0.0005, 0.0015, (1, N)).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            y = np.zeros((t, N), bf)
            ds = np.zeros((t, 1), np.float32)
            quant_linear(x, gamma, w, wscale, y, ds)
            gy, gds = golden(x, gamma, w, wscale)
            for name, act, exp in (("y", y, gy), ("ds", ds, gds)):
                rr = check(act, exp)
                print(t, rr.describe(name))
                ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            quant_linear(torch.randn(t, H).bfloat16(), (torch.rand(H) + 0.5).bfloat16(),
                         torch.randint(-127, 128, (N, H), dtype=torch.int8),
                         torch.rand(1, N) * 0.001 + 0.0005, torch.zeros(t, N).bfloat16(),
                         torch.zeros(t, 1))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
