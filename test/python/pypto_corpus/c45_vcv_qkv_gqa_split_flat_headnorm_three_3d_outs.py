import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen3 GQA fused qkv projection (one matmul), V -> C -> V with three rank-3 outputs:
# RMSNorm(x) (H = 2048, fp32 gamma reshaped in place to [1, H]) -> bf16 -> x @ Wqkv ([K, N] = [2048, 1536],
# no b_trans, fp32) -> split by 2-D column views q [t, 1024] | k [t, 256] | v [t, 256]
# -> q and k flattened to rows of one head ([t*8, 128], [t*2, 128]) so the rank-1 [D] q_norm / k_norm
# gammas broadcast over a single axis -> per-head RMSNorm -> reshaped to [t, 8, 128] / [t, 2, 128];
# v only reshaped. Helper function for the norm; unroll [32, 8, 1].
H = 2048
HQ = 8
HK = 2
D = 128
NQ = HQ * D
NK = HK * D
N = NQ + 2 * NK
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def rms_rows(a, g, eps):
    sq = pypto.sum(pypto.mul(a, a), -1, keepdim=True)
    return pypto.mul(pypto.mul(a, pypto.rsqrt(pypto.add(pypto.div(sq, float(a.shape[-1])), eps))), g)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def qkv_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
             gamma: pypto.Tensor([H], pypto.DT_FP32),
             wqkv: pypto.Tensor([H, N], pypto.DT_BF16),
             gq: pypto.Tensor([D], pypto.DT_FP32),
             gk: pypto.Tensor([D], pypto.DT_FP32),
             q_out: pypto.Tensor([T, HQ, D], pypto.DT_BF16),
             k_out: pypto.Tensor([T, HK, D], pypto.DT_BF16),
             v_out: pypto.Tensor([T, HK, D], pypto.DT_BF16)):
    g2 = pypto.reshape(gamma, [1, H], inplace=True)
    for t0, m in pypto.loop_unroll(0, x.shape[0], 1, name="QKV", idx_name="t0", unroll_list=[32, 8, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [m, H], [t0, 0], valid_shape=[m, H]), pypto.DT_FP32)
        xn = pypto.cast(rms_rows(xf, g2, EPS), pypto.DT_BF16)

        pypto.set_semantic_label("qkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        qkv = pypto.matmul(xn, wqkv, pypto.DT_FP32)

        pypto.set_semantic_label("qk-norm")
        pypto.set_vec_tile_shapes(16, D)
        q = pypto.view(qkv, [m, NQ], [0, 0])
        k = pypto.view(qkv, [m, NK], [0, NQ])
        v = pypto.view(qkv, [m, NK], [0, NQ + NK])
        qh = rms_rows(pypto.reshape(q, [m * HQ, D]), gq, EPS)
        kh = rms_rows(pypto.reshape(k, [m * HK, D]), gk, EPS)
        pypto.set_vec_tile_shapes(4, HQ, D)
        pypto.assemble(pypto.cast(pypto.reshape(qh, [m, HQ, D]), pypto.DT_BF16), [t0, 0, 0], q_out)
        pypto.set_vec_tile_shapes(4, HK, D)
        pypto.assemble(pypto.cast(pypto.reshape(kh, [m, HK, D]), pypto.DT_BF16), [t0, 0, 0], k_out)
        pypto.assemble(pypto.cast(pypto.reshape(v, [m, HK, D]), pypto.DT_BF16), [t0, 0, 0], v_out)


def golden(x, gamma, w, gq, gk):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma).astype(bf).astype(np.float64)
    qkv = xn @ w.astype(np.float64)
    t = x.shape[0]
    q = qkv[:, :NQ].reshape(t, HQ, D)
    k = qkv[:, NQ:NQ + NK].reshape(t, HK, D)
    v = qkv[:, NQ + NK:].reshape(t, HK, D)
    n = lambda a, g: a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * g
    return n(q, gq).astype(bf), n(k, gk).astype(bf), v.astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3707)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        w = (rng.standard_normal((H, N)) * 0.03).astype(bf)
        gq = rng.uniform(0.8, 1.2, D).astype(np.float32)
        gk = rng.uniform(0.8, 1.2, D).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            q_out = np.zeros((t, HQ, D), bf); k_out = np.zeros((t, HK, D), bf); v_out = np.zeros((t, HK, D), bf)
            qkv_proj(x, gamma, w, gq, gk, q_out, k_out, v_out)
            for name, a, e in zip(("q", "k", "v"), (q_out, k_out, v_out), golden(x, gamma, w, gq, gk)):
                r = check(a, e)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            qkv_proj(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(H, N) * 0.03).bfloat16(),
                     torch.ones(D), torch.ones(D), torch.zeros(t, HQ, D).bfloat16(),
                     torch.zeros(t, HK, D).bfloat16(), torch.zeros(t, HK, D).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
