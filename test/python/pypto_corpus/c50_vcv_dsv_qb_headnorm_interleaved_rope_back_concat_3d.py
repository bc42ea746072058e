import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# DeepSeek-style q path, V -> C -> V with a rank-3 output: q-rmsnorm on qr [T, 1536] (gamma_cq [1536]
# fp32) -> bf16 -> qr @ wq_b^T (wq_b [N, K] = [8 * 192, 1536], b_trans, bf16 result) -> reshape
# [t, 8, 192] -> per-head RMSNorm over D (no gamma) -> rank-3 views nope [t, 8, 128] / rope [t, 8, 64]
# -> interleaved RoPE on the rope part: reshape [t, 8, 32, 2] -> transpose(2, 3) -> reshape [t, 8, 64]
# (de-interleave), x*cos + rotate_half(x)*sin with cos/sin given as half tables [T, 32] concatenated
# to [t, 64] and reshaped to [t, 1, 64], then reshape [t, 8, 2, 32] -> transpose(2, 3) -> reshape back
# (re-interleave) -> concat(nope, rope) on -1 -> one assemble into q_out [T, 8, 192] bf16.
# Unroll [16, 8, 1] (45 = 2*16 + 8 + 5*1).
K = 1536
H = 8
NOPE = 128
ROPE = 64
HD = NOPE + ROPE
N = H * HD
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def rms_last(v, n):
    sq = pypto.sum(pypto.mul(v, v), -1, keepdim=True)
    return pypto.mul(v, pypto.rsqrt(pypto.add(pypto.mul(sq, 1.0 / n), EPS)))


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def q_b_path(qr: pypto.Tensor([T, K], pypto.DT_BF16),
             gamma_cq: pypto.Tensor([K], pypto.DT_FP32),
             wq_b: pypto.Tensor([N, K], pypto.DT_BF16),
             cos: pypto.Tensor([T, ROPE // 2], pypto.DT_FP32),
             sin: pypto.Tensor([T, ROPE // 2], pypto.DT_FP32),
             q_out: pypto.Tensor([T, H, HD], pypto.DT_BF16)):
    g = pypto.reshape(gamma_cq, [1, K], inplace=True)
    wq_b.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for b, tt in pypto.loop_unroll(0, qr.shape[0], 1, name="QB_LOOP", idx_name="b", unroll_list=[16, 8, 1]):
        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(4, K)
        a = pypto.cast(pypto.view(qr, [tt, K], [b, 0], valid_shape=[tt, K]), pypto.DT_FP32)
        a = pypto.cast(pypto.mul(rms_last(a, K), g), pypto.DT_BF16)

        pypto.set_semantic_label("wqb-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        q = pypto.matmul(a, wq_b, pypto.DT_BF16, b_trans=True)

        pypto.set_semantic_label("q-headnorm")
        pypto.set_vec_tile_shapes(4, H, HD)
        q3 = pypto.reshape(q, [tt, H, HD])
        qn = rms_last(pypto.cast(q3, pypto.DT_FP32), HD)
        nope = pypto.view(qn, [tt, H, NOPE], [0, 0, 0], valid_shape=[tt, H, NOPE])
        pe = pypto.view(qn, [tt, H, ROPE], [0, 0, NOPE], valid_shape=[tt, H, ROPE])

        pypto.set_semantic_label("q-rope")
        pypto.set_vec_tile_shapes(4, ROPE // 2)
        c = pypto.view(cos, [tt, ROPE // 2], [b, 0], valid_shape=[tt, ROPE // 2])
        s = pypto.view(sin, [tt, ROPE // 2], [b, 0], valid_shape=[tt, ROPE // 2])
        pypto.set_vec_tile_shapes(4, ROPE)
        c = pypto.reshape(pypto.concat([c, c], -1), [tt, 1, ROPE])
        s = pypto.reshape(pypto.concat([s, s], -1), [tt, 1, ROPE])
        pypto.set_vec_tile_shapes(4, H, ROPE // 2, ROPE // 2)
        p4 = pypto.reshape(pe, [tt, H, ROPE // 2, 2])
        pypto.set_vec_tile_shapes(4, H, ROPE // 2, ROPE // 2)
        d = pypto.reshape(pypto.transpose(p4, 2, 3), [tt, H, ROPE])
        pypto.set_vec_tile_shapes(4, H, ROPE)
        x1 = pypto.view(d, [tt, H, ROPE // 2], [0, 0, 0])
        x2 = pypto.view(d, [tt, H, ROPE // 2], [0, 0, ROPE // 2])
        rot = pypto.concat([pypto.mul(x2, -1.0), pypto.add(x1, 0.0)], -1)
        e = pypto.add(pypto.mul(d, c), pypto.mul(rot, s))
        pypto.set_vec_tile_shapes(4, H, ROPE // 2, ROPE // 2)
        e4 = pypto.reshape(e, [tt, H, 2, ROPE // 2])
        pypto.set_vec_tile_shapes(4, H, ROPE // 2, ROPE // 2)
        back = pypto.reshape(pypto.transpose(e4, 2, 3), [tt, H, ROPE])

        pypto.set_vec_tile_shapes(4, H, HD)
        full = pypto.concat([nope, back], -1)
        pypto.assemble(pypto.cast(full, pypto.DT_BF16), [b, 0, 0], q_out)


def golden(qr, gamma, w, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(qr)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    q = (f(a) @ f(w).T).astype(bf).astype(np.float64).reshape(-1, H, HD)
    q = q / np.sqrt(np.mean(q * q, -1, keepdims=True) + EPS)
    pe = q[..., NOPE:]
    ev, od = pe[..., 0::2], pe[..., 1::2]          # pairs (2i, 2i+1)
    c, s = f(cos)[:, None, :], f(sin)[:, None, :]
    out = q.copy()
    out[..., NOPE + 0::2] = ev * c - od * s
    out[..., NOPE + 1::2] = od * c + ev * s
    return out.astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1202)
        gamma = rng.uniform(0.5, 1.5, K).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 0.03).astype(bf)
        ok = True
        for t in counts:
            qr = rng.standard_normal((t, K)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, ROPE // 2))
            cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
            q_out = np.zeros((t, H, HD), bf)
            q_b_path(qr, gamma, w, cos, sin, q_out)
            r = check(q_out, golden(qr, gamma, w, cos, sin))
            print(t, r.describe("q_out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            q_b_path(torch.randn(t, K).bfloat16(), torch.rand(K) + 0.5, (torch.randn(N, K) * 0.03).bfloat16(),
                     torch.rand(t, ROPE // 2), torch.rand(t, ROPE // 2), torch.zeros(t, H, HD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
