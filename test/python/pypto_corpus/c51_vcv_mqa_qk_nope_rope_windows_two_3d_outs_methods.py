import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# MQA-style fused q/k projection with split nope/rope head dims, V -> C -> V, two rank-3 outputs
# written as column windows of their last dim. RMSNorm(x) (H = 2560, fp32 gamma) -> bf16 -> x @ Wqk
# ([K, N] = [2560, (4 + 1) * 192], no b_trans, fp32) -> q heads [t, 4, 192] and the single k head
# [t, 1, 192] (2-D column views reshaped) -> per head: the nope part [.., 0:128] is RMS-normalised
# with a rank-1 [128] gamma (reshaped in place to [1, 128] and expand_clone'd to [heads, 128] then
# [1, heads, 128]) and written to the window [i, 0, 0] of the output; the rope part [.., 128:192]
# gets half RoPE (cos/sin [T, 64] -> [t, 1, 64]) and is written to the window [i, 0, 128].
# Spelled with Tensor methods (x.view, .sum, .rsqrt, .matmul, .reshape) and slice assignment
# out[i:i+tt, :, a:b] = tile. Unroll [64, 16, 1].
HID = 2560
HQ = 4
HK = 1
NOPE = 128
ROPE = 64
HD = NOPE + ROPE
N = (HQ + HK) * HD
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def heads(y, tt, i, col, nh, gn, c, s, out):
    pypto.set_vec_tile_shapes(8, nh * HD)
    h = y.view([tt, nh * HD], [0, col], valid_shape=[tt, nh * HD])
    pypto.set_vec_tile_shapes(8, nh, HD)
    h = h.reshape([tt, nh, HD])
    nope = h.view([tt, nh, NOPE], [0, 0, 0], valid_shape=[tt, nh, NOPE])
    pe = h.view([tt, nh, ROPE], [0, 0, NOPE], valid_shape=[tt, nh, ROPE])
    ms = nope.mul(nope).sum(-1, keepdim=True).mul(1.0 / NOPE).add(EPS)
    nope = nope.mul(ms.rsqrt()).mul(gn)
    a = pe.view([tt, nh, ROPE // 2], [0, 0, 0])
    b = pe.view([tt, nh, ROPE // 2], [0, 0, ROPE // 2])
    rot = pypto.concat([b.mul(-1.0), a.add(0.0)], -1)
    pe = pe.mul(c).add(rot.mul(s))
    out[i:i + tt, :, 0:NOPE] = pypto.cast(nope, pypto.DT_BF16)
    out[i:i + tt, :, NOPE:HD] = pypto.cast(pe, pypto.DT_BF16)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def mqa_qk(x: pypto.Tensor([T, HID], pypto.DT_BF16),
           gamma: pypto.Tensor([HID], pypto.DT_FP32),
           w: pypto.Tensor([HID, N], pypto.DT_BF16),
           g_nope: pypto.Tensor([NOPE], pypto.DT_FP32),
           cos: pypto.Tensor([T, ROPE], pypto.DT_BF16),
           sin: pypto.Tensor([T, ROPE], pypto.DT_BF16),
           q_out: pypto.Tensor([T, HQ, HD], pypto.DT_BF16),
           k_out: pypto.Tensor([T, HK, HD], pypto.DT_BF16)):
    g = gamma.reshape([1, HID], inplace=True)
    pypto.set_vec_tile_shapes(HQ, NOPE)
    g1 = g_nope.reshape([1, NOPE], inplace=True)
    gq = g1.expand_clone([HQ, NOPE]).reshape([1, HQ, NOPE])
    gk = g1.reshape([1, HK, NOPE])
    for i, tt in pypto.loop_unroll(0, x.shape[0], 1, name="MQA", idx_name="i", unroll_list=[64, 16, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xt = pypto.cast(x.view([tt, HID], [i, 0], valid_shape=[tt, HID]), pypto.DT_FP32)
        xn = xt.mul(xt.mul(xt).sum(-1, keepdim=True).mul(1.0 / HID).add(EPS).rsqrt()).mul(g)

        pypto.set_semantic_label("qk-linear")
        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        y = pypto.cast(xn, pypto.DT_BF16).matmul(w, pypto.DT_FP32)

        pypto.set_semantic_label("qk-post")
        pypto.set_vec_tile_shapes(8, ROPE)
        c = pypto.cast(cos.view([tt, ROPE], [i, 0], valid_shape=[tt, ROPE]), pypto.DT_FP32).reshape([tt, 1, ROPE])
        s = pypto.cast(sin.view([tt, ROPE], [i, 0], valid_shape=[tt, ROPE]), pypto.DT_FP32).reshape([tt, 1, ROPE])
        heads(y, tt, i, 0, HQ, gq, c, s, q_out)
        heads(y, tt, i, HQ * HD, HK, gk, c, s, k_out)


def golden(x, gamma, w, gn, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(x)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    y = f(a) @ f(w)
    c, s = f(cos)[:, None, :], f(sin)[:, None, :]
    res = []
    for lo, nh in ((0, HQ), (HQ * HD, HK)):
        h = y[:, lo:lo + nh * HD].reshape(-1, nh, HD)
        o = np.empty_like(h)
        nope = h[..., :NOPE]
        o[..., :NOPE] = nope / np.sqrt(np.mean(nope * nope, -1, keepdims=True) + EPS) * f(gn)
        pe = h[..., NOPE:]
        rot = np.concatenate([-pe[..., ROPE // 2:], pe[..., :ROPE // 2]], -1)
        o[..., NOPE:] = pe * c + rot * s
        res.append(o.astype(bf))
    return res


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1303)
        gamma = rng.uniform(0.5, 1.5, HID).astype(np.float32)
        w = (rng.standard_normal((HID, N)) * 0.02).astype(bf)
        gn = rng.uniform(0.8, 1.2, NOPE).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, ROPE // 2))
            ang = np.concatenate([ang, ang], -1)
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            q_out = np.zeros((t, HQ, HD), bf)
            k_out = np.zeros((t, HK, HD), bf)
            mqa_qk(x, gamma, w, gn, cos, sin, q_out, k_out)
            gq, gk = golden(x, gamma, w, gn, cos, sin)
            for name, a, e in (("q_out", q_out, gq), ("k_out", k_out, gk)):
                r = check(a, e)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            mqa_qk(torch.randn(t, HID).bfloat16(), torch.rand(HID) + 0.5, (torch.randn(HID, N) * 0.02).bfloat16(),
                   torch.rand(NOPE) + 0.5, torch.randn(t, ROPE).bfloat16(), torch.randn(t, ROPE).bfloat16(),
                   torch.zeros(t, HQ, HD).bfloat16(), torch.zeros(t, HK, HD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
