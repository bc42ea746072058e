import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Norm -> ONE merged gate/up projection -> SwiGLU (a single matmul, so still SK-03 + post V stage).
#   x [T, 2048] bf16, gamma [2048] bf16, w_gu [2816, 2048] bf16 (rows 0..1407 = gate, 1408..2815 = up),
#   b_trans=True.  Post: act = silu(gate) * up, silu(g) = g / (1 + exp(-g)), written to act [T, 1408] fp16.
# The gate/up halves are taken with pypto.view on the fp32 matmul result.
# The RMSNorm lives in a @pypto.frontend.function helper; loop_unroll [64, 8]; sem labels per stage.
HID = 2048
INTER = 1408
NGU = 2 * INTER
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.function
def rmsnorm_fp32(xin, g32, width: int, eps: float, res):
    # PyPTO 0.2.0 nested functions may not `return`: the result goes out through res.move(...)
    xv = pypto.cast(xin, pypto.DT_FP32)
    nrm = pypto.sqrt(pypto.add(pypto.mul(pypto.sum(pypto.mul(xv, xv), -1, keepdim=True), 1.0 / width), eps))
    res.move(pypto.mul(pypto.mul(xv, pypto.reciprocal(nrm)), g32))


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def gateup_swiglu(x: pypto.Tensor([T, HID], pypto.DT_BF16),
                  gamma: pypto.Tensor([HID], pypto.DT_BF16),
                  w_gu: pypto.Tensor([NGU, HID], pypto.DT_BF16),
                  act: pypto.Tensor([T, INTER], pypto.DT_FP16)):
    w_gu.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(HID)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    for b, nb in pypto.loop_unroll(0, x.shape[0], 1, name="GU", idx_name="b", unroll_list=[64, 8]):
        pypto.set_semantic_label("post-attn-norm")
        pypto.set_vec_tile_shapes(4, HID)
        h = pypto.Tensor([nb, HID], pypto.DT_FP32)
        rmsnorm_fp32(pypto.view(x, [nb, HID], [b, 0]), g32, HID, EPS, h)

        pypto.set_semantic_label("gate-up-linear")
        pypto.set_cube_tile_shapes([64, 64], [128, 512], [256, 256])  # L0B: kL0*nL0*sizeof <= 64 KiB (PyPTO refused the first try)
        gu = pypto.matmul(pypto.cast(h, pypto.DT_BF16), w_gu, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("swiglu")
        pypto.set_vec_tile_shapes(8, 704)
        gate = pypto.view(gu, [nb, INTER], [0, 0])
        up = pypto.view(gu, [nb, INTER], [0, INTER])
        silu = pypto.div(gate, pypto.add(pypto.exp(pypto.neg(gate)), 1.0))
        pypto.assemble(pypto.cast(pypto.mul(silu, up), pypto.DT_FP16), [b, 0], act)


def golden(x, gamma, w_gu):
    import numpy as np
    import ml_dtypes
    xf = x.astype(np.float64)
    h = xf * (1.0 / np.sqrt((xf ** 2).mean(1, keepdims=True) + EPS)) * gamma.astype(np.float64)
    h = h.astype(ml_dtypes.bfloat16).astype(np.float64)
    gu = h @ w_gu.astype(np.float64).T
    g, u = gu[:, :INTER], gu[:, INTER:]
    return g / (1.0 + np.exp(-g)) * u


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(40)
        gamma = (1.0 + 0.1 * rng.standard_normal(HID)).astype(ml_dtypes.bfloat16)
        w_gu = (rng.standard_normal((NGU, HID)) * 0.03).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(ml_dtypes.bfloat16)
            act = np.zeros((t, INTER), np.float16)
            gateup_swiglu(x, gamma, w_gu, act)
            r = check(act, golden(x, gamma, w_gu))
            print(t, r.describe("act"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        gamma = (1.0 + 0.1 * torch.randn(HID)).bfloat16()
        w_gu = (torch.randn(NGU, HID) * 0.03).bfloat16()
        for t in counts:
            gateup_swiglu(torch.randn(t, HID).bfloat16(), gamma, w_gu, torch.zeros(t, INTER).half())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
