"""c119 (outside batch corpus19, k169) (fresh, tutorial style): W8A16, fp16 x, h 1536, int8 weight [K,N] N 512, fp16 per-channel scale [1, N].
* The int8 weight is cast to fp16 once, before the token loop (`pypto.cast(weight, DT_FP16)`).
* The per-channel scale is applied after the matmul (fp32 product x scale), broadcast the way
  docs/zh/tutorials/debug/performance.md shows for glm_moe_fusion's e_score_bias: **a loop-local
  `pypto.tensor([tile_b, N], dtype, "scale_tile")` filled by a Python `range(tile_b)` of
  `pypto.assemble(w_scale, [i, 0], scale_tile)`, then `pypto.cast`**.
* Loop as quick_start: `pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx")`, ceil count, view
  valid_shape `(bs - b_offset).min(tile_b)`.
V->C->V: fp16 x -> fp32 LayerNorm (layer_norm.py body) -> fp16 @ fp16(w) (fp32 out) -> * scale -> SiLU
(`y * pypto.sigmoid(y)`) -> + fp16 residual -> fp16.
"""
import numpy as np
from batch_harness import pypto, run, PTO, fp16_round

global_run_mode = pypto.RunMode.NPU if PTO else pypto.RunMode.SIM
H, N = 1536, 512
TILE_B = 16


def layernorm_core(x, gamma, beta, eps, hidden_size):
    mean = pypto.sum(x, dim=-1, keepdim=True)
    mean = mean / hidden_size
    centered = x - mean
    squared = centered * centered
    var = pypto.sum(squared, dim=-1, keepdim=True)
    var = var / hidden_size
    var_eps = var + eps
    std = pypto.sqrt(var_eps)
    normalized = centered / std
    scaled = normalized * gamma
    return scaled + beta


@pypto.frontend.jit(runtime_options={"run_mode": global_run_mode})
def w8a16_linear_silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    beta: pypto.Tensor([H], pypto.DT_FP32),
    weight: pypto.Tensor([H, N], pypto.DT_INT8),
    w_scale: pypto.Tensor([1, N], pypto.DT_FP16),
    residual: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
    output: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    bs = x.shape[0]
    tile_b = TILE_B
    b_loop = (bs + tile_b - 1) // tile_b

    pypto.set_vec_tile_shapes(64, N)
    weight_fp16 = pypto.cast(weight, pypto.DT_FP16)
    pypto.set_cube_tile_shapes([16, 16], [128, 512], [128, 256])

    for idx in pypto.loop(0, b_loop, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        b_offset = idx * tile_b
        valid_b = (bs - b_offset).min(tile_b)
        x_view = pypto.view(x, [tile_b, H], [b_offset, 0], valid_shape=[valid_b, H])
        pypto.set_vec_tile_shapes(4, H)
        x_ln = layernorm_core(pypto.cast(x_view, pypto.DT_FP32), gamma, beta, 1e-5, H)
        x_ln = pypto.cast(x_ln, pypto.DT_FP16)

        y = pypto.matmul(x_ln, weight_fp16, pypto.DT_FP32)

        pypto.set_vec_tile_shapes(tile_b, N)
        # SIM: written first as the tutorial's order (fp16 pypto.tensor filled by assemble, then cast to fp32):
        # 0.2.0 SIM -> "Caught exception: 'Unknown DataType'"; cast first, then fill an fp32 pypto.tensor.
        w_scale_fp32 = pypto.cast(w_scale, pypto.DT_FP32)
        scale_cast = pypto.tensor([tile_b, N], pypto.DT_FP32, "scale_tile")
        for tmp_idx in range(tile_b):
            pypto.assemble(w_scale_fp32, [tmp_idx, 0], scale_cast)
        y = y * scale_cast
        y = y * pypto.sigmoid(y)
        res_view = pypto.view(residual, [tile_b, N], [b_offset, 0], valid_shape=[valid_b, N])
        y = y + pypto.cast(res_view, pypto.DT_FP32)
        pypto.assemble(pypto.cast(y, pypto.DT_FP16), [b_offset, 0], output)


def make_case(T):
    rng = np.random.default_rng(169 + T)
    x = fp16_round(rng.standard_normal((T, H)) + 0.2)
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    be = (0.1 * rng.standard_normal(H)).astype(np.float32)
    w = rng.integers(-127, 128, (H, N)).astype(np.float32)
    ws = fp16_round(np.full((1, N), 1.0 / (127 * np.sqrt(H))) * (0.5 + rng.random((1, N))))
    r = fp16_round(rng.standard_normal((T, N)))
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    c = x64 - mean
    var = (c * c).mean(-1, keepdims=True)
    xn = fp16_round(c / np.sqrt(var + 1e-5) * g + be)
    z = (xn.astype(np.float64) @ w.astype(np.float64)) * ws
    ref = fp16_round(z / (1.0 + np.exp(-z)) + r)
    return ([(x, "fp16"), (g, "fp32"), (be, "fp32"), (w, "int8"), (ws, "fp16"), (r, "fp16")],
            [((T, N), "fp16")], [ref], [(5e-3, 5e-3)], [])


@pypto.options(pass_options={"enable_slice": True})
def call(k, i, o, e):
    k(*i, *o, *e)


if __name__ == "__main__":
    run("c119", w8a16_linear_silu_kernel, make_case, call=call)
