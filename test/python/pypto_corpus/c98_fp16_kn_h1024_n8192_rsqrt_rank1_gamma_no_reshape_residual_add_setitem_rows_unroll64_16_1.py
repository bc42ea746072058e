"""c98 (outside batch corpus17, k148) (fresh): fp16 x [T,1024] -> RMSNorm with pypto.rsqrt and a rank-1 fp16 gamma [1024] multiplied as it is
(no reshape) -> fp16 @ fp16 w [1024, 8192] ([K,N]) -> fp32 + fp16 residual [T,8192] -> fp16, written with
out[t_idx:t_idx + tile, :] = y; loop_unroll(0, T, 1, unroll_list=[64, 16, 1]); semantic labels.
Tolerance 5e-3 + 5e-3 (fp16).
"""
import numpy as np
from batch_harness import PTO, pypto, run, fp16_round

H, N, EPS = 1024, 8192, 1e-6
_RT = {} if PTO else {"run_mode": pypto.RunMode.SIM}


@pypto.frontend.jit(runtime_options=_RT)
def norm_up_residual(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    w: pypto.Tensor([H, N], pypto.DT_FP16),
    resid: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    t = x.shape[0]
    for t_idx, tile in pypto.loop_unroll(0, t, 1, name="T_LOOP", idx_name="t_idx", unroll_list=[64, 16, 1]):
        pypto.set_semantic_label("norm")
        pypto.set_vec_tile_shapes(min(tile, 16), H)
        xt = pypto.view(x, [tile, H], [t_idx, 0], valid_shape=[tile, H])
        x32 = pypto.cast(xt, pypto.DT_FP32)
        ms = pypto.sum(x32 * x32, -1, keepdim=True) * (1.0 / H)
        xn = x32 * pypto.rsqrt(ms + EPS)
        xn = pypto.cast(xn, pypto.DT_FP16) * gamma

        pypto.set_semantic_label("up")
        pypto.set_cube_tile_shapes([16, 64], [128, 256], [256, 256])
        z = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_semantic_label("residual")
        pypto.set_vec_tile_shapes(min(tile, 16), 1024)
        r = pypto.view(resid, [tile, N], [t_idx, 0], valid_shape=[tile, N])
        y = pypto.cast(z + pypto.cast(r, pypto.DT_FP32), pypto.DT_FP16)
        out[t_idx:t_idx + tile, :] = y


def make_case(T):
    rng = np.random.default_rng(148 + T)
    x = fp16_round(rng.uniform(-2, 2, (T, H)))
    g = fp16_round(rng.uniform(0.5, 1.5, H))
    w = fp16_round(rng.uniform(-0.06, 0.06, (H, N)))
    r = fp16_round(rng.uniform(-1, 1, (T, N)))
    xd = x.astype(np.float64)
    xn = fp16_round(fp16_round(xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + EPS)) * g)
    ref = fp16_round(xn.astype(np.float64) @ w.astype(np.float64) + r)
    return ([(x, "fp16"), (g, "fp16"), (w, "fp16"), (r, "fp16")], [((T, N), "fp16")], [ref], [(5e-3, 5e-3)], [])


if __name__ == "__main__":
    run("c98", norm_up_residual, make_case)
