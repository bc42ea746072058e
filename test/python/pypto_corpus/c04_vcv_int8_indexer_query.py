import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# lightning_indexer_prolog_quant-style Query-Linear: RMSNorm -> per-token symmetric INT8 quant
# (scale = 127/amax, cast chain RINT -> ROUND -> TRUNC+saturate) -> int8 x int8 -> int32
# -> dequant by token scale (amax/127) and per-channel weight scale -> bf16.
# Weight [K, N] int8 without b_trans, NONE_CACHEABLE; weight scale [N, 1] reshaped in place to [1, N].
Q_LORA = 1024
NQ_HD = 8192            # idx_n_heads * head_dim = 64 * 128
EPS = 1e-6
S = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def indexer_query(qr: pypto.Tensor([S, Q_LORA], pypto.DT_BF16),
                  gamma: pypto.Tensor([Q_LORA], pypto.DT_FP32),
                  idx_wq_b: pypto.Tensor([Q_LORA, NQ_HD], pypto.DT_INT8),
                  idx_wq_b_scale: pypto.Tensor([NQ_HD, 1], pypto.DT_FP32),
                  q_out: pypto.Tensor([S, NQ_HD], pypto.DT_BF16)):
    idx_wq_b.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    # Reshape inplace will not generate data move
    w_qb_scale = pypto.reshape(idx_wq_b_scale, [1, NQ_HD], inplace=True)
    s = qr.shape[0]
    for s_idx, u in pypto.loop_unroll(0, s, 1, name="IndexerPrologLoop", idx_name="s_idx",
                                      unroll_list=[128, 64, 32, 16, 8, 1]):
        pypto.set_semantic_label("Query-Norm")
        pypto.set_vec_tile_shapes(4, Q_LORA)
        x = pypto.cast(pypto.view(qr, [u, Q_LORA], [s_idx, 0], valid_shape=[u, Q_LORA]), pypto.DT_FP32)
        var = pypto.sum(x * x, -1, keepdim=True) * (1.0 / Q_LORA)
        x = x * pypto.rsqrt(var + EPS) * gamma

        pypto.set_semantic_label("Query-Quant")
        amax = pypto.amax(pypto.abs(x), -1, keepdim=True)
        q_scale = pypto.div(pypto.full([u, 1], 127.0, pypto.DT_FP32), amax)
        dq_scale = pypto.div(amax, 127.0)
        xs = pypto.mul(x, q_scale)
        xi32 = pypto.cast(xs, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        xf16 = pypto.cast(xi32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        xi8 = pypto.cast(xf16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)

        pypto.set_semantic_label("Query-Linear")
        pypto.set_cube_tile_shapes([128, 128], [256, 1024], [256, 256])
        acc = pypto.matmul(xi8, idx_wq_b, pypto.DT_INT32)

        pypto.set_semantic_label("Query-Dequant")
        pypto.set_vec_tile_shapes(1, NQ_HD)
        y = pypto.cast(acc, pypto.DT_FP32)
        y = pypto.mul(y, dq_scale)
        y = pypto.mul(y, w_qb_scale)
        pypto.assemble(pypto.cast(y, pypto.DT_BF16), [s_idx, 0], q_out)


def golden(qr, gamma, w, w_scale):
    import numpy as np, ml_dtypes
    x = qr.astype(np.float32)
    x = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS)) * gamma
    amax = np.abs(x).max(axis=-1, keepdims=True)
    q = np.clip(np.rint(x * (np.float32(127.0) / amax)), -128, 127).astype(np.int32)
    acc = (q.astype(np.float64) @ w.astype(np.float64)).astype(np.int32)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    y = acc.astype(np.float32) * (amax / np.float32(127.0)) * w_scale.reshape(1, -1)
    return y.astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(4)
        gamma = rng.uniform(0.5, 1.5, Q_LORA).astype(np.float32)
        w = rng.integers(-127, 128, (Q_LORA, NQ_HD)).astype(np.int8)
        ws = rng.uniform(1e-4, 1e-3, (NQ_HD, 1)).astype(np.float32)
        ok = True
        for s in counts:
            qr = rng.standard_normal((s, Q_LORA)).astype(ml_dtypes.bfloat16)
            out = np.zeros((s, NQ_HD), ml_dtypes.bfloat16)
            indexer_query(qr, gamma, w, ws, out)
            r = check(out, golden(qr, gamma, w, ws))
            print(f"S={s}: {r.describe('q_out')}")
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for s in counts:
            qr = torch.randn(s, Q_LORA, dtype=torch.bfloat16)
            gamma = torch.ones(Q_LORA)
            w = torch.randint(-127, 128, (Q_LORA, NQ_HD), dtype=torch.int8)
            ws = torch.full((NQ_HD, 1), 1e-3)
            out = torch.zeros(s, NQ_HD, dtype=torch.bfloat16)
            indexer_query(qr, gamma, w, ws, out)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
