"""c136 (outside batch corpus23, k211): norm-folded projection with squared-ReLU, written with @pypto.frontend.function helpers.

Weight-only preprocessing inside the kernel (once, before the token loop):
    w_eff = bf16(w_master * gamma)      w_master [896, 3584] fp32 ([N, K]), gamma [3584] bf16
so the loop only scales by the inverse RMS:
    xn  = bf16(x * rsqrt(mean(x^2) + eps))                       x [T, 3584] bf16
    y   = xn @ w_eff^T                (b_trans=True, fp32 out)
    out = bf16(relu(y)^2)                                         out [T, 896] bf16
Helpers are @pypto.frontend.function (inlined, out parameter + .move()); annotations use the
pypto.Tensor[[...], dtype] bracket syntax with pypto.DYN / pypto.STATIC; eps is a scalar kernel argument.
Token loop: loop_unroll [128, 8] (+1).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

K = 3584
N = 896


@pypto.frontend.function
def fold_gamma(w: pypto.Tensor[[N, K], pypto.DT_FP32], g: pypto.Tensor[[K], pypto.DT_BF16],
               w_eff: pypto.Tensor[[N, K], pypto.DT_BF16]):
    pypto.set_vec_tile_shapes(8, 1792)
    w_eff.move(pypto.cast(w * pypto.cast(g, pypto.DT_FP32), pypto.DT_BF16))


@pypto.frontend.function
def inv_rms_scale(xt: pypto.Tensor[[pypto.STATIC, K], pypto.DT_BF16],
                  xn: pypto.Tensor[[pypto.STATIC, K], pypto.DT_BF16], eps: float):
    pypto.set_vec_tile_shapes(4, K)
    xf = pypto.cast(xt, pypto.DT_FP32)
    ms = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / K)
    xn.move(pypto.cast(xf * pypto.rsqrt(ms + eps), pypto.DT_BF16))


@pypto.frontend.jit(runtime_options={"stitch_function_max_num": 8, "triple_stream_sched": True})
def folded_relu2_proj(
    x: pypto.Tensor[[pypto.DYN, K], pypto.DT_BF16],
    w_master: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32],
    gamma: pypto.Tensor[[K], pypto.DT_BF16],
    out: pypto.Tensor[[pypto.DYN, N], pypto.DT_BF16],
    eps: float = 1e-6,
):
    w_eff = pypto.tensor([N, K], pypto.DT_BF16, "w_eff")
    fold_gamma(w_master, gamma, w_eff)

    for t0, tt in pypto.loop_unroll(0, x.shape[0], 1, name="relu2", idx_name="t0", unroll_list=[128, 8]):
        xn = pypto.tensor([tt, K], pypto.DT_BF16, "xn")
        inv_rms_scale(x[t0:t0 + tt, :], xn, eps)

        if tt == 128:
            pypto.set_cube_tile_shapes([128, 128], [256, 512], [128, 128])
        else:
            pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        y = pypto.matmul(xn, w_eff, pypto.DT_FP32, b_trans=True)

        pypto.set_vec_tile_shapes(8, N)
        r = pypto.relu(y)
        out[t0:t0 + tt, :] = pypto.cast(r * r, pypto.DT_BF16)


def make_case(T):
    rng = np.random.default_rng(211 + T)
    x = bf16_round(rng.standard_normal((T, K)).astype(np.float32))
    w = (1.2 * rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32)
    g = bf16_round((1.0 + 0.1 * rng.standard_normal(K)).astype(np.float32))
    eps = 1e-6

    w_eff = bf16_round(w * g)
    ms = (x * x).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / K)
    xn = bf16_round(x * (np.float32(1.0) / np.sqrt(ms + np.float32(eps))))
    y = xn.astype(np.float64) @ w_eff.astype(np.float64).T
    ref = bf16_round((np.maximum(y, 0.0) ** 2).astype(np.float32))
    return ([(x, "bf16"), (w, "fp32"), (g, "bf16")], [((T, N), "bf16")], [ref],
            [(1e-4, 0.0078125)], [eps])


if __name__ == "__main__":
    run("k211_fold_gamma_relu2_helpers", folded_relu2_proj, make_case)
