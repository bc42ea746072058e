import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen3 GQA pre-attention q/k path, V -> C -> V, one fused matmul and two rank-3 outputs:
# RMSNorm(x) (H = 2048, bf16 gamma cast to fp32 once before the loop) -> bf16 -> x @ Wqk
# ([K, N] = [2048, (8 + 2) * 128], no b_trans, fp32) -> 2-D column views q [t, 1024] at [0, 0] and
# k [t, 256] at [0, 1024], reshaped to [t, 8, 128] / [t, 2, 128] (different head counts)
# -> per-head RMSNorm over D with rank-1 [D] q_norm / k_norm gammas reshaped in place to [1, 1, D]
# and expand_clone'd (rank 3) to [1, heads, D] before the loop (PyPTO broadcasts one axis only) -> half-split (NeoX) RoPE, cos/sin [T, D] viewed per tile and
# reshaped to [t, 1, D] -> bf16 outputs q [T, 8, 128], k [T, 2, 128]. Unroll [32, 4, 1].
HID = 2048
HQ = 8
HK = 2
D = 128
NQ = HQ * D
NK = HK * D
EPS = 1e-6
T = pypto.frontend.dynamic("T")



def rot_half(v):
    h = D // 2
    lo = pypto.view(v, [v.shape[0], v.shape[1], h], [0, 0, 0])
    hi = pypto.view(v, [v.shape[0], v.shape[1], h], [0, 0, h])
    return pypto.concat([pypto.mul(hi, -1.0), pypto.add(lo, 0.0)], -1)


def head_norm_rope(src, tt, i, off, nh, gam, c, s, out):
    pypto.set_vec_tile_shapes(4, nh * D)
    flat = pypto.view(src, [tt, nh * D], [0, off], valid_shape=[tt, nh * D])
    pypto.set_vec_tile_shapes(4, nh, D)
    h3 = pypto.reshape(flat, [tt, nh, D])
    ss = pypto.sum(pypto.mul(h3, h3), -1, keepdim=True)
    hn = pypto.mul(pypto.mul(h3, pypto.rsqrt(pypto.add(pypto.mul(ss, 1.0 / D), EPS))), gam)
    r = pypto.add(pypto.mul(hn, c), pypto.mul(rot_half(hn), s))
    pypto.assemble(pypto.cast(r, pypto.DT_BF16), [i, 0, 0], out)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def qwen3_qk(x: pypto.Tensor([T, HID], pypto.DT_BF16),
             gamma: pypto.Tensor([HID], pypto.DT_BF16),
             w_qk: pypto.Tensor([HID, NQ + NK], pypto.DT_BF16),
             q_norm: pypto.Tensor([D], pypto.DT_FP32),
             k_norm: pypto.Tensor([D], pypto.DT_FP32),
             cos: pypto.Tensor([T, D], pypto.DT_BF16),
             sin: pypto.Tensor([T, D], pypto.DT_BF16),
             q_out: pypto.Tensor([T, HQ, D], pypto.DT_BF16),
             k_out: pypto.Tensor([T, HK, D], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(HID)
    g = pypto.reshape(pypto.cast(gamma, pypto.DT_FP32), [1, HID])
    pypto.set_vec_tile_shapes(1, HQ, D)
    gq = pypto.expand_clone(pypto.reshape(q_norm, [1, 1, D], inplace=True), [1, HQ, D])
    gk = pypto.expand_clone(pypto.reshape(k_norm, [1, 1, D], inplace=True), [1, HK, D])
    for i, tt in pypto.loop_unroll(0, x.shape[0], 1, name="QK", idx_name="i", unroll_list=[32, 4, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xt = pypto.cast(pypto.view(x, [tt, HID], [i, 0], valid_shape=[tt, HID]), pypto.DT_FP32)
        ms = pypto.sum(pypto.mul(xt, xt), -1, keepdim=True)
        xn = pypto.mul(pypto.mul(xt, pypto.rsqrt(pypto.add(pypto.mul(ms, 1.0 / HID), EPS))), g)
        xb = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_semantic_label("qk-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        qk = pypto.matmul(xb, w_qk, pypto.DT_FP32)

        pypto.set_semantic_label("qk-headnorm-rope")
        pypto.set_vec_tile_shapes(4, D)
        c = pypto.reshape(pypto.cast(pypto.view(cos, [tt, D], [i, 0], valid_shape=[tt, D]), pypto.DT_FP32), [tt, 1, D])
        s = pypto.reshape(pypto.cast(pypto.view(sin, [tt, D], [i, 0], valid_shape=[tt, D]), pypto.DT_FP32), [tt, 1, D])
        head_norm_rope(qk, tt, i, 0, HQ, gq, c, s, q_out)
        head_norm_rope(qk, tt, i, NQ, HK, gk, c, s, k_out)


def golden(x, gamma, w, qn, kn, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda a: np.asarray(a).astype(np.float64)
    xv = f(x)
    xn = (xv / np.sqrt(np.mean(xv * xv, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    y = f(xn) @ f(w)
    c, s = f(cos)[:, None, :], f(sin)[:, None, :]
    outs = []
    for lo, nh, g in ((0, HQ, qn), (NQ, HK, kn)):
        h = y[:, lo:lo + nh * D].reshape(-1, nh, D)
        h = h / np.sqrt(np.mean(h * h, -1, keepdims=True) + EPS) * f(g)
        rot = np.concatenate([-h[..., D // 2:], h[..., :D // 2]], -1)
        outs.append((h * c + rot * s).astype(bf))
    return outs


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1101)
        gamma = rng.uniform(0.5, 1.5, HID).astype(bf)
        w = (rng.standard_normal((HID, NQ + NK)) * 0.02).astype(bf)
        qn = rng.uniform(0.8, 1.2, D).astype(np.float32)
        kn = rng.uniform(0.8, 1.2, D).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, D // 2))
            ang = np.concatenate([ang, ang], -1)
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            q_out = np.zeros((t, HQ, D), bf)
            k_out = np.zeros((t, HK, D), bf)
            qwen3_qk(x, gamma, w, qn, kn, cos, sin, q_out, k_out)
            gq, gk = golden(x, gamma, w, qn, kn, cos, sin)
            for name, a, e in (("q_out", q_out, gq), ("k_out", k_out, gk)):
                r = check(a, e)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            qwen3_qk(torch.randn(t, HID).bfloat16(), torch.rand(HID).bfloat16() + 0.5,
                     (torch.randn(HID, NQ + NK) * 0.02).bfloat16(), torch.rand(D) + 0.5, torch.rand(D) + 0.5,
                     torch.randn(t, D).bfloat16(), torch.randn(t, D).bfloat16(),
                     torch.zeros(t, HQ, D).bfloat16(), torch.zeros(t, HK, D).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
