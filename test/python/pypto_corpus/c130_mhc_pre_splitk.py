"""c130 (outside batch corpus21, k188): mhc_pre variant (huge reduction x tiny output), split-K.

x [T, 4, 4096] bf16 reshaped in place to [T, 16384] and cast to fp32; hc_fn [24, 16384] fp32 used
with b_trans=True; out [T, 24] fp32 = (x @ hc_fn^T) * rsqrt(mean(x^2) + eps).
The mean square is reduced over the 3-D view [tt, 4, 4096]: first the last axis (keepdim), then
the middle axis (dim=-2).  64-token bodies use set_cube_tile_shapes(..., enable_split_k=True);
16/4/1-token bodies split K by hand into 4 chunks of 4096 and add the partial products.
Decorator and scope settings follow the hc_pre recipe (stitch 128, sched mode 2, nbuffer 4,
sg_set_scope around the fp32 cast, combine_axis).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

HC = 4
D = 4096
K = HC * D
MIX = 24
EPS = 1e-6


@pypto.frontend.jit(
    runtime_options={"stitch_function_max_num": 128, "device_sched_mode": 2},
    pass_options={"cube_nbuffer_setting": {-1: 4}, "vec_nbuffer_setting": {-1: 4}},
)
def k188_mhc_pre_splitk(
    x: pypto.Tensor([pypto.DYNAMIC, HC, D], pypto.DT_BF16),
    hc_fn: pypto.Tensor([MIX, K], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, MIX], pypto.DT_FP32),
):
    pypto.experimental.set_operation_options(combine_axis=True)
    t = x.shape[0]
    x2d = pypto.reshape(x, [t, K], inplace=True)

    for ti, tt in pypto.loop_unroll(0, t, 1, name="hc_loop", idx_name="ti", unroll_list=[64, 16, 4]):
        rows = 2 if tt >= 16 else 1
        pypto.set_vec_tile_shapes(rows * 2, 4096)
        xv = pypto.view(x2d, [tt, K], [ti, 0])
        pypto.set_pass_options(sg_set_scope=1)
        xf = pypto.cast(xv, pypto.DT_FP32)
        pypto.set_pass_options(sg_set_scope=-1)

        pypto.set_vec_tile_shapes(rows, HC, 1024)
        x3 = pypto.reshape(xf, [tt, HC, D])
        part = pypto.sum(x3 * x3, -1, keepdim=True)      # [tt, 4, 1]
        ssq = pypto.sum(part, -2)                          # [tt, 1]
        pypto.set_vec_tile_shapes(rows, 8)
        inv_rms = pypto.rsqrt(ssq * (1.0 / K) + EPS)

        if tt >= 64:
            pypto.set_cube_tile_shapes([16, 16], [512, 2048], [32, 32], enable_split_k=True)
            mm = pypto.matmul(xf, hc_fn, pypto.DT_FP32, b_trans=True)
        else:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [32, 32])
            chunk = K // 4
            mm = None
            for kc in range(4):
                a = pypto.view(xf, [tt, chunk], [0, kc * chunk])
                b = pypto.view(hc_fn, [MIX, chunk], [0, kc * chunk])
                p = pypto.matmul(a, b, pypto.DT_FP32, b_trans=True)
                mm = p if mm is None else mm + p

        pypto.set_vec_tile_shapes(rows * 4, 32)
        pypto.assemble(mm * inv_rms, [ti, 0], out)


def make_case(T):
    rng = np.random.default_rng(188 + T)
    x = bf16_round(rng.standard_normal((T, HC, D)).astype(np.float32))
    w = (rng.standard_normal((MIX, K)) / np.sqrt(K)).astype(np.float32)
    xd = x.reshape(T, K).astype(np.float64)
    ref = (xd @ w.astype(np.float64).T) / np.sqrt((xd * xd).mean(-1, keepdims=True) + EPS)
    return ([(x, "bf16"), (w, "fp32")], [((T, MIX), "fp32")], [ref.astype(np.float32)],
            [(1e-4, 1e-3)], [])


if __name__ == "__main__":
    run("k188_mhc_pre_splitk", k188_mhc_pre_splitk, make_case)
