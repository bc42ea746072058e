import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# hc_pre / mhc_pre variant: huge reduction (hc*d = 16384) x tiny output (mix_hc = 24), fp32.
# x [t, 4, 4096] bf16 reshaped in place to [t, 16384]; hc_fn [24, 16384] fp32 with b_trans;
# K split by hand into 4 chunks accumulated in fp32; result divided by sqrt(mean(x^2) + eps).
HC = 4
D = 4096
HCD = HC * D
MIX = 24
KSPLIT = 4
KC = HCD // KSPLIT
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM,
                                     "stitch_function_max_num": 128, "device_sched_mode": 0},
                    pass_options={"cube_nbuffer_setting": {-1: 4}, "vec_nbuffer_setting": {-1: 4}})
def hc_pre(x: pypto.Tensor([T, HC, D], pypto.DT_BF16),
           hc_fn: pypto.Tensor([MIX, HCD], pypto.DT_FP32),
           mixes: pypto.Tensor([T, MIX], pypto.DT_FP32)):
    t = x.shape[0]
    x_flat = pypto.reshape(x, [t, HCD], inplace=True)
    for t_idx, tile_t in pypto.loop_unroll(0, t, 1, name="t_loop", idx_name="t_idx", unroll_list=[16]):
        x2 = pypto.view(x_flat, [tile_t, HCD], [t_idx, 0], valid_shape=[tile_t, HCD])

        pypto.set_semantic_label("hc-rms")
        pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(1, 2048)
        xf = pypto.cast(x2, pypto.DT_FP32)
        ssq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        rstd = pypto.rsqrt(pypto.add(pypto.mul(ssq, 1.0 / HCD), EPS))
        pypto.set_pass_options(sg_set_scope=-1)

        pypto.set_semantic_label("hc-mix-matmul")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128])
        acc = None
        for kk in range(KSPLIT):
            xk = pypto.view(x2, [tile_t, KC], [0, kk * KC], valid_shape=[tile_t, KC])
            xk = pypto.cast(xk, pypto.DT_FP32)          # re-read bf16, cast just in time
            wk = pypto.view(hc_fn, [MIX, KC], [0, kk * KC])
            part = pypto.matmul(xk, wk, pypto.DT_FP32, b_trans=True)
            acc = part if acc is None else pypto.add(acc, part)

        pypto.set_semantic_label("hc-scale")
        pypto.set_vec_tile_shapes(16, MIX)
        pypto.assemble(pypto.mul(acc, rstd), [t_idx, 0], mixes)


def golden(x, hc_fn):
    import numpy as np
    xf = x.astype(np.float32).reshape(x.shape[0], HCD)
    rstd = 1.0 / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + EPS)
    return (xf @ hc_fn.T) * rstd


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(5)
        hc_fn = (rng.standard_normal((MIX, HCD)) * 0.01).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HC, D)).astype(ml_dtypes.bfloat16)
            mixes = np.zeros((t, MIX), np.float32)
            hc_pre(x, hc_fn, mixes)
            r = check(mixes, golden(x, hc_fn))
            print(t, r.describe("mixes"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            x = torch.randn(t, HC, D).bfloat16()
            hc_fn = torch.randn(MIX, HCD) * 0.01
            mixes = torch.zeros(t, MIX)
            hc_pre(x, hc_fn, mixes)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
