import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Gate projection with SiLU written out by hand: y = h * 1/(1 + exp(-h)), h = RMSNorm(x) @ W^T.
# The norm's reciprocal is pypto.full(1)/s; vec tiles (16, 512) chop H into column tiles.
HID = 2560
INTER = 2432
EPS = 1e-6
BS = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1},
                                  "cube_nbuffer_setting": {-1: 2}})
def gate_silu(hidden: pypto.Tensor([BS, HID], pypto.DT_BF16),
              norm_w: pypto.Tensor([HID], pypto.DT_FP32),
              w_gate: pypto.Tensor([INTER, HID], pypto.DT_BF16),
              act: pypto.Tensor([BS, INTER], pypto.DT_FP32)):
    bs = hidden.shape[0]
    w_gate.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for r0, rows in pypto.loop_unroll(0, bs, 1, name="GATE_LOOP", idx_name="r0", unroll_list=[64, 16, 4]):
        pypto.set_vec_tile_shapes(16, 512)
        h = pypto.view(hidden, [rows, HID], [r0, 0], valid_shape=[rows, HID])
        h = pypto.cast(h, pypto.DT_FP32)
        s = pypto.sqrt(pypto.sum(h * h, -1, keepdim=True) / HID + EPS)
        one = pypto.full([rows, 1], 1.0, pypto.DT_FP32, valid_shape=[rows, 1])
        h = h * (one / s) * norm_w
        hb = pypto.cast(h, pypto.DT_BF16)

        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 256])
        g = pypto.matmul(hb, w_gate, pypto.DT_FP32, b_trans=True)

        pypto.set_vec_tile_shapes(16, 512)
        e = pypto.exp(pypto.mul(g, -1.0))
        ones = pypto.full([rows, INTER], 1.0, pypto.DT_FP32, valid_shape=[rows, INTER])
        sig = pypto.div(ones, pypto.add(e, 1.0))
        pypto.assemble(pypto.mul(g, sig), [r0, 0], act)


def golden(hidden, norm_w, w_gate):
    import numpy as np, ml_dtypes
    h = hidden.astype(np.float32)
    h = h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + EPS) * norm_w
    h = h.astype(ml_dtypes.bfloat16).astype(np.float32)
    g = h @ w_gate.astype(np.float32).T
    return (g / (1.0 + np.exp(-g))).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(8)
        norm_w = rng.uniform(0.5, 1.5, HID).astype(np.float32)
        w_gate = (rng.standard_normal((INTER, HID)) * 0.02).astype(ml_dtypes.bfloat16)
        ok = True
        for b in counts:
            hidden = rng.standard_normal((b, HID)).astype(ml_dtypes.bfloat16)
            act = np.zeros((b, INTER), np.float32)
            gate_silu(hidden, norm_w, w_gate, act)
            r = check(act, golden(hidden, norm_w, w_gate))
            print(b, r.describe("act"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for b in counts:
            gate_silu(torch.randn(b, HID).bfloat16(), torch.ones(HID),
                      (torch.randn(INTER, HID) * 0.02).bfloat16(), torch.zeros(b, INTER))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
