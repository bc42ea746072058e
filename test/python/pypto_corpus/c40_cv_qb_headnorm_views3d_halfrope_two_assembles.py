import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# C -> V (MLA q_b style without a pre-norm): qr [T, 1536] @ wq_b^T (wq_b [N, K] = [1536, 1536],
# b_trans) -> bf16 -> reshape [t, 8, 192] -> per-head RMSNorm over D (no gamma, 1/sqrt via div of
# ones) -> rank-3 views nope [t, 8, 128] at [0, 0, 0] and rope [t, 8, 64] at [0, 0, 128]
# -> half-split RoPE on the rope view with cos/sin [T, 64] reshaped to [t, 1, 64]
# -> the two parts assembled separately into the rank-3 output [T, 8, 192]. Unroll [32, 8, 1].
K = 1536
NH = 8
HD = 192
RD = 64
ND = HD - RD
N = NH * HD
EPS = 1e-6
T = pypto.frontend.dynamic("T")


def rotate_half_3d(v):
    h = v.shape[-1] // 2
    a = pypto.view(v, [v.shape[0], v.shape[1], h], [0, 0, 0])
    b = pypto.view(v, [v.shape[0], v.shape[1], h], [0, 0, h])
    return pypto.concat([b * (-1.0), a + 0.0], -1)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def qb_head(qr: pypto.Tensor([T, K], pypto.DT_BF16),
            wq_b: pypto.Tensor([N, K], pypto.DT_BF16),
            cos: pypto.Tensor([T, RD], pypto.DT_BF16),
            sin: pypto.Tensor([T, RD], pypto.DT_BF16),
            q_out: pypto.Tensor([T, NH, HD], pypto.DT_BF16)):
    for i, tt in pypto.loop_unroll(0, qr.shape[0], 1, name="QB", idx_name="i", unroll_list=[32, 8, 1]):
        pypto.set_semantic_label("wqb-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        a = pypto.view(qr, [tt, K], [i, 0], valid_shape=[tt, K])
        q = pypto.matmul(a, wq_b, pypto.DT_BF16, b_trans=True)

        pypto.set_semantic_label("q-headnorm")
        pypto.set_vec_tile_shapes(4, 8, HD)
        q3 = pypto.cast(pypto.reshape(q, [tt, NH, HD]), pypto.DT_FP32)
        ss = pypto.sum(pypto.mul(q3, q3), -1, keepdim=True)
        den = pypto.sqrt(pypto.add(pypto.mul(ss, 1.0 / HD), EPS))
        qn = pypto.mul(q3, pypto.div(pypto.full(den.shape, 1.0, pypto.DT_FP32), den))

        pypto.set_semantic_label("q-rope")
        pypto.set_vec_tile_shapes(4, RD)
        c = pypto.reshape(pypto.cast(pypto.view(cos, [tt, RD], [i, 0], valid_shape=[tt, RD]), pypto.DT_FP32), [tt, 1, RD])
        s = pypto.reshape(pypto.cast(pypto.view(sin, [tt, RD], [i, 0], valid_shape=[tt, RD]), pypto.DT_FP32), [tt, 1, RD])
        pypto.set_vec_tile_shapes(4, 8, RD)
        nope = pypto.view(qn, [tt, NH, ND], [0, 0, 0], valid_shape=[tt, NH, ND])
        pe = pypto.view(qn, [tt, NH, RD], [0, 0, ND], valid_shape=[tt, NH, RD])
        pe = pypto.add(pypto.mul(pe, c), pypto.mul(rotate_half_3d(pe), s))
        pypto.set_vec_tile_shapes(4, 8, ND)
        pypto.assemble(pypto.cast(nope, pypto.DT_BF16), [i, 0, 0], q_out)
        pypto.assemble(pypto.cast(pe, pypto.DT_BF16), [i, 0, ND], q_out)


def golden(qr, wq_b, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    q = (qr.astype(np.float64) @ wq_b.astype(np.float64).T).astype(bf).astype(np.float64).reshape(-1, NH, HD)
    qn = q / np.sqrt(np.mean(q * q, -1, keepdims=True) + EPS)
    pe = qn[..., ND:]
    c = cos.astype(np.float64)[:, None, :]
    s = sin.astype(np.float64)[:, None, :]
    rot = np.concatenate([-pe[..., RD // 2:], pe[..., :RD // 2]], -1)
    out = qn.copy()
    out[..., ND:] = pe * c + rot * s
    return out.astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3202)
        wq_b = (rng.standard_normal((N, K)) * 0.03).astype(bf)
        ok = True
        for t in counts:
            qr = rng.standard_normal((t, K)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, RD // 2))
            ang = np.concatenate([ang, ang], -1)
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            q_out = np.zeros((t, NH, HD), bf)
            qb_head(qr, wq_b, cos, sin, q_out)
            r = check(q_out, golden(qr, wq_b, cos, sin))
            print(t, r.describe("q_out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            qb_head(torch.randn(t, K).bfloat16(), (torch.randn(N, K) * 0.03).bfloat16(),
                    torch.randn(t, RD).bfloat16(), torch.randn(t, RD).bfloat16(),
                    torch.zeros(t, NH, HD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
