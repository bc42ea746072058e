import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# AT-11 norm -> quant -> linear -> dequant, a second author's take:
# dequant scale = amax * (1/127), quant multiplier = reciprocal of it; cast chain fp32 -> fp16
# -> int8 (RINT, saturated). Weight [N, K] int8 with b_trans; per-channel weight scale
# given as a rank-1 [N] fp32 vector multiplied straight into the [rows, N] tile.
HS = 5120
NO = 1024
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def quant_linear(x: pypto.Tensor([T, HS], pypto.DT_BF16),
                 gamma: pypto.Tensor([HS], pypto.DT_BF16),
                 wq: pypto.Tensor([NO, HS], pypto.DT_INT8),
                 w_scale: pypto.Tensor([NO], pypto.DT_FP32),
                 y: pypto.Tensor([T, NO], pypto.DT_BF16)):
    wq.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(HS)
    gam = pypto.cast(gamma, pypto.DT_FP32)
    for t0, tn in pypto.loop_unroll(0, x.shape[0], 1, name="Q_LOOP", idx_name="t0", unroll_list=[32, 16, 8, 1]):
        pypto.set_semantic_label("norm")
        pypto.set_vec_tile_shapes(2, HS)
        a = pypto.cast(pypto.view(x, [tn, HS], [t0, 0], valid_shape=[tn, HS]), pypto.DT_FP32)
        a = pypto.mul(pypto.mul(a, pypto.rsqrt(pypto.add(pypto.mul(pypto.sum(pypto.mul(a, a), -1, True), 1.0 / HS), EPS))), gam)
        pypto.set_semantic_label("quant")
        dq = pypto.mul(pypto.amax(pypto.abs(a), -1, True), 1.0 / 127.0)
        qa = pypto.mul(a, pypto.reciprocal(dq))
        qa = pypto.cast(pypto.cast(qa, pypto.DT_FP16), pypto.DT_INT8, pypto.CastMode.CAST_RINT, pypto.SaturationMode.ON)
        pypto.set_semantic_label("linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 1024], [128, 128])
        acc = pypto.matmul(qa, wq, pypto.DT_INT32, b_trans=True)
        pypto.set_semantic_label("dequant")
        pypto.set_vec_tile_shapes(4, NO)
        o = pypto.mul(pypto.mul(pypto.cast(acc, pypto.DT_FP32), dq), w_scale)
        pypto.assemble(pypto.cast(o, pypto.DT_BF16), [t0, 0], y)


def golden(x, gamma, wq, w_scale):
    import numpy as np, ml_dtypes
    a = x.astype(np.float32)
    a = a / np.sqrt((a * a).mean(-1, keepdims=True) + EPS) * gamma.astype(np.float32)
    dq = np.abs(a).max(-1, keepdims=True) * np.float32(1.0 / 127.0)
    q = (a * (np.float32(1.0) / dq)).astype(np.float16).astype(np.float32)   # the fp16 step rounds
    q = np.clip(np.rint(q), -128, 127).astype(np.int64)
    acc = (q.astype(np.float64) @ wq.astype(np.float64).T).astype(np.int64)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    return (acc.astype(np.float32) * dq * w_scale[None, :]).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(14)
        gamma = rng.uniform(0.5, 1.5, HS).astype(ml_dtypes.bfloat16)
        wq = rng.integers(-127, 128, (NO, HS), dtype=np.int8)
        ws = rng.uniform(1e-4, 5e-4, NO).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HS)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, NO), ml_dtypes.bfloat16)
            quant_linear(x, gamma, wq, ws, y)
            r = check(y, golden(x, gamma, wq, ws))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            quant_linear(torch.randn(t, HS).bfloat16(), torch.ones(HS).bfloat16(),
                         torch.randint(-127, 128, (NO, HS), dtype=torch.int8), torch.full((NO,), 3e-4),
                         torch.zeros(t, NO).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
