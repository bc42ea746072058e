"""c117 (outside batch corpus19, k167) (fresh, tutorial style): bf16, h 7168, N 256, bf16 weight [K,N].
Idioms from docs/zh/tutorials/debug/performance.md "动态轴范围较广时使用loop_unroll": `for b, k in
pypto.loop_unroll(n_blocks, unroll_list=[...], name="A", idx_name="b")` over 16-row blocks, **a different
set_vec_tile_shapes per unroll level (`if k <= 2: ... else: ...`)**, rows `b * 16 .. (b + k) * 16`, and the
output written by the open-ended setitem `out[b * 16:, :] = y`. The view carries valid_shape
`(bsz - b * 16).min(k * 16)` (dynamic.py's rule). LayerNorm is layer_norm.py's layernorm_core body promoted to
fp32 (cast in, cast out, the ffn example's habit). Post-op: `pypto.add(z, residual, alpha=0.5)`
(tensor_operation.md's alpha form).
V->C->V: bf16 x -> fp32 LayerNorm (rank-1 bf16 gamma/beta cast) -> bf16 @ w (fp32 out) -> z + 0.5*res -> bf16.
"""
import numpy as np
from batch_harness import pypto, run, PTO, bf16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, N = 7168, 256
ROWS = 16


def layernorm_fp32_core(x, gamma, beta, eps, hidden_size):
    x = pypto.cast(x, pypto.DT_FP32)
    mean = pypto.sum(x, dim=-1, keepdim=True)
    mean = mean / hidden_size
    centered = x - mean
    squared = centered * centered
    var = pypto.sum(squared, dim=-1, keepdim=True)
    var = var / hidden_size
    std = pypto.sqrt(var + eps)
    normalized = centered / std
    scaled = normalized * pypto.cast(gamma, pypto.DT_FP32)
    return pypto.cast(scaled + pypto.cast(beta, pypto.DT_FP32), pypto.DT_BF16)


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def layernorm_linear_residual_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_BF16),
    beta: pypto.Tensor([H], pypto.DT_BF16),
    weight: pypto.Tensor([H, N], pypto.DT_BF16),
    residual: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    bsz = x.shape[0]
    n_blocks = (bsz + ROWS - 1) // ROWS
    pypto.set_cube_tile_shapes([64, 64], [128, 512], [128, 128])
    for b, k in pypto.loop_unroll(n_blocks, unroll_list=[8, 2, 1], name="A", idx_name="b"):
        ### 支持在不同的展开档位设置不同调优参数
        if k <= 2:
            pypto.set_vec_tile_shapes(1, H)
        else:
            pypto.set_vec_tile_shapes(2, H)
        valid_rows = (bsz - b * ROWS).min(k * ROWS)
        x_view = pypto.view(x, [k * ROWS, H], [b * ROWS, 0], valid_shape=[valid_rows, H])
        x_norm = layernorm_fp32_core(x_view, gamma, beta, 1e-5, H)
        z = pypto.matmul(x_norm, weight, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(16, N)
        res_view = pypto.view(residual, [k * ROWS, N], [b * ROWS, 0], valid_shape=[valid_rows, N])
        y = pypto.add(z, pypto.cast(res_view, pypto.DT_FP32), alpha=0.5)
        out[b * ROWS:, :] = pypto.cast(y, pypto.DT_BF16)


def make_case(T):
    rng = np.random.default_rng(167 + T)
    x = bf16_round(rng.standard_normal((T, H)) * 1.5 - 0.3)
    g = bf16_round(1.0 + 0.1 * rng.standard_normal(H))
    be = bf16_round(0.1 * rng.standard_normal(H))
    w = bf16_round(rng.standard_normal((H, N)) / np.sqrt(H))
    r = bf16_round(rng.standard_normal((T, N)))
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    c = x64 - mean
    var = (c * c).mean(-1, keepdims=True)
    xn = bf16_round(c / np.sqrt(var + 1e-5) * g + be)
    z = xn.astype(np.float64) @ w.astype(np.float64)
    ref = bf16_round(z + 0.5 * r)
    return ([(x, "bf16"), (g, "bf16"), (be, "bf16"), (w, "bf16"), (r, "bf16")], [((T, N), "bf16")], [ref],
            [(2e-2, 2e-2)], [])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c117", layernorm_linear_residual_kernel, make_case, call=call)
