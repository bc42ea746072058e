"""mhc_pre variant, second form: fp32 activations x [T, 16384], weight pre-transposed on the host
(phi_t = phi.T.contiguous(), [16384, 32]) and used WITHOUT b_trans; loop_unroll unroll_list=[64, 16]
(-> 64, 16, 1) with the cube tile / split-K choice depending on the unroll length;
out [T, 32] fp32 = (x @ phi_t) * rsqrt(mean(x^2) + eps).
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

KD = 16384
NOUT = 32
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128, "device_sched_mode": 2},
    pass_options={"cube_nbuffer_setting": {-1: 4}, "vec_nbuffer_setting": {-1: 4}},
)
def mhc_pre_pretrans(
    x: pypto.Tensor([T, KD], pypto.DT_FP32),
    phi_t: pypto.Tensor([KD, NOUT], pypto.DT_FP32),
    out: pypto.Tensor([T, NOUT], pypto.DT_FP32),
):
    t = x.shape[0]
    for t_idx, tile_t in pypto.loop_unroll(0, t, 1, name="mhc_loop", idx_name="t_idx", unroll_list=[64, 16]):
        x_tile = pypto.view(x, [tile_t, KD], [t_idx, 0])

        pypto.set_semantic_label("mhc-norm")
        pypto.set_vec_tile_shapes(1, 2048)
        ssq = pypto.sum(pypto.mul(x_tile, x_tile), dim=-1, keepdim=True)
        inv_rms = pypto.rsqrt(pypto.add(pypto.mul(ssq, 1.0 / KD), EPS))

        pypto.set_semantic_label("mhc-linear")
        if tile_t <= 32:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=False)
        else:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=True)
        mix = pypto.matmul(x_tile, phi_t, pypto.DT_FP32)

        pypto.set_semantic_label("mhc-scale")
        pypto.set_vec_tile_shapes(16, NOUT)
        res = pypto.mul(mix, inv_rms)
        pypto.assemble(res, [t_idx, 0], out)


def golden(x, phi_t):
    import numpy as np

    xf = x.astype(np.float64)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    return (xf @ phi_t.astype(np.float64)) / rms


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([85, 20, 7] if os.environ.get("PTO") == "1" else [20])
    if os.environ.get("PTO") == "1":
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(7)
        phi = (rng.standard_normal((NOUT, KD)) * 0.01).astype(np.float32)
        phi_t = np.ascontiguousarray(phi.T)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, KD)).astype(np.float32)
            o = np.zeros((t, NOUT), dtype=np.float32)
            mhc_pre_pretrans(x, phi_t, o)
            r = check(o, golden(x, phi_t).astype(np.float32))
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(7)
        phi = torch.randn(NOUT, KD) * 0.01
        phi_t = phi.T.contiguous()
        for t in counts:
            x = torch.randn(t, KD)
            o = torch.zeros(t, NOUT, dtype=torch.float32)
            mhc_pre_pretrans(x, phi_t, o)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(o).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
