import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen3 pre-attention style: input RMSNorm -> q projection ([K, N] weight) -> per-head RMSNorm
# (q_norm over head_dim, gamma [D]) on a [t, heads, D] reshape -> back to [t, heads*D].
H = 2048
HEADS = 8
HD = 128
NQ = HEADS * HD
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def q_proj_qknorm(x: pypto.Tensor([T, H], pypto.DT_BF16),
                  ln_gamma: pypto.Tensor([H], pypto.DT_BF16),
                  wq: pypto.Tensor([H, NQ], pypto.DT_BF16),
                  qn_gamma: pypto.Tensor([HD], pypto.DT_BF16),
                  q: pypto.Tensor([T, NQ], pypto.DT_BF16)):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(HD)
    qn_g = pypto.cast(qn_gamma, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(H)
    ln_g = pypto.cast(ln_gamma, pypto.DT_FP32)
    for i, u in pypto.loop_unroll(0, t, 1, name="Q_LOOP", idx_name="i", unroll_list=[16, 4, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xt = pypto.cast(pypto.view(x, [u, H], [i, 0], valid_shape=[u, H]), pypto.DT_FP32)
        rs = pypto.rsqrt(pypto.sum(xt * xt, -1, keepdim=True) * (1.0 / H) + EPS)
        xn = pypto.cast(xt * rs * ln_g, pypto.DT_BF16)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        qq = pypto.matmul(xn, wq, pypto.DT_FP32)

        pypto.set_semantic_label("q-norm")
        pypto.set_vec_tile_shapes(4 * HEADS, HD)
        q3 = pypto.reshape(qq, [u * HEADS, HD])          # one row per (token, head)
        hs = pypto.rsqrt(pypto.sum(q3 * q3, -1, keepdim=True) * (1.0 / HD) + EPS)
        q3 = q3 * hs * qn_g
        q2 = pypto.reshape(pypto.cast(q3, pypto.DT_BF16), [u, NQ])
        pypto.assemble(q2, [i, 0], q)


def golden(x, ln_gamma, wq, qn_gamma):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt((xf ** 2).mean(-1, keepdims=True) + EPS) * ln_gamma.astype(np.float32)).astype(bf)
    qq = xn.astype(np.float32) @ wq.astype(np.float32)
    q3 = qq.reshape(-1, HEADS, HD)
    q3 = q3 / np.sqrt((q3 ** 2).mean(-1, keepdims=True) + EPS) * qn_gamma.astype(np.float32)
    return q3.reshape(-1, NQ).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(9)
        ln_gamma = rng.uniform(0.8, 1.2, H).astype(bf)
        qn_gamma = rng.uniform(0.8, 1.2, HD).astype(bf)
        wq = (rng.standard_normal((H, NQ)) * 0.02).astype(bf)
        ok = True
        for n in counts:
            x = rng.standard_normal((n, H)).astype(bf)
            q = np.zeros((n, NQ), bf)
            q_proj_qknorm(x, ln_gamma, wq, qn_gamma, q)
            v = check(q, golden(x, ln_gamma, wq, qn_gamma))
            print(n, v.describe("q"))
            ok = ok and v.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for n in counts:
            q_proj_qknorm(torch.randn(n, H).bfloat16(), torch.ones(H).bfloat16(),
                          (torch.randn(H, NQ) * 0.02).bfloat16(), torch.ones(HD).bfloat16(),
                          torch.zeros(n, NQ).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
