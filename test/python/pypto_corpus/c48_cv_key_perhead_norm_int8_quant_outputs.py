import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# C -> V -> Quant (the wqa-linear -> norm order) with a per-head (group) INT8 quant of the result:
# k = x @ Wk^T (x [T, 4096] bf16, Wk [N, K] = [512, 4096] bf16, b_trans, fp32) -> reshape [t, 4, 128]
# -> per-head RMSNorm over D (no gamma) -> symmetric INT8 per head: amax over -1 ([t, 4, 1]),
# q = x * (127 / amax) cast fp32 -> fp16 -> int8 (CAST_RINT, saturated) -> int8 output [T, 4, 128];
# dequant scale amax / 127 reshaped [t, 4, 1] -> [t, 4] into an fp32 output [T, 4]. Unroll [64, 8, 1].
K = 4096
NH = 4
D = 128
N = NH * D
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def key_quant(x: pypto.Tensor([T, K], pypto.DT_BF16),
              wk: pypto.Tensor([N, K], pypto.DT_BF16),
              k_q: pypto.Tensor([T, NH, D], pypto.DT_INT8),
              k_scale: pypto.Tensor([T, NH], pypto.DT_FP32)):
    wk.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for r, p in pypto.loop_unroll(0, x.shape[0], 1, name="KQ", idx_name="r", unroll_list=[64, 8, 1]):
        pypto.set_semantic_label("k-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 1024], [64, 128])
        xa = pypto.view(x, [p, K], [r, 0], valid_shape=[p, K])
        k = pypto.matmul(xa, wk, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("k-headnorm")
        pypto.set_vec_tile_shapes(4, NH, D)
        k3 = pypto.reshape(k, [p, NH, D], inplace=True)
        k3 = k3.mul(k3.mul(k3).sum(-1, keepdim=True).mul(1.0 / D).add(EPS).rsqrt())

        pypto.set_semantic_label("k-quant")
        amax = pypto.amax(pypto.abs(k3), -1, keepdim=True)
        qs = pypto.div(pypto.full(amax.shape, 127.0, pypto.DT_FP32), amax)
        kq = pypto.cast(pypto.cast(pypto.mul(k3, qs), pypto.DT_FP16), pypto.DT_INT8,
                        pypto.CastMode.CAST_RINT, pypto.SaturationMode.ON)
        pypto.assemble(kq, [r, 0, 0], k_q)
        sc3 = pypto.mul(amax, 1.0 / 127.0)
        pypto.set_vec_tile_shapes(8, 8)
        sc = pypto.reshape(sc3, [p, NH])
        pypto.assemble(sc, [r, 0], k_scale)


def golden(x, wk):
    import numpy as np
    k = (x.astype(np.float64) @ wk.astype(np.float64).T).reshape(-1, NH, D)
    k = k / np.sqrt(np.mean(k * k, -1, keepdims=True) + EPS)
    amax = np.abs(k).max(-1, keepdims=True)
    q = np.clip(np.rint((k * (127.0 / amax)).astype(np.float16).astype(np.float64)), -128, 127).astype(np.int8)
    return q, (amax / 127.0).reshape(-1, NH).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(4010)
        wk = (rng.standard_normal((N, K)) * 0.02).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, K)).astype(bf)
            k_q = np.zeros((t, NH, D), np.int8)
            k_s = np.zeros((t, NH), np.float32)
            key_quant(x, wk, k_q, k_s)
            gq, gs = golden(x, wk)
            for name, a, e in (("k_q", k_q, gq), ("k_scale", k_s, gs)):
                rr = check(a, e)
                print(t, rr.describe(name))
                ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            key_quant(torch.randn(t, K).bfloat16(), (torch.randn(N, K) * 0.02).bfloat16(),
                      torch.zeros(t, NH, D, dtype=torch.int8), torch.zeros(t, NH))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
