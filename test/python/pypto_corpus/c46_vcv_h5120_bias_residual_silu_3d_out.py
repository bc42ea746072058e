import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V written with Python operators: h = RMSNorm(x) @ W^T (H = 5120, W [N, K] = [640, 5120],
# b_trans, fp32), then + bias (rank-1 [N] fp32) -> SiLU as h * h.sigmoid() -> + residual r [T, N] bf16
# (viewed per tile) -> reshaped to [t, 5, 128] and assembled into a rank-3 bf16 output [T, 5, 128].
# gamma rank-1 bf16 cast in the loop; unroll [64, 16, 1].
H = 5120
N = 640
G = 5
D = 128
EPS = 1e-5
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def gate_res(x: pypto.Tensor([T, H], pypto.DT_BF16),
             gamma: pypto.Tensor([H], pypto.DT_BF16),
             w: pypto.Tensor([N, H], pypto.DT_BF16),
             bias: pypto.Tensor([N], pypto.DT_FP32),
             res: pypto.Tensor([T, N], pypto.DT_BF16),
             out: pypto.Tensor([T, G, D], pypto.DT_BF16)):
    w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for i, n in pypto.loop_unroll(0, x.shape[0], 1, name="GATE", idx_name="i", unroll_list=[64, 16, 1]):
        pypto.set_semantic_label("rmsnorm")
        pypto.set_vec_tile_shapes(2, H)
        xt = pypto.cast(x[i:i + n, :], pypto.DT_FP32)
        xn = xt / pypto.sqrt((xt * xt).sum(-1, keepdim=True) / H + EPS) * pypto.cast(gamma, pypto.DT_FP32)
        xb = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_semantic_label("gate-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [128, 128])
        h = pypto.matmul(xb, w, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("bias-silu-residual")
        pypto.set_vec_tile_shapes(8, N)
        h = h + bias
        h = h * h.sigmoid()
        h = h + pypto.cast(res[i:i + n, :], pypto.DT_FP32)
        pypto.set_vec_tile_shapes(8, G, D)
        o3 = pypto.reshape(pypto.cast(h, pypto.DT_BF16), [n, G, D])
        pypto.assemble(o3, [i, 0, 0], out)


def golden(x, gamma, w, bias, res):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float64)).astype(bf).astype(np.float64)
    h = xn @ w.astype(np.float64).T + bias
    h = h / (1.0 + np.exp(-h)) + res.astype(np.float64)
    return h.reshape(-1, G, D).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3808)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf)
        w = (rng.standard_normal((N, H)) * 0.02).astype(bf)
        bias = rng.uniform(-0.5, 0.5, N).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            res = rng.standard_normal((t, N)).astype(bf)
            out = np.zeros((t, G, D), bf)
            gate_res(x, gamma, w, bias, res, out)
            r = check(out, golden(x, gamma, w, bias, res))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            gate_res(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(), (torch.randn(N, H) * 0.02).bfloat16(),
                     torch.zeros(N), torch.randn(t, N).bfloat16(), torch.zeros(t, G, D).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
