import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mla_prolog_quant_v4 front half (C -> V -> Quant): q = x @ wq_a ([K, N]); q-rmsnorm with gamma_cq;
# symmetric per-token int8 quant of the normalised q; outputs qr int8 [t, R] and qr_scale fp32 [t, 1].
HID = 2048
R = 1536
EPS = 1e-6
T = pypto.DYNAMIC


def rmsnorm(x, gamma_row):
    inv = pypto.rsqrt(pypto.add(pypto.mul(pypto.sum(pypto.mul(x, x), -1, keepdim=True), 1.0 / R), EPS))
    return pypto.mul(pypto.mul(x, inv), gamma_row)


def quant_int8(x):
    absmax = pypto.amax(pypto.abs(x), -1, keepdim=True)
    scale = pypto.div(pypto.full(absmax.shape, 127.0, pypto.DT_FP32), absmax)
    y = pypto.cast(pypto.mul(x, scale), pypto.DT_INT32, pypto.CastMode.CAST_RINT)
    y = pypto.cast(y, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
    y = pypto.cast(y, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)
    return y, pypto.div(absmax, 127.0)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def wqa_quant(x: pypto.Tensor([T, HID], pypto.DT_BF16),
              wq_a: pypto.Tensor([HID, R], pypto.DT_BF16),
              gamma_cq: pypto.Tensor([R], pypto.DT_BF16),
              qr: pypto.Tensor([T, R], pypto.DT_INT8),
              qr_scale: pypto.Tensor([T, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, R)
    g_row = pypto.cast(pypto.reshape(gamma_cq, [1, R]), pypto.DT_FP32)
    for t0, tt in pypto.loop_unroll(0, x.shape[0], 1, name="MLA_BS_LOOP", idx_name="t0", unroll_list=[32, 16, 1]):
        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        q = pypto.matmul(pypto.view(x, [tt, HID], [t0, 0], valid_shape=[tt, HID]), wq_a, pypto.DT_FP32)
        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(4, R)
        qn = rmsnorm(q, g_row)
        pypto.set_semantic_label("q-quant")
        q8, s = quant_int8(qn)
        pypto.assemble(q8, [t0, 0], qr)
        pypto.assemble(s, [t0, 0], qr_scale)


def golden(x, wq_a, gamma):
    import numpy as np
    q = x.astype(np.float32) @ wq_a.astype(np.float32)
    qn = q / np.sqrt((q * q).mean(-1, keepdims=True) + np.float32(EPS)) * gamma.astype(np.float32)
    amax = np.abs(qn).max(-1, keepdims=True)
    q8 = np.clip(np.rint(qn * (np.float32(127) / amax)), -128, 127).astype(np.int8)
    return q8, (amax / np.float32(127)).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(28)
        wq_a = (rng.standard_normal((HID, R)) * 0.02).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.5, 1.5, R).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(ml_dtypes.bfloat16)
            qr = np.zeros((t, R), np.int8)
            qs = np.zeros((t, 1), np.float32)
            wqa_quant(x, wq_a, gamma, qr, qs)
            gq, gs = golden(x, wq_a, gamma)
            for nm, a, e in (("qr", qr, gq), ("qr_scale", qs, gs)):
                r = check(a, e)
                print(t, r.describe(nm))
                ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            wqa_quant(torch.randn(t, HID).bfloat16(), (torch.randn(HID, R) * 0.02).bfloat16(),
                      torch.ones(R).bfloat16(), torch.zeros(t, R, dtype=torch.int8), torch.zeros(t, 1))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
