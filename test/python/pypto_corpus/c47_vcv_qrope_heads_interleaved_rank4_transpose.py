import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Rope-only query heads (MLA q_pe style), V -> C -> V: RMSNorm(x) (H = 1024, rank-1 fp32 gamma)
# -> bf16 -> x @ Wr ([K, N] = [1024, 4 * 64], no b_trans, bf16 result) -> reshape [t, 4, 64]
# -> interleaved RoPE per head: reshape [t, 4, 32, 2] -> transpose(2, 3) -> reshape [t, 4, 64]
# (de-interleave), rotate_half by rank-3 views + concat, cos/sin [T, 64] reshaped to [t, 1, 64]
# -> bf16 rank-3 output [T, 4, 64] in de-interleaved order. Unroll [128, 16, 1].
H = 1024
NH = 4
RD = 64
N = NH * RD
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def q_rope(x: pypto.Tensor([T, H], pypto.DT_BF16),
           gamma: pypto.Tensor([H], pypto.DT_FP32),
           wr: pypto.Tensor([H, N], pypto.DT_BF16),
           cos: pypto.Tensor([T, RD], pypto.DT_BF16),
           sin: pypto.Tensor([T, RD], pypto.DT_BF16),
           q_pe: pypto.Tensor([T, NH, RD], pypto.DT_BF16)):
    for j, n in pypto.loop_unroll(0, x.shape[0], 1, name="QR", idx_name="j", unroll_list=[128, 16, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [n, H], [j, 0], valid_shape=[n, H]), pypto.DT_FP32)
        xn = xf * pypto.rsqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H) + EPS) * gamma

        pypto.set_semantic_label("qr-linear")
        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        q = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), wr, pypto.DT_BF16)

        pypto.set_semantic_label("q-rope")
        pypto.set_vec_tile_shapes(4, RD)
        c = pypto.reshape(pypto.cast(pypto.view(cos, [n, RD], [j, 0], valid_shape=[n, RD]), pypto.DT_FP32), [n, 1, RD])
        s = pypto.reshape(pypto.cast(pypto.view(sin, [n, RD], [j, 0], valid_shape=[n, RD]), pypto.DT_FP32), [n, 1, RD])
        pypto.set_vec_tile_shapes(2, NH, RD)
        q3 = pypto.cast(pypto.reshape(q, [n, NH, RD]), pypto.DT_FP32)
        pypto.set_vec_tile_shapes(2, NH, RD // 2, 32)
        q4 = pypto.transpose(pypto.reshape(q3, [n, NH, RD // 2, 2]), 2, 3)
        pypto.set_vec_tile_shapes(2, NH, RD)
        qd = pypto.reshape(q4, [n, NH, RD])
        a = pypto.view(qd, [n, NH, RD // 2], [0, 0, 0])
        b = pypto.view(qd, [n, NH, RD // 2], [0, 0, RD // 2])
        rot = pypto.concat([b * (-1.0), a + 0.0], -1)
        pypto.assemble(pypto.cast(qd * c + rot * s, pypto.DT_BF16), [j, 0, 0], q_pe)


def golden(x, gamma, wr, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma).astype(bf).astype(np.float64)
    q = (xn @ wr.astype(np.float64)).astype(bf).astype(np.float64).reshape(-1, NH, RD)
    de = np.concatenate([q[..., 0::2], q[..., 1::2]], -1)
    rot = np.concatenate([-de[..., RD // 2:], de[..., :RD // 2]], -1)
    return (de * cos.astype(np.float64)[:, None, :] + rot * sin.astype(np.float64)[:, None, :]).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3909)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float32)
        wr = (rng.standard_normal((H, N)) * 0.03).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, RD))
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            q_pe = np.zeros((t, NH, RD), bf)
            q_rope(x, gamma, wr, cos, sin, q_pe)
            r = check(q_pe, golden(x, gamma, wr, cos, sin))
            print(t, r.describe("q_pe"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            q_rope(torch.randn(t, H).bfloat16(), torch.ones(H), (torch.randn(H, N) * 0.03).bfloat16(),
                   torch.randn(t, RD).bfloat16(), torch.randn(t, RD).bfloat16(), torch.zeros(t, NH, RD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
