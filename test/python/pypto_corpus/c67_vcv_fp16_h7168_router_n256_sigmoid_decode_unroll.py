import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# DeepSeek-sized hidden (7168) to a router-width output (N = 256) in fp16, V -> C -> V:
# RMSNorm(x) (x [T, 7168] fp16, gamma [7168] fp16 cast inside the loop; vec tile (1, 7168)) -> fp16
# -> x @ Wg^T (Wg [N, K] = [256, 7168] fp16, b_trans, fp32 result) -> sigmoid scores -> fp32
# output [T, 256]. Decode unroll list [256, 64, 16, 4, 1] (200 = 3*64 + 2*4; 45 = 2*16 + 3*4 + 1).
# The weight is small and reused by every iteration, so it keeps the default cache policy.
H = 7168
N = 256
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def router_scores(x: pypto.Tensor([T, H], pypto.DT_FP16),
                  gamma: pypto.Tensor([H], pypto.DT_FP16),
                  wg: pypto.Tensor([N, H], pypto.DT_FP16),
                  scores: pypto.Tensor([T, N], pypto.DT_FP32)):
    for r0, rt in pypto.loop_unroll(0, x.shape[0], 1, name="GATE", idx_name="r0",
                                    unroll_list=[256, 64, 16, 4, 1]):
        pypto.set_semantic_label("gate-norm")
        pypto.set_vec_tile_shapes(H)
        g = pypto.reshape(pypto.cast(gamma, pypto.DT_FP32), [1, H])
        pypto.set_vec_tile_shapes(1, H)
        xf = pypto.cast(pypto.view(x, [rt, H], [r0, 0], valid_shape=[rt, H]), pypto.DT_FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        xn = pypto.cast(pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(ms, EPS))), g), pypto.DT_FP16)

        pypto.set_semantic_label("gate-linear")
        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        logits = pypto.matmul(xn, wg, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("gate-sigmoid")
        pypto.set_vec_tile_shapes(16, N)
        pypto.assemble(pypto.sigmoid(logits), [r0, 0], scores)


def golden(x, gamma, wg):
    import numpy as np
    f32 = np.float32
    xf = np.asarray(x).astype(f32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=f32) * f32(1.0 / H)
    xn = (xf * (f32(1.0) / np.sqrt(ms + f32(EPS))) * np.asarray(gamma).astype(f32)).astype(np.float16)
    lg = xn.astype(np.float64) @ np.asarray(wg).astype(np.float64).T
    return (1.0 / (1.0 + np.exp(-lg))).astype(f32)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(3010)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        wg = (rng.standard_normal((N, H)) * 0.02).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            sc = np.zeros((t, N), np.float32)
            router_scores(x, gamma, wg, sc)
            rr = check(sc, golden(x, gamma, wg))
            print(t, rr.describe("scores"))
            ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            router_scores(torch.randn(t, H).half(), (torch.rand(H) + 0.5).half(),
                          (torch.randn(N, H) * 0.02).half(), torch.zeros(t, N))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
