import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mhc_pre in its prefill layout: the mixes are computed transposed, one column per token
# (mix = phi @ x^T, [24, t]), so the per-mix scales and biases are [k, 1] columns
# broadcast along the tokens, the norm's [t, 1] is reshaped to [1, t], and the 16 comb
# rows become [4, 4, t], normalised over dims 0 and 1 (three sinkhorn rounds) before
# the results are transposed back to tokens first and stored.
S = 4
D = 1024
K = S * D
M = (2 + S) * S  # 24 mixes: pre (4), post (4), comb (16)
EPS = 1e-6
ROUNDS = 3
T = pypto.frontend.dynamic("T")


def gate(v):
    return pypto.reciprocal(pypto.exp(v * -1.0) + 1.0)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def mhc_prefill(x: pypto.Tensor([T, S, D], pypto.DT_BF16),
                phi: pypto.Tensor([M, K], pypto.DT_FP32),
                alpha: pypto.Tensor([3], pypto.DT_FP32),
                beta: pypto.Tensor([M], pypto.DT_FP32),
                y: pypto.Tensor([T, D], pypto.DT_BF16),
                post: pypto.Tensor([T, S], pypto.DT_FP32),
                comb: pypto.Tensor([T, S, S], pypto.DT_FP32)):
    xs = pypto.reshape(x, [x.shape[0], K], inplace=True)
    a2 = pypto.reshape(alpha, [1, 3], inplace=True)
    for i, n in pypto.loop_unroll(0, x.shape[0], 1, name="rows", idx_name="i", unroll_list=[32]):
        pypto.set_vec_tile_shapes(4, 1024)
        xf = pypto.cast(pypto.view(xs, [n, K], [i, 0]), pypto.DT_FP32)
        inv = pypto.rsqrt(pypto.sum(xf * xf, dim=-1, keepdim=True) * (1.0 / K) + EPS)  # [n, 1]

        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [32, 32])
        mix = pypto.matmul(phi, xf, pypto.DT_FP32, b_trans=True)  # [24, n]
        pypto.set_vec_tile_shapes(24, 32)
        mix = mix * pypto.reshape(inv, [1, n], inplace=True)
        b2 = pypto.reshape(beta, [M, 1])

        a4 = a2.expand_clone([S, 3])  # (PyPTO broadcasts one axis at a time: [4, 1] scales)
        pre = gate(mix[0:S, :] * a4[:, 0:1] + b2[0:S, :]) + EPS  # [4, n]
        pre_t = pypto.reshape(pypto.transpose(pre, 0, 1), [n, S, 1], inplace=True)
        pypto.set_vec_tile_shapes(4, 4, 256)
        mixed = pypto.sum(pre_t * pypto.reshape(xf, [n, S, D]), dim=1)
        pypto.set_vec_tile_shapes(4, 1024)
        pypto.assemble(pypto.cast(mixed, pypto.DT_BF16), [i, 0], y)

        pypto.set_vec_tile_shapes(8, 32)
        po = gate(mix[S:2 * S, :] * a4[:, 1:2] + b2[S:2 * S, :]) * 2.0
        pypto.assemble(po.transpose(0, 1), [i, 0], post)

        a16 = pypto.expand_clone(a2, [S * S, 3])
        c = pypto.reshape(mix[2 * S:, :] * a16[:, 2:3] + b2[2 * S:, :], [S, S, n])
        pypto.set_vec_tile_shapes(4, 4, 32)
        c = pypto.exp(c - pypto.amax(c, -2, True))
        for _ in range(ROUNDS):
            c = c / (c.sum(-2, keepdim=True) + EPS)
            c = c / (c.sum(0, keepdim=True) + EPS)
        c = pypto.transpose(pypto.transpose(c, 0, 2), 1, 2)  # [n, 4, 4]: [s, r, n] -> [n, s, r]
        pypto.assemble(c, [i, 0, 0], comb)


def golden(x, phi, alpha, beta):
    import numpy as np
    t = x.shape[0]
    xf = x.astype(np.float32).astype(np.float64).reshape(t, K)
    inv = 1.0 / np.sqrt((xf * xf).mean(-1, keepdims=True) + EPS)
    mix = (xf @ phi.astype(np.float64).T) * inv  # [t, 24]: the transposed layout's rows
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    pre = sig(mix[:, :S] * alpha[0] + beta[:S]) + EPS
    y = (pre[:, :, None] * xf.reshape(t, S, D)).sum(1)
    po = sig(mix[:, S:2 * S] * alpha[1] + beta[S:2 * S]) * 2.0
    c = (mix[:, 2 * S:] * alpha[2] + beta[2 * S:]).reshape(t, S, S)  # [t, s, r]
    c = np.exp(c - c.max(-1, keepdims=True))
    for _ in range(ROUNDS):
        c = c / (c.sum(-1, keepdims=True) + EPS)
        c = c / (c.sum(1, keepdims=True) + EPS)
    return y.astype(np.float32), po.astype(np.float32), c.astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(68)
        phi = (rng.standard_normal((M, K)) * 0.02).astype(np.float32)
        alpha = rng.uniform(0.5, 1.5, 3).astype(np.float32)
        beta = (rng.standard_normal(M) * 0.1).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, S, D)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, D), ml_dtypes.bfloat16)
            po = np.zeros((t, S), np.float32)
            cb = np.zeros((t, S, S), np.float32)
            mhc_prefill(x, phi, alpha, beta, y, po, cb)
            for name, got, want in zip(("y", "post", "comb"), (y, po, cb), golden(x, phi, alpha, beta)):
                r = check(got, want)
                print(t, r.describe(name))
                ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            mhc_prefill(torch.randn(t, S, D).bfloat16(), torch.randn(M, K) * 0.02, torch.rand(3) + 0.5,
                        torch.randn(M) * 0.1, torch.zeros(t, D).bfloat16(), torch.zeros(t, S),
                        torch.zeros(t, S, S))
            print("T=%d SIM done" % t, flush=True)


if __name__ == "__main__":
    main()
