import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# C -> V, the attention-output projection followed by the next layer's pre-norm, fp16 throughout:
# h = a @ Wo^T (a [T, 2048] fp16, Wo [N, K] = [2048, 2048] fp16, b_trans, fp32 result)
# -> + residual r [T, 2048] fp16 (viewed per tile, cast to fp32) -> the new residual stream is an
# fp16 output res_out [T, 2048]; the second RMSNorm (eps 1e-5, gamma [2048] fp16 cast inside the loop
# and reshaped in place to [1, N]) of the fp32 sum, 1/rms via pypto.rsqrt, -> fp16 output y [T, 2048].
# Python operators / Tensor methods for the vector arithmetic; unroll [64, 16, 4] (1 appended).
K = 2048
N = 2048
EPS = 1e-5
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def oproj_residual_norm(a: pypto.Tensor([T, K], pypto.DT_FP16),
                        wo: pypto.Tensor([N, K], pypto.DT_FP16),
                        r: pypto.Tensor([T, N], pypto.DT_FP16),
                        gamma: pypto.Tensor([N], pypto.DT_FP16),
                        res_out: pypto.Tensor([T, N], pypto.DT_FP16),
                        y: pypto.Tensor([T, N], pypto.DT_FP16)):
    wo.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for i, p in pypto.loop_unroll(0, a.shape[0], 1, name="OPROJ", idx_name="i", unroll_list=[64, 16, 4]):
        pypto.set_semantic_label("o-linear")
        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        at = pypto.view(a, [p, K], [i, 0], valid_shape=[p, K])
        h = pypto.matmul(at, wo, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("residual-add")
        pypto.set_vec_tile_shapes(4, N)
        rt = pypto.view(r, [p, N], [i, 0], valid_shape=[p, N])
        s = h + pypto.cast(rt, pypto.DT_FP32)
        pypto.assemble(pypto.cast(s, pypto.DT_FP16), [i, 0], res_out)

        pypto.set_semantic_label("post-rmsnorm")
        pypto.set_vec_tile_shapes(N)
        g = pypto.reshape(pypto.cast(gamma, pypto.DT_FP32), [1, N], inplace=True)
        pypto.set_vec_tile_shapes(4, N)
        ms = (s * s).sum(-1, keepdim=True) * (1.0 / N)
        yn = s * (ms + EPS).rsqrt() * g
        pypto.assemble(pypto.cast(yn, pypto.DT_FP16), [i, 0], y)


def golden(a, wo, r, gamma):
    import numpy as np
    h = (np.asarray(a).astype(np.float64) @ np.asarray(wo).astype(np.float64).T).astype(np.float32)
    s = h + np.asarray(r).astype(np.float32)
    ms = (s * s).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / N)
    yn = s * (np.float32(1.0) / np.sqrt(ms + np.float32(EPS))) * np.asarray(gamma).astype(np.float32)
    return s.astype(np.float16), yn.astype(np.float16)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(2202)
        wo = (rng.standard_normal((N, K)) * 0.02).astype(np.float16)
        gamma = rng.uniform(0.5, 1.5, N).astype(np.float16)
        ok = True
        for t in counts:
            a = rng.standard_normal((t, K)).astype(np.float16)
            r = rng.standard_normal((t, N)).astype(np.float16)
            res_out = np.zeros((t, N), np.float16)
            y = np.zeros((t, N), np.float16)
            oproj_residual_norm(a, wo, r, gamma, res_out, y)
            g_res, g_y = golden(a, wo, r, gamma)
            for name, act, exp in (("res_out", res_out, g_res), ("y", y, g_y)):
                rr = check(act, exp)
                print(t, rr.describe(name))
                ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            oproj_residual_norm(torch.randn(t, K).half(), (torch.randn(N, K) * 0.02).half(),
                                torch.randn(t, N).half(), (torch.rand(N) + 0.5).half(),
                                torch.zeros(t, N).half(), torch.zeros(t, N).half())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
