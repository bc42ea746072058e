import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# C -> V in fp16 (the wqa-linear -> q-rmsnorm order): q = x @ W with Python's `@`
# (Tensor.__matmul__, fp16 result since W is fp16), W [K, N] = [6144, 1536] without b_trans;
# then RMSNorm over N with an fp16 gamma reshaped in place to [1, N], written with
# Tensor methods and operators. Unroll list [32, 4] (PyPTO appends 1).
H = 6144
N = 1536
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def linear_qnorm(x: pypto.Tensor([T, H], pypto.DT_FP16),
                 w: pypto.Tensor([H, N], pypto.DT_FP16),
                 gamma: pypto.Tensor([N], pypto.DT_FP16),
                 q: pypto.Tensor([T, N], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(1, N)
    g = pypto.reshape(gamma, [1, N], inplace=True)
    g = pypto.cast(g, pypto.DT_FP32)
    for t0, tt in pypto.loop_unroll(0, x.shape[0], 1, name="WQA_LOOP", idx_name="t0", unroll_list=[32, 4]):
        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 512], [64, 128])
        xt = pypto.view(x, [tt, H], [t0, 0], valid_shape=[tt, H])
        qt = xt @ w
        pypto.set_semantic_label("q-rmsnorm")
        pypto.set_vec_tile_shapes(4, N)
        qf = pypto.cast(qt, pypto.DT_FP32)
        rstd = qf.mul(qf).sum(-1, keepdim=True).div(float(N)).add(EPS).rsqrt()
        pypto.assemble(pypto.cast(qf * rstd * g, pypto.DT_FP16), [t0, 0], q)


def golden(x, w, gamma):
    import numpy as np
    qf = (x.astype(np.float32) @ w.astype(np.float32)).astype(np.float16).astype(np.float32)
    qn = qf / np.sqrt(np.mean(qf * qf, -1, keepdims=True) + np.float32(EPS)) * gamma.astype(np.float32)
    return qn.astype(np.float16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(1010)
        w = (rng.standard_normal((H, N)) * 0.015).astype(np.float16)
        gamma = rng.uniform(0.5, 1.5, N).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            out = np.zeros((t, N), np.float16)
            linear_qnorm(x, w, gamma, out)
            r = check(out, golden(x, w, gamma))
            print(t, r.describe("q"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            linear_qnorm(torch.randn(t, H).half(), (torch.randn(H, N) * 0.015).half(),
                         torch.ones(N).half(), torch.zeros(t, N).half())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
