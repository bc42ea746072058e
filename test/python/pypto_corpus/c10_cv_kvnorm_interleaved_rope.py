import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mla_prolog_v4-style kv tail (C -> V): kv = x @ wkv^T ([N, K] weight, b_trans), split into
# kv_nope (RMSNorm) and k_pe (interleaved RoPE: reshape [t, R/2, 2] -> transpose(1, 2) ->
# reshape [t, R] de-interleaves, then x*cos + rotate_half(x)*sin), concatenated back.
H = 2048
KV_LORA = 512
ROPE = 64
N = KV_LORA + ROPE
EPS = 1e-6
T = pypto.DYNAMIC


def rotate_half(x, t):
    x1 = pypto.view(x, [t, ROPE // 2], [0, 0])
    x2 = pypto.view(x, [t, ROPE // 2], [0, ROPE // 2])
    return pypto.concat([pypto.mul(x2, -1.0), x1], -1)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def kv_rope(x: pypto.Tensor([T, H], pypto.DT_BF16),
            wkv: pypto.Tensor([N, H], pypto.DT_BF16),
            gamma_ckv: pypto.Tensor([KV_LORA], pypto.DT_BF16),
            cos: pypto.Tensor([T, ROPE], pypto.DT_FP32),
            sin: pypto.Tensor([T, ROPE], pypto.DT_FP32),
            kv_out: pypto.Tensor([T, N], pypto.DT_BF16)):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(KV_LORA)
    g = pypto.cast(gamma_ckv, pypto.DT_FP32)
    for ti, tt in pypto.loop_unroll(0, t, 1, name="KV_LOOP", idx_name="ti", unroll_list=[8, 2, 1]):
        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [64, 64])
        xt = pypto.view(x, [tt, H], [ti, 0], valid_shape=[tt, H])
        kv = pypto.matmul(xt, wkv, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("kv-rmsnorm")
        pypto.set_vec_tile_shapes(8, KV_LORA)
        nope = pypto.view(kv, [tt, KV_LORA], [0, 0])
        ms = pypto.sum(pypto.mul(nope, nope), -1, keepdim=True)
        nope = pypto.mul(pypto.mul(nope, pypto.rsqrt(pypto.add(pypto.mul(ms, 1.0 / KV_LORA), EPS))), g)

        pypto.set_semantic_label("k-rope")
        pypto.set_vec_tile_shapes(8, ROPE // 2, 2)
        pe = pypto.view(kv, [tt, ROPE], [0, KV_LORA])
        pe = pypto.reshape(pe, [tt, ROPE // 2, 2], inplace=True)
        pe = pypto.transpose(pe, 1, 2)
        pypto.set_vec_tile_shapes(8, ROPE)
        pe = pypto.reshape(pe, [tt, ROPE])
        c = pypto.view(cos, [tt, ROPE], [ti, 0], valid_shape=[tt, ROPE])
        s = pypto.view(sin, [tt, ROPE], [ti, 0], valid_shape=[tt, ROPE])
        pe = pypto.add(pypto.mul(pe, c), pypto.mul(rotate_half(pe, tt), s))

        pypto.set_vec_tile_shapes(8, N)
        out = pypto.concat([nope, pe], -1)
        pypto.assemble(pypto.cast(out, pypto.DT_BF16), [ti, 0], kv_out)


def golden(x, wkv, gamma, cos, sin):
    import numpy as np, ml_dtypes
    kv = x.astype(np.float32) @ wkv.astype(np.float32).T
    nope = kv[:, :KV_LORA]
    nope = nope / np.sqrt(np.mean(nope * nope, -1, keepdims=True) + EPS) * gamma.astype(np.float32)
    pe = kv[:, KV_LORA:]
    pe = np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=-1)       # de-interleave
    rot = np.concatenate([-pe[:, ROPE // 2:], pe[:, :ROPE // 2]], axis=-1)
    pe = pe * cos + rot * sin
    return np.concatenate([nope, pe], -1).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(10)
        wkv = (rng.standard_normal((N, H)) * 0.02).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.5, 1.5, KV_LORA).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            ang = rng.uniform(0, 6.3, (t, ROPE)).astype(np.float32)
            cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
            out = np.zeros((t, N), ml_dtypes.bfloat16)
            kv_rope(x, wkv, gamma, cos, sin, out)
            r = check(out, golden(x, wkv, gamma, cos, sin))
            print(t, r.describe("kv_out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            ang = torch.rand(t, ROPE) * 6.3
            kv_rope(torch.randn(t, H).bfloat16(), (torch.randn(N, H) * 0.02).bfloat16(),
                    torch.ones(KV_LORA).bfloat16(), torch.cos(ang), torch.sin(ang),
                    torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
