import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# fp16 gate projection to a wide N = 8192 from H = 1536, SiLU post-op, both stages written as
# @pypto.frontend.function helpers (inlined by the parser; results via out.move / assemble). W [K, N] fp16, no b_trans, NONE_CACHEABLE.
# SiLU as h * h.sigmoid() (Tensor method); unroll list [128, 16, 1].
H = 1536
N = 8192
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.function
def rmsnorm_fp16(xh, g32, xn):
    xf = pypto.cast(xh, pypto.DT_FP32)
    ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
    xn.move(pypto.cast(pypto.mul(pypto.mul(xf, pypto.rsqrt(pypto.add(ms, EPS))), g32), pypto.DT_FP16))


@pypto.frontend.function
def silu_store(h, act, r0):
    pypto.assemble(pypto.cast(h * h.sigmoid(), pypto.DT_FP16), [r0, 0], act)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "vec_nbuffer_setting": {0: 2}})
def gate_silu(x: pypto.Tensor([T, H], pypto.DT_FP16),
              gamma: pypto.Tensor([H], pypto.DT_FP16),
              w_gate: pypto.Tensor([H, N], pypto.DT_FP16),
              act: pypto.Tensor([T, N], pypto.DT_FP16)):
    w_gate.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(H)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    for r0, rn in pypto.loop_unroll(0, x.shape[0], 1, name="GATE", idx_name="r0", unroll_list=[128, 16, 1]):
        pypto.set_semantic_label("gate-norm")
        pypto.set_vec_tile_shapes(8, H)
        xn = pypto.Tensor([rn, H], pypto.DT_FP16)
        rmsnorm_fp16(pypto.view(x, [rn, H], [r0, 0], valid_shape=[rn, H]), g32, xn)
        pypto.set_semantic_label("gate-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 256])
        h = pypto.matmul(xn, w_gate, pypto.DT_FP32)
        pypto.set_semantic_label("gate-silu")
        pypto.set_vec_tile_shapes(4, 2048)
        silu_store(h, act, r0)


def golden(x, gamma, w):
    import numpy as np
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float32)).astype(np.float16)
    h = xn.astype(np.float32) @ w.astype(np.float32)
    return (h / (1.0 + np.exp(-h))).astype(np.float16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(707)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        w = (rng.standard_normal((H, N)) * 0.03).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            out = np.zeros((t, N), np.float16)
            gate_silu(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("act"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            gate_silu(torch.randn(t, H).half(), torch.ones(H).half(),
                      (torch.randn(H, N) * 0.03).half(), torch.zeros(t, N).half())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
