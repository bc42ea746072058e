import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# MLA kv path with a pre-norm, V -> C -> V, two outputs: RMSNorm(x) (H = 7168, gamma rank-1 fp32)
# -> bf16 -> matmul with wkv [576, 7168] (b_trans) in fp32 -> split by 2-D views:
#   kv  = [t, 512] at [0, 0]   -> RMSNorm (gamma_kv [512] fp32) -> bf16 output kv [T, 512]
#   kpe = [t, 64]  at [0, 512] -> interleaved RoPE: reshape [t, 32, 2] -> transpose(1, 2)
#         -> reshape [t, 64] (de-interleave) -> x*cos + rotate_half(x)*sin -> bf16 output k_pe [T, 64]
# Unroll [128, 32, 1]; NONE_CACHEABLE on the weight (read once per iteration).
H = 7168
KV = 512
RD = 64
N = KV + RD
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def rmsnorm(v, g, eps):
    r = pypto.rsqrt(pypto.add(pypto.mul(pypto.sum(pypto.mul(v, v), -1, keepdim=True), 1.0 / v.shape[-1]), eps))
    return pypto.mul(pypto.mul(v, r), g)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def kv_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
            gamma: pypto.Tensor([H], pypto.DT_FP32),
            wkv: pypto.Tensor([N, H], pypto.DT_BF16),
            gamma_kv: pypto.Tensor([KV], pypto.DT_FP32),
            cos: pypto.Tensor([T, RD], pypto.DT_BF16),
            sin: pypto.Tensor([T, RD], pypto.DT_BF16),
            kv_out: pypto.Tensor([T, KV], pypto.DT_BF16),
            kpe_out: pypto.Tensor([T, RD], pypto.DT_BF16)):
    wkv.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for b, p in pypto.loop_unroll(0, x.shape[0], 1, name="KVLOOP", idx_name="b", unroll_list=[128, 32, 1]):
        pypto.set_semantic_label("pre-rmsnorm")
        pypto.set_vec_tile_shapes(2, H)
        xf = pypto.cast(pypto.view(x, [p, H], [b, 0], valid_shape=[p, H]), pypto.DT_FP32)
        xn = pypto.cast(rmsnorm(xf, gamma, EPS), pypto.DT_BF16)

        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [64, 64])
        kv = pypto.matmul(xn, wkv, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("kv-rmsnorm")
        pypto.set_vec_tile_shapes(8, KV)
        kv_c = pypto.view(kv, [p, KV], [0, 0], valid_shape=[p, KV])
        pypto.assemble(pypto.cast(rmsnorm(kv_c, gamma_kv, EPS), pypto.DT_BF16), [b, 0], kv_out)

        pypto.set_semantic_label("k-rope")
        pypto.set_vec_tile_shapes(8, RD)
        pe = pypto.view(kv, [p, RD], [0, KV], valid_shape=[p, RD])
        c = pypto.cast(pypto.view(cos, [p, RD], [b, 0], valid_shape=[p, RD]), pypto.DT_FP32)
        s = pypto.cast(pypto.view(sin, [p, RD], [b, 0], valid_shape=[p, RD]), pypto.DT_FP32)
        pypto.set_vec_tile_shapes(4, RD // 2, 32)
        pe3 = pypto.reshape(pe, [p, RD // 2, 2])
        pe3 = pypto.transpose(pe3, 1, 2)
        pypto.set_vec_tile_shapes(8, RD)
        pe2 = pypto.reshape(pe3, [p, RD])
        x1 = pypto.view(pe2, [p, RD // 2], [0, 0])
        x2 = pypto.view(pe2, [p, RD // 2], [0, RD // 2])
        rot = pypto.concat([pypto.mul(x2, -1.0), pypto.add(x1, 0.0)], -1)
        emb = pypto.add(pypto.mul(pe2, c), pypto.mul(rot, s))
        pypto.assemble(pypto.cast(emb, pypto.DT_BF16), [b, 0], kpe_out)


def golden(x, gamma, wkv, gamma_kv, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma).astype(bf).astype(np.float64)
    kv = xn @ wkv.astype(np.float64).T
    c = kv[:, :KV]
    kvo = (c / np.sqrt(np.mean(c * c, -1, keepdims=True) + EPS) * gamma_kv).astype(bf)
    pe = kv[:, KV:]
    de = np.concatenate([pe[:, 0::2], pe[:, 1::2]], -1)
    rot = np.concatenate([-de[:, RD // 2:], de[:, :RD // 2]], -1)
    kpe = (de * cos.astype(np.float64) + rot * sin.astype(np.float64)).astype(bf)
    return kvo, kpe


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3303)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        wkv = (rng.standard_normal((N, H)) * 0.02).astype(bf)
        gkv = rng.uniform(0.5, 1.5, KV).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, RD))
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            kv_out = np.zeros((t, KV), bf)
            kpe_out = np.zeros((t, RD), bf)
            kv_proj(x, gamma, wkv, gkv, cos, sin, kv_out, kpe_out)
            g_kv, g_pe = golden(x, gamma, wkv, gkv, cos, sin)
            for name, a, e in (("kv", kv_out, g_kv), ("k_pe", kpe_out, g_pe)):
                r = check(a, e)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            kv_proj(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(N, H) * 0.02).bfloat16(),
                    torch.ones(KV), torch.randn(t, RD).bfloat16(), torch.randn(t, RD).bfloat16(),
                    torch.zeros(t, KV).bfloat16(), torch.zeros(t, RD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
