import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# RMSNorm -> per-token INT8 quant whose int8 activation and dequant scale are also outputs
# (as mla_prolog_quant emits qr + qr_scale), -> int8 matmul with a [K, N] int8 weight -> int32,
# dequant by the token scale and a per-channel weight scale [N, 1] reshaped (not in place) to [1, N].
HIDDEN = 1024
NOUT = 4096
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def norm_quant_proj(x: pypto.Tensor([T, HIDDEN], pypto.DT_BF16),
                    gamma: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                    w: pypto.Tensor([HIDDEN, NOUT], pypto.DT_INT8),
                    w_scale: pypto.Tensor([NOUT, 1], pypto.DT_FP32),
                    x_q: pypto.Tensor([T, HIDDEN], pypto.DT_INT8),
                    x_scale: pypto.Tensor([T, 1], pypto.DT_FP32),
                    y: pypto.Tensor([T, NOUT], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(1, NOUT)
    ws_row = pypto.reshape(w_scale, [1, NOUT])
    pypto.set_vec_tile_shapes(1, HIDDEN)
    g_row = pypto.cast(pypto.reshape(gamma, [1, HIDDEN]), pypto.DT_FP32)
    for t_idx, tl in pypto.loop_unroll(0, x.shape[0], 1, name="T_LOOP", idx_name="t_idx", unroll_list=[16, 4, 1]):
        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(4, HIDDEN)
        xf = pypto.cast(pypto.view(x, [tl, HIDDEN], [t_idx, 0], valid_shape=[tl, HIDDEN]), pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        xn = pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(pypto.div(ms, float(HIDDEN)), EPS))), g_row)
        pypto.set_semantic_label("q-quant")
        amax = pypto.amax(pypto.abs(xn), -1, keepdim=True)
        scale_q = pypto.div(pypto.full([tl, 1], 127.0, pypto.DT_FP32, valid_shape=[tl, 1]), amax)
        scale_dq = pypto.div(amax, 127.0)
        q = pypto.cast(pypto.mul(xn, scale_q), pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        q = pypto.cast(q, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        q = pypto.cast(q, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)
        pypto.assemble(q, [t_idx, 0], x_q)
        pypto.assemble(scale_dq, [t_idx, 0], x_scale)
        pypto.set_semantic_label("wqb-linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 256])
        acc = pypto.matmul(q, w, pypto.DT_INT32)
        pypto.set_semantic_label("wqb-dequant")
        pypto.set_vec_tile_shapes(2, NOUT)
        out = pypto.mul(pypto.mul(pypto.cast(acc, pypto.DT_FP32), scale_dq), ws_row)
        pypto.assemble(pypto.cast(out, pypto.DT_BF16), [t_idx, 0], y)


def golden(x, gamma, w, w_scale):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float32)
    amax = np.max(np.abs(xn), -1, keepdims=True)
    q = np.clip(np.rint(xn * (np.float32(127) / amax)), -128, 127).astype(np.int8)
    s = amax / np.float32(127)
    acc = (q.astype(np.float64) @ w.astype(np.float64)).astype(np.int32)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    y = (acc.astype(np.float32) * s * w_scale.T).astype(ml_dtypes.bfloat16)
    return q, s.astype(np.float32), y


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(15)
        gamma = rng.uniform(0.5, 1.5, HIDDEN).astype(ml_dtypes.bfloat16)
        w = rng.integers(-128, 128, (HIDDEN, NOUT), dtype=np.int8)
        ws = rng.uniform(1e-4, 1e-3, (NOUT, 1)).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HIDDEN)).astype(ml_dtypes.bfloat16)
            xq = np.zeros((t, HIDDEN), np.int8)
            xs = np.zeros((t, 1), np.float32)
            y = np.zeros((t, NOUT), ml_dtypes.bfloat16)
            norm_quant_proj(x, gamma, w, ws, xq, xs, y)
            gq, gs, gy = golden(x, gamma, w, ws)
            for name, got, want in (("x_q", xq, gq), ("x_scale", xs, gs), ("y", y, gy)):
                r = check(got, want)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            norm_quant_proj(torch.randn(t, HIDDEN).bfloat16(), torch.ones(HIDDEN).bfloat16(),
                            torch.randint(-128, 128, (HIDDEN, NOUT), dtype=torch.int8),
                            torch.full((NOUT, 1), 5e-4), torch.zeros(t, HIDDEN, dtype=torch.int8),
                            torch.zeros(t, 1), torch.zeros(t, NOUT).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
