"""c114 (outside batch corpus19, k164) (copied, two tutorial pieces composed): the loop of docs/zh/tutorials/debug/performance.md
"动态轴使用PyPTO loop并合理配置view" (verbatim: `bsz, h = x.shape`, b = 128, ceil loop count,
`b_valid = (bsz - b_idx * b).min(b)`, view with valid_shape, set_cube_tile_shapes([128,128]x3) in the body,
`pypto.matmul(x_view, W)`) with examples/02_intermediate/basic_nn/layer_normalization/layer_norm.py's
`rms_norm_core` verbatim before the matmul and its kernel's `pypto.set_vec_tile_shapes(64, 128)` / eps 1e-6.
As in layer_norm.py the norm runs in the input dtype (bf16) with a rank-1 [H] gamma.
V->C: bf16 x [T,2560] -> rms_norm_core (bf16 x*x, sum, /h, sqrt, x/rms, *gamma) -> @ bf16 W [2560,1536] [K,N]
-> bf16 -> assemble.
"""
import numpy as np
from batch_harness import pypto, run, PTO, bf16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM


def rms_norm_core(x: pypto.Tensor, gamma: pypto.Tensor, eps: float, hidden_size: float) -> pypto.Tensor:
    # Compute RMS: sqrt(mean(x^2) + eps)
    squared = x * x
    mean_sq = pypto.sum(squared, dim=-1, keepdim=True)
    mean_sq = mean_sq / hidden_size
    rms = pypto.sqrt((mean_sq + eps))
    normalized = x / rms
    return normalized * gamma


H, N = 2560, 1536


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def rms_norm_matmul_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_BF16),
    W: pypto.Tensor([H, N], pypto.DT_BF16),
    output: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    eps = 1e-6
    # 推荐：动态轴使用loop + unroll
    bsz, h = x.shape
    b = 128
    b_loop = (bsz + b - 1) // b
    for b_idx in pypto.loop(b_loop, name="LOOP_1", idx_name="b_idx"):
        b_valid = (bsz - b_idx * b).min(b)
        x_view = pypto.view(x, [b, h], [b_idx * b, 0], valid_shape=[b_valid, h])
        pypto.set_vec_tile_shapes(64, 128)
        x_norm = rms_norm_core(x_view, gamma, eps, h)
        # Matmul
        pypto.set_cube_tile_shapes([128, 128], [128, 128], [128, 128])
        y = pypto.matmul(x_norm, W, pypto.DT_BF16)  # SIM: the tutorial has pypto.matmul(x_view, W); 0.2.0 requires out_dtype
        pypto.assemble(y, [b_idx * b, 0], output)


def make_case(T):
    rng = np.random.default_rng(164 + T)
    x = bf16_round(rng.standard_normal((T, H)))
    g = bf16_round(1.0 + 0.1 * rng.standard_normal(H))
    w = bf16_round(rng.standard_normal((H, N)) / np.sqrt(H))
    x64 = x.astype(np.float64)
    sq = bf16_round(x64 * x64)
    s = bf16_round(sq.astype(np.float64).sum(-1, keepdims=True))
    m = bf16_round(s * np.float64(np.float32(1.0 / H)))
    rms = bf16_round(np.sqrt(bf16_round(m + 1e-6)))
    nx = bf16_round(x64 / rms)
    xn = bf16_round(nx * g)
    ref = bf16_round(xn.astype(np.float64) @ w.astype(np.float64))
    return [(x, "bf16"), (g, "bf16"), (w, "bf16")], [((T, N), "bf16")], [ref], [(2e-2, 2e-2)], []


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c114", rms_norm_matmul_kernel, make_case, call=call)
