import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V with a second RMSNorm: x [T, 4096] -> RMSNorm(gamma_in) -> @ W [K, N=512] (fp32 acc)
# -> RMSNorm over N (gamma_out fp32, different eps) -> bf16. One RMSNorm helper used for both.
# A single unroll factor [32] (PyPTO appends 1 for the remainder).
H = 4096
N = 512
EPS_IN = 1e-6
EPS_OUT = 1e-5
T = pypto.DYNAMIC


def rms(x32, g, width, eps):
    ms = pypto.mul(pypto.sum(pypto.mul(x32, x32), -1, keepdim=True), 1.0 / width)
    return pypto.mul(pypto.mul(x32, pypto.rsqrt(pypto.add(ms, eps))), g)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "vec_nbuffer_setting": {0: 2}})
def double_norm_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
                     gamma_in: pypto.Tensor([H], pypto.DT_BF16),
                     w: pypto.Tensor([H, N], pypto.DT_BF16),
                     gamma_out: pypto.Tensor([N], pypto.DT_FP32),
                     y: pypto.Tensor([T, N], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(H)
    g_in = pypto.cast(gamma_in, pypto.DT_FP32)
    for t0, tl in pypto.loop_unroll(0, x.shape[0], 1, name="DN_LOOP", idx_name="t0", unroll_list=[32]):
        pypto.set_semantic_label("pre-rmsnorm")
        pypto.set_vec_tile_shapes(2, H)
        xv = pypto.view(x, [tl, H], [t0, 0], valid_shape=[tl, H])
        xn = pypto.cast(rms(pypto.cast(xv, pypto.DT_FP32), g_in, H, EPS_IN), pypto.DT_BF16)

        pypto.set_semantic_label("down-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 1024], [64, 128])
        h = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_semantic_label("post-rmsnorm")
        pypto.set_vec_tile_shapes(8, N)
        hn = rms(h, gamma_out, N, EPS_OUT)
        pypto.assemble(pypto.cast(hn, pypto.DT_BF16), [t0, 0], y)


def golden(x, gamma_in, w, gamma_out):
    import numpy as np, ml_dtypes
    def rms(a, g, eps):
        return a / np.sqrt(np.mean(a * a, -1, keepdims=True) + np.float32(eps)) * g
    xn = rms(x.astype(np.float32), gamma_in.astype(np.float32), EPS_IN)
    h = xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)
    return rms(h, gamma_out, EPS_OUT).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(404)
        g_in = rng.uniform(0.5, 1.5, H).astype(bf16)
        w = (rng.standard_normal((H, N)) * 0.02).astype(bf16)
        g_out = rng.uniform(0.5, 1.5, N).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf16)
            y = np.zeros((t, N), bf16)
            double_norm_proj(x, g_in, w, g_out, y)
            r = check(y, golden(x, g_in, w, g_out))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            double_norm_proj(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(),
                             (torch.randn(H, N) * 0.02).bfloat16(), torch.ones(N),
                             torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
