"""mhc_pre variant of SK-03 (hc_pre-like): huge reduction x tiny output, fp32 compute.
x [T, 4, 4096] bf16 reshaped in place to [t, 16384], cast to fp32 just in time;
hc_fn [24, 16384] fp32 used with b_trans=True (NOT NONE_CACHEABLE: reused by every unrolled
iteration); out [T, 24] fp32 = (x @ hc_fn^T) / sqrt(mean(x^2) + 1e-6).
loop_unroll(0, T, 1, unroll_list=[16]); cube M = 16; cube tiles chosen from the unroll length.
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

HC = 4
D = 4096
HD = HC * D  # 16384
MIX = 24
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128, "device_sched_mode": 0},
    pass_options={"cube_nbuffer_setting": {-1: 4}, "vec_nbuffer_setting": {-1: 4}},
)
def hc_pre_mix(
    x: pypto.Tensor([T, HC, D], pypto.DT_BF16),
    hc_fn: pypto.Tensor([MIX, HD], pypto.DT_FP32),
    mixes: pypto.Tensor([T, MIX], pypto.DT_FP32),
):
    t = x.shape[0]
    x_2d_all = pypto.reshape(x, [t, HD], inplace=True)
    for t_idx, unroll_length in pypto.loop_unroll(0, t, 1, name="t_loop", idx_name="t_idx", unroll_list=[16]):
        tile_t = unroll_length
        x_2d = pypto.view(x_2d_all, [tile_t, HD], [t_idx, 0])

        pypto.set_semantic_label("hc-rms")
        pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(8, 2048)
        x_fp32 = pypto.cast(x_2d, pypto.DT_FP32)
        sq_sum = pypto.sum(x_fp32 * x_fp32, -1, keepdim=True)
        rms = pypto.sqrt(sq_sum * (1.0 / HD) + EPS)
        pypto.set_pass_options(sg_set_scope=-1)

        pypto.set_semantic_label("hc-linear")
        if tile_t <= 32:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128])
        elif tile_t <= 64:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=True)
        else:
            pypto.set_cube_tile_shapes([16, 16], [512, 2048], [128, 128], enable_split_k=True)
        x_mm = pypto.cast(x_2d, pypto.DT_FP32)
        mix = pypto.matmul(x_mm, hc_fn, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("hc-scale")
        pypto.set_vec_tile_shapes(16, MIX)
        pypto.assemble(mix / rms, [t_idx, 0], mixes)


def golden(x, hc_fn):
    import numpy as np

    xf = x.astype(np.float64).reshape(x.shape[0], -1)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    return (xf @ hc_fn.astype(np.float64).T) / rms


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([21, 5, 32] if os.environ.get("PTO") == "1" else [21])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(6)
        hc_fn = (rng.standard_normal((MIX, HD)) * 0.01).astype(np.float32)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, HC, D)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, MIX), dtype=np.float32)
            hc_pre_mix(x, hc_fn, out)
            r = check(out, golden(x, hc_fn).astype(np.float32))
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(6)
        hc_fn = torch.randn(MIX, HD) * 0.01
        for t in counts:
            x = torch.randn(t, HC, D).to(torch.bfloat16)
            out = torch.zeros(t, MIX, dtype=torch.float32)
            hc_pre_mix(x, hc_fn, out)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(out).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
